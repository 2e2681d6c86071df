package processors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// eventTimeOf is an event time read from an integer column counting
// units since the epoch.
type eventTimeOf struct {
	column string
	unit   time.Duration
}

func (e eventTimeOf) Eval(b *domain.Batch) (*domain.Column, error) {
	col := b.Columns[b.Schema.Index(e.column)]
	out := &domain.Column{Kind: domain.KindTimestamp, Ints: make([]int64, len(col.Ints))}
	for i, v := range col.Ints {
		out.Ints[i] = v * int64(e.unit/time.Microsecond)
	}
	return out, nil
}

// writeClicks writes the rows [from, to) of a stream of clicks: row i has
// key i%5000 at second i, so that a key comes back, in a later
// micro-batch, long after its state expired; every seventh row comes
// twice, the second a duplicate within the delay.
func writeClicks(t *testing.T, dir, name string, from, to int) (kept []string) {
	t.Helper()
	return writeClicksKeyed(t, dir, name, from, to, func(i int) int { return i % 5000 })
}

// writeClicksKeyed writes the rows [from, to) of a stream of clicks: row
// i has key key(i) at second i; every seventh row comes twice.
func writeClicksKeyed(t *testing.T, dir, name string, from, to int, key func(int) int) (kept []string) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "{\"key\": %d, \"at\": %d}\n", key(i), i)
		kept = append(kept, fmt.Sprintf("%d@%d", key(i), i))
		if i%7 == 0 {
			fmt.Fprintf(&b, "{\"key\": %d, \"at\": %d}\n", key(i), i)
		}
	}
	writeFile(t, dir, name, b.String())
	return kept
}

// dedupClicks is the graph that loads the clicks of dir into raw and
// deduplicates them into clean, by key, within a watermark of delay.
func dedupClicks(dir string, delay time.Duration) *domain.Graph {
	w := &domain.Watermark{Column: "at", EventTime: eventTimeOf{"at", time.Second}, Delay: delay, DedupOn: []string{"key"}}
	return newGraph("clicks", []*domain.Dataset{streamingTable("raw"), streamingTable("clean")},
		appendFlow("load", "raw", from(jsonFiles(dir))),
		appendFlow("dedup", "clean", domain.Input{Dataset: "raw", Streaming: true, Watermark: w}))
}

// cleanClicks is the rows of clean, each as writeClicks says it: key@at.
func cleanClicks(t *testing.T, store *eventstore.Store) []string {
	t.Helper()
	clean, err := ReadTable(context.Background(), store, "clean", 0)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	keys, ats := column(t, clean, "key"), column(t, clean, "at")
	for i := range keys {
		rows = append(rows, fmt.Sprintf("%d@%d", keys[i], ats[i]))
	}
	return rows
}

// TestStreamStateSnapshots: a deduplicating flow records a snapshot of
// its state once the identities it recorded since the last reach eight
// times the state's size; a restart folds the state from the latest
// snapshot on, and keeps deduplicating exactly as without one; replay's
// check finds every snapshot to be the state the events before it built,
// and finds one that is not. (TestSnapshotDifferential holds the states
// folded from a snapshot to the continuous one over random streams.)
func TestStreamStateSnapshots(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	want := writeClicks(t, dir, "1.json", 0, 40000)
	g := dedupClicks(dir, time.Minute)
	opts := Options{Limit: domain.ReadLimit{MaxRows: 3000}}
	mustComplete(t, store, g, opts)

	snapshots := func() []*domain.Event {
		var out []*domain.Event
		for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
			if ev.Details.StreamState.Snapshot {
				out = append(out, ev)
			}
		}
		return out
	}
	// The state holds the last two minutes' keys (about 120): the first
	// snapshot comes once 8 x 4096 identities were recorded.
	first := snapshots()
	if len(first) != 1 {
		t.Fatalf("%d snapshots after 40,000 identities, want 1", len(first))
	}
	snap := first[0].Details.StreamState
	if snap.NumLateRowsDropped != 0 || snap.NumDuplicatesDropped != 0 || snap.NumStateRows < 100 || snap.NumStateRows > 130 {
		t.Errorf("the snapshot says %d late, %d duplicates, %d identities", snap.NumLateRowsDropped, snap.NumDuplicatesDropped, snap.NumStateRows)
	}
	cp, err := store.Checkpoint("dedup")
	if err != nil || cp.StreamStateFrom != first[0].Seq {
		t.Fatalf("the checkpoint folds the state from %d (%v), want the snapshot's seq %d", cp.StreamStateFrom, err, first[0].Seq)
	}

	// The state folded from the snapshot on is the state folded from the
	// flow's first event.
	ctx := context.Background()
	fromSnapshot, err := loadStreamState(ctx, store, "dedup", cp.Generation, cp.StreamStateFrom, 0)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := loadStreamState(ctx, store, "dedup", cp.Generation, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !fromSnapshot.sameAs(whole) || fromSnapshot.seen.len() == 0 {
		t.Fatalf("the state folded from the snapshot (%d identities) differs from the whole fold (%d)", fromSnapshot.seen.len(), whole.seen.len())
	}

	// A restart goes on from the snapshot: the duplicates across the
	// updates are dropped, the keys that came back are kept.
	want = append(want, writeClicks(t, dir, "2.json", 40000, 41000)...)
	mustComplete(t, store, g, opts)
	got := cleanClicks(t, store)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("clean holds %d rows, want %d", len(got), len(want))
	}
	if n, err := VerifyState(ctx, store); err != nil || n == 0 {
		t.Fatalf("VerifyState: %d checked, %v", n, err)
	}

	// A snapshot that is not the state its events built is found.
	bad := *first[0]
	st := *bad.Details.StreamState
	bad.Details.StreamState = &st
	bad.Seq, bad.ID = 0, ""
	lie, err := domain.DecodeBatch(bad.Data)
	if err != nil {
		t.Fatal(err)
	}
	lie.Columns[1].Ints[0]++ // one identity expires a microsecond later
	if bad.Data, err = domain.EncodeBatch(lie); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, &bad); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyState(ctx, store); domain.CodeOf(err) != domain.CodeProjectionMismatch {
		t.Fatalf("VerifyState of a false snapshot: %v, want PROJECTION_MISMATCH", err)
	}
}

