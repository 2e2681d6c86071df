package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/pgtest"
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

// TestPostgresSinkFromSQL: CREATE SINK ... USING postgres upserts a
// streaming table's rows into a Postgres table, each batch once, and the
// sink's definition event shows the DSN's password as *****.
func TestPostgresSinkFromSQL(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.DSN()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("this test needs the Postgres server at %s: %v", admin, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("sluice_cli_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")

	dir := t.TempDir()
	t.Setenv("SLUICE_TEST_PG", "postgres://postgres:not-a-real-password@127.0.0.1:5432/postgres?sslmode=disable")
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: pgsink\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), fmt.Sprintf(`
CREATE OR REFRESH STREAMING TABLE customers AS SELECT * FROM STREAM read_files('data/', format => 'json', schema => 'id BIGINT, name STRING, balance DECIMAL(12,2)');
CREATE SINK warehouse USING postgres OPTIONS (dsn '${env:SLUICE_TEST_PG}', table '%s.customers', mode 'upsert', keys 'id');
CREATE SINK audit USING postgres OPTIONS (dsn 'postgres://postgres:also-not-real@127.0.0.1:5432/postgres?sslmode=disable', table '%s.audit');
CREATE FLOW to_warehouse AS INSERT INTO warehouse BY NAME SELECT * FROM STREAM(customers);
CREATE FLOW to_audit AS INSERT INTO audit BY NAME SELECT id, name FROM STREAM(customers);
`, schema, schema))
	writeFile(t, filepath.Join(dir, "data", "a.json"), `{"id": 1, "name": "ann", "balance": "10.50"}`+"\n"+`{"id": 2, "name": "bob", "balance": "-3.25"}`+"\n")
	must(t, 0, sluice, dir, "run", "--live=false")
	writeFile(t, filepath.Join(dir, "data", "b.json"), `{"id": 2, "name": "robert", "balance": "0.00"}`+"\n"+`{"id": 3, "name": "cy", "balance": null}`+"\n")
	must(t, 0, sluice, dir, "run", "--live=false")
	must(t, 0, sluice, dir, "run", "--live=false")

	rows, err := conn.Query(ctx, "SELECT id || ' ' || name || ' ' || coalesce(balance::text, 'NULL') FROM "+schema+".customers ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	if strings.Join(got, "; ") != "1 ann 10.50; 2 robert 0.00; 3 cy NULL" {
		t.Errorf("the warehouse table holds %v", got)
	}
	var audit int
	_ = conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+".audit").Scan(&audit)
	if audit != 4 {
		t.Errorf("the audit table has %d rows, want the 4 appended", audit)
	}
	events := must(t, 0, sluice, dir, "events", "--type", "sink_definition", "--format", "jsonl").stdout
	if strings.Contains(events, "not-a-real-password") || strings.Contains(events, "also-not-real") || !strings.Contains(events, "${env:SLUICE_TEST_PG}") || !strings.Contains(events, ":*****@") {
		t.Errorf("the sink definitions show a password, or not its reference:\n%s", events)
	}
}

// TestChangeFeedIntoPostgres replicates an AUTO CDC table into Postgres:
// the table's change feed (table_changes) into a sink in changes mode,
// over runs that insert, update and delete; the Postgres table ends equal
// to the table.
func TestChangeFeedIntoPostgres(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.DSN()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("this test needs the Postgres server at %s: %v", admin, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("sluice_feed_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: feed\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), fmt.Sprintf(`
CREATE OR REFRESH STREAMING TABLE customers;
CREATE FLOW apply AS AUTO CDC INTO customers
FROM STREAM read_files('changes/', format => 'json', schema => 'id BIGINT, name STRING, op STRING, seq BIGINT')
KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq);
CREATE SINK replica USING postgres OPTIONS (dsn '%s', table '%s.customers', mode 'changes', keys 'id');
CREATE FLOW to_replica AS INSERT INTO replica BY NAME SELECT * FROM STREAM table_changes('customers');
`, admin, schema))
	change := func(file string, lines ...string) {
		writeFile(t, filepath.Join(dir, "changes", file), strings.Join(lines, "\n")+"\n")
	}
	replica := func() string {
		rows, err := conn.Query(ctx, "SELECT id || ' ' || name FROM "+schema+".customers ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := pgx.CollectRows(rows, pgx.RowTo[string])
		return strings.Join(got, "; ")
	}
	table := func() string {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, "customers")), "\n") {
			var row struct {
				ID   int
				Name string
			}
			if line != "" {
				_ = json.Unmarshal([]byte(line), &row)
				out = append(out, fmt.Sprintf("%d %s", row.ID, row.Name))
			}
		}
		sort.Strings(out)
		return strings.Join(out, "; ")
	}
	change("1.json", `{"id": 1, "name": "ann", "op": "I", "seq": 1}`, `{"id": 2, "name": "bob", "op": "I", "seq": 2}`, `{"id": 3, "name": "cy", "op": "I", "seq": 3}`)
	must(t, 0, sluice, dir, "run", "--live=false")
	if got := replica(); got != "1 ann; 2 bob; 3 cy" {
		t.Fatalf("after the inserts Postgres holds %q", got)
	}
	change("2.json", `{"id": 2, "name": "robert", "op": "U", "seq": 4}`, `{"id": 3, "op": "D", "seq": 5}`, `{"id": 4, "name": "dee", "op": "I", "seq": 6}`,
		`{"id": 4, "name": "deedee", "op": "U", "seq": 7}`)
	must(t, 0, sluice, dir, "run", "--live=false")
	must(t, 0, sluice, dir, "run", "--live=false") // nothing new
	if got, want := replica(), table(); got != want || got != "1 ann; 2 robert; 4 deedee" {
		t.Errorf("Postgres holds %q, the table %q; want both 1 ann; 2 robert; 4 deedee", got, want)
	}
}
