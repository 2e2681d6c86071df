package sql

import (
	"github.com/sluicehq/sluice/sql/syntax"
	"testing"
)

var regexFnCases = []struct{ src, want string }{
	// Spark's examples
	{`regexp_extract('100-200', '(\\d+)-(\\d+)', 1)`, "string:'100'"}, {`regexp_extract('100-200', '(\\d+)-(\\d+)')`, "string:'100'"},
	{`regexp_extract('100-200', '(\\d+)-(\\d+)', 2)`, "string:'200'"}, {`regexp_extract('100-200', '(\\d+)-(\\d+)', 0)`, "string:'100-200'"},
	{`regexp_extract_all('100-200, 300-400', '(\\d+)-(\\d+)', 1)`, "array<string>:[100, 300]"},
	{`regexp_extract_all('100-200, 300-400', '(\\d+)-(\\d+)')`, "array<string>:[100, 300]"},
	{`regexp_replace('100-200', '(\\d+)', 'num')`, "string:'num-num'"},
	{`regexp_like('%SystemDrive%\\Users\\John', '%SystemDrive%\\\\Users.*')`, "boolean:true"},
	{`'%SystemDrive%\\Users\\John' RLIKE '%SystemDrive%\\\\Users.*'`, "boolean:true"},
	{`'%SystemDrive%\\Users\\John' REGEXP '%SystemDrive%\\\\Users.*'`, "boolean:true"},
	{`regexp('%SystemDrive%\\Users\\John', '%SystemDrive%\\\\Users.*')`, "boolean:true"},
	{`rlike('%SystemDrive%\\Users\\John', '%SystemDrive%\\\\Users.*')`, "boolean:true"},
	{`regexp_count('Steven Jones and Stephen Smith are the best players', 'Ste(v|ph)en')`, "bigint:2"},
	{`regexp_count('abcdefghijklmnopqrstuvwxyz', '[a-z]{3}')`, "bigint:8"},
	{`regexp_substr('Steven Jones and Stephen Smith are the best players', 'Ste(v|ph)en')`, "string:'Steven'"},
	{`regexp_substr('Steven Jones and Stephen Smith are the best players', 'Jeck')`, "string:NULL"},
	{`split('oneAtwoBthreeC', '[ABC]')`, "array<string>:[one, two, three, ]"},
	{`split('oneAtwoBthreeC', '[ABC]', -1)`, "array<string>:[one, two, three, ]"},
	{`split('oneAtwoBthreeC', '[ABC]', 2)`, "array<string>:[one, twoBthreeC]"},
	// RLIKE / REGEXP operators
	{"s RLIKE 'S.*L'", "boolean:true"}, {"s RLIKE '^park'", "boolean:false"}, {"s RLIKE 'park'", "boolean:true"},
	{"s NOT RLIKE 'park'", "boolean:false"}, {"s NOT REGEXP 'x'", "boolean:true"}, {"ns RLIKE 'a'", "boolean:NULL"}, {"s RLIKE NULL", "boolean:NULL"},
	{"s RLIKE ns", "boolean:NULL"}, {"s RLIKE s", "boolean:true"}, {"e RLIKE ''", "boolean:true"}, {"u RLIKE '^Ä.*Ĳ$'", "boolean:true"},
	{"i RLIKE '^5$'", "boolean:true"}, {"s RLIKE '(?i)spark'", "boolean:true"},
	{"s RLIKE '('", "INVALID_PARAMETER_VALUE.PATTERN"}, {"s RLIKE concat('(', s)", "INVALID_PARAMETER_VALUE.PATTERN"},
	// Java-only syntax
	{"s RLIKE 'Spark(?= SQL)'", "UNSUPPORTED_REGEX"}, {"s RLIKE '(?<!x)SQL'", "UNSUPPORTED_REGEX"}, {`s RLIKE '(a)\\1'`, "UNSUPPORTED_REGEX"},
	{"s RLIKE 'a*+'", "UNSUPPORTED_REGEX"}, {"s RLIKE 'a{2}+'", "UNSUPPORTED_REGEX"}, {"s RLIKE 'a{2,}+'", "UNSUPPORTED_REGEX"}, {"'a}}' RLIKE 'a}+'", "boolean:true"}, {"s RLIKE '(?>a)'", "UNSUPPORTED_REGEX"},
	{"s RLIKE '[a-z&&[^b]]'", "UNSUPPORTED_REGEX"}, {`s RLIKE '\\p{javaLowerCase}'`, "UNSUPPORTED_REGEX"}, {`s RLIKE '\\p{Lower}'`, "UNSUPPORTED_REGEX"},
	{`s RLIKE '\\Z'`, "UNSUPPORTED_REGEX"}, {"s RLIKE '(?x)a b'", "UNSUPPORTED_REGEX"}, {"s RLIKE '(?U)a'", "UNSUPPORTED_REGEX"},
	{"s RLIKE concat('(?=', s, ')')", "UNSUPPORTED_REGEX"}, {`s RLIKE '\\k<n>'`, "UNSUPPORTED_REGEX"},
	// what RE2 has under another spelling, or with another meaning, made Java's
	{`'Ä' RLIKE '\\u00C4'`, "boolean:true"}, {`'x' RLIKE '\\Q.\\E'`, "boolean:false"}, {`'.' RLIKE '\\Q.\\E'`, "boolean:true"},
	{`'ab' RLIKE '(?<first>a)b'`, "boolean:true"}, {`'a\rb' RLIKE 'a.b'`, "boolean:false"}, {`'a\rb' RLIKE '(?s)a.b'`, "boolean:true"},
	{`'abc\n' RLIKE 'c$'`, "boolean:true"}, {`'abc\n' RLIKE 'c\\z'`, "boolean:false"}, {`'abc\nd' RLIKE 'c$'`, "boolean:false"},
	{`'a[b' RLIKE '[[:alpha:]]\\['`, "boolean:true"}, {`']' RLIKE '^[].]$'`, "boolean:true"}, {`'x' RLIKE '^[^].]$'`, "boolean:true"},
	{`'\n' RLIKE '^[^].]$'`, "boolean:true"}, {`'\n' RLIKE '^.$'`, "boolean:false"},
	{`regexp_extract('abc\n', 'c$', 0)`, "UNSUPPORTED_REGEX"}, {`regexp_extract('abc', 'c$', 0)`, "string:'c'"},
	// regexp_extract edge cases
	{`regexp_extract('abc', 'x(\\d)', 1)`, "string:''"}, {`regexp_extract('abc', '(a)|(x)', 2)`, "string:''"},
	{`regexp_extract('abc', '(a)', 2)`, "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"}, {`regexp_extract('abc', '(a)', -1)`, "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"},
	{`regexp_extract(ns, '(a)', 1)`, "string:NULL"}, {`regexp_extract(s, ns, 1)`, "string:NULL"}, {`regexp_extract(s, '(a)', n)`, "string:NULL"},
	{`regexp_extract(u, '(ü\\w+)', 1)`, "string:'über'"}, {`regexp_extract(u, '(\\w+)', 1)`, "string:'rger'"}, {`regexp_extract(u, '(ü.+?) ', 1)`, "string:'über'"}, {`regexp_extract(s, '(S)', i)`, "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"},
	{`regexp_extract_all('abc', 'x')`, "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"}, {`regexp_extract_all('abc', 'x', 0)`, "array<string>:[]"},
	{`regexp_extract_all('a1b22', '\\d*', 0)`, "array<string>:[, 1, , 22, ]"}, {`regexp_extract_all(ns, '(a)')`, "array<string>:NULL"},
	// regexp_replace
	{`regexp_replace('abc', 'b*', '-')`, "string:'-a--c-'"}, {`regexp_replace('abc', '', '-')`, "string:'-a-b-c-'"},
	{`regexp_replace('2024-02-29', '(\\d+)-(\\d+)-(\\d+)', '$3.$2.$1')`, "string:'29.02.2024'"},
	{`regexp_replace('ab', '(a)', '$10')`, "string:'a0b'"}, {`regexp_replace('ab', '(?<x>a)', '[${x}]')`, "string:'[a]b'"},
	{`regexp_replace('ab', 'a', '\\$1')`, "string:'$1b'"}, {`regexp_replace('ab', 'a', '$2')`, "INVALID_PARAMETER_VALUE.PATTERN"},
	{`regexp_replace('ab', 'a', '$x')`, "INVALID_PARAMETER_VALUE.PATTERN"}, {`regexp_replace('ab', 'a', '${y}')`, "INVALID_PARAMETER_VALUE.PATTERN"},
	{`regexp_replace('ab', 'a', concat('$', 'x'))`, "INVALID_PARAMETER_VALUE.PATTERN"},
	{`regexp_replace('aaa', 'a', 'b', 2)`, "string:'abb'"}, {`regexp_replace('aaa', '^a', 'b', 2)`, "string:'aba'"},
	{`regexp_replace('aaa', 'a', 'b', 4)`, "string:'aaa'"}, {`regexp_replace('aaa', 'a', 'b', 5)`, "string:'aaa'"},
	{`regexp_replace('aaa', 'a', 'b', 0)`, "DATATYPE_MISMATCH"}, {`regexp_replace('aaa', 'a', 'b', i)`, "DATATYPE_MISMATCH"},
	{`regexp_replace(u, 'ü', 'ue', 8)`, "string:'Ärger über Ĳ'"}, {`regexp_replace(u, '[Äü]', '_')`, "string:'_rger _ber Ĳ'"},
	{`regexp_replace(ns, 'a', 'b')`, "string:NULL"}, {`regexp_replace(s, 'a', ns)`, "string:NULL"}, {`regexp_replace(e, '^$', 'x')`, "string:'x'"},
	{`regexp_replace('a b', '\\b', '|')`, "string:'|a| |b|'"}, {`regexp_replace('ab', '\\b|b', '|')`, "UNSUPPORTED_REGEX"},
	// regexp_count, regexp_substr
	{`regexp_count('abc', 'b*')`, "bigint:4"}, {`regexp_count(e, 'x')`, "bigint:0"}, {`regexp_count(e, '')`, "bigint:1"},
	{`regexp_count(ns, 'x')`, "bigint:NULL"}, {`regexp_count(u, '[üÜ]')`, "bigint:1"}, {`regexp_count(s, '(?i)[s]')`, "bigint:2"},
	{`regexp_substr(e, 'x')`, "string:NULL"}, {`regexp_substr(s, 'S\\w+')`, "string:'Spark'"}, {`regexp_substr(ns, 'x')`, "string:NULL"},
	// split
	{`split(s, ' ')`, "array<string>:[Spark, SQL]"}, {`split(e, ',')`, "array<string>:[]"}, {`split('abc', '')`, "array<string>:[a, b, c]"},
	{`split('abc', '', 2)`, "array<string>:[a, bc]"}, {`split(',a,', ',')`, "array<string>:[, a, ]"}, {`split('abc', 'x')`, "array<string>:[abc]"},
	{`split('a1b2', '(?=\\d)')`, "UNSUPPORTED_REGEX"}, {`split(u, ' ', 0)`, "array<string>:[Ärger, über, Ĳ]"}, {`split(ns, ',')`, "array<string>:NULL"},
	{`split('abc', 'b*')`, "array<string>:[a, , c, ]"}, {`split('a,b,c', ',', 1)`, "array<string>:[a,b,c]"}, {`split('a.b', '.')`, "array<string>:[, , , ]"}, {`split('a.b', '\\.')`, "array<string>:[a, b]"},
}

