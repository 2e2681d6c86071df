package sql

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// planAllCases: a query over the test tables (orders, customers, nums,
// more; "missing" is not one) and the errors PlanQueryAll reports, as
// "CODE@line:col" in source order. A comment says what a case holds back:
// an error that would follow from an earlier one is not reported.
var planAllCases = []struct{ src, want string }{
	{"SELECT id FROM orders", ""},
	{"SELECT nope1, bogus_fn(id), id + 'a' FROM orders WHERE nope2 > 1",
		"UNRESOLVED_COLUMN@1:8 UNRESOLVED_ROUTINE@1:15 UNRESOLVED_COLUMN@1:56"},
	// the unknown table's columns (q.y, q.k, zz) say nothing; bogus_fn2 does
	{"SELECT q.y, zz FROM missing q JOIN (SELECT 1 AS k) r ON q.k = r.k WHERE bogus_fn2(1)",
		"TABLE_OR_VIEW_NOT_FOUND@1:21 UNRESOLVED_ROUTINE@1:73"},
	// a failed operand is of unknown type: + says nothing
	{"SELECT nope1 + 1, upper(nope2) + true, amount + true FROM orders",
		"UNRESOLVED_COLUMN@1:8 UNRESOLVED_COLUMN@1:25 DATATYPE_MISMATCH@1:47"},
	// the arguments of an unknown function, and of a wrong call, are checked
	{"SELECT bogus(nope, id, cust + 1), substr(id), length(1, 2, nope2) FROM orders",
		"UNRESOLVED_ROUTINE@1:8 UNRESOLVED_COLUMN@1:14 WRONG_NUM_ARGS@1:35 WRONG_NUM_ARGS@1:47 UNRESOLVED_COLUMN@1:60"},
	// every clause
	{"SELECT id FROM orders GROUP BY nope HAVING sum(nope2) > 1 ORDER BY nope3",
		"UNRESOLVED_COLUMN@1:32 UNRESOLVED_COLUMN@1:48 UNRESOLVED_COLUMN@1:68"},
	{"SELECT a.id FROM orders a JOIN customers c ON a.cust = c.nam AND c.bogus > 1",
		"UNRESOLVED_COLUMN@1:58 UNRESOLVED_COLUMN@1:68"},
	{"SELECT id FROM orders WHERE id IN (SELECT nope FROM customers) AND EXISTS (SELECT zz FROM nums)",
		"UNRESOLVED_COLUMN@1:43 UNRESOLVED_COLUMN@1:83"},
	{"SELECT id FROM orders QUALIFY nope", "UNRESOLVED_COLUMN@1:31"},
	{"SELECT region, sum(amount) FROM orders GROUP BY region HAVING nope > 1 AND sum(bogus) > 1",
		"UNRESOLVED_COLUMN@1:63 UNRESOLVED_COLUMN@1:80"},
	{"SELECT id FROM orders ORDER BY 5, nope", "ORDER_BY_POS_OUT_OF_RANGE@1:32 UNRESOLVED_COLUMN@1:35"},
	{"SELECT id FROM orders LIMIT 'a' OFFSET -1", "INVALID_LIMIT_LIKE_EXPRESSION@1:29 INVALID_LIMIT_LIKE_EXPRESSION@1:40"},
	{"SELECT * FROM VALUES (1, nope), (2) AS v(a, b)", "NUM_COLUMNS_MISMATCH@1:15 UNRESOLVED_COLUMN@1:26"},
	{"SELECT id FROM orders UNION SELECT nope FROM customers UNION SELECT 1, 2",
		"UNRESOLVED_COLUMN@1:36 NUM_COLUMNS_MISMATCH@1:56"},
	{"SELECT id, sum(amount) OVER (PARTITION BY nope ORDER BY id), lag(nope2) OVER (ORDER BY id), bogus_w(id) OVER (ORDER BY id) FROM orders",
		"UNRESOLVED_COLUMN@1:43 UNRESOLVED_COLUMN@1:66 UNRESOLVED_ROUTINE@1:93"},
	{"SELECT lag(id, 'a') OVER (ORDER BY id), ntile(nope) OVER (ORDER BY id), rank(1) OVER (ORDER BY id), row_number() OVER (PARTITION BY id) FROM orders",
		"DATATYPE_MISMATCH@1:16 UNRESOLVED_COLUMN@1:47 WRONG_NUM_ARGS@1:73 UNSUPPORTED_QUERY_FEATURE@1:101"},
	{"SELECT sum(nope), avg(cust), max(bogus(1)), count(DISTINCT nope2) FROM orders",
		"UNRESOLVED_COLUMN@1:12 UNRESOLVED_ROUTINE@1:34 UNRESOLVED_COLUMN@1:60"},
	{"SELECT CASE WHEN nope THEN 1 ELSE 'a' END, CASE WHEN id = 1 THEN date'2024-01-01' ELSE true END FROM orders",
		"UNRESOLVED_COLUMN@1:18 DATATYPE_MISMATCH@1:88"},
	{"SELECT cast(nope AS int), cast(id AS date), id BETWEEN nope AND 'x' FROM orders",
		"UNRESOLVED_COLUMN@1:13 DATATYPE_MISMATCH@1:27 UNRESOLVED_COLUMN@1:56"},
	{"SELECT map(1, nope)[2], array(nope)[0].x, struct(nope AS a).a.b, named_struct('a', 1).b FROM orders",
		"UNRESOLVED_COLUMN@1:15 UNRESOLVED_COLUMN@1:31 UNRESOLVED_COLUMN@1:50 UNRESOLVED_COLUMN@1:87"},
	// CTEs: an error is reported once however often the CTE is read; a
	// column that failed is of unknown type where it is read (a + 1, a.f)
	{"WITH c AS (SELECT nope AS a, id FROM orders) SELECT a + 1, upper(a), a.f, id.x FROM c",
		"UNRESOLVED_COLUMN@1:19 DATATYPE_MISMATCH@1:78"},
	{"WITH c AS (SELECT nope AS a, id FROM orders) SELECT c.a, d.a.b FROM c JOIN c AS d ON c.id = d.id AND c.a = 1",
		"UNRESOLVED_COLUMN@1:19"},
	{"WITH c AS (SELECT id FROM orders WHERE bogus(1)) SELECT x FROM c", "UNRESOLVED_ROUTINE@1:40 UNRESOLVED_COLUMN@1:57"},
	{"WITH c AS (SELECT * FROM missing) SELECT a + 1, b.c, bogus(3) FROM c", "TABLE_OR_VIEW_NOT_FOUND@1:26 UNRESOLVED_ROUTINE@1:54"},
	{"SELECT x FROM (SELECT nope AS x, id FROM orders) s WHERE s.id = 'a' AND s.x.f = 1 AND s.zz = 1",
		"UNRESOLVED_COLUMN@1:23 UNRESOLVED_COLUMN@1:89"},
	// unknown tables: their columns, and unqualified names that may be
	// theirs, say nothing; the known tables' columns are checked
	{"SELECT * FROM missing m JOIN orders o ON m.id = o.id WHERE m.anything = 2 AND whatever = 3 AND o.nope = 1",
		"TABLE_OR_VIEW_NOT_FOUND@1:15 UNRESOLVED_COLUMN@1:98"},
	{"SELECT c.name FROM orders o JOIN missing m ON o.id = m.id JOIN customers c ON c.name = m.x.y WHERE o.zz = 1 AND c.nope = 2",
		"TABLE_OR_VIEW_NOT_FOUND@1:34 UNRESOLVED_COLUMN@1:102 UNRESOLVED_COLUMN@1:115"},
	{"SELECT * FROM missing UNION SELECT 1, 2", "TABLE_OR_VIEW_NOT_FOUND@1:15"},
	{"SELECT * FROM missing GROUP BY 3 ORDER BY 4", "TABLE_OR_VIEW_NOT_FOUND@1:15"},
	{"SELECT * FROM missing UNION SELECT 1 ORDER BY 2", "TABLE_OR_VIEW_NOT_FOUND@1:15"},
	{"SELECT id, sum(nope) OVER w FROM orders", "UNRESOLVED_COLUMN@1:16 UNSUPPORTED_QUERY_FEATURE@1:27"},
	{"SELECT * FROM (SELECT * FROM missing) AS t(a, b) WHERE a = 1 AND bogus(2)", "TABLE_OR_VIEW_NOT_FOUND@1:30 UNRESOLVED_ROUTINE@1:66"},
	{"SELECT sum(x), y FROM missing GROUP BY z", "TABLE_OR_VIEW_NOT_FOUND@1:23"},
	{"SELECT id FROM orders JOIN missing USING (id, k) WHERE bogus(1)", "TABLE_OR_VIEW_NOT_FOUND@1:28 UNRESOLVED_ROUTINE@1:56"},
	{"SELECT nope FROM orders NATURAL JOIN missing", "TABLE_OR_VIEW_NOT_FOUND@1:38"},
	{"SELECT m.* EXCEPT (nope), x.* FROM missing m", "UNRESOLVED_COLUMN@1:27 TABLE_OR_VIEW_NOT_FOUND@1:36"},
	{"SELECT n FROM nums WHERE n > (SELECT max(zz) FROM missing) AND bogus(n)", "TABLE_OR_VIEW_NOT_FOUND@1:51 UNRESOLVED_ROUTINE@1:64"},
	{"SELECT (SELECT max(n) FROM nums WHERE n = zz) FROM missing", "TABLE_OR_VIEW_NOT_FOUND@1:52"},
	// a star that failed outputs columns not known: no count mismatch
	{"SELECT x.* FROM orders UNION SELECT 1, 2", "UNRESOLVED_COLUMN@1:8"},
	{"SELECT (SELECT x.*, 1 FROM nums) FROM orders", "UNRESOLVED_COLUMN@1:16"},
	// GROUP BY keys that failed: what is grouped is not known
	{"SELECT region FROM orders GROUP BY 2", "GROUP_BY_POS_OUT_OF_RANGE@1:36"},
	{"SELECT sum(amount) FROM orders GROUP BY nope HAVING region = 'x'", "UNRESOLVED_COLUMN@1:41"},
	{"SELECT id, region, count(*) FROM orders GROUP BY id", "MISSING_AGGREGATION@1:12"},
	{"SELECT o.regionx AS r, sum(o.amount) FROM orders o GROUP BY o.regionx ORDER BY r", "UNRESOLVED_COLUMN@1:63"},
	// an unknown function among aggregates may be a misspelt one: its
	// arguments are not said to be outside an aggregate
	{"SELECT region, count(*), sumx(amount), bogus(nope) FROM orders GROUP BY region",
		"UNRESOLVED_ROUTINE@1:26 UNRESOLVED_ROUTINE@1:40 UNRESOLVED_COLUMN@1:46"},
	// lambdas: a parameter over an array that failed is of unknown type
	{"SELECT transform(nope, x -> x.a), transform(array(1), x -> x.a), transform(array(1), x -> bogus(x)) FROM orders",
		"UNRESOLVED_COLUMN@1:18 DATATYPE_MISMATCH@1:62 UNRESOLVED_ROUTINE@1:91"},
	// generators: the columns of one that failed are not known
	{"SELECT id FROM orders LATERAL VIEW explode(nope) t AS x WHERE x.y > 1 AND t.z = 1 AND bogus(1)",
		"UNRESOLVED_COLUMN@1:44 UNRESOLVED_ROUTINE@1:87"},
	{"SELECT posexplode(nope) AS (a, b), explode(array(1)) FROM orders",
		"UNRESOLVED_COLUMN@1:19 UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS@1:36"},
	// subqueries: a correlated column is NOT_IMPLEMENTED, and the rest of
	// the subquery is checked
	{"SELECT id FROM orders o WHERE o.id IN (SELECT n FROM nums WHERE n = o.id AND bogus(1))",
		"NOT_IMPLEMENTED@1:69 UNRESOLVED_ROUTINE@1:78"},
	// a correlated subquery planned again, decorrelated, keeps its errors
	{"SELECT (SELECT max(n) FROM nums WHERE nums.n = nosuchfn(o.id)) FROM orders o", "UNRESOLVED_ROUTINE@1:48"},
	{"SELECT (SELECT max(n) FROM nums WHERE nums.n = o.id AND nope > 1) FROM orders o", "UNRESOLVED_COLUMN@1:57"},
	{"SELECT id, nope FROM orders WHERE id = (SELECT n, n FROM nums)", "UNRESOLVED_COLUMN@1:12 INVALID_SUBQUERY_EXPRESSION@1:40"},
	// CheckQuery's problems come with the planner's, each once
	{"SELECT id FROM orders WHERE sum(amount) > 1 AND nope", "INVALID_WHERE_CONDITION@1:29 UNRESOLVED_COLUMN@1:49"},
	{"SELECT sum(count(*)), nope, row_number(), bogus() FROM orders",
		"NESTED_AGGREGATE_FUNCTION@1:12 UNRESOLVED_COLUMN@1:23 WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE@1:29 UNRESOLVED_ROUTINE@1:43"},
	{"SELECT rank() FROM STREAM(orders) WHERE nope", "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE@1:8 NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING@1:8 UNRESOLVED_COLUMN@1:41"},
}

