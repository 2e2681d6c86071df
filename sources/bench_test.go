package sources

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// benchLines is n JSON lines of about 150 bytes with 6 columns: id bigint,
// user string, event string, amount double, ts string, ok bool.
func benchLines(n int) string {
	events := []string{"page_view", "add_to_cart", "checkout_completed", "search", "login"}
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"id": %d, "user": "user-%06d@example.com", "event": %q, "amount": %d.%02d, "ts": "2025-03-%02dT%02d:%02d:%02d.%06dZ", "ok": %v}`+"\n",
			1_000_000+i, i%50000, events[i%len(events)], i%10000, i%100, 1+i%28, i%24, i%60, (i/60)%60, i%1000000, i%3 != 0)
	}
	return sb.String()
}

func BenchmarkJSONLinesDecode(b *testing.B) {
	const n = 100_000
	data := benchLines(n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		bld := newBuilder(nil, false)
		bld.currentFile = "bench.json"
		if err := decodeJSONLines(bld, data); err != nil {
			b.Fatal(err)
		}
		batch, err := bld.batch()
		if err != nil {
			b.Fatal(err)
		}
		if batch.Len() != n || len(batch.Columns) != 6 {
			b.Fatalf("%d rows, %d columns", batch.Len(), len(batch.Columns))
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func TestBenchLinesShape(t *testing.T) {
	data := benchLines(1000)
	if avg := len(data) / 1000; avg < 140 || avg > 160 {
		t.Errorf("lines of %d bytes on average, want about 150", avg)
	}
	b := newBuilder(nil, false)
	if err := decodeJSONLines(b, data); err != nil {
		t.Fatal(err)
	}
	batch, err := b.batch()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := batch.Schema.String(), "id bigint, user string, event string, amount double, ts string, ok boolean"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
}

// BenchmarkParquetDecode reads a Parquet file of 100,000 rows of 15 flat
// columns of every scalar type (pqRow), the whole micro-batch.
func BenchmarkParquetDecode(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	rows := make([]pqRow, n)
	at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for i := range rows {
		note := fmt.Sprintf("note %d", i)
		rows[i] = pqRow{Name: fmt.Sprintf("user-%06d", i%50000), Small: int32(i), Big: int64(i) << 20, Score: float64(i) / 7, Ratio: float32(i) / 3,
			OK: i%2 == 0, Note: &note, At: at.Add(time.Duration(i) * time.Second), AtMs: at, AtNs: int64(i), Day: int32(i % 20000),
			Raw: []byte{byte(i)}, Price: int64(i * 100), Tiny: uint32(i)}
	}
	writeParquet(b, dir, "a.parquet", rows, baseTime)
	src := newFiles(b, dir, FileOptions{Format: "parquet"})
	ctx := context.Background()
	end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
	if err != nil || !ok {
		b.Fatalf("Plan: %v, %v", ok, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := src.Read(ctx, nil, end)
		if err != nil || got.Len() != n {
			b.Fatalf("%v rows, %v", got, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
