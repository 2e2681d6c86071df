package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// loadSQL declares a pipeline from SQL files whose read_files paths are
// relative to dir.
func loadSQL(t *testing.T, dir string, files ...string) (*Pipeline, domain.Problems) {
	t.Helper()
	p := New("sql")
	var fs []SQLFile
	for i, text := range files {
		fs = append(fs, SQLFile{Path: fmt.Sprintf("f%d.sql", i+1), Text: text})
	}
	return p, p.LoadSQL(fs, SQLOptions{Dir: dir, Configuration: map[string]string{"min": "3"}})
}

// rowsOf renders a table's rows as "v,v" lines, sorted.
func rowsOf(t *testing.T, h *harness, table string) []string {
	t.Helper()
	b, err := processors.ReadTable(context.Background(), h.store, table, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range b.Rows() {
		var parts []string
		for _, v := range r {
			parts = append(parts, v.String())
		}
		out = append(out, strings.Join(parts, ","))
	}
	sort.Strings(out)
	return out
}

func TestLoadSQLRuns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "orders"), "a.json", `{"id": 1, "cust": "ann", "amount": 10.5}
{"id": 2, "cust": "bob", "amount": 3}
{"id": 3, "cust": "ann", "amount": 7}
{"id": 4, "cust": "cy", "amount": 1}
`)
	writeFile(t, filepath.Join(dir, "customers"), "c.csv", "name,country\nann,FR\nbob,US\n")
	p, probs := loadSQL(t, dir, `
CREATE OR REFRESH STREAMING TABLE orders AS
SELECT id, cust, amount, _metadata.file_name AS file FROM STREAM read_files('orders', format => 'json');

CREATE MATERIALIZED VIEW customers AS SELECT * FROM read_files('customers/*.csv', format => 'csv', header => true);
`, `
CREATE TEMPORARY VIEW big AS SELECT * FROM orders WHERE amount >= ${min};

CREATE OR REFRESH STREAMING TABLE big_orders AS
SELECT o.id, upper(o.cust) AS cust, c.country FROM STREAM(big) o LEFT JOIN customers c ON o.cust = c.name;

CREATE MATERIALIZED VIEW totals AS
SELECT cust, count(*) AS n, sum(amount) AS total FROM LIVE.orders GROUP BY cust;
`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHarness(t)
	h.mustComplete(p, processors.Options{})
	want := map[string][]string{
		"orders":     {"1,ann,10.5,a.json", "2,bob,3,a.json", "3,ann,7,a.json", "4,cy,1,a.json"},
		"customers":  {"ann,FR,NULL", "bob,US,NULL"},
		"big_orders": {"1,ANN,FR", "2,BOB,US", "3,ANN,FR"},
		"totals":     {"ann,2,17.5", "bob,1,3", "cy,1,1"},
	}
	for table, rows := range want {
		if got := rowsOf(t, h, table); strings.Join(got, "|") != strings.Join(rows, "|") {
			t.Errorf("%s:\n got %v\nwant %v", table, got, rows)
		}
	}
}

func TestLoadSQLProblems(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1}`+"\n")
	_, probs := loadSQL(t, dir, `
