package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/pgtest"
	"github.com/sluicehq/sluice/sinks/postgres"
)

// testSchema makes a schema of its own for a test, dropped after it.
func testSchema(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN())
	if err != nil {
		t.Fatalf("the tests of the Postgres sink need a server at %s: %v", pgtest.DSN(), err)
	}
	schema := fmt.Sprintf("sluice_test_%d", rand.Uint64())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	return schema, conn
}

var everyType = domain.NewSchema(
	domain.Field{Name: "id", Type: domain.TypeInt64},
	domain.Field{Name: "small", Type: domain.TypeInt16, Nullable: true},
	domain.Field{Name: "i", Type: domain.TypeInt32, Nullable: true},
	domain.Field{Name: "f", Type: domain.TypeFloat32, Nullable: true},
	domain.Field{Name: "d", Type: domain.TypeFloat64, Nullable: true},
	domain.Field{Name: "money", Type: domain.DecimalType(38, 10), Nullable: true},
	domain.Field{Name: "s", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "ok", Type: domain.TypeBool, Nullable: true},
	domain.Field{Name: "raw", Type: domain.TypeBytes, Nullable: true},
	domain.Field{Name: "day", Type: domain.TypeDate, Nullable: true},
	domain.Field{Name: "at", Type: domain.TypeTimestamp, Nullable: true},
	domain.Field{Name: "local", Type: domain.TypeTimestampNTZ, Nullable: true},
	domain.Field{Name: "doc", Type: domain.TypeVariant, Nullable: true},
	domain.Field{Name: "tags", Type: domain.ListOf(domain.TypeString), Nullable: true},
	domain.Field{Name: "span", Type: domain.Type{Kind: domain.KindDayTimeInterval}, Nullable: true},
)

