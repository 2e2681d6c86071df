package sql

import (
	"strings"
	"testing"
)

func TestSplitAggregates(t *testing.T) {
	for _, tc := range []struct{ src, want, calls string }{
		{"a + 1", "a + 1", ""},
		{"sum(x)", "__agg0", "sum(x)"},
		{"sum(x) / count(*) + 1", "__agg0 / __agg1 + 1", "sum(x); count(*)"},
		{"sum(x) / sum(x)", "__agg0 / __agg0", "sum(x)"},
		{"CASE WHEN max(x) > 1 THEN first(y) IGNORE NULLS END", "CASE WHEN __agg0 > 1 THEN __agg1 END", "max(x); first(y) IGNORE NULLS"},
		{"coalesce(sum(x) FILTER (WHERE b), 0)", "coalesce(__agg0, 0)", "sum(x) FILTER (WHERE b)"},
		{"percentile_cont(0.5) WITHIN GROUP (ORDER BY x) - avg(x)", "__agg0 - __agg1", "percentile_cont(0.5) WITHIN GROUP (ORDER BY x); avg(x)"},
		{"sum(count(x)) OVER (PARTITION BY max(y))", "sum(__agg0) OVER (PARTITION BY __agg1)", "count(x); max(y)"},
		{"row_number() OVER (ORDER BY sum(x) DESC)", "row_number() OVER (ORDER BY __agg0 DESC)", "sum(x)"},
		{"a IN (1, count(*)) AND b IS NOT NULL", "a IN (1, __agg0) AND b IS NOT NULL", "count(*)"},
		{"CAST(avg(x) AS STRING) || trim(min(s))", "CAST(__agg0 AS STRING) || trim(__agg1)", "avg(x); min(s)"},
		{"x > (SELECT max(y) FROM t)", "x > (SELECT max(y) FROM t)", ""},
		{"max(x) BETWEEN min(x) AND -sum(x)", "__agg0 BETWEEN __agg1 AND -__agg2", "max(x); min(x); sum(x)"},
	} {
		e, err := ParseExpr("t", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		before := e.String()
		got, calls := SplitAggregates(e, nil)
		var cs []string
		for _, c := range calls {
			cs = append(cs, c.String())
		}
		if got.String() != tc.want || strings.Join(cs, "; ") != tc.calls {
			t.Errorf("%s: got %s with [%s], want %s with [%s]", tc.src, got, strings.Join(cs, "; "), tc.want, tc.calls)
		}
		if e.String() != before {
			t.Errorf("%s: the input was changed to %s", tc.src, e)
		}
	}
}

// TestSplitAggregatesShared: the calls of one expression are reused by the
// next, as SELECT and HAVING share them.
func TestSplitAggregatesShared(t *testing.T) {
	sel, _ := ParseExpr("t", "sum(x) + count(*)")
	having, _ := ParseExpr("t", "count(*) > 1 AND max(y) < 3")
	a, calls := SplitAggregates(sel, nil)
	b, calls := SplitAggregates(having, calls)
	if a.String() != "__agg0 + __agg1" || b.String() != "__agg1 > 1 AND __agg2 < 3" || len(calls) != 3 {
		t.Errorf("got %s and %s with %d calls", a, b, len(calls))
	}
}