CREATE STREAMING TABLE a AS SELECT idd FROM STREAM read_files('in', format => 'json');
CREATE MATERIALIZED VIEW b AS SELECT * FROM main.sales.orders;
`, `
CREATE STREAMING TABLE a AS SELECT 1;
CREATE FLOW f AS AUTO CDC INTO a FROM STREAM(x) KEYS (id) SEQUENCE BY ts;
CREATE MATERIALIZED VIEW c AS SELECT nope(1) FROM b;
SELECT 1;
CREATE MATERIALIZED VIEW d AS SELECT count(*) FROM event_log(TABLE(elsewhere));
CREATE MATERIALIZED VIEW e AS SELECT count(*) FROM event_log('x');
CREATE MATERIALIZED VIEW g AS SELECT count(*) AS n FROM event_log(TABLE(c));
`)
	got := map[string]string{}
	for _, p := range probs {
		got[fmt.Sprintf("%s:%d", p.File, p.Line)] = string(p.Code)
	}
	want := map[string]string{
		"f1.sql:2": "UNRESOLVED_COLUMN",
		"f1.sql:3": "TABLE_OR_VIEW_NOT_FOUND",
		"f2.sql:2": "PIPELINE_DUPLICATE_IDENTIFIERS",
		"f2.sql:3": "TABLE_OR_VIEW_NOT_FOUND",
		"f2.sql:5": "INVALID_DEFINITION",
		"f2.sql:6": "TABLE_OR_VIEW_NOT_FOUND",
		"f2.sql:7": "INVALID_DEFINITION",
		"f2.sql:8": "",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q (all: %v)", k, got[k], v, probs)
		}
	}
}

func TestLoadSQLExpectations(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1, "amount": 5}
{"id": null, "amount": 3}
{"id": 3, "amount": -2}
{"id": 4, "amount": null}
`)
	src := `
CREATE OR REFRESH STREAMING TABLE clean (
  CONSTRAINT ` + "`valid id`" + ` EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT positive EXPECT (amount > 0)
) AS SELECT * EXCEPT (_rescued_data) FROM STREAM read_files('in', format => 'json');
`
	p, probs := loadSQL(t, dir, src)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHarness(t)
	h.mustComplete(p, processors.Options{})
	if got := rowsOf(t, h, "clean"); strings.Join(got, "|") != "1,5|3,-2|4,NULL" {
		t.Errorf("clean holds %v", got)
	}
	evs := h.events(eventstore.Filter{Types: []domain.EventType{domain.EventFlowProgress}, Flow: "clean"})
	last := evs[len(evs)-1].Details.FlowProgress
	if last.Status != domain.FlowCompleted || last.DataQuality == nil {
		t.Fatalf("last progress %+v", last)
	}
	dq := last.DataQuality
	want := []domain.ExpectationResult{
		{Name: "valid id", Dataset: "clean", PassedRecords: 3, FailedRecords: 1},
		{Name: "positive", Dataset: "clean", PassedRecords: 3, FailedRecords: 1},
	}
	if dq.DroppedRecords != 1 || fmt.Sprint(dq.Expectations) != fmt.Sprint(want) {
		t.Errorf("data quality %+v, want 1 dropped and %v", dq, want)
	}

	// the same rule failing the update writes nothing of the batch
	failing := strings.Replace(src, "EXPECT (amount > 0)", "EXPECT (amount > 0) ON VIOLATION FAIL UPDATE", 1)
	p, probs = loadSQL(t, dir, failing)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h = newHarness(t)
	res := h.run(p, processors.Options{})
	if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != domain.CodeExpectationViolation {
		t.Fatalf("update %s, %v; want FAILED with EXPECTATION_VIOLATION", res.State, res.Err)
	}
	if !strings.Contains(res.Err.Error(), "id=3") || !strings.Contains(res.Err.Error(), "f1.sql:4:3: ") {
		t.Errorf("the error does not name the row: %v", res.Err)
	}
	if got := rowsOf(t, h, "clean"); len(got) != 0 {
		t.Errorf("clean holds %v after a failed batch", got)
	}

	_, probs = loadSQL(t, dir, strings.Replace(src, "amount > 0", "amout > 0", 1))
	if len(probs) != 1 || probs[0].Code != domain.CodeUnresolvedColumn || probs[0].Line != 4 {
		t.Errorf("misspelt column: %v", probs)
	}
}

// Two flows with different columns fill one table; its reader is planned
// on the columns of both, whichever flow commits first.
func TestLoadSQLFlowsWithOtherColumns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), "a.json", `{"id": 1, "x": "a"}`+"\n")
	writeFile(t, filepath.Join(dir, "b"), "b.json", `{"id": 2, "y": 2.5}`+"\n")
	p, probs := loadSQL(t, dir, `
CREATE STREAMING TABLE t;
CREATE FLOW fb AS INSERT INTO t BY NAME SELECT id, y FROM STREAM read_files('b', format => 'json');
CREATE FLOW fa AS INSERT INTO t BY NAME SELECT id, x FROM STREAM read_files('a', format => 'json');
CREATE MATERIALIZED VIEW v AS SELECT id, x, y FROM t;
`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHarness(t)
	h.mustComplete(p, processors.Options{})
	if got := rowsOf(t, h, "v"); strings.Join(got, "|") != "1,a,NULL|2,NULL,2.5" {
		t.Errorf("v holds %v", got)
	}
}

func TestLoadSQLComputedColumns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1, "ts": "2026-03-04T05:06:07Z"}
{"id": 2, "ts": "2026-03-05T23:00:00Z", "source": "b"}
`)
	p, probs := loadSQL(t, dir, `
