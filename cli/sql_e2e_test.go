package cli_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests of SQL pipelines: the sluice binary on the pipelines
// under testdata/sql, each a pipeline.yaml, .sql files and data.

// newSQLPipeline copies testdata/sql/name into a fresh directory.
func newSQLPipeline(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "sql", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editFile replaces old with new in a file of the pipeline, once.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), old) {
		t.Fatalf("%s does not hold %q", path, old)
	}
	writeFile(t, path, strings.Replace(string(text), old, new, 1))
}

// sqlEvents is `sluice events --format jsonl` with args, decoded.
func sqlEvents(t *testing.T, dir string, args ...string) []event {
	t.Helper()
	out := must(t, 0, sluice, dir, append([]string{"events", "--format", "jsonl"}, args...)...).stdout
	var evs []event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("events line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// flowProgress is the details of a flow_progress event.
type flowProgress struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Metrics struct {
		NumOutputRows int64 `json:"num_output_rows"`
		NumBatches    int64 `json:"num_batches"`
	} `json:"metrics"`
	DataQuality *struct {
		DroppedRecords int64 `json:"dropped_records"`
		Expectations   []struct {
			Name          string `json:"name"`
			Dataset       string `json:"dataset"`
			PassedRecords int64  `json:"passed_records"`
			FailedRecords int64  `json:"failed_records"`
		} `json:"expectations"`
	} `json:"data_quality"`
}

// progress is one flow_progress event of a flow, with its seq.
type progress struct {
	seq uint64
	flowProgress
	err *struct{ Code, Message, Hint string }
}

// flowProgresses gives the flow_progress events of an update ("last" or an
// id) by flow, in log order.
func flowProgresses(t *testing.T, dir, update string) map[string][]progress {
	t.Helper()
	out := map[string][]progress{}
	for _, ev := range sqlEvents(t, dir, "--type", "flow_progress", "--update", update) {
		var fp flowProgress
		if err := json.Unmarshal(ev.Details["flow_progress"], &fp); err != nil {
			t.Fatal(err)
		}
		flow := ev.Origin["flow_name"].(string)
		out[flow] = append(out[flow], progress{seq: ev.Seq, flowProgress: fp, err: ev.Error})
	}
	return out
}

// final is each flow's last status in an update: "STATUS" or
// "STATUS (REASON)".
func final(fps map[string][]progress) map[string]string {
	out := map[string]string{}
	for flow, ps := range fps {
		p := ps[len(ps)-1]
		out[flow] = p.Status
		if p.Reason != "" {
			out[flow] += " (" + p.Reason + ")"
		}
	}
	return out
}

// seqOf is the seq of a flow's first event with status in an update.
func seqOf(t *testing.T, fps map[string][]progress, flow, status string) uint64 {
	t.Helper()
	for _, p := range fps[flow] {
		if p.Status == status {
			return p.seq
		}
	}
	t.Fatalf("flow %s has no %s event: %+v", flow, status, fps[flow])
	return 0
}

// tableRows is `sluice table NAME --format jsonl` with args.
func tableRows(t *testing.T, dir, table string, args ...string) string {
	t.Helper()
	return must(t, 0, sluice, dir, append([]string{"table", table, "--format", "jsonl"}, args...)...).stdout
}

func lines(s string) int { return strings.Count(s, "\n") }

func wantFinal(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for flow, st := range want {
		if got[flow] != st {
			t.Errorf("%s: flow %s is %q, want %q (all: %v)", what, flow, got[flow], st, got)
		}
	}
}

// TestSQLTablesAndEvents runs an SQL pipeline (a streaming table from
// read_files with expectations, a temporary view, a materialized view with a
// join and an aggregate) and reads its tables and events back.
func TestSQLTablesAndEvents(t *testing.T) {
	dir := newSQLPipeline(t, "shop")
	r := must(t, 0, sluice, dir, "run")
	for _, s := range []string{"flows: 2 COMPLETED", "rows written: by_country 3, orders 5"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("run's stderr does not say %q:\n%s", s, r.stderr)
		}
	}
	golden(t, "sql_shop_orders.jsonl", tableRows(t, dir, "orders"))
	golden(t, "sql_shop_by_country.jsonl", tableRows(t, dir, "by_country"))
	golden(t, "sql_shop_by_country.table", must(t, 0, sluice, dir, "table", "by_country").stdout)
	golden(t, "sql_shop_events_orders.jsonl", normalize(must(t, 0, sluice, dir, "events", "--flow", "orders", "--format", "jsonl").stdout, dir))

	evs := sqlEvents(t, dir)
	datasets := map[string]bool{}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) || ev.ID == "" || ev.Timestamp.IsZero() || ev.Level == "" || ev.Message == "" || ev.Details[ev.Type] == nil {
			t.Errorf("event %d has an incomplete envelope: %+v", i, ev)
		}
		if ev.Origin["pipeline_name"] != "shop" {
			t.Errorf("event %d: origin %v", ev.Seq, ev.Origin)
		}
		if ev.Type == "dataset_definition" {
			datasets[ev.Origin["dataset_name"].(string)] = true
		}
	}
	// The temporary view is inlined into its reader: no dataset, no table.
	if len(datasets) != 2 || !datasets["orders"] || !datasets["by_country"] {
		t.Errorf("datasets defined: %v, want orders and by_country", datasets)
	}
	r = must(t, 2, sluice, dir, "table", "customers")
	if !strings.Contains(r.stderr, "TABLE_OR_VIEW_NOT_FOUND") {
		t.Errorf("table customers (a temporary view):\n%s", r.stderr)
	}

	// The expectations: one row without a customer dropped, one with a
	// quantity of 0 kept and counted.
	fps := flowProgresses(t, dir, "last")
	last := fps["orders"][len(fps["orders"])-1]
	if last.Status != "COMPLETED" || last.Metrics.NumOutputRows != 5 || last.DataQuality == nil {
		t.Fatalf("the last flow_progress of orders: %+v", last)
	}
	dq := last.DataQuality
	got := map[string][2]int64{}
	for _, e := range dq.Expectations {
		if e.Dataset != "orders" {
			t.Errorf("expectation %s of dataset %q", e.Name, e.Dataset)
		}
		got[e.Name] = [2]int64{e.PassedRecords, e.FailedRecords}
	}
	if dq.DroppedRecords != 1 || len(got) != 2 || got["has_customer"][1] != 1 || got["enough_qty"][1] != 1 ||
		got["has_customer"][0]+got["has_customer"][1] != 6 || got["enough_qty"][0]+got["enough_qty"][1] != 6 {
		t.Errorf("data_quality of orders: dropped %d, expectations (passed, failed) %v", dq.DroppedRecords, got)
	}
	if st := final(fps)["by_country"]; st != "COMPLETED" {
		t.Errorf("by_country: %s", st)
	}
	must(t, 0, sluice, dir, "replay", "--verify")

	// A second run with nothing new: the view is not recomputed, the
	// tables are unchanged.
	must(t, 0, sluice, dir, "run")
	if fp := flowProgresses(t, dir, "last")["by_country"]; fp[len(fp)-1].Metrics.NumBatches != 0 {
		t.Errorf("by_country was recomputed with no new input: %+v", fp[len(fp)-1])
	}
	golden(t, "sql_shop_by_country.jsonl", tableRows(t, dir, "by_country"))
}

