package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests of the read commands (table, events, describe),
// version, init's names, signals, the storage lock and shell completion.

// newShopPlus copies the shop pipeline with the tables of
// testdata/shop_extra.sql beside its own, runs it once, and returns its
// directory and the run's stderr.
func newShopPlus(t *testing.T) (string, string) {
	t.Helper()
	dir := newSQLPipeline(t, "shop")
	extra, err := os.ReadFile(filepath.Join("testdata", "shop_extra.sql"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "extra.sql"), string(extra))
	return dir, must(t, 0, sluice, dir, "run").stderr
}

// TestEmptyTables: a table without rows prints its columns in the table and
// CSV formats: the ones its (empty) batches gave it, else the ones its
// definition declares; a table whose columns nothing gave yet prints no empty
// header.
func TestEmptyTables(t *testing.T) {
	shop, _ := newShopPlus(t)

	// A declared table whose first micro-batch failed: no batch committed.
	declared := newSQLPipeline(t, "divide_by_zero")
	editFile(t, filepath.Join(declared, "orders.sql"), "STREAMING TABLE orders AS", "STREAMING TABLE orders (id BIGINT, amount BIGINT, unit DOUBLE) AS")
	writeFile(t, filepath.Join(declared, "data", "orders", "zero.json"), `{"id": 9, "qty": 0, "amount": 5}`+"\n")
	must(t, 1, sluice, declared, "run")

	// A Go table whose first micro-batch failed, with no declared columns.
	undeclared := newPipeline(t)
	writeFile(t, filepath.Join(undeclared, "pipeline.yaml"), "name: orders\ndevelopment: true\nconfiguration:\n  strict: \"true\"\n")
	must(t, 1, gopipeline, undeclared, "run")

	for _, c := range []struct {
		bin, dir, table string
		wantTable       string
		wantCSV         string
	}{
		{sluice, shop, "orders_of_more_than_a_thousand_items", "id  customer\n--  --------\n(0 rows)\n", "id,customer\n"},
		{sluice, shop, "big_orders", "id  note\n--  ----\n(0 rows)\n", "id,note\n"},
		{sluice, declared, "orders", "id  amount  unit\n--  ------  ----\n(0 rows)\n", "id,amount,unit\n"},
		{gopipeline, undeclared, "typed", "(0 rows)\n", ""},
	} {
		if got := must(t, 0, c.bin, c.dir, "table", c.table).stdout; got != c.wantTable {
			t.Errorf("table %s:\n%q\nwant\n%q", c.table, got, c.wantTable)
		}
		if got := must(t, 0, c.bin, c.dir, "table", c.table, "--format", "csv").stdout; got != c.wantCSV {
			t.Errorf("table %s --format csv:\n%q\nwant\n%q", c.table, got, c.wantCSV)
		}
	}
	if got := must(t, 0, sluice, shop, "table", "order_count").stdout; !strings.HasSuffix(got, "(1 row)\n") {
		t.Errorf("a table of one row:\n%s", got)
	}
}

// TestProgressSingular: a flow that wrote one row in one micro-batch says so.
func TestProgressSingular(t *testing.T) {
	_, stderr := newShopPlus(t)
	if !regexp.MustCompile(`order_count +COMPLETED, 1 row in 1 batch, `).MatchString(stderr) {
		t.Errorf("run's progress:\n%s", stderr)
	}
}

