package processors

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// asChanges makes the changes of an AUTO CDC flow of ids: key id mod 5,
// value "v<id>", sequence id; every seventh a delete.
var asChanges = domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
	n := b.Len()
	key, val := domain.NewColumn(domain.KindInt64, n), domain.NewColumn(domain.KindString, n)
	seq, del, trunc := domain.NewColumn(domain.KindInt64, n), domain.NewColumn(domain.KindBool, n), domain.NewColumn(domain.KindBool, n)
	ids := b.Columns[b.Schema.Index("id")]
	for i := range n {
		id := ids.Ints[i]
		key.Ints = append(key.Ints, id%5)
		val.Strs = append(val.Strs, fmt.Sprintf("v%d", id))
		seq.Ints = append(seq.Ints, id)
		d := int64(0)
		if id%7 == 6 {
			d = 1
		}
		del.Ints = append(del.Ints, d)
		trunc.Ints = append(trunc.Ints, 0)
	}
	return domain.BatchOf(domain.NewSchema(
		domain.Field{Name: "id", Type: domain.TypeInt64}, domain.Field{Name: "v", Type: domain.TypeString},
		domain.Field{Name: domain.ChangeSequenceColumn, Type: domain.TypeInt64},
		domain.Field{Name: domain.ChangeDeleteColumn, Type: domain.TypeBool},
		domain.Field{Name: domain.ChangeTruncateColumn, Type: domain.TypeBool}),
		[]*domain.Column{key, val, seq, del, trunc})
})

// cdcTable runs an AUTO CDC flow of the ids [0, n) (asChanges) into table
// t, rowsPerBatch a micro-batch, and returns the store and the seqs of the
// batches committed to t.
func cdcTable(tb testing.TB, n, rowsPerBatch int64) (*eventstore.Store, []uint64) {
	tb.Helper()
	store := openStore(tb)
	f := appendFlow("apply", "t", from(sources.Range(0, n)), asChanges)
	f.Type, f.Changes = domain.FlowChange, &domain.ChangeSpec{Keys: []string{"id"}, SCDType: 1}
	mustComplete(tb, store, newGraph("feed", []*domain.Dataset{streamingTable("t")}, f), Options{Limit: domain.ReadLimit{MaxRows: rowsPerBatch}})
	var seqs []uint64
	for _, ev := range events(tb, store, eventstore.Filter{Dataset: "t", Types: []domain.EventType{domain.EventBatchCommitted}}) {
		seqs = append(seqs, ev.Seq)
	}
	return store, seqs
}

// TestChangeFeedGoesOn: a stream of an AUTO CDC table's change feed, read
// a micro-batch at a time, folds each batch of the table once, keeping the
// fold from one read to the next, and gives what one read of the whole
// feed gives; a read that goes back folds again from the start.
func TestChangeFeedGoesOn(t *testing.T) {
	store, seqs := cdcTable(t, 40, 4)
	ctx := context.Background()

	rowsOf := func(read func(fn func(*domain.Batch) error) error) [][]domain.Value {
		t.Helper()
		var rows [][]domain.Value
		if err := read(func(b *domain.Batch) error {
			rows = append(rows, b.Rows()...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	want := rowsOf(func(fn func(*domain.Batch) error) error { return ScanChanges(ctx, store, "t", 0, 0, fn) })
	if len(want) < 20 {
		t.Fatalf("the feed has %d rows: the test reads too little", len(want))
	}

	feed := &changeFeed{store: store, table: "t"}
	defer feed.close()
	var got [][]domain.Value
	prev, folds := uint64(0), map[any]bool{}
	for _, seq := range seqs {
		got = append(got, rowsOf(func(fn func(*domain.Batch) error) error { return feed.scan(ctx, prev, seq, fn) })...)
		if feed.at != seq {
			t.Fatalf("after reading to %d the feed stands at %d", seq, feed.at)
		}
		folds[feed.state] = true
		prev = seq
	}
	if len(folds) != 1 {
		t.Errorf("%d folds made for %d reads, want one kept from read to read", len(folds), len(seqs))
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b domain.Value) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("read a batch at a time, the feed differs from one read (-one +batches):\n%s", diff)
	}
	state := feed.state
	again := rowsOf(func(fn func(*domain.Batch) error) error { return feed.scan(ctx, 0, 0, fn) })
	if feed.state == state {
		t.Error("a read from the start went on from the fold it had")
	}
	if diff := cmp.Diff(want, again, cmp.Comparer(func(a, b domain.Value) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("read again from the start, the feed differs (-want +got):\n%s", diff)
	}
}

// BenchmarkChangeFeedStream reads the change feed of an AUTO CDC table of
// 100 batches of 1,000 changes a batch at a time, as a stream of
// table_changes does: folding from the table's first batch at each read
// (fold each time), and going on from the fold of the read before (go on).
func BenchmarkChangeFeedStream(b *testing.B) {
	store, seqs := cdcTable(b, 100_000, 1000)
	ctx := context.Background()
	count := func(*domain.Batch) error { return nil }
	b.Run("fold each time", func(b *testing.B) {
		for b.Loop() {
			prev := uint64(0)
			for _, seq := range seqs {
				if err := ScanChanges(ctx, store, "t", prev, seq, count); err != nil {
					b.Fatal(err)
				}
				prev = seq
			}
		}
	})
	b.Run("go on", func(b *testing.B) {
		for b.Loop() {
			feed := &changeFeed{store: store, table: "t"}
			prev := uint64(0)
			for _, seq := range seqs {
				if err := feed.scan(ctx, prev, seq, count); err != nil {
					b.Fatal(err)
				}
				prev = seq
			}
			feed.close()
		}
	})
}