// TestSQLExpectationFailsUpdate: a row failing an ON VIOLATION FAIL UPDATE
// expectation fails the flow with the row shown; nothing is committed and
// the view downstream is skipped.
func TestSQLExpectationFailsUpdate(t *testing.T) {
	dir := newSQLPipeline(t, "shop")
	editFile(t, filepath.Join(dir, "orders.sql"), "EXPECT (qty >= ${min_qty})", "EXPECT (qty >= ${min_qty}) ON VIOLATION FAIL UPDATE")
	r := must(t, 1, sluice, dir, "run")
	for _, s := range []string{"[EXPECTATION_VIOLATION]", `flow "orders" failed`, "enough_qty (qty >= 1)", "id=3", "qty=0", "hint:"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, r.stderr)
		}
	}
	wantFinal(t, "a failed expectation", final(flowProgresses(t, dir, "last")), map[string]string{"orders": "FAILED", "by_country": "SKIPPED (UPSTREAM_FAILED)"})
	if got := tableRows(t, dir, "orders"); got != "" {
		t.Errorf("orders holds rows of the failed batch:\n%s", got)
	}
}

// TestSQLValidateProblems validates a pipeline with problems in three files
// at once: each has its code, message, file, line, column and hint.
func TestSQLValidateProblems(t *testing.T) {
	dir := newSQLPipeline(t, "broken")
	r := must(t, 2, sluice, dir, "validate", "--format", "json")
	golden(t, "sql_validate_problems.json", normalize(r.stdout, dir))
	var problems []struct {
		Code, Message, File, Hint string
		Line, Column              int
	}
	if err := json.Unmarshal([]byte(r.stdout), &problems); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	codes := map[string]string{}
	for _, p := range problems {
		if p.Code == "" || p.Message == "" || p.File == "" || p.Line == 0 || p.Column == 0 || p.Hint == "" {
			t.Errorf("incomplete problem: %+v", p)
		}
		codes[p.Code] = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
	for code, at := range map[string]string{
		"UNRESOLVED_COLUMN":       "ingest.sql:3:15",
		"TABLE_OR_VIEW_NOT_FOUND": "ingest.sql:7:39",
		"AUTOCDC_UNKNOWN_COLUMN":  "ingest.sql:13:1",
		"PARSE_SYNTAX_ERROR":      "syntax.sql:3:1",
		"DATATYPE_MISMATCH":       "types.sql:3:21",
		"WRONG_NUM_ARGS":          "types.sql:7:8",
	} {
		if codes[code] != at {
			t.Errorf("%s at %q, want %s", code, codes[code], at)
		}
	}
	// The text form, on stderr, for people.
	r = must(t, 2, sluice, dir, "validate")
	for _, s := range []string{"6 problem(s)", "ingest.sql:3:15", "did you mean `customer`?", "did you mean `orders`?", "did you mean SELECT?", "hint:"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("validate's text does not say %q:\n%s", s, r.stderr)
		}
	}
	// Neither validate nor a refused run touches the storage.
	must(t, 2, sluice, dir, "run")
	if _, err := os.Stat(filepath.Join(dir, ".sluice")); !os.IsNotExist(err) {
		t.Errorf("an invalid pipeline got a storage: %v", err)
	}

	// A bad field of pipeline.yaml.
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: broken\ndevelopement: true\n")
	r = must(t, 2, sluice, dir, "validate", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &problems); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(problems) == 0 || problems[0].Code != "PIPELINE_CONFIG_INVALID" || !strings.HasSuffix(problems[0].File, "pipeline.yaml") ||
		problems[0].Line != 2 || problems[0].Column != 1 || !strings.Contains(problems[0].Message, "did you mean development?") || problems[0].Hint == "" {
		t.Errorf("a bad pipeline.yaml field: %+v", problems)
	}
	// ... and the SQL files are checked in the same run.
	if len(problems) != 7 || problems[2].Code != "UNRESOLVED_COLUMN" {
		t.Errorf("with a bad pipeline.yaml field, the SQL files' problems are not all reported: %+v", problems)
	}
}