// TestReadCommandRefusals: the read commands refuse what cannot be right
// with exit 2, a code and a hint: names the log does not know, a directory
// that is no pipeline, options out of range.
func TestReadCommandRefusals(t *testing.T) {
	shop, _ := newShopPlus(t)
	nowhere := t.TempDir()
	for _, c := range []struct {
		dir  string
		args []string
		want []string
	}{
		{shop, []string{"events", "--flow", "orderz"}, []string{"UNKNOWN_FLOW_SELECTION", `"orderz" is not a flow`, `did you mean "orders"?`, "hint: the flows are: big_orders, by_country,"}},
		{shop, []string{"events", "--dataset", "by_countri"}, []string{"TABLE_OR_VIEW_NOT_FOUND", `did you mean "by_country"?`, "hint:"}},
		{shop, []string{"events", "--update", "nope"}, []string{"EVENT_NOT_FOUND", `no update "nope"`, "hint:"}},
		{shop, []string{"describe", "orderz"}, []string{"TABLE_OR_VIEW_NOT_FOUND", `did you mean "orders"?`, "hint: the tables are:"}},
		{shop, []string{"describe", "orders", "--format", "xml"}, []string{"--format"}},
		{shop, []string{"run", "--max-concurrent-flows", "0"}, []string{"INVALID_PARAMETER_VALUE", "--max-concurrent-flows must be a whole number of at least 1, not 0", "hint:"}},
		{shop, []string{"run", "--max-concurrent-flows=-2"}, []string{"INVALID_PARAMETER_VALUE", "not -2"}},
		{nowhere, []string{"table", "orders"}, []string{"PIPELINE_NOT_FOUND", "hint:", "sluice init"}},
		{nowhere, []string{"events"}, []string{"PIPELINE_NOT_FOUND", "hint:"}},
		{nowhere, []string{"describe", "orders"}, []string{"PIPELINE_NOT_FOUND"}},
		{nowhere, []string{"replay"}, []string{"PIPELINE_NOT_FOUND"}},
		{nowhere, []string{"doctor"}, []string{"PIPELINE_NOT_FOUND"}},
		{nowhere, []string{"run"}, []string{"PIPELINE_NOT_FOUND"}},
	} {
		r := must(t, 2, sluice, c.dir, c.args...)
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr does not say %q:\n%s", c.args, w, r.stderr)
			}
		}
	}
	if entries, _ := os.ReadDir(nowhere); len(entries) > 0 {
		t.Errorf("commands outside a pipeline wrote into it: %v", entries)
	}
	// The refused options were refused before anything ran.
	if got := sqlEvents(t, shop, "--type", "create_update"); len(got) != 1 {
		t.Errorf("%d updates, want the first one only", len(got))
	}
	must(t, 0, sluice, shop, "events", "--flow", "orders", "--dataset", "orders", "--update", "last")
}

// TestEventsTableAligned: the columns of the events table line up, however
// long a flow's name: each cell starts where its header does (the sequence
// number, on the right, ends where its column does).
func TestEventsTableAligned(t *testing.T) {
	shop, _ := newShopPlus(t)
	out := must(t, 0, sluice, shop, "events").stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := lines[0]
	var starts []int
	for _, name := range []string{"timestamp", "event_type", "level", "flow/dataset", "message"} {
		starts = append(starts, strings.Index(header, name))
	}
	if len(lines) < 50 || !strings.HasPrefix(header, "seq  timestamp") {
		t.Fatalf("events:\n%s", out)
	}
	long := 0
	for _, line := range lines[1:] {
		for k, s := range starts {
			if len(line) <= s || line[s-2:s] != "  " || (line[s] == ' ' && k != 3) {
				t.Fatalf("column %d does not start at %d:\n%s\n%s", k+1, s, header, line)
			}
		}
		if seq := line[:starts[0]-2]; !regexp.MustCompile(`^ *[0-9]+$`).MatchString(seq) {
			t.Fatalf("seq %q is not right-aligned:\n%s\n%s", seq, header, line)
		}
		if strings.Contains(line, "orders_of_more_than_a_thousand_items  ") {
			long++
		}
	}
	if long == 0 {
		t.Errorf("no event of the flow with the long name:\n%s", out)
	}
}

// TestEventTypeNames: the column types in events' details are named as in
// SQL, nested ones included, not given as the store's numbers.
func TestEventTypeNames(t *testing.T) {
	dir := newPipeline(t)
	must(t, 0, gopipeline, dir, "run")
	out := must(t, 0, gopipeline, dir, "events", "--format", "jsonl", "--flow", "typed", "--type", "batch_committed").stdout
	for _, want := range []string{`{"name":"id","type":"bigint","nullable":false}`, `"type":"array<string>"`, `"type":"map<string, bigint>"`,
		`"type":"interval day to second"`, `"type":"struct<note: string, qty: double>"`, `"type":"timestamp"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the schema of typed's batch does not hold %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"kind"`) {
		t.Errorf("a type is given by its number:\n%s", out)
	}
}

