package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sources/postgres"
)

const benchChanges = 100_000

// benchSlot fills a table with 100k inserts in 100 transactions after the
// slot is made: the changes the benchmarks read.
func benchSlot(b *testing.B) (postgres.Options, func(string) int64) {
	conn, opts := fixture(b)
	ctx := context.Background()
	src, err := postgres.New(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := src.Plan(ctx, nil, domain.ReadLimit{}); err != nil {
		b.Fatal(err)
	}
	src.Close()
	for txn := range 100 {
		if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s (id, name, balance, ok) SELECT g, 'user ' || g, g * 1.25, g %% 2 = 0 FROM generate_series(%d, %d) g",
			opts.Tables[0], txn*1000, txn*1000+999)); err != nil {
			b.Fatal(err)
		}
	}
	count := func(q string) int64 {
		var n int64
		if err := conn.QueryRow(ctx, q, opts.Slot, opts.Publication).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	return opts, count
}

// BenchmarkCDCRead plans and reads 100k changes: decoded by the server,
// parsed into a batch of the table's columns.
func BenchmarkCDCRead(b *testing.B) {
	opts, _ := benchSlot(b)
	ctx := context.Background()
	src, err := postgres.New(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	b.ResetTimer()
	for b.Loop() {
		end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		batch, err := src.Read(ctx, nil, end)
		if err != nil || batch.Len() != benchChanges {
			b.Fatalf("%d rows, %v", batch.Len(), err)
		}
	}
	b.ReportMetric(benchChanges*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkPeekFloor is the floor: the server decoding the same changes
// with nothing read (a count of pg_logical_slot_peek_binary_changes).
func BenchmarkPeekFloor(b *testing.B) {
	_, count := benchSlot(b)
	b.ResetTimer()
	for b.Loop() {
		if n := count("SELECT count(*) FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2)"); n < benchChanges {
			b.Fatalf("%d rows decoded", n)
		}
	}
	b.ReportMetric(benchChanges*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}