// TestSQLRowErrors fails an SQL flow on a row-level error: exit 1, stderr
// names the code, the flow, the .sql file and line of the expression and the
// values; nothing of the batch is committed. After the fix, --refresh-failed
// reruns the flow.
func TestSQLRowErrors(t *testing.T) {
	bad := `{"id": 3, "code": "x7", "qty": 0, "amount": 5, "big": 9223372036854775800}` + "\n"
	for _, c := range []struct {
		pipeline, table, flow string
		want                  []string // in stderr
		file, old, new        string   // the fix
		fixed                 string   // the bad row, after the fix
	}{
		{"cast_error", "orders", "orders", []string{"[CAST_INVALID_INPUT]", "orders.sql:4:3:", "'x7'", "try_cast"},
			"orders.sql", "CAST(code AS INT)", "TRY_CAST(code AS INT)", `{"id":3,"code":null}`},
		{"divide_by_zero", "orders", "orders", []string{"[DIVIDE_BY_ZERO]", "orders.sql:4:10:", "5.0 / 0.0", "try_divide"},
			"orders.sql", "amount / qty", "try_divide(amount, qty)", `{"id":3,"amount":5,"unit":null}`},
		// a materialized view joining two inputs
		{"overflow", "totals", "totals", []string{"[ARITHMETIC_OVERFLOW]", "totals.sql:4:14:", "9223372036854775800 + 30", "overflows bigint"},
			"totals.sql", "o.big + l.cap", "try_add(o.big, l.cap)", `{"id":3,"cap":30,"total":null}`},
		// a cast in a temporary view of another file than its reader's
		{"view_cast", "totals", "totals", []string{"[CAST_INVALID_INPUT]", "views.sql:4:3:", "'x7'"},
			"views.sql", "CAST(code AS INT)", "TRY_CAST(code AS INT)", `{"id":3,"next":null}`},
	} {
		t.Run(c.pipeline, func(t *testing.T) {
			dir := newSQLPipeline(t, c.pipeline)
			must(t, 0, sluice, dir, "run")
			before := tableRows(t, dir, c.table)
			if lines(before) != 2 {
				t.Fatalf("%s after the first run:\n%s", c.table, before)
			}
			writeFile(t, filepath.Join(dir, "data", "orders", "part-0002.json"), bad)
			r := must(t, 1, sluice, dir, "run")
			for _, s := range append(c.want, fmt.Sprintf("flow %q failed", c.flow), "hint:", "FAILED") {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "expression:") {
				t.Errorf("the error is not placed in the .sql file:\n%s", r.stderr)
			}
			if got := tableRows(t, dir, c.table); got != before {
				t.Errorf("the failed batch was committed: %s is\n%s\nwas\n%s", c.table, got, before)
			}
			fp := flowProgresses(t, dir, "last")[c.flow]
			if last := fp[len(fp)-1]; last.Status != "FAILED" || last.err == nil || !strings.Contains(c.want[0], last.err.Code) || last.err.Hint == "" {
				t.Errorf("the last flow_progress of %s: %+v %+v", c.flow, last, last.err)
			}
			editFile(t, filepath.Join(dir, c.file), c.old, c.new)
			must(t, 0, sluice, dir, "run", "--refresh-failed")
			if st := final(flowProgresses(t, dir, "last"))[c.flow]; st != "COMPLETED" {
				t.Errorf("--refresh-failed: %s is %s", c.flow, st)
			}
			if got := tableRows(t, dir, c.table); got != before+c.fixed+"\n" {
				t.Errorf("%s after the fix:\n%s\nwant\n%s%s", c.table, got, before, c.fixed)
			}
			must(t, 0, sluice, dir, "replay", "--verify")
		})
	}
}

