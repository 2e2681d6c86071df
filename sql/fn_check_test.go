package sql

import (
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// checkEvalCases runs table cases {src, want} through evalOne: want is
// "type:value" or an error code.
func checkEvalCases(t *testing.T, cases []struct{ src, want string }) {
	t.Helper()
	for _, tc := range cases {
		got, err := evalOne(t, tc.src)
		if err != nil {
			if code := domain.CodeOf(err); string(code) != tc.want {
				t.Errorf("%s: error %v, want %s", tc.src, err, tc.want)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s", tc.src, got, tc.want)
		}
	}
}

// checkRowsMatch evaluates each expression over a batch whose rows mix
// values and NULLs, and checks every row against the row evaluated alone:
// the column loops must skip NULL rows and keep rows apart.
func checkRowsMatch(t *testing.T, srcs []string) {
	t.Helper()
	batch := fuzzBatch(t)
	rows := make([]*domain.Batch, batch.Len())
	for r := range rows {
		rows[r] = gather(batch, []int{r})
	}
	for _, src := range srcs {
		e, err := syntax.ParseExpr("t", src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Compile(e, testSchema)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		all, err := c.Eval(batch)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if all.Len() != batch.Len() {
			t.Fatalf("%s: %d rows, want %d", src, all.Len(), batch.Len())
		}
		for r, row := range rows {
			one, err := c.Eval(row)
			if err != nil {
				t.Fatalf("%s row %d: %v", src, r, err)
			}
			a, b := all.Value(r), one.Value(0)
			if !a.Equal(b) {
				t.Errorf("%s row %d: batch gives %v, the row alone %v", src, r, a, b)
			}
			if all.Nulls != nil && all.Nulls[r] {
				if z := zeroAt(all, r); !z {
					t.Errorf("%s row %d: NULL row holds a value", src, r)
				}
			}
		}
	}
}

func zeroAt(c *domain.Column, i int) bool {
	switch c.Kind {
	case domain.KindBool, domain.KindInt64, domain.KindDate, domain.KindTimestamp:
		return c.Ints[i] == 0
	case domain.KindFloat64:
		return c.Floats[i] == 0
	case domain.KindString, domain.KindBytes:
		return c.Strs[i] == ""
	}
	return true
}

// FuzzFunctions: FuzzEval's contract (a code and a position for every
// error, one value per row, the compiled kind) over mutations of the
// function cases of this package's function files.
func FuzzFunctions(f *testing.F) {
	for _, cases := range [][]struct{ src, want string }{mathFnCases, stringFnCases, moreStringFnCases, formatFnCases, regexFnCases, hashFnCases} {
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
			if se, ok := err.(*syntax.Error); !ok || domain.CodeMessage(se.Code) == "" || se.Pos.Line < 1 {
				t.Fatalf("%q: compile error without a known code and position: %v", src, err)
			}
			return
		}
		col, err := c.Eval(batch)
		if err != nil {
			if domain.CodeMessage(domain.CodeOf(err)) == "" {
				t.Fatalf("%q: evaluation error without a known code: %v", src, err)
			}
			return
		}
		if col.Len() != batch.Len() || col.Kind != c.Type().Kind || (col.Nulls != nil && len(col.Nulls) != col.Len()) {
			t.Fatalf("%q: %d rows of kind %s (%d null marks) for %d rows of %s", src, col.Len(), col.Kind, len(col.Nulls), batch.Len(), c.Type())
		}
	})
}
