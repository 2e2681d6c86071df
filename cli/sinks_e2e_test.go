package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sortedLines is text's lines in order, for comparing tables whose rows
// come in different orders.
func sortedLines(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestParquetSinkAndExport: a flow into a Parquet sink writes a file per
// batch with rows, none for a run with nothing new, and the files read
// back to the flow's rows; sluice export writes a table that reads back to
// the table, as of now or of an earlier event.
func TestParquetSinkAndExport(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: sinks\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), `
CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM read_files('data/', format => 'json', schema => 'id BIGINT, amount DECIMAL(10,2), at TIMESTAMP, tags ARRAY<STRING>');
CREATE SINK archive USING parquet OPTIONS (path 'out/archive', compression 'zstd') COMMENT 'every order, doubled';
CREATE FLOW to_archive AS INSERT INTO archive BY NAME SELECT id, amount * 2 AS doubled, at, tags FROM STREAM(orders);
CREATE MATERIALIZED VIEW doubled AS SELECT id, amount * 2 AS doubled, at, tags FROM orders;
`)
	batch := func(name string, from, n int) {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, `{"id": %d, "amount": "%d.%02d", "at": "2026-01-%02dT10:00:00Z", "tags": ["t%d", null]}`+"\n", i, i*3, i%100, 1+i%28, i%5)
		}
		writeFile(t, filepath.Join(dir, "data", name), b.String())
	}
	files := func() []string {
		entries, _ := os.ReadDir(filepath.Join(dir, "out", "archive"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	batch("a.json", 1, 50)
	must(t, 0, sluice, dir, "run", "--live=false")
	if got := files(); len(got) != 1 || got[0] != "part-to_archive-g0-b00000000.parquet" {
		t.Fatalf("after the first run the sink holds %v", got)
	}
	must(t, 0, sluice, dir, "run", "--live=false")
	if got := files(); len(got) != 1 {
		t.Fatalf("a run with nothing new wrote a file: %v", got)
	}
	firstRun := must(t, 0, sluice, dir, "events", "--format", "jsonl").stdout
	batch("b.json", 51, 30)
	must(t, 0, sluice, dir, "run", "--live=false")
	if got := files(); len(got) != 2 {
		t.Fatalf("after the third run the sink holds %v", got)
	}

	// the sink's files read back to the flow's rows
	back := t.TempDir()
	writeFile(t, filepath.Join(back, "pipeline.yaml"), "name: back\n")
	writeFile(t, filepath.Join(back, "flows.sql"), fmt.Sprintf(`
CREATE OR REFRESH STREAMING TABLE archived AS SELECT * FROM STREAM read_files('%s', format => 'parquet');
CREATE OR REFRESH STREAMING TABLE exported AS SELECT * FROM STREAM read_files('%s', format => 'parquet');
CREATE OR REFRESH STREAMING TABLE earlier AS SELECT * FROM STREAM read_files('%s', format => 'parquet');
`, filepath.Join(dir, "out", "archive"), filepath.Join(dir, "exp"), filepath.Join(dir, "earlier")))
	must(t, 0, sluice, dir, "export", "orders", "exp")
	// as of the end of the first run: its 50 orders
	seq := strings.Count(firstRun, "\n")
	out := must(t, 0, sluice, dir, "export", "orders", "earlier", "--as-of", fmt.Sprint(seq)).stdout
	if !strings.Contains(out, "wrote 50 rows of orders") {
		t.Errorf("export --as-of %d says %q", seq, out)
	}
	must(t, 0, sluice, back, "run", "--live=false")
	if got, want := sortedLines(tableRows(t, back, "archived")), sortedLines(tableRows(t, dir, "doubled")); got != want {
		t.Errorf("the sink's files hold\n%s\nnot the flow's rows\n%s", firstDiff(want, got), "")
	}
	if got, want := sortedLines(tableRows(t, back, "exported")), sortedLines(tableRows(t, dir, "orders")); got != want {
		t.Errorf("the exported file does not read back to the table: %s", firstDiff(want, got))
	}
	if got := strings.Count(tableRows(t, back, "earlier"), "\n"); got != 50 {
		t.Errorf("the export as of seq %d has %d rows, want 50", seq, got)
	}
}

// TestSinkOptionSecrets: an option naming ${env:NAME} gets the variable's
// value, and neither the events nor validate show it; an unset variable is
// SECRET_NOT_SET, naming the variable.
func TestSinkOptionSecrets(t *testing.T) {
	dir := t.TempDir()
	secretDir := "out-" + strings.Repeat("x", 12) // stands for a secret: it must not be shown
	t.Setenv("SLUICE_TEST_SINK_PATH", secretDir)
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: secrets\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), `
CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM read_files('data/', format => 'json');
CREATE SINK s USING parquet OPTIONS (path '${env:SLUICE_TEST_SINK_PATH}');
CREATE FLOW f AS INSERT INTO s BY NAME SELECT * FROM STREAM(t);
`)
	writeFile(t, filepath.Join(dir, "data", "a.json"), `{"a": 1}`+"\n")
	must(t, 0, sluice, dir, "run", "--live=false")
	if _, err := os.Stat(filepath.Join(dir, secretDir)); err != nil {
		t.Fatalf("the sink did not write to the directory the variable names: %v", err)
	}
	events := must(t, 0, sluice, dir, "events", "--format", "jsonl").stdout
	if strings.Contains(events, secretDir) || !strings.Contains(events, "${env:SLUICE_TEST_SINK_PATH}") {
		t.Errorf("the events show the secret, or not its reference")
	}
	t.Setenv("SLUICE_TEST_SINK_PATH", "")
	os.Unsetenv("SLUICE_TEST_SINK_PATH")
	res := must(t, 2, sluice, dir, "validate")
	if !strings.Contains(res.stdout+res.stderr, "SECRET_NOT_SET") || !strings.Contains(res.stdout+res.stderr, "SLUICE_TEST_SINK_PATH") {
		t.Errorf("validate with the variable unset says\n%s%s", res.stdout, res.stderr)
	}
}