// TestSQLRuntimeRules holds the scheduling rules in SQL: DEPENDS ON orders
// the flows, an INSERT INTO ONCE flow runs once, full refreshes, checkpoint
// resets, refresh selection and --refresh-failed.
func TestSQLRuntimeRules(t *testing.T) {
	dir := newSQLPipeline(t, "rules")
	events := func() string { return tableRows(t, dir, "events") }
	ids := func(table string) []int {
		t.Helper()
		var out []int
		for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, table)), "\n") {
			var row struct{ ID int }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %q: %v", table, line, err)
			}
			out = append(out, row.ID)
		}
		sort.Ints(out)
		return out
	}
	wantIDs := func(what, table string, want ...int) {
		t.Helper()
		if got := ids(table); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %s holds ids %v, want %v", what, table, got, want)
		}
	}

	// Ordering: live (DEPENDS ON backfill) starts after backfill completed;
	// totals, reading events, after both of its writers.
	must(t, 0, sluice, dir, "run")
	fps := flowProgresses(t, dir, "last")
	wantFinal(t, "first run", final(fps), map[string]string{"backfill": "COMPLETED", "live": "COMPLETED", "live_copy": "COMPLETED", "totals": "COMPLETED"})
	if s, done := seqOf(t, fps, "live", "STARTING"), seqOf(t, fps, "backfill", "COMPLETED"); s < done {
		t.Errorf("live started at seq %d, before backfill completed at %d", s, done)
	}
	for _, writer := range []string{"backfill", "live"} {
		if s, done := seqOf(t, fps, "totals", "STARTING"), seqOf(t, fps, writer, "COMPLETED"); s < done {
			t.Errorf("totals started at seq %d, before %s completed at %d", s, writer, done)
		}
	}
	wantIDs("first run", "events", 1, 2, 3)
	first := events()

	// Once: the drained backfill is skipped, even with new history.
	writeFile(t, filepath.Join(dir, "data", "history", "2024.json"), `{"id": 0, "amount": "5"}`+"\n")
	must(t, 0, sluice, dir, "run")
	wantFinal(t, "second run", final(flowProgresses(t, dir, "last")), map[string]string{"backfill": "SKIPPED (ONCE_FLOW_ALREADY_DRAINED)", "live": "COMPLETED"})
	if got := events(); got != first {
		t.Errorf("the second run changed events:\n%s", got)
	}

	// A full refresh of events empties it and refills it: the backfill
	// runs again, and reads the new history.
	must(t, 0, sluice, dir, "run", "--full-refresh", "events")
	wantFinal(t, "--full-refresh events", final(flowProgresses(t, dir, "last")), map[string]string{"backfill": "COMPLETED", "live": "COMPLETED", "live_copy": "EXCLUDED", "totals": "EXCLUDED"})
	wantIDs("--full-refresh events", "events", 0, 1, 2, 3)
	resets := sqlEvents(t, dir, "--type", "table_reset", "--update", "last")
	if len(resets) != 1 || resets[0].Origin["dataset_name"] != "events" {
		t.Errorf("table_reset events of --full-refresh events: %+v", resets)
	}

	// A checkpoint reset rereads live's files into the table as it is; the
	// drained backfill stays drained.
	must(t, 0, sluice, dir, "run", "--reset-checkpoint", "live")
	wantFinal(t, "--reset-checkpoint live", final(flowProgresses(t, dir, "last")), map[string]string{"backfill": "SKIPPED (ONCE_FLOW_ALREADY_DRAINED)", "live": "COMPLETED"})
	wantIDs("--reset-checkpoint live", "events", 0, 1, 2, 3, 3)
	if got := tableRows(t, dir, "totals"); got != `{"events":5,"amount":95}`+"\n" {
		t.Errorf("totals after the checkpoint reset: %s", got)
	}

	// --full-refresh-all runs the once flow again, and rebuilds every table.
	must(t, 0, sluice, dir, "run", "--full-refresh-all")
	wantFinal(t, "--full-refresh-all", final(flowProgresses(t, dir, "last")), map[string]string{"backfill": "COMPLETED", "live": "COMPLETED", "live_copy": "COMPLETED", "totals": "COMPLETED"})
	wantIDs("--full-refresh-all", "events", 0, 1, 2, 3)
	wantIDs("--full-refresh-all", "live_copy", 3)

	// --refresh selects datasets: every other flow is EXCLUDED.
	must(t, 0, sluice, dir, "run", "--refresh", "live_copy")
	wantFinal(t, "--refresh live_copy", final(flowProgresses(t, dir, "last")), map[string]string{"backfill": "EXCLUDED", "live": "EXCLUDED", "live_copy": "COMPLETED", "totals": "EXCLUDED"})

	// A bad live file fails live; totals, downstream, is skipped; live_copy,
	// which does not cast, reads it.
	writeFile(t, filepath.Join(dir, "data", "live", "2026-12-02.json"), `{"id": 4, "amount": "four"}`+"\n")
	r := must(t, 1, sluice, dir, "run")
	if !strings.Contains(r.stderr, "CAST_INVALID_INPUT") || !strings.Contains(r.stderr, "events.sql:9:12") {
		t.Errorf("the failed run:\n%s", r.stderr)
	}
	wantFinal(t, "a bad live file", final(flowProgresses(t, dir, "last")), map[string]string{"backfill": "SKIPPED (ONCE_FLOW_ALREADY_DRAINED)", "live": "FAILED", "live_copy": "COMPLETED", "totals": "SKIPPED (UPSTREAM_FAILED)"})
	wantIDs("a bad live file", "events", 0, 1, 2, 3)
	wantIDs("a bad live file", "live_copy", 3, 4)
	// Fixed, --refresh-failed reruns live and what is downstream of it.
	editFile(t, filepath.Join(dir, "events.sql"), "SELECT id, CAST(amount AS INT) AS amount\nFROM STREAM", "SELECT id, TRY_CAST(amount AS INT) AS amount\nFROM STREAM")
	must(t, 0, sluice, dir, "run", "--refresh-failed")
	wantFinal(t, "--refresh-failed", final(flowProgresses(t, dir, "last")), map[string]string{"live": "COMPLETED", "totals": "COMPLETED", "live_copy": "EXCLUDED"})
	wantIDs("--refresh-failed", "events", 0, 1, 2, 3, 4)
	if got := tableRows(t, dir, "totals"); got != `{"events":5,"amount":65}`+"\n" {
		t.Errorf("totals after --refresh-failed: %s", got)
	}
	must(t, 0, sluice, dir, "replay", "--verify")
}

