package sql

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// aggTable builds a batch from a column list ("g bigint, x string") and
// rows written as SQL values ("(0, 'a'), (1, NULL)"). A column named g gives
// each row's group id.
func aggTable(t testing.TB, cols, rows string) (*domain.Batch, []int32, int) {
	t.Helper()
	var fields []domain.Field
	for _, c := range strings.Split(cols, ",") {
		parts := strings.Fields(c)
		typ, ok := castTarget(&syntax.Type{Name: strings.ToUpper(parts[1])})
		if !ok {
			t.Fatalf("type %s", parts[1])
		}
		fields = append(fields, domain.Field{Name: parts[0], Type: typ, Nullable: true})
	}
	schema := domain.NewSchema(fields...)
	b := domain.NewBatch(schema, 0)
	var groups []int32
	ngroups := 1
	if rows != "" {
		e, err := syntax.ParseExpr("rows", "("+rows+")")
		if err != nil {
			t.Fatal(err)
		}
		var tuples []syntax.Expr
		switch e := e.(type) {
		case *syntax.Tuple:
			tuples = e.Items
		case *syntax.Paren:
			tuples = []syntax.Expr{e.X}
		}
		one := domain.NewSchema(domain.Field{Name: "_", Type: domain.TypeInt64})
		dummy, _ := domain.BatchOf(one, []*domain.Column{{Kind: domain.KindInt64, Ints: []int64{0}}})
		for _, tu := range tuples {
			var items []syntax.Expr
			switch tu := tu.(type) {
			case *syntax.Tuple:
				items = tu.Items
			case *syntax.Paren:
				items = []syntax.Expr{tu.X}
			default:
				items = []syntax.Expr{tu}
			}
			vals := make([]domain.Value, len(items))
			for i, it := range items {
				c, err := Compile(it, one)
				if err != nil {
					t.Fatal(err)
				}
				col, err := c.Eval(dummy)
				if err != nil {
					t.Fatal(err)
				}
				v := col.Value(0)
				if fields[i].Type.Kind == domain.KindFloat64 {
					v = convertValue(v, domain.TypeFloat64) // 1 and 1.5 are bigint and decimal literals
				}
				vals[i] = v
			}
			if err := b.AppendRow(vals...); err != nil {
				t.Fatal(err)
			}
		}
	}
	groups = make([]int32, b.Len())
	if gi := schema.Index("g"); gi >= 0 {
		for i := range groups {
			groups[i] = int32(b.Columns[gi].Ints[i])
			ngroups = max(ngroups, int(groups[i])+1)
		}
	}
	return b, groups, ngroups
}

// renderGroups renders a result as "type:value" for one group and
// "type:[v0 | v1 | ...]" for several.
func renderGroups(t domain.Type, c *domain.Column) string {
	vals := make([]string, c.Len())
	for i := range vals {
		vals[i] = renderValue(c.Value(i))
	}
	if len(vals) == 1 {
		return t.String() + ":" + vals[0]
	}
	return t.String() + ":[" + strings.Join(vals, " | ") + "]"
}