// planAll renders the errors of PlanQueryAll for src.
func planAll(t *testing.T, src string) string {
	t.Helper()
	f, err := syntax.ParseFile("q.sql", src, nil)
	if err != nil {
		t.Fatalf("%s: parse: %v", src, err)
	}
	qs, ok := f.Statements[0].(*syntax.QueryStmt)
	if !ok {
		t.Fatalf("%s: not a query", src)
	}
	p, errs := PlanQueryAll(qs.Query, planTables(t), Session{})
	if (p == nil) != (len(errs) > 0) {
		t.Fatalf("%s: plan %v with %d errors", src, p != nil, len(errs))
	}
	var got []string
	for _, err := range errs {
		e, ok := err.(*syntax.Error)
		if !ok || e.Message == "" {
			t.Fatalf("%s: %v is not an *Error with a message", src, err)
		}
		got = append(got, fmt.Sprintf("%s@%s", e.Code, e.Pos))
	}
	return strings.Join(got, " ")
}

func TestPlanQueryAll(t *testing.T) {
	for _, tc := range planAllCases {
		if got := planAll(t, tc.src); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

// TestPlanQueryAllAgrees: over the planner's own cases, PlanQueryAll plans
// what PlanQuery plans, the same way, and reports the error PlanQuery
// stops at among its own.
func TestPlanQueryAllAgrees(t *testing.T) {
	for _, tc := range planCases {
		checkPlanAll(t, tc.src)
	}
	for _, tc := range planAllCases {
		checkPlanAll(t, tc.src)
	}
}

// FuzzPlanAll: PlanQueryAll never panics; it fails exactly when PlanQuery
// does, reporting PlanQuery's error (same code, same position) among its
// own, every one a coded *Error with a position; and when it succeeds, its
// plan is PlanQuery's (same schema, inputs and results).
func FuzzPlanAll(f *testing.F) {
	for _, tc := range planCases {
		f.Add(tc.src)
	}
	for _, tc := range planAllCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Count(src, "JOIN")+strings.Count(src, ",") > 6 {
			return // cross products of cross products: slow, not interesting
		}
		checkPlanAll(t, src)
	})
}