// TestSQLResetNotAllowed: a table with pipelines.reset.allowed = 'false' in
// its TBLPROPERTIES is not fully refreshed: the update is refused and the
// table keeps its rows.
func TestSQLResetNotAllowed(t *testing.T) {
	dir := newSQLPipeline(t, "kept")
	must(t, 0, sluice, dir, "run")
	before := tableRows(t, dir, "kept")
	for _, args := range [][]string{{"--full-refresh", "kept"}, {"--full-refresh-all"}} {
		r := must(t, 2, sluice, dir, append([]string{"run"}, args...)...)
		if !strings.Contains(r.stderr, "TABLE_NOT_RESETTABLE") || !strings.Contains(r.stderr, `"kept"`) {
			t.Errorf("run %v:\n%s", args, r.stderr)
		}
		if got := tableRows(t, dir, "kept"); got != before {
			t.Errorf("run %v changed kept:\n%s", args, got)
		}
	}
	// The other table can be refreshed alone.
	must(t, 0, sluice, dir, "run", "--full-refresh", "other")
	wantFinal(t, "--full-refresh other", final(flowProgresses(t, dir, "last")), map[string]string{"other": "COMPLETED", "kept": "EXCLUDED"})
	if got := tableRows(t, dir, "kept"); got != before {
		t.Errorf("kept after a full refresh of other:\n%s", got)
	}
	if got := tableRows(t, dir, "other"); lines(got) != 2 {
		t.Errorf("other after its full refresh:\n%s", got)
	}
}

