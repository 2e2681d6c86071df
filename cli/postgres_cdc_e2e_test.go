package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/pgtest"
)

// TestPostgresCDCReplicates: read_postgres_cdc feeds AUTO CDC, and the
// replicated table equals the source table after each run: the rows there
// before (the snapshot), then inserts, updates, deletes and a truncate,
// several transactions a run, and a column added upstream.
func TestPostgresCDCReplicates(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("this test needs the Postgres server at %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	id := fmt.Sprint(time.Now().UnixNano())
	table, slot := "cdc_cli_"+id, "sluice_cli_"+id
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec("CREATE TABLE " + table + " (id bigint PRIMARY KEY, name text, balance numeric(12,2))")
	defer func() {
		_, _ = conn.Exec(ctx, "SELECT pg_drop_replication_slot($1) WHERE EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", slot)
		_, _ = conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+slot)
		_, _ = conn.Exec(ctx, "DROP TABLE "+table)
	}()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: cdc\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), fmt.Sprintf(`
CREATE OR REFRESH STREAMING TABLE customers;
CREATE FLOW replicate AS AUTO CDC INTO customers
FROM STREAM read_postgres_cdc(dsn => '%s', tables => '%s', slot => '%s', publication => '%s')
KEYS (id) APPLY AS DELETE WHEN _op = 'DELETE' APPLY AS TRUNCATE WHEN _op = 'TRUNCATE' SEQUENCE BY _lsn
COLUMNS * EXCEPT (_op, _lsn, _commit_ts, _table);
`, dsn, table, slot, slot))
	source := func() string {
		rows, err := conn.Query(ctx, "SELECT id, name, balance::text FROM "+table+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var id int64
			var name, balance *string
			if err := rows.Scan(&id, &name, &balance); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d %s %s", id, deref(name), deref(balance)))
		}
		return strings.Join(out, "\n")
	}
	replica := func() string {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, "customers")), "\n") {
			if line == "" {
				continue
			}
			var r struct {
				ID      int64
				Name    *string
				Balance json.Number
			}
			d := json.NewDecoder(strings.NewReader(line))
			d.UseNumber()
			if err := d.Decode(&r); err != nil {
				t.Fatal(err)
			}
			balance := string(r.Balance)
			if balance == "" {
				balance = "NULL"
			}
			out = append(out, fmt.Sprintf("%d %s %s", r.ID, deref(r.Name), balance))
		}
		sort.Slice(out, func(i, j int) bool {
			var a, b int
			fmt.Sscan(out[i], &a)
			fmt.Sscan(out[j], &b)
			return a < b
		})
		return strings.Join(out, "\n")
	}
	exec("INSERT INTO " + table + " SELECT g, 'before ' || g, g FROM generate_series(100, 130) g") // there before the slot: the snapshot's
	must(t, 0, sluice, dir, "run", "--live=false")                                                 // makes the slot, reads the snapshot
	if got, want := replica(), source(); got != want {
		t.Errorf("after the snapshot the replica is\n%s\nand the source\n%s", got, want)
	}
	rounds := [][]string{
		{"INSERT INTO %s VALUES (1, 'ann', 10.50), (2, 'bob', -3.25), (3, 'cy', 0)", "UPDATE %s SET name = 'anne' WHERE id = 1", "DELETE FROM %s WHERE id = 2"},
		{"UPDATE %s SET balance = balance + 1", "INSERT INTO %s VALUES (4, NULL, NULL)", "DELETE FROM %s WHERE id = 3", "INSERT INTO %s VALUES (2, 'bob again', 7)"},
		{"TRUNCATE %s", "INSERT INTO %s VALUES (9, 'after the truncate', 1.5)"},
	}
	for i, round := range rounds {
		for _, stmt := range round {
			exec(fmt.Sprintf(stmt, table))
		}
		must(t, 0, sluice, dir, "run", "--live=false")
		if got, want := replica(), source(); got != want {
			t.Errorf("after round %d the replica is\n%s\nand the source\n%s", i+1, got, want)
		}
	}
	// a column added upstream flows into the replica with the next run
	exec("ALTER TABLE " + table + " ADD COLUMN email text")
	exec("INSERT INTO " + table + " VALUES (10, 'dee', 2, 'dee@example.com')")
	exec("UPDATE " + table + " SET email = 'nine@example.com' WHERE id = 9")
	must(t, 0, sluice, dir, "run", "--live=false")
	if got, want := replica(), source(); got != want {
		t.Errorf("after the added column the replica is\n%s\nand the source\n%s", got, want)
	}
	rows := tableRows(t, dir, "customers")
	if !strings.Contains(rows, `"email":"dee@example.com"`) || !strings.Contains(rows, `"email":"nine@example.com"`) {
		t.Errorf("the added column did not flow through:\n%s", rows)
	}
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}
