package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// follower is a `sluice events --follow` process, its events' seqs as they
// come.
type follower struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	seqs []uint64
	done chan struct{}
}

func startFollower(t *testing.T, dir string, args ...string) *follower {
	t.Helper()
	cmd := exec.Command(sluice, append([]string{"events", "--follow", "--format", "jsonl"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &follower{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var ev struct{ Seq uint64 }
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				f.mu.Lock()
				f.seqs = append(f.seqs, ev.Seq)
				f.mu.Unlock()
			}
		}
	}()
	return f
}

func (f *follower) seen() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seqs)
}

func (f *follower) kill() {
	_ = f.cmd.Process.Signal(syscall.SIGKILL)
	_ = f.cmd.Wait()
	<-f.done
}

// eventually polls cond every 50 ms for up to 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s did not happen within 20 s", what)
}

// TestReadWhileRunning: while `sluice run --continuous` holds the storage,
// status, table, events and events --follow read it through the socket it
// serves; a follower killed and started again after the last event it saw
// misses nothing and repeats nothing; no reader takes the storage's lock.
func TestReadWhileRunning(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: watched\nconfiguration:\n  pipelines.trigger.interval: 50 milliseconds\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), `
CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT, amount BIGINT');
CREATE OR REFRESH MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(amount) AS total FROM orders;
`)
	file := 0
	addOrders := func(n int) {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"id": %d, "amount": %d}`+"\n", file*1000+i, i)
		}
		writeFile(t, filepath.Join(dir, "in", fmt.Sprintf("%03d.json", file)), b.String())
		file++
	}
	addOrders(10)
	runner := exec.Command(sluice, "run", "--continuous", "--live=false")
	runner.Dir = dir
	var runErr strings.Builder
	runner.Stderr = &runErr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if runner.ProcessState == nil {
			_ = runner.Process.Kill()
			_ = runner.Wait()
		}
	}()
	rows := func() int { return lines(run(t, sluice, dir, "table", "orders", "--format", "jsonl").stdout) }
	eventually(t, "the first 10 rows through the socket", func() bool {
		_, err := os.Stat(filepath.Join(dir, ".sluice", "sluice.sock"))
		return err == nil && rows() == 10
	})
	var st struct {
		Update struct{ State string }
		Flows  []struct {
			Name, Status string
			Rows         int64
		}
	}
	if err := json.Unmarshal([]byte(must(t, 0, sluice, dir, "status", "--format", "json").stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Update.State != "RUNNING" || len(st.Flows) != 2 {
		t.Errorf("status while running: %+v", st)
	}
	if out := must(t, 0, sluice, dir, "status").stdout; !strings.Contains(out, "RUNNING") || !strings.Contains(out, "orders") {
		t.Errorf("status:\n%s", out)
	}
	if out := must(t, 0, sluice, dir, "events", "--type", "flow_progress", "--update", "last").stdout; !strings.Contains(out, "orders") {
		t.Errorf("events while running:\n%s", out)
	}

	if r := run(t, sluice, dir, "replay", "--verify"); r.code == 0 || !strings.Contains(r.stderr, "STORE_LOCKED") || !strings.Contains(r.stderr, "sluice run") {
		t.Errorf("replay --verify while the run holds the storage: exit %d\n%s", r.code, r.stderr)
	}
	first := startFollower(t, dir, "--since", "1")
	addOrders(5)
	eventually(t, "15 rows", func() bool { return rows() == 15 })
	eventually(t, "the follower to see the new batch", func() bool {
		s := first.seen()
		return len(s) > 0 && s[len(s)-1] >= logEnd(t, dir)-2
	})
	first.kill()
	seen := first.seen()
	second := startFollower(t, dir, "--since", fmt.Sprint(seen[len(seen)-1]+1))
	addOrders(7)
	eventually(t, "22 rows", func() bool { return rows() == 22 })
	eventually(t, "the second follower to catch up", func() bool {
		s := second.seen()
		return len(s) > 0 && s[len(s)-1] >= logEnd(t, dir)-2
	})
	second.kill()
	all := append(seen, second.seen()...)
	for i, seq := range all {
		if seq != uint64(i+1) {
			t.Fatalf("the followers saw %v: a gap or a repeat at %d", all, i)
		}
	}

	_ = runner.Process.Signal(syscall.SIGINT)
	if err := runner.Wait(); err != nil {
		t.Fatalf("the run ended with %v\n%s", err, runErr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".sluice", "sluice.sock")); !os.IsNotExist(err) {
		t.Errorf("the socket outlived the run: %v", err)
	}
	if got := lines(must(t, 0, sluice, dir, "table", "orders", "--format", "jsonl").stdout); got != 22 {
		t.Errorf("after the run the table has %d rows, want 22", got)
	}
}

// logEnd is the seq of the last event, through the socket or the store.
func logEnd(t *testing.T, dir string) uint64 {
	t.Helper()
	var st struct {
		LastSeq uint64 `json:"last_seq"`
	}
	_ = json.Unmarshal([]byte(run(t, sluice, dir, "status", "--format", "json").stdout), &st)
	return st.LastSeq
}

// TestServe: sluice serve holds the storage and runs the updates the API
// asks for, over the socket and over HTTP; over HTTP a change needs the
// printed token; the OpenAPI document describes the API.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SLUICE_TEST_SECRET", "hush-hush-42")
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), `name: served
event_hooks:
  - {name: alerts, on: [update_failed], url: "http://127.0.0.1:9/hook", headers: {Authorization: "Bearer ${env:SLUICE_TEST_SECRET}"}}