// TestLoadStreamStateFrom: a load folds from the seq it is given on: the
// events before it, even a damaged one, are not read.
func TestLoadStreamStateFrom(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	state := func(data []byte, snapshot bool) *domain.Event {
		return &domain.Event{Type: domain.EventStreamState, Level: domain.LevelInfo, Origin: domain.Origin{FlowName: "dedup"}, Data: data,
			Details: domain.Details{StreamState: &domain.StreamState{Flow: "dedup", Snapshot: snapshot}}}
	}
	snap, err := domain.BatchOf(stateSchema, []*domain.Column{{Kind: domain.KindBytes, Strs: []string{"a", "b"}}, {Kind: domain.KindTimestamp, Ints: []int64{10, 20}}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := domain.EncodeBatch(snap)
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := store.Append(ctx, state([]byte("not a batch"), false), state(data, true))
	if err != nil {
		t.Fatal(err)
	}
	s, err := loadStreamState(ctx, store, "dedup", 0, seqs[1], 0)
	if err != nil || s.seen.len() != 2 {
		t.Fatalf("the load from the snapshot: %v identities, %v", s, err)
	}
	if _, err := loadStreamState(ctx, store, "dedup", 0, 0, 0); domain.CodeOf(err) != domain.CodeBatchCodec {
		t.Fatalf("the load from the start: %v, want the damaged event's %s", err, domain.CodeBatchCodec)
	}
}

// TestVacuumStreamState: vacuum removes the identities of a deduplicating
// flow's stream_state events before its latest snapshot, once that
// snapshot is past the table's retention, and those of a generation a
// full refresh left behind; nothing a restart reads. The events stay with
// their counts; the flow goes on deduplicating exactly; replay's check
// verifies the state from the snapshot on; a fold of a removed event says
// ROWS_VACUUMED rather than building another state.
func TestVacuumStreamState(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	want := writeClicks(t, dir, "1.json", 0, 40000)
	g := dedupClicks(dir, time.Minute)
	opts := Options{Limit: domain.ReadLimit{MaxRows: 3000}}
	mustComplete(t, store, g, opts)
	want = append(want, writeClicks(t, dir, "2.json", 40000, 41000)...)
	mustComplete(t, store, g, opts)

	cp, err := store.Checkpoint("dedup")
	if err != nil || cp.StreamStateFrom == 0 {
		t.Fatalf("no snapshot to vacuum before (%v)", err)
	}
	stateEvents := func() []*domain.Event {
		return events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}})
	}
	before := stateEvents()
	var unread, unreadBytes int
	for _, ev := range before {
		if ev.Seq < cp.StreamStateFrom && len(ev.Data) > 0 {
			unread++
			unreadBytes += len(ev.Data)
		}
	}
	loaded, err := loadStreamState(ctx, store, "dedup", cp.Generation, cp.StreamStateFrom, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkedBefore, err := VerifyState(ctx, store)
	if err != nil {
		t.Fatal(err)
	}

	zero := time.Duration(0)
	cases := []struct {
		name   string
		opts   VacuumOptions
		events int
	}{
		{"within the retention", VacuumOptions{}, 0},
		{"another table", VacuumOptions{Retain: &zero, Tables: []string{"raw"}}, 0},
		{"dry run", VacuumOptions{Retain: &zero, DryRun: true}, unread},
		{"past the retention", VacuumOptions{Now: time.Now().Add(DefaultRetention + time.Hour)}, unread},
		{"again: nothing left", VacuumOptions{Retain: &zero}, 0},
	}
	for _, c := range cases {
		got, err := Vacuum(ctx, store, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n, bytes := 0, int64(0)
		for _, v := range got {
			n += v.StateEvents
			bytes += v.StateBytes
			if v.StateEvents > 0 && v.Table != "clean" {
				t.Errorf("%s: the state of dedup counted under %q", c.name, v.Table)
			}
		}
		if n != c.events || (n == unread && bytes != int64(unreadBytes)) {
			t.Errorf("%s: %d stream_state events (%d bytes), want %d (%d bytes)", c.name, n, bytes, c.events, unreadBytes)
		}
	}

	after := stateEvents()
	if len(after) != len(before) {
		t.Fatalf("%d stream_state events after vacuum, %d before", len(after), len(before))
	}
	var removed *domain.Event
	for i, ev := range after {
		st, was := ev.Details.StreamState, before[i].Details.StreamState
		gone := ev.Seq < cp.StreamStateFrom && len(before[i].Data) > 0
		if gone != (st.IdentitiesRemoved != nil) || gone != (len(ev.Data) == 0 && len(before[i].Data) > 0) {
			t.Fatalf("event %d (snapshot %v): identities removed %v, data %d bytes", ev.Seq, st.Snapshot, st.IdentitiesRemoved != nil, len(ev.Data))
		}
		if st.StateFingerprint != was.StateFingerprint || st.NumDuplicatesDropped != was.NumDuplicatesDropped || st.NumStateRows != was.NumStateRows {
			t.Errorf("event %d: its counts changed with its identities", ev.Seq)
		}
		if gone && removed == nil {
			removed = ev
		}
	}
	fromSnapshot, err := loadStreamState(ctx, store, "dedup", cp.Generation, cp.StreamStateFrom, 0)
	if err != nil || !fromSnapshot.sameAs(loaded) {
		t.Fatalf("the state from the snapshot after vacuum differs from before (%v)", err)
	}
	if _, err := loadStreamState(ctx, store, "dedup", cp.Generation, 0, 0); domain.CodeOf(err) != domain.CodeRowsVacuumed {
		t.Fatalf("a fold over removed identities: %v, want %s", err, domain.CodeRowsVacuumed)
	}
	if err := newStreamState(cp.Generation, 0).fold(removed); domain.CodeOf(err) != domain.CodeRowsVacuumed {
		t.Fatalf("the fold of event %d: %v, want %s", removed.Seq, err, domain.CodeRowsVacuumed)
	}
	checked, err := VerifyState(ctx, store)
	if err != nil || checked == 0 || checked >= checkedBefore {
		t.Fatalf("VerifyState after vacuum: %d micro-batches checked (%d before), %v", checked, checkedBefore, err)
	}
	if err := store.VerifyProjections(ctx); err != nil {
		t.Fatalf("projections after vacuum: %v", err)
	}

	// The flow goes on from its snapshot: duplicates across the updates
	// dropped, keys that came back kept.
	want = append(want, writeClicks(t, dir, "3.json", 41000, 42000)...)
	mustComplete(t, store, g, opts)
	got := cleanClicks(t, store)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("clean holds %d rows after vacuum and an update, want %d", len(got), len(want))
	}

	// A full refresh leaves the generation behind: all of its identities
	// go, and the new generation is checked whole.
	mustComplete(t, store, g, Options{Limit: opts.Limit, FullRefresh: []string{"clean"}})
	got2, err := Vacuum(ctx, store, VacuumOptions{Retain: &zero, Tables: []string{"clean"}})
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, ev := range stateEvents() {
		if st := ev.Details.StreamState; st.Generation < cp.Generation+1 && len(ev.Data) > 0 {
			left++
		}
	}
	if left != 0 || got2[0].StateEvents == 0 {
		t.Fatalf("after a full refresh vacuum removed %d events' identities, and left %d of the old generation", got2[0].StateEvents, left)
	}
	if _, err := VerifyState(ctx, store); err != nil {
		t.Fatalf("VerifyState after the old generation went: %v", err)
	}
}

