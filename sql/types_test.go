package sql

import "testing"

// intCases are Spark 4's integer and float types (ANSI on): literal types,
// arithmetic at the operands' width, overflow where the type's range ends,
// casts held to the range, and floats rounded to floats.
var intCases = []struct{ src, want string }{
	// literals
	{"1", "int:1"}, {"1L", "bigint:1"}, {"1S", "smallint:1"}, {"1Y", "tinyint:1"},
	{"2147483647", "int:2147483647"}, {"2147483648", "bigint:2147483648"}, {"-2147483648", "int:-2147483648"},
	{"-9223372036854775808L", "bigint:-9223372036854775808"}, {"9223372036854775808", "decimal(19,0):9223372036854775808"},
	{"128Y", "INVALID_NUMERIC_LITERAL_RANGE"}, {"32768S", "INVALID_NUMERIC_LITERAL_RANGE"}, {"-128Y", "tinyint:-128"},
	{"1.5F", "float:1.5"}, {"typeof(1.1F)", "string:'float'"}, {"CAST(1.1F AS STRING)", "string:'1.1'"},
	// arithmetic at the wider width, overflowing at its range
	{"typeof(1 + 1)", "string:'int'"}, {"typeof(1 + 1L)", "string:'bigint'"}, {"typeof(1Y + 1S)", "string:'smallint'"},
	{"2147483647 + 1", "ARITHMETIC_OVERFLOW"}, {"2147483647L + 1", "bigint:2147483648"}, {"try_add(2147483647, 1)", "int:NULL"},
	{"-2147483648 - 1", "ARITHMETIC_OVERFLOW"}, {"65536 * 65536", "ARITHMETIC_OVERFLOW"}, {"65536L * 65536", "bigint:4294967296"},
	{"-(-2147483648)", "ARITHMETIC_OVERFLOW"}, {"abs(-128Y)", "ARITHMETIC_OVERFLOW"}, {"abs(-2147483648)", "ARITHMETIC_OVERFLOW"},
	{"abs(-2147483647)", "int:2147483647"}, {"127Y + 1Y", "ARITHMETIC_OVERFLOW"}, {"CAST(127 AS TINYINT) + 1", "int:128"},
	{"7 / 2", "double:3.5"}, {"7 div 2", "bigint:3"}, {"-7 % 3", "int:-1"}, {"typeof(1 + 1.5F)", "string:'float'"},
	{"typeof(1.5F + 1.5D)", "string:'double'"}, {"typeof(i + 1)", "string:'bigint'"}, {"typeof(1 + 2.5)", "string:'decimal(3,1)'"}, {"typeof(CAST(i AS INT) + 2.5)", "string:'decimal(12,1)'"},
	{"0.1F + 0.2F", "float:0.3"}, {"CAST(0.1F AS DOUBLE)", "double:0.10000000149011612"},
	// casts held to the type's range
	{"CAST(300 AS TINYINT)", "CAST_OVERFLOW"}, {"CAST(-129 AS TINYINT)", "CAST_OVERFLOW"}, {"CAST(32767 AS SMALLINT)", "smallint:32767"},
	{"CAST('2147483648' AS INT)", "CAST_INVALID_INPUT"}, {"try_cast('2147483648' AS INT)", "int:NULL"}, {"CAST(3.9D AS INT)", "int:3"},
	{"CAST(1e10D AS INT)", "CAST_OVERFLOW"}, {"CAST(1 AS BIGINT) + 2147483647", "bigint:2147483648"},
	{"CAST(1e40D AS FLOAT)", "float:Infinity"}, {"CAST(16777217 AS FLOAT)", "float:1.6777216E7"},
	{"CAST(CAST(1 AS INT) AS BIGINT)", "bigint:1"}, {"CAST(array(300) AS array<tinyint>)", "CAST_OVERFLOW"},
	{"try_cast(array(300) AS array<tinyint>)", "array<tinyint>:NULL"}, {"CAST(array(1.1D) AS array<float>)", "array<float>:[1.100000023841858]"}, {"CAST(1.5 AS SMALLINT)", "smallint:1"},
	// aggregates and combinations
	{"coalesce(1Y, 2)", "int:1"}, {"greatest(1, 2L)", "bigint:2"}, {"array(1Y, 2S)", "array<smallint>:[1, 2]"},
	{"1 = 1L", "boolean:true"}, {"CAST(1 AS INT) IN (1L, 2)", "boolean:true"},
}

