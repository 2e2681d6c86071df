package processors

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// TestReadTableAsOf: ReadTable and ScanTable read a table as of a log
// position: the batches of the generation current then, committed by then.
func TestReadTableAsOf(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 2)
	g := newGraph("asof", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(jsonFiles(dir))))
	mustComplete(t, store, g, Options{})
	afterFirst := store.LastSeq()
	writeIDs(t, dir, "2.json", 2, 4)
	mustComplete(t, store, g, Options{})
	afterSecond := store.LastSeq()
	mustComplete(t, store, g, Options{FullRefresh: []string{"t"}})
	afterRefresh := store.LastSeq()
	writeIDs(t, dir, "3.json", 4, 5)
	mustComplete(t, store, g, Options{})

	tests := []struct {
		name string
		asOf uint64
		want []int64
	}{
		{"the start", 1, nil},
		{"after the first update", afterFirst, span(0, 2)},
		{"after the second update", afterSecond, span(0, 4)},
		{"after the full refresh", afterRefresh, span(0, 4)},
		{"now", 0, span(0, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ReadTable(ctx, store, "t", tt.asOf)
			if err != nil {
				t.Fatal(err)
			}
			if got := sorted(column(t, b, "id")); !slices.Equal(got, tt.want) {
				t.Errorf("ReadTable: %v, want %v", got, tt.want)
			}
			var scanned []int64
			var batches int
			err = ScanTable(ctx, store, "t", tt.asOf, func(b *domain.Batch) error {
				batches++
				scanned = append(scanned, column(t, b, "id")...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := sorted(scanned); !slices.Equal(got, tt.want) {
				t.Errorf("ScanTable: %v, want %v", got, tt.want)
			}
			if len(tt.want) > 0 && batches == 0 {
				t.Error("ScanTable called fn for no batch")
			}
		})
	}

	stop := errors.New("enough")
	calls := 0
	err := ScanTable(ctx, store, "t", 0, func(*domain.Batch) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("ScanTable with fn failing: %v after %d calls, want fn's error after 1", err, calls)
	}
	if s, err := TableSchemaAt(ctx, store, "t", 1); err != nil || s != nil {
		t.Errorf("the schema before any batch: %v (%v), want none", s, err)
	}
	if s, err := TableSchemaAt(ctx, store, "t", afterFirst); err != nil || s == nil || s.Index("id") != 0 {
		t.Errorf("the schema after the first update: %v (%v)", s, err)
	}
	if b, err := ReadTable(ctx, store, "never_written", 0); err != nil || b.Len() != 0 {
		t.Errorf("a table without batches: %v rows (%v), want none", b.Len(), err)
	}
}

// TestStreamOfRefreshedTableFails: a flow streaming from a table that was
// fully refreshed without it fails with STREAMING_SOURCE_WAS_RESET rather
// than silently rereading or skipping rows; refreshing both goes on.
func TestStreamOfRefreshedTableFails(t *testing.T) {
	store := openStore(t)
	g := newGraph("reset", []*domain.Dataset{streamingTable("raw"), streamingTable("copy")},
		appendFlow("load", "raw", from(sources.Range(0, 3))),
		appendFlow("copy", "copy", streamOf("raw")))
	mustComplete(t, store, g, Options{})
	mustComplete(t, store, g, Options{FullRefresh: []string{"raw"}})
	res := mustFail(t, store, g, Options{}, domain.CodeUpstreamReset)
	if res.Flows["copy"] != domain.FlowFailed {
		t.Errorf("copy is %s", res.Flows["copy"])
	}
	if n := retries(t, store, res.UpdateID, "copy"); n != 0 {
		t.Errorf("an upstream reset was retried %d times", n)
	}
	mustComplete(t, store, g, Options{FullRefresh: []string{"raw", "copy"}})
	if got := ids(t, store, "copy"); !slices.Equal(got, span(0, 3)) {
		t.Errorf("copy holds %v after refreshing both", got)
	}
}

// TestBatchTooLargeIsPlannedAgainSmaller: a micro-batch too large for one
// commit is planned again with the same id and half the rows, and the rest
// follows in later batches; every row lands once.
func TestBatchTooLargeIsPlannedAgainSmaller(t *testing.T) {
	store := openStore(t)
	const rows = 5000
	// 4 KiB of random bytes a row (so that compression does not shrink
	// them): ~20 MB, over the store's 16 MiB limit for one event
	random := rand.NewChaCha8([32]byte{})
	wide := domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		pad := domain.NewColumn(domain.KindString, b.Len())
		for range b.Len() {
			padding := make([]byte, 4<<10)
			_, _ = random.Read(padding)
			pad.Strs = append(pad.Strs, string(padding))
		}
		schema := domain.NewSchema(append(slices.Clone(b.Schema.Fields), domain.Field{Name: "pad", Type: domain.TypeString})...)
		return domain.BatchOf(schema, append(slices.Clone(b.Columns), pad))
	})
	g := newGraph("big", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(sources.Range(0, rows)), wide))
	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: rows}})

	var replans []*domain.BatchInfo
	for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventBatchPlanned}}) {
		if ev.Level == domain.LevelWarn {
			replans = append(replans, ev.Details.BatchPlanned)
		}
	}
	if len(replans) == 0 || replans[0].BatchID != 0 {
		t.Fatalf("replans %+v, want batch 0 planned again", replans)
	}
	batches := committedBatches(t, store, res.UpdateID, "load")
	if len(batches) < 2 || batches[0].NumRows > rows/2 {
		t.Errorf("committed %d batches, the first of %d rows: want it at most %d", len(batches), batches[0].NumRows, rows/2)
	}
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, rows)) {
		t.Errorf("t holds %d rows, want 0..%d once each", len(got), rows-1)
	}
}

