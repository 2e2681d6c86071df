package processors

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// keepIDs is a transform that keeps the rows whose id keep accepts, as an
// SQL filter does: a selection of its input's rows, never changed after
// (it says so: domain.KeepsSelections).
func keepIDs(keep func(int64) bool) domain.Transform { return idFilter(keep) }

type idFilter func(int64) bool

func (f idFilter) KeepsSelections() {}

func (f idFilter) Apply(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
	j := b.Schema.Index("id")
	var rows []int
	for i := range b.Len() {
		if f(b.Columns[j].Ints[i]) {
			rows = append(rows, i)
		}
	}
	return b.Select(rows), nil
}

// TestSelectionOfStoredRows: a streaming table keeping at least half of
// another's rows commits them as a selection of that table's stored
// batches (and a table keeping some of those, as a selection of the same
// batches); one keeping fewer stores its own rows. Every table reads the
// same from memory, from the log and from a reopened store; vacuum keeps
// the superseded batches whose rows another table still keeps, and removes
// them once no table does; the store checks sound throughout.
func TestSelectionOfStoredRows(t *testing.T) {
	dir := t.TempDir()
	store := openStoreAt(t, dir)
	ctx := context.Background()
	notFour := func(id int64) bool { return id%4 != 0 }
	notThree := func(id int64) bool { return id%3 != 0 }
	tenth := func(id int64) bool { return id%10 == 0 }
	g := newGraph("selections",
		[]*domain.Dataset{streamingTable("numbers"), streamingTable("most"), streamingTable("fewer"), streamingTable("few")},
		appendFlow("numbers", "numbers", from(sources.Range(0, 200_000))),
		appendFlow("most", "most", streamOf("numbers"), keepIDs(notFour)),
		appendFlow("fewer", "fewer", streamOf("most"), keepIDs(notThree)),
		appendFlow("few", "few", streamOf("numbers"), keepIDs(tenth)),
	)
	first := mustComplete(t, store, g, Options{})

	want := map[string][]int64{"numbers": span(0, 200_000)}
	for _, id := range want["numbers"] {
		if notFour(id) {
			want["most"] = append(want["most"], id)
			if notThree(id) {
				want["fewer"] = append(want["fewer"], id)
			}
		}
		if tenth(id) {
			want["few"] = append(want["few"], id)
		}
	}
	check := func(when string) {
		t.Helper()
		for table, rows := range want {
			if got := sorted(ids(t, store, table)); !slices.Equal(got, rows) {
				t.Errorf("%s: %s has %d rows, want %d", when, table, len(got), len(rows))
			}
		}
	}
	check("after the update")

	for _, c := range []struct{ flow, selects string }{{"numbers", ""}, {"most", "numbers"}, {"fewer", "numbers"}, {"few", ""}} {
		batches := committedBatches(t, store, first.UpdateID, c.flow)
		if len(batches) == 0 {
			t.Fatalf("flow %s committed no batch", c.flow)
		}
		for _, b := range batches {
			if b.NumRows > 0 && b.Selects != c.selects {
				t.Errorf("a batch of %s selects %q, want %q", c.flow, b.Selects, c.selects)
			}
		}
	}

	// An as-of read, and a read from a store opened again (nothing held
	// in memory), give the same rows.
	asOf := store.LastSeq()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	report, err := eventstore.Check(ctx, dir)
	if err != nil || !report.OK() {
		t.Fatalf("check: %v %+v", err, report)
	}
	store = openStoreAt(t, dir)
	check("read again")
	b, err := ReadTable(ctx, store, "fewer", asOf)
	if err != nil || b.Len() != len(want["fewer"]) {
		t.Fatalf("fewer as of %d: %d rows, %v", asOf, b.Len(), err)
	}

	// A full refresh of numbers supersedes its batches; most and fewer
	// still keep rows of them, so vacuum keeps those; few's rows are its
	// own, so nothing of its source needs keeping for it.
	mustComplete(t, store, g, Options{FullRefresh: []string{"numbers"}})
	zero := time.Duration(0)
	got, err := Vacuum(ctx, store, VacuumOptions{Retain: &zero})
	if err != nil {
		t.Fatal(err)
	}
	numbersBatches := len(committedBatches(t, store, first.UpdateID, "numbers"))
	for _, v := range got {
		if v.Table == "numbers" && (v.Batches != 0 || v.Kept != numbersBatches) {
			t.Errorf("vacuum of numbers: removed %d batches and kept %d, want 0 and %d", v.Batches, v.Kept, numbersBatches)
		}
	}
	check("after the first vacuum")

	// Once most and fewer are refreshed too, no table keeps the old rows
	// of numbers, and vacuum removes them with the old selections.
	mustComplete(t, store, g, Options{FullRefresh: []string{"most", "fewer", "few"}})
	if got, err = Vacuum(ctx, store, VacuumOptions{Retain: &zero}); err != nil {
		t.Fatal(err)
	}
	removed := map[string]int{}
	for _, v := range got {
		removed[v.Table] = v.Batches
		if v.Kept != 0 {
			t.Errorf("the second vacuum kept %d batches of %s", v.Kept, v.Table)
		}
	}
	if removed["numbers"] != numbersBatches || removed["most"] == 0 || removed["fewer"] == 0 {
		t.Errorf("the second vacuum removed %v, want the %d old batches of numbers and the old selections", removed, numbersBatches)
	}
	check("after the second vacuum") // the refreshed tables read numbers' second generation
	if err := store.VerifyProjections(ctx); err != nil {
		t.Errorf("projections: %v", err)
	}
}

