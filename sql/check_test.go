package sql

import (
	"fmt"
	"github.com/sluicehq/sluice/sql/syntax"
	"strings"
	"testing"
)

// checkCases: a query (or a CREATE ... AS query) and the problems
// CheckQuery finds, as "CODE@line:col" in order, "" for none.
var checkCases = []struct{ src, want string }{
	// fine
	{"SELECT a, count(*) FROM t WHERE b > 1 GROUP BY a HAVING sum(c) > 2", ""},
	{"SELECT a FROM t WHERE b > (SELECT max(c) FROM u)", ""},
	{"SELECT a FROM t WHERE EXISTS (SELECT count(*) FROM u GROUP BY c)", ""},
	{"SELECT a, row_number() OVER (PARTITION BY a ORDER BY b) FROM t", ""},
	{"SELECT sum(count(x)) OVER () FROM t GROUP BY a", ""},
	{"SELECT first_value(x), last_value(y) FROM t", ""},
	{"SELECT explode(xs) FROM t", ""},
	{"SELECT a, count(*) FROM STREAM(t) GROUP BY a, window(ts, '5 minutes')", ""},
	{"SELECT rank() OVER (ORDER BY a) FROM t JOIN u ON t.k = u.k", ""},
	{"CREATE MATERIALIZED VIEW v AS SELECT lag(a) OVER (ORDER BY b) FROM t", ""},
	// WHERE
	{"SELECT a FROM t WHERE sum(b) > 1", "INVALID_WHERE_CONDITION@1:23"},
	{"SELECT a FROM t WHERE row_number() OVER (ORDER BY a) = 1", "INVALID_WHERE_CONDITION@1:23"},
	{"SELECT a FROM t WHERE rank() = 1", "INVALID_WHERE_CONDITION@1:23"},
	{"SELECT a FROM t WHERE explode(xs) > 1", "INVALID_WHERE_CONDITION@1:23"},
	{"SELECT a FROM t WHERE a IN (SELECT b FROM u WHERE COUNT(*) > 1)", "INVALID_WHERE_CONDITION@1:51"},
	{"SELECT a FROM t WHERE b > 1 AND max(c) FILTER (WHERE d) > 2", "INVALID_WHERE_CONDITION@1:33"},
	// GROUP BY
	{"SELECT a FROM t GROUP BY sum(a)", "GROUP_BY_AGGREGATE@1:26"},
	{"SELECT a FROM t GROUP BY a, b + max(c)", "GROUP_BY_AGGREGATE@1:33"},
	{"SELECT a FROM t GROUP BY GROUPING SETS ((a), (count(b)))", "GROUP_BY_AGGREGATE@1:47"},
	// nested aggregates
	{"SELECT sum(count(x)) FROM t", "NESTED_AGGREGATE_FUNCTION@1:12"},
	{"SELECT a FROM t GROUP BY a HAVING max(avg(b)) > 1", "NESTED_AGGREGATE_FUNCTION@1:39"},
	{"SELECT count(*) FILTER (WHERE sum(x) > 1) FROM t", "NESTED_AGGREGATE_FUNCTION@1:31"},
	{"SELECT a FROM t ORDER BY max(min(b))", "NESTED_AGGREGATE_FUNCTION@1:30"},
	// window functions without OVER
	{"SELECT row_number() FROM t", "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE@1:8"},
	{"SELECT lag(a, 1), LEAD(a) FROM t", "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE@1:8 WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE@1:19"},
	{"SELECT a FROM t QUALIFY dense_rank() = 1", "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE@1:25"},
	// window functions over streams
	{"SELECT a, row_number() OVER (ORDER BY a) FROM STREAM(t)", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:11"},
	{"SELECT sum(a) OVER (PARTITION BY b) FROM STREAM t", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:8"},
	{"SELECT lag(a) OVER w FROM STREAM read_files('/x', format => 'json') WINDOW w AS (ORDER BY b)", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:8"},
	{"SELECT rank() OVER (ORDER BY a) FROM (SELECT a FROM STREAM(t))", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:8"},
	{"WITH s AS (SELECT * FROM STREAM(t)) SELECT rank() OVER (ORDER BY a) FROM s", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:44"},
	{"WITH s AS (SELECT * FROM t) SELECT rank() OVER (ORDER BY a) FROM s", ""},
	{"WITH s AS (SELECT * FROM STREAM(t)), u AS (SELECT * FROM s) SELECT rank() OVER (ORDER BY a) FROM u", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:68"},
	{"WITH s AS (SELECT * FROM STREAM(t)) SELECT a FROM (WITH s AS (SELECT 1 AS a) SELECT rank() OVER (ORDER BY a) FROM s)", ""},
	{"WITH s AS (SELECT a, lag(a) OVER (ORDER BY a) FROM STREAM(t)) SELECT * FROM s", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:22"},
	{"SELECT rank() OVER (ORDER BY a) FROM t JOIN STREAM(u) ON t.k = u.k", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:8"},
	{"SELECT a FROM STREAM(t) WHERE a IN (SELECT max(b) OVER () FROM u)", ""},
	{"SELECT a FROM t UNION ALL SELECT lead(a) OVER (ORDER BY a) FROM STREAM(u)", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:34"},
	{"CREATE OR REFRESH STREAMING TABLE s AS SELECT a, rank() OVER (ORDER BY a) FROM STREAM(t)", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:50"},
	{"SELECT a FROM STREAM(t) ORDER BY row_number() OVER (ORDER BY a)", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:34"},
	// several problems at once, in source order
	{"SELECT sum(max(a)), rank() FROM STREAM(t) WHERE count(*) > 1 GROUP BY avg(b) HAVING lag(a) OVER (ORDER BY a) > 1",
		"NESTED_AGGREGATE_FUNCTION@1:12 WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE@1:21 NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:21 INVALID_WHERE_CONDITION@1:49 GROUP_BY_AGGREGATE@1:71 NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:85"},
}

func queryOf(t *testing.T, src string) *syntax.Query {
	t.Helper()
	f, err := syntax.ParseFile("t.sql", src, nil)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	switch s := f.Statements[0].(type) {
	case *syntax.QueryStmt:
		return s.Query
	case *syntax.CreateDataset:
		return s.Query
	}
	t.Fatalf("%s: not a query", src)
	return nil
}

func TestCheckQuery(t *testing.T) {
	for _, tc := range checkCases {
		var got []string
		for _, err := range CheckQuery(queryOf(t, tc.src)) {
			e, ok := err.(*syntax.Error)
			if !ok {
				t.Fatalf("%s: %T is not an *Error", tc.src, err)
			}
			if e.Message == "" || e.Pos.Line == 0 {
				t.Errorf("%s: %v has no message or position", tc.src, e)
			}
			got = append(got, fmt.Sprintf("%s@%s", e.Code, e.Pos))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, g, tc.want)
		}
	}
}

// FuzzCheckQuery: CheckQuery never panics and every problem is a coded
// *Error with a position.
func FuzzCheckQuery(f *testing.F) {
	for _, tc := range checkCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := syntax.ParseFile("fuzz.sql", src, nil)
		if err != nil {
			return
		}
		for _, st := range file.Statements {
			var q *syntax.Query
			switch st := st.(type) {
			case *syntax.QueryStmt:
				q = st.Query
			case *syntax.CreateDataset:
				q = st.Query
			}
			for _, err := range CheckQuery(q) {
				e, ok := err.(*syntax.Error)
				if !ok || e.Code == "" || e.Pos.Line == 0 {
					t.Fatalf("%s: %v", src, err)
				}
			}
		}
	})
}