// TestDescribe: describe shows a table's definition, flows, rows, last batch
// and storage, reading the storage without writing to it.
func TestDescribe(t *testing.T) {
	shop, _ := newShopPlus(t)
	store := filepath.Join(shop, ".sluice")
	before := digestTree(t, store)
	norm := func(s string) string {
		for _, re := range []struct{ pat, repl string }{
			{`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z`, "$TIME"},
			{`\(seq [0-9]+\)`, "(seq $SEQ)"},
			{`"seq": [0-9]+`, `"seq": "$SEQ"`},
		} {
			s = regexp.MustCompile(re.pat).ReplaceAllLiteralString(s, re.repl)
		}
		return s
	}
	golden(t, "describe_orders.table", norm(must(t, 0, sluice, shop, "describe", "orders").stdout))
	golden(t, "describe_big_orders.json", norm(must(t, 0, sluice, shop, "describe", "big_orders", "--format", "json").stdout))
	if after := digestTree(t, store); after != before {
		t.Error("describe changed the storage's files")
	}

	type desc struct {
		Rows, Generation, Batches int64
		Bytes                     int64 `json:"storage_bytes"`
		OlderBytes                int64 `json:"older_generations_bytes"`
		Flows                     []struct {
			Name     string
			FlowType string `json:"flow_type"`
		}
		LastBatch *struct {
			Flow string
			Rows int64
			Seq  uint64
		} `json:"last_batch"`
	}
	describe := func(table string) desc {
		t.Helper()
		var d desc
		if err := json.Unmarshal([]byte(must(t, 0, sluice, shop, "describe", table, "--format", "json").stdout), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := describe("orders")
	if rows := int64(lines(tableRows(t, shop, "orders"))); first.Rows != rows || first.Bytes == 0 || first.LastBatch == nil || first.LastBatch.Rows != rows {
		t.Errorf("orders: %+v, while the table has %d rows", first, rows)
	}
	// A full refresh starts a generation: the rows come again, the batches
	// before it stay in the log.
	must(t, 0, sluice, shop, "run", "--full-refresh-all")
	again := describe("orders")
	if again.Generation != first.Generation+1 || again.Rows != first.Rows || again.Bytes != first.Bytes || again.OlderBytes != first.Bytes {
		t.Errorf("after a full refresh: %+v, before: %+v", again, first)
	}
	if d := describe("order_count"); d.Rows != 1 || len(d.Flows) != 1 || d.Flows[0].FlowType != "MATERIALIZED_VIEW" {
		t.Errorf("order_count: %+v", d)
	}

	// vacuum removes the rows of the generation the refresh superseded,
	// once past the retention, and keeps the current one and every event.
	events := lines(must(t, 0, sluice, shop, "events", "--format", "jsonl").stdout)
	if out := must(t, 0, sluice, shop, "vacuum").stdout; !strings.Contains(out, "orders") || !strings.Contains(out, "nothing to remove (retention 168h0m0s)") {
		t.Errorf("vacuum within the retention:\n%s", out)
	}
	untouched := digestTree(t, store)
	if out := must(t, 0, sluice, shop, "vacuum", "orders", "--retain", "0s", "--dry-run").stdout; !strings.Contains(out, "would remove") {
		t.Errorf("vacuum --dry-run:\n%s", out)
	}
	if digestTree(t, store) != untouched {
		t.Error("vacuum --dry-run changed the storage's files")
	}
	if out := must(t, 0, sluice, shop, "vacuum", "orders", "--retain", "0s").stdout; !strings.Contains(out, fmt.Sprintf("removed %d rows", first.Rows)) {
		t.Errorf("vacuum:\n%s", out)
	}
	if d := describe("orders"); d.Rows != first.Rows || d.OlderBytes != 0 {
		t.Errorf("after vacuum: %+v", d)
	}
	if after := lines(must(t, 0, sluice, shop, "events", "--format", "jsonl").stdout); after != events {
		t.Errorf("%d events after vacuum, %d before", after, events)
	}
	if r := must(t, 1, sluice, shop, "table", "orders", "--as-of", fmt.Sprint(first.LastBatch.Seq)); !strings.Contains(r.stderr, "ROWS_VACUUMED") {
		t.Errorf("as-of read of the vacuumed generation: %s", r.stderr)
	}
	must(t, 0, sluice, shop, "replay", "--verify")
	must(t, 2, sluice, shop, "vacuum", "--retain", "forever")
}

// TestInitNames: init takes the names pipeline.yaml takes, and writes them
// so that pipeline.yaml reads them back.
func TestInitNames(t *testing.T) {
	work := t.TempDir()
	for _, name := range []string{"sales-etl", "sales etl", "2026", "true", "null", "a: b", "#x", "ñandú", "it's", `"q"`} {
		must(t, 0, sluice, work, "init", name)
		r := must(t, 0, sluice, filepath.Join(work, name), "validate")
		if want := "pipeline " + strconv.Quote(name) + " is valid\n"; r.stdout != want {
			t.Errorf("init %q, validate: %q, want %q", name, r.stdout, want)
		}
	}
	for _, bad := range []string{"", "/"} {
		r := must(t, 2, sluice, work, "init", bad)
		if !strings.Contains(r.stderr, "PIPELINE_CONFIG_INVALID") || !strings.Contains(r.stderr, "hint:") {
			t.Errorf("init %q:\n%s", bad, r.stderr)
		}
	}
}

// TestVersion: sluice version and sluice --version print the module version
// and the VCS revision the binary was built from, as the go command recorded
// them.
func TestVersion(t *testing.T) {
	info, err := exec.Command("go", "version", "-m", sluice).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(string(info), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[2] != "(devel)":
			want = append(want, "sluice "+f[2]+" (")
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			want = append(want, "revision "+strings.TrimPrefix(f[1], "vcs.revision="))
		}
	}
	if len(want) < 2 {
		t.Logf("the test binary records no VCS revision (not built in a checkout): %s", info)
	}
	v := must(t, 0, sluice, t.TempDir(), "version").stdout
	for _, w := range want {
		if !strings.Contains(v, w) {
			t.Errorf("version says %q, not %q", v, w)
		}
	}
	if got := must(t, 0, sluice, t.TempDir(), "--version").stdout; got != v {
		t.Errorf("--version says %q, version %q", got, v)
	}
}

// startUntil starts bin with args in dir and reads its stderr until a line
// holds all of marks; the rest of stderr is collected in the returned
// builder's goroutine, done when the channel closes.
func startUntil(t *testing.T, bin, dir string, marks []string, args ...string) (*exec.Cmd, *strings.Builder, chan struct{}) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var out strings.Builder
	sc := bufio.NewScanner(stderr)
	found := false
	for !found && sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		found = true
		for _, m := range marks {
			found = found && strings.Contains(sc.Text(), m)
		}
	}
	if !found {
		t.Fatalf("%v never said %v:\n%s", args, marks, out.String())
	}
	done := make(chan struct{})
	go func() {
		rest, _ := io.ReadAll(stderr)
		out.Write(rest)
		close(done)
	}()
	return cmd, &out, done
}

