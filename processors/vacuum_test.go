package processors

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// TestVacuum: vacuum removes the rows of the generations a full refresh
// superseded, once past their retention, and nothing else: the current
// generation reads as before, every event stays, projections still match
// the log, an as-of read of the old generation says ROWS_VACUUMED, and the
// space goes back to the disk.
func TestVacuum(t *testing.T) {
	dir := t.TempDir()
	// The micro-batches stay in Badger's tree (as big as the memtable
	// allows), whose space a reclaim gives back at once: in the value log
	// they would share the one file being written, given back only once
	// the log moves to the next.
	inTree := eventstore.WithValueThreshold(1 << 20)
	store, err := eventstore.Open(dir, eventstore.WithSyncWrites(false), eventstore.WithMemTableSize(4<<20), inTree)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	table := streamingTable("numbers")
	g := newGraph("vacuum", []*domain.Dataset{table}, appendFlow("numbers", "numbers", from(sources.Range(0, 200_000))))
	first := mustComplete(t, store, g, Options{})
	oldSeq := store.LastSeq()
	mustComplete(t, store, g, Options{FullRefresh: []string{"numbers"}})
	events := func() int {
		n := 0
		if err := store.Scan(ctx, eventstore.Filter{}, func(*domain.Event) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := events()
	zero := time.Duration(0)

	cases := []struct {
		name    string
		opts    VacuumOptions
		batches int
	}{
		{"within the default retention", VacuumOptions{}, 0},
		{"dry run", VacuumOptions{Retain: &zero, DryRun: true}, 4},
		{"another table", VacuumOptions{Retain: &zero, Tables: []string{"nope"}}, 0},
		{"past the retention", VacuumOptions{Now: time.Now().Add(DefaultRetention + time.Hour)}, 4},
		{"again: nothing left", VacuumOptions{Retain: &zero}, 0},
	}
	for _, c := range cases {
		got, err := Vacuum(ctx, store, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n := 0
		for _, v := range got {
			n += v.Batches
		}
		if n != c.batches {
			t.Errorf("%s: %d batches, want %d (%+v)", c.name, n, c.batches, got)
		}
	}
	if got := ids(t, store, "numbers"); len(got) != 200_000 {
		t.Errorf("the current generation has %d rows, want 200000", len(got))
	}
	if after := events(); after != before {
		t.Errorf("%d events after vacuum, %d before", after, before)
	}
	if err := store.VerifyProjections(ctx); err != nil {
		t.Errorf("projections: %v", err)
	}
	if _, err := ReadTable(ctx, store, "numbers", oldSeq); domain.CodeOf(err) != domain.CodeRowsVacuumed {
		t.Errorf("as-of read of the vacuumed generation: %v, want %s", err, domain.CodeRowsVacuumed)
	}
	for _, b := range committedBatches(t, store, first.UpdateID, "numbers") {
		if b.RowsRemoved == nil {
			t.Errorf("batch %d of the first generation does not say its rows were removed", b.BatchID)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		var n int64
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && (filepath.Ext(e.Name()) == ".vlog" || filepath.Ext(e.Name()) == ".sst") {
				n += info.Size()
			}
		}
		return n
	}
	full := size()
	if err := eventstore.Reclaim(ctx, dir, eventstore.WithSyncWrites(false), eventstore.WithMemTableSize(4<<20), inTree); err != nil {
		t.Fatal(err)
	}
	if reclaimed := size(); reclaimed > full*3/4 {
		t.Errorf("tables and value logs of %d bytes after reclaim, %d before: the removed rows' space is still held", reclaimed, full)
	}
	store = openStoreAt(t, dir, inTree)
	if got := ids(t, store, "numbers"); len(got) != 200_000 {
		t.Errorf("after reclaim the current generation has %d rows, want 200000", len(got))
	}
	if err := store.VerifyProjections(ctx); err != nil {
		t.Errorf("projections after reclaim: %v", err)
	}
}

func TestParseRetention(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"interval 7 days", 7 * 24 * time.Hour, true}, {"30 days", 30 * 24 * time.Hour, true}, {"1 week", 7 * 24 * time.Hour, true},
		{"168h", 168 * time.Hour, true}, {"INTERVAL 2 HOURS", 2 * time.Hour, true}, {"0s", 0, true},
		{"7 fortnights", 0, false}, {"-1h", 0, false}, {"", 0, false},
	} {
		got, err := ParseRetention(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseRetention(%q) = %v, %v", c.in, got, err)
		}
	}
}