// TestHandOff: the batches an update commits are held for the streams of
// the update that read their table, until each has read them or the held
// batches pass their bound; a stream reads what memory no longer holds
// from the log.
func TestHandOff(t *testing.T) {
	held := func(xs ...int64) batchRef {
		b := idBatch(t, xs...)
		b.Rescued, b.Malformed = 7, 8 // a source's counts: not handed on
		return batchRef{gen: 1, rows: int64(len(xs)), batch: b, size: 100}
	}
	at := func(ref batchRef, seq uint64) batchRef { ref.seq = seq; return ref }
	type part struct {
		seq  uint64
		rows []int64 // nil: from the log
	}
	parts := func(t *testing.T, c *updateBatches, from, to uint64) ([]part, bool) {
		t.Helper()
		ps, ok, err := c.take("a", from, to, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []part
		for _, p := range ps {
			g := part{seq: p.seq}
			if p.rows != nil {
				if p.rows.Rescued != 0 || p.rows.Malformed != 0 {
					t.Errorf("batch %d handed on with the source's counts %d and %d", p.seq, p.rows.Rescued, p.rows.Malformed)
				}
				g.rows = column(t, p.rows, "id")
			}
			got = append(got, g)
		}
		return got, ok
	}

	c := newUpdateBatches(10)
	c.addReader("a")
	c.addReader("a")
	c.add("a", at(held(1, 2), 11))
	c.add("a", batchRef{seq: 12, gen: 1, empty: true})
	c.add("a", at(held(3), 13))
	c.add("a", batchRef{seq: 14, gen: 0, rows: 1}) // an older generation
	c.add("a", at(held(4), 15))
	c.add("z", at(held(9), 16)) // nobody reads z: not held

	want := []part{{11, []int64{1, 2}}, {13, []int64{3}}, {15, []int64{4}}}
	for reader := 1; reader <= 2; reader++ {
		if got, ok := parts(t, c, 10, 15); !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("reader %d takes %v (%v), want %v", reader, got, ok, want)
		}
	}
	if got, _ := parts(t, c, 12, 13); !reflect.DeepEqual(got, []part{{13, nil}}) {
		t.Errorf("after both readers, a third read takes %v, want batch 13 from the log", got)
	}
	if ref := c.find("z", 16); ref.batch != nil {
		t.Error("a batch of a table nobody reads is held")
	}
	if c.heldSz != 0 {
		t.Errorf("%d bytes held after every reader read them", c.heldSz)
	}
	if _, ok := parts(t, c, 9, 15); ok {
		t.Error("a range from before the update started is taken from memory")
	}

	// Past the bound, the oldest batches are let go.
	c.maxHeld = 250
	for seq := uint64(17); seq <= 19; seq++ {
		c.add("a", at(held(int64(seq)), seq))
	}
	if got, _ := parts(t, c, 16, 19); !reflect.DeepEqual(got, []part{{17, nil}, {18, []int64{18}}, {19, []int64{19}}}) {
		t.Errorf("over the bound: %v, want batch 17 from the log", got)
	}
	if c.heldSz != 200 {
		t.Errorf("%d bytes held, want 200", c.heldSz)
	}

	// AUTO CDC changes are folded from the log with the table's history.
	c.add("a", batchRef{seq: 20, gen: 1, rows: 1, changes: true})
	if _, ok := parts(t, c, 19, 20); ok {
		t.Error("a range holding AUTO CDC changes is taken from memory")
	}
}

// TestStreamReadsBatchesLetGo: a stream whose table's batches memory let go
// (some or all) reads them from the log, and gets every row once.
func TestStreamReadsBatchesLetGo(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	g := newGraph("letgo", []*domain.Dataset{streamingTable("a")}, appendFlow("write_a", "a", from(sources.Range(0, 6))))
	mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: 2}})
	var refs []batchRef
	for _, ev := range events(t, store, eventstore.Filter{Dataset: "a", Types: []domain.EventType{domain.EventBatchCommitted}}) {
		b, err := domain.DecodeBatch(ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, batchRef{seq: ev.Seq, gen: ev.Details.BatchCommitted.TableGeneration, rows: int64(b.Len()), batch: b, size: len(ev.Data)})
	}
	if len(refs) != 3 {
		t.Fatalf("%d batches committed, want 3", len(refs))
	}
	for _, tc := range []struct {
		name string
		let  []bool // which batches memory let go
	}{
		{"all held", []bool{false, false, false}},
		{"the middle one let go", []bool{false, true, false}},
		{"all let go", []bool{true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newUpdateBatches(refs[0].seq - 1)
			c.addReader("a")
			for i, ref := range refs {
				if tc.let[i] {
					ref.batch = nil
				}
				c.add("a", ref)
			}
			src := &tableSource{store: store, table: "a", streaming: true, committed: c}
			start := tableOffset{Seq: refs[0].seq - 1, Gen: refs[0].gen}.encode()
			end := tableOffset{Seq: refs[2].seq, Gen: refs[0].gen}.encode()
			b, err := src.Read(ctx, start, end)
			if err != nil {
				t.Fatal(err)
			}
			if got := column(t, b, "id"); !slices.Equal(got, span(0, 6)) {
				t.Errorf("read %v, want %v in order", got, span(0, 6))
			}
		})
	}
}
