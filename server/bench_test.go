package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

const benchRows, benchFiles = 1_000_000, 100

var benchInput struct {
	once sync.Once
	dir  string
}

// benchDir writes 1M JSON lines of about 150 bytes in 100 files, once.
func benchDir(b *testing.B) string {
	benchInput.once.Do(func() {
		dir, err := os.MkdirTemp("", "sluice-serve-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchInput.dir = dir
		id := 0
		for f := range benchFiles {
			fh, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%03d.json", f)))
			if err != nil {
				b.Fatal(err)
			}
			w := bufio.NewWriter(fh)
			for range benchRows / benchFiles {
				fmt.Fprintf(w, `{"id": %d, "user": "user-%06d", "event": "page_view", "amount": %d.%02d, "ts": "2026-11-%02dT10:%02d:%02dZ", "ok": %t}`+"\n",
					id, id%100000, id%10000, id%100, 1+id%28, id%60, (id/60)%60, id%3 != 0)
				id++
			}
			_ = w.Flush()
			fh.Close()
		}
	})
	return benchInput.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchInput.dir != "" {
		os.RemoveAll(benchInput.dir)
	}
	os.Exit(code)
}

// BenchmarkWatchedIngest times the update (its own start to end) of the
// 1M-row ingest alone, and with two followers of the event stream and a
// reader asking for the status and a page of rows every second (as a page refreshing itself), through
// the socket, in the same run.
func BenchmarkWatchedIngest(b *testing.B) {
	for _, watched := range []bool{false, true} {
		b.Run(map[bool]string{false: "alone", true: "watched"}[watched], func(b *testing.B) {
			var update time.Duration
			for b.Loop() {
				b.StopTimer()
				storage, err := os.MkdirTemp("", "sw")
				if err != nil {
					b.Fatal(err)
				}
				store, err := eventstore.Open(storage)
				if err != nil {
					b.Fatal(err)
				}
				l, err := ListenSocket(storage)
				if err != nil {
					b.Fatal(err)
				}
				ctx, stop := context.WithCancel(context.Background())
				go func() { _ = New(store, "bench", zerolog.Nop()).Serve(ctx, l) }()
				var wg sync.WaitGroup
				if watched {
					client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
						var d net.Dialer
						return d.DialContext(ctx, "unix", SocketPath(storage))
					}}}
					for range 2 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://sluice/api/events/stream?since=0", nil)
							if resp, err := client.Do(req); err == nil {
								_, _ = io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
							}
						}()
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for ctx.Err() == nil {
							for _, path := range []string{"/api/status", "/api/tables/events/rows?limit=100"} {
								req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://sluice"+path, nil)
								if resp, err := client.Do(req); err == nil {
									_, _ = io.Copy(io.Discard, resp.Body)
									resp.Body.Close()
								}
							}
							time.Sleep(time.Second)
						}
					}()
				}
				p := pipeline.New("bench")
				p.CreateStreamingTable("events")
				p.AppendFlow("events", pipeline.StreamFrom(sources.Files(benchDir(b), sources.FileOptions{Format: "json", MaxFilesPerTrigger: 5})), pipeline.Name("ingest"))
				b.StartTimer()
				res, err := p.Run(context.Background(), store, processors.Options{})
				b.StopTimer()
				if err != nil || res.State != domain.UpdateCompleted {
					b.Fatalf("update %v: %v", res, err)
				}
				update += res.Finished.Sub(res.Started)
				stop()
				wg.Wait()
				store.Close()
				os.RemoveAll(storage)
				b.StartTimer()
			}
			b.ReportMetric(update.Seconds()/float64(b.N), "update-s")
		})
	}
}