`)
	writeFile(t, filepath.Join(dir, "flows.sql"), `CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT');
CREATE SINK archive USING parquet OPTIONS (path 'out/${env:SLUICE_TEST_SECRET}');
CREATE FLOW to_archive AS INSERT INTO archive BY NAME SELECT * FROM STREAM(orders);`)
	writeFile(t, filepath.Join(dir, "in", "1.json"), `{"id": 1}`+"\n"+`{"id": 2}`+"\n")
	srv := exec.Command(sluice, "serve", "--http", "127.0.0.1:0")
	srv.Dir = dir
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if srv.ProcessState == nil {
			_ = srv.Process.Kill()
			_ = srv.Wait()
		}
	}()
	var base, token string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "serving %s (token for changes: %s", &base, &token); err == nil {
			token = strings.TrimSuffix(token, ");")
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if base == "" || token == "" {
		t.Fatal("serve printed no HTTP address and token")
	}
	call := func(method, path, auth, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := call("GET", "/api/health", "", ""); code != 200 || !strings.Contains(body, `"pipeline":"served"`) {
		t.Fatalf("health: %d %s", code, body)
	}
	if code, _ := call("POST", "/api/updates", "", ""); code != 401 {
		t.Errorf("an update started without the token: %d", code)
	}
	if code, _ := call("POST", "/api/updates", "wrong", ""); code != 401 {
		t.Errorf("an update started with a wrong token: %d", code)
	}
	if code, body := call("POST", "/api/updates", token, `{"refresh": ["orders"]}`); code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	eventually(t, "the update to complete", func() bool {
		_, body := call("GET", "/api/status", "", "")
		return strings.Contains(body, `"state":"COMPLETED"`)
	})
	if got := lines(must(t, 0, sluice, dir, "table", "orders", "--format", "jsonl").stdout); got != 2 {
		t.Errorf("orders has %d rows through the socket, want 2", got)
	}
	if code, body := call("POST", "/api/updates", token, `{"refresh": ["orders"], "full_refresh_all": true}`); code != 400 || !strings.Contains(body, "one kind") {
		t.Errorf("two kinds of selection: %d %s", code, body)
	}
	if code, _ := call("POST", "/api/updates/cancel", token, ""); code != 409 {
		t.Errorf("cancel with no update running: %d", code)
	}
	if code, body := call("GET", "/api/updates", "", ""); code != 200 || !strings.Contains(body, `"cause":"api_call"`) {
		t.Errorf("updates: %d %s", code, body)
	}
	code, doc := call("GET", "/api/openapi.json", "", "")
	var spec struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(doc), &spec); code != 200 || err != nil || spec.OpenAPI == "" || spec.Paths["/api/events/stream"] == nil {
		t.Errorf("openapi.json: %d %v", code, err)
	}
	// no response shows a secret of the configuration
	for _, path := range []string{"/api/events", "/api/pipeline", "/api/status", "/api/updates", "/", "/ui/events", "/metrics"} {
		if _, body := call("GET", path, "", ""); strings.Contains(body, "hush-hush-42") {
			t.Errorf("%s shows the secret", path)
		}
	}
	_ = srv.Process.Signal(syscall.SIGINT)
	if err := srv.Wait(); err != nil {
		t.Errorf("serve ended with %v", err)
	}
}
