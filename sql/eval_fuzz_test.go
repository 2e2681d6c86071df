package sql

import (
	"math"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// FuzzEval: any expression the parser accepts compiles or fails with a code
// and a position, and evaluates over a small batch without panicking; every
// evaluation error has a code too.
func FuzzEval(f *testing.F) {
	for _, s := range []string{
		"i + 1", "big * 2", "i / z", "CASE WHEN z = 0 THEN NULL ELSE i / z END", "s LIKE 'a\\\\_%'",
		"coalesce(n, i, 1 / z)", "substring(u, -3, 2)", "CAST(s AS INT)", "try_cast(s AS DATE)", "round(d, 2)",
		"i IN (1, NULL, 5)", "n BETWEEN 1 AND i", "st.x + 1", "upper(u) || lower(s)", "nb OR b AND NOT nb",
		"i IS DISTINCT FROM n", "trim(LEADING 'S' FROM s)", "nullif(i, 5)", "if(b, 1, 'x')", "-big - 1",
	} {
		f.Add(s)
	}
	for _, cases := range [][]struct{ src, want string }{evalCases, collectionCases, lambdaCases, jsonCases} {
		for _, tc := range cases {
			f.Add(tc.src)
		}
	}
	batch := fuzzBatch(f)
	f.Fuzz(func(t *testing.T, src string) {
		e, err := syntax.ParseExpr("fuzz", src)
		if err != nil {
			return
		}
		c, err := Compile(e, testSchema)
		if err != nil {
			se, ok := err.(*syntax.Error)
			if !ok || se.Code == "" || domain.CodeMessage(se.Code) == "" || se.Pos.Line < 1 {
				t.Fatalf("%q: compile error without a known code and position: %v", src, err)
			}
			return
		}
		col, err := c.Eval(batch)
		if err != nil {
			if domain.CodeOf(err) == "" || domain.CodeMessage(domain.CodeOf(err)) == "" {
				t.Fatalf("%q: evaluation error without a known code: %v", src, err)
			}
			return
		}
		if col.Len() != batch.Len() {
			t.Fatalf("%q: %d rows for a batch of %d", src, col.Len(), batch.Len())
		}
		if col.Kind != c.Type().Kind {
			t.Fatalf("%q: column of kind %s for type %s", src, col.Kind, c.Type())
		}
		if col.Nulls != nil && len(col.Nulls) != col.Len() {
			t.Fatalf("%q: %d null marks for %d rows", src, len(col.Nulls), col.Len())
		}
	})
}

// fuzzBatch is the test row plus rows of NULLs, zeros and extremes.
func fuzzBatch(tb testing.TB) *domain.Batch {
	b := testBatch(tb)
	nulls := make([]domain.Value, len(testSchema.Fields))
	if err := b.AppendRow(nulls...); err != nil {
		tb.Fatal(err)
	}
	if err := b.AppendRow(domain.Int(0), domain.Int(-1), domain.Float(math.Copysign(0, -1)), domain.String("_%\\"), domain.String(" "),
		domain.String("ß"), domain.Bool(false), domain.Bool(true), domain.String("12"), domain.DateDays(-1),
		domain.TimestampMicros(-1), domain.Null(), domain.Int(-9223372036854775808), domain.Int(3)); err != nil {
		tb.Fatal(err)
	}
	return b
}
