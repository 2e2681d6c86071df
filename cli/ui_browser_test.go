package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is the browser the UI tests drive (Debian's package, which
// .ci/run installs).
const chromium = "/usr/bin/chromium"

// TestUIInBrowser loads the web UI of a running continuous pipeline in
// headless Chromium: the graph has the pipeline's datasets, flows and
// edges; a flow's figures change live as input lands, without a reload;
// the event log filters by type and its live tail brings the filter's new
// events in at the top; a screenshot is kept as a test artifact
// (in $SLUICE_TEST_ARTIFACTS, else the system's temporary directory).
func TestUIInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("%s is not installed (.ci/run installs Debian's chromium)", chromium)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: shop\nconfiguration:\n  pipelines.trigger.interval: 100 milliseconds\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), `
CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT, amount BIGINT');
CREATE OR REFRESH MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(amount) AS total FROM orders;
`)
	orders := func(file string, from, n int) {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, `{"id": %d, "amount": %d}`+"\n", i, i)
		}
		writeFile(t, filepath.Join(dir, "in", file), b.String())
	}
	orders("1.json", 0, 10)
	runner := exec.Command(sluice, "run", "--continuous", "--live=false", "--http", "127.0.0.1:0")
	runner.Dir = dir
	stderr, err := runner.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = runner.Process.Signal(syscall.SIGINT)
		_ = runner.Wait()
	}()
	var base string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "serving %s", &base); err == nil && strings.HasPrefix(base, "http") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if base == "" {
		t.Fatal("the run printed no HTTP address")
	}

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless, chromedp.WindowSize(1400, 900))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	rowsOf := func(flow string) int {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector('#flows tr[data-flow=%q] td.num') || {textContent: ""}).textContent`, flow)))
		n, _ := strconv.Atoi(strings.TrimSpace(text))
		return n
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("in the browser: %s did not happen within 20 s", what)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("svg.graph")); err != nil {
		t.Fatal(err)
	}
	waitFor("the first 10 rows of orders", func() bool { return rowsOf("orders") == 10 })
	list := func(js string) []string {
		t.Helper()
		out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	flows := list(`[...document.querySelectorAll('svg.graph [data-flow]')].map(e => e.dataset.flow)`)
	datasets := list(`[...document.querySelectorAll('svg.graph [data-dataset]')].map(e => e.dataset.dataset)`)
	edges := list(`[...document.querySelectorAll('svg.graph [data-edge]')].map(e => e.dataset.edge)`)
	slices.Sort(flows)
	slices.Sort(datasets)
	slices.Sort(edges)
	if fmt.Sprint(flows) != "[orders totals]" || fmt.Sprint(datasets) != "[orders totals]" ||
		fmt.Sprint(edges) != "[d:orders->f:totals f:orders->d:orders f:totals->d:totals]" {
		t.Errorf("the graph: flows %v, datasets %v, edges %v", flows, datasets, edges)
	}

	// live: new input shows without a reload
	orders("2.json", 10, 5)
	waitFor("orders' rows to go to 15 on the page", func() bool { return rowsOf("orders") == 15 })
	waitFor("the flow node to show its state", func() bool {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('svg.graph [data-flow=orders]').dataset.status`))
		return status == "IDLE" || status == "RUNNING"
	})

	// the event log, filtered by type
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/ui/events"), chromedp.WaitVisible("form.filters"),
		chromedp.SetValue(`form.filters select[name=type]`, "flow_progress"),
		chromedp.Submit(`form.filters`), chromedp.WaitVisible(`#events tr[data-type]`)); err != nil {
		t.Fatal(err)
	}
	types := list(`[...document.querySelectorAll('#events tr[data-type]')].map(e => e.dataset.type)`)
	if len(types) == 0 || slices.ContainsFunc(types, func(s string) bool { return s != "flow_progress" }) {
		t.Errorf("the filtered event log shows %v", types)
	}
	// the live tail: new events of the filter come in at the top
	firstSeq := func() int {
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`Number(document.querySelector('#events tr[data-seq]').dataset.seq)`))
		return n
	}
	before := firstSeq()
	orders("3.json", 15, 5)
	waitFor("a new flow_progress event at the top of the log", func() bool { return firstSeq() > before })
	if types := list(`[...document.querySelectorAll('#events tr[data-type]')].map(e => e.dataset.type)`); slices.ContainsFunc(types, func(s string) bool { return s != "flow_progress" }) {
		t.Errorf("the live tail brought other events: %v", types)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("svg.graph")); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	artifacts := os.Getenv("SLUICE_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "sluice-test-artifacts")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifacts, "ui-pipeline.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
