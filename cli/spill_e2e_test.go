package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutoCDCStateSpills runs AUTO CDC flows (SCD 1 with deletes, SCD 2)
// over 6,000 keys with a state memory budget of 1 MiB, which they outgrow,
// and the same pipeline without a budget: the tables are equal, the
// budgeted flows said that they spilled, and replay --verify rebuilds the
// state of every batch.
func TestAutoCDCStateSpills(t *testing.T) {
	var lines strings.Builder
	pad := strings.Repeat("x", 300)
	for i := 0; i < 24000; i++ {
		key, seq := (i*7919)%6000, 24000-i // every key four times, out of order
		op := "UPDATE"
		if i%11 == 0 {
			op = "DELETE"
		}
		fmt.Fprintf(&lines, `{"id": %d, "v": "%s-%d", "op": "%s", "seq": %d}`+"\n", key, pad, i, op, seq)
	}
	sql := `CREATE OR REFRESH STREAMING TABLE raw AS SELECT * FROM STREAM read_files('data/', format => 'json');
CREATE OR REFRESH STREAMING TABLE one;
CREATE FLOW to_one AS AUTO CDC INTO one FROM STREAM(raw) KEYS (id)
  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op) STORED AS SCD TYPE 1;
CREATE OR REFRESH STREAMING TABLE two;
CREATE FLOW to_two AS AUTO CDC INTO two FROM STREAM(raw) KEYS (id)
  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op) STORED AS SCD TYPE 2;
`
	dirs := map[string]string{}
	for name, setting := range map[string]string{"budget": "state_memory_mib: 1\n", "unbounded": ""} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: spill\n"+setting)
		writeFile(t, filepath.Join(dir, "flows.sql"), sql)
		writeFile(t, filepath.Join(dir, "data", "changes.json"), lines.String())
		must(t, 0, sluice, dir, "run", "--live=false")
		dirs[name] = dir
	}
	for _, table := range []string{"one", "two"} {
		got, want := tableRows(t, dirs["budget"], table), tableRows(t, dirs["unbounded"], table)
		if got != want {
			t.Errorf("table %s differs with a state budget of 1 MiB", table)
		}
		if n := strings.Count(want, "\n"); n < 4000 {
			t.Errorf("table %s has %d rows; the test means it to outgrow the budget", table, n)
		}
	}
	for _, flow := range []string{"to_one", "to_two"} {
		if out := must(t, 0, sluice, dirs["budget"], "events", "--flow", flow, "--type", "flow_progress").stdout; !strings.Contains(out, "spilled to disk") {
			t.Errorf("flow %s did not say that its state spilled:\n%s", flow, out)
		}
	}
	if out := must(t, 0, sluice, dirs["budget"], "replay", "--verify").stdout; !strings.Contains(out, "checked after") {
		t.Errorf("replay --verify: %s", out)
	}
}