func rowsOf(t *testing.T, ids ...int64) *domain.Batch {
	t.Helper()
	b := domain.NewBatch(everyType, 0)
	money, _, _ := domain.ParseDecimal("-1234567890123456789012345678.0123456789", 38, 10)
	for _, id := range ids {
		row := []domain.Value{domain.Int(id), domain.Int(-7), domain.Int(2147483647), domain.Float(1.5), domain.Float(0.1),
			domain.Decimal(money, 38, 10), domain.String(fmt.Sprintf("row %d, 'quoted'", id)), domain.Bool(id%2 == 0), domain.Bytes([]byte{0, 1, 255}),
			domain.DateDays(19782), domain.TimestampMicros(1_700_000_000_123_456), domain.TimestampMicros(1_700_000_000_000_000),
			domain.String(`{"a":[1,2.50]}`), domain.List(domain.String("x"), domain.Null()), domain.DayTimeInterval(90_061_000_001)}
		if id < 0 { // a row of NULLs but its key
			for j := 1; j < len(row); j++ {
				row[j] = domain.Null()
			}
		}
		if err := b.AppendRow(row...); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// tableText is the table as Postgres prints it, ordered by id.
func tableText(t *testing.T, conn *pgx.Conn, table string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT "+selectText+" FROM "+table+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

const selectText = `concat_ws(' | ', id, coalesce(small::text, 'NULL'), coalesce(i::text, 'NULL'), coalesce(f::text, 'NULL'), coalesce(d::text, 'NULL'),
	coalesce(money::text, 'NULL'), coalesce(s, 'NULL'), coalesce(ok::text, 'NULL'), coalesce(encode(raw, 'hex'), 'NULL'), coalesce(day::text, 'NULL'),
	coalesce((at AT TIME ZONE 'UTC')::text, 'NULL'), coalesce(local::text, 'NULL'), coalesce(doc::text, 'NULL'), coalesce(tags::text, 'NULL'), coalesce(span::text, 'NULL'))`

// TestAppendOncePerBatch: the sink creates the table with the batch's
// columns, writes every type as Postgres types it, and a batch delivered
// again (as after a kill between the database's commit and sluice's) is
// skipped; the next batch is added.
func TestAppendOncePerBatch(t *testing.T) {
	schema, conn := testSchema(t)
	s, err := postgres.NewSink("p", map[string]string{"dsn": pgtest.DSN(), "table": schema + ".orders"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := domain.SinkBatch{Sink: "out", Flow: "f", BatchID: 0, Rows: rowsOf(t, 1, 2, -3)}
	for range 2 {
		if err := s.Deliver(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	want := "1 | -7 | 2147483647 | 1.5 | 0.1 | -1234567890123456789012345678.0123456789 | row 1, 'quoted' | false | 0001ff | 2024-02-29 | 2023-11-14 22:13:20.123456 | 2023-11-14 22:13:20 | {\"a\": [1, 2.50]} | [\"x\", null] | 1 day 01:01:01.000001\n" +
		"2 | -7 | 2147483647 | 1.5 | 0.1 | -1234567890123456789012345678.0123456789 | row 2, 'quoted' | true | 0001ff | 2024-02-29 | 2023-11-14 22:13:20.123456 | 2023-11-14 22:13:20 | {\"a\": [1, 2.50]} | [\"x\", null] | 1 day 01:01:01.000001\n" +
		"-3 | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL"
	got := tableText(t, conn, schema+".orders")
	if sortLines(got) != sortLines(want) {
		t.Errorf("the table holds\n%s\nwant\n%s", got, want)
	}
	b.BatchID, b.Rows = 1, rowsOf(t, 4)
	if err := s.Deliver(ctx, b); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+".orders").Scan(&n); err != nil || n != 4 {
		t.Errorf("%d rows after the second batch, want 4 (%v)", n, err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+"."+postgres.LedgerTable+" WHERE pipeline = 'p' AND flow = 'f'").Scan(&n); err != nil || n != 2 {
		t.Errorf("the ledger holds %d batches, want 2 (%v)", n, err)
	}
}

func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n")
}

// TestUpsertLastRowOfAKeyWins: upsert inserts new keys, updates the others,
// takes the last row of a key within a batch, and skips a batch
// delivered again.
func TestUpsertLastRowOfAKeyWins(t *testing.T) {
	schema, conn := testSchema(t)
	s, err := postgres.NewSink("p", map[string]string{"dsn": pgtest.DSN(), "table": schema + ".customers", "mode": "upsert", "keys": "id"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv := func(pairs ...any) *domain.Batch {
		b := domain.NewBatch(domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64}, domain.Field{Name: "name", Type: domain.TypeString, Nullable: true}), 0)
		for i := 0; i < len(pairs); i += 2 {
			_ = b.AppendRow(domain.Int(int64(pairs[i].(int))), domain.String(pairs[i+1].(string)))
		}
		return b
	}
	deliver := func(id int64, rows *domain.Batch) {
		if err := s.Deliver(ctx, domain.SinkBatch{Sink: "c", Flow: "f", BatchID: id, Rows: rows}); err != nil {
			t.Fatal(err)
		}
	}
	deliver(0, kv(1, "ann", 2, "bob", 1, "anne"))
	deliver(1, kv(2, "robert", 3, "cy"))
	deliver(1, kv(2, "not this", 4, "nor this")) // a redelivery: skipped
	rows, _ := conn.Query(ctx, "SELECT id || '=' || name FROM "+schema+".customers ORDER BY id")
	got, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	if strings.Join(got, ",") != "1=anne,2=robert,3=cy" {
		t.Errorf("the table holds %v", got)
	}
}

// TestErrors: a row that does not fit the table is SINK_WRITE_FAILED, not
// retriable, and writes nothing (nor its ledger row); a server that does
// not answer is retriable; the options are checked.
func TestErrors(t *testing.T) {
	schema, conn := testSchema(t)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE "+schema+".narrow (id bigint PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	s, _ := postgres.NewSink("p", map[string]string{"dsn": pgtest.DSN(), "table": schema + ".narrow"})
	err := s.Deliver(ctx, domain.SinkBatch{Sink: "n", Flow: "f", BatchID: 0, Rows: rowsOf(t, 1)})
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != domain.CodeSinkWriteFailed || de.Retriable || de.Hint == "" {
		t.Errorf("a batch with columns the table lacks: %v", err)
	}
	var n int
	_ = conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+"."+postgres.LedgerTable).Scan(&n)
	if n != 0 {
		t.Errorf("the failed batch left %d ledger rows", n)
	}

	gone, _ := postgres.NewSink("p", map[string]string{"dsn": "postgres://postgres:hunter2@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", "table": "t"})
	err = gone.Deliver(ctx, domain.SinkBatch{Sink: "n", Flow: "f", BatchID: 0, Rows: rowsOf(t, 1)})
	if !errors.As(err, &de) || de.Code != domain.CodeSinkWriteFailed || !de.Retriable || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a server that does not answer: %v", err)
	}

	for _, opts := range []map[string]string{
		{"table": "t"},
		{"dsn": pgtest.DSN()},
		{"dsn": pgtest.DSN(), "table": "t", "mode": "upsert"},
		{"dsn": pgtest.DSN(), "table": "t", "mode": "merge"},
		{"dsn": pgtest.DSN(), "table": "a.b.c"},
		{"dsn": pgtest.DSN(), "table": "t", "batchsize": "10"},
		{"dsn": "postgres://x:y@host:notaport/db", "table": "t"},
	} {
		_, err := postgres.NewSink("p", opts)
		if !errors.As(err, &de) || de.Code != domain.CodeSinkOption || strings.Contains(err.Error(), ":y@") {
			t.Errorf("%v: got %v, want INVALID_SINK_OPTION without the password", opts, err)
		}
	}
}