// TestSQLAsOf reads SQL tables as of a seq and a time between two runs.
func TestSQLAsOf(t *testing.T) {
	dir := newSQLPipeline(t, "shop")
	must(t, 0, sluice, dir, "run")
	evs := sqlEvents(t, dir)
	seq := strconv.FormatUint(evs[len(evs)-1].Seq, 10)
	orders, byCountry := tableRows(t, dir, "orders"), tableRows(t, dir, "by_country")
	time.Sleep(20 * time.Millisecond)
	between := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(20 * time.Millisecond)
	writeFile(t, filepath.Join(dir, "data", "orders", "part-0002.json"),
		`{"id": 7, "customer": "bob", "qty": 2, "price": "5.00", "ts": "2026-12-04T08:00:00Z"}`+"\n")
	must(t, 0, sluice, dir, "run")
	if got := tableRows(t, dir, "orders"); lines(got) != 6 || !strings.HasPrefix(got, orders) {
		t.Errorf("orders after the second run:\n%s", got)
	}
	if got := tableRows(t, dir, "by_country"); got == byCountry {
		t.Errorf("by_country was not recomputed:\n%s", got)
	}
	for _, at := range []string{seq, between} {
		if got := tableRows(t, dir, "orders", "--as-of", at); got != orders {
			t.Errorf("orders as of %s:\n%s\nwant\n%s", at, got, orders)
		}
		if got := tableRows(t, dir, "by_country", "--as-of", at); got != byCountry {
			t.Errorf("by_country as of %s:\n%s\nwant\n%s", at, got, byCountry)
		}
	}
	must(t, 2, sluice, dir, "table", "orders", "--as-of", "2000-01-01")
}

