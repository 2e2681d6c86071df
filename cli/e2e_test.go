package cli_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The binaries under test: gopipeline (a Go pipeline through cli.Main) and
// sluice itself.
var gopipeline, sluice string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "sluice-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gopipeline, sluice = filepath.Join(dir, "gopipeline"), filepath.Join(dir, "sluice")
	for bin, pkg := range map[string]string{gopipeline: "../internal/gopipeline", sluice: "../cmd/sluice"} {
		// -buildvcs=auto: the VCS revision sluice version shows is recorded
		// in a checkout, even where GOFLAGS turns it off.
		if out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs bin with args in dir and returns its exit code and output.
func run(t *testing.T, bin, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s %v: %v", bin, args, err)
	}
	return r
}

// must runs a command that must exit with code, and returns its stdout.
func must(t *testing.T, code int, bin, dir string, args ...string) result {
	t.Helper()
	r := run(t, bin, dir, args...)
	if r.code != code {
		t.Fatalf("%s %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

// newPipeline copies testdata/orders into a fresh directory.
func newPipeline(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/orders")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestTableFormats(t *testing.T) {
	dir := newPipeline(t)
	r := must(t, 0, gopipeline, dir, "run")
	for _, s := range []string{"orders", "COMPLETED", "update", "flows: 4 COMPLETED", "rows written: export 5, orders 5, totals 3, typed 5"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("run's stderr does not say %q:\n%s", s, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("run wrote to stdout: %q", r.stdout)
	}
	for _, c := range []struct{ table, format string }{
		{"typed", "jsonl"}, {"typed", "csv"}, {"typed", "table"}, {"totals", "table"}, {"totals", "jsonl"},
	} {
		got := must(t, 0, gopipeline, dir, "table", c.table, "--format", c.format).stdout
		golden(t, c.table+"."+c.format, got)
	}
	if got := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl", "--limit", "2").stdout; strings.Count(got, "\n") != 2 {
		t.Errorf("--limit 2 printed:\n%s", got)
	}
	// Every jsonl line is a JSON object.
	for _, line := range strings.Split(strings.TrimSpace(must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("not JSON: %s: %v", line, err)
		}
	}
	r = must(t, 2, gopipeline, dir, "table", "typd")
	if !strings.Contains(r.stderr, "TABLE_OR_VIEW_NOT_FOUND") || !strings.Contains(r.stderr, `did you mean "typed"?`) {
		t.Errorf("unknown table:\n%s", r.stderr)
	}
	must(t, 2, gopipeline, dir, "table", "typed", "--format", "xml")
	must(t, 0, gopipeline, dir, "replay", "--verify")
}

// event is the envelope of `events --format jsonl`.
type event struct {
	Seq       uint64                     `json:"seq"`
	ID        string                     `json:"id"`
	Timestamp time.Time                  `json:"timestamp"`
	Type      string                     `json:"event_type"`
	Level     string                     `json:"level"`
	Message   string                     `json:"message"`
	Origin    map[string]any             `json:"origin"`
	Details   map[string]json.RawMessage `json:"details"`
	Error     *struct {
		Code, Message, Hint string
	} `json:"error"`
}

func events(t *testing.T, dir string, args ...string) []event {
	t.Helper()
	out := must(t, 0, gopipeline, dir, append([]string{"events", "--format", "jsonl"}, args...)...).stdout
	var evs []event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev event
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("events line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// flowStatus is the status of each flow_progress event, by flow: the last one.
func flowStatus(t *testing.T, evs []event) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ev := range evs {
		if raw, ok := ev.Details["flow_progress"]; ok {
			var fp struct{ Status string }
			if err := json.Unmarshal(raw, &fp); err != nil {
				t.Fatal(err)
			}
			out[ev.Origin["flow_name"].(string)] = fp.Status
		}
	}
	return out
}

func TestEventsJSONL(t *testing.T) {
	dir := newPipeline(t)
	must(t, 0, gopipeline, dir, "run")
	evs := events(t, dir)
	if len(evs) < 20 {
		t.Fatalf("only %d events", len(evs))
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) || ev.ID == "" || ev.Timestamp.IsZero() || ev.Timestamp.Location() != time.UTC || ev.Level == "" || ev.Message == "" {
			t.Errorf("event %d has an incomplete envelope: %+v", i, ev)
		}
		if len(ev.Details) != 1 || ev.Details[ev.Type] == nil {
			t.Errorf("event %d: details not keyed by its type %q: %v", ev.Seq, ev.Type, ev.Details)
		}
		if ev.Origin["pipeline_name"] != "orders" || ev.Origin["update_id"] == "" {
			t.Errorf("event %d: origin %v", ev.Seq, ev.Origin)
		}
	}
	// flow_progress of a completed flow: {"status": "COMPLETED", "metrics": {"num_output_rows": N}}
	fp := events(t, dir, "--type", "flow_progress", "--flow", "typed")
	last := fp[len(fp)-1]
	var d struct {
		Status  string
		Metrics struct {
			NumOutputRows int64 `json:"num_output_rows"`
		}
	}
	if err := json.Unmarshal(last.Details["flow_progress"], &d); err != nil {
		t.Fatal(err)
	}
	if d.Status != "COMPLETED" || d.Metrics.NumOutputRows != 5 {
		t.Errorf("last flow_progress of typed: %s", last.Details["flow_progress"])
	}
	for _, ev := range fp {
		if ev.Type != "flow_progress" || ev.Origin["flow_name"] != "typed" {
			t.Errorf("filtered events hold %s of %v", ev.Type, ev.Origin["flow_name"])
		}
	}
	// Filters: --update last, --since, --dataset; the table format.
	must(t, 0, gopipeline, dir, "run")
	second := events(t, dir, "--update", "last")
	if second[0].Type != "create_update" || second[0].Origin["update_id"] == evs[0].Origin["update_id"] {
		t.Errorf("--update last starts with %+v", second[0])
	}
	prefix := evs[0].Origin["update_id"].(string)[:8]
	if got := events(t, dir, "--update", prefix); len(got) != len(evs) {
		t.Errorf("--update %s: %d events, want %d", prefix, len(got), len(evs))
	}
	if got := events(t, dir, "--since", "10"); got[0].Seq != 10 {
		t.Errorf("--since 10 starts at %d", got[0].Seq)
	}
	for _, ev := range events(t, dir, "--dataset", "totals") {
		if ev.Origin["dataset_name"] != "totals" {
			t.Errorf("--dataset totals gave %v", ev.Origin)
		}
	}
	table := must(t, 0, gopipeline, dir, "events", "--type", "create_update").stdout
	if strings.Count(table, "create_update") != 2 || !strings.Contains(table, "event_type") {
		t.Errorf("table format:\n%s", table)
	}
	must(t, 2, gopipeline, dir, "events", "--type", "flow_progres")
	must(t, 2, gopipeline, dir, "events", "--update", "nosuchupdate")
}

func TestRefreshOptions(t *testing.T) {
	dir := newPipeline(t)
	must(t, 0, gopipeline, dir, "run")
	status := func(args ...string) map[string]string {
		t.Helper()
		must(t, 0, gopipeline, dir, append([]string{"run"}, args...)...)
		return flowStatus(t, events(t, dir, "--update", "last"))
	}
	if st := status("--refresh", "totals"); st["totals"] != "COMPLETED" || st["orders"] != "EXCLUDED" || st["typed"] != "EXCLUDED" || st["export_orders"] != "EXCLUDED" {
		t.Errorf("--refresh totals: %v", st)
	}
	before := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout
	if st := status("--full-refresh-all"); st["orders"] != "COMPLETED" || st["typed"] != "COMPLETED" {
		t.Errorf("--full-refresh-all: %v", st)
	}
	if after := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout; after != before {
		t.Errorf("a full refresh changed the table:\n%s\nwas:\n%s", after, before)
	}
	if st := status("--full-refresh", "typed"); st["typed"] != "COMPLETED" || st["orders"] != "EXCLUDED" {
		t.Errorf("--full-refresh typed: %v", st)
	}
	if got := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout; got != before {
		t.Errorf("--full-refresh typed: the table is\n%s", got)
	}
	status("--reset-checkpoint", "typed")
	if got := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout; strings.Count(got, "\n") != 10 {
		t.Errorf("a checkpoint reset rereads into the existing table: want 10 rows, got\n%s", got)
	}
	if st := status("--refresh-failed"); len(st) == 0 {
		t.Errorf("--refresh-failed with nothing failed: %v", st)
	}
	for _, args := range [][]string{
		{"--full-refresh-all", "--refresh", "orders"},
		{"--refresh-failed", "--full-refresh", "orders"},
		{"--refresh", "orders", "--full-refresh", "orders"},
		{"--refresh", "nosuch"},
		{"--reset-checkpoint", "nosuch"},
		{"--bogus"},
		{"extra-arg"},
	} {
		r := must(t, 2, gopipeline, dir, append([]string{"run"}, args...)...)
		if !strings.Contains(r.stderr, "error") {
			t.Errorf("run %v: no error shown:\n%s", args, r.stderr)
		}
	}
}

func TestAsOf(t *testing.T) {
	dir := newPipeline(t)
	must(t, 0, gopipeline, dir, "run")
	evs := events(t, dir)
	seq := evs[len(evs)-1].Seq
	time.Sleep(20 * time.Millisecond)
	between := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	extra := `{"id": 6, "customer": "ken", "qty": 4, "amount": 10, "big": 1, "ts": "2026-12-04T08:00:00Z", "day": "2026-12-04"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "data", "part-0002.json"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, 0, gopipeline, dir, "run")
	count := func(args ...string) int {
		t.Helper()
		return strings.Count(must(t, 0, gopipeline, dir, append([]string{"table", "orders", "--format", "jsonl"}, args...)...).stdout, "\n")
	}
	if n := count(); n != 6 {
		t.Errorf("now: %d rows, want 6", n)
	}
	if n := count("--as-of", strconv.FormatUint(seq, 10)); n != 5 {
		t.Errorf("as of seq %d: %d rows, want 5", seq, n)
	}
	if n := count("--as-of", between.Format(time.RFC3339Nano)); n != 5 {
		t.Errorf("as of %s: %d rows, want 5", between.Format(time.RFC3339Nano), n)
	}
	// The materialized view as of the first update holds its first recompute.
	totals := must(t, 0, gopipeline, dir, "table", "totals", "--format", "csv", "--as-of", strconv.FormatUint(seq, 10)).stdout
	if strings.Contains(totals, "ken") {
		t.Errorf("totals as of the first update:\n%s", totals)
	}
	must(t, 2, gopipeline, dir, "table", "orders", "--as-of", "99999")
	must(t, 2, gopipeline, dir, "table", "orders", "--as-of", "yesterday")
	must(t, 2, gopipeline, dir, "table", "orders", "--as-of", "2000-01-01")
}

func TestRowErrorFailsTheUpdate(t *testing.T) {
	dir := newPipeline(t)
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte("name: orders\ndevelopment: true\nconfiguration:\n  strict: \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := must(t, 1, gopipeline, dir, "run")
	for _, s := range []string{"DIVIDE_BY_ZERO", `flow "typed" failed`, "typed.sql:3:10", "5 / 0", "hint:", "FAILED"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, r.stderr)
		}
	}
	if got := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout; got != "" {
		t.Errorf("the failed batch was committed:\n%s", got)
	}
	var failed *event
	for _, ev := range events(t, dir, "--flow", "typed", "--type", "flow_progress") {
		if ev.Error != nil {
			failed = &ev
		}
	}
	if failed == nil || failed.Error.Code != "DIVIDE_BY_ZERO" {
		t.Errorf("no flow_progress of typed with error.code DIVIDE_BY_ZERO: %+v", failed)
	}
	// Fixed, --refresh-failed reruns the failed flow.
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte("name: orders\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, 0, gopipeline, dir, "run", "--refresh-failed")
	if got := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout; strings.Count(got, "\n") != 5 {
		t.Errorf("after the fix:\n%s", got)
	}
}

func TestValidate(t *testing.T) {
	dir := newPipeline(t)
	if got := must(t, 0, gopipeline, dir, "validate", "--format", "json").stdout; strings.TrimSpace(got) != "[]" {
		t.Errorf("valid pipeline: %s", got)
	}
	must(t, 0, gopipeline, dir, "dry-run")
	if _, err := os.Stat(filepath.Join(dir, ".sluice")); !os.IsNotExist(err) {
		t.Errorf("validate touched the storage: %v", err)
	}
	yaml := "name: orders\nlibaries: []\nconfiguration:\n  strict: 1\n"
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := must(t, 2, gopipeline, dir, "validate", "--format", "json")
	var problems []struct {
		Code, Message, File, Hint string
		Line, Column              int
	}
	if err := json.Unmarshal([]byte(r.stdout), &problems); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(problems) != 2 || problems[0].Code != "PIPELINE_CONFIG_INVALID" || problems[0].Line != 2 || problems[1].Line != 4 ||
		!strings.HasSuffix(problems[0].File, "pipeline.yaml") || problems[0].Column == 0 || problems[0].Hint == "" {
		t.Errorf("problems: %+v", problems)
	}
	r = must(t, 2, gopipeline, dir, "validate")
	if !strings.Contains(r.stderr, "pipeline.yaml:2") || !strings.Contains(r.stderr, "did you mean libraries?") {
		t.Errorf("text problems:\n%s", r.stderr)
	}
	must(t, 2, gopipeline, dir, "run")
}

func TestPipelineFlagAndSubdirectories(t *testing.T) {
	dir := newPipeline(t)
	must(t, 0, gopipeline, t.TempDir(), "-p", dir, "run")
	must(t, 0, gopipeline, t.TempDir(), "table", "orders", "-p", dir)
	must(t, 0, gopipeline, t.TempDir(), "table", "orders", "--pipeline="+dir)
	must(t, 0, gopipeline, filepath.Join(dir, "data"), "table", "orders") // found above the working directory
	must(t, 2, gopipeline, t.TempDir(), "-p", filepath.Join(dir, "nowhere"), "run")
}

func TestSluiceBinary(t *testing.T) {
	work := t.TempDir()
	r := must(t, 0, sluice, work, "init", "demo")
	if !strings.Contains(r.stdout, "sluice run") {
		t.Errorf("init says:\n%s", r.stdout)
	}
	for _, f := range []string{"pipeline.yaml", "README.md", "transformations/demo.sql", "data/orders-0001.json"} {
		if _, err := os.Stat(filepath.Join(work, "demo", f)); err != nil {
			t.Errorf("init did not write %s: %v", f, err)
		}
	}
	must(t, 2, sluice, work, "init", "demo") // not empty
	// the pipeline init writes runs, from its directory or from the parent
	must(t, 0, sluice, filepath.Join(work, "demo"), "validate")
	must(t, 0, sluice, filepath.Join(work, "demo"), "run")
	r = must(t, 0, sluice, work, "-p", "demo", "table", "daily_totals", "--format", "jsonl")
	if got := strings.Count(r.stdout, "\n"); got != 3 || !strings.Contains(r.stdout, `"order_date":"2026-12-01","orders":3`) {
		t.Errorf("daily_totals after the first run:\n%s", r.stdout)
	}
	must(t, 0, sluice, work, "-p", "demo", "run")
	r = must(t, 2, sluice, work, "validate")
	if !strings.Contains(r.stderr, "PIPELINE_NOT_FOUND") || !strings.Contains(r.stderr, "sluice init") {
		t.Errorf("validate outside a pipeline:\n%s", r.stderr)
	}
	if got := must(t, 0, sluice, work, "version").stdout; !strings.HasPrefix(got, "sluice ") {
		t.Errorf("version: %q", got)
	}
	must(t, 2, sluice, work, "frobnicate")
	for _, cmd := range []string{"init", "validate", "run", "events", "table", "describe", "replay", "version", "completion"} {
		r := must(t, 0, sluice, work, cmd, "--help")
		if !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%s --help has no examples:\n%s", cmd, r.stdout)
		}
	}
}

// TestKilledRunThenCleanRun kills a run with SIGKILL in the middle, then
// runs again: the clean run completes, the projections match the log, and
// every table holds each row exactly once.
func TestKilledRunThenCleanRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a large input")
	}
	dir := newPipeline(t)
	const files, rows = 120, 250
	for f := 0; f < files; f++ {
		var b strings.Builder
		for r := 0; r < rows; r++ {
			id := 100 + f*rows + r
			fmt.Fprintf(&b, `{"id": %d, "customer": "c%d", "qty": %d, "amount": %d, "big": %d, "ts": "2026-12-01T10:00:00Z", "day": "2026-12-01"}`+"\n", id, id%7, 1+id%3, id, id)
		}
		if err := os.WriteFile(filepath.Join(dir, "data", fmt.Sprintf("bulk-%04d.json", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const want = 5 + files*rows
	// Kill three runs: while orders reads the files, as the flows reading
	// orders start, and a little later.
	kills := 0
	for attempt, at := range []struct {
		flow  string
		delay time.Duration
	}{{"orders", 0}, {"typed", 0}, {"typed", 30 * time.Millisecond}} {
		cmd := exec.Command(gopipeline, "run")
		cmd.Dir = dir
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill once the first micro-batches have committed.
		sc := bufio.NewScanner(stderr)
		killed := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "RUNNING") && strings.Contains(sc.Text(), at.flow) {
				time.Sleep(at.delay)
				killed = cmd.Process.Signal(syscall.SIGKILL) == nil
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		err = cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok && killed && ee.Sys().(syscall.WaitStatus).Signaled() {
			kills++
		} else {
			t.Logf("attempt %d ended on its own: %v", attempt, err)
		}
	}
	if kills == 0 {
		t.Fatal("no run was killed")
	}
	// A killed store is not read behind the reader's back: reading it is
	// refused with the fix, and writes nothing; doctor checks it.
	before := digestTree(t, filepath.Join(dir, ".sluice"))
	r := run(t, gopipeline, dir, "table", "orders")
	if r.code != 1 || !strings.Contains(r.stderr, "STORE_NOT_CLOSED") {
		t.Errorf("table of a killed store: exit %d\n%s", r.code, r.stderr)
	}
	run(t, gopipeline, dir, "events")
	run(t, gopipeline, dir, "replay", "--verify")
	run(t, gopipeline, dir, "doctor")
	if after := digestTree(t, filepath.Join(dir, ".sluice")); after != before {
		t.Error("reading a killed store changed its files")
	}

	r = must(t, 0, gopipeline, dir, "run")
	if !strings.Contains(r.stderr, "COMPLETED") {
		t.Errorf("the clean run:\n%s", r.stderr)
	}
	must(t, 0, gopipeline, dir, "replay", "--verify")
	must(t, 0, gopipeline, dir, "doctor")
	// Every update ended: the killed ones FAILED, because their process ended.
	last := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(must(t, 0, gopipeline, dir, "events", "--type", "update_progress", "--format", "jsonl").stdout), "\n") {
		var e struct {
			Origin struct {
				UpdateID string `json:"update_id"`
			}
			Details struct {
				UpdateProgress struct{ State string } `json:"update_progress"`
			}
			Error *struct{ Code string }
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		last[e.Origin.UpdateID] = e.Details.UpdateProgress.State
		if e.Error != nil {
			last[e.Origin.UpdateID] += " " + e.Error.Code
		}
	}
	ended := 0
	for id, state := range last {
		switch state {
		case "COMPLETED":
		case "FAILED UPDATE_PROCESS_ENDED":
			ended++
		default:
			t.Errorf("update %s ended %q", id, state)
		}
	}
	if ended != kills {
		t.Errorf("%d updates FAILED with UPDATE_PROCESS_ENDED, want one per kill (%d)", ended, kills)
	}
	for _, table := range []string{"orders", "typed"} {
		out := must(t, 0, gopipeline, dir, "table", table, "--format", "jsonl").stdout
		seen := map[int64]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var row struct{ ID int64 }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			if seen[row.ID] {
				t.Errorf("%s holds row %d twice", table, row.ID)
			}
			seen[row.ID] = true
		}
		if len(seen) != want {
			t.Errorf("%s holds %d rows, want %d", table, len(seen), want)
		}
	}
}

// digestTree hashes the names and contents of the files under dir, but the
// lock file every open takes.
func digestTree(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() == "LOCK" {
			return err // the API's socket, which a killed run leaves, is no file to read
		}
		p, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(p))
		h.Write(p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestSecondInterruptExitsAtOnce interrupts a run twice while a sink is busy:
// the second interrupt exits at once with 130; the next run completes and the
// projections match the log.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	dir := newPipeline(t)
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte("name: orders\nconfiguration:\n  sink_delay: 20s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gopipeline, "run", "--continuous")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "export_orders") && strings.Contains(sc.Text(), "RUNNING") {
			break
		}
	}
	// the sink is delivering once it says so (a fixed wait raced the
	// batch's read on a loaded machine)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "export.log.busy")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sink never started delivering")
		}
	}
	start := time.Now()
	_ = cmd.Process.Signal(os.Interrupt)
	time.Sleep(200 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the second interrupt took %s to exit", d)
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte("name: orders\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, 0, gopipeline, dir, "run")
	must(t, 0, gopipeline, dir, "replay", "--verify")
	if got := must(t, 0, gopipeline, dir, "table", "typed", "--format", "jsonl").stdout; strings.Count(got, "\n") != 5 {
		t.Errorf("typed after the restart:\n%s", got)
	}
}

// normalize replaces what changes from run to run (ids, times, temporary
// paths) in command output, for golden files.
func normalize(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "$DIR")
	for _, re := range []struct{ pat, repl string }{
		{`"id":"[0-9a-f-]{36}"`, `"id":"$ID"`},
		{`"update_id":"[0-9a-f-]{36}"`, `"update_id":"$UPDATE"`},
		{`"timestamp":"[^"]+"`, `"timestamp":"$TIME"`},
		{`Update [0-9a-f]{8}`, `Update $UPDATE`},
		{`"seq":[0-9]+`, `"seq":"$SEQ"`},
		{`\b1[0-9]{18}\b`, `"$MTIME"`},                   // file modification times in source offsets
		{`"id":"[0-9a-f]+:[0-9a-f]+"`, `"id":"$FILEID"`}, // a file's device and inode
	} {
		s = regexp.MustCompile(re.pat).ReplaceAllLiteralString(s, re.repl)
	}
	return s
}

func TestGoldenEventsAndProblems(t *testing.T) {
	dir := newPipeline(t)
	must(t, 0, gopipeline, dir, "run")
	golden(t, "events_orders.jsonl", normalize(must(t, 0, gopipeline, dir, "events", "--flow", "orders", "--format", "jsonl").stdout, dir))
	yaml := "name: orders\nlibaries: []\nconfiguration:\n  strict: 1\ncontinuous: maybe\n"
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	golden(t, "validate_problems.json", normalize(must(t, 2, gopipeline, dir, "validate", "--format", "json").stdout, dir))
}

// TestLogLevel: the store's and Badger's log lines reach stderr at
// --log-level, as JSON lines when stderr is no terminal; an unknown level is
// a usage error.
func TestLogLevel(t *testing.T) {
	dir := newSQLPipeline(t, "shop")
	r := must(t, 0, sluice, dir, "run", "--log-level", "debug")
	var badger, store bool
	for _, line := range strings.Split(r.stderr, "\n") {
		var entry struct{ Component, Level string }
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		badger = badger || entry.Component == "badger"
		store = store || entry.Component == "eventstore"
	}
	if !badger || !store {
		t.Errorf("--log-level debug shows no line of badger (%v) or of the store (%v):\n%s", badger, store, r.stderr)
	}
	if r := must(t, 0, sluice, dir, "run"); strings.Contains(r.stderr, `"component":"badger"`) {
		t.Errorf("the default level shows Badger's debug lines:\n%s", r.stderr)
	}
	must(t, 2, sluice, dir, "run", "--log-level", "loud")
}