CREATE STREAMING TABLE t (
  id BIGINT,
  ts TIMESTAMP,
  day DATE GENERATED ALWAYS AS (CAST(ts AS DATE)),
  source STRING DEFAULT 'feed'
);
CREATE FLOW a AS INSERT INTO t BY NAME
SELECT id, CAST(ts AS TIMESTAMP) AS ts FROM STREAM read_files('in', format => 'json') WHERE id = 1;
CREATE FLOW b AS INSERT INTO t BY NAME
SELECT id, CAST(ts AS TIMESTAMP) AS ts, source FROM STREAM read_files('in', format => 'json') WHERE id = 2;
`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHarness(t)
	h.mustComplete(p, processors.Options{})
	want := "1,2026-03-04T05:06:07Z,2026-03-04,feed|2,2026-03-05T23:00:00Z,2026-03-05,b"
	if got := rowsOf(t, h, "t"); strings.Join(got, "|") != want {
		t.Errorf("t holds %v, want %s", got, want)
	}
}

// Problems the engine's validation finds in SQL declarations carry the
// place of the declaration.
func TestLoadSQLValidationPlaces(t *testing.T) {
	p, probs := loadSQL(t, t.TempDir(), `
CREATE STREAMING TABLE t;
CREATE MATERIALIZED VIEW m AS SELECT 1 AS x;
CREATE FLOW f DEPENDS ON (nothing) AS INSERT INTO t BY NAME SELECT 1 AS x;
`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	probs = p.Validate()
	if len(probs) != 1 || probs[0].Code != domain.CodeUnknownDependsOn || probs[0].File != "f1.sql" || probs[0].Line != 4 ||
		!strings.HasPrefix(probs[0].Message, "f1.sql:4:1: ") {
		t.Fatalf("problems %v", probs)
	}
}

// A row-level error of a flow names the file and the line of the
// expression: the flow's file, for a flow reading one input and for one
// joining two, or the file of the temporary view the expression is in.
func TestLoadSQLRowErrorPlacedInFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1, "qty": 0, "n": "x7"}`+"\n")
	for _, c := range []struct {
		files       []string
		where, code string
	}{
		{[]string{"CREATE OR REFRESH STREAMING TABLE t AS\nSELECT id,\n  10 / qty AS per\nFROM STREAM read_files('in', format => 'json');"},
			"f1.sql:3:6:", "DIVIDE_BY_ZERO"},
		{[]string{"CREATE MATERIALIZED VIEW m AS\nSELECT a.id,\n    CAST(b.n AS INT) AS n\nFROM read_files('in', format => 'json') a JOIN read_files('in', format => 'json') b ON a.id = b.id;"},
			"f1.sql:3:5:", "CAST_INVALID_INPUT"},
		{[]string{"-- the view\nCREATE TEMPORARY VIEW v AS\nSELECT id, CAST(n AS INT) AS n FROM read_files('in', format => 'json');",
			"CREATE MATERIALIZED VIEW m AS\nSELECT id,\n  n + 1 AS n FROM v;"},
			"f1.sql:3:12:", "CAST_INVALID_INPUT"},
		// the flow has an expression that can fail at the same line and
		// column as the view's: the position names its file
		{[]string{"-- the view\nCREATE TEMPORARY VIEW v AS\nSELECT id, CAST(n AS INT) AS n FROM read_files('in', format => 'json');",
			"CREATE MATERIALIZED VIEW m AS\n-- the flow\nSELECT id, CAST(n AS INT) AS n FROM v;"},
			"f1.sql:3:12:", "CAST_INVALID_INPUT"},
	} {
		p, probs := loadSQL(t, dir, c.files...)
		if len(probs) > 0 {
			t.Fatal(probs)
		}
		res := newHarness(t).run(p, processors.Options{Development: true})
		if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != domain.Code(c.code) || !strings.Contains(res.Err.Error(), c.where) {
			t.Errorf("%s: %s %v, want %s at %s", c.files, res.State, res.Err, c.code, c.where)
		}
	}
}

// A misspelt dataset name is answered with the nearest declared one.
func TestLoadSQLUnknownDatasetSuggests(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1}`+"\n")
	_, probs := loadSQL(t, dir, `
CREATE STREAMING TABLE orders AS SELECT id FROM STREAM read_files('in', format => 'json');
CREATE MATERIALIZED VIEW a AS SELECT * FROM ordrs;
CREATE MATERIALIZED VIEW b AS SELECT * FROM LIVE.ordes;
CREATE MATERIALIZED VIEW c AS SELECT * FROM customers;
`)
	if len(probs) != 3 {
		t.Fatalf("problems: %v", probs)
	}
	for _, p := range probs[:2] {
		if !strings.Contains(p.Message, "did you mean `orders`?") {
			t.Errorf("%s: no suggestion of orders", p.Message)
		}
	}
	if strings.Contains(probs[2].Message, "did you mean") || !strings.Contains(probs[2].Message, "read_files") {
		t.Errorf("no dataset near customers: %s", probs[2].Message)
	}
}

// The target of an AUTO CDC flow that failed is reported once, with the
// flow's problem, not also as a dataset without a flow.
func TestLoadSQLAutoCDCTargetReportedOnce(t *testing.T) {
	_, probs := loadSQL(t, t.TempDir(), `
