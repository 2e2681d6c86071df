package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/pgtest"
	"github.com/sluicehq/sluice/sources/postgres"
)

// fixture makes a table and names a slot and a publication of its own for
// a test, all dropped after it.
func fixture(t testing.TB) (*pgx.Conn, postgres.Options) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN())
	if err != nil {
		t.Fatalf("change capture tests need the server at %s: %v", pgtest.DSN(), err)
	}
	id := fmt.Sprintf("%d", rand.Uint32())
	table := "cdc_test_" + id
	if _, err := conn.Exec(ctx, "CREATE TABLE "+table+" (id bigint PRIMARY KEY, name text, balance numeric(12,2), at timestamptz, doc jsonb, ok boolean)"); err != nil {
		t.Fatal(err)
	}
	opts := postgres.Options{DSN: pgtest.DSN(), Tables: []string{table}, Slot: "sluice_test_" + id, Publication: "sluice_test_" + id}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = conn.Exec(ctx, "SELECT pg_drop_replication_slot($1) WHERE EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", opts.Slot)
		_, _ = conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+opts.Publication)
		_, _ = conn.Exec(ctx, "DROP TABLE "+table)
		conn.Close(ctx)
	})
	return conn, opts
}

func run(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// changes renders a batch's rows: op id name balance.
func changes(b *domain.Batch) string {
	var out []string
	for i := 0; i < b.Len(); i++ {
		r := b.Row(i)
		get := func(name string) domain.Value { return r[b.Schema.Index(name)] }
		out = append(out, fmt.Sprintf("%s %s %s %s", get("_op"), get("id"), get("name"), get("balance")))
	}
	return strings.Join(out, "; ")
}

// TestCaptureInOrder: inserts, updates, deletes and a truncate come as
// rows with the table's columns and the change columns, in log order, a
// range read twice the same, and a plan from a batch's end (its commit in
// sluice) reads only what came since.
func TestCaptureInOrder(t *testing.T) {
	conn, opts := fixture(t)
	ctx := context.Background()
	src, err := postgres.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got := src.Schema().String(); got != "id bigint, name string, balance decimal(12,2), at timestamp, doc variant, ok boolean, _op string NOT NULL, _lsn bigint NOT NULL, _commit_ts timestamp NOT NULL, _table string NOT NULL" {
		t.Errorf("schema %s", got)
	}
	table := opts.Tables[0]
	if _, ok, err := src.Plan(ctx, nil, domain.ReadLimit{}); ok || err != nil { // makes the slot: nothing before it
		t.Fatalf("a plan before any change: %v %v", ok, err)
	}
	run(t, conn, "INSERT INTO "+table+" VALUES (1, 'ann', 10.50, '2026-01-02 03:04:05+00', '{\"b\": 1, \"a\": [true]}', true), (2, 'bob', -3.25, NULL, NULL, false)")
	run(t, conn, "UPDATE "+table+" SET name = 'anne' WHERE id = 1")
	run(t, conn, "DELETE FROM "+table+" WHERE id = 2")
	end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	b, err := src.Read(ctx, nil, end)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changes(b), "INSERT 1 ann 10.50; INSERT 2 bob -3.25; UPDATE 1 anne 10.50; DELETE 2 NULL NULL"; got != want {
		t.Errorf("changes %s, want %s", got, want)
	}
	row := b.Row(0)
	if row[b.Schema.Index("doc")].AsString() != `{"a":[true],"b":1}` || row[b.Schema.Index("at")].String() != "2026-01-02T03:04:05Z" || row[b.Schema.Index("_table")].AsString() != "public."+table {
		t.Errorf("row %v", row)
	}
	lsns := b.Columns[b.Schema.Index("_lsn")]
	for i := 1; i < b.Len(); i++ {
		if lsns.Ints[i] <= lsns.Ints[i-1] {
			t.Errorf("_lsn does not grow: %v", lsns.Ints)
		}
	}
	again, err := src.Read(ctx, nil, end)
	if err != nil || changes(again) != changes(b) {
		t.Errorf("a range read twice: %s, then %s (%v)", changes(b), changes(again), err)
	}
	// the batch committed in sluice: the slot lets go of what is before its
	// end, and the next plan starts there
	if err := src.Committed(ctx, end); err != nil {
		t.Fatal(err)
	}
	run(t, conn, "TRUNCATE "+table)
	run(t, conn, "INSERT INTO "+table+" (id, name) VALUES (3, 'cy')")
	next, ok, err := src.Plan(ctx, end, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	b, err = src.Read(ctx, end, next)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changes(b), "TRUNCATE NULL NULL NULL; INSERT 3 cy NULL"; got != want {
		t.Errorf("after the first batch: %s, want %s", got, want)
	}
	var confirmed string
	if err := conn.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", opts.Slot).Scan(&confirmed); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf(`{"lsn":"%s"}`, confirmed) != string(end) {
		t.Errorf("the slot confirmed %s, want the committed batch's end %s (and not past it: the second batch did not commit)", confirmed, end)
	}
}

// TestBatchesAreWholeTransactions: batches hold whole transactions within
// the row limit, each change once; a range read again (decoded from the
// log, not taken from the plan) gives the same rows.
func TestBatchesAreWholeTransactions(t *testing.T) {
	conn, opts := fixture(t)
	ctx := context.Background()
	src, err := postgres.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, _, err := src.Plan(ctx, nil, domain.ReadLimit{}); err != nil {
		t.Fatal(err)
	}
	table := opts.Tables[0]
	for txn := range 10 {
		run(t, conn, fmt.Sprintf("INSERT INTO %s (id, name) SELECT g, 'n' FROM generate_series(%d, %d) g", table, txn*3, txn*3+2))
	}
	var start domain.Offset
	seen := map[int64]int{}
	batches := 0
	for {
		end, ok, err := src.Plan(ctx, start, domain.ReadLimit{MaxRows: 7})
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		b, err := src.Read(ctx, start, end) // what the plan decoded
		if err != nil {
			t.Fatal(err)
		}
		again, err := src.Read(ctx, start, end) // decoded again, as after a crash
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b.Rows(), again.Rows(), cmp.AllowUnexported(domain.Value{})); diff != "" {
			t.Fatalf("the range read again differs from what the plan decoded:\n%s", diff)
		}
		if b.Len()%3 != 0 || b.Len() > 9 {
			t.Errorf("a batch of %d changes: not whole transactions of 3 within the limit", b.Len())
		}
		for i := 0; i < b.Len(); i++ {
			seen[b.Columns[0].Ints[i]]++
		}
		start = end
		batches++
	}
	if len(seen) != 30 || batches < 4 {
		t.Errorf("%d ids in %d batches, want 30 in several", len(seen), batches)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("id %d read %d times", id, n)
		}
	}
}

