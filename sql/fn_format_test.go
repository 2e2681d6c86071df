package sql

import (
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

var formatFnCases = []struct{ src, want string }{
	// to_number and to_char: Spark's examples, then mismatches
	{"to_number('454', '999')", "decimal(3,0):454"}, {"to_number('454.00', '000.00')", "decimal(5,2):454.00"},
	{"to_number('12,454', '99,999')", "decimal(5,0):12454"}, {"to_number('$78.12', '$99.99')", "decimal(4,2):78.12"},
	{"to_number('12,454.8-', '99,999.9S')", "decimal(6,1):-12454.8"}, {"to_number('<12.5>', '99.9PR')", "decimal(3,1):-12.5"},
	{"to_number('12x', '99')", "INVALID_FORMAT.MISMATCH_INPUT"}, {"try_to_number('12x', '99')", "decimal(2,0):NULL"},
	{"to_number('1234', '99')", "INVALID_FORMAT.MISMATCH_INPUT"}, {"to_number('1', '9,')", "INVALID_FORMAT"},
	{"to_char(454, '999')", "string:'454'"}, {"to_char(454.00, '000D00')", "string:'454.00'"},
	{"to_char(12454, '99G999')", "string:'12,454'"}, {"to_char(78.12, '$99.99')", "string:'$78.12'"},
	{"to_char(-12454.8, '99G999D9S')", "string:'12,454.8-'"}, {"to_varchar(5, '000')", "string:'005'"},
	{"to_char(5, '999')", "string:'  5'"}, {"to_char(12345, '999')", "string:'###'"}, {"to_char(-5, '9PR')", "string:'<5>'"},
	{"to_char(DATE'2024-01-01', '999')", "DATATYPE_MISMATCH"},
	// format_number: Spark's examples, then rounding half to even and patterns
	{"format_number(12332.123456, 4)", "string:'12,332.1235'"},
	{"format_number(12332.123456, '##################.###')", "string:'12332.123'"},
	{"format_number(12332.123456D, 4)", "string:'12,332.1235'"}, {"format_number(12332, 2)", "string:'12,332.00'"},
	{"format_number(0.5, 0)", "string:'0'"}, {"format_number(1.5, 0)", "string:'2'"}, {"format_number(-1234.5, 0)", "string:'-1,234'"},
	{"format_number(-0.4, 0)", "string:'0'"}, {"format_number(1e21D, 1)", "string:'1,000,000,000,000,000,000,000.0'"},
	{"format_number(0.000123D, 6)", "string:'0.000123'"}, {"format_number(d, -1)", "string:NULL"}, {"format_number(n, 2)", "string:NULL"},
	{"format_number(1234.5, '#,##0.00')", "string:'1,234.50'"}, {"format_number(5, '000')", "string:'005'"},
	{"format_number(1234567, '#,####')", "string:'123,4567'"}, {"format_number(1, 'x#')", "INVALID_PARAMETER_VALUE"},
	{"format_number(CAST('NaN' AS DOUBLE), 2)", "string:'NaN'"}, {"format_number('x', 2)", "DATATYPE_MISMATCH"},
	{`format_string('Hello World %d %s', 100, 'days')`, "string:'Hello World 100 days'"},
	{`printf('Hello World %d %s', 100, 'days')`, "string:'Hello World 100 days'"},
	{`format_string('%s', s)`, "string:'Spark SQL'"}, {`format_string('%S', u)`, "string:'ÄRGER ÜBER Ĳ'"},
	{`format_string('%.2f', 2.675)`, "string:'2.68'"}, {`format_string('%.2f', 0.125)`, "string:'0.13'"},
	{`format_string('%f', d)`, "string:'2.500000'"}, {`format_string('%.0f', 2.5)`, "string:'3'"}, {`format_string('%.3f', -0.0005)`, "string:'-0.001'"},
	{`format_string('%.1f', 1e20)`, "string:'100000000000000000000.0'"}, {`format_string('%8.2f|', -3.14159)`, "string:'   -3.14|'"},
	{`format_string('%08.2f', -3.14159)`, "string:'-0003.14'"}, {`format_string('%+.1f', 2.0)`, "string:'+2.0'"},
	{`format_string('%,.2f', 1234567.891)`, "string:'1,234,567.89'"}, {`format_string('%f', CAST('NaN' AS DOUBLE))`, "string:'NaN'"},
	{`format_string('%f', CAST('-Infinity' AS DOUBLE))`, "string:'-Infinity'"},
	{`format_string('%x', 255)`, "string:'ff'"}, {`format_string('%X', 255)`, "string:'FF'"}, {`format_string('%x', -1)`, "string:'ffffffffffffffff'"},
	{`format_string('%o', 8)`, "string:'10'"}, {`format_string('%04x', 10)`, "string:'000a'"},
	{`format_string('%05d', 42)`, "string:'00042'"}, {`format_string('%05d', -42)`, "string:'-0042'"}, {`format_string('%-5s|', 'ab')`, "string:'ab   |'"},
	{`format_string('%5s|', 'ab')`, "string:'   ab|'"}, {`format_string('%.3s', 'abcdef')`, "string:'abc'"}, {`format_string('%,d', 1234567)`, "string:'1,234,567'"},
	{`format_string('%+d % d', 5, 5)`, "string:'+5  5'"}, {`format_string('100%%')`, "string:'100%'"}, {`format_string('a%nb')`, "string:'a\nb'"},
	{`format_string('%2$s %1$s', 'a', 'b')`, "string:'b a'"}, {`format_string('%s %s', 'a', 'b', 'c')`, "string:'a b'"},
	{`format_string('%c', 65)`, "string:'A'"}, {`format_string('%b %b %b', b, nb, 'x')`, "string:'true false true'"},
	{`format_string('%s %d', ns, n)`, "string:'null null'"}, {`format_string('%6s', ns)`, "string:'  null'"},
	{`format_string('%s', i)`, "string:'5'"}, {`format_string('%s', d)`, "string:'2.5'"}, {`format_string('%s|%s', e, 1e7)`, "string:'|1.0E7'"},
	{`format_string(ns, 1)`, "string:NULL"}, {`format_string(NULL)`, "string:NULL"}, {`format_string('plain')`, "string:'plain'"},
	{`format_string(s)`, "string:'Spark SQL'"}, {`format_string(e)`, "string:''"},
	// unsupported or invalid
	{`format_string('%e', 1.0)`, "UNSUPPORTED_FORMAT_STRING"}, {`format_string('%t', 1)`, "UNSUPPORTED_FORMAT_STRING"},
	{`format_string('%d', 1.5)`, "UNSUPPORTED_FORMAT_STRING"}, {`format_string('%f', 1)`, "UNSUPPORTED_FORMAT_STRING"},
	{`format_string('%s %s', 'a')`, "UNSUPPORTED_FORMAT_STRING"}, {`format_string('%', 1)`, "UNSUPPORTED_FORMAT_STRING"},
	{`format_string('%-d', 1)`, "UNSUPPORTED_FORMAT_STRING"}, {`format_string('%#x', 1)`, "UNSUPPORTED_FORMAT_STRING"},
	{`format_string('%.2d', 1)`, "UNSUPPORTED_FORMAT_STRING"}, {`format_string('%s', dt)`, "UNSUPPORTED_FORMAT_STRING"},
	{`format_string('%0$s', 1)`, "UNSUPPORTED_FORMAT_STRING"}, {`format_string('%+x', 1)`, "UNSUPPORTED_FORMAT_STRING"},
	{`format_string('%c', -1)`, "UNSUPPORTED_FORMAT_STRING"}, {`format_string(concat('%', 'q'), 1)`, "UNSUPPORTED_FORMAT_STRING"},
	{`format_string(concat('%', 'd'), i)`, "string:'5'"}, {`format_string(st)`, "DATATYPE_MISMATCH"},
	{`format_string('%99999999999d', 1)`, "UNSUPPORTED_FORMAT_STRING"},
}

func TestFormatString(t *testing.T) { checkEvalCases(t, formatFnCases) }

func TestFormatStringRows(t *testing.T) {
	checkRowsMatch(t, []string{
		"format_string('%s-%d-%.1f', s, i, d)", "format_string(ns, n)", "format_string('%5s|%-3d|', ns, z)",
		"printf(concat('%', 's'), u)",
	})
}

// FuzzParseFormat: parsing a format never panics, and a format that
// parses formats a row of every kind it accepts without panicking.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"%s", "%05d", "%-5s|%.2f", "%2$s %1$s", "%,d", "100%%", "%n", "%", "%0$s", "%99999999999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		specs, msg := parseFormat(s)
		if msg != "" {
			return
		}
		cols := []*domain.Column{
			{Kind: domain.KindInt64, Ints: []int64{-12345}},
			{Kind: domain.KindFloat64, Floats: []float64{-1.5}},
			{Kind: domain.KindString, Strs: []string{"x"}},
		}
		kinds := []domain.Kind{domain.KindInt64, domain.KindFloat64, domain.KindString}
		if checkFormatArgs(specs, kinds) != "" {
			return
		}
		for _, sp := range specs {
			if sp.conv != 0 && sp.width < 1<<16 {
				_, _ = formatOne(sp, cols, 0, syntax.Pos{})
			}
		}
	})
}
