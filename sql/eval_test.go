package sql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// testSchema and testRow are the input of the table-driven expression tests.
var testSchema = domain.NewSchema(
	domain.Field{Name: "i", Type: domain.TypeInt64, Nullable: true},
	domain.Field{Name: "n", Type: domain.TypeInt64, Nullable: true},
	domain.Field{Name: "d", Type: domain.TypeFloat64, Nullable: true},
	domain.Field{Name: "s", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "e", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "u", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "b", Type: domain.TypeBool, Nullable: true},
	domain.Field{Name: "nb", Type: domain.TypeBool, Nullable: true},
	domain.Field{Name: "ns", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "dt", Type: domain.TypeDate, Nullable: true},
	domain.Field{Name: "ts", Type: domain.TypeTimestamp, Nullable: true},
	domain.Field{Name: "st", Type: domain.StructOf(
		domain.Field{Name: "x", Type: domain.TypeInt64, Nullable: true},
		domain.Field{Name: "y", Type: domain.TypeString, Nullable: true}), Nullable: true},
	domain.Field{Name: "big", Type: domain.TypeInt64, Nullable: true},
	domain.Field{Name: "z", Type: domain.TypeInt64, Nullable: true},
)

func testBatch(t testing.TB) *domain.Batch {
	b := domain.NewBatch(testSchema, 1)
	err := b.AppendRow(domain.Int(5), domain.Null(), domain.Float(2.5), domain.String("Spark SQL"), domain.String(""),
		domain.String("Ärger über Ĳ"), domain.Bool(true), domain.Null(), domain.Null(),
		domain.Date(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)),
		domain.Timestamp(time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)),
		domain.Struct(domain.Int(7), domain.String("why")), domain.Int(9223372036854775807), domain.Int(0))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// evalOne compiles and evaluates src on the test row and renders the result
// as "type:value", or returns the error.
func evalOne(t testing.TB, src string) (string, error) {
	e, err := syntax.ParseExpr("test", src)
	if err != nil {
		t.Fatalf("%s: parse: %v", src, err)
	}
	c, err := Compile(e, testSchema)
	if err != nil {
		return "", err
	}
	col, err := c.Eval(testBatch(t))
	if err != nil {
		return "", err
	}
	if col.Len() != 1 {
		t.Fatalf("%s: %d rows", src, col.Len())
	}
	if col.Kind != c.Type().Kind {
		t.Fatalf("%s: column kind %s, compiled type %s", src, col.Kind, c.Type())
	}
	v := col.Value(0)
	s := v.String()
	switch v.Kind() {
	case domain.KindFloat64:
		s = domain.FormatNumber(v.AsFloat(), c.Type())
	case domain.KindString:
		s = "'" + s + "'"
	case domain.KindTimestamp:
		if c.Type().NTZ {
			s = strings.TrimSuffix(s, "Z") // a wall-clock time
		}
	}
	return c.Type().String() + ":" + s, nil
}

