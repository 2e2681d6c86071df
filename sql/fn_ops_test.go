package sql

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// opCases are the bitwise operators and the quantified LIKE.
var opCases = []struct{ src, want string }{
	{"3 & 5", "bigint:1"}, {"3 | 5", "bigint:7"}, {"3 ^ 5", "bigint:6"}, {"~0", "bigint:-1"},
	{"i & '4'", "bigint:4"}, {"n | 1", "bigint:NULL"}, {"~n", "bigint:NULL"}, {"d & 1", "DATATYPE_MISMATCH"},
	{"big ^ -1", "bigint:-9223372036854775808"},
	{"s LIKE ANY ('%SQL', 'x%')", "boolean:true"}, {"s LIKE ALL ('Spark%', '%SQL')", "boolean:true"},
	{"s LIKE ALL ('Spark%', 'x%')", "boolean:false"}, {"s LIKE SOME ('x%', NULL)", "boolean:NULL"},
	{"s LIKE ANY ('S%', NULL)", "boolean:true"}, {"s NOT LIKE ANY ('S%', 'x%')", "boolean:true"},
	{"s NOT LIKE ALL ('S%', 'x%')", "boolean:false"}, {"ns LIKE ANY ('a')", "boolean:NULL"},
	{"s ILIKE ANY ('spark%')", "boolean:true"},
	// casts of arrays, structs and maps to strings, as Spark prints them
	{"CAST(array(1.0, NULL, 2.5) AS STRING)", "string:'[1.0, null, 2.5]'"},
	{"CAST(named_struct('a', 1, 'b', 'x') AS STRING)", "string:'{1, x}'"},
	{"CAST(map('k', array(1, 2)) AS STRING)", "string:'{k -> [1, 2]}'"},
	{"CAST(array(DATE '2024-02-29') AS STRING)", "string:'[2024-02-29]'"},
	{"CAST(array(1) AS BIGINT)", "DATATYPE_MISMATCH"},
	// casts to the narrower integer types check their range
	{"CAST(128 AS TINYINT)", "CAST_OVERFLOW"}, {"CAST(127 AS TINYINT)", "tinyint:127"}, {"CAST(-128 AS BYTE)", "tinyint:-128"},
	{"CAST(1.5e10 AS INT)", "CAST_OVERFLOW"}, {"TRY_CAST(1.5e10 AS INT)", "int:NULL"}, {"CAST('40000' AS SMALLINT)", "CAST_INVALID_INPUT"},
	{"CAST(big AS INT)", "CAST_OVERFLOW"}, {"CAST(i AS INT)", "int:5"}, {"CAST(n AS INT)", "int:NULL"},
	{"CAST(2147483647.9 AS INT)", "int:2147483647"}, {"CAST(big AS BIGINT)", "bigint:9223372036854775807"},
	// casts between arrays, maps and structs, element by element
	{"CAST(array('1', '2', NULL) AS ARRAY<BIGINT>)", "array<bigint>:[1, 2, NULL]"},
	{"CAST(array('1', 'x') AS ARRAY<INT>)", "CAST_INVALID_INPUT"},
	{"TRY_CAST(array('1', 'x') AS ARRAY<INT>)", "array<int>:NULL"},
	{"CAST(map('a', '1.5') AS MAP<STRING, DOUBLE>)", "map<string, double>:{a -> 1.5}"},
	{"CAST(named_struct('x', '7', 'y', 1) AS STRUCT<a: BIGINT, b: STRING>)", "struct<a: bigint, b: string>:{7, 1}"},
	{"CAST(named_struct('x', 1) AS STRUCT<a: BIGINT, b: STRING>)", "DATATYPE_MISMATCH"},
	{"CAST(NULL AS ARRAY<BIGINT>)", "array<bigint>:NULL"},
}

func TestOperators(t *testing.T) {
	for _, tc := range opCases {
		got, err := evalOne(t, tc.src)
		if err != nil {
			got = string(domain.CodeOf(err))
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s", tc.src, got, tc.want)
		}
	}
}

func TestEvalAtSetsNow(t *testing.T) {
	e, err := syntax.ParseExpr("now", "current_timestamp()")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(e, domain.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{time.Date(2024, 2, 29, 1, 2, 3, 0, time.UTC), time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)} {
		col, err := c.EvalAt(domain.NoColumns(1), at)
		if err != nil {
			t.Fatal(err)
		}
		if got := col.Value(0).AsTime(); !got.Equal(at) {
			t.Errorf("current_timestamp() at %s gave %s", at, got)
		}
	}
}
