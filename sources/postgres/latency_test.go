package postgres_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/internal/pgtest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources/postgres"
)

// The latency benchmarks write 10,000 changes a second for five seconds
// (a transaction of 100 inserts every 10 ms) and measure, for each change,
// the time from its commit in Postgres to its arrival: for sluice, the
// commit of the micro-batch holding it into a table, in a continuous
// update; for the floor, pg_recvlogical printing its transaction.
const (
	latencyRate     = 10_000
	latencyDuration = 5 * time.Second
	latencyTxn      = 100
)

// steadyWriter inserts latencyRate rows a second into table until the
// duration ends, and returns how many it inserted.
func steadyWriter(ctx context.Context, b *testing.B, pool *pgxpool.Pool, table string) int {
	tick := time.NewTicker(time.Second * latencyTxn / latencyRate)
	defer tick.Stop()
	end := time.Now().Add(latencyDuration)
	n := 0
	for time.Now().Before(end) {
		<-tick.C
		if _, err := pool.Exec(ctx, fmt.Sprintf("INSERT INTO %s (id, name, balance, ok) SELECT g, 'user ' || g, g * 1.25, true FROM generate_series(%d, %d) g", table, n, n+latencyTxn-1)); err != nil {
			b.Fatal(err)
		}
		n += latencyTxn
	}
	return n
}

// percentiles reports the median and the 99th percentile of ds in ms.
func percentiles(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// BenchmarkCDCLatency: sluice replicating into a streaming table,
// continuous, polling the slot every 10 ms.
func BenchmarkCDCLatency(b *testing.B) {
	for b.Loop() {
		conn, opts := fixture(b)
		ctx := context.Background()
		src, err := postgres.New(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		store, err := eventstore.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		p := pipeline.New("latency")
		p.Continuous = true
		p.CreateStreamingTable("replica")
		p.AppendFlow("replica", pipeline.StreamFrom(src), pipeline.Name("capture"))
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			res, err := p.Run(runCtx, store, processors.Options{PollInterval: 10 * time.Millisecond, IdleAfter: time.Hour})
			if err == nil && res.State != domain.UpdateCanceled {
				err = fmt.Errorf("update %s: %v", res.State, res.Err)
			}
			done <- err
		}()
		pool, err := pgxpool.New(ctx, pgtest.DSN())
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Second) // the slot made, the snapshot (empty) read
		total := steadyWriter(ctx, b, pool, opts.Tables[0])
		var endLSN string
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&endLSN); err != nil {
			b.Fatal(err)
		}
		last, _ := pglogrepl.ParseLSN(endLSN)
		type commit struct {
			end pglogrepl.LSN
			at  time.Time
		}
		var commits []commit
		for deadline := time.Now().Add(30 * time.Second); ; {
			commits = commits[:0]
			err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventBatchCommitted}}, func(ev *domain.Event) error {
				var pos struct{ LSN string }
				if err := json.Unmarshal(ev.Details.BatchCommitted.End, &pos); err != nil {
					return err
				}
				lsn, err := pglogrepl.ParseLSN(pos.LSN)
				commits = append(commits, commit{lsn, ev.Timestamp})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			if len(commits) > 0 && commits[len(commits)-1].end >= last {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("sluice did not catch up within 30 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
		stop()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		err = processors.ScanTable(ctx, store, "replica", 0, func(batch *domain.Batch) error {
			lsns, ts := batch.Columns[batch.Schema.Index("_lsn")], batch.Columns[batch.Schema.Index("_commit_ts")]
			for i := range batch.Len() {
				lsn := pglogrepl.LSN(lsns.Value(i).AsInt())
				j := sort.Search(len(commits), func(j int) bool { return commits[j].end > lsn })
				committed := time.UnixMicro(ts.Value(i).AsInt())
				lat = append(lat, commits[j].at.Sub(committed))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		store.Close()
		pool.Close()
		if len(lat) != total {
			b.Fatalf("the replica holds %d changes, want %d", len(lat), total)
		}
		percentiles(b, lat)
		b.ReportMetric(float64(len(commits)), "batches")
	}
}

var recvCommit = regexp.MustCompile(`^COMMIT \d+ \(at (.+)\)$`)

// BenchmarkRecvlogicalLatency is the floor: pg_recvlogical streaming the
// same changes (test_decoding, with commit times) to a pipe, nothing kept.
func BenchmarkRecvlogicalLatency(b *testing.B) {
	bin, err := exec.LookPath("pg_recvlogical")
	if err != nil {
		b.Skip("pg_recvlogical is not installed")
	}
	for b.Loop() {
		conn, opts := fixture(b)
		ctx := context.Background()
		if _, err := conn.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'test_decoding')", opts.Slot); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, "-d", pgtest.DSN(), "--slot", opts.Slot, "--start", "-f", "-", "-o", "include-timestamp=on", "-s", "1", "-F", "0")
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		read := make(chan error, 1)
		target := make(chan int, 1)
		go func() {
			sc := bufio.NewScanner(out)
			changes, want := 0, -1
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "table ") {
					changes++
					continue
				}
				m := recvCommit.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				now := time.Now()
				at, err := time.Parse("2006-01-02 15:04:05.999999-07", m[1])
				if err != nil {
					read <- err
					return
				}
				for range changes {
					lat = append(lat, now.Sub(at))
				}
				changes = 0
				select {
				case want = <-target:
				default:
				}
				if want >= 0 && len(lat) >= want {
					read <- nil
					return
				}
			}
			read <- fmt.Errorf("pg_recvlogical ended: %v", sc.Err())
		}()
		pool, err := pgxpool.New(ctx, pgtest.DSN())
		if err != nil {
			b.Fatal(err)
		}
		total := steadyWriter(ctx, b, pool, opts.Tables[0])
		target <- total
		if _, err := pool.Exec(ctx, "INSERT INTO "+opts.Tables[0]+" (id) VALUES (-1)"); err != nil { // wakes the reader if it already has all
			b.Fatal(err)
		}
		if err := <-read; err != nil {
			b.Fatal(err)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		pool.Close()
		percentiles(b, lat[:total])
	}
}