// TestVacuumStreamStateRetention: vacuum times an event's identities from
// when no restart read them any more: the first snapshot after it, or the
// reset that left its generation behind, not the event's own time; and
// replay's check of a state vacuum cut takes the next snapshot only if its
// fingerprint is the flow's.
func TestVacuumStreamStateRetention(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	g := dedupClicks(dir, time.Minute)
	opts := Options{Limit: domain.ReadLimit{MaxRows: 3000}}
	for i := range 3 { // a snapshot in each update, about
		writeClicks(t, dir, fmt.Sprintf("%d.json", i), i*35000, (i+1)*35000)
		mustComplete(t, store, g, opts)
	}
	var snaps []*domain.Event
	all := events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}})
	for _, ev := range all {
		if ev.Details.StreamState.Snapshot {
			snaps = append(snaps, ev)
		}
	}
	if len(snaps) < 2 {
		t.Fatalf("%d snapshots, want 2 or more", len(snaps))
	}
	removedOf := func() (removed []uint64) {
		for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
			if ev.Details.StreamState.IdentitiesRemoved != nil {
				removed = append(removed, ev.Seq)
			}
		}
		return removed
	}

	// The retention reaches back to between the first two snapshots: what
	// the first holds goes, what the second holds stays.
	hour := time.Hour
	first, second := snaps[0], snaps[1]
	between := first.Timestamp.Add(second.Timestamp.Sub(first.Timestamp) / 2)
	if _, err := Vacuum(ctx, store, VacuumOptions{Retain: &hour, Now: between.Add(hour)}); err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for _, ev := range all {
		if ev.Seq < first.Seq && len(ev.Data) > 0 {
			want = append(want, ev.Seq)
		}
	}
	if got := removedOf(); !slices.Equal(got, want) {
		t.Fatalf("vacuum to between the first two snapshots removed the identities of %v, want %v", got, want)
	}
	if n, err := VerifyState(ctx, store); err != nil || n == 0 {
		t.Fatalf("VerifyState: %d checked, %v", n, err)
	}

	// A full refresh leaves the generation behind: its identities go once
	// the refresh is past the retention, however old they are.
	mustComplete(t, store, g, Options{Limit: opts.Limit, FullRefresh: []string{"clean"}})
	resets := events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventCheckpointReset}})
	if len(resets) == 0 {
		t.Fatal("no checkpoint reset")
	}
	reset := resets[len(resets)-1].Timestamp
	last := all[len(all)-1].Timestamp
	if _, err := Vacuum(ctx, store, VacuumOptions{Retain: &hour, Now: last.Add(reset.Sub(last) / 2).Add(hour)}); err != nil {
		t.Fatal(err)
	}
	if got := removedOf(); !slices.Equal(got, want) {
		t.Fatalf("vacuum to before the refresh removed the identities of %v, want %v", got, want)
	}
	if _, err := Vacuum(ctx, store, VacuumOptions{Retain: &hour, Now: reset.Add(hour + time.Second)}); err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
		if ev.Details.StreamState.Generation == first.Details.StreamState.Generation && len(ev.Data) > 0 {
			left++
		}
	}
	if left != 0 {
		t.Fatalf("%d events of the generation the refresh left behind keep their identities", left)
	}
	if _, err := VerifyState(ctx, store); err != nil {
		t.Fatalf("VerifyState: %v", err)
	}

	// After a cut, a snapshot that is not the state the flow recorded is
	// found by its fingerprint.
	latest := events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}})
	var snap *domain.Event
	for _, ev := range latest {
		if ev.Details.StreamState.Snapshot && len(ev.Data) > 0 {
			snap = ev
		}
	}
	cutEv := &domain.Event{Type: domain.EventStreamState, Level: domain.LevelInfo, Origin: snap.Origin,
		Details: domain.Details{StreamState: &domain.StreamState{Flow: "dedup", Generation: snap.Details.StreamState.Generation,
			IdentitiesRemoved: &domain.RowsRemoved{At: time.Now().UTC(), Retention: "0s"}}}}
	bad := *snap
	st := *snap.Details.StreamState
	bad.Details.StreamState = &st
	bad.Seq, bad.ID = 0, ""
	lie, err := domain.DecodeBatch(bad.Data)
	if err != nil {
		t.Fatal(err)
	}
	lie.Columns[1].Ints[0]++
	if bad.Data, err = domain.EncodeBatch(lie); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, cutEv, &bad); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyState(ctx, store); domain.CodeOf(err) != domain.CodeProjectionMismatch {
		t.Fatalf("VerifyState of a false snapshot after a cut: %v, want PROJECTION_MISMATCH", err)
	}
}

