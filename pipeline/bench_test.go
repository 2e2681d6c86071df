package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// sql100 is a pipeline of 100 statements in the shapes real pipelines
// have: ingestion with expectations and file metadata, cleaning with casts,
// JSON paths and CASE, aggregates with GROUP BY ALL and WITHIN GROUP,
// windows with QUALIFY over a CTE, joins, and temporary views.
func sql100(data string) string {
	var b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, `CREATE OR REFRESH STREAMING TABLE raw_%[1]d (
  CONSTRAINT valid_id EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT valid_amount EXPECT (amount >= 0 AND amount < 1e9)
)
COMMENT 'raw events of source %[1]d'
TBLPROPERTIES ('quality' = 'bronze')
AS SELECT *, _metadata.file_path AS source_file
FROM STREAM read_files('%[2]s', format => 'json');

CREATE OR REFRESH STREAMING TABLE clean_%[1]d
AS SELECT id, CAST(amount AS DECIMAL(18, 2)) AS amount, lower(trim(user)) AS user,
  to_timestamp(ts) AS event_time, payload:device.os::string AS os,
  CASE WHEN country IN ('FR', 'DE', 'ES') THEN 'eu' WHEN country = 'US' THEN 'us' ELSE 'other' END AS region
FROM STREAM(LIVE.raw_%[1]d)
WHERE event NOT IN ('test', 'void') AND user LIKE 'user-%%';

CREATE OR REFRESH MATERIALIZED VIEW totals_%[1]d
AS SELECT region, date_trunc('DAY', event_time) AS day, count(*) AS n, sum(amount) AS total,
  approx_count_distinct(user) AS customers, percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) AS median
FROM clean_%[1]d
GROUP BY ALL
HAVING count(*) > 0;

CREATE OR REFRESH MATERIALIZED VIEW ranked_%[1]d
AS WITH t AS (SELECT user, sum(amount) AS spent FROM clean_%[1]d GROUP BY user)
SELECT t.user, spent, rank() OVER (ORDER BY spent DESC) AS r,
  sum(spent) OVER (ORDER BY spent DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running,
  c.region
FROM t LEFT JOIN recent_%[1]d c ON t.user = c.user
QUALIFY r <= 100;

CREATE TEMPORARY VIEW recent_%[1]d AS
SELECT * FROM clean_%[1]d WHERE event_time > current_timestamp() - INTERVAL 7 DAYS;

`, i, data)
	}
	return b.String()
}

// BenchmarkLoadSQL100 parses and resolves a 100-statement pipeline: every
// query planned against the schemas of what it reads (file schemas
// inferred from a small sample file, as at the start of an update).
func BenchmarkLoadSQL100(b *testing.B) {
	data := b.TempDir()
	if err := os.WriteFile(filepath.Join(data, "a.json"), []byte(`{"id": 1, "amount": 2.5, "user": "user-1", "ts": "2026-11-01T10:00:00Z", "event": "view", "country": "FR", "payload": "{\"device\": {\"os\": \"linux\"}}"}`+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	files := []SQLFile{{Path: "pipeline.sql", Text: sql100(data)}}
	b.ReportAllocs()
	for b.Loop() {
		p := New("bench")
		if problems := p.LoadSQL(files, SQLOptions{}); len(problems) > 0 {
			b.Fatal(problems)
		}
		if problems := p.Validate(); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}

// TestSQL100Loads keeps the benchmark's pipeline valid.
func TestSQL100Loads(t *testing.T) {
	data := t.TempDir()
	writeFile(t, data, "a.json", `{"id": 1, "amount": 2.5, "user": "user-1", "ts": "2026-11-01T10:00:00Z", "event": "view", "country": "FR", "payload": "{}"}`+"\n")
	p := New("bench")
	if problems := p.LoadSQL([]SQLFile{{Path: "pipeline.sql", Text: sql100(data)}}, SQLOptions{}); len(problems) > 0 {
		t.Fatal(problems)
	}
	if problems := p.Validate(); len(problems) > 0 {
		t.Fatal(problems)
	}
	if n := strings.Count(sql100(data), ";"); n != 100 {
		t.Fatalf("%d statements, want 100", n)
	}
}

// BenchmarkSmallFiles ingests one-row JSON files, 2,500 and 10,000 of them,
// into a streaming table with sync writes on, in one update (micro-batches of
// 1,000 files, the default bound). With what was read kept in the store
// rather than in every offset, the time per file does not grow with the files
// read before it: the two ns/file figures are about equal.
//
//	go test -run XXX -bench BenchmarkSmallFiles -benchtime 1x -count 5 ./pipeline/
func BenchmarkSmallFiles(b *testing.B) {
	for _, n := range []int{2500, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			in := filepath.Join(dir, "in")
			if err := os.MkdirAll(in, 0o755); err != nil {
				b.Fatal(err)
			}
			for i := range n {
				p := filepath.Join(in, fmt.Sprintf("f-%05d.json", i))
				if err := os.WriteFile(p, []byte(fmt.Sprintf(`{"id": %d}`+"\n", i)), 0o644); err != nil {
					b.Fatal(err)
				}
				t := time.Unix(1_700_000_000+int64(i), 0) // oldest first, in name order
				if err := os.Chtimes(p, t, t); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				store, err := eventstore.Open(filepath.Join(dir, fmt.Sprintf("store-%d", i)))
				if err != nil {
					b.Fatal(err)
				}
				p := New("small")
				p.CreateStreamingTable("t")
				p.AppendFlow("t", StreamFrom(sources.Files(in, sources.FileOptions{Format: "json"})), Name("ingest"))
				res, err := p.Run(context.Background(), store, processors.Options{})
				if err != nil || res.State != domain.UpdateCompleted {
					b.Fatalf("%v %v", res, err)
				}
				store.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/file")
		})
	}
}
