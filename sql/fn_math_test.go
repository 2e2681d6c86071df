package sql

import (
	"github.com/sluicehq/sluice/sql/syntax"
	"testing"
)

var mathFnCases = []struct{ src, want string }{
	// nvl2, greatest, least, nullifzero, zeroifnull
	{"nvl2(NULL, 2, 1)", "int:1"}, {"nvl2(i, 2, 1)", "int:2"}, {"nvl2(n, 'a', 'b')", "string:'b'"},
	{"nvl2(s, d, i)", "double:2.5"}, {"nvl2(NULL, NULL, NULL)", "null:NULL"}, {"nvl2(1, 2)", "WRONG_NUM_ARGS"},
	{"nvl2(z, 1, 1 / z)", "double:1.0"}, {"nvl2(n, 1 / z, 0)", "double:0.0"},
	{"greatest(10, 9, 2, 4, 3)", "int:10"}, {"least(10, 9, 2, 4, 3)", "int:2"},
	{"greatest(n, 1, NULL)", "bigint:1"}, {"least(n, NULL)", "bigint:NULL"}, {"greatest(NULL, NULL)", "null:NULL"},
	{"greatest(i, d)", "double:5.0"}, {"least(i, d)", "double:2.5"}, {"greatest('a', 'b', s)", "string:'b'"},
	{"least('a', 'b', s)", "string:'Spark SQL'"}, {"greatest(dt, DATE '2020-01-01')", "date:2024-02-29"},
	{"greatest(1, CAST('NaN' AS DOUBLE))", "double:NaN"}, {"least(1, CAST('NaN' AS DOUBLE))", "double:1.0"},
	{"greatest(b, FALSE)", "boolean:true"}, {"least(b, FALSE)", "boolean:false"}, {"greatest(1)", "WRONG_NUM_ARGS"},
	{"greatest(1, TRUE)", "DATATYPE_MISMATCH"}, {"greatest(u, e)", "string:'Ärger über Ĳ'"}, {"least(u, e)", "string:''"},
	{"nullifzero(0)", "int:NULL"}, {"nullifzero(2)", "int:2"}, {"nullifzero(z)", "bigint:NULL"}, {"nullifzero(0.0)", "double:NULL"},
	{"nullifzero(n)", "bigint:NULL"}, {"nullifzero(NULL)", "bigint:NULL"}, {"nullifzero(s)", "CAST_INVALID_INPUT"},
	{"zeroifnull(NULL)", "bigint:0"}, {"zeroifnull(2)", "int:2"}, {"zeroifnull(n)", "bigint:0"}, {"zeroifnull(d)", "double:2.5"},
	{"zeroifnull(b)", "DATATYPE_MISMATCH"},
	// try_ arithmetic
	{"try_add(1, 2)", "int:3"}, {"try_add(big, 1)", "bigint:NULL"}, {"try_add(n, 1)", "bigint:NULL"}, {"try_add(d, 1)", "double:3.5"},
	{"try_add(-big - 1, -1)", "bigint:NULL"}, {"try_add(b, 1)", "DATATYPE_MISMATCH"},
	{"try_subtract(2, 1)", "int:1"}, {"try_subtract(-big - 1, 1)", "bigint:NULL"}, {"try_subtract(1, NULL)", "int:NULL"},
	{"try_multiply(2, 3)", "int:6"}, {"try_multiply(-2147483648, 10)", "int:NULL"}, {"try_multiply(-2147483648L, 10)", "bigint:-21474836480"}, {"try_multiply(big, 2)", "bigint:NULL"},
	{"try_multiply(-big - 1, -1)", "bigint:NULL"}, {"try_multiply(d, 2)", "double:5.0"},
	{"try_divide(3, 2)", "double:1.5"}, {"try_divide(2, 0)", "double:NULL"}, {"try_divide(1, 0.0)", "decimal(8,6):NULL"},
	{"try_divide(n, 0)", "double:NULL"}, {"try_divide(i, z)", "double:NULL"}, {"try_divide(i, '2')", "double:2.5"},
	{"try_mod(3, 2)", "int:1"}, {"try_mod(2, 0)", "int:NULL"}, {"try_mod(d, 0)", "double:NULL"}, {"try_mod(-big - 1, -1)", "bigint:0"},
	{"try_mod(-7, 3)", "int:-1"}, {"try_add('a', 1)", "CAST_INVALID_INPUT"},
	// try_ arithmetic of dates, timestamps and intervals (Spark's examples, then overflows)
	{"try_add(date'2021-01-01', 1)", "date:2021-01-02"}, {"try_add(date'2021-01-01', interval 1 year)", "date:2022-01-01"},
	{"try_add(timestamp'2021-01-01 00:00:00', interval 1 day)", "timestamp:2021-01-02T00:00:00Z"},
	{"try_add(interval 1 year, interval 2 year)", "interval year to month:INTERVAL '3-0' YEAR TO MONTH"},
	{"try_subtract(date'2021-01-02', 1)", "date:2021-01-01"}, {"try_subtract(date'2021-01-01', interval 1 year)", "date:2020-01-01"},
	{"try_subtract(timestamp'2021-01-02 00:00:00', interval 1 day)", "timestamp:2021-01-01T00:00:00Z"},
	{"try_multiply(interval 2 year, 3)", "interval year to month:INTERVAL '6-0' YEAR TO MONTH"},
	{"try_multiply(interval 178956970 years, 2)", "interval year to month:NULL"},
	{"try_divide(interval 2 month, 2)", "interval year to month:INTERVAL '0-1' YEAR TO MONTH"},
	{"try_divide(interval 1 day, 0)", "interval day to second:NULL"}, {"try_add(dt, n)", "date:NULL"},
	{"try_add(timestamp'9999-12-31 00:00:00', interval 106751991 day)", "timestamp:NULL"},
	{"try_add(dt, ts)", "DATATYPE_MISMATCH"},
	// mod, pmod
	{"mod(2, 1.8)", "decimal(2,1):0.2"}, {"mod(2D, 1.8D)", "double:0.19999999999999996"}, {"mod(7, 3)", "int:1"}, {"mod(-7, 3)", "int:-1"}, {"mod(i, 0)", "DIVIDE_BY_ZERO"},
	{"mod(n, 0)", "bigint:NULL"}, {"pmod(10, 3)", "int:1"}, {"pmod(-10, 3)", "int:2"}, {"pmod(10, -3)", "int:1"},
	{"pmod(-10, -3)", "int:-1"}, {"pmod(-7.5, 2)", "decimal(2,1):0.5"}, {"pmod(-7.5D, 2)", "double:0.5"}, {"pmod(-7.5, 0)", "DIVIDE_BY_ZERO"}, {"pmod(i, 0)", "DIVIDE_BY_ZERO"}, {"pmod(n, 0)", "bigint:NULL"},
	{"pmod(-big - 1, -1)", "bigint:0"}, {"pmod(-big - 1, big)", "bigint:9223372036854775806"}, {"pmod(d, 0.0)", "DIVIDE_BY_ZERO"},
	// pow, sqrt, exp, logarithms
	{"pow(2, 3)", "double:8.0"}, {"power(2, 3)", "double:8.0"}, {"pow(2, -1)", "double:0.5"}, {"pow(-1, 0.5)", "double:NaN"},
	{"pow(n, 2)", "double:NULL"}, {"pow(2, NULL)", "double:NULL"}, {"pow('2', 2)", "double:4.0"}, {"pow(b, 2)", "DATATYPE_MISMATCH"},
	{"sqrt(4)", "double:2.0"}, {"sqrt(-1)", "double:NaN"}, {"sqrt(n)", "double:NULL"}, {"sqrt(NULL)", "double:NULL"},
	{"exp(0)", "double:1.0"}, {"exp(1)", "double:2.718281828459045"}, {"exp(1000)", "double:Infinity"},
	{"ln(1)", "double:0.0"}, {"ln(0)", "double:NULL"}, {"ln(-1)", "double:NULL"}, {"ln(e())", "double:1.0"},
	{"log(10, 100)", "double:2.0"}, {"log(1)", "double:0.0"}, {"log(0)", "double:NULL"}, {"log(2, 0)", "double:NULL"},
	{"log(0, 2)", "double:NULL"}, {"log(-2, 8)", "double:NULL"}, {"log(n, 2)", "double:NULL"}, {"log(1, 2)", "double:Infinity"},
	{"log10(10)", "double:1.0"}, {"log10(0)", "double:NULL"}, {"log2(2)", "double:1.0"}, {"log2(-8)", "double:NULL"},
	{"log1p(0)", "double:0.0"}, {"log1p(-1)", "double:NULL"}, {"expm1(0)", "double:0.0"}, {"cbrt(27.0)", "double:3.0"},
	{"sign(40)", "double:1.0"}, {"signum(-4.5)", "double:-1.0"}, {"sign(0)", "double:0.0"}, {"sign(n)", "double:NULL"},
	{"sign(CAST('NaN' AS DOUBLE))", "double:NaN"}, {"sin(0)", "double:0.0"}, {"cos(0)", "double:1.0"}, {"acos(2)", "double:NaN"},
	{"atan2(0, 0)", "double:0.0"}, {"degrees(pi())", "double:180.0"}, {"radians(180)", "double:3.141592653589793"},
	// bround
	{"bround(2.5, 0)", "decimal(2,0):2"}, {"bround(25, -1)", "bigint:20"}, {"bround(3.5)", "decimal(2,0):4"}, {"bround(-2.5)", "decimal(2,0):-2"},
	{"bround(2.675, 2)", "decimal(4,2):2.68"}, {"bround(2.665, 2)", "decimal(4,2):2.66"}, {"bround(35, -1)", "bigint:40"}, {"bround(-35, -1)", "bigint:-40"},
	{"bround(-25, -1)", "bigint:-20"}, {"bround(26, -1)", "bigint:30"}, {"bround(i)", "bigint:5"}, {"bround(n, 1)", "bigint:NULL"},
	{"bround(0.125, 2)", "decimal(3,2):0.12"}, {"bround(0.135, 2)", "decimal(3,2):0.14"}, {"bround(1.5e-10, 3)", "double:0.0"},
	{"bround(big, -1)", "ARITHMETIC_OVERFLOW"}, {"bround(d, i)", "DATATYPE_MISMATCH"}, {"bround(12345.0, -2)", "decimal(6,0):12300"},
	// constants and rand
	{"pi()", "double:3.141592653589793"}, {"e()", "double:2.718281828459045"}, {"pi(1)", "WRONG_NUM_ARGS"},
	{"rand(0) >= 0 AND rand(0) < 1", "boolean:true"}, {"rand() < 1", "boolean:true"}, {"random(NULL) < 1", "boolean:true"},
	{"rand(i)", "DATATYPE_MISMATCH"}, {"rand(0) = rand(0)", "boolean:true"},
}