// TestDedupStateSpilled: a deduplicating flow whose state passes its
// memory budget moves the older identities to disk, and answers as it
// would in memory: the same rows kept, the same counts and state
// fingerprints micro-batch by micro-batch, across a restart (which folds
// the log and spills again); replay's check passes, and no spill is left.
func TestDedupStateSpilled(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	dir := t.TempDir()
	writeClicks(t, dir, "1.json", 0, 20000)
	// a delay of an hour: the 5,000 keys, each back every 5,000 seconds,
	// all live at once
	g := dedupClicks(dir, time.Hour)
	type state struct {
		late, dups, rows int64
		fingerprint      string
	}
	run := func(budget int64) (states []state, rows []string, store *eventstore.Store, onDisk int) {
		store = openStore(t)
		opts := Options{Limit: domain.ReadLimit{MaxRows: 1500}, StateMemory: budget}
		mustComplete(t, store, g, opts)
		writeClicks(t, dir, "2.json", 20000, 21000)
		mustComplete(t, store, g, opts) // a restart, folding the state from the log
		if err := os.Remove(filepath.Join(dir, "2.json")); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
			if st := ev.Details.StreamState; !st.Snapshot {
				states = append(states, state{st.NumLateRowsDropped, st.NumDuplicatesDropped, st.NumStateRows, st.StateFingerprint})
			}
			if strings.Contains(ev.Message, "are on disk") {
				onDisk++
			}
		}
		return states, cleanClicks(t, store), store, onDisk
	}
	inMemory, want, _, none := run(-1)
	spilled, got, store, onDisk := run(1)
	if none != 0 || onDisk == 0 {
		t.Fatalf("%d micro-batches say their state is on disk in memory, %d spilled", none, onDisk)
	}
	if !slices.Equal(spilled, inMemory) {
		t.Fatalf("the spilled state recorded %v, in memory %v", spilled, inMemory)
	}
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("the spilled state kept %d rows, in memory %d", len(got), len(want))
	}
	if n, err := VerifyState(ctx, store); err != nil || n == 0 {
		t.Fatalf("VerifyState: %d checked, %v", n, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "sluice-dedup-spill-*")); len(left) > 0 {
		t.Fatalf("spill directories left behind: %v", left)
	}
}

