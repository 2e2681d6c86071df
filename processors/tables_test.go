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
// batches pass their bound; a stream reads the rest from the log: what
// came before the update, and what memory let go.
func TestHandOff(t *testing.T) {
	rows := func(xs ...int64) *domain.Batch {
		b := idBatch(t, xs...)
		b.Rescued, b.Malformed = 7, 8 // a source's counts: not handed on
		return b
	}
	ref := func(seq uint64) batchRef { return batchRef{seq: seq, gen: 1, rows: 1} }
	type part struct {
		from, to uint64
		rows     []int64 // nil: from the log
	}
	parts := func(t *testing.T, c *updateBatches, from, to uint64) ([]part, bool) {
		t.Helper()
		ps, ok, err := c.take("a", from, to, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []part
		for _, p := range ps {
			g := part{from: p.from, to: p.to}
			if p.rows != nil {
				if p.rows.Rescued != 0 || p.rows.Malformed != 0 {
					t.Errorf("batch %d handed on with the source's counts %d and %d", p.from, p.rows.Rescued, p.rows.Malformed)
				}
				g.rows = []int64{int64(p.rows.Len())}
				if len(p.rows.Columns) > 0 {
					g.rows = column(t, p.rows, "id")
				}
			}
			got = append(got, g)
		}
		return got, ok
	}

	c := newUpdateBatches(10)
	c.addReader("a")
	c.addReader("a")
	c.add("a", ref(11), rows(1, 2))
	c.add("a", batchRef{seq: 12, gen: 1, empty: true}, nil)
	c.add("a", ref(13), rows(3))
	c.add("a", batchRef{seq: 14, gen: 0, rows: 1}, rows(9)) // an older generation
	c.add("a", ref(15), domain.NoColumns(4))                // rows without columns
	c.add("z", ref(16), rows(9))                            // nobody reads z: not held

	want := []part{{11, 11, []int64{1, 2}}, {13, 13, []int64{3}}, {15, 15, []int64{4}}}
	for reader := 1; reader <= 2; reader++ {
		if got, ok := parts(t, c, 10, 15); !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("reader %d takes %v (%v), want %v", reader, got, ok, want)
		}
	}
	if got, _ := parts(t, c, 12, 13); !reflect.DeepEqual(got, []part{{13, 13, nil}}) {
		t.Errorf("after both readers, a third read takes %v, want batch 13 from the log", got)
	}
	if c.held[heldKey{"z", 16}] != nil {
		t.Error("a batch of a table nobody reads is held")
	}
	// Before the update, the log; from it on, memory, one read counted.
	c.add("a", ref(17), rows(17))
	if got, _ := parts(t, c, 5, 17); !reflect.DeepEqual(got, []part{{6, 15, nil}, {17, 17, []int64{17}}}) {
		t.Errorf("a range from before the update takes %v, want the log to 15 (what memory let go with it) and 17 from memory", got)
	}
	if h := c.held[heldKey{"a", 17}]; h == nil || h.reads != 1 {
		t.Errorf("batch 17 after one read: %+v, want held, read once", h)
	}
	// A range wholly before the update: the log, up to the range's end.
	if got, _ := parts(t, c, 5, 8); !reflect.DeepEqual(got, []part{{6, 8, nil}}) {
		t.Errorf("a range before the update takes %v, want the log from 6 to 8", got)
	}

	// A range planned from the log may end at a batch committed but not
	// listed yet: the log has it, and every batch before it.
	if _, ok := parts(t, c, 10, 18); ok {
		t.Error("a range ending at a batch not listed yet is taken from memory")
	}

	// Past the bound, the newest batches are not held: memory keeps those
	// the reader comes to first.
	c = newUpdateBatches(10)
	c.addReader("a")
	c.maxHeld = 2*memorySize(rows(0)) + 1
	for seq := uint64(11); seq <= 14; seq++ {
		c.add("a", ref(seq), rows(int64(seq)))
	}
	if c.heldSz > c.maxHeld {
		t.Errorf("%d bytes held, over the bound of %d", c.heldSz, c.maxHeld)
	}
	if got, _ := parts(t, c, 10, 12); !reflect.DeepEqual(got, []part{{11, 11, []int64{11}}, {12, 12, []int64{12}}}) {
		t.Errorf("under the bound: %v, want 11 and 12 from memory", got)
	}
	c.add("a", ref(15), rows(15)) // the reader made room
	if got, _ := parts(t, c, 12, 15); !reflect.DeepEqual(got, []part{{13, 14, nil}, {15, 15, []int64{15}}}) {
		t.Errorf("over the bound: %v, want 13 and 14 from the log in one range, then 15 from memory", got)
	}
	if c.heldSz != 0 || len(c.held) != 0 {
		t.Errorf("%d bytes in %d batches held after the reader read them all", c.heldSz, len(c.held))
	}

	// A writer is behind its readers once memory holds more than half of
	// what it may for them.
	c = newUpdateBatches(10)
	c.maxHeld = 3 * memorySize(rows(0))
	c.add("a", ref(11), rows(11))
	if c.behind("a") {
		t.Error("a table nobody reads has its writer behind")
	}
	c.addReader("a")
	c.addReader("a")
	c.add("a", ref(12), rows(12))
	if c.behind("a") {
		t.Error("one batch of three held, and the writer is behind")
	}
	c.add("a", ref(13), rows(13))
	if !c.behind("a") {
		t.Error("two batches of three held, and the writer is not behind")
	}
	// A stream that reads no more lets go what the others have read.
	parts(t, c, 11, 13)
	if len(c.held) != 2 {
		t.Fatalf("%d batches held after one of two readers took them, want 2", len(c.held))
	}
	c.dropReader("a")
	if len(c.held) != 0 || c.heldSz != 0 {
		t.Errorf("%d batches (%d bytes) held after the reader that had not read them stopped", len(c.held), c.heldSz)
	}

	// A stream that reads a range from the log goes past the batches held
	// in it: they do not stay held for it.
	c = newUpdateBatches(10)
	c.addReader("a")
	c.addReader("b")
	c.add("a", ref(11), rows(11))
	c.add("a", ref(12), rows(12))
	c.add("a", batchRef{seq: 13, gen: 0, rows: 1}, rows(13)) // of another generation
	if _, ok := parts(t, c, 10, 14); ok {
		t.Fatal("a range ending at a batch not listed yet is taken from memory")
	}
	if c.held[heldKey{"a", 11}] != nil || c.held[heldKey{"a", 12}] != nil {
		t.Error("batches a stream read from the log stay held")
	}
	if got, _ := parts(t, c, 12, 13); len(got) != 0 || len(c.held) != 0 {
		t.Errorf("a range over a batch of another generation takes %v and leaves %d held, want nothing", got, len(c.held))
	}
	// Behind is a table's: a writer whose readers keep up reads ahead.
	c.maxHeld = 3 * memorySize(rows(0))
	c.add("a", ref(14), rows(14))
	c.add("a", ref(15), rows(15))
	if !c.behind("a") || c.behind("b") {
		t.Errorf("behind: a %v (two of three held), b %v (none held), want true and false", c.behind("a"), c.behind("b"))
	}

	// AUTO CDC changes are folded from the log with the table's history.
	c.add("a", batchRef{seq: 300, gen: 1, rows: 1, changes: true}, rows(1))
	if _, ok := parts(t, c, 299, 300); ok {
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
	type committed struct {
		ref  batchRef
		rows *domain.Batch
	}
	var batches []committed
	for _, ev := range events(t, store, eventstore.Filter{Dataset: "a", Types: []domain.EventType{domain.EventBatchCommitted}}) {
		b, err := domain.DecodeBatch(ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, committed{batchRef{seq: ev.Seq, gen: ev.Details.BatchCommitted.TableGeneration, rows: int64(b.Len())}, b})
	}
	if len(batches) != 3 {
		t.Fatalf("%d batches committed, want 3", len(batches))
	}
	first, last := batches[0].ref, batches[2].ref
	for _, tc := range []struct {
		name  string
		since uint64 // where the update started
		let   []bool // which batches memory let go
	}{
		{"all held", first.seq - 1, []bool{false, false, false}},
		{"the middle one let go", first.seq - 1, []bool{false, true, false}},
		{"all let go", first.seq - 1, []bool{true, true, true}},
		{"the first from before the update", first.seq, []bool{false, false, false}},
		{"none of the table's batches before the update", first.seq - 1, []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newUpdateBatches(tc.since)
			c.addReader("a")
			for i, b := range batches {
				if b.ref.seq <= tc.since {
					continue // committed before the update: not listed
				}
				rows := b.rows
				if tc.let[i] {
					rows = nil
				}
				c.add("a", b.ref, rows)
			}
			src := &tableSource{store: store, table: "a", streaming: true, committed: c}
			start := tableOffset{Seq: first.seq - 2, Gen: first.gen}.encode() // an event before the first batch
			end := tableOffset{Seq: last.seq, Gen: first.gen}.encode()
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

// TestHandOffToSeveralReaders: two streams read one table beside its
// writer, and a third reads one of theirs, all while the batches are
// handed over in memory; each ends with every row once.
func TestHandOffToSeveralReaders(t *testing.T) {
	store := openStore(t)
	g := newGraph("several", []*domain.Dataset{streamingTable("a"), streamingTable("b"), streamingTable("c"), streamingTable("d")},
		appendFlow("write_a", "a", from(sources.Range(0, 200))),
		appendFlow("read_a", "b", streamOf("a")),
		appendFlow("read_a_too", "c", streamOf("a")),
		appendFlow("read_b", "d", streamOf("b")))
	mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: 7}})
	for _, table := range []string{"a", "b", "c", "d"} {
		if got := sorted(ids(t, store, table)); !slices.Equal(got, span(0, 200)) {
			t.Errorf("%s holds %d rows, want 0 to 199 once each", table, len(got))
		}
	}
}

// TestListedBatchesBounded: a table's list of committed batches keeps its
// latest ones only, so that a continuous update's list does not grow with
// its age; what the list dropped is planned and read from the log.
func TestListedBatchesBounded(t *testing.T) {
	c := newUpdateBatches(10)
	c.addReader("a")
	c.maxListed = 8
	for seq := uint64(11); seq <= 30; seq++ {
		c.add("a", batchRef{seq: seq, gen: 1, rows: 1}, idBatch(t, int64(seq)))
	}
	if n := len(c.tables["a"]); n > 8 {
		t.Fatalf("%d batches listed, want at most 8", n)
	}
	floor := c.floor["a"]
	if floor == 0 || c.tables["a"][0].seq != floor+1 {
		t.Fatalf("the list starts at %d with its floor at %d", c.tables["a"][0].seq, floor)
	}
	if _, ok := c.after("a", floor-1); ok {
		t.Error("a plan from before the list's floor is made from the list")
	}
	if refs, ok := c.after("a", floor); !ok || len(refs) != 30-int(floor) {
		t.Errorf("a plan from the floor: %d batches (%v), want %d", len(refs), ok, 30-floor)
	}
	ps, ok, err := c.take("a", 10, 30, 1)
	if err != nil || !ok {
		t.Fatalf("take: %v, %v", ok, err)
	}
	if ps[0].rows != nil || ps[0].from != 11 || ps[0].to != floor {
		t.Errorf("the first part is %+v, want the log from 11 to %d", ps[0], floor)
	}
	for _, p := range ps[1:] {
		if p.rows == nil || p.from <= floor {
			t.Errorf("part %+v after the floor, want held rows", p)
		}
	}
	for k := range c.held {
		if k.seq <= floor {
			t.Errorf("batch %d, dropped from the list, is still held", k.seq)
		}
	}
}
