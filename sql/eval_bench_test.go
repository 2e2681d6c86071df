package sql

import (
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// benchBatch builds n rows of (a bigint, b double, c string, d string) with
// some NULLs in b.
func benchBatch(tb testing.TB, n int) *domain.Batch {
	schema := domain.NewSchema(
		domain.Field{Name: "a", Type: domain.TypeInt64, Nullable: true},
		domain.Field{Name: "b", Type: domain.TypeFloat64, Nullable: true},
		domain.Field{Name: "c", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "d", Type: domain.TypeString, Nullable: true},
	)
	a := &domain.Column{Kind: domain.KindInt64, Ints: make([]int64, n)}
	b := &domain.Column{Kind: domain.KindFloat64, Floats: make([]float64, n), Nulls: make([]bool, n)}
	c := &domain.Column{Kind: domain.KindString, Strs: make([]string, n)}
	d := &domain.Column{Kind: domain.KindString, Strs: make([]string, n)}
	words := []string{"x", "y", "zz", "x"}
	for i := 0; i < n; i++ {
		a.Ints[i] = int64(i % 20)
		b.Floats[i] = float64(i%1000) / 1000
		b.Nulls[i] = i%97 == 0
		if b.Nulls[i] {
			b.Floats[i] = 0
		}
		c.Strs[i] = words[i%len(words)]
		d.Strs[i] = "  Row " + strconv.Itoa(i%100) + " "
	}
	batch, err := domain.BatchOf(schema, []*domain.Column{a, b, c, d})
	if err != nil {
		tb.Fatal(err)
	}
	return batch
}

func compileBench(b *testing.B, batch *domain.Batch, src string) *Compiled {
	e, err := syntax.ParseExpr("bench", src)
	if err != nil {
		b.Fatal(err)
	}
	c, err := Compile(e, batch.Schema)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

const benchRows = 1 << 20

// BenchmarkFilter3: WHERE a > 10 AND b < 0.5 AND c = 'x' over 1M rows.
func BenchmarkFilter3(b *testing.B) {
	batch := benchBatch(b, benchRows)
	c := compileBench(b, batch, "a > 10 AND b < 0.5 AND c = 'x'")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Eval(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkProject10: ten expressions over 1M rows.
func BenchmarkProject10(b *testing.B) {
	batch := benchBatch(b, benchRows)
	srcs := []string{
		"a + 1", "a * 2 - 3", "b * 100", "a / 3", "upper(c)",
		"CASE WHEN a > 10 THEN 'hi' ELSE 'lo' END", "coalesce(b, 0.0)", "trim(d)",
		"CAST(a AS STRING)", "round(b, 2)",
	}
	cs := make([]*Compiled, len(srcs))
	for i, s := range srcs {
		cs[i] = compileBench(b, batch, s)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range cs {
			if _, err := c.Eval(batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