func TestRegexFunctions(t *testing.T) { checkEvalCases(t, regexFnCases) }

func TestRegexFunctionsRows(t *testing.T) {
	checkRowsMatch(t, []string{
		"s RLIKE 'S'", "u RLIKE u", "ns NOT RLIKE 'x'", "regexp_extract(s, '(\\\\w+)', 1)", "regexp_extract_all(u, '(.)', 1)",
		"regexp_replace(s, '[aeiou]', '_')", "regexp_replace(u, 'ß', ns)", "regexp_count(s, 'S')", "regexp_substr(u, 'ß')",
		"split(s, ' ')", "split(ns, ',', 2)", "regexp_like(e, ns)",
	})
}

// FuzzJavaRegex: translating and compiling any pattern never panics, and a
// pattern that compiles can run the Java find loop on any input.
func FuzzJavaRegex(f *testing.F) {
	for _, s := range []string{`(\d+)-(\d+)`, `a*+`, `(?<=a)b`, `[a-z&&[^b]]`, `\Q.\E`, `\u00C4`, `(?i)x$`, `b*`, `[[:alpha:]]`, `\`, `(?`} {
		f.Add(s, "abc\n100-200 ä")
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		re, err := compileJavaRegex(pat, syntax.Pos{})
		if err != nil {
			return
		}
		re.matches(s)
		if locs, err := re.findAll(s, syntax.Pos{}); err == nil {
			for _, loc := range locs {
				if loc[0] > loc[1] || loc[1] > len(s) {
					t.Fatalf("%q on %q: bad match %v", pat, s, loc)
				}
			}
		}
		_, _ = splitJava(s, re, 2, syntax.Pos{})
		_, _ = parseJavaReplacement(s, re.re)
	})
}