func checkPlanAll(t *testing.T, src string) {
	t.Helper()
	file, err := syntax.ParseFile("fuzz.sql", src, nil)
	if err != nil || len(file.Statements) != 1 {
		return
	}
	qs, ok := file.Statements[0].(*syntax.QueryStmt)
	if !ok {
		return
	}
	cat := planTables(t)
	one, err := PlanQuery(qs.Query, cat, Session{})
	all, errs := PlanQueryAll(qs.Query, cat, Session{})
	if (err == nil) != (len(errs) == 0) || (all == nil) != (len(errs) > 0) {
		t.Fatalf("%q: PlanQuery says %v, PlanQueryAll %d errors (plan %v)", src, err, len(errs), all != nil)
	}
	if err != nil {
		first := err.(*syntax.Error)
		found := false
		for _, e := range errs {
			se, ok := e.(*syntax.Error)
			if !ok || domain.CodeMessage(se.Code) == "" || se.Pos.Line < 1 {
				t.Fatalf("%q: error without a known code and position: %v", src, e)
			}
			found = found || (se.Code == first.Code && se.Pos == first.Pos)
		}
		if !found {
			t.Fatalf("%q: PlanQuery's %v is not among PlanQueryAll's %v", src, err, errs)
		}
		return
	}
	if !reflect.DeepEqual(one.Schema, all.Schema) || !reflect.DeepEqual(one.Inputs, all.Inputs) {
		t.Fatalf("%q: the plans differ: %v %v, %v %v", src, one.Schema, one.Inputs, all.Schema, all.Inputs)
	}
	run := func(p *Plan) string {
		in := make([]*domain.Batch, len(p.Inputs))
		for i, r := range p.Inputs {
			in[i] = cat[r.Name]
		}
		b, err := p.Run(in)
		if err != nil {
			return "error " + string(domain.CodeOf(err))
		}
		return fmt.Sprint(b.Schema, b.Rows())
	}
	if a, b := run(one), run(all); a != b {
		t.Fatalf("%q: the plans' results differ:\n%s\n%s", src, a, b)
	}
}

// TestInputFileNameWithoutFiles: input_file_name() over no file read is an
// empty string, as in Spark, not an error.
func TestInputFileNameWithoutFiles(t *testing.T) {
	if got := planAll(t, "SELECT input_file_name() AS f, current_user() AS u FROM range(2)"); got != "" {
		t.Fatalf("errors %s", got)
	}
}