// updateState is the last state of the last update.
func updateState(t *testing.T, dir string) string {
	t.Helper()
	evs := events(t, dir, "--update", "last", "--type", "update_progress")
	var p struct{ State string }
	if err := json.Unmarshal(evs[len(evs)-1].Details["update_progress"], &p); err != nil {
		t.Fatal(err)
	}
	return p.State
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestStopSignals: Ctrl-C (SIGINT) and SIGTERM stop an update cleanly (the
// flows end STOPPED, the update CANCELED, the log replays); SIGTERM exits
// 143, as a process it killed would. While the run holds the storage,
// another command is refused with STORE_LOCKED naming it, and completion
// offers nothing, quietly.
func TestStopSignals(t *testing.T) {
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		yaml  string
		args  []string
		marks []string // the stderr line after which to signal
		code  int
		flow  string // a flow the signal stopped
	}{
		{"continuous SIGINT", syscall.SIGINT, "name: orders\n", []string{"run", "--continuous"}, []string{"IDLE"}, 0, "orders"},
		{"continuous SIGTERM", syscall.SIGTERM, "name: orders\n", []string{"run", "--continuous"}, []string{"IDLE"}, 143, "orders"},
		// The sink is delivering a micro-batch (for a second, deaf to the
		// signal): the update waits for it, then stops.
		{"triggered SIGTERM", syscall.SIGTERM, "name: orders\nconfiguration:\n  sink_delay: 1s\n", []string{"run"}, []string{"export_orders", "RUNNING"}, 143, "export_orders"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := newPipeline(t)
			writeFile(t, filepath.Join(dir, "pipeline.yaml"), c.yaml)
			cmd, out, done := startUntil(t, gopipeline, dir, c.marks, c.args...)
			if c.sig == syscall.SIGTERM {
				checkLocked(t, dir, cmd.Process.Pid, strings.Join(c.args, " "))
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			<-done
			if code := exitCode(cmd.Wait()); code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, out.String())
			}
			if !strings.Contains(out.String(), "CANCELED") {
				t.Errorf("stderr:\n%s", out.String())
			}
			if st := flowStatus(t, events(t, dir, "--update", "last")); st[c.flow] != "STOPPED" {
				t.Errorf("flows after the signal: %v, want %s STOPPED", st, c.flow)
			}
			if got := updateState(t, dir); got != "CANCELED" {
				t.Errorf("the update ended %s, want CANCELED", got)
			}
			must(t, 0, gopipeline, dir, "replay", "--verify")
		})
	}
}

