package sql

import (
	"github.com/sluicehq/sluice/sql/syntax"
	"go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// promisedFunctions are the functions sluice promises to run: the ones
// pipelines written for Databricks use most. Each must be registered and
// have a case in the package's expression tests.
var promisedFunctions = strings.Fields(`
	coalesce nullif nvl nvl2 if iff ifnull greatest least nullifzero zeroifnull
	abs round bround floor ceil mod pmod pow sqrt exp ln log log10 sign rand
	upper lower initcap trim ltrim rtrim length char_length substring substr
	left right concat concat_ws replace translate split split_part instr locate
	position contains startswith endswith lpad rpad repeat reverse format_string
	regexp_extract regexp_extract_all regexp_replace regexp_like
	md5 sha1 sha2 crc32 hash xxhash64 base64 unbase64 uuid
	current_date current_timestamp now to_date to_timestamp date_format
	date_trunc trunc date_add date_sub add_months datediff timestampdiff
	timediff months_between year quarter month day dayofweek weekofyear hour
	minute second unix_timestamp from_unixtime to_utc_timestamp
	from_utc_timestamp make_date make_timestamp window
	array struct named_struct map size element_at try_element_at array_contains
	array_distinct explode explode_outer posexplode flatten sort_array
	transform filter exists aggregate
	get_json_object from_json to_json schema_of_json json_object_keys
	count count_if sum avg min max first last any_value collect_list
	collect_set approx_count_distinct percentile_cont mode stddev variance
	max_by min_by
	try_cast try_add try_divide try_subtract try_multiply
`)

// specialForms are promised names that are syntax rather than registered
// functions; each maps to an expression that must parse.
var specialForms = map[string]string{
	"try_cast": "try_cast('1' AS BIGINT)",
}

// testedCalls collects the SQL held in the string literals of the package's
// test files.
func testedCalls(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	fset := gotoken.NewFileSet()
	for _, name := range files {
		if name == "coverage_test.go" {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := goparser.ParseFile(fset, name, src, goparser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == gotoken.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					sb.WriteString(s)
					sb.WriteByte('\n')
				}
			}
			return true
		})
	}
	return sb.String()
}

func TestPromisedFunctionsRegistered(t *testing.T) {
	for _, name := range promisedFunctions {
		if src, ok := specialForms[name]; ok {
			e, err := syntax.ParseExpr("coverage", src)
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else if c, ok := e.(*syntax.Cast); !ok || !c.Try {
				t.Errorf("%s: %q parses as %T", name, src, e)
			}
			continue
		}
		_, scalar := builtins[name]
		_, agg := aggregates[name]
		_, gen := generators[name]
		if !scalar && !agg && !gen && !rankingFuncs[name] {
			t.Errorf("%s is promised but not registered", name)
		}
	}
}

func TestPromisedFunctionsTested(t *testing.T) {
	tests := testedCalls(t)
	for _, name := range promisedFunctions {
		call := regexp.MustCompile(`(?i)(^|[^a-z0-9_.])` + name + `\s*\(`)
		if !call.MatchString(tests) {
			t.Errorf("no test case calls %s(", name)
		}
	}
	// DATEDIFF(unit, start, end) is a form of its own.
	if !regexp.MustCompile(`(?i)datediff\s*\(\s*(day|week|month|year|hour|minute|second)\s*,`).MatchString(tests) {
		t.Error("no test case calls DATEDIFF(unit, start, end)")
	}
}

// sparkSyntaxForms are the names of Spark's function list that are
// operators or forms of the grammar here, each with an expression that
// must compile.
var sparkSyntaxForms = map[string]string{
	"!": "!b", "%": "5 % 2", "&": "5 & 3", "*": "5 * 2", "+": "5 + 2", "-": "5 - 2", "/": "5 / 2",
	"<": "1 < 2", "<=": "1 <= 2", "<=>": "1 <=> 2", "=": "1 = 2", "==": "1 == 2", ">": "1 > 2", ">=": "1 >= 2",
	"<<": "1 << 2", ">>": "8 >> 1", ">>>": "8 >>> 1", "^": "5 ^ 3", "|": "5 | 3", "~": "~5", "and": "b AND b", "or": "b OR b", "not": "NOT b",
	"between": "1 BETWEEN 0 AND 2", "cast": "CAST(1 AS STRING)", "extract": "EXTRACT(YEAR FROM dt)",
	"ilike": "s ILIKE 'a%'", "in": "i IN (1, 2)", "like": "s LIKE 'a%'", "when": "CASE WHEN b THEN 1 ELSE 2 END",
}

// sparkQueryForms are the names of Spark's function list that only a query
// takes (grouping() reads the grouping sets of its GROUP BY), each with a
// query over the planner's test tables that must run.
var sparkQueryForms = map[string]string{
	"grouping":       "SELECT region, grouping(region) FROM orders GROUP BY ROLLUP(region)",
	"grouping_id":    "SELECT region, grouping_id() FROM orders GROUP BY CUBE(region)",
	"session_window": "SELECT region, session_window.start, count(*) FROM orders GROUP BY region, session_window(TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, id), '2 minutes')",
}

// TestSparkFunctionCoverage holds sluice to Spark's list of built-in
// functions (testdata/spark_functions.txt): each is registered, an
// operator or form of the grammar, or listed in
// testdata/functions_left_out.tsv, left out with a reason or still to
// build; a listed name that is registered is a stale line.
func TestSparkFunctionCoverage(t *testing.T) {
	read := func(name string) []string {
		text, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(text), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	listed := map[string]string{}
	todo := 0
	for _, l := range read("functions_left_out.tsv") {
		f := strings.Split(l, "\t")
		if len(f) != 3 || (f[1] != "left out" && f[1] != "todo") || f[2] == "" {
			t.Errorf("functions_left_out.tsv: %q is not name, status (left out or todo) and reason", l)
			continue
		}
		listed[f[0]] = f[1]
		if f[1] == "todo" {
			todo++
		}
	}
	spark := read("spark_functions.txt")
	for _, name := range spark {
		_, scalar := builtins[name]
		_, agg := aggregates[name]
		_, gen := generators[name]
		runs := scalar || agg || gen || rankingFuncs[name]
		if src, ok := sparkSyntaxForms[name]; ok {
			e, err := syntax.ParseExpr("coverage", src)
			if err == nil {
				_, err = Compile(e, testSchema)
			}
			if err != nil {
				t.Errorf("%s: %s does not compile: %v", name, src, err)
			}
			runs = true
		}
		if src, ok := sparkQueryForms[name]; ok {
			if _, err := runQuery(t, src); err != nil {
				t.Errorf("%s: %s does not run: %v", name, src, err)
			}
			runs = true
		}
		switch _, isListed := listed[name]; {
		case runs && isListed:
			t.Errorf("%s runs, and functions_left_out.tsv still lists it", name)
		case !runs && !isListed:
			t.Errorf("Spark's function %s is neither run here nor listed in functions_left_out.tsv", name)
		}
		delete(listed, name)
	}
	for name := range listed {
		t.Errorf("functions_left_out.tsv lists %s, which is not in Spark's list", name)
	}
	t.Logf("%d of Spark's %d functions are still to build", todo, len(spark))
}