// TestSelectionDamage: a selection whose stored batch is not a batch of
// its table's own rows reads as STORE_CORRUPT, not as other rows.
func TestSelectionDamage(t *testing.T) {
	store := openStore(t)
	g := newGraph("damage",
		[]*domain.Dataset{streamingTable("numbers"), streamingTable("most")},
		appendFlow("numbers", "numbers", from(sources.Range(0, 1000))),
		appendFlow("most", "most", streamOf("numbers"), keepIDs(func(id int64) bool { return id%4 != 0 })),
	)
	mustComplete(t, store, g, Options{})
	evs := events(t, store, eventstore.Filter{Dataset: "most", Types: []domain.EventType{domain.EventBatchCommitted}})
	var sel *domain.Event
	for _, ev := range evs {
		if ev.Details.BatchCommitted.Selects != "" {
			sel = ev
		}
	}
	if sel == nil {
		t.Fatal("most committed no selection")
	}
	for _, c := range []struct {
		name string
		edit func(*domain.BatchInfo)
	}{
		{"another table", func(bc *domain.BatchInfo) { bc.Selects = "most" }},
		{"no such table", func(bc *domain.BatchInfo) { bc.Selects = "nope" }},
	} {
		ev := *sel
		bc := *sel.Details.BatchCommitted
		c.edit(&bc)
		ev.Details.BatchCommitted = &bc
		if _, err := rowsOf(store, &ev); domain.CodeOf(err) != domain.CodeStoreCorrupt {
			t.Errorf("%s: %v, want %s", c.name, err, domain.CodeStoreCorrupt)
		}
	}
	ev := *sel
	ev.Data = append([]byte(nil), sel.Data[:len(sel.Data)-1]...)
	if _, err := rowsOf(store, &ev); domain.CodeOf(err) != domain.CodeStoreCorrupt {
		t.Errorf("a selection cut short: %v, want %s", err, domain.CodeStoreCorrupt)
	}
	s, err := domain.DecodeSelection(sel.Data)
	if err != nil {
		t.Fatal(err)
	}
	s.Batches[0].Seq = store.LastSeq() + 10
	ev.Data = domain.EncodeSelection(s)
	if _, err := rowsOf(store, &ev); domain.CodeOf(err) != domain.CodeStoreCorrupt {
		t.Errorf("a selection of a batch past the log: %v, want %s", err, domain.CodeStoreCorrupt)
	}
}