// writeDistinctClicks writes the rows [from, to) of a stream of clicks of
// a key each: row i has key i at second i; every seventh row comes twice.
func writeDistinctClicks(t *testing.T, dir, name string, from, to int) (kept []string) {
	t.Helper()
	return writeClicksKeyed(t, dir, name, from, to, func(i int) int { return i })
}

// TestSnapshotInParts: a state larger than a snapshot event takes is
// recorded in parts, in memory and spilled alike: numbered from 1, the
// parts but the last committed ahead of their micro-batch without a
// fingerprint, the last naming the first, which the checkpoint folds
// from. The fold from there is the whole fold; a restart goes on exactly,
// passing over the parts of a micro-batch that did not commit; the
// spilled state records the same events as the one in memory; replay's
// check passes.
func TestSnapshotInParts(t *testing.T) {
	defer func(n int) { snapshotPartBytes = n }(snapshotPartBytes)
	snapshotPartBytes = 20000 // about 1,200 identities of 9 bytes a part
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	type recorded struct {
		part     int
		rows     int64
		print    string
		snapshot bool
	}
	run := func(budget int64) ([]recorded, []string) {
		dir := t.TempDir()
		// a key a second, for an hour, and a delay of an hour: about 7,200
		// identities live at once, and a snapshot once 57,600 were recorded
		want := writeDistinctClicks(t, dir, "1.json", 0, 60000)
		g := dedupClicks(dir, time.Hour)
		store := openStore(t)
		opts := Options{Limit: domain.ReadLimit{MaxRows: 3000}, StateMemory: budget}
		mustComplete(t, store, g, opts)

		var parts []*domain.Event
		onDisk := false
		for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
			if ev.Details.StreamState.Snapshot {
				parts = append(parts, ev)
			}
			onDisk = onDisk || strings.Contains(ev.Message, "are on disk")
		}
		if onDisk != (budget > 0) {
			t.Fatalf("budget %d: the state on disk: %v", budget, onDisk)
		}
		if len(parts) < 3 {
			t.Fatalf("budget %d: a snapshot of %d events, want 3 parts or more", budget, len(parts))
		}
		for i, ev := range parts {
			st := ev.Details.StreamState
			last := i == len(parts)-1
			if len(ev.Data) > snapshotPartBytes+1024 { // the part's data, and its header
				t.Fatalf("budget %d: part %d holds %d bytes, more than its bound %d", budget, i+1, len(ev.Data), snapshotPartBytes)
			}
			if st.SnapshotPart != i+1 || (st.SnapshotFrom != 0) != last || last && st.SnapshotFrom != parts[0].Seq ||
				(st.StateFingerprint != "") != last || st.BatchID != parts[0].Details.StreamState.BatchID {
				t.Fatalf("budget %d: part %d of %d: %+v", budget, i+1, len(parts), st)
			}
		}
		cp, err := store.Checkpoint("dedup")
		if err != nil || cp.StreamStateFrom != parts[0].Seq {
			t.Fatalf("budget %d: the checkpoint folds from %d (%v), want the first part's seq %d", budget, cp.StreamStateFrom, err, parts[0].Seq)
		}
		fromSnapshot, err := loadStreamState(ctx, store, "dedup", cp.Generation, cp.StreamStateFrom, budget)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := loadStreamState(ctx, store, "dedup", cp.Generation, 0, budget)
		if err != nil {
			t.Fatal(err)
		}
		if !fromSnapshot.sameAs(whole) || whole.seen.len() < 7000 {
			t.Fatalf("budget %d: the state folded from the snapshot (%d identities) differs from the whole fold (%d)", budget, fromSnapshot.seen.len(), whole.seen.len())
		}
		_, _ = fromSnapshot.close(), whole.close()

		// The parts of the next micro-batch, committed before a crash
		// kept it from committing: the restart passes over them.
		next := *parts[0]
		st := *next.Details.StreamState
		st.BatchID = cp.NextBatchID
		next.Details.StreamState, next.Seq, next.ID = &st, 0, ""
		second := next
		st2 := st
		st2.SnapshotPart = 2
		second.Details.StreamState = &st2
		if _, err := store.Append(ctx, &next, &second); err != nil {
			t.Fatal(err)
		}
		want = append(want, writeDistinctClicks(t, dir, "2.json", 60000, 61000)...)
		mustComplete(t, store, g, opts)
		got := cleanClicks(t, store)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("budget %d: clean holds %d rows, want %d", budget, len(got), len(want))
		}
		if n, err := VerifyState(ctx, store); err != nil || n == 0 {
			t.Fatalf("budget %d: VerifyState: %d checked, %v", budget, n, err)
		}

		// Vacuum past the retention removes the identities before the
		// first part, none of the snapshot's: the state folds as before,
		// and replay's check starts from the snapshot.
		before, err := loadStreamState(ctx, store, "dedup", cp.Generation, cp.StreamStateFrom, budget)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Vacuum(ctx, store, VacuumOptions{Now: time.Now().Add(DefaultRetention + time.Hour)}); err != nil {
			t.Fatal(err)
		}
		removed := 0
		for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
			if gone := ev.Details.StreamState.IdentitiesRemoved != nil; gone != (ev.Seq < parts[0].Seq) {
				t.Fatalf("budget %d: event %d (part %d): identities removed %v", budget, ev.Seq, ev.Details.StreamState.SnapshotPart, gone)
			} else if gone {
				removed++
			}
		}
		after, err := loadStreamState(ctx, store, "dedup", cp.Generation, cp.StreamStateFrom, budget)
		if err != nil || removed == 0 || !after.sameAs(before) {
			t.Fatalf("budget %d: after vacuum (%d events' identities removed), the state folds differently (%v)", budget, removed, err)
		}
		_, _ = before.close(), after.close()
		if n, err := VerifyState(ctx, store); err != nil || n == 0 {
			t.Fatalf("budget %d: VerifyState after vacuum: %d checked, %v", budget, n, err)
		}
		var out []recorded
		for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
			st := ev.Details.StreamState
			out = append(out, recorded{st.SnapshotPart, st.NumStateRows, st.StateFingerprint, st.Snapshot})
		}
		return out, got
	}
	inMemory, want := run(-1)
	spilled, got := run(1)
	if !slices.Equal(spilled, inMemory) {
		t.Fatalf("the spilled state recorded\n%v\nin memory\n%v", spilled, inMemory)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the spilled state kept %d rows, in memory %d", len(got), len(want))
	}
}

