package sql

import "testing"

var stringFnCases = []struct{ src, want string }{
	// initcap, left, right
	{"initcap('sPark sql')", "string:'Spark Sql'"}, {"initcap(u)", "string:'Ärger Über Ĳ'"}, {"initcap(e)", "string:''"},
	{"initcap(ns)", "string:NULL"}, {"initcap('a-b  c\td')", "string:'A-b  C\td'"}, {"initcap('ǆx')", "string:'ǅx'"},
	{"left('Spark SQL', 3)", "string:'Spa'"}, {"left('Spark SQL', -1)", "string:''"}, {"left(s, 0)", "string:''"},
	{"left(s, 100)", "string:'Spark SQL'"}, {"left(u, 1)", "string:'Ä'"}, {"left(ns, 1)", "string:NULL"}, {"left(s, n)", "string:NULL"},
	{"right('Spark SQL', 3)", "string:'SQL'"}, {"right(s, -1)", "string:''"}, {"right(s, 100)", "string:'Spark SQL'"},
	{"right(u, 2)", "string:' Ĳ'"}, {"right(s, big)", "string:'Spark SQL'"}, {"left(s, 1.5)", "DATATYPE_MISMATCH"},
	// concat_ws
	{"concat_ws(' ', 'Spark', 'SQL')", "string:'Spark SQL'"}, {"concat_ws('s')", "string:''"},
	{"concat_ws('/', 'foo', NULL, 'bar')", "string:'foo/bar'"}, {"concat_ws(NULL, 'Spark', 'SQL')", "string:NULL"},
	{"concat_ws(',', ns, ns)", "string:''"}, {"concat_ws(',', i, d, b)", "string:'5,2.5,true'"}, {"concat_ws('', u, e)", "string:'Ärger über Ĳ'"},
	{"concat_ws(',', st)", "DATATYPE_MISMATCH"}, {"concat_ws('-', 'a', split('b c', ' '), ns, 'd')", "string:'a-b-c-d'"},
	{"concat_ws(',', split(ns, ' '))", "string:''"}, {"concat_ws(',', regexp_extract_all('a1b2', '(\\\\d)'))", "string:'1,2'"},
	// replace, translate
	{"replace('ABCabc', 'abc', 'DEF')", "string:'ABCDEF'"}, {"replace('ABCabc', 'abc')", "string:'ABC'"},
	{"replace('abc', '', 'x')", "string:'abc'"}, {"replace(ns, 'a', 'b')", "string:NULL"}, {"replace(s, ns, 'b')", "string:NULL"},
	{"replace(u, 'ü', 'ue')", "string:'Ärger ueber Ĳ'"}, {"replace('aaa', 'aa', 'b')", "string:'ba'"},
	{"translate('AaBbCc', 'abc', '123')", "string:'A1B2C3'"}, {"translate('AaBbCc', 'abc', '1')", "string:'A1BC'"},
	{"translate('abca', 'aa', 'xy')", "string:'xbcx'"}, {"translate(u, 'Äü', 'Au')", "string:'Arger uber Ĳ'"},
	{"translate(ns, 'a', 'b')", "string:NULL"}, {"translate(s, '', 'x')", "string:'Spark SQL'"},
	// split_part
	{"split_part('11.12.13', '.', 3)", "string:'13'"}, {"split_part('11.12.13', '.', -1)", "string:'13'"},
	{"split_part('11.12.13', '.', 4)", "string:''"}, {"split_part('11.12.13', '.', -4)", "string:''"},
	{"split_part('11.12.13', '', 1)", "string:'11.12.13'"}, {"split_part('11.12.13', '', 2)", "string:''"},
	{"split_part('11.12.13', '.', 0)", "INVALID_INDEX_OF_ZERO"}, {"split_part(ns, '.', 0)", "string:NULL"},
	{"split_part(e, ',', 1)", "string:''"}, {"split_part(u, ' ', 2)", "string:'über'"}, {"split_part('a,,b', ',', 2)", "string:''"},
	// instr, locate, position
	{"instr('SparkSQL', 'SQL')", "bigint:6"}, {"instr(s, 'x')", "bigint:0"}, {"instr(s, '')", "bigint:1"},
	{"instr(u, 'über')", "bigint:7"}, {"instr(ns, 'a')", "bigint:NULL"}, {"instr(s, ns)", "bigint:NULL"},
	{"locate('bar', 'foobarbar')", "bigint:4"}, {"locate('bar', 'foobarbar', 5)", "bigint:7"}, {"locate('bar', 'foobarbar', 8)", "bigint:0"},
	{"position('bar', 'foobarbar')", "bigint:4"}, {"position('bar' IN 'foobarbar')", "bigint:4"}, {"POSITION('r' IN u)", "bigint:2"},
	{"position(e IN s)", "bigint:1"}, {"position(ns IN s)", "bigint:NULL"}, {"position((1 + 1) IN concat('1', '2'))", "bigint:2"}, {"position('bar', 'foobarbar', 5)", "bigint:7"},
	{"locate('bar', 'foobarbar', 0)", "bigint:0"}, {"locate('bar', 'foobarbar', -1)", "bigint:0"},
	{"locate('bar', 'foobarbar', n)", "bigint:0"}, {"locate(ns, 'foobarbar')", "bigint:NULL"}, {"locate('a', ns, 1)", "bigint:NULL"},
	{"locate('', 'abc', 3)", "bigint:1"}, {"locate('r', u, 3)", "bigint:5"}, {"locate('r', u, 6)", "bigint:10"}, {"locate('x', 'abc', 9)", "bigint:0"},
	// contains, startswith, endswith
	{"contains('Spark SQL', 'Spark')", "boolean:true"}, {"contains('Spark SQL', 'SPARK')", "boolean:false"},
	{"contains('Spark SQL', NULL)", "boolean:NULL"}, {"contains(s, '')", "boolean:true"}, {"contains(x'537061726b2053514c', x'537061726b')", "boolean:true"},
	{"startswith('Spark SQL', 'Spark')", "boolean:true"}, {"startswith('Spark SQL', 'SQL')", "boolean:false"}, {"startswith(ns, 'a')", "boolean:NULL"},
	{"endswith('Spark SQL', 'SQL')", "boolean:true"}, {"endswith(u, 'Ĳ')", "boolean:true"}, {"endswith(e, '')", "boolean:true"},
	// lpad, rpad, repeat
	{"lpad('hi', 5, '??')", "string:'???hi'"}, {"lpad('hi', 1, '??')", "string:'h'"}, {"lpad('hi', 5)", "string:'   hi'"},
	{"rpad('hi', 5, '??')", "string:'hi???'"}, {"rpad('hi', 1, '??')", "string:'h'"}, {"rpad('hi', 5)", "string:'hi   '"},
	{"lpad('hi', -1, 'x')", "string:''"}, {"lpad('hi', 5, '')", "string:'hi'"}, {"rpad('hi', 1, '')", "string:'h'"},
	{"lpad(u, 14, 'ß')", "string:'ßßÄrger über Ĳ'"}, {"rpad('a', 4, 'xyz')", "string:'axyz'"}, {"rpad('a', 6, 'xyz')", "string:'axyzxy'"},
	{"lpad(ns, 5)", "string:NULL"}, {"lpad(s, n)", "string:NULL"}, {"lpad(s, 3, ns)", "string:NULL"}, {"lpad(s, big)", "INVALID_PARAMETER_VALUE.LENGTH"},
	{"repeat('123', 2)", "string:'123123'"}, {"repeat('a', 0)", "string:''"}, {"repeat('a', -2)", "string:''"}, {"repeat(e, big)", "string:''"},
	{"repeat(s, big)", "INVALID_PARAMETER_VALUE.LENGTH"}, {"repeat(ns, 2)", "string:NULL"}, {"repeat('ü', 3)", "string:'üüü'"},
	// X'..' literals
	{"X'1F'", "binary:X'1F'"}, {"x'abc'", "binary:X'0ABC'"}, {"X''", "binary:X''"}, {"X'1G'", "CAST_INVALID_INPUT"},
	{"CAST(X'537061726B' AS STRING)", "string:'Spark'"}, {"X'01' = X'01'", "boolean:true"},
	// reverse, ascii, chr, btrim
	{"reverse('Spark SQL')", "string:'LQS krapS'"}, {"reverse(u)", "string:'Ĳ rebü regrÄ'"}, {"reverse(e)", "string:''"}, {"reverse(ns)", "string:NULL"},
	{"ascii('222')", "bigint:50"}, {"ascii(2)", "bigint:50"}, {"ascii(e)", "bigint:0"}, {"ascii(u)", "bigint:196"}, {"ascii(ns)", "bigint:NULL"},
	{"chr(65)", "string:'A'"}, {"char(65)", "string:'A'"}, {"chr(321)", "string:'A'"}, {"chr(-1)", "string:''"}, {"chr(196)", "string:'Ä'"},
	{"chr(n)", "string:NULL"}, {"chr('66')", "string:'B'"}, {"length(chr(0))", "bigint:1"},
	{"btrim('    SparkSQL   ')", "string:'SparkSQL'"}, {"btrim('SSparkSQLS', 'SL')", "string:'parkSQ'"}, {"btrim(ns)", "string:NULL"}, {"btrim(s, ns)", "string:NULL"},
}

func TestStringFunctions(t *testing.T) { checkEvalCases(t, stringFnCases) }

func TestStringFunctionsRows(t *testing.T) {
	checkRowsMatch(t, []string{
		"initcap(u)", "left(s, i)", "right(u, 3)", "concat_ws(',', s, ns, u)", "concat_ws(ns, s)", "replace(s, 'S', ns)",
		"translate(u, 'ß', 's')", "split_part(s, ' ', 1)", "instr(u, 'ß')", "locate('S', s, z)", "position(e, ns)",
		"contains(s, ns)", "startswith(u, 'ß')", "lpad(s, i, ns)", "rpad(u, 12, '-')", "repeat(ns, i)", "reverse(u)",
		"ascii(u)", "chr(i)", "btrim(e)", "reverse(array(s, ns, u))", "reverse(split(u, ' '))",
	})
}
