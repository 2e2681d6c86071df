package sql

import (
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// lambdaCases are Spark's reference examples of the higher-order functions,
// then NULLs, empty arrays, nested lambdas and lambdas reading outer columns.
var lambdaCases = []struct{ src, want string }{
	{"transform(array(1, 2, 3), x -> x + 1)", "array<int>:[2, 3, 4]"},
	{"transform(array(1, 2, 3), (x, i) -> x + i)", "array<bigint>:[1, 3, 5]"},
	{"transform(array(1, 2), x -> x + i)", "array<bigint>:[6, 7]"},
	{"transform(array(1, 2), i -> i * 10)", "array<int>:[10, 20]"},
	{"transform(array(), x -> x)", "array<null>:[]"},
	{"transform(NULL, x -> x)", "array<null>:NULL"},
	{"transform(array(1, NULL), x -> x + 1)", "array<int>:[2, NULL]"},
	{"transform(array(big), x -> x + 1)", "ARITHMETIC_OVERFLOW"},
	{"transform(array(array(1, 2), array(3)), a -> transform(a, x -> x * i))", "array<array<bigint>>:[[5, 10], [15]]"},
	{"transform(array(1, 2), x -> transform(array(10, 20), y -> x + y))", "array<array<int>>:[[11, 21], [12, 22]]"},
	{"transform(array(1), x -> y)", "UNRESOLVED_COLUMN"},
	{"transform(array(1), (x, x) -> x)", "INVALID_PARAMETER_VALUE"},
	{"transform(array(1), (x, y, z) -> x)", "WRONG_NUM_ARGS"},
	{"transform(array(1), 1)", "DATATYPE_MISMATCH"},
	{"x -> x", "DATATYPE_MISMATCH"},
	{"upper(x -> x)", "DATATYPE_MISMATCH"},
	{"filter(array(1, 2, 3), x -> x % 2 == 1)", "array<int>:[1, 3]"},
	{"filter(array(0, 2, 3), (x, i) -> x > i)", "array<int>:[2, 3]"},
	{"filter(array(0, NULL, 2, 3, NULL), x -> x IS NOT NULL)", "array<int>:[0, 2, 3]"},
	{"filter(array(1, NULL), x -> x > 0)", "array<int>:[1]"},
	{"filter(array(1), x -> x)", "DATATYPE_MISMATCH"},
	{"exists(array(1, 2, 3), x -> x % 2 == 0)", "boolean:true"},
	{"exists(array(1, 2, 3), x -> x % 2 == 10)", "boolean:false"},
	{"exists(array(1, NULL, 3), x -> x % 2 == 0)", "boolean:NULL"},
	{"exists(array(0, NULL, 2, 3, NULL), x -> x IS NULL)", "boolean:true"},
	{"exists(array(1, 2, 3), x -> x IS NULL)", "boolean:false"},
	{"exists(array(), x -> true)", "boolean:false"},
	{"forall(array(1, 2, 3), x -> x % 2 == 0)", "boolean:false"},
	{"forall(array(2, 4, 8), x -> x % 2 == 0)", "boolean:true"},
	{"forall(array(1, NULL, 3), x -> x % 2 == 0)", "boolean:false"},
	{"forall(array(2, NULL, 8), x -> x % 2 == 0)", "boolean:NULL"},
	{"forall(array(), x -> false)", "boolean:true"},
	{"aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x)", "int:6"},
	{"aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x, acc -> acc * 10)", "int:60"},
	{"reduce(array(1, 2, 3), 0, (acc, x) -> acc + x)", "int:6"},
	{"reduce(array(1, 2, 3), 0, (acc, x) -> acc + x, acc -> acc * 10)", "int:60"},
	{"aggregate(array(), 7, (acc, x) -> acc + x)", "int:7"},
	{"aggregate(NULL, 7, (acc, x) -> acc + x)", "int:NULL"},
	{"aggregate(array(1, NULL, 3), 0, (acc, x) -> acc + x)", "int:NULL"},
	{"aggregate(array(1, NULL, 3), 0L, (acc, x) -> acc + coalesce(x, 0) + i)", "bigint:19"}, {"aggregate(array(1, NULL, 3), 0, (acc, x) -> acc + coalesce(x, 0) + i)", "DATATYPE_MISMATCH"},
	{"aggregate(array('a', 'b'), '', (acc, x) -> concat(acc, x))", "string:'ab'"},
	{"aggregate(array(1.5), 0, (acc, x) -> acc + x)", "DATATYPE_MISMATCH"},
	{"aggregate(array(1, 2), 0D, (acc, x) -> acc + x)", "double:3.0"}, {"aggregate(array(1, 2), 0.0, (acc, x) -> acc + x)", "DATATYPE_MISMATCH"},
	{"zip_with(array(1, 2, 3), array('a', 'b', 'c'), (x, y) -> (y, x))", "NOT_IMPLEMENTED"},
	{"map_zip_with(map(1, 'a', 2, 'b'), map(1, 'x', 2, 'y'), (k, v1, v2) -> concat(v1, v2))", "map<int, string>:{1 -> ax, 2 -> by}"},
	{"map_zip_with(map('a', 1, 'b', 2), map('b', 3, 'c', 4), (k, v1, v2) -> coalesce(v1, 0) + coalesce(v2, 0))", "map<string, int>:{a -> 1, b -> 5, c -> 4}"},
	{"map_zip_with(map('a', 1), map(1, 2), (k, v1, v2) -> v1)", "DATATYPE_MISMATCH"},
	{"map_zip_with(CAST(NULL AS MAP<STRING, INT>), map('a', 1), (k, v1, v2) -> v1)", "map<string, int>:NULL"},
	{"zip_with(array(1, 2), array(3, 4), (x, y) -> x + y)", "array<int>:[4, 6]"},
	{"zip_with(array('a', 'b', 'c'), array('d', 'e', 'f'), (x, y) -> concat_ws_missing(x, y))", "UNRESOLVED_ROUTINE"},
	{"zip_with(array('a', 'b', 'c'), array('d', 'e'), (x, y) -> concat(x, y))", "array<string>:[ad, be, NULL]"},
	{"zip_with(array(1), NULL, (x, y) -> x)", "array<int>:NULL"},
	{"map_filter(map(1, 0, 2, 2, 3, -1), (k, v) -> k > v)", "map<int, int>:{1 -> 0, 3 -> -1}"},
	{"transform_values(map(1, 1, 2, 2, 3, 3), (k, v) -> v + 1)", "map<int, int>:{1 -> 2, 2 -> 3, 3 -> 4}"},
	{"transform_values(map(1, 1, 2, 2, 3, 3), (k, v) -> k + v)", "map<int, int>:{1 -> 2, 2 -> 4, 3 -> 6}"},
	{"transform_keys(map(1, 1, 2, 2, 3, 3), (k, v) -> k + 1)", "map<int, int>:{2 -> 1, 3 -> 2, 4 -> 3}"},
	{"transform_keys(map(1, 1, 2, 2, 3, 3), (k, v) -> k + v)", "map<int, int>:{2 -> 1, 4 -> 2, 6 -> 3}"},
	{"transform_keys(map(1, 1, 2, 2), (k, v) -> 0)", "DUPLICATED_MAP_KEY"},
	{"transform_keys(map(1, 1), (k, v) -> n)", "NULL_MAP_KEY"},
	{"transform_keys(map(1, 1), k -> k)", "WRONG_NUM_ARGS"},
	{"map_filter(NULL, (k, v) -> true)", "map<null, null>:NULL"},
	{"array_sort(array(5, 6, 1), (left, right) -> CASE WHEN left < right THEN -1 WHEN left > right THEN 1 ELSE 0 END)", "array<int>:[1, 5, 6]"},
	{"array_sort(array('bc', 'ab', 'dc'), (left, right) -> CASE WHEN left IS NULL AND right IS NULL THEN 0 WHEN left IS NULL THEN -1 WHEN right IS NULL THEN 1 WHEN left < right THEN 1 WHEN left > right THEN -1 ELSE 0 END)", "array<string>:[dc, bc, ab]"},
	{"array_sort(array('b', 'd', NULL, 'c', 'a'))", "array<string>:[a, b, c, d, NULL]"},
	{"array_sort(array(2, 1), (l, r) -> n)", "COMPARATOR_RETURNS_NULL"},
	{"array_sort(array(2, 1), (l, r) -> l > r)", "DATATYPE_MISMATCH"},
}

func TestLambdaFunctions(t *testing.T) { checkCollCases(t, lambdaCases) }

// TestCollectionBatchMatchesRows: over rows that mix NULLs and values, a
// batch evaluates to what each row gives alone (the flattening of lambdas
// and the per-position folding of aggregate keep rows apart).
func TestCollectionBatchMatchesRows(t *testing.T) {
	batch := fuzzBatch(t)
	rows := make([]*domain.Batch, batch.Len())
	for r := range rows {
		rows[r] = gather(batch, []int{r})
	}
	for _, src := range []string{
		"transform(array(i, n, z), x -> x + 1)", "transform(sequence(0, coalesce(z, 2)), (x, k) -> x * k + i)",
		"filter(array(i, n, z, 1), x -> x > 0)", "exists(array(i, n), x -> x = 0)", "forall(array(i, n), x -> x = 0)",
		"aggregate(sequence(1, coalesce(i, 2)), 0, (acc, x) -> acc + x, acc -> acc * 2)",
		"aggregate(if(n IS NULL, NULL, array(n, 1)), 1L, (acc, x) -> acc * x)",
		"zip_with(array(i, n), sequence(1, coalesce(z, 1)), (x, y) -> x + y)",
		"transform_values(map('a', i, 'b', n), (k, v) -> concat(k, v, s))", "map_filter(map(1, n, 2, i), (k, v) -> v IS NULL)",
		"array(i, n)[0]", "element_at(array(s, ns), 2)", "map(coalesce(s, 'x'), i)[s]", "size(if(n IS NULL, NULL, array(n)))",
		"array_contains(array(1, n), i)", "array_sort(array(z, i, n))", "transform(array(st), x -> x.y)",
		"array_sort(array(i, z, 2), (l, r) -> coalesce(l, 0) - coalesce(r, 0))", "transform(array(array(i), array(z)), a -> transform(a, x -> x + coalesce(n, 0)))",
		`get_json_object(to_json(named_struct('s', s, 'n', n)), '$.s')`, `to_json(map('i', i, 'n', n))`, "to_json(array(st))",
		`from_json(concat('{"a":', coalesce(ns, s), '}'), 'a INT')`, `concat('{"a":', i, '}'):a`, "json_array_length(concat('[', i, ']'))",
		"array_join(array(s, ns, u), '/', '?')", "array_union(array(i), array(n, z))", "slice(array(i, n, z), 2, 1)",
	} {
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
		if all.Len() != batch.Len() || all.Kind != c.Type().Kind {
			t.Fatalf("%s: %d rows of kind %s", src, all.Len(), all.Kind)
		}
		for r, row := range rows {
			one, err := c.Eval(row)
			if err != nil {
				t.Fatalf("%s row %d: %v", src, r, err)
			}
			if a, b := all.Value(r), one.Value(0); !a.Equal(b) {
				t.Errorf("%s row %d: batch gives %v, the row alone %v", src, r, a, b)
			}
		}
	}
}

// BenchmarkTransform: transform(sequence(0, a), x -> x * b + 1) over 64K
// rows of arrays of up to 20 elements; the lambda body runs once per batch.
func BenchmarkTransform(b *testing.B) {
	batch := benchBatch(b, 1<<16)
	c := compileBench(b, batch, "transform(sequence(0, a), x -> x * b + 1)")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Eval(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetJSONObject: get_json_object with a constant path over 64K rows.
func BenchmarkGetJSONObject(b *testing.B) {
	batch := benchBatch(b, 1<<16)
	c := compileBench(b, batch, `get_json_object(concat('{"a":{"b":[', a, ',"', c, '"]}}'), '$.a.b[1]')`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Eval(batch); err != nil {
			b.Fatal(err)
		}
	}
}