func renderValue(v domain.Value) string {
	switch v.Kind() {
	case domain.KindFloat64:
		return fmtFloat(v.AsFloat())
	case domain.KindString:
		return "'" + v.AsString() + "'"
	case domain.KindList:
		items := make([]string, len(v.AsList()))
		for i, x := range v.AsList() {
			items[i] = renderValue(x)
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return v.String()
}

// runAgg compiles src (an aggregate call) and folds the table into it: with
// one Add of every row when oneByOne is false, else one Add per row.
func runAgg(t testing.TB, src, cols, rows string, oneByOne bool) (string, error) {
	t.Helper()
	b, groups, ngroups := aggTable(t, cols, rows)
	e, err := syntax.ParseExpr("test", src)
	if err != nil {
		t.Fatalf("%s: parse: %v", src, err)
	}
	call, ok := e.(*syntax.FuncCall)
	if !ok {
		t.Fatalf("%s is not a call", src)
	}
	a, err := CompileAggregate(call, b.Schema)
	if err != nil {
		return "", err
	}
	s := a.NewState()
	if !oneByOne || b.Len() == 0 {
		if err := s.Add(b, groups, ngroups); err != nil {
			return "", err
		}
	} else {
		for i := 0; i < b.Len(); i++ {
			if err := s.Add(gather(b, []int{i}), groups[i:i+1], int(groups[i])+1); err != nil {
				return "", err
			}
		}
		if err := s.Add(gather(b, nil), nil, ngroups); err != nil {
			return "", err
		}
	}
	c, err := s.Result()
	if err != nil {
		return "", err
	}
	if c.Kind != a.Type().Kind || c.Len() != ngroups {
		t.Fatalf("%s: result %s of %d rows, type %s, %d groups", src, c.Kind, c.Len(), a.Type(), ngroups)
	}
	return renderGroups(a.Type(), c), nil
}

// aggCases: an aggregate call, the input table and the expected result or
// error code. Spark's reference examples come first in each group.
var aggCases = []struct{ src, cols, rows, want string }{
	// count
	{"count(*)", "x bigint", "(NULL), (5), (5), (20)", "bigint:4"},
	{"count(x)", "x bigint", "(NULL), (5), (5), (20)", "bigint:3"},
	{"count(DISTINCT x)", "x bigint", "(NULL), (5), (5), (20)", "bigint:2"},
	{"count(x, y)", "x bigint, y string", "(1, 'a'), (NULL, 'b'), (3, NULL), (4, 'd')", "bigint:2"},
	{"count(DISTINCT x, y)", "x bigint, y string", "(1, 'a'), (1, 'a'), (1, 'b'), (NULL, 'b')", "bigint:2"},
	{"count(*)", "x bigint", "", "bigint:0"},
	{"count(x)", "g bigint, x bigint", "(0, 1), (1, NULL), (2, 3), (0, 4), (2, NULL)", "bigint:[2 | 0 | 1]"},
	{"count(*)", "g bigint, x bigint", "(0, 1), (1, NULL), (2, 3), (0, 4), (2, NULL)", "bigint:[2 | 1 | 2]"},
	{"count(DISTINCT x)", "x double", "(0.0), (-0.0), (CAST('NaN' AS DOUBLE)), (CAST('NaN' AS DOUBLE)), (1)", "bigint:3"},
	{"count(DISTINCT *)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"count()", "x bigint", "(1)", "WRONG_NUM_ARGS"},
	{"count(x) FILTER (WHERE x > 1)", "x bigint", "(1), (2), (3), (NULL)", "bigint:2"},
	{"count(*) FILTER (WHERE y)", "x bigint, y boolean", "(1, TRUE), (2, NULL), (3, FALSE)", "bigint:1"},
	{"count(x) FILTER (WHERE x)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	// count_if
	{"count_if(x % 2 = 0)", "x bigint", "(NULL), (0), (1), (2), (3)", "bigint:2"},
	{"count_if(x IS NULL)", "x bigint", "(NULL), (0), (1), (2), (3)", "bigint:1"},
	{"count_if(x)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"count_if(x > 0)", "x bigint", "", "bigint:0"},
	// approx_count_distinct: exact
	{"approx_count_distinct(x)", "x bigint", "(1), (1), (2), (2), (3)", "bigint:3"},
	{"approx_count_distinct(x, 0.05)", "x string", "('a'), (NULL), ('b'), ('a')", "bigint:2"},
	{"approx_count_distinct(x, 0.5)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"approx_count_distinct(x, x)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	// sum
	{"sum(x)", "x bigint", "(5), (10), (15)", "bigint:30"},
	{"sum(x)", "x bigint", "(NULL), (10), (15)", "bigint:25"},
	{"sum(x)", "x bigint", "(NULL), (NULL)", "bigint:NULL"},
	{"sum(x)", "x bigint", "", "bigint:NULL"},
	{"sum(x)", "x double", "(1.5), (NULL), (2)", "double:3.5"},
	{"sum(x)", "x string", "('1.5'), ('2')", "double:3.5"},
	{"sum(x)", "x string", "('1.5'), ('two')", "CAST_INVALID_INPUT"},
	{"sum(x)", "x boolean", "(TRUE)", "DATATYPE_MISMATCH"},
	{"sum(NULL)", "x bigint", "(1)", "double:NULL"},
	{"sum(DISTINCT x)", "x bigint", "(1), (1), (2), (NULL)", "bigint:3"},
	{"sum(x)", "x bigint", "(9223372036854775807), (1)", "ARITHMETIC_OVERFLOW"},
	{"sum(x)", "x bigint", "(-9223372036854775807), (-2)", "ARITHMETIC_OVERFLOW"},
	{"sum(x)", "x bigint", "(9223372036854775807), (-1), (1)", "bigint:9223372036854775807"},
	{"try_sum(x)", "x bigint", "(9223372036854775807), (1)", "bigint:NULL"},
	{"try_sum(x)", "g bigint, x bigint", "(0, 9223372036854775807), (1, 1), (0, 1)", "bigint:[NULL | 1]"},
	{"sum(x)", "g bigint, x bigint", "(0, 1), (1, NULL), (2, 3), (0, 4), (2, NULL)", "bigint:[5 | NULL | 3]"},
	{"sum(x) FILTER (WHERE x > 2)", "g bigint, x bigint", "(0, 1), (1, 2), (2, 3), (0, 4)", "bigint:[4 | NULL | 3]"},
	{"sum(10 / x) FILTER (WHERE x <> 0)", "x bigint", "(0), (5), (2)", "double:7.0"},
	{"sum(10 / x)", "x bigint", "(0), (5), (2)", "DIVIDE_BY_ZERO"},
	{"sum(x) IGNORE NULLS", "x bigint", "(1)", "INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX"},
	{"sum(x) WITHIN GROUP (ORDER BY x)", "x bigint", "(1)", "INVALID_WITHIN_GROUP_EXPRESSION"},
	{"sum(count(x))", "x bigint", "(1)", "NESTED_AGGREGATE_FUNCTION"},
	{"sum(x) FILTER (WHERE max(x) > 1)", "x bigint", "(1)", "NESTED_AGGREGATE_FUNCTION"},
	{"sum(abs(x))", "x bigint", "(-1), (2)", "bigint:3"},
	{"sum(y)", "x bigint", "(1)", "UNRESOLVED_COLUMN"},
	{"sum(x) OVER ()", "x bigint", "(1)", "NOT_IMPLEMENTED"},
	{"upper(x)", "x string", "('a')", "UNRESOLVED_ROUTINE"},
	// avg
	{"avg(x)", "x bigint", "(1), (2), (3)", "double:2.0"},
	{"avg(x)", "x bigint", "(1), (2), (NULL)", "double:1.5"},
	{"mean(x)", "x double", "(1.5), (2.5)", "double:2.0"},
	{"avg(x)", "x bigint", "", "double:NULL"},
	{"avg(x)", "x bigint", "(9223372036854775807), (9223372036854775807)", "double:9.223372036854776E18"},
	{"avg(DISTINCT x)", "x bigint", "(1), (1), (4)", "double:2.5"},
	{"try_avg(x)", "x bigint", "(1), (2)", "double:1.5"},
	{"avg(x)", "x date", "(DATE '2024-01-01')", "DATATYPE_MISMATCH"},
	{"avg(x)", "g bigint, x double", "(0, 1), (1, NULL), (0, 2)", "double:[1.5 | NULL]"},
	// min, max
	{"min(x)", "x bigint", "(10), (-1), (20)", "bigint:-1"},
	{"max(x)", "x bigint", "(10), (50), (20)", "bigint:50"},
	{"max(x)", "x bigint", "(NULL), (NULL)", "bigint:NULL"},
	{"min(x)", "x string", "('b'), ('Ä'), ('a'), (NULL)", "string:'a'"},
	{"max(x)", "x string", "('b'), ('Ä'), ('a'), (NULL)", "string:'Ä'"},
	{"max(x)", "x double", "(1), (CAST('NaN' AS DOUBLE)), (2)", "double:NaN"},
	{"min(x)", "x double", "(1), (CAST('NaN' AS DOUBLE)), (-2)", "double:-2.0"},
	{"max(x)", "x boolean", "(FALSE), (TRUE), (NULL)", "boolean:true"},
	{"min(x)", "x date", "(DATE '2024-02-29'), (DATE '2023-01-01')", "date:2023-01-01"},
	{"max(x)", "x timestamp", "(TIMESTAMP '2024-02-29 01:02:03'), (NULL)", "timestamp:2024-02-29T01:02:03Z"},
	{"max(NULL)", "x bigint", "(1)", "null:NULL"},
	{"max(x)", "g bigint, x bigint", "(0, 1), (1, NULL), (2, 3), (0, 4), (2, -5)", "bigint:[4 | NULL | 3]"},
	{"min(x)", "g bigint, x string", "(0, 'b'), (1, NULL), (0, 'a')", "string:['a' | NULL]"},
	// max_by, min_by
	{"max_by(x, y)", "x string, y bigint", "('a', 10), ('b', 50), ('c', 20)", "string:'b'"},
	{"min_by(x, y)", "x string, y bigint", "('a', 10), ('b', 50), ('c', 20)", "string:'a'"},
	{"max_by(x, y)", "x string, y bigint", "(NULL, 60), ('b', 50), ('c', NULL)", "string:NULL"},
	{"max_by(x, y)", "x string, y bigint", "('a', NULL), ('b', NULL)", "string:NULL"},
	{"min_by(x, y)", "x bigint, y string", "(1, 'b'), (2, 'a'), (3, 'a')", "bigint:2"},
	{"max_by(x, y)", "g bigint, x string, y double", "(0, 'a', 1), (1, 'b', 2), (0, 'c', 3)", "string:['c' | 'b']"},
	// first, last, any_value
	{"first(x)", "x bigint", "(10), (5), (20)", "bigint:10"},
	{"first(x)", "x bigint", "(NULL), (5), (20)", "bigint:NULL"},
	{"first(x, true)", "x bigint", "(NULL), (5), (20)", "bigint:5"},
	{"first(x) IGNORE NULLS", "x bigint", "(NULL), (5), (20)", "bigint:5"},
	{"first_value(x) RESPECT NULLS", "x bigint", "(NULL), (5), (20)", "bigint:NULL"},
	{"last(x)", "x bigint", "(10), (5), (20)", "bigint:20"},
	{"last(x)", "x bigint", "(10), (5), (NULL)", "bigint:NULL"},
	{"last(x, true)", "x bigint", "(10), (5), (NULL)", "bigint:5"},
	{"last_value(x) IGNORE NULLS", "x string", "('a'), ('b'), (NULL)", "string:'b'"},
	{"any_value(x)", "x bigint", "(10), (5), (20)", "bigint:10"},
	{"any_value(x)", "x bigint", "(NULL), (5), (20)", "bigint:NULL"},
	{"any_value(x, true)", "x bigint", "(NULL), (5), (20)", "bigint:5"},
	{"first(x, 'yes')", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"first(x, y)", "x bigint, y boolean", "(1, TRUE)", "DATATYPE_MISMATCH"},
	{"first(x)", "x bigint", "", "bigint:NULL"},
	{"first(x)", "g bigint, x double", "(0, NULL), (1, 2), (0, 3), (1, 4)", "double:[NULL | 2.0]"},
	{"last(x, true)", "g bigint, x double", "(0, 1), (1, 2), (0, NULL), (1, 4)", "double:[1.0 | 4.0]"},
	// collect_list, collect_set
	{"collect_list(x)", "x bigint", "(1), (2), (1)", "array<bigint>:[1, 2, 1]"},
	{"array_agg(x)", "x bigint", "(1), (2), (NULL), (1)", "array<bigint>:[1, 2, 1]"},
	{"collect_set(x)", "x bigint", "(1), (2), (1)", "array<bigint>:[1, 2]"},
	{"collect_list(DISTINCT x)", "x string", "('b'), ('a'), ('b')", "array<string>:['b', 'a']"},
	{"collect_list(x)", "x bigint", "", "array<bigint>:[]"},
	{"collect_list(x)", "x bigint", "(NULL)", "array<bigint>:[]"},
	{"collect_set(x)", "g bigint, x string", "(0, 'a'), (1, 'b'), (0, 'a'), (1, 'a'), (2, NULL)", "array<string>:[['a'] | ['b', 'a'] | []]"},
	// listagg, string_agg
	{"listagg(x)", "x string", "('a'), ('b'), ('c')", "string:'abc'"},
	{"listagg(x) WITHIN GROUP (ORDER BY x DESC)", "x string", "('a'), ('b'), ('c')", "string:'cba'"},
	{"listagg(x)", "x string", "('a'), (NULL), ('b')", "string:'ab'"},
	{"listagg(x)", "x string", "('a'), ('a')", "string:'aa'"},
	{"listagg(DISTINCT x)", "x string", "('a'), ('a'), ('b')", "string:'ab'"},
	{"listagg(x, ', ')", "x string", "('a'), ('b'), ('c')", "string:'a, b, c'"},
	{"string_agg(x, NULL)", "x string", "('a'), ('b')", "string:'ab'"},
	{"listagg(x)", "x string", "(NULL), (NULL)", "string:NULL"},
	{"listagg(x)", "x string", "", "string:NULL"},
	{"string_agg(x, '-') WITHIN GROUP (ORDER BY y)", "x string, y bigint", "('a', 3), ('b', 1), ('c', 2)", "string:'b-c-a'"},
	{"listagg(x) WITHIN GROUP (ORDER BY y)", "x string, y bigint", "('a', NULL), ('b', 1), ('c', 1)", "string:'abc'"},
	{"listagg(x) WITHIN GROUP (ORDER BY y NULLS LAST)", "x string, y bigint", "('a', NULL), ('b', 1)", "string:'ba'"},
	{"listagg(x) WITHIN GROUP (ORDER BY y DESC)", "x string, y bigint", "('a', NULL), ('b', 1), ('c', 2)", "string:'cba'"},
	{"listagg(x) WITHIN GROUP (ORDER BY y, z DESC)", "x string, y bigint, z bigint", "('a', 2, 1), ('b', 1, 1), ('c', 2, 5)", "string:'bca'"},
	{"listagg(DISTINCT x) WITHIN GROUP (ORDER BY x DESC)", "x string", "('b'), ('a'), ('b')", "string:'ba'"},
	{"listagg(DISTINCT x) WITHIN GROUP (ORDER BY y)", "x string, y bigint", "('a', 1)", "INVALID_WITHIN_GROUP_EXPRESSION"},
	{"listagg(x, '+')", "x bigint", "(1), (NULL), (20)", "string:'1+20'"},
	{"listagg(x, 1)", "x string", "('a')", "DATATYPE_MISMATCH"},
	{"listagg(x, y)", "x string, y string", "('a', 'b')", "DATATYPE_MISMATCH"},
	{"listagg(x)", "g bigint, x string", "(0, 'a'), (1, 'b'), (0, 'c'), (2, NULL)", "string:['ac' | 'b' | NULL]"},
	// percentiles
	{"percentile_cont(0.25) WITHIN GROUP (ORDER BY x)", "x bigint", "(0), (10)", "double:2.5"},
	{"percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC)", "x bigint", "(0), (10)", "double:7.5"},
	{"percentile_disc(0.25) WITHIN GROUP (ORDER BY x)", "x bigint", "(0), (10)", "double:0.0"},
	{"percentile_disc(0.25) WITHIN GROUP (ORDER BY x DESC)", "x bigint", "(0), (10)", "double:10.0"},
	{"percentile_disc(0.3) WITHIN GROUP (ORDER BY x)", "x bigint", "(0), (1), (2), (10)", "double:1.0"},
	{"percentile_disc(0) WITHIN GROUP (ORDER BY x)", "x bigint", "(3), (1), (2)", "double:1.0"},
	{"percentile_disc(1) WITHIN GROUP (ORDER BY x)", "x bigint", "(3), (1), (2)", "double:3.0"},
	{"percentile_cont(0.5) WITHIN GROUP (ORDER BY x)", "x double", "(NULL), (4), (1), (2)", "double:2.0"},
	{"percentile_cont(0.5) WITHIN GROUP (ORDER BY x)", "x double", "(NULL)", "double:NULL"},
	{"percentile_cont(0.5)", "x bigint", "(1)", "INVALID_WITHIN_GROUP_EXPRESSION"},
	{"percentile_cont(0.5) WITHIN GROUP (ORDER BY x, x)", "x bigint", "(1)", "INVALID_WITHIN_GROUP_EXPRESSION"},
	{"percentile_cont(1.5) WITHIN GROUP (ORDER BY x)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"percentile_cont(x) WITHIN GROUP (ORDER BY x)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"percentile_cont(0.5) WITHIN GROUP (ORDER BY x)", "x string", "('a')", "CAST_INVALID_INPUT"},
	{"percentile_cont(0.5) WITHIN GROUP (ORDER BY x)", "x boolean", "(TRUE)", "DATATYPE_MISMATCH"},
	{"percentile(x, 0.3)", "x bigint", "(0), (10)", "double:3.0"},
	{"percentile(x, array(0.25, 0.75))", "x bigint", "(0), (10)", "array<double>:[2.5, 7.5]"},
	{"percentile(x, array(0.25, 0.75))", "x bigint", "(NULL)", "array<double>:NULL"},
	{"percentile(x, -0.1)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"percentile(x, 0.5, f)", "x bigint, f bigint", "(1, 1), (2, 3)", "double:2.0"},
	{"percentile(x, 0.25, f)", "x bigint, f bigint", "(0, 1), (10, 1)", "double:2.5"},
	{"percentile(x, 0.5, f)", "x double, f bigint", "(5, 0), (1, NULL), (3, 2), (NULL, 4)", "double:3.0"},
	{"percentile(x, array(0, 0.5, 1), f)", "x bigint, f bigint", "(9, 1), (1, 2)", "array<double>:[1.0, 1.0, 9.0]"},
	{"percentile(x, 0.5, 2)", "x bigint", "(1), (3)", "double:2.0"},
	{"percentile(x, 0.5, f)", "x bigint, f bigint", "(1, 0)", "double:NULL"},
	{"percentile(x, 0.5, f)", "x bigint, f bigint", "(1, 1), (2, -1)", "NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION"},
	{"percentile(x, 0.5, f)", "x bigint, f double", "(1, 1)", "DATATYPE_MISMATCH"},
	{"percentile(x, 0.5, NULL)", "x bigint", "(1)", "double:NULL"},
	{"percentile_cont(array(0.5)) WITHIN GROUP (ORDER BY x)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"percentile_approx(x, array(0.5, 0.4, 0.1), 100)", "x bigint", "(0), (1), (2), (10)", "array<bigint>:[1, 1, 0]"},
	{"percentile_approx(x, 0.5, 100)", "x bigint", "(0), (6), (7), (9), (10)", "bigint:7"},
	// histogram_numeric: Spark's documented example, then bins merged into
	// their weighted mean (1 and 2 are the closest pair, then 1.5 and 4)
	{"histogram_numeric(x, 5)", "x int", "(0), (1), (2), (10)", "array<struct<x: int, y: double>>:[{0, 1}, {1, 1}, {2, 1}, {10, 1}]"},
	{"histogram_numeric(x, 2)", "x double", "(1.0), (2.0), (4.5), (20.0)", "array<struct<x: double, y: double>>:[{2.5, 3}, {20, 1}]"},
	{"histogram_numeric(x, 2)", "x bigint", "(1), (2), (2), (2), (4), (30)", "array<struct<x: bigint, y: double>>:[{2, 5}, {30, 1}]"},
	{"histogram_numeric(x, 3)", "x bigint", "(NULL)", "array<struct<x: bigint, y: double>>:NULL"},
	{"histogram_numeric(x, 1)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"histogram_numeric(x, 3)", "x string", "('a')", "DATATYPE_MISMATCH"},
	// schema_of_variant_agg: Spark's documented examples, then numbers and
	// objects merging, and values that meet only in VARIANT
	{"schema_of_variant_agg(parse_json(j))", "j string", "('1'), ('2'), ('3')", "string:'BIGINT'"},
	{"schema_of_variant_agg(parse_json(j))", "j string", `('{"a": 1}'), ('{"b": true}'), ('{"c": 1.23}')`, "string:'OBJECT<a: BIGINT, b: BOOLEAN, c: DECIMAL(3,2)>'"},
	{"schema_of_variant_agg(parse_json(j))", "j string", `('1.5'), ('12.25'), (NULL), ('null')`, "string:'DECIMAL(4,2)'"},
	{"schema_of_variant_agg(parse_json(j))", "j string", `('1'), ('1.5')`, "string:'DECIMAL(21,1)'"},
	{"schema_of_variant_agg(parse_json(j))", "j string", `('1'), ('1e3')`, "string:'DOUBLE'"},
	{"schema_of_variant_agg(parse_json(j))", "j string", `('[1]'), ('["x"]'), ('{"a": [null]}')`, "string:'VARIANT'"},
	{"schema_of_variant_agg(parse_json(j))", "j string", `('{"a": [1, null]}'), ('{"a": [2.5], "b": "s"}')`, "string:'OBJECT<a: ARRAY<DECIMAL(21,1)>, b: STRING>'"},
	{"schema_of_variant_agg(parse_json(j))", "j string", "(NULL)", "string:'VOID'"},
	{"schema_of_variant_agg(j)", "j string", "('1')", "DATATYPE_MISMATCH"},
	{"approx_percentile(x, 0.5)", "x bigint", "(9007199254740993), (NULL), (9007199254740993)", "bigint:9007199254740993"},
	{"approx_percentile(x, 1)", "x double", "(1.5), (CAST('NaN' AS DOUBLE)), (2)", "double:NaN"},
	{"approx_percentile(x, 0.5)", "x date", "(DATE '2024-03-01'), (DATE '2024-01-01')", "date:2024-01-01"},
	{"approx_percentile(x, array(0, 1))", "x timestamp", "(TIMESTAMP '2024-03-01 00:00:00'), (TIMESTAMP '2024-01-01 10:00:00')", "array<timestamp>:[2024-01-01T10:00:00Z, 2024-03-01T00:00:00Z]"},
	{"approx_percentile(x, 0.5)", "x bigint", "", "bigint:NULL"},
	{"approx_percentile(x, 0.5, 0)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"approx_percentile(x, 0.5)", "x string", "('a')", "DATATYPE_MISMATCH"},
	{"approx_percentile(x, 2)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"approx_percentile(x, 0.5)", "g bigint, x bigint", "(0, 5), (1, NULL), (0, 1), (0, 3)", "bigint:[3 | NULL]"},
	{"median(x)", "x bigint", "(0), (10)", "double:5.0"},
	{"median(x)", "g bigint, x bigint", "(0, 0), (1, 7), (0, 10), (0, 20)", "double:[10.0 | 7.0]"},
	{"median(DISTINCT x)", "x bigint", "(1), (1), (1), (3)", "double:2.0"},
	// mode
	{"mode(x)", "x bigint", "(0), (10), (10)", "bigint:10"},
	{"mode(x)", "x bigint", "(0), (10), (10), (NULL), (NULL), (NULL)", "bigint:10"},
	{"mode(x, true)", "x bigint", "(-10), (0), (10)", "bigint:-10"},
	{"mode() WITHIN GROUP (ORDER BY x)", "x bigint", "(0), (10), (10), (20), (20)", "bigint:10"},
	{"mode() WITHIN GROUP (ORDER BY x DESC)", "x bigint", "(0), (10), (10), (20), (20)", "bigint:20"},
	{"mode(x)", "x string", "('b'), ('a'), ('b'), (NULL)", "string:'b'"},
	{"mode(x)", "x double", "(0.0), (-0.0), (1)", "double:0.0"},
	{"mode(x)", "x bigint", "", "bigint:NULL"},
	{"mode()", "x bigint", "(1)", "WRONG_NUM_ARGS"},
	{"mode(x) WITHIN GROUP (ORDER BY x)", "x bigint", "(1)", "WRONG_NUM_ARGS"},
	{"mode(x, 1)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	{"mode(DISTINCT x)", "x bigint", "(1), (1), (2)", "bigint:1"},
	// variance, standard deviation
	{"stddev(x)", "x bigint", "(1), (2), (3)", "double:1.0"},
	{"std(x)", "x bigint", "(1), (2), (3)", "double:1.0"},
	{"stddev_samp(x)", "x bigint", "(1), (2), (3)", "double:1.0"},
	{"stddev_pop(x)", "x bigint", "(1), (2), (3)", "double:0.816496580927726"},
	{"variance(x)", "x bigint", "(1), (2), (3)", "double:1.0"},
	{"var_samp(x)", "x bigint", "(1), (2), (3)", "double:1.0"},
	{"var_pop(x)", "x bigint", "(1), (2), (3)", "double:0.6666666666666666"},
	{"stddev_samp(x)", "x bigint", "(1)", "double:NULL"},
	{"stddev_pop(x)", "x bigint", "(1)", "double:0.0"},
	{"variance(x)", "x bigint", "", "double:NULL"},
	{"var_pop(x)", "g bigint, x double", "(0, 1), (1, NULL), (0, 3)", "double:[1.0 | NULL]"},
	// Spark's reference gives 1.1135657469022013, -1.1135657469022011 and
	// -0.7014368047529618, from rows split among partitions (see momentAcc)
	{"skewness(x)", "x bigint", "(-10), (-20), (100), (1000)", "double:1.1135657469022011"},
	{"skewness(x)", "x bigint", "(-1000), (-100), (10), (20)", "double:-1.113565746902201"},
	{"kurtosis(x)", "x bigint", "(-10), (-20), (100), (1000)", "double:-0.7014368047529609"},
	{"kurtosis(x)", "x bigint", "(1), (10), (100), (10), (1)", "double:0.19432323191698986"},
	{"skewness(x)", "x bigint", "(3), (3)", "double:NULL"},
	{"kurtosis(x)", "x bigint", "", "double:NULL"},
	// covariance, correlation
	{"covar_pop(x, y)", "x bigint, y bigint", "(1, 1), (2, 2), (3, 3)", "double:0.6666666666666666"},
	{"covar_samp(x, y)", "x bigint, y bigint", "(1, 1), (2, 2), (3, 3)", "double:1.0"},
	{"corr(x, y)", "x bigint, y bigint", "(3, 2), (3, 3), (6, 4)", "double:0.8660254037844387"},
	{"corr(x, y)", "x bigint, y bigint", "(1, 1)", "double:NULL"},
	{"corr(x, y)", "x bigint, y bigint", "(1, 1), (1, 2)", "double:NaN"},
	{"covar_samp(x, y)", "x double, y double", "(1, 1), (NULL, 2), (3, NULL)", "double:NULL"},
	{"covar_pop(x, y)", "x double, y double", "(1, 1), (NULL, 2), (3, NULL)", "double:0.0"},
	{"covar_pop(x, y)", "x bigint, y boolean", "(1, TRUE)", "DATATYPE_MISMATCH"},
	// bit_and, bit_or, bit_xor
	{"bit_and(x)", "x bigint", "(3), (5)", "bigint:1"},
	{"bit_or(x)", "x bigint", "(3), (5)", "bigint:7"},
	{"bit_xor(x)", "x bigint", "(3), (5)", "bigint:6"},
	{"bit_xor(x)", "x bigint", "(3), (NULL), (3)", "bigint:0"},
	{"bit_or(x)", "x bigint", "(NULL)", "bigint:NULL"},
	{"bit_and(x)", "x double", "(1.5)", "DATATYPE_MISMATCH"},
	// bool_and, bool_or
	{"bool_and(x)", "x boolean", "(TRUE), (TRUE), (TRUE)", "boolean:true"},
	{"bool_and(x)", "x boolean", "(NULL), (TRUE), (TRUE)", "boolean:true"},
	{"bool_and(x)", "x boolean", "(TRUE), (FALSE), (TRUE)", "boolean:false"},
	{"every(x)", "x boolean", "(TRUE), (FALSE), (TRUE)", "boolean:false"},
	{"bool_or(x)", "x boolean", "(TRUE), (FALSE), (FALSE)", "boolean:true"},
	{"bool_or(x)", "x boolean", "(NULL), (TRUE), (FALSE)", "boolean:true"},
	{"bool_or(x)", "x boolean", "(FALSE), (FALSE), (NULL)", "boolean:false"},
	{"some(x)", "x boolean", "(FALSE), (TRUE)", "boolean:true"},
	{"any(x)", "x boolean", "(FALSE), (FALSE)", "boolean:false"},
	{"bool_and(x)", "x boolean", "(NULL)", "boolean:NULL"},
	{"bool_or(x > 1)", "g bigint, x bigint", "(0, 1), (1, 2), (0, 3)", "boolean:[true | true]"},
	{"bool_and(x)", "x bigint", "(1)", "DATATYPE_MISMATCH"},
	// the regr_ family: Spark's examples over (y, x) = (1, 2), (2, 2), (2, 3), (2, 4),
	// with its Welford sums (regr_sxx is 2.7499999999999996 there too)
	{"regr_count(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4), (NULL, 1)", "bigint:4"},
	{"regr_avgx(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4), (3, NULL)", "double:2.75"},
	{"regr_avgy(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4)", "double:1.75"},
	{"regr_sxx(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4)", "double:2.7499999999999996"},
	{"regr_syy(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4)", "double:0.75"},
	{"regr_sxy(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4)", "double:0.7499999999999999"},
	{"regr_slope(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4)", "double:0.2727272727272727"},
	{"regr_intercept(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4)", "double:1.0"},
	{"regr_r2(y, x)", "y bigint, x bigint", "(1, 2), (2, 2), (2, 3), (2, 4)", "double:0.2727272727272727"},
	{"regr_slope(y, x)", "y bigint, x bigint", "(1, 2), (2, 2)", "double:NULL"},
	{"regr_r2(y, x)", "y bigint, x bigint", "(2, 1), (2, 2)", "double:1.0"},
	{"regr_count(y, x)", "y bigint, x bigint", "", "bigint:0"},
	{"regr_avgx(y, x)", "y bigint, x bigint", "", "double:NULL"},
}

func TestAggregates(t *testing.T) {
	for _, tc := range aggCases {
		for _, oneByOne := range []bool{false, true} {
			got, err := runAgg(t, tc.src, tc.cols, tc.rows, oneByOne)
			if err != nil {
				got = string(domain.CodeOf(err))
				var pe *syntax.Error
				if !asError(err, &pe) {
					t.Errorf("%s: error without a position: %v", tc.src, err)
				}
			}
			if got != tc.want {
				t.Errorf("%s over %s (one by one %v): got %s, want %s (err %v)", tc.src, tc.rows, oneByOne, got, tc.want, err)
			}
		}
	}
}

func asError(err error, pe **syntax.Error) bool {
	e, ok := err.(*syntax.Error)
	*pe = e
	return ok && e.Pos.Line > 0
}

// TestAggregateEmptyGroups: groups that no row reaches have the value of an
// aggregate over no rows.
func TestAggregateEmptyGroups(t *testing.T) {
	schema := domain.NewSchema(domain.Field{Name: "x", Type: domain.TypeInt64, Nullable: true})
	b, _ := domain.BatchOf(schema, []*domain.Column{{Kind: domain.KindInt64, Ints: []int64{4}}})
	for src, want := range map[string]string{
		"count(x)":        "bigint:[0 | 1 | 0]",
		"count_if(x > 1)": "bigint:[0 | 1 | 0]",
		"sum(x)":          "bigint:[NULL | 4 | NULL]",
		"avg(x)":          "double:[NULL | 4.0 | NULL]",
		"max(x)":          "bigint:[NULL | 4 | NULL]",
		"collect_list(x)": "array<bigint>:[[] | [4] | []]",
		"median(x)":       "double:[NULL | 4.0 | NULL]",
		"mode(x)":         "bigint:[NULL | 4 | NULL]",
		"stddev_pop(x)":   "double:[NULL | 0.0 | NULL]",
		"bool_or(x > 1)":  "boolean:[NULL | true | NULL]",
		"first(x)":        "bigint:[NULL | 4 | NULL]",
		"max_by(x, x)":    "bigint:[NULL | 4 | NULL]",
	} {
		e, err := syntax.ParseExpr("t", src)
		if err != nil {
			t.Fatal(err)
		}
		a, err := CompileAggregate(e.(*syntax.FuncCall), schema)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		s := a.NewState()
		if err := s.Add(b, []int32{1}, 2); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(gather(b, nil), nil, 3); err != nil {
			t.Fatal(err)
		}
		c, err := s.Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := renderGroups(a.Type(), c); got != want {
			t.Errorf("%s: got %s, want %s", src, got, want)
		}
	}
}

// TestAggregateResultIsASnapshot: Adding after Result does not change the
// column Result returned.
func TestAggregateResultIsASnapshot(t *testing.T) {
	schema := domain.NewSchema(domain.Field{Name: "x", Type: domain.TypeInt64, Nullable: true})
	b, _ := domain.BatchOf(schema, []*domain.Column{{Kind: domain.KindInt64, Ints: []int64{4, 5}}})
	for _, src := range []string{"count(x)", "sum(x)", "max(x)", "last(x)", "collect_list(x)", "max_by(x, x)", "bool_and(x > 4)"} {
		e, _ := syntax.ParseExpr("t", src)
		a, err := CompileAggregate(e.(*syntax.FuncCall), schema)
		if err != nil {
			t.Fatal(err)
		}
		s := a.NewState()
		if err := s.Add(gather(b, []int{0}), []int32{0}, 1); err != nil {
			t.Fatal(err)
		}
		first, _ := s.Result()
		before := renderGroups(a.Type(), first)
		if err := s.Add(gather(b, []int{1}), []int32{0}, 1); err != nil {
			t.Fatal(err)
		}
		if after := renderGroups(a.Type(), first); after != before {
			t.Errorf("%s: the first result changed from %s to %s", src, before, after)
		}
	}
}

func TestAggregateBadGroups(t *testing.T) {
	schema := domain.NewSchema(domain.Field{Name: "x", Type: domain.TypeInt64, Nullable: true})
	b, _ := domain.BatchOf(schema, []*domain.Column{{Kind: domain.KindInt64, Ints: []int64{4, 5}}})
	e, _ := syntax.ParseExpr("t", "sum(x)")
	a, err := CompileAggregate(e.(*syntax.FuncCall), schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, groups := range [][]int32{{0}, {0, 2}, {-1, 0}} {
		if err := a.NewState().Add(b, groups, 2); err == nil {
			t.Errorf("groups %v: no error", groups)
		}
	}
}

// TestAggregateInScalarContext: an aggregate compiled as a row expression is
// a clear error.
func TestAggregateInScalarContext(t *testing.T) {
	for src, want := range map[string]string{
		"sum(i)":                           "UNSUPPORTED_EXPR_FOR_OPERATOR",
		"1 + count(*)":                     "UNSUPPORTED_EXPR_FOR_OPERATOR",
		"COUNT(DISTINCT s)":                "UNSUPPORTED_EXPR_FOR_OPERATOR",
		"max(i) FILTER (WHERE b)":          "UNSUPPORTED_EXPR_FOR_OPERATOR",
		"coalesce(first(i), 1)":            "UNSUPPORTED_EXPR_FOR_OPERATOR",
		"sum(i) OVER (ORDER BY i)":         "NOT_IMPLEMENTED",
		"upper(s)":                         "string:'SPARK SQL'",
		"abs(i)":                           "bigint:5",
		"percentile(i, 0.5)":               "UNSUPPORTED_EXPR_FOR_OPERATOR",
		"mode() WITHIN GROUP (ORDER BY i)": "UNSUPPORTED_EXPR_FOR_OPERATOR",
	} {
		got, err := evalOne(t, src)
		if err != nil {
			got = string(domain.CodeOf(err))
		}
		if got != want {
			t.Errorf("%s: got %s, want %s", src, got, want)
		}
	}
}

// TestAggregateBatchMatchesRows: folding a mixed batch at once gives what
// folding it row by row gives, for every kind of the test schema.
func TestAggregateBatchMatchesRows(t *testing.T) {
	batch := fuzzBatch(t)
	groups := make([]int32, batch.Len())
	for i := range groups {
		groups[i] = int32(i % 3)
	}
	for _, src := range []string{
		"count(*)", "count(n)", "count(DISTINCT s)", "count_if(b)", "sum(i)", "sum(d)", "avg(i)", "min(s)", "max(u)",
		"max(dt)", "min(ts)", "max(b)", "min(d)", "first(n)", "last(s, true)", "any_value(nb)", "collect_list(i)",
		"collect_set(s)", "approx_count_distinct(u)", "median(d)", "percentile(i, 0.3)", "mode(s)", "stddev(d)",
		"var_pop(i)", "max_by(s, i)", "min_by(st, d)", "bool_and(b)", "bool_or(nb)", "sum(i) FILTER (WHERE b)",
		"max(st)", "first(st)", "mode(st)", "mode(dt)", "mode(d)", "listagg(u, '/') WITHIN GROUP (ORDER BY i DESC, s)", "string_agg(DISTINCT s)", "skewness(d)", "kurtosis(i)", "corr(i, d)", "covar_samp(d, z)", "bit_xor(i)", "approx_percentile(ts, array(0.2, 0.9))", "percentile_approx(d, 0.5)",
	} {
		e, err := syntax.ParseExpr("t", src)
		if err != nil {
			t.Fatal(err)
		}
		a, err := CompileAggregate(e.(*syntax.FuncCall), testSchema)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		all := a.NewState()
		if err := all.Add(batch, groups, 3); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		byRow := a.NewState()
		for r := 0; r < batch.Len(); r++ {
			if err := byRow.Add(gather(batch, []int{r}), groups[r:r+1], 3); err != nil {
				t.Fatalf("%s row %d: %v", src, r, err)
			}
		}
		x, err := all.Result()
		if err != nil {
			t.Fatal(err)
		}
		y, err := byRow.Result()
		if err != nil {
			t.Fatal(err)
		}
		if gx, gy := renderGroups(a.Type(), x), renderGroups(a.Type(), y); gx != gy {
			t.Errorf("%s: the batch gives %s, row by row %s", src, gx, gy)
		}
	}
}

// TestAggregateNamesAreNotScalars: an aggregate name shadows a scalar
// function of the same name in Compile, so none may be registered as both.
func TestAggregateNamesAreNotScalars(t *testing.T) {
	for name := range aggregates {
		if _, ok := builtins[name]; ok {
			t.Errorf("%s is registered both as an aggregate and as a scalar function", name)
		}
	}
}

func TestAggregateNestedValues(t *testing.T) {
	b := gather(fuzzBatch(t), []int{2, 0, 1, 0, 2})
	for src, want := range map[string]string{
		"mode(st)":         "struct<x: bigint, y: string>:{7, why}",
		"max(st)":          "struct<x: bigint, y: string>:{7, why}",
		"count(st)":        "bigint:2",
		"collect_set(st)":  "array<struct<x: bigint, y: string>>:[{7, why}]",
		"collect_list(st)": "array<struct<x: bigint, y: string>>:[{7, why}, {7, why}]",
		"first(st)":        "struct<x: bigint, y: string>:NULL",
		"first(st, true)":  "struct<x: bigint, y: string>:{7, why}",
		"max_by(st, i)":    "struct<x: bigint, y: string>:{7, why}",
		"min_by(st, i)":    "struct<x: bigint, y: string>:NULL",
	} {
		e, _ := syntax.ParseExpr("t", src)
		a, err := CompileAggregate(e.(*syntax.FuncCall), testSchema)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		s := a.NewState()
		if err := s.Add(b, make([]int32, b.Len()), 1); err != nil {
			t.Fatal(err)
		}
		c, err := s.Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := renderGroups(a.Type(), c); got != want {
			t.Errorf("%s: got %s, want %s", src, got, want)
		}
	}
}

// FuzzAggregate: any aggregate call over the test schema compiles or fails
// with a coded error, and folds a mixed batch without panicking.
func FuzzAggregate(f *testing.F) {
	for _, tc := range aggCases {
		f.Add(strings.ReplaceAll(tc.src, "x", "i"))
	}
	for _, src := range []string{"max_by(s, d)", "percentile(d, array(0.1, 1), i)", "mode(u)", "collect_set(st)", "count(DISTINCT dt, ts)"} {
		f.Add(src)
	}
	batch := fuzzBatch(f)
	groups := make([]int32, batch.Len())
	for i := range groups {
		groups[i] = int32(i % 2)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := syntax.ParseExpr("fuzz", src)
		if err != nil {
			return
		}
		call, ok := e.(*syntax.FuncCall)
		if !ok {
			return
		}
		a, err := CompileAggregate(call, testSchema)
		if err != nil {
			if domain.CodeOf(err) == "" {
				t.Fatalf("%s: error without a code: %v", src, err)
			}
			return
		}
		s := a.NewState()
		if err := s.Add(batch, groups, 2); err != nil {
			if domain.CodeOf(err) == "" {
				t.Fatalf("%s: error without a code: %v", src, err)
			}
			return
		}
		c, err := s.Result()
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != 2 || c.Kind != a.Type().Kind {
			t.Fatalf("%s: %d rows of %s for type %s", src, c.Len(), c.Kind, a.Type())
		}
	})
}

// TestJavaRandom: java.util.Random's first doubles for seed 42, as the JVM
// gives them, so that histogram_numeric breaks ties as Spark does.
func TestJavaRandom(t *testing.T) {
	r := newJavaRandom(42)
	for _, want := range []float64{0.7275636800328681, 0.6832234717598454} {
		if got := r.nextDouble(); got != want {
			t.Errorf("nextDouble = %v, want %v", got, want)
		}
	}
}
