package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/hugepages"
	"github.com/sluicehq/sluice/pipeline"
)

// The AUTO CDC benchmark: W1-shaped change lines (inserts, updates and
// deletes of 100k keys, 4% late, 2% exact duplicates) read into a raw
// streaming table and applied by key into an SCD type 1 and an SCD type 2
// table, through `sluice run` in process, in turn:
//
//	go test -run XXX -bench BenchmarkAutoCDC -benchtime 1x -count 5 ./cli/

const cdcLines = 1_000_000

func writeChangeLines(b *testing.B) string {
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "cdc.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewSource(42))
	names := []string{"Ann Lee", "Bob Stone", "Cid Moreau", "Dee Park", "Eve Rossi"}
	cities := []string{"Oslo", "Rome", "Lima", "Pune", "Kobe", "Graz"}
	live := map[int]bool{}
	var held []string
	for i := 0; i < cdcLines; i++ {
		key := r.Intn(cdcLines / 10)
		op := "UPDATE"
		switch {
		case !live[key]:
			op, live[key] = "INSERT", true
		case r.Intn(10) == 0:
			op, live[key] = "DELETE", false
		}
		line := fmt.Sprintf(`{"userId": %d, "name": %q, "city": %q, "operation": %q, "sequenceNum": %d}`,
			key, names[r.Intn(len(names))], cities[r.Intn(len(cities))], op, i)
		switch x := r.Intn(100); {
		case x < 4:
			held = append(held, line) // arrives late
			continue
		case x < 6:
			fmt.Fprintln(w, line) // an exact duplicate
		}
		fmt.Fprintln(w, line)
		if len(held) > 0 && r.Intn(20) == 0 {
			for _, h := range held {
				fmt.Fprintln(w, h)
			}
			held = held[:0]
		}
	}
	for _, h := range held {
		fmt.Fprintln(w, h)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return filepath.Join(dir, "cdc.jsonl")
}

const cdcBenchSQL = `
CREATE OR REFRESH STREAMING TABLE cdc_raw
AS SELECT * FROM STREAM read_files('%s', format => 'json');

CREATE OR REFRESH STREAMING TABLE target;

CREATE FLOW target_cdc AS AUTO CDC INTO target
FROM stream(cdc_raw)
KEYS (userId)
APPLY AS DELETE WHEN operation = "DELETE"
SEQUENCE BY sequenceNum
COLUMNS * EXCEPT (operation, sequenceNum)
STORED AS SCD TYPE %d;
`

// BenchmarkAutoCDC runs the SCD type 1 and the SCD type 2 pipeline in
// turn, b.N times each, and reports each one's change lines/s and the ratio
// of their times, pair by pair.
func BenchmarkAutoCDC(b *testing.B) {
	data := writeChangeLines(b)
	run := func(scd int) time.Duration {
		proj := b.TempDir()
		if err := os.WriteFile(filepath.Join(proj, "cdc.sql"), []byte(fmt.Sprintf(cdcBenchSQL, data, scd)), 0o644); err != nil {
			b.Fatal(err)
		}
		yaml := fmt.Sprintf("name: bench\nstorage: %s\nlibraries:\n  - file: {path: cdc.sql}\n", b.TempDir())
		if err := os.WriteFile(filepath.Join(proj, "pipeline.yaml"), []byte(yaml), 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if code := Run(context.Background(), []string{"run", "-p", proj}, io.Discard, io.Discard, pipeline.LoadSQLProject); code != ExitOK {
			b.Fatalf("run exited %d", code)
		}
		return time.Since(start)
	}
	var one, two time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		one += run(1)
		two += run(2)
	}
	b.ReportMetric(float64(cdcLines*b.N)/one.Seconds(), "scd1-lines/s")
	b.ReportMetric(float64(cdcLines*b.N)/two.Seconds(), "scd2-lines/s")
	b.ReportMetric(two.Seconds()/one.Seconds(), "scd2/scd1-time")
}

// BenchmarkPipelineDir runs `sluice run` of the pipeline in the directory
// SLUICE_PIPELINE (such as the bench workloads' pipelines), each time into
// fresh storage, for profiling:
//
//	SLUICE_PIPELINE=path/to/w1_scd1 go test -run XXX -bench PipelineDir -cpuprofile cpu.out ./cli/
func BenchmarkPipelineDir(b *testing.B) {
	dir := os.Getenv("SLUICE_PIPELINE")
	if dir == "" {
		b.Skip("set SLUICE_PIPELINE to a pipeline directory")
	}
	hugepages.Reserve() // as the sluice binary does
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		work := b.TempDir()
		if err := os.CopyFS(work, os.DirFS(dir)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if code := Run(context.Background(), []string{"run", "-p", work}, io.Discard, io.Discard, pipeline.LoadSQLProject); code != ExitOK {
			b.Fatalf("run exited %d", code)
		}
	}
}
