package sql

import (
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// benchmarkGrouped folds 1M rows into 1000 groups, as one batch, and reports
// rows per second.
func benchmarkGrouped(b *testing.B, src string) {
	const rows, ngroups = 1_000_000, 1000
	schema := domain.NewSchema(domain.Field{Name: "x", Type: domain.TypeInt64, Nullable: true})
	x := &domain.Column{Kind: domain.KindInt64, Ints: make([]int64, rows), Nulls: make([]bool, rows)}
	groups := make([]int32, rows)
	for i := range groups {
		x.Ints[i] = int64(i % 977)
		x.Nulls[i] = i%10 == 0
		if x.Nulls[i] {
			x.Ints[i] = 0
		}
		groups[i] = int32((i * 7919) % ngroups)
	}
	batch, err := domain.BatchOf(schema, []*domain.Column{x})
	if err != nil {
		b.Fatal(err)
	}
	e, err := syntax.ParseExpr("bench", src)
	if err != nil {
		b.Fatal(err)
	}
	a, err := CompileAggregate(e.(*syntax.FuncCall), schema)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := a.NewState()
		if err := s.Add(batch, groups, ngroups); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Result(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkAggSumGrouped(b *testing.B)           { benchmarkGrouped(b, "sum(x)") }
func BenchmarkAggCountGrouped(b *testing.B)         { benchmarkGrouped(b, "count(x)") }
func BenchmarkAggAvgGrouped(b *testing.B)           { benchmarkGrouped(b, "avg(x)") }
func BenchmarkAggMaxGrouped(b *testing.B)           { benchmarkGrouped(b, "max(x)") }
func BenchmarkAggCountDistinctGrouped(b *testing.B) { benchmarkGrouped(b, "count(DISTINCT x)") }
func BenchmarkAggMedianGrouped(b *testing.B)        { benchmarkGrouped(b, "median(x)") }