CREATE OR REFRESH STREAMING TABLE changes;
APPLY CHANGES INTO changes FROM STREAM(src) KEYS (id) SEQUENCE BY ts;
CREATE OR REFRESH STREAMING TABLE changes2;
CREATE FLOW f AS AUTO CDC INTO changes2 FROM STREAM(src) KEYS (id) SEQUENCE BY ts;
CREATE OR REFRESH STREAMING TABLE lonely;
`)
	var got []string
	for _, p := range probs {
		got = append(got, fmt.Sprintf("%d:%s", p.Line, p.Code))
	}
	if want := "3:TABLE_OR_VIEW_NOT_FOUND 5:TABLE_OR_VIEW_NOT_FOUND 6:PIPELINE_DATASET_WITHOUT_FLOW"; strings.Join(got, " ") != want {
		t.Errorf("problems %v, want %s", probs, want)
	}
}

// Queries a streaming flow cannot run on each micro-batch alone are refused.
func TestLoadSQLRefusesStatefulStreams(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1, "v": 10}`+"\n")
	head := "CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_files('in', format => 'json');\n"
	for _, src := range []string{
		"CREATE STREAMING TABLE s AS SELECT id FROM STREAM(ev) WHERE v > (SELECT avg(v) FROM STREAM(ev));",
		"CREATE STREAMING TABLE s AS SELECT id FROM STREAM(ev) WHERE id IN (SELECT id FROM STREAM(ev));",
		"CREATE STREAMING TABLE s AS SELECT id, count(*) AS n FROM STREAM(ev) GROUP BY id;",
		"CREATE STREAMING TABLE s AS SELECT a.id FROM STREAM(ev) a JOIN STREAM(ev) b ON a.id = b.id;",
		"CREATE STREAMING TABLE s; CREATE FLOW f AS INSERT INTO s SELECT id FROM STREAM(ev);",
	} {
		_, probs := loadSQL(t, dir, head+src)
		if len(probs) != 1 || probs[0].Code != domain.CodeNotImplemented || probs[0].Line != 2 {
			t.Errorf("%s: problems %v, want one NOT_IMPLEMENTED on line 2", src, probs)
		}
	}
}

// Declarations the runtime would refuse are refused at load, at their line.
func TestLoadSQLDeclarationChecks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1, "v": "x"}`+"\n")
	for _, c := range []struct{ src, code string }{
		{"CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files('in', format => 'json');\nCREATE MATERIALIZED VIEW m AS SELECT * FROM v;", "INVALID_DEFINITION"},
		{"CREATE STREAMING TABLE t;\nCREATE FLOW f AS INSERT INTO ONCE t BY NAME SELECT * FROM STREAM read_files('in', format => 'json');", "INVALID_FLOW_QUERY_TYPE.ONCE_STREAMING_READ"},
		{"CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (id + 1))\nAS SELECT * FROM STREAM read_files('in', format => 'json');", "DATATYPE_MISMATCH"},
		{"CREATE STREAMING TABLE t (id BIGINT, v BIGINT)\nAS SELECT id, v FROM STREAM read_files('in', format => 'json');", "SCHEMA_DRIFT"},
	} {
		_, probs := loadSQL(t, dir, c.src)
		if len(probs) != 1 || string(probs[0].Code) != c.code || probs[0].File != "f1.sql" || probs[0].Line < 1 {
			t.Errorf("%s: problems %v, want one %s", c.src, probs, c.code)
		}
	}
}

// A later file with a value of another type does not change the inferred
// column: the value goes to _rescued_data, and the stream goes on.
func TestLoadSQLInferredSchemaStays(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	writeFile(t, in, "a.json", `{"id": 1, "v": 10}`+"\n")
	src := "CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('in', format => 'json');"
	h := newHarness(t)
	p, probs := loadSQL(t, dir, src)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h.mustComplete(p, processors.Options{})
	later := time.Now().Add(time.Minute)
	writeFile(t, in, "b.json", `{"id": 4, "v": "oops"}`+"\n")
	if err := os.Chtimes(filepath.Join(in, "b.json"), later, later); err != nil {
		t.Fatal(err)
	}
	p, probs = loadSQL(t, dir, src)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h.mustComplete(p, processors.Options{})
	got := rowsOf(t, h, "t")
	if len(got) != 2 || got[0] != "1,10,NULL" || !strings.HasPrefix(got[1], `4,NULL,{"`) || !strings.Contains(got[1], "oops") {
		t.Errorf("t holds %v", got)
	}
}

func TestParseByteSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1024", 1024, true}, {"10m", 10 << 20, true}, {"10MB", 10 << 20, true}, {"1g", 1 << 30, true}, {"2k", 2048, true},
		{"0", 0, true}, {"", 0, false}, {"-1", 0, false}, {"1x", 0, false}, {"9999999999t", 0, false},
	} {
		got, ok := parseByteSize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestEveryProblemAtOnce: one load reports the problems of every stage
// (planning, names, stream and batch reads, cycles) together, names a cycle
// by its path, shows each code once, and says nothing more of what failed.
func TestEveryProblemAtOnce(t *testing.T) {
	cases := []struct {
		name, sql string
		want      []string // code, then a part of the message
	}{
		{"stages", `
CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT 1 AS x;
CREATE OR REFRESH STREAMING TABLE s AS SELECT * FROM m;
CREATE OR REFRESH MATERIALIZED VIEW p AS SELECT nope FROM m;
CREATE OR REFRESH STREAMING TABLE t1;
CREATE FLOW f1 AS INSERT INTO t1 BY NAME SELECT * FROM STREAM s;
CREATE FLOW f1 AS INSERT INTO t1 BY NAME SELECT * FROM STREAM s;`, []string{
			"UNRESOLVED_COLUMN no column named `nope`",
			`PIPELINE_DUPLICATE_IDENTIFIERS flow "f1" is declared more than once`,
			`INVALID_FLOW_QUERY_TYPE.BATCH_READ_FOR_STREAMING_TABLE flow "s" into streaming table "s" makes a batch read of m`,
		}},
		{"cycle and the rest", `
CREATE OR REFRESH MATERIALIZED VIEW a AS SELECT x FROM b;
CREATE OR REFRESH MATERIALIZED VIEW b AS SELECT x FROM c;
CREATE OR REFRESH MATERIALIZED VIEW c AS SELECT x FROM a;
CREATE OR REFRESH MATERIALIZED VIEW d AS SELECT nope FROM (SELECT 1 AS x);
CREATE OR REFRESH MATERIALIZED VIEW e AS SELECT 1 AS x;
CREATE FLOW e AS INSERT INTO d BY NAME SELECT 2 AS x;`, []string{
			"CIRCULAR_DEPENDENCY a -> b -> c -> a",
			"UNRESOLVED_COLUMN no column named `nope`",
			`PIPELINE_DUPLICATE_IDENTIFIERS flow "e" is declared more than once`,
		}},
		{"failed datasets say nothing more", `
CREATE OR REFRESH MATERIALIZED VIEW only AS SELECT nope FROM (SELECT 1 AS x);`, []string{
			"UNRESOLVED_COLUMN no column named `nope`",
		}},
		{"one code per message", `
CREATE OR REFRESH STREAMING TABLE f AS SELECT * FROM STREAM read_files('/nonexistent/dir', format => 'json');`, []string{
			"PATH_NOT_FOUND source directory /nonexistent/dir does not exist",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, loaded := loadSQL(t, t.TempDir(), c.sql)
			problems := AllProblems(p, loaded)
			if len(problems) != len(c.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(problems), len(c.want), problems)
			}
			for i, w := range c.want {
				code, part, _ := strings.Cut(w, " ")
				p := problems[i]
				if string(p.Code) != code || !strings.Contains(p.Message, part) {
					t.Errorf("problem %d: %v, want %s saying %q", i, p, code, part)
				}
				if strings.Count(p.Error(), "["+string(p.Code)+"]") != 1 {
					t.Errorf("problem %d shows its code more than once: %v", i, p)
				}
			}
		})
	}
}

