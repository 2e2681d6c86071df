package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDatasetsInSeveralSchemas: datasets published to other schemas and
// catalogs than the pipeline's, names resolved against USE, and the command
// line taking any unambiguous end of a dataset's name.
func TestDatasetsInSeveralSchemas(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: shop\ncatalog: main\nschema: sales\n")
	writeFile(t, filepath.Join(dir, "data", "orders.json"), `{"id": 1, "amount": 5}`+"\n"+`{"id": 2, "amount": 7}`+"\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), `
CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM read_files('data/', format => 'json');
CREATE OR REFRESH MATERIALIZED VIEW ops.totals AS SELECT sum(amount) AS total FROM main.sales.orders;
CREATE OR REFRESH MATERIALIZED VIEW archive.ops.totals AS SELECT total * 2 AS total FROM ops.totals;
USE SCHEMA ops;
CREATE OR REFRESH MATERIALIZED VIEW big AS SELECT total FROM totals WHERE total > 10;
CREATE OR REFRESH MATERIALIZED VIEW sales.mirror AS SELECT id FROM main.sales.orders;
`)
	r := must(t, 0, sluice, dir, "run", "--live=false")
	out := r.stdout + r.stderr // the summary goes to stderr
	for _, name := range []string{"orders", "ops.totals", "archive.ops.totals", "ops.big", "mirror"} {
		if !strings.Contains(out, name) {
			t.Errorf("the run does not name %s:\n%s", name, out)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"big", `{"total":12}`},                // ops.big, the only one ending so
		{"ops.totals", `{"total":12}`},         // exactly
		{"archive.ops.totals", `{"total":24}`}, // exactly
		{"mirror", `{"id":1}`},                 // in the pipeline's own schema
	} {
		if got := tableRows(t, dir, tc.name); !strings.HasPrefix(got, tc.want) {
			t.Errorf("table %s: %s, want %s...", tc.name, got, tc.want)
		}
	}
	r = must(t, 2, sluice, dir, "table", "totals")
	if !strings.Contains(r.stderr, "AMBIGUOUS_REFERENCE") || !strings.Contains(r.stderr, "archive.ops.totals") {
		t.Errorf("an ambiguous end of a name: %s", r.stderr)
	}
	if r := must(t, 2, sluice, dir, "table", "nope"); !strings.Contains(r.stderr, "not a table") {
		t.Errorf("an unknown table: %s", r.stderr)
	}
	// after USE, a plain name is of the schema it chose
	writeFile(t, filepath.Join(dir, "flows.sql"), `
CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM read_files('data/', format => 'json');
USE SCHEMA ops;
CREATE OR REFRESH MATERIALIZED VIEW copy AS SELECT * FROM orders;
`)
	if r := must(t, 2, sluice, dir, "validate"); !strings.Contains(r.stderr, "which is ops.orders here") {
		t.Errorf("a name resolved against USE: %s", r.stderr)
	}
}