func TestIntegerAndFloatTypes(t *testing.T) { checkEvalCases(t, intCases) }

// spark4ErrorCases are the errors and results of Spark 4 that real
// pipelines meet: a string beyond INT is malformed input naming the type,
// constant patterns fail when a row meets them, optional sections in
// datetime patterns, numeric casts to and from timestamps.
var spark4ErrorCases = []struct{ src, want string }{
	{"CAST('2147483648' AS INT)", "CAST_INVALID_INPUT"}, {"CAST('99999999999999999999' AS BIGINT)", "CAST_INVALID_INPUT"},
	{"regexp_like('abc', '(?z)a')", "INVALID_PARAMETER_VALUE.PATTERN"}, {"regexp_like('abc', '(?d)a')", "UNSUPPORTED_REGEX"},
	{"regexp_like(ns, '(')", "boolean:NULL"}, {"regexp_extract(ns, '(', 1)", "string:NULL"},
	{"regexp_extract('abc', '(', 1)", "INVALID_PARAMETER_VALUE.PATTERN"},
	{"make_timestamp(2024, 1, 1, 0, 0, 60.5)", "INVALID_FRACTION_OF_SECOND"},
	{"make_timestamp(2024, 1, 1, 0, 0, 60)", "timestamp:2024-01-01T00:01:00Z"},
	{"make_timestamp(2024, 1, 1, 0, 0, 61)", "DATETIME_FIELD_OUT_OF_BOUNDS"},
	{"regexp_substr('abc', 'x*')", "string:NULL"}, {"regexp_substr('abc', 'b+')", "string:'b'"},
	{"CAST('10e400' AS DOUBLE)", "double:Infinity"}, {"CAST('-10e400' AS DOUBLE)", "double:-Infinity"},
	{"CAST('1e-400' AS DOUBLE)", "double:0.0"},
	{"CAST(1 AS TIMESTAMP)", "timestamp:1970-01-01T00:00:01Z"}, {"CAST(1.5 AS TIMESTAMP)", "timestamp:1970-01-01T00:00:01.5Z"},
	{"CAST(-1.5D AS TIMESTAMP)", "timestamp:1969-12-31T23:59:58.5Z"}, {"CAST(big AS TIMESTAMP)", "CAST_OVERFLOW"},
	{"CAST(TIMESTAMP'1970-01-01 00:00:01.5' AS BIGINT)", "bigint:1"}, {"CAST(TIMESTAMP'1969-12-31 23:59:59.5' AS BIGINT)", "bigint:-1"},
	{"CAST(TIMESTAMP'1970-01-01 00:00:01.5' AS DOUBLE)", "double:1.5"},
	{"to_timestamp('2024-01-02', 'yyyy-MM-dd[ HH:mm:ss]')", "timestamp:2024-01-02T00:00:00Z"},
	{"to_timestamp('2024-01-02 03:04:05', 'yyyy-MM-dd[ HH:mm:ss]')", "timestamp:2024-01-02T03:04:05Z"},
	{"to_timestamp('2024-01-02 03:04', 'yyyy-MM-dd[ HH:mm[:ss]]')", "timestamp:2024-01-02T03:04:00Z"},
	{"to_timestamp('2024-01-02 03', 'yyyy-MM-dd[ HH:mm]')", "CANNOT_PARSE_TIMESTAMP"},
	{"date_format(TIMESTAMP'2024-01-02 03:04:05', 'yyyy[-MM]')", "string:'2024-01'"},
	{"date_format(TIMESTAMP'2024-01-02 03:04:05', 'yyyy[-MM')", "INVALID_DATETIME_PATTERN"},
	{"date_format(TIMESTAMP'2024-01-02 03:04:05', 'yyyy]')", "INVALID_DATETIME_PATTERN"},
}

func TestSpark4Errors(t *testing.T) { checkEvalCases(t, spark4ErrorCases) }