// TestAutoLoaderAsDatabricksWritesIt runs, unchanged, a notebook export
// written as the Databricks documentation writes Auto Loader pipelines: the
// legacy cloud_files form in a STREAMING LIVE TABLE (a stream without
// STREAM), read_files with inferColumnTypes and schemaHints, CSV options,
// bad records rescued, dropped or failing, and options that mean nothing
// here accepted with a warning.
func TestAutoLoaderAsDatabricksWritesIt(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "landing/events"), "e1.json", "\uFEFF"+`{"id": 1, "kind": "view", "amount": 1.5, "at": "2024-06-01T10:00:00Z"}
{"id": 2, "kind": "buy", "amount": 20, "at": "2024-06-01T11:00:00Z"}
{"id": "three", "kind": "buy", "amount": 3, "at": "2024-06-01T12:00:00Z"}
not json
`)
	writeFile(t, filepath.Join(dir, "landing/customers"), "c.csv", "\uFEFFcustomer_id;name;signup;score\n1;'ann; the first';01/06/2024;7\n2;bob;NA;x\n3;'cy\n4;dee;03/06/2024;9\n")
	writeFile(t, filepath.Join(dir, "landing/logs"), "l.json", `[{"level": "INFO", "msg": "a"},
 {"level": "WARN",
  "msg": "b"}]
{"level": "INFO", "msg": "c"}
`)
	settled := time.Now().Add(-time.Minute) // a multi-line document is read once it has settled
	if err := os.Chtimes(filepath.Join(dir, "landing/logs/l.json"), settled, settled); err != nil {
		t.Fatal(err)
	}
	p, probs := loadSQL(t, dir, `-- Databricks notebook source
-- MAGIC %md
-- MAGIC # Bronze

-- COMMAND ----------

CREATE OR REFRESH STREAMING LIVE TABLE events_raw
COMMENT "raw events, the legacy way"
AS SELECT * FROM cloud_files("landing/events", "json",
  map("cloudFiles.inferColumnTypes", "true", "cloudFiles.schemaHints", "id BIGINT, at TIMESTAMP",
      "cloudFiles.useNotifications", "false"));

-- COMMAND ----------

CREATE OR REFRESH STREAMING TABLE events_str AS
SELECT * FROM cloud_files("landing/events", "json");

-- COMMAND ----------

CREATE OR REFRESH STREAMING TABLE customers AS
SELECT * FROM STREAM read_files('landing/customers', format => 'csv', header => true, sep => ';', quote => "'",
  nullValue => 'NA', dateFormat => 'dd/MM/yyyy', schemaHints => 'signup DATE, score BIGINT', mode => 'DROPMALFORMED');

-- COMMAND ----------

CREATE OR REFRESH STREAMING TABLE logs AS
SELECT level, msg, input_file_name() IS NOT NULL AS has_file FROM STREAM read_files('landing/logs', format => 'json', multiLine => true);
`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHarness(t)
	res := h.mustComplete(p, processors.Options{})
	want := map[string][]string{
		// ids inferred as bigint: "three" does not fit and is rescued, and
		// the line that is not JSON too
		"events_raw": {"1,view,1.5,2024-06-01T10:00:00Z,NULL", "2,buy,20,2024-06-01T11:00:00Z,NULL", "NULL,NULL,NULL,NULL,rescued", "NULL,buy,3,2024-06-01T12:00:00Z,rescued"},
		// cloud_files without inferColumnTypes: strings, as written
		"events_str": {"1,view,1.5,2024-06-01T10:00:00Z,NULL", "2,buy,20,2024-06-01T11:00:00Z,NULL", "NULL,NULL,NULL,NULL,rescued", "three,buy,3,2024-06-01T12:00:00Z,NULL"},
		// the score x and the quote left open are dropped; NA is NULL
		"customers": {"1,ann; the first,2024-06-01,7", "4,dee,2024-06-03,9"},
		"logs":      {"INFO,a,true", "INFO,c,true", "WARN,b,true"},
	}
	for table, rows := range want {
		got := rowsOf(t, h, table)
		for i, r := range got { // the rescued text is checked below, its presence here
			if j := strings.LastIndex(r, ",{"); j >= 0 {
				got[i] = r[:j] + ",rescued"
			}
		}
		if strings.Join(got, "|") != strings.Join(rows, "|") {
			t.Errorf("%s:\n got %v\nwant %v", table, got, rows)
		}
	}
	var malformed, rescued int64
	for _, ev := range h.events(eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventBatchCommitted}}) {
		malformed += ev.Details.BatchCommitted.NumMalformed
		rescued += ev.Details.BatchCommitted.NumRescued
	}
	if malformed != 2 || rescued != 3 {
		t.Errorf("%d malformed and %d rescued records in the metrics, want 2 and 3", malformed, rescued)
	}
	var warnings []string
	for _, ev := range h.events(eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventPlanningInformation}}) {
		if ev.Level == domain.LevelWarn {
			warnings = append(warnings, ev.Message)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "usenotifications has no effect") {
		t.Errorf("warnings %q, want one about useNotifications", warnings)
	}
}