// TestSQLKilledRuns kills `sluice run` with SIGKILL at random moments of a
// run over many files, then runs it to completion: every input row is in
// each table exactly once, and the projections match the log.
func TestSQLKilledRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a large input")
	}
	const files, rows = 150, 200
	input := func(f int) string {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := f*rows + r
			fmt.Fprintf(&b, `{"id": %d, "user": "u%d", "amount": %d}`+"\n", id, id%13, id%100)
		}
		return b.String()
	}
	land := func(dir string, from, to int) {
		for f := from; f < to; f++ {
			writeFile(t, filepath.Join(dir, "data", "in", fmt.Sprintf("part-%04d.json", f)), input(f))
		}
	}
	// A clean run sets the scale of the kill delays: the time from the
	// ingest's start to its end, as its progress lines say.
	calibrate := newSQLPipeline(t, "crash")
	land(calibrate, 0, files)
	progress := must(t, 0, sluice, calibrate, "run", "--live=false").stderr
	var began, ended time.Duration
	for _, line := range strings.Split(progress, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "events" {
			continue
		}
		at, err := time.ParseDuration(f[0])
		if err != nil {
			continue
		}
		switch f[2] {
		case "RUNNING":
			began = at
		case "COMPLETED,":
			ended = at
		}
	}
	full := 2 * max(ended-began, 10*time.Millisecond)
	t.Logf("a clean ingest takes %s", full/2)

	// The files land in four parts, one before each of the first four
	// runs. Each run is killed at a random moment after its ingest started
	// (within a quarter of a clean ingest, as one part takes about a
	// quarter), until three runs were killed or twelve ran.
	dir := newSQLPipeline(t, "crash")
	const parts = 4
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	kills := 0
	for attempt := 0; attempt < 12 && (attempt < parts || kills < 3); attempt++ {
		if attempt < parts {
			land(dir, attempt*files/parts, (attempt+1)*files/parts)
		}
		cmd := exec.Command(sluice, "run", "--live=false")
		cmd.Dir = dir
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		sc := bufio.NewScanner(stderr)
		killed := false
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if f := strings.Fields(sc.Text()); len(f) >= 3 && f[1] == "events" && f[2] == "RUNNING" {
				time.Sleep(time.Duration(rng.Int63n(int64(full / 8))))
				killed = cmd.Process.Signal(syscall.SIGKILL) == nil
				break
			}
		}
		rest, _ := io.ReadAll(stderr)
		out.Write(rest)
		err = cmd.Wait()
		var ee *exec.ExitError
		switch {
		case killed && errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled():
			kills++
		case err != nil:
			t.Fatalf("attempt %d failed on its own: %v\n%s", attempt, err, out.String())
		}
	}
	t.Logf("%d kills", kills)
	if kills == 0 {
		t.Error("no run was killed")
	}
	must(t, 0, sluice, dir, "run")
	must(t, 0, sluice, dir, "replay", "--verify")

	for _, table := range []string{"events", "doubled"} {
		seen := map[int]int{}
		for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, table)), "\n") {
			var row struct{ ID int }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %q: %v", table, line, err)
			}
			seen[row.ID]++
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s holds row %d %d times", table, id, n)
			}
		}
		if len(seen) != files*rows {
			t.Errorf("%s holds %d distinct rows, want %d", table, len(seen), files*rows)
		}
	}
	// The materialized view over events counts every row once.
	var n int
	for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, "per_user")), "\n") {
		var row struct{ Events int }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		n += row.Events
	}
	if n != files*rows {
		t.Errorf("per_user counts %d events, want %d", n, files*rows)
	}
}