// TestSelectionOfEmptyBatches: a micro-batch that keeps no rows commits a
// batch of columns and no rows; a table reading it with others (a stream,
// a whole read) still selects from the others and reads back.
func TestSelectionOfEmptyBatches(t *testing.T) {
	dir := t.TempDir()
	store := openStoreAt(t, dir)
	ctx := context.Background()
	low := keepIDs(func(id int64) bool { return (id < 50 || id >= 150) && id%4 == 0 }) // nothing of 50..149
	g := newGraph("empty",
		[]*domain.Dataset{streamingTable("numbers"), streamingTable("low"), streamingTable("most"), materializedView("whole")},
		appendFlow("numbers", "numbers", from(sources.Range(0, 200))),
		appendFlow("low", "low", streamOf("numbers"), low),
		appendFlow("most", "most", streamOf("low"), keepIDs(func(id int64) bool { return id != 4 })),
		viewFlow("whole", "whole", wholeOf("low"), keepIDs(func(id int64) bool { return id != 8 })),
	)
	mustComplete(t, store, newGraph("empty", []*domain.Dataset{streamingTable("numbers"), streamingTable("low")}, g.Flows["numbers"], g.Flows["low"]),
		Options{Limit: domain.ReadLimit{MaxRows: 50}})
	mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: 50}})
	var want []int64
	for id := range int64(200) {
		if (id < 50 || id >= 150) && id%4 == 0 {
			want = append(want, id)
		}
	}
	for table, drop := range map[string]int64{"most": 4, "whole": 8} {
		if got, w := sorted(ids(t, store, table)), slices.DeleteFunc(slices.Clone(want), func(id int64) bool { return id == drop }); !slices.Equal(got, w) {
			t.Errorf("%s: %v, want %v", table, got, w)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if report, err := eventstore.Check(ctx, dir); err != nil || !report.OK() {
		t.Fatalf("check: %v %+v", err, report)
	}
}

// TestUserTransformsMakeNewRows: what a user's transform returns is stored
// as rows of its own, even when it built them by selecting its input's
// rows and then wrote into them, or copied the batch and replaced a column.
func TestUserTransformsMakeNewRows(t *testing.T) {
	selectThenEdit := domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		j := b.Schema.Index("id")
		var keep []int
		for i := range b.Len() {
			if b.Columns[j].Ints[i]%4 != 0 {
				keep = append(keep, i)
			}
		}
		out := b.Select(keep) // a batch of its own
		for i := range out.Columns[j].Ints {
			out.Columns[j].Ints[i] *= 10
		}
		return out, nil
	})
	copyAndReplace := domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		j := b.Schema.Index("id")
		col := domain.NewColumn(domain.KindInt64, b.Len())
		for i := range b.Len() {
			col.Ints = append(col.Ints, 2*b.Columns[j].Ints[i])
		}
		out := *b
		out.Columns = append([]*domain.Column(nil), b.Columns...)
		out.Columns[j] = col
		return &out, nil
	})
	for _, c := range []struct {
		name string
		t    domain.Transform
		max  int64
	}{{"select then edit", selectThenEdit, 990}, {"copy and replace", copyAndReplace, 198}} {
		store := openStore(t)
		g := newGraph("user",
			[]*domain.Dataset{streamingTable("numbers"), streamingTable("out")},
			appendFlow("numbers", "numbers", from(sources.Range(0, 100))),
			appendFlow("out", "out", streamOf("numbers"), c.t),
		)
		mustComplete(t, store, g, Options{})
		if got := sorted(ids(t, store, "out")); got[len(got)-1] != c.max {
			t.Errorf("%s: reads back up to %d, want %d", c.name, got[len(got)-1], c.max)
		}
		for _, b := range committedBatches(t, store, "", "out") {
			if b.Selects != "" {
				t.Errorf("%s: a batch selects %q", c.name, b.Selects)
			}
		}
	}
}