// evalCases are expressions over the test row with the expected
// "type:value", or the expected error code. Spark's documented examples come
// first in each group, then the edge cases.
var evalCases = []struct{ src, want string }{
	// literals and columns
	{"1", "int:1"}, {"1.5", "decimal(2,1):1.5"}, {"'x'", "string:'x'"}, {"TRUE", "boolean:true"},
	{"NULL", "null:NULL"}, {"DATE '2024-02-29'", "date:2024-02-29"},
	{"TIMESTAMP '2024-02-29 01:02:03.5'", "timestamp:2024-02-29T01:02:03.5Z"},
	{"DATE '2023-02-29'", "CAST_INVALID_INPUT"},
	{"I", "bigint:5"}, {"`s`", "string:'Spark SQL'"}, {"st.x", "bigint:7"}, {"ST.Y", "string:'why'"},
	{"st.q", "UNRESOLVED_COLUMN"}, {"idx", "UNRESOLVED_COLUMN"}, {"s.x", "DATATYPE_MISMATCH"},
	// arithmetic
	{"i + 1", "bigint:6"}, {"i + d", "double:7.5"}, {"i - 7", "bigint:-2"}, {"i * 3", "bigint:15"},
	{"3 / 2", "double:1.5"}, {"i / 0", "DIVIDE_BY_ZERO"}, {"d / 0", "DIVIDE_BY_ZERO"}, {"i % 3", "bigint:2"},
	{"-7 % 3", "int:-1"}, {"i % 0", "DIVIDE_BY_ZERO"}, {"d % 2", "double:0.5"},
	{"big + 1", "ARITHMETIC_OVERFLOW"}, {"big * 2", "ARITHMETIC_OVERFLOW"}, {"-big - 2", "ARITHMETIC_OVERFLOW"},
	{"-big - 1", "bigint:-9223372036854775808"}, {"-(-big - 1)", "ARITHMETIC_OVERFLOW"},
	{"n + 1", "bigint:NULL"}, {"1 + NULL", "int:NULL"}, {"n / 0", "double:NULL"}, {"-i", "bigint:-5"},
	{"'1' + 1", "int:2"}, {"'a' + 1", "CAST_INVALID_INPUT"}, {"b + 1", "DATATYPE_MISMATCH"},
	{"1e3 * 2", "double:2000.0"},
	// comparison
	{"i = 5", "boolean:true"}, {"i == 5", "boolean:true"}, {"i <> 5", "boolean:false"}, {"i != 4", "boolean:true"},
	{"i < d", "boolean:false"}, {"i >= 5.0", "boolean:true"}, {"s > 'Spark'", "boolean:true"},
	{"i = '5'", "boolean:true"}, {"i = 'x'", "CAST_INVALID_INPUT"}, {"dt = '2024-02-29'", "boolean:true"},
	{"dt < ts", "boolean:true"}, {"n = 1", "boolean:NULL"}, {"n = NULL", "boolean:NULL"},
	{"n <=> NULL", "boolean:true"}, {"i <=> n", "boolean:false"}, {"i <=> 5", "boolean:true"},
	{"b = 1", "DATATYPE_MISMATCH"}, {"e = ''", "boolean:true"},
	{"double('NaN') = double('NaN')", "boolean:true"}, // NaN equals NaN in SQL comparisons, as in Spark
	{"CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)", "boolean:true"},
	{"CAST('NaN' AS DOUBLE) > 1e308", "boolean:true"},
	// logic
	{"TRUE AND nb", "boolean:NULL"}, {"FALSE AND nb", "boolean:false"}, {"TRUE OR nb", "boolean:true"},
	{"FALSE OR nb", "boolean:NULL"}, {"NOT nb", "boolean:NULL"}, {"NOT b", "boolean:false"},
	{"nb AND NULL", "boolean:NULL"}, {"i AND TRUE", "DATATYPE_MISMATCH"},
	{"z <> 0 AND i / z > 1", "boolean:false"}, {"z = 0 OR i / z > 1", "boolean:true"},
	// IS
	{"n IS NULL", "boolean:true"}, {"i IS NOT NULL", "boolean:true"}, {"nb IS UNKNOWN", "boolean:true"},
	{"b IS TRUE", "boolean:true"}, {"nb IS NOT FALSE", "boolean:true"},
	{"n IS DISTINCT FROM NULL", "boolean:false"}, {"i IS DISTINCT FROM n", "boolean:true"},
	{"i IS NOT DISTINCT FROM 5", "boolean:true"},
	// IN
	{"i IN (1, 5)", "boolean:true"}, {"i IN (1, 2)", "boolean:false"}, {"i IN (1, NULL)", "boolean:NULL"},
	{"i IN (5, NULL)", "boolean:true"}, {"n IN (1)", "boolean:NULL"}, {"i NOT IN (1, 2)", "boolean:true"},
	{"i NOT IN (1, NULL)", "boolean:NULL"}, {"s IN ('a', 'Spark SQL')", "boolean:true"}, {"i IN (1.0, 5.0)", "boolean:true"},
	{"i IN (TRUE)", "DATATYPE_MISMATCH"},
	// BETWEEN
	{"i BETWEEN 1 AND 5", "boolean:true"}, {"i BETWEEN 6 AND 9", "boolean:false"}, {"i NOT BETWEEN 6 AND 9", "boolean:true"},
	{"n BETWEEN 1 AND 2", "boolean:NULL"}, {"i BETWEEN 6 AND n", "boolean:false"}, {"i BETWEEN 1 AND n", "boolean:NULL"},
	{"dt BETWEEN '2024-01-01' AND '2024-12-31'", "boolean:true"},
	// LIKE
	{"s LIKE 'Spark%'", "boolean:true"}, {"s LIKE '%SQL'", "boolean:true"}, {"s LIKE '%rk S%'", "boolean:true"},
	{"s LIKE 'Spark_SQL'", "boolean:true"}, {"s LIKE 'spark%'", "boolean:false"}, {"s ILIKE 'spark%'", "boolean:true"},
	{"s NOT LIKE 'x%'", "boolean:true"}, {"ns LIKE '%'", "boolean:NULL"}, {"s LIKE NULL", "boolean:NULL"},
	{"e LIKE ''", "boolean:true"}, {"e LIKE '%'", "boolean:true"}, {"e LIKE '_'", "boolean:false"},
	{`'%SystemDrive%\\Users\\John' LIKE '\\%SystemDrive\\%\\\\Users%'`, "boolean:true"},
	{`'a_b' LIKE 'a\\_b'`, "boolean:true"}, {`'axb' LIKE 'a\\_b'`, "boolean:false"},
	{`'a_b' LIKE 'a/_b' ESCAPE '/'`, "boolean:true"}, {`'a%b' LIKE 'a/%b' ESCAPE '/'`, "boolean:true"},
	{`'ab' LIKE 'a\\b'`, "INVALID_LIKE_PATTERN"}, {`'ab' LIKE 'ab\\'`, "INVALID_LIKE_PATTERN"},
	{`'a.b' LIKE 'a.b'`, "boolean:true"}, {`'axb' LIKE 'a.b'`, "boolean:false"}, {"'a\nb' LIKE 'a_b'", "boolean:true"},
	{"u LIKE 'Ä%Ĳ'", "boolean:true"}, {"u ILIKE 'ärger%'", "boolean:true"}, {"u LIKE '_rger%'", "boolean:true"},
	{"s LIKE s", "boolean:true"}, {"i LIKE '5'", "boolean:true"},
	// CASE
	{"CASE WHEN i > 3 THEN 'big' ELSE 'small' END", "string:'big'"},
	{"CASE WHEN i > 9 THEN 'big' END", "string:NULL"},
	{"CASE i WHEN 1 THEN 'one' WHEN 5 THEN 'five' ELSE 'other' END", "string:'five'"},
	{"CASE n WHEN 1 THEN 'one' ELSE 'other' END", "string:'other'"},
	{"CASE WHEN nb THEN 1 ELSE 2 END", "int:2"}, {"CASE WHEN b THEN 1 ELSE 2.5 END", "decimal(11,1):1.0"},
	{"CASE WHEN z = 0 THEN NULL ELSE i / z END", "double:NULL"},
	{"CASE WHEN b THEN 1 ELSE 'x' END", "string:'1'"}, {"CASE WHEN b THEN 1 ELSE TRUE END", "DATATYPE_MISMATCH"},
	{"CASE WHEN i THEN 1 END", "DATATYPE_MISMATCH"},
	// CAST
	{"CAST('12' AS BIGINT)", "bigint:12"}, {"CAST(' 12 ' AS INT)", "int:12"}, {"CAST('1.5' AS INT)", "CAST_INVALID_INPUT"},
	{"CAST('abc' AS INT)", "CAST_INVALID_INPUT"}, {"TRY_CAST('abc' AS INT)", "int:NULL"}, {"try_cast('7' AS BIGINT)", "bigint:7"},
	{"CAST('99999999999999999999' AS BIGINT)", "CAST_INVALID_INPUT"}, {"CAST(1e20 AS BIGINT)", "CAST_OVERFLOW"},
	{"TRY_CAST(1e20 AS BIGINT)", "bigint:NULL"}, {"CAST(-2.7 AS BIGINT)", "bigint:-2"},
	{"'3.5'::double", "double:3.5"}, {"CAST('1e3' AS DOUBLE)", "double:1000.0"}, {"CAST('Infinity' AS DOUBLE)", "double:Infinity"},
	{"CAST('x' AS DOUBLE)", "CAST_INVALID_INPUT"}, {"CAST(i AS STRING)", "string:'5'"}, {"CAST(d AS STRING)", "string:'2.5'"},
	{"CAST(1e7 AS STRING)", "string:'1.0E7'"}, {"CAST(0.0001 AS STRING)", "string:'0.0001'"}, {"CAST(100.0 AS STRING)", "string:'100.0'"},
	{"CAST(b AS STRING)", "string:'true'"}, {"CAST(dt AS STRING)", "string:'2024-02-29'"},
	{"CAST(ts AS STRING)", "string:'2024-02-29 13:14:15.123456'"}, {"CAST(TIMESTAMP '2024-01-01 00:00:00' AS STRING)", "string:'2024-01-01 00:00:00'"},
	{"CAST('yes' AS BOOLEAN)", "boolean:true"}, {"CAST('F' AS BOOLEAN)", "boolean:false"}, {"CAST('maybe' AS BOOLEAN)", "CAST_INVALID_INPUT"},
	{"CAST(0 AS BOOLEAN)", "boolean:false"}, {"CAST(b AS BIGINT)", "bigint:1"}, {"CAST(TRUE AS DOUBLE)", "double:1.0"},
	{"CAST('2024-02-29' AS DATE)", "date:2024-02-29"}, {"CAST('2023-02-29' AS DATE)", "CAST_INVALID_INPUT"},
	{"TRY_CAST('2023-02-29' AS DATE)", "date:NULL"}, {"CAST('2024-3' AS DATE)", "date:2024-03-01"},
	{"CAST('2024-02-29T10:00:00' AS DATE)", "date:2024-02-29"}, {"CAST(ts AS DATE)", "date:2024-02-29"},
	{"CAST(dt AS TIMESTAMP)", "timestamp:2024-02-29T00:00:00Z"}, {"CAST('2024-02-29 10:11:12' AS TIMESTAMP)", "timestamp:2024-02-29T10:11:12Z"},
	{"CAST('2024-02-29T10:11:12+01:00' AS TIMESTAMP)", "timestamp:2024-02-29T09:11:12Z"},
	{"CAST('nope' AS TIMESTAMP)", "CAST_INVALID_INPUT"}, {"CAST(NULL AS INT)", "int:NULL"}, {"CAST(ns AS INT)", "int:NULL"},
	{"CAST(dt AS BIGINT)", "DATATYPE_MISMATCH"}, {"CAST(i AS MAP<STRING, INT>)", "DATATYPE_MISMATCH"},
	{"CAST(e AS INT)", "CAST_INVALID_INPUT"}, {"TRY_CAST(e AS INT)", "int:NULL"},
	// conditional functions
	{"coalesce(NULL, 1, 2)", "int:1"}, {"coalesce(n, i)", "bigint:5"}, {"coalesce(n, NULL)", "bigint:NULL"},
	{"coalesce(NULL)", "null:NULL"}, {"coalesce(n, d)", "double:2.5"}, {"coalesce(i, 1 / z)", "double:5.0"},
	{"coalesce()", "WRONG_NUM_ARGS"}, {"nvl(NULL, 2)", "int:2"}, {"nvl(n, 'x')", "string:'x'"}, {"ifnull(ns, 'x')", "string:'x'"},
	{"nullif(2, 2)", "int:NULL"}, {"nullif(i, 2)", "bigint:5"}, {"nullif(n, 2)", "bigint:NULL"}, {"nullif(i, n)", "bigint:5"},
	{"if(1 < 2, 'a', 'b')", "string:'a'"}, {"if(nb, 'a', 'b')", "string:'b'"}, {"if(z = 0, 0, i / z)", "double:0.0"},
	{"if(i, 1, 2)", "DATATYPE_MISMATCH"}, {"if(b, 1)", "WRONG_NUM_ARGS"},
	{"iff(1 < 2, 'a', 'b')", "string:'a'"}, {"iff(nb, 'a', 'b')", "string:'b'"}, {"iff(b, i, n)", "bigint:5"},
	{"iff(i, 1, 2)", "DATATYPE_MISMATCH"}, {"iff(b, 1)", "WRONG_NUM_ARGS"},
	// string functions
	{"upper('SparkSql')", "string:'SPARKSQL'"}, {"lower('SparkSql')", "string:'sparksql'"}, {"upper(u)", "string:'ÄRGER ÜBER Ĳ'"},
	{"lower(u)", "string:'ärger über ĳ'"}, {"upper(ns)", "string:NULL"}, {"upper(e)", "string:''"}, {"ucase(i)", "string:'5'"},
	{"length('Spark SQL ')", "bigint:10"}, {"length(u)", "bigint:12"}, {"length(e)", "bigint:0"}, {"length(ns)", "bigint:NULL"},
	{"char_length('Spark SQL ')", "bigint:10"}, {"length(1, 2)", "WRONG_NUM_ARGS"},
	{"trim('    SparkSQL   ')", "string:'SparkSQL'"}, {"trim(BOTH FROM '    SparkSQL   ')", "string:'SparkSQL'"},
	{"trim(LEADING FROM '    SparkSQL   ')", "string:'SparkSQL   '"}, {"trim(TRAILING FROM '    SparkSQL   ')", "string:'    SparkSQL'"},
	{"trim('SL' FROM 'SSparkSQLS')", "string:'parkSQ'"}, {"trim(BOTH 'SL' FROM 'SSparkSQLS')", "string:'parkSQ'"},
	{"trim(LEADING 'SL' FROM 'SSparkSQLS')", "string:'parkSQLS'"}, {"trim(TRAILING 'SL' FROM 'SSparkSQLS')", "string:'SSparkSQ'"},
	{"trim('\tx\t')", "string:'\tx\t'"}, {"trim(ns)", "string:NULL"}, {"ltrim('  x ')", "string:'x '"}, {"rtrim('  x ')", "string:'  x'"},
	{"concat('Spark', 'SQL')", "string:'SparkSQL'"}, {"concat('a', ns)", "string:NULL"}, {"concat()", "string:''"},
	{"concat(e, 'x', i)", "string:'x5'"}, {"'a' || 'b'", "string:'ab'"}, {"concat(u, '!')", "string:'Ärger über Ĳ!'"},
	{"substring('Spark SQL', 5)", "string:'k SQL'"}, {"substring('Spark SQL', -3)", "string:'SQL'"},
	{"substring('Spark SQL', 5, 1)", "string:'k'"}, {"substr('Spark SQL', 5, 1)", "string:'k'"},
	{"substring('Spark SQL', 0, 2)", "string:'Sp'"}, {"substring('Spark SQL', 1, 0)", "string:''"},
	{"substring('Spark SQL', 20)", "string:''"}, {"substring('Spark SQL', -20, 3)", "string:''"},
	{"substring('Spark SQL', -10, 3)", "string:'Sp'"}, {"substring('Spark SQL', 2, -1)", "string:''"},
	{"substring(u, 7, 4)", "string:'über'"}, {"substring(u, -1)", "string:'Ĳ'"}, {"substring(ns, 1)", "string:NULL"},
	{"substring(s, n)", "string:NULL"}, {"substring(s, -big - 1, -big - 1)", "string:''"}, {"substring(s, 2, big)", "string:'park SQL'"}, {"substring(s, 1, n)", "string:NULL"}, {"substring(s, 1.5)", "DATATYPE_MISMATCH"},
	// math functions
	{"abs(-1)", "int:1"}, {"abs(-2.5)", "decimal(2,1):2.5"}, {"abs(n)", "bigint:NULL"}, {"abs(-big - 1)", "ARITHMETIC_OVERFLOW"},
	{"abs('x')", "CAST_INVALID_INPUT"}, {"abs(b)", "DATATYPE_MISMATCH"},
	{"round(2.5, 0)", "decimal(2,0):3"}, {"round(-2.5)", "decimal(2,0):-3"}, {"round(2.675, 2)", "decimal(4,2):2.68"},
	{"round(1.005, 2)", "decimal(4,2):1.01"}, {"round(123.456, -1)", "decimal(4,0):120"}, {"round(125, -1)", "bigint:130"},
	{"round(-125, -1)", "bigint:-130"}, {"round(25, -1)", "bigint:30"}, {"round(big, -1)", "ARITHMETIC_OVERFLOW"}, {"round(124, -1)", "bigint:120"}, {"round(i)", "bigint:5"}, {"round(n, 2)", "bigint:NULL"},
	{"round(0.0004, 3)", "decimal(4,3):0.000"}, {"round(9.995, 2)", "decimal(4,2):10.00"}, {"round(d, i)", "DATATYPE_MISMATCH"},
	{"floor(-0.1)", "decimal(1,0):-1"}, {"floor(5)", "int:5"}, {"floor(2.9)", "decimal(2,0):2"}, {"ceil(-0.1)", "decimal(1,0):0"},
	{"ceil(5)", "int:5"}, {"ceiling(2.1)", "decimal(2,0):3"}, {"floor(n)", "bigint:NULL"}, {"ceil(1e30)", "ARITHMETIC_OVERFLOW"},
	{"upper('straße')", "string:'STRASSE'"}, {"length('straße')", "bigint:6"}, {"length('😀x')", "bigint:2"},
	{"substring('😀ab', 2)", "string:'ab'"}, {"lower('ÀÉÎ')", "string:'àéî'"}, {"upper('ǆ')", "string:'Ǆ'"},
	{"CAST('NaN' AS DOUBLE) IN (CAST('NaN' AS DOUBLE))", "boolean:true"}, {"0.0 IN (-0.0)", "boolean:true"},
	{"s IN ('x', NULL)", "boolean:NULL"}, {"ns IN ('x')", "boolean:NULL"}, {"dt IN ('2024-02-29', '2024-03-01')", "boolean:true"},
	{"'a' = NULL", "boolean:NULL"}, {"NULL <=> NULL", "boolean:true"}, {"NULL + NULL", "bigint:NULL"},
	{"-NULL", "double:NULL"}, {"NOT NULL", "boolean:NULL"}, {"NULL AND FALSE", "boolean:false"},
	{"CASE WHEN NULL THEN 1 ELSE 2 END", "int:2"}, {"CASE NULL WHEN NULL THEN 1 ELSE 2 END", "int:2"},
	{"e || e", "string:''"}, {"substring(e, 1, 1)", "string:''"}, {"trim(e)", "string:''"}, {"e LIKE '%%'", "boolean:true"},
	{"CAST(e AS DOUBLE)", "CAST_INVALID_INPUT"}, {"CAST(e AS BOOLEAN)", "CAST_INVALID_INPUT"}, {"CAST(e AS DATE)", "CAST_INVALID_INPUT"},
	{"TRY_CAST(e AS TIMESTAMP)", "timestamp:NULL"},
	// errors
	{"nosuch(1)", "UNRESOLVED_ROUTINE"}, {"uper(s)", "UNRESOLVED_ROUTINE"},
	{"10 < i", "boolean:false"}, {"5 <= i", "boolean:true"}, {"5 >= i", "boolean:true"}, {"1 > n", "boolean:NULL"},
	{"abs(n + (-big - 1))", "bigint:NULL"},
}