// TestSQLChangedQuery: a materialized view whose query changed is computed
// again though its inputs did not change; a streaming table whose query
// changed goes on from its checkpoint, and the update says so.
func TestSQLChangedQuery(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: changed\n")
	writeFile(t, filepath.Join(dir, "data", "a.json"), `{"a": 1}`+"\n"+`{"a": 2}`+"\n")
	writeFile(t, filepath.Join(dir, "p.sql"), `CREATE OR REFRESH STREAMING TABLE raw AS SELECT a FROM STREAM read_files('data', format => 'json');
CREATE OR REFRESH MATERIALIZED VIEW agg AS SELECT sum(a) AS s FROM raw;
`)
	must(t, 0, sluice, dir, "run")
	if got := tableRows(t, dir, "agg"); got != `{"s":3}`+"\n" {
		t.Fatalf("agg: %s", got)
	}
	// Spacing and keyword case are no change.
	editFile(t, filepath.Join(dir, "p.sql"), "SELECT sum(a) AS s FROM raw", "select   sum(a) as s\n  from raw")
	must(t, 0, sluice, dir, "run")
	if n := len(sqlEvents(t, dir, "--type", "batch_committed", "--flow", "agg")); n != 1 {
		t.Errorf("agg was computed %d times, want once: its query did not change", n)
	}
	editFile(t, filepath.Join(dir, "p.sql"), "sum(a) as s", "max(a) AS mx")
	editFile(t, filepath.Join(dir, "p.sql"), "SELECT a FROM STREAM", "SELECT a * 10 AS a FROM STREAM")
	writeFile(t, filepath.Join(dir, "data", "b.json"), `{"a": 3}`+"\n")
	must(t, 0, sluice, dir, "run")
	if got := tableRows(t, dir, "agg"); got != `{"mx":30}`+"\n" {
		t.Errorf("agg after its query changed: %s, want {\"mx\":30}", got)
	}
	var said bool
	for _, ev := range sqlEvents(t, dir, "--type", "planning_information", "--flow", "raw") {
		said = said || strings.Contains(ev.Message, "changed")
	}
	if !said {
		t.Error("no planning_information says that the query of raw changed")
	}
	if got := tableRows(t, dir, "raw"); got != `{"a":1}`+"\n"+`{"a":2}`+"\n"+`{"a":30}`+"\n" {
		t.Errorf("raw: %s (it goes on from its checkpoint)", got)
	}
}
