package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestEventHooks: pipeline.yaml's webhooks against a real HTTP server
// that fails its first two calls. Every event the hook is on reaches the
// handler once (by idempotency key) after retries, each delivery is a
// hook_progress event, a hook whose endpoint keeps failing ends in the
// poison queue (FAILED) without failing the update, and the secret of a
// header is in no event.
func TestEventHooks(t *testing.T) {
	var mu sync.Mutex
	calls, seen := 0, map[string]int{}
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= 2 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Authorization") != "Bearer s3cret-token" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		seen[key]++
		if seen[key] == 1 {
			var b map[string]any
			_ = json.NewDecoder(r.Body).Decode(&b)
			bodies = append(bodies, b)
		}
	}))
	defer srv.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer down.Close()

	dir := t.TempDir()
	t.Setenv("SLUICE_TEST_HOOK_TOKEN", "s3cret-token")
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), fmt.Sprintf(`name: hooked
event_hooks:
  - name: alerts
    on: [flow_completed, expectation_failed, update_failed]
    url: %s/hook
    headers: {Authorization: "Bearer ${env:SLUICE_TEST_HOOK_TOKEN}"}
  - name: broken
    on: [update_completed]
    url: %s/hook
    retries: 1
`, srv.URL, down.URL))
	writeFile(t, filepath.Join(dir, "orders.sql"), `
CREATE OR REFRESH STREAMING TABLE orders (CONSTRAINT positive EXPECT (amount > 0))
AS SELECT * FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT, amount BIGINT');
CREATE OR REFRESH MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(amount) AS total FROM orders;
`)
	writeFile(t, filepath.Join(dir, "in", "1.json"), `{"id": 1, "amount": 5}`+"\n"+`{"id": 2, "amount": -1}`+"\n")
	must(t, 0, sluice, dir, "run", "--live=false")

	mu.Lock()
	var triggers []string
	for _, b := range bodies {
		triggers = append(triggers, fmt.Sprint(b["trigger"]))
	}
	dups := 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	mu.Unlock()
	// orders' end with a failed row, totals' end
	if got := strings.Join(sortedCopy(triggers), ","); got != "expectation_failed,flow_completed" {
		t.Errorf("the handler was told of %s", got)
	}
	if dups != 0 {
		t.Errorf("%d events reached the handler more than once", dups)
	}
	var delivered, failed, firstAttempts int
	for _, ev := range sqlEvents(t, dir, "--type", "hook_progress") {
		var hp struct {
			Hook     string
			Status   string
			Attempts int
		}
		if err := json.Unmarshal(ev.Details["hook_progress"], &hp); err != nil {
			t.Fatal(err)
		}
		switch {
		case hp.Hook == "alerts" && hp.Status == "DELIVERED":
			delivered++
			firstAttempts = max(firstAttempts, hp.Attempts)
		case hp.Hook == "broken" && hp.Status == "FAILED" && ev.Error != nil:
			failed++
		}
	}
	if delivered != 2 || firstAttempts != 3 || failed != 1 {
		t.Errorf("hook_progress: %d delivered (the first after %d tries), %d failed; want 2 (3 tries), 1", delivered, firstAttempts, failed)
	}
	if all := must(t, 0, sluice, dir, "events", "--format", "jsonl").stdout; strings.Contains(all, "s3cret-token") {
		t.Error("the header's secret is in the event log")
	}
	// nothing is told twice across runs: the next run starts after what was told
	writeFile(t, filepath.Join(dir, "in", "2.json"), `{"id": 3, "amount": 7}`+"\n")
	must(t, 0, sluice, dir, "run", "--live=false")
	mu.Lock()
	defer mu.Unlock()
	for key, n := range seen {
		if n > 1 {
			t.Errorf("event %s reached the handler %d times", key, n)
		}
	}
	if len(seen) != 4 { // + the ends of orders and totals
		t.Errorf("the handler saw %d events over two runs, want 4", len(seen))
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
