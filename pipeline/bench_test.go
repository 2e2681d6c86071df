package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// The data-path benchmarks: 1M JSON lines of about 150 bytes and 6 columns,
// in 100 files, into a streaming table with sync writes on; then a stream
// read of that table, and a replay of the whole log. Run one at a time for
// clean peak-memory figures:
//
//	go test -run XXX -bench BenchmarkIngestJSON -benchtime 1x ./pipeline/

const (
	benchRows  = 1_000_000
	benchFiles = 100
)

var benchInput struct {
	once sync.Once
	dir  string
	err  error
}

// benchFilesDir writes the input once per process, into a directory under
// the system's temporary directory that the process removes at exit.
func benchFilesDir(b *testing.B) string {
	benchInput.once.Do(func() {
		dir, err := os.MkdirTemp("", "sluice-bench-")
		if err != nil {
			benchInput.err = err
			return
		}
		benchInput.dir = dir
		id := 0
		for f := 0; f < benchFiles; f++ {
			fh, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%03d.json", f)))
			if err != nil {
				benchInput.err = err
				return
			}
			w := bufio.NewWriter(fh)
			for r := 0; r < benchRows/benchFiles; r++ {
				fmt.Fprintf(w, `{"id": %d, "user": "user-%06d", "event": "page_view", "amount": %d.%02d, "ts": "2026-11-%02dT10:%02d:%02dZ", "ok": %t}`+"\n",
					id, id%100000, id%10000, id%100, 1+id%28, id%60, (id/60)%60, id%3 != 0)
				id++
			}
			if err := w.Flush(); err != nil {
				benchInput.err = err
			}
			fh.Close()
		}
	})
	if benchInput.err != nil {
		b.Fatal(benchInput.err)
	}
	return benchInput.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchInput.dir != "" {
		os.RemoveAll(benchInput.dir)
	}
	os.Exit(code)
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

// benchPipeline ingests the files into events; a foreachBatch flow, count,
// reads events as a stream when selected.
func benchPipeline(dir string, rows *int) *Pipeline {
	p := New("bench")
	p.StreamingTable("events", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json", MaxFilesPerTrigger: 5})))
	p.ForeachBatchSink("count", func(_ context.Context, batch *domain.Batch, _ int64) error {
		*rows += batch.Len()
		return nil
	})
	p.AppendFlow("count", ReadStream("events"), Name("count_events"))
	return p
}

// ingestInto runs the ingest flow alone into a new store under storage.
func ingestInto(b *testing.B, p *Pipeline, storage string) *eventstore.Store {
	store, err := eventstore.Open(storage)
	if err != nil {
		b.Fatal(err)
	}
	res, err := p.Run(context.Background(), store, processors.Options{Refresh: []string{"events"}})
	if err != nil || res.State != domain.UpdateCompleted {
		b.Fatalf("update: %v %v", res, err)
	}
	return store
}

func BenchmarkIngestJSON(b *testing.B) {
	p := benchPipeline(benchFilesDir(b), new(int))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		store := ingestInto(b, p, b.TempDir())
		store.Close()
	}
	b.ReportMetric(float64(benchRows*b.N)/time.Since(start).Seconds(), "rows/s")
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
}

// BenchmarkTableStreamRead times a streaming flow reading the whole table
// from its start (a checkpoint reset before each run).
func BenchmarkTableStreamRead(b *testing.B) {
	var rows int
	p := benchPipeline(benchFilesDir(b), &rows)
	store := ingestInto(b, p, b.TempDir())
	defer store.Close()
	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		rows = 0
		res, err := p.Run(context.Background(), store, processors.Options{Refresh: []string{"count"}, ResetCheckpoint: []string{"count_events"}})
		if err != nil || res.State != domain.UpdateCompleted {
			b.Fatalf("update: %v %v", res, err)
		}
		elapsed += res.Finished.Sub(res.Started)
		if rows != benchRows {
			b.Fatalf("read %d rows, want %d", rows, benchRows)
		}
	}
	b.ReportMetric(float64(benchRows*b.N)/elapsed.Seconds(), "rows/s")
}

func BenchmarkReplay(b *testing.B) {
	store := ingestInto(b, benchPipeline(benchFilesDir(b), new(int)), b.TempDir())
	defer store.Close()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := store.RebuildProjections(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows*b.N)/time.Since(start).Seconds(), "rows/s")
}