func TestEval(t *testing.T) {
	for _, tc := range evalCases {
		got, err := evalOne(t, tc.src)
		if err != nil {
			code := domain.CodeOf(err)
			if string(code) != tc.want {
				t.Errorf("%s: error %v, want %s", tc.src, err, tc.want)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s", tc.src, got, tc.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		src, code, msg string
		col            int
	}{
		{"bigg + 1", "UNRESOLVED_COLUMN", "did you mean `big`", 1}, {"amount", "UNRESOLVED_COLUMN", "the columns are i, n", 1},
		{"1 + stt.x", "UNRESOLVED_COLUMN", "did you mean `st`", 5},
		{"st.yy", "UNRESOLVED_COLUMN", "did you mean `y`", 4},
		{"upperr(s)", "UNRESOLVED_ROUTINE", "did you mean `upper`", 1},
		{"i + b", "DATATYPE_MISMATCH", "boolean", 3},
		{"CAST('x' AS INT)", "CAST_INVALID_INPUT", "'x'", 1},
		{"i / z", "DIVIDE_BY_ZERO", "5.0 / 0.0", 3},
		{"big + i", "ARITHMETIC_OVERFLOW", "9223372036854775807 + 5", 5},
	} {
		_, err := evalOne(t, tc.src)
		var se *syntax.Error
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v is not a *sql.Error", tc.src, err)
			continue
		}
		if string(se.Code) != tc.code || !strings.Contains(se.Msg(), tc.msg) || se.Pos.Col != tc.col || se.Pos.Line != 1 {
			t.Errorf("%s: got %s %q at %s, want %s containing %q at 1:%d", tc.src, se.Code, se.Msg(), se.Pos, tc.code, tc.msg, tc.col)
		}
	}
}

// TestRoundHalfUp checks the fast path of round against the decimal one.
func TestRoundHalfUp(t *testing.T) {
	for i := -200000; i <= 200000; i += 7 {
		f := float64(i) / 10000
		for _, scale := range []int64{0, 1, 2, 3, 4} {
			if got, want := roundHalfUp(f, scale), roundDecimal(f, scale); got != want {
				t.Fatalf("round(%v, %d) = %v, want %v", f, scale, got, want)
			}
		}
	}
}

// TestBatchMatchesRows: evaluating a batch gives, row by row, what evaluating
// each row alone gives, in particular for the forms that evaluate branches on
// a subset of the rows (CASE, IF, COALESCE, AND, OR).
func TestBatchMatchesRows(t *testing.T) {
	batch := fuzzBatch(t)
	rows := make([]*domain.Batch, batch.Len())
	for r := range rows {
		rows[r] = gather(batch, []int{r})
	}
	for _, src := range []string{
		"CASE WHEN z = 0 THEN NULL ELSE i / z END", "CASE WHEN i > 1 THEN 'a' WHEN n < 0 THEN 'b' END",
		"CASE i WHEN 0 THEN s WHEN 5 THEN u ELSE e END", "coalesce(n, z, i, 1)", "coalesce(ns, s)",
		"if(z = 0, -1, i / z)", "nullif(i, 0)", "z <> 0 AND i / z > 1", "z = 0 OR i / z > 1",
		"nb AND b", "nb OR b", "NOT nb", "i IN (0, 5, NULL)", "i NOT IN (0, 1)", "n BETWEEN -1 AND i",
		"s LIKE '%S%'", "u LIKE u", "substring(u, 2, 3)", "concat(s, '-', i)", "length(u)", "round(d, 1)",
		"TRY_CAST(ns AS INT)", "CAST(b AS STRING)", "i <=> n", "st.x", "abs(d)", "floor(d)", "upper(u)",
		"trim(e)", "d = -0.0", "i + 1 > n", "coalesce(i, 1 / z)",
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

func TestEvalSchemaDrift(t *testing.T) {
	e, _ := syntax.ParseExpr("t", "i + 1")
	c, err := Compile(e, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if c.Type().Kind != domain.KindInt64 {
		t.Fatalf("type %s", c.Type())
	}
	other := domain.NewBatch(domain.NewSchema(domain.Field{Name: "i", Type: domain.TypeString}), 0)
	for _, b := range []*domain.Batch{nil, other} {
		if _, err := c.Eval(b); domain.CodeOf(err) != domain.CodeSchemaDrift {
			t.Errorf("eval on a batch of another schema: %v", err)
		}
	}
	if _, err := Compile(nil, testSchema); err == nil {
		t.Error("Compile(nil) succeeded")
	}
}