// TestSnapshotPartsFold: a snapshot in parts replaces the state at its
// last part, which must name its first; parts that go on with no snapshot
// being built (the parts of a micro-batch that did not commit, or a part
// out of order) are passed over; replay's check finds a snapshot in parts
// that is not the state its events built.
func TestSnapshotPartsFold(t *testing.T) {
	ctx := context.Background()
	event := func(batch int64, part int, from uint64, ids ...string) *domain.Event {
		exps := make([]int64, len(ids))
		for i, id := range ids {
			exps[i] = int64(id[0]) * 10
			if strings.HasSuffix(id, "'") {
				exps[i]++ // a lie: expires a microsecond later
			}
		}
		b, err := domain.BatchOf(stateSchema, []*domain.Column{{Kind: domain.KindBytes, Strs: ids}, {Kind: domain.KindTimestamp, Ints: exps}})
		if err != nil {
			t.Fatal(err)
		}
		data, err := domain.EncodeBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		st := &domain.StreamState{Flow: "dedup", BatchID: batch, Snapshot: part > 0, SnapshotPart: part, SnapshotFrom: from}
		return &domain.Event{Type: domain.EventStreamState, Level: domain.LevelInfo, Origin: domain.Origin{FlowName: "dedup"}, Data: data,
			Details: domain.Details{StreamState: st}}
	}
	// appended puts evs in a new store one by one, a last part's from
	// (given as the index of its first part in evs) made that part's seq.
	appended := func(evs ...*domain.Event) *eventstore.Store {
		store := openStore(t)
		var seqs []uint64
		for _, ev := range evs {
			if st := ev.Details.StreamState; st.SnapshotFrom > 0 && int(st.SnapshotFrom) <= len(seqs) {
				st.SnapshotFrom = seqs[st.SnapshotFrom-1]
			}
			got, err := store.Append(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, got...)
		}
		return store
	}
	identities := func(s *streamState) string {
		var out []string
		s.seen.each(func(identity []byte, expires int64) { out = append(out, fmt.Sprintf("%s@%d", identity, expires)) })
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name string
		evs  []*domain.Event
		want string // the state folded, or the error's code
	}{
		{"whole", []*domain.Event{event(0, 0, 0, "x"), event(1, 1, 0, "a", "b"), event(1, 2, 0, "c"), event(1, 0, 0, "d"), event(1, 3, 2, "d")},
			"a@970 b@980 c@990 d@1000"},
		{"a micro-batch that did not commit, then its retry", []*domain.Event{event(1, 1, 0, "p"), event(1, 2, 0, "q"),
			event(1, 1, 0, "a"), event(1, 2, 0, "b"), event(1, 3, 3, "c")}, "a@970 b@980 c@990"},
		{"a part out of order", []*domain.Event{event(0, 0, 0, "x"), event(1, 1, 0, "a"), event(1, 3, 2, "c")}, string(domain.CodeStoreCorrupt)},
		{"the parts of another micro-batch", []*domain.Event{event(1, 1, 0, "a"), event(2, 0, 0, "x"), event(2, 2, 1, "c")}, string(domain.CodeStoreCorrupt)},
		{"the parts of a micro-batch that did not commit, at the end", []*domain.Event{event(0, 0, 0, "x"), event(1, 1, 0, "a"), event(1, 2, 0, "b")}, "x@1200"},
		{"a last part naming another first", []*domain.Event{event(1, 1, 0, "a"), event(1, 1, 0, "b"), event(1, 2, 1, "c")}, string(domain.CodeStoreCorrupt)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := appended(tc.evs...)
			s, err := loadStreamState(ctx, store, "dedup", 0, 0, 0)
			got := string(domain.CodeOf(err))
			if err == nil {
				got = identities(s)
				if s.parts != nil {
					t.Errorf("the load holds the parts of a snapshot it did not end")
				}
				_ = s.close()
			}
			if got != tc.want {
				t.Fatalf("folded %q, want %q", got, tc.want)
			}
		})
	}

	// replay's check: a snapshot in parts must be the state the events
	// before it built
	if _, err := VerifyState(ctx, appended(event(0, 0, 0, "a", "b", "c"), event(1, 1, 0, "a", "b"), event(1, 2, 2, "c"))); err != nil {
		t.Fatalf("VerifyState of a true snapshot in parts: %v", err)
	}
	if _, err := VerifyState(ctx, appended(event(0, 0, 0, "a", "b", "c"), event(1, 1, 0, "a", "b"), event(1, 2, 2, "c'"))); domain.CodeOf(err) != domain.CodeProjectionMismatch {
		t.Fatalf("VerifyState of a false snapshot in parts: %v, want PROJECTION_MISMATCH", err)
	}
	// A snapshot whose first part vacuum emptied (a vacuum cut short) is
	// passed over where the state is cut; one with a part missing is not.
	vacuumed := event(1, 1, 0)
	vacuumed.Data, vacuumed.Details.StreamState.IdentitiesRemoved = nil, &domain.RowsRemoved{At: time.Now(), Retention: "0s"}
	if _, err := VerifyState(ctx, appended(event(0, 0, 0, "a", "b"), vacuumed, event(1, 2, 2, "b"))); err != nil {
		t.Fatalf("VerifyState of a snapshot in parts cut by vacuum: %v", err)
	}
	if _, err := VerifyState(ctx, appended(event(0, 0, 0, "a", "b"), event(1, 2, 1, "b"))); domain.CodeOf(err) != domain.CodeStoreCorrupt {
		t.Fatalf("VerifyState of a snapshot missing its first part: %v, want STORE_CORRUPT", err)
	}
}