// ntzCases are TIMESTAMP_NTZ's: a wall-clock time that no session time zone
// moves, converted to and from TIMESTAMP through the session's zone.
var ntzCases = []struct{ src, want string }{
	{"TIMESTAMP_NTZ'2024-01-02 03:04:05'", "timestamp_ntz:2024-01-02T03:04:05"},
	{"typeof(TIMESTAMP_NTZ'2024-01-02 03:04:05')", "string:'timestamp_ntz'"},
	{"CAST('2024-01-02 03:04:05' AS TIMESTAMP_NTZ)", "timestamp_ntz:2024-01-02T03:04:05"},
	{"CAST(TIMESTAMP_NTZ'2024-01-02 03:04:05' AS STRING)", "string:'2024-01-02 03:04:05'"},
	{"CAST(TIMESTAMP_NTZ'2024-01-02 03:04:05' AS DATE)", "date:2024-01-02"},
	{"CAST(DATE'2024-01-02' AS TIMESTAMP_NTZ)", "timestamp_ntz:2024-01-02T00:00:00"},
	{"hour(TIMESTAMP_NTZ'2024-01-02 03:04:05')", "bigint:3"},
	{"date_format(TIMESTAMP_NTZ'2024-01-02 03:04:05', 'HH:mm')", "string:'03:04'"},
	{"to_timestamp_ntz('2024-01-02 03:04', 'yyyy-MM-dd HH:mm')", "timestamp_ntz:2024-01-02T03:04:00"},
	{"to_timestamp_ntz('2024-01-02 03:04:05')", "timestamp_ntz:2024-01-02T03:04:05"},
	{"to_timestamp_ltz('2024-01-02 03:04:05')", "timestamp:2024-01-02T03:04:05Z"},
	{"make_timestamp_ntz(2024, 1, 2, 3, 4, 5.5)", "timestamp_ntz:2024-01-02T03:04:05.5"},
	{"make_timestamp_ltz(2024, 1, 2, 3, 4, 5, 'Europe/Paris')", "timestamp:2024-01-02T02:04:05Z"},
	{"convert_timezone('UTC', 'Europe/Paris', TIMESTAMP_NTZ'2024-01-02 03:04:05')", "timestamp_ntz:2024-01-02T04:04:05"},
	{"convert_timezone('America/New_York', TIMESTAMP_NTZ'2024-07-02 12:00:00')", "timestamp_ntz:2024-07-02T08:00:00"},
	{"convert_timezone('Nowhere/City', TIMESTAMP_NTZ'2024-07-02 12:00:00')", "INVALID_CONF_VALUE.TIME_ZONE"},
	{"TIMESTAMP_NTZ'2024-01-02 03:04:05' < TIMESTAMP'2024-01-02 03:04:06'", "boolean:true"},
	{"typeof(coalesce(TIMESTAMP_NTZ'2024-01-02 03:04:05', DATE'2024-01-01'))", "string:'timestamp_ntz'"},
	{"typeof(coalesce(TIMESTAMP_NTZ'2024-01-02 03:04:05', TIMESTAMP'2024-01-01 00:00:00'))", "string:'timestamp'"},
	{"TIMESTAMP_NTZ'2024-01-02 03:04:05' + INTERVAL '1' HOUR", "timestamp_ntz:2024-01-02T04:04:05"},
	{"TIMESTAMP_NTZ'2024-01-31 03:04:05' + INTERVAL '1' MONTH", "timestamp_ntz:2024-02-29T03:04:05"},
	{"typeof(localtimestamp())", "string:'timestamp_ntz'"},
	{"try_make_interval(100, 11)", "interval year to month:INTERVAL '100-11' YEAR TO MONTH"},
	{"try_make_interval(0, 0, 0, 0, 0, 0, 1e30D)", "interval day to second:NULL"},
	{"make_interval(0, 0, 0, 0, 0, 0, 1e30D)", "ARITHMETIC_OVERFLOW"},
	{"try_make_timestamp(2024, 2, 30, 0, 0, 0)", "timestamp:NULL"}, {"try_make_timestamp(2024, 2, 3, 0, 0, 60.5)", "timestamp:NULL"},
	{"try_make_timestamp(2024, 2, 3, 4, 5, 6)", "timestamp:2024-02-03T04:05:06Z"},
	{"try_make_timestamp_ntz(2024, 13, 3, 4, 5, 6)", "timestamp_ntz:NULL"}, {"try_make_timestamp_ntz(2024, 2, 3, 4, 5, 6)", "timestamp_ntz:2024-02-03T04:05:06"},
	{"try_make_timestamp_ltz(2024, 2, 3, 4, 5, 6, 'Europe/Paris')", "timestamp:2024-02-03T03:05:06Z"},
	{"to_json(named_struct('t', TIMESTAMP_NTZ'2024-01-02 03:04:05'))", "string:'{\"t\":\"2024-01-02T03:04:05.000\"}'"},
}