// TestReadFilesOptions: each option changes what is read as Databricks
// documents it; an option that does not exist is refused with the nearest.
func TestReadFilesOptions(t *testing.T) {
	dir := t.TempDir()
	old := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range []struct{ path, text string }{
		{"in/a.json", `{"id": 1, "v": "x"}` + "\n"},
		{"in/b.txt.json", `{"id": 2, "v": "y"}` + "\n"},
		{"in/sub/c.json", `{"id": 3, "v": "z"}` + "\n"},
		{"lat/l.csv", "id,name\n1,caf\xe9\n"},
		{"ff/f.json", `{"id": 1, "v": 1}` + "\n" + `{"id": "bad", "v": 2}` + "\n"},
		{"ev/e.json", `{"id": 1, "extra": true}` + "\n"},
	} {
		writeFile(t, filepath.Join(dir, filepath.Dir(f.path)), filepath.Base(f.path), f.text)
	}
	if err := os.Chtimes(filepath.Join(dir, "in/a.json"), old, old); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, from string
		want       []string // rows, or the code and part of the message of the load problem
	}{
		{"recursive by default", `read_files('in', format => 'json')`, []string{"1,x,NULL", "2,y,NULL", "3,z,NULL"}},
		{"recursiveFileLookup false", `read_files('in', format => 'json', recursiveFileLookup => false)`, []string{"1,x,NULL", "2,y,NULL"}},
		{"pathGlobFilter", `read_files('in', format => 'json', pathGlobFilter => '*.txt.json')`, []string{"2,y,NULL"}},
		{"modifiedAfter", `read_files('in', format => 'json', modifiedAfter => '2025-01-01T00:00:00Z')`, []string{"2,y,NULL", "3,z,NULL"}},
		{"modifiedBefore", `read_files('in', format => 'json', modifiedBefore => '2025-01-01')`, []string{"1,x,NULL"}},
		{"encoding", `read_files('lat', format => 'csv', header => true, encoding => 'ISO-8859-1')`, []string{"1,café,NULL"}},
		{"schema without rescue", `read_files('ff', format => 'json', schema => 'id BIGINT, v BIGINT')`, []string{"1,1", "NULL,2"}},
		{"schema with rescuedDataColumn", `read_files('ff', format => 'json', schema => 'id BIGINT, v BIGINT', rescuedDataColumn => '_bad')`, []string{"1,1,NULL", `NULL,2,{"_file_path"`}},
		{"unknown option", `read_files('in', format => 'json', inferColumTypes => true)`, []string{"INVALID_SOURCE_OPTION", "did you mean"}},
		{"bad mode", `read_files('in', format => 'json', mode => 'LENIENT')`, []string{"INVALID_SOURCE_OPTION", "PERMISSIVE, DROPMALFORMED or FAILFAST"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, probs := loadSQL(t, dir, "CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM "+c.from+";")
			if strings.ToUpper(c.want[0]) == c.want[0] && strings.Contains(c.want[0], "_") {
				if len(probs) != 1 || string(probs[0].Code) != c.want[0] || !strings.Contains(probs[0].Message, c.want[1]) {
					t.Fatalf("problems %v, want %s saying %q", probs, c.want[0], c.want[1])
				}
				return
			}
			if len(probs) > 0 {
				t.Fatal(probs)
			}
			h := newHarness(t)
			h.mustComplete(p, processors.Options{})
			got := rowsOf(t, h, "t")
			for i, r := range got {
				if j := strings.Index(r, `{"_file_path"`); j >= 0 {
					got[i] = r[:j+len(`{"_file_path"`)]
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}

	// failOnNewColumns fails the flow on a field the schema lacks
	p, probs := loadSQL(t, dir, `CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM read_files('ev', format => 'json', schema => 'id BIGINT', schemaEvolutionMode => 'failOnNewColumns');`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHarness(t)
	if res := h.run(p, processors.Options{Development: true}); res.State != domain.UpdateFailed {
		t.Fatalf("update %s, want FAILED", res.State)
	}
	if evs := h.events(eventstore.Filter{Types: []domain.EventType{domain.EventFlowProgress}}); evs[len(evs)-1].Error == nil || evs[len(evs)-1].Error.Code != domain.CodeUnknownField {
		t.Errorf("last flow progress %+v, want %s", evs[len(evs)-1], domain.CodeUnknownField)
	}
}

// TestLoadSQLEveryQueryError: every error of a query is reported, each
// once, at its place, in the order of the file; an unknown or invalid
// dataset a query reads does not stop the checking of the rest of the
// query, and its columns say nothing.
func TestLoadSQLEveryQueryError(t *testing.T) {
	cases := []struct {
		name, sql string
		want      []string // code@file:line:col
	}{
		{"the issue's example", `
CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT 1 AS x;
CREATE OR REFRESH MATERIALIZED VIEW p AS SELECT nope1, bogus_fn(x), x + 'a' FROM m WHERE nope2 > 1;
CREATE OR REFRESH MATERIALIZED VIEW e AS SELECT q.y, zz FROM missing_table q JOIN (SELECT 1 AS k) r ON q.k = r.k WHERE bogus_fn2(1);`, []string{
			"UNRESOLVED_COLUMN@f1.sql:3:49",
			"UNRESOLVED_ROUTINE@f1.sql:3:56",
			"UNRESOLVED_COLUMN@f1.sql:3:90",
			"TABLE_OR_VIEW_NOT_FOUND@f1.sql:4:62",
			"UNRESOLVED_ROUTINE@f1.sql:4:120",
		}},
		{"an invalid dataset read", `
CREATE OR REFRESH MATERIALIZED VIEW bad AS SELECT nope FROM (SELECT 1 AS x);
CREATE TEMPORARY VIEW tv AS SELECT x, y FROM (SELECT 1 AS x);
CREATE OR REFRESH MATERIALIZED VIEW r AS SELECT b.y, w, bogus(1) FROM bad b JOIN tv ON tv.x = b.x WHERE tv.z > 1;`, []string{
			"UNRESOLVED_COLUMN@f1.sql:2:51",
			"UNRESOLVED_COLUMN@f1.sql:3:39",
			"UNRESOLVED_ROUTINE@f1.sql:4:57",
		}},
		{"every clause, CTEs and subqueries", `
CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT 1 AS x, 'a' AS s;
CREATE OR REFRESH MATERIALIZED VIEW q AS
WITH c AS (SELECT x, bad1 FROM m)
SELECT x, count(*) AS n, upper(x) || 1
FROM c JOIN m USING (x)
WHERE x IN (SELECT bad2 FROM m) AND s = 1
GROUP BY x, bad3
HAVING sum(bad4) > 0
ORDER BY bad5;`, []string{
			"UNRESOLVED_COLUMN@f1.sql:4:22",
			"UNRESOLVED_COLUMN@f1.sql:7:20",
			"UNRESOLVED_COLUMN@f1.sql:8:13",
			"UNRESOLVED_COLUMN@f1.sql:9:12",
			"UNRESOLVED_COLUMN@f1.sql:10:10",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, problems := loadSQL(t, t.TempDir(), c.sql)
			var got []string
			for _, p := range problems {
				got = append(got, fmt.Sprintf("%s@%s:%d:%d", p.Code, p.File, p.Line, p.Column))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(c.want, "\n"), problems)
			}
		})
	}
}

// TestProblemsOfWhatFailedAndOfTheRest: the problems of what loaded are all
// reported beside those of what failed, even under the same names; a
// problem is reported once; what a Go program adds after loading counts.
func TestProblemsOfWhatFailedAndOfTheRest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1}`+"\n")
	codes := func(ps domain.Problems) []string {
		var out []string
		for _, p := range ps {
			out = append(out, string(p.Code))
		}
		return out
	}
	// A flow named as a dataset that failed has problems of its own.
	p, loaded := loadSQL(t, dir, `
CREATE MATERIALIZED VIEW x AS SELECT nope FROM read_files('in', format => 'json');
CREATE STREAMING TABLE u (id BIGINT);
CREATE FLOW x DEPENDS ON (typo) AS INSERT INTO u BY NAME SELECT id FROM STREAM read_files('in', format => 'json');`)
	if got := codes(AllProblems(p, loaded)); !cmp.Equal(got, []string{"UNRESOLVED_COLUMN", "DEPENDS_ON_UNKNOWN_FLOW"}) {
		t.Errorf("problems %v", got)
	}
	// A table with a failed flow and a good one keeps its own problems.
	p, loaded = loadSQL(t, dir, `
CREATE STREAMING TABLE t (id BIGINT, CONSTRAINT c EXPECT (id > 0), CONSTRAINT c EXPECT (id < 10));
CREATE FLOW a AS INSERT INTO t BY NAME SELECT id FROM STREAM read_files('in', format => 'json');
CREATE FLOW b AS INSERT INTO t BY NAME SELECT nope AS id FROM STREAM read_files('in', format => 'json');`)
	if got := codes(AllProblems(p, loaded)); !cmp.Equal(got, []string{"UNRESOLVED_COLUMN", "PIPELINE_DUPLICATE_IDENTIFIERS"}) {
		t.Errorf("problems %v", got)
	}
	// Loading reports its own problems only: a flow added in Go after it
	// fills the table, and nothing is said twice.
	p, loaded = loadSQL(t, dir, `
CREATE STREAMING TABLE t (id BIGINT);
CREATE MATERIALIZED VIEW m AS SELECT nope FROM read_files('in', format => 'json');`)
	p.AppendFlow("t", StreamFrom(sources.Range(0, 3)), Name("go_flow"))
	if got := codes(AllProblems(p, loaded)); !cmp.Equal(got, []string{"UNRESOLVED_COLUMN"}) {
		t.Errorf("problems %v", got)
	}
	if got := codes(p.Validate()); !cmp.Equal(got, []string{"PIPELINE_INCOMPLETE"}) {
		t.Errorf("Validate after a failed load: %v, want only PIPELINE_INCOMPLETE", got)
	}
}
