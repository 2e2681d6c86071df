package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sources"
)

// The SQL-against-Go benchmark: 1M JSON lines in 100 files read into a
// streaming table, and a second streaming table filtering and projecting
// it, through `sluice run` (in process), declared once in SQL and once with
// the Go API. Compare the two in the same run:
//
//	go test -run XXX -bench BenchmarkRunPipeline -benchtime 1x -count 5 ./cli/

const (
	pipeRows  = 1_000_000
	pipeFiles = 100
)

func writePipelineInput(b *testing.B) string {
	dir := b.TempDir()
	id := 0
	for f := 0; f < pipeFiles; f++ {
		fh, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%03d.json", f)))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(fh)
		for r := 0; r < pipeRows/pipeFiles; r++ {
			fmt.Fprintf(w, `{"id": %d, "user": "user-%06d", "event": "page_view", "amount": %d.%02d, "ts": "2026-11-%02dT10:%02d:%02dZ", "ok": %t}`+"\n",
				id, id%100000, id%10000, id%100, 1+id%28, id%60, (id/60)%60, id%3 != 0)
			id++
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		fh.Close()
	}
	return dir
}

const benchSQL = `
CREATE OR REFRESH STREAMING TABLE raw AS
SELECT * FROM STREAM read_files('%s', format => 'json');

CREATE OR REFRESH STREAMING TABLE clean AS
SELECT id, upper(user) AS user, amount * 2 AS amount2 FROM STREAM(raw) WHERE ok AND amount > 10;
`

// goBenchPipeline is benchSQL with the Go API.
func goBenchPipeline(data string) *pipeline.Pipeline {
	p := pipeline.New("bench")
	p.StreamingTable("raw", pipeline.StreamFrom(sources.Files(data, sources.FileOptions{Format: "json"})))
	out := domain.NewSchema(
		domain.Field{Name: "id", Type: domain.TypeInt64, Nullable: true},
		domain.Field{Name: "user", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "amount2", Type: domain.TypeFloat64, Nullable: true})
	p.StreamingTable("clean", pipeline.ReadStream("raw").
		Filter(func(r pipeline.Row) bool { return r.Get("ok").AsBool() && r.Get("amount").AsFloat() > 10 }).
		Map(out, func(r pipeline.Row) ([]domain.Value, error) {
			return []domain.Value{r.Get("id"), domain.String(upperASCII(r.Get("user").AsString())), domain.Float(r.Get("amount").AsFloat() * 2)}, nil
		}))
	return p
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// BenchmarkRunPipeline runs the Go pipeline and the SQL pipeline in turn,
// b.N times each, and reports each one's rows/s and the ratio of their
// times, pair by pair, so that both see the same machine.
func BenchmarkRunPipeline(b *testing.B) {
	data := writePipelineInput(b)
	proj := b.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "bench.sql"), []byte(fmt.Sprintf(benchSQL, data)), 0o644); err != nil {
		b.Fatal(err)
	}
	run := func(load Loader) time.Duration {
		yaml := fmt.Sprintf("name: bench\nstorage: %s\nlibraries:\n  - file: {path: bench.sql}\n", b.TempDir())
		if err := os.WriteFile(filepath.Join(proj, "pipeline.yaml"), []byte(yaml), 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if code := Run(context.Background(), []string{"run", "-p", proj}, io.Discard, io.Discard, load); code != ExitOK {
			b.Fatalf("run exited %d", code)
		}
		return time.Since(start)
	}
	goPipeline := Pipeline(goBenchPipeline(data))
	var goTime, sqlTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		goTime += run(goPipeline)
		sqlTime += run(pipeline.LoadSQLProject)
	}
	b.ReportMetric(float64(pipeRows*b.N)/goTime.Seconds(), "go-rows/s")
	b.ReportMetric(float64(pipeRows*b.N)/sqlTime.Seconds(), "sql-rows/s")
	b.ReportMetric(sqlTime.Seconds()/goTime.Seconds(), "sql/go-time")
}
