package sql

import "testing"

var moreStringFnCases = []struct{ src, want string }{
	{`regexp_instr('user@spark.apache.org', '@[^.]*')`, "bigint:5"}, {`regexp_instr(s, 'x')`, "bigint:0"},
	{`regexp_instr(u, 'ü')`, "bigint:7"}, {`regexp_instr('abc', '(x)|(c)', 2)`, "bigint:3"}, {`regexp_instr('abc', '(x)|(c)', 1)`, "bigint:0"},
	{`regexp_instr('abc', '(c)', 2)`, "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"}, {`regexp_instr(ns, 'a')`, "bigint:NULL"},
	{"octet_length('Spark SQL')", "bigint:9"}, {"octet_length(u)", "bigint:15"}, {"octet_length(X'0102')", "bigint:2"},
	{"bit_length('Spark SQL')", "bigint:72"}, {"octet_length(ns)", "bigint:NULL"},
	{"substring_index('www.apache.org', '.', 2)", "string:'www.apache'"}, {"substring_index('www.apache.org', '.', -2)", "string:'apache.org'"},
	{"substring_index('www.apache.org', '.', 0)", "string:''"}, {"substring_index('www.apache.org', '', 1)", "string:''"},
	{"substring_index('www.apache.org', '.', 5)", "string:'www.apache.org'"}, {"substring_index('www.apache.org', '.', -5)", "string:'www.apache.org'"},
	{"substring_index('a..b', '..', 1)", "string:'a'"}, {"substring_index(u, ' ', -1)", "string:'Ĳ'"}, {"substring_index(ns, '.', 1)", "string:NULL"},
	{"concat(space(2), '1')", "string:'  1'"}, {"space(-1)", "string:''"}, {"space(n)", "string:NULL"}, {"space(big)", "INVALID_PARAMETER_VALUE.LENGTH"},
	{"levenshtein('kitten', 'sitting')", "bigint:3"}, {"levenshtein('kitten', 'sitting', 2)", "bigint:-1"}, {"levenshtein('kitten', 'sitting', 4)", "bigint:3"},
	{"levenshtein(e, s)", "bigint:9"}, {"levenshtein('über', 'uber')", "bigint:1"}, {"levenshtein(ns, s)", "bigint:NULL"},
	{"soundex('Miller')", "string:'M460'"}, {"soundex('Ashcraft')", "string:'A261'"}, {"soundex('Tymczak')", "string:'T522'"},
	{"soundex('1abc')", "string:'1abc'"}, {"soundex(e)", "string:''"}, {"soundex(u)", "string:'Ärger über Ĳ'"}, {"soundex('a')", "string:'A000'"},
}

func TestMoreStringFunctions(t *testing.T) { checkEvalCases(t, moreStringFnCases) }

func TestMoreStringFunctionsRows(t *testing.T) {
	checkRowsMatch(t, []string{
		"regexp_instr(s, 'S')", "octet_length(u)", "substring_index(s, ' ', i)", "space(z)", "levenshtein(s, u)", "soundex(s)",
	})
}