// TestDroppedSlot: a slot dropped under a flow that read from it is
// REPLICATION_SLOT_NOT_FOUND, not made again silently.
func TestDroppedSlot(t *testing.T) {
	conn, opts := fixture(t)
	ctx := context.Background()
	src, err := postgres.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, _, err := src.Plan(ctx, nil, domain.ReadLimit{}); err != nil {
		t.Fatal(err)
	}
	run(t, conn, "INSERT INTO "+opts.Tables[0]+" (id) VALUES (1)")
	end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	run(t, conn, "SELECT pg_drop_replication_slot($1)", opts.Slot)
	for _, s := range []*postgres.Source{src, mustNew(t, opts)} { // the running source, and one after a restart
		_, _, err = s.Plan(ctx, end, domain.ReadLimit{})
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.CodeReplicationSlotMissing || de.Retriable || de.Hint == "" {
			t.Errorf("a dropped slot: %v", err)
		}
	}
	var n int
	_ = conn.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", opts.Slot).Scan(&n)
	if n != 0 {
		t.Error("the slot was made again")
	}
}

func mustNew(t *testing.T, opts postgres.Options) *postgres.Source {
	t.Helper()
	s, err := postgres.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestSnapshotThenChanges: with the snapshot, a flow's first batches are
// the rows there, in chunks of the primary key within the row limit, as
// READ changes at the slot's point; the changes after it follow.
func TestSnapshotThenChanges(t *testing.T) {
	conn, opts := fixture(t)
	ctx := context.Background()
	table := opts.Tables[0]
	run(t, conn, "INSERT INTO "+table+" (id, name, balance) SELECT g, 'n' || g, g * 1.5 FROM generate_series(1, 25) g")
	opts.Snapshot = true
	src, err := postgres.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var start domain.Offset
	var sizes []int
	var ops []string
	ids := map[int64]int{}
	for round := 0; round < 2; round++ {
		for {
			end, ok, err := src.Plan(ctx, start, domain.ReadLimit{MaxRows: 10})
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			b, err := src.Read(ctx, start, end)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, b.Len())
			for i := 0; i < b.Len(); i++ {
				ids[b.Columns[0].Ints[i]]++
				ops = append(ops, b.Row(i)[b.Schema.Index("_op")].AsString())
			}
			if err := src.Committed(ctx, end); err != nil {
				t.Fatal(err)
			}
			start = end
		}
		if round == 0 { // changes after the snapshot
			run(t, conn, "INSERT INTO "+table+" (id, name) VALUES (26, 'new')")
			run(t, conn, "UPDATE "+table+" SET name = 'changed' WHERE id = 3")
		}
	}
	if fmt.Sprint(sizes) != "[10 10 5 2]" {
		t.Errorf("batches of %v rows, want the snapshot in chunks of 10, then the 2 changes", sizes)
	}
	if len(ids) != 26 || ids[3] != 2 {
		t.Errorf("ids %v", ids)
	}
	if ops[0] != "READ" || ops[24] != "READ" || ops[25] != "INSERT" || ops[26] != "UPDATE" {
		t.Errorf("ops %v", ops)
	}
}