func TestTimestampNTZ(t *testing.T) { checkEvalCases(t, ntzCases) }

// variantCases are VARIANT's: canonical JSON, paths, casts by Spark's
// variant rules, and its functions.
var variantCases = []struct{ src, want string }{
	{`parse_json('{"b": 1, "a": [1.50, "x", null, 1e3]}')`, `variant:'{"a":[1.50,"x",null,1e3],"b":1}'`},
	{`typeof(parse_json('1'))`, "string:'variant'"},
	{`parse_json('{"a": 1, "a": 2}')`, "VARIANT_DUPLICATE_KEY"}, {`parse_json('{bad')`, "MALFORMED_RECORD_IN_PARSING"},
	{`try_parse_json('{bad')`, "variant:NULL"}, {"parse_json(ns)", "variant:NULL"},
	{`variant_get(parse_json('{"a": {"b": 5}}'), '$.a.b', 'int')`, "int:5"},
	{`variant_get(parse_json('{"a": {"b": 5}}'), '$.a')`, `variant:'{"b":5}'`},
	{`variant_get(parse_json('{"a": "x"}'), '$.a', 'int')`, "INVALID_VARIANT_CAST"},
	{`try_variant_get(parse_json('{"a": "x"}'), '$.a', 'int')`, "int:NULL"},
	{`variant_get(parse_json('{"a": "12"}'), '$.a', 'int')`, "int:12"},
	{`variant_get(parse_json('{"a": 1.5}'), '$.a', 'decimal(5,2)')`, "decimal(5,2):1.50"},
	{`variant_get(parse_json('{"a": 1.5}'), '$.missing', 'int')`, "int:NULL"},
	{`variant_get(parse_json('[1, 2]'), '$[1]', 'bigint')`, "bigint:2"},
	{`variant_get(parse_json('{"a": [1, 2]}'), '$.a', 'array<int>')`, "array<int>:[1, 2]"},
	{`variant_get(parse_json('{"a": {"x": 1}}'), '$.a', 'string')`, `string:'{"x":1}'`},
	{`variant_get(parse_json('{"a": 1}'), 'a', 'int')`, "INVALID_VARIANT_GET_PATH"},
	{`parse_json('{"a": {"b": 5}}'):a.b`, "variant:'5'"}, {`CAST(parse_json('{"a": {"b": 5}}'):a.b AS INT)`, "int:5"},
	{`is_variant_null(parse_json('null'))`, "boolean:true"}, {`is_variant_null(parse_json('1'))`, "boolean:false"},
	{`is_variant_null(CAST(NULL AS VARIANT))`, "boolean:false"},
	{`schema_of_variant(parse_json('{"b": 1, "a": [1.50, "x", null], "c": 1e3, "d": true, "e": 1.25}'))`,
		"string:'OBJECT<a: ARRAY<VARIANT>, b: BIGINT, c: DOUBLE, d: BOOLEAN, e: DECIMAL(3,2)>'"},
	{`to_variant_object(named_struct('a', 1, 'b', array(1.5)))`, `variant:'{"a":1,"b":[1.5]}'`},
	{`CAST(1.5 AS VARIANT)`, "variant:'1.5'"}, {`CAST('x' AS VARIANT)`, `variant:'"x"'`},
	{`to_json(parse_json('{"b":1,"a":2}'))`, `string:'{"a":2,"b":1}'`},
	{`parse_json('1') = parse_json('1')`, "DATATYPE_MISMATCH"},
	{`CAST(parse_json('"2024-01-02"') AS DATE)`, "date:2024-01-02"}, {`CAST(parse_json('true') AS BOOLEAN)`, "boolean:true"},
	{`CAST(parse_json('[1]') AS INT)`, "INVALID_VARIANT_CAST"}, {`try_cast(parse_json('[1]') AS INT)`, "int:NULL"},
}

func TestVariant(t *testing.T) { checkEvalCases(t, variantCases) }
