package sql

import "testing"

// BenchmarkRegexpReplace1M: regexp_replace with a constant pattern and
// replacement over 1M rows (the pattern and the replacement are compiled
// once).
func BenchmarkRegexpReplace1M(b *testing.B) {
	batch := benchBatch(b, benchRows)
	c := compileBench(b, batch, `regexp_replace(d, '(\\d+)', '#$1')`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Eval(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRlike1M: RLIKE with a constant pattern over 1M rows.
func BenchmarkRlike1M(b *testing.B) {
	batch := benchBatch(b, benchRows)
	c := compileBench(b, batch, `d RLIKE 'Row [1-3]\\d'`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Eval(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