// TestUnchangedLargeValue: an update that leaves a large (TOASTed) value
// as it was carries no value for it: CDC_UNCHANGED_TOAST_VALUE, never a
// NULL in its place; with REPLICA IDENTITY FULL the value of the row
// before the update is taken.
func TestUnchangedLargeValue(t *testing.T) {
	conn, opts := fixture(t)
	ctx := context.Background()
	table := opts.Tables[0]
	src, err := postgres.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, _, err := src.Plan(ctx, nil, domain.ReadLimit{}); err != nil {
		t.Fatal(err)
	}
	// 40 KB that does not compress: stored out of line
	run(t, conn, "INSERT INTO "+table+" (id, name) SELECT 1, string_agg(md5(g::text), '') FROM generate_series(1, 1250) g")
	run(t, conn, "UPDATE "+table+" SET ok = true WHERE id = 1")
	end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	_, err = src.Read(ctx, nil, end)
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != domain.CodeCDCUnchangedToast || !strings.Contains(de.Hint, "REPLICA IDENTITY FULL") {
		t.Fatalf("an update leaving a large value: %v", err)
	}
	if err := src.Committed(ctx, end); err != nil { // as after a full refresh past it
		t.Fatal(err)
	}
	run(t, conn, "ALTER TABLE "+table+" REPLICA IDENTITY FULL")
	run(t, conn, "UPDATE "+table+" SET ok = false WHERE id = 1")
	next, ok, err := src.Plan(ctx, end, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	b, err := src.Read(ctx, end, next)
	if err != nil || b.Len() != 1 {
		t.Fatalf("%v rows, %v", b, err)
	}
	if name := b.Row(0)[b.Schema.Index("name")]; name.IsNull() || len(name.AsString()) != 40000 {
		t.Errorf("the large value came as %d characters, want the 40000 of the row before", len(name.AsString()))
	}
}