func TestMathFunctions(t *testing.T) { checkEvalCases(t, mathFnCases) }

func TestMathFunctionsRows(t *testing.T) {
	checkRowsMatch(t, []string{
		"nvl2(n, i, z)", "nvl2(ns, 1 / z, 0)", "greatest(i, n, z)", "least(i, n, z, big)", "greatest(s, ns, u)",
		"least(d, i)", "greatest(dt, ts)", "nullifzero(z)", "nullifzero(i)", "zeroifnull(n)", "zeroifnull(d)",
		"try_add(i, big)", "try_subtract(big, n)", "try_multiply(big, z)", "try_divide(i, z)", "try_mod(big, z)",
		"try_mod(i, n)", "mod(i, 7)", "pmod(big, 7)", "pow(d, i)", "sqrt(d)", "ln(z)", "log(i, d)", "log10(i)",
		"sign(big)", "bround(d, 1)", "bround(big, -2)", "exp(d)", "try_add(dt, n)", "try_add(ts, interval 1 month)",
		"try_multiply(interval 1 day, big)",
	})
}

// TestRandSeeded: a seed fixes the sequence of each batch.
func TestRandSeeded(t *testing.T) {
	e, _ := syntax.ParseExpr("t", "rand(42)")
	c, err := Compile(e, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	b := fuzzBatch(t)
	x, _ := c.Eval(b)
	y, _ := c.Eval(b)
	for i := range x.Floats {
		if x.Floats[i] != y.Floats[i] || x.Floats[i] < 0 || x.Floats[i] >= 1 {
			t.Fatalf("row %d: %v then %v", i, x.Floats[i], y.Floats[i])
		}
	}
	if x.Floats[0] == x.Floats[1] {
		t.Errorf("rows 0 and 1 got the same value %v", x.Floats[0])
	}
}