// columnTime is an event time that is the batch's own column: what the
// SQL compiles `WATERMARK col` to. copiedTime is the same times in a
// column of their own, as an expression over the column gives them.
type (
	columnTime struct{ column string }
	copiedTime struct{ column string }
)

func (c columnTime) Eval(b *domain.Batch) (*domain.Column, error) {
	return b.Columns[b.Schema.Index(c.column)], nil
}

func (c copiedTime) Eval(b *domain.Batch) (*domain.Column, error) {
	col := *b.Columns[b.Schema.Index(c.column)]
	col.Ints = slices.Clone(col.Ints)
	return &col, nil
}

// TestDedupIdentitiesOfRows: a deduplication whose event time is a
// TIMESTAMP column of the table rows it reads records the identities it
// remembers as a selection of those rows (domain.IdentityRows), a bit a
// row, and otherwise the identities themselves; either way the same rows
// are kept, with the same counts and state fingerprints micro-batch by
// micro-batch, across a restart (which folds the identities from the
// rows they select) and with the state spilled to disk; replay's check
// passes; vacuum keeps the rows the stream states select.
func TestDedupIdentitiesOfRows(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(dir, name string, from, to int) {
		var b strings.Builder
		for i := from; i < to; i++ {
			line := fmt.Sprintf("{\"key\": %d, \"at\": %q}\n", i%3000, base.Add(time.Duration(i)*time.Second).Format(time.RFC3339))
			b.WriteString(line)
			if i%7 == 0 {
				b.WriteString(line)
			}
		}
		writeFile(t, dir, name, b.String())
	}
	schema := domain.NewSchema(domain.Field{Name: "key", Type: domain.Type{Kind: domain.KindInt64}, Nullable: true},
		domain.Field{Name: "at", Type: domain.Type{Kind: domain.KindTimestamp}, Nullable: true})
	type recorded struct {
		late, dups, rows int64
		print            string
	}
	run := func(eventTime domain.Evaluator, budget int64) (states []recorded, rows []string, byRows, withData, dataBytes int) {
		dir := t.TempDir()
		write(dir, "1.json", 0, 20000)
		w := &domain.Watermark{Column: "at", EventTime: eventTime, Delay: time.Hour, DedupOn: []string{"key"}}
		g := newGraph("clicks", []*domain.Dataset{streamingTable("raw"), streamingTable("clean")},
			appendFlow("load", "raw", from(sources.Files(dir, sources.FileOptions{Format: "json", Schema: &schema}))),
			// a user's function: clean stores rows of its own, not a
			// selection of raw's, and keeps none of raw's batches from vacuum
			appendFlow("dedup", "clean", domain.Input{Dataset: "raw", Streaming: true, Watermark: w},
				domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) { return b, nil })))
		store := openStore(t)
		opts := Options{Limit: domain.ReadLimit{MaxRows: 1500}, StateMemory: budget}
		mustComplete(t, store, g, opts)
		write(dir, "2.json", 20000, 21000)
		mustComplete(t, store, g, opts) // a restart, folding the state from the log
		for _, ev := range events(t, store, eventstore.Filter{Flow: "dedup", Types: []domain.EventType{domain.EventStreamState}}) {
			st := ev.Details.StreamState
			if st.Snapshot {
				continue
			}
			states = append(states, recorded{st.NumLateRowsDropped, st.NumDuplicatesDropped, st.NumStateRows, st.StateFingerprint})
			if len(ev.Data) == 0 {
				continue // nothing remembered
			}
			if st.IdentitiesOf != nil {
				byRows++
				// dense: a few identities of many rows are written out
				if sel, err := domain.DecodeSelection(ev.Data); err != nil || 2*sel.Len() < sel.Total() {
					t.Fatalf("event %d selects %d of %d rows (%v)", ev.Seq, sel.Len(), sel.Total(), err)
				}
			}
			withData++
			dataBytes += len(ev.Data)
		}
		if n, err := VerifyState(ctx, store); err != nil || n == 0 {
			t.Fatalf("VerifyState: %d checked, %v", n, err)
		}
		// raw refreshed whole, alone: its first generation is vacuum's to
		// remove, but for the rows the deduplication's state selects
		refresh := opts
		refresh.FullRefresh = []string{"raw"}
		mustComplete(t, store, g, refresh)
		zero := time.Duration(0)
		vacuumed, err := Vacuum(ctx, store, VacuumOptions{Retain: &zero, Tables: []string{"raw"}})
		if err != nil {
			t.Fatal(err)
		}
		if v := vacuumed[0]; v.Batches == 0 || (v.Kept > 0) != (byRows > 0) {
			t.Fatalf("vacuum of raw's first generation: %d batches removed, %d kept (%d stream states select rows)", v.Batches, v.Kept, byRows)
		}
		cp, err := store.Checkpoint("dedup")
		if err != nil {
			t.Fatal(err)
		}
		if s, err := loadStreamState(ctx, store, "dedup", cp.Generation, cp.StreamStateFrom, budget); err != nil {
			t.Fatalf("the state after vacuum: %v", err)
		} else {
			_ = s.close()
		}
		clean, err := ReadTable(ctx, store, "clean", 0)
		if err != nil {
			t.Fatal(err)
		}
		keys, ats := column(t, clean, "key"), clean.Columns[clean.Schema.Index("at")].Ints
		for i := range keys {
			rows = append(rows, fmt.Sprintf("%d@%d", keys[i], ats[i]))
		}
		return states, rows, byRows, withData, dataBytes
	}
	written, wantRows, none, _, writtenBytes := run(copiedTime{"at"}, -1)
	if none != 0 {
		t.Fatalf("%d stream states select rows with the event time a column of its own", none)
	}
	for _, budget := range []int64{-1, 1} {
		got, gotRows, byRows, withData, bytes := run(columnTime{"at"}, budget)
		if byRows == 0 || byRows == withData {
			t.Fatalf("budget %d: %d of the %d stream states remembering identities select rows; want some, and some written out", budget, byRows, withData)
		}
		if !slices.Equal(got, written) {
			t.Fatalf("budget %d: the states selecting rows recorded\n%v\nthe identities written out\n%v", budget, got, written)
		}
		if !slices.Equal(gotRows, wantRows) || len(gotRows) == 0 {
			t.Fatalf("budget %d: %d rows kept, %d with the identities written out", budget, len(gotRows), len(wantRows))
		}
		if bytes*2 > writtenBytes {
			t.Errorf("budget %d: the selections take %d bytes, the identities %d", budget, bytes, writtenBytes)
		}
	}
}
