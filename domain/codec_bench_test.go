package domain

import (
	"fmt"
	"testing"
)

// BenchmarkEncodeBatch encodes a micro-batch shaped like the CDC workload's
// raw rows: 50k rows of two bigints and three short strings.
func BenchmarkEncodeBatch(b *testing.B) {
	const rows = 50_000
	batch := NewBatch(NewSchema(Field{Name: "id", Type: TypeInt64}, Field{Name: "name", Type: TypeString}, Field{Name: "city", Type: TypeString},
		Field{Name: "op", Type: TypeString}, Field{Name: "seq", Type: TypeInt64}), rows)
	for i := range rows {
		if err := batch.AppendRow(Int(int64(i*7919%200_000)), String(fmt.Sprintf("name %d", i%1000)), String(fmt.Sprintf("city %d", i%50)),
			String("UPDATE"), Int(int64(i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