// checkLocked: while process pid (running args) holds the storage of dir,
// reading it is refused with STORE_LOCKED naming that process, in words of
// our own rather than Badger's, and completion offers nothing.
func checkLocked(t *testing.T, dir string, pid int, args string) {
	t.Helper()
	// a reader reads through the socket the run serves
	must(t, 0, gopipeline, dir, "table", "orders")
	// a writer is refused, naming the run
	r := must(t, 1, gopipeline, dir, "run")
	for _, want := range []string{"STORE_LOCKED", "pid " + strconv.Itoa(pid) + ", writing it", args, "hint: wait for it to finish, or stop it (kill " + strconv.Itoa(pid) + ")"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("a run while another holds the storage: stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "Cannot acquire") || strings.Contains(r.stderr, "Badger") {
		t.Errorf("the refusal shows Badger's words:\n%s", r.stderr)
	}
	if r := must(t, 0, gopipeline, dir, "__complete", "table", ""); r.stdout != ":4\n" || strings.Contains(r.stderr, "error") {
		t.Errorf("completion while a run holds the storage:\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestReaderHoldsStore: a run refused because a reader holds the storage
// names the reader.
func TestReaderHoldsStore(t *testing.T) {
	dir := newPipeline(t)
	must(t, 0, gopipeline, dir, "run")
	// events --follow holds the storage once it has printed the log.
	cmd := exec.Command(gopipeline, "events", "--follow")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "COMPLETED") {
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	r := must(t, 1, gopipeline, dir, "run")
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, want := range []string{"STORE_LOCKED", "pid " + pid + ", reading it", "events --follow", "kill " + pid} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("run while events --follow reads: stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 143 {
		t.Errorf("events --follow stopped by SIGTERM: exit %d, want 143", code)
	}
	must(t, 0, gopipeline, dir, "run")
}

// TestCompletion: shell completion offers the names the log knows for the
// arguments and flags that take them, reads the storage without writing to
// it, and offers nothing, without an error, outside a pipeline.
func TestCompletion(t *testing.T) {
	shop, _ := newShopPlus(t)
	before := digestTree(t, filepath.Join(shop, ".sluice"))
	tables := []string{"big_orders", "by_country", "order_count", "orders", "orders_of_more_than_a_thousand_items"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"table", ""}, tables},
		{[]string{"describe", "order"}, []string{"order_count", "orders", "orders_of_more_than_a_thousand_items"}},
		{[]string{"table", "orders", ""}, nil},
		{[]string{"table", "orders", "--format", ""}, []string{"table", "jsonl", "csv", "parquet"}},
		{[]string{"events", "--flow", "b"}, []string{"big_orders", "by_country"}},
		{[]string{"events", "--dataset", "by"}, []string{"by_country"}},
		{[]string{"events", "--type", "flow_progress,batch_c"}, []string{"flow_progress,batch_committed"}},
		{[]string{"events", "--type", "update"}, []string{"update_progress"}},
		{[]string{"run", "--refresh", "orders,by"}, []string{"orders,by_country"}},
		{[]string{"run", "--full-refresh", "big_orders,"}, []string{"big_orders,by_country", "big_orders,order_count", "big_orders,orders", "big_orders,orders_of_more_than_a_thousand_items"}},
		{[]string{"run", "--reset-checkpoint", "ord"}, []string{"order_count", "orders", "orders_of_more_than_a_thousand_items"}},
		{[]string{"--log-level", "d"}, []string{"debug", "disabled"}},
	} {
		r := must(t, 0, sluice, shop, append([]string{"__complete"}, c.args...)...)
		if got := completions(r.stdout); !slices.Equal(got, c.want) {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
	// Update ids, the latest first, after last.
	got := completions(must(t, 0, sluice, shop, "__complete", "events", "--update", "").stdout)
	id := sqlEvents(t, shop, "--type", "create_update")[0].Origin["update_id"].(string)
	if len(got) != 2 || got[0] != "last" || got[1] != id {
		t.Errorf("--update: %q, want last and %s", got, id)
	}
	if after := digestTree(t, filepath.Join(shop, ".sluice")); after != before {
		t.Error("completion changed the storage's files")
	}
	// Outside a pipeline: nothing, quietly, and nothing written.
	nowhere := t.TempDir()
	for _, args := range [][]string{{"table", ""}, {"events", "--flow", ""}, {"events", "--update", ""}} {
		r := must(t, 0, sluice, nowhere, append([]string{"__complete"}, args...)...)
		if got := completions(r.stdout); len(got) > 1 || strings.Contains(r.stderr, "error") {
			t.Errorf("%v outside a pipeline: %q\n%s", args, got, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(nowhere); len(entries) > 0 {
		t.Errorf("completion wrote %v", entries)
	}
	if r := must(t, 0, sluice, nowhere, "completion", "bash"); !strings.Contains(r.stdout, "__start_sluice") {
		t.Errorf("completion bash:\n%.300s", r.stdout)
	}
}

// completions are the candidates of a __complete answer, without their
// descriptions and the directive line.
func completions(out string) []string {
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") || line == "" {
			continue
		}
		got = append(got, strings.SplitN(line, "\t", 2)[0])
	}
	return got
}

// killVacuum starts sluice vacuum --retain 0s in dir and kills it
// (SIGKILL) after the given time, or lets it end if it ends sooner.
func killVacuum(t *testing.T, dir string, after time.Duration) {
	t.Helper()
	cmd := exec.Command(sluice, "vacuum", "--retain", "0s")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(after)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// TestVacuumKilled kills sluice vacuum with SIGKILL at random moments,
// while it removes rows and while it compacts: the storage is sound after
// each kill, the current tables whole, the events all there, and a vacuum
// run to its end afterwards removes what is left.
func TestVacuumKilled(t *testing.T) {
	shop := newSQLPipeline(t, "shop")
	must(t, 0, sluice, shop, "run")
	for range 3 {
		must(t, 0, sluice, shop, "run", "--full-refresh-all")
	}
	rows := tableRows(t, shop, "orders")
	events := lines(must(t, 0, sluice, shop, "events", "--format", "jsonl").stdout)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for trial := range 8 {
		killVacuum(t, shop, time.Duration(rng.Int63n(int64(60*time.Millisecond))))
		// A dry run only reads: a storage the kill left open it refuses,
		// as every reader does, and changes nothing. The next writer
		// recovers it: vacuum again with a retention that removes nothing.
		if r := run(t, sluice, shop, "vacuum", "--dry-run"); r.code != 0 && !strings.Contains(r.stderr, "STORE_NOT_CLOSED") {
			t.Fatalf("trial %d: vacuum --dry-run after a kill: exit %d\n%s", trial, r.code, r.stderr)
		}
		must(t, 0, sluice, shop, "vacuum", "--retain", "87600h")
		if r := run(t, sluice, shop, "doctor"); r.code != 0 && !strings.Contains(r.stdout, "left open") {
			t.Fatalf("trial %d: doctor after a kill:\n%s%s", trial, r.stdout, r.stderr)
		}
		must(t, 0, sluice, shop, "run", "--refresh", "by_country") // a writer recovers what the kill left
		must(t, 0, sluice, shop, "replay", "--verify")
		if got := tableRows(t, shop, "orders"); got != rows {
			t.Fatalf("trial %d: orders after a kill:\n%s\nwant:\n%s", trial, got, rows)
		}
		if got := lines(must(t, 0, sluice, shop, "events", "--format", "jsonl").stdout); got < events {
			t.Fatalf("trial %d: %d events after a kill, %d before", trial, got, events)
		}
	}
	must(t, 0, sluice, shop, "vacuum", "--retain", "0s")
	if out := must(t, 0, sluice, shop, "vacuum", "--retain", "0s").stdout; strings.Contains(out, "removed") {
		t.Errorf("a second vacuum removed more:\n%s", out)
	}
	if r := must(t, 0, sluice, shop, "doctor"); !strings.Contains(r.stdout, "is sound") {
		t.Errorf("doctor: %s", r.stdout)
	}
}

// TestVacuumStreamState: through the command line, vacuum removes the
// identities a deduplicating flow's latest snapshot holds and says so;
// replay --verify and doctor pass after it, a dry run changes nothing, and
// the flow goes on deduplicating exactly.
func TestVacuumStreamState(t *testing.T) {
	dir, clicks := newClicksPipeline(t)
	clicks("1.json", 0, 40000)
	must(t, 0, sluice, dir, "run")
	clicks("2.json", 40000, 41000)
	must(t, 0, sluice, dir, "run")
	if out := must(t, 0, sluice, dir, "events", "--type", "stream_state").stdout; !strings.Contains(out, "a snapshot of the stream state") {
		t.Fatalf("no snapshot to vacuum before:\n%s", out)
	}

	before := digestTree(t, filepath.Join(dir, ".sluice"))
	if out := must(t, 0, sluice, dir, "vacuum", "--retain", "0s", "--dry-run").stdout; !strings.Contains(out, "would remove the identities of 1 stream_state event that no restart reads") {
		t.Errorf("vacuum --dry-run:\n%s", out)
	}
	if digestTree(t, filepath.Join(dir, ".sluice")) != before {
		t.Error("vacuum --dry-run changed the storage's files")
	}
	if out := must(t, 0, sluice, dir, "vacuum", "--retain", "0s").stdout; !strings.Contains(out, "clicks                   removed the identities of 1 stream_state event that no restart reads") {
		t.Errorf("vacuum:\n%s", out)
	}
	if out := must(t, 0, sluice, dir, "events", "--type", "stream_state", "--format", "jsonl").stdout; strings.Count(out, `"identities_removed"`) != 1 {
		t.Errorf("the events do not say which identities went:\n%s", out)
	}
	if out := must(t, 0, sluice, dir, "replay", "--verify").stdout; !strings.Contains(out, "checked after 2 micro-batches") {
		t.Errorf("replay --verify after vacuum: %s", out)
	}
	if out := must(t, 0, sluice, dir, "doctor").stdout; !strings.Contains(out, "is sound") {
		t.Errorf("doctor after vacuum: %s", out)
	}

	clicks("3.json", 41000, 42000)
	must(t, 0, sluice, dir, "run")
	// 42,000 clicks, one of them twice in each 7: the doubles go, and
	// every session that came back after its state expired is kept.
	if got := lines(tableRows(t, dir, "clicks")); got != 42000 {
		t.Errorf("clicks holds %d rows after vacuum and a run, want 42000", got)
	}
}

// newClicksPipeline is a pipeline deduplicating clicks within a watermark,
// and clicks, which writes its file name of the clicks [from, to): 5,000
// sessions, one click a second, each session back long after its state
// expired; every seventh click sent twice.
func newClicksPipeline(t *testing.T) (dir string, clicks func(name string, from, to int)) {
	dir = t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clicks = func(name string, from, to int) {
		var b strings.Builder
		for i := from; i < to; i++ {
			line := fmt.Sprintf("{\"session\": %d, \"ts\": %q}\n", i%5000, time.Unix(int64(i), 0).UTC().Format(time.RFC3339))
			b.WriteString(line)
			if i%7 == 0 {
				b.WriteString(line)
			}
		}
		write(filepath.Join("data", name), b.String())
	}
	write("pipeline.yaml", "name: clicks\n")
	write("clicks.sql", `CREATE OR REFRESH STREAMING TABLE clicks_raw
AS SELECT *, CAST(ts AS TIMESTAMP) AS event_ts FROM STREAM read_files('data', format => 'json');

CREATE OR REFRESH STREAMING TABLE clicks
AS SELECT * FROM STREAM(clicks_raw)
  WATERMARK event_ts DELAY OF INTERVAL 1 MINUTE
  DEDUPLICATE ON (session, ts);
`)
	return dir, clicks
}

// TestVacuumStreamStateKilled kills sluice vacuum with SIGKILL at random
// moments while it removes the identities of a deduplicating flow's state
// and compacts: after each kill the next run recovers the storage, the
// flow goes on deduplicating exactly, and replay --verify and doctor pass.
func TestVacuumStreamStateKilled(t *testing.T) {
	dir, clicks := newClicksPipeline(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	n := 0
	for trial := range 6 {
		// a file a trial, each bringing a snapshot that the next vacuum
		// removes the identities before
		clicks(fmt.Sprintf("%d.json", trial), n, n+35000)
		n += 35000
		must(t, 0, sluice, dir, "run")
		killVacuum(t, dir, time.Duration(rng.Int63n(int64(80*time.Millisecond))))
		must(t, 0, sluice, dir, "run") // recovers what the kill left
		if out := must(t, 0, sluice, dir, "replay", "--verify").stdout; !strings.Contains(out, "checked after") {
			t.Fatalf("trial %d: replay --verify: %s", trial, out)
		}
		if got := lines(tableRows(t, dir, "clicks")); got != n {
			t.Fatalf("trial %d: clicks holds %d rows, want %d", trial, got, n)
		}
	}
	must(t, 0, sluice, dir, "vacuum", "--retain", "0s")
	if out := must(t, 0, sluice, dir, "vacuum", "--retain", "0s").stdout; strings.Contains(out, "removed") {
		t.Errorf("a second vacuum removed more:\n%s", out)
	}
	if out := must(t, 0, sluice, dir, "doctor").stdout; !strings.Contains(out, "is sound") {
		t.Errorf("doctor: %s", out)
	}
	clicks("last.json", n, n+1000)
	must(t, 0, sluice, dir, "run")
	if got := lines(tableRows(t, dir, "clicks")); got != n+1000 {
		t.Errorf("clicks holds %d rows after vacuum and a run, want %d", got, n+1000)
	}
}

// TestDedupStateSpilledCLI: with state_memory_mib at 1, a deduplication
// whose identities all live (a delay of a day) moves the older ones to
// disk, says so in its stream_state events, and keeps the rows it keeps in
// memory; replay --verify passes.
func TestDedupStateSpilledCLI(t *testing.T) {
	dir, clicks := newClicksPipeline(t)
	sql, err := os.ReadFile(filepath.Join(dir, "clicks.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "clicks.sql"), bytes.ReplaceAll(sql, []byte("INTERVAL 1 MINUTE"), []byte("INTERVAL 1 DAY")), 0o644); err != nil {
		t.Fatal(err)
	}
	clicks("1.json", 0, 40000)
	want := func() string {
		must(t, 0, sluice, dir, "run")
		return tableRows(t, dir, "clicks")
	}()
	if out := must(t, 0, sluice, dir, "events", "--type", "stream_state").stdout; strings.Contains(out, "on disk") {
		t.Fatalf("in memory, the state says it is on disk:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte("name: clicks\nstate_memory_mib: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, 0, sluice, dir, "run", "--full-refresh-all")
	if out := must(t, 0, sluice, dir, "events", "--type", "stream_state").stdout; !strings.Contains(out, "of them are on disk") {
		t.Fatalf("with a budget of 1 MiB, no stream_state event says the state is on disk:\n%s", out)
	}
	if got := tableRows(t, dir, "clicks"); got != want || lines(got) != 40000 {
		t.Fatalf("spilled, clicks holds %d rows, in memory %d", lines(got), lines(want))
	}
	must(t, 0, sluice, dir, "replay", "--verify")
}
