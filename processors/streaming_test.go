package processors

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// TestStreamingTableReadsEachRowOnce: a flow drains its source in
// micro-batches no larger than the limit, with batch ids 0, 1, 2, ... whose
// ranges follow each other, and every row lands once.
func TestStreamingTableReadsEachRowOnce(t *testing.T) {
	tests := []struct {
		name        string
		rows        int64
		limit       int64
		wantBatches []int64 // rows per batch
	}{
		{"one batch", 5, 10, []int64{5}},
		{"exact multiple", 6, 2, []int64{2, 2, 2}},
		{"remainder", 10, 3, []int64{3, 3, 3, 1}},
		{"one row each", 3, 1, []int64{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := openStore(t)
			g := newGraph("ingest", []*domain.Dataset{streamingTable("t")},
				appendFlow("load", "t", from(sources.Range(0, tt.rows))))
			res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: tt.limit}})

			if got := ids(t, store, "t"); !slices.Equal(got, span(0, tt.rows)) {
				t.Errorf("t holds %v, want %v", got, span(0, tt.rows))
			}
			batches := committedBatches(t, store, res.UpdateID, "load")
			var sizes []int64
			for i, b := range batches {
				sizes = append(sizes, b.NumRows)
				if b.BatchID != int64(i) {
					t.Errorf("batch %d has id %d", i, b.BatchID)
				}
				if i > 0 && !bytes.Equal(b.Start, batches[i-1].End) {
					t.Errorf("batch %d starts at %s, the one before ended at %s", i, b.Start, batches[i-1].End)
				}
			}
			if !slices.Equal(sizes, tt.wantBatches) {
				t.Errorf("batch sizes %v, want %v", sizes, tt.wantBatches)
			}
			if res.Flows["load"] != domain.FlowCompleted {
				t.Errorf("load is %s", res.Flows["load"])
			}
			fp := finalProgress(t, store, res.UpdateID, "load").Details.FlowProgress
			if fp.Metrics == nil || fp.Metrics.NumOutputRows != tt.rows || fp.Metrics.NumBatches != int64(len(tt.wantBatches)) {
				t.Errorf("final metrics %+v, want %d rows in %d batches", fp.Metrics, tt.rows, len(tt.wantBatches))
			}
		})
	}
}

// TestSecondUpdateReadsOnlyNewFiles: an update reads what arrived since the
// last one, and an update with nothing new commits nothing.
func TestSecondUpdateReadsOnlyNewFiles(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 4)
	writeIDs(t, dir, "2.json", 4, 8)
	g := newGraph("files", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(jsonFiles(dir))))
	first := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxFiles: 1}})
	if n := len(committedBatches(t, store, first.UpdateID, "load")); n != 2 {
		t.Errorf("the first update committed %d batches, want one per file", n)
	}

	idle := mustComplete(t, store, g, Options{})
	if n := len(committedBatches(t, store, idle.UpdateID, "load")); n != 0 {
		t.Errorf("an update without new files committed %d batches", n)
	}
	if planned := events(t, store, eventstore.Filter{Update: idle.UpdateID, Types: []domain.EventType{domain.EventBatchPlanned}}); len(planned) != 0 {
		t.Errorf("an update without new files planned %d batches", len(planned))
	}

	writeIDs(t, dir, "3.json", 8, 11)
	third := mustComplete(t, store, g, Options{})
	batches := committedBatches(t, store, third.UpdateID, "load")
	if len(batches) != 1 || batches[0].NumRows != 3 || batches[0].BatchID != 2 {
		t.Errorf("the third update committed %+v, want batch 2 with the 3 new rows", batches)
	}
	if got := sorted(ids(t, store, "t")); !slices.Equal(got, span(0, 11)) {
		t.Errorf("t holds %v, want 0..10 once each", got)
	}
}

// TestTableStreamReadsNewBatches: a flow reading a table of the pipeline as
// a stream takes the batches committed since its checkpoint, bounded by the
// limit but at least one batch at a time.
func TestTableStreamReadsNewBatches(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 3)
	writeIDs(t, dir, "2.json", 3, 6)
	g := newGraph("chain", []*domain.Dataset{streamingTable("raw"), streamingTable("copy")},
		appendFlow("load", "raw", from(jsonFiles(dir))),
		appendFlow("copy", "copy", streamOf("raw"), mapIDs(func(id int64) int64 { return id * 10 })))
	// MaxRows 2 is below a file's 3 rows: the stream still moves a batch at a time.
	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxFiles: 1, MaxRows: 2}})
	if got := ids(t, store, "copy"); !slices.Equal(sorted(got), []int64{0, 10, 20, 30, 40, 50}) {
		t.Errorf("copy holds %v", got)
	}
	if n := len(committedBatches(t, store, res.UpdateID, "copy")); n < 3 {
		t.Errorf("copy committed %d batches; a 2-row limit over 3-row batches takes one batch each", n)
	}

	writeIDs(t, dir, "3.json", 6, 7)
	res = mustComplete(t, store, g, Options{})
	if b := committedBatches(t, store, res.UpdateID, "copy"); len(b) != 1 || b[0].NumRows != 1 {
		t.Errorf("the second update's copy batches: %+v, want one of the new row", b)
	}
	if got := sorted(ids(t, store, "copy")); !slices.Equal(got, []int64{0, 10, 20, 30, 40, 50, 60}) {
		t.Errorf("copy holds %v", got)
	}
}

// TestOnceFlow: a once flow drains its source in bounded micro-batches,
// records that it drained, and is skipped by later updates; a checkpoint
// reset runs it again into the same table, a full refresh into a new
// generation of it.
func TestOnceFlow(t *testing.T) {
	store := openStore(t)
	backfill := appendFlow("backfill", "t", wholeOfSource(sources.Range(0, 7)))
	backfill.Once = true
	g := newGraph("once", []*domain.Dataset{streamingTable("t")}, backfill)
	opts := Options{Limit: domain.ReadLimit{MaxRows: 3, MaxFiles: 1}}

	first := mustComplete(t, store, g, opts)
	if n := len(committedBatches(t, store, first.UpdateID, "backfill")); n != 3 {
		t.Errorf("backfill committed %d batches, want 3 of at most 3 rows", n)
	}
	if drained := events(t, store, eventstore.Filter{Update: first.UpdateID, Types: []domain.EventType{domain.EventOnceFlowDrained}}); len(drained) != 1 {
		t.Errorf("%d once_flow_drained events, want 1", len(drained))
	}

	second := mustComplete(t, store, g, opts)
	if second.Flows["backfill"] != domain.FlowSkipped {
		t.Errorf("a drained once flow is %s in the next update, want SKIPPED", second.Flows["backfill"])
	}
	if fp := finalProgress(t, store, second.UpdateID, "backfill").Details.FlowProgress; fp.Reason != domain.SkipAlreadyDrained {
		t.Errorf("skipped for %q, want %s", fp.Reason, domain.SkipAlreadyDrained)
	}
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, 7)) {
		t.Fatalf("t holds %v after a skipped rerun", got)
	}

	reset := mustComplete(t, store, g, Options{ResetCheckpoint: []string{"backfill"}})
	if reset.Flows["backfill"] != domain.FlowCompleted {
		t.Errorf("after a checkpoint reset backfill is %s, want COMPLETED", reset.Flows["backfill"])
	}
	if got := sorted(ids(t, store, "t")); !slices.Equal(got, sorted(append(span(0, 7), span(0, 7)...))) {
		t.Errorf("a checkpoint reset rereads into the same table: t holds %v", got)
	}

	refresh := mustComplete(t, store, g, Options{FullRefresh: []string{"t"}})
	if refresh.Flows["backfill"] != domain.FlowCompleted {
		t.Errorf("after a full refresh backfill is %s, want COMPLETED", refresh.Flows["backfill"])
	}
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, 7)) {
		t.Errorf("a full refresh starts t afresh: t holds %v", got)
	}
}

// wholeOfSource reads an external source as a batch, as a once flow does.
func wholeOfSource(src domain.Source) domain.Input { return domain.Input{Source: src} }

// TestResetsAndRefreshes: the ways an update can start a table or a flow
// again, and what each leaves in the table.
func TestResetsAndRefreshes(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []int64 // t after the second update, sorted
	}{
		{"plain rerun reads nothing new", Options{}, span(0, 4)},
		{"full refresh of the table rereads into a new generation", Options{FullRefresh: []string{"t"}}, span(0, 4)},
		{"full refresh of everything", Options{FullRefreshAll: true}, span(0, 4)},
		{"checkpoint reset rereads into the same table", Options{ResetCheckpoint: []string{"load"}}, sorted(append(span(0, 4), span(0, 4)...))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := openStore(t)
			dir := t.TempDir()
			writeIDs(t, dir, "1.json", 0, 4)
			g := newGraph("resets", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(jsonFiles(dir))))
			mustComplete(t, store, g, Options{})
			genBefore, _ := store.TableGeneration("t")
			res := mustComplete(t, store, g, tt.opts)
			if got := sorted(ids(t, store, "t")); !slices.Equal(got, tt.want) {
				t.Errorf("t holds %v, want %v", got, tt.want)
			}
			genAfter, _ := store.TableGeneration("t")
			refreshed := tt.opts.FullRefreshAll || len(tt.opts.FullRefresh) > 0
			if refreshed != (genAfter == genBefore+1) {
				t.Errorf("generation %d -> %d (full refresh: %v)", genBefore, genAfter, refreshed)
			}
			resets := events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventCheckpointReset}})
			if wantReset := refreshed || len(tt.opts.ResetCheckpoint) > 0; wantReset != (len(resets) == 1) {
				t.Errorf("%d checkpoint_reset events", len(resets))
			}
		})
	}
}

// TestDryRunWritesNothing: a dry run records the update and the definitions
// and reads, plans and writes nothing.
func TestDryRunWritesNothing(t *testing.T) {
	store := openStore(t)
	src := &failingPlans{Source: sources.Range(0, 5)}
	g := newGraph("dry", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(src)))
	res := mustComplete(t, store, g, Options{DryRun: true})
	if src.calls.Load() != 0 {
		t.Errorf("a dry run planned the source %d times", src.calls.Load())
	}
	if got := ids(t, store, "t"); len(got) != 0 {
		t.Errorf("a dry run wrote %v", got)
	}
	var types []domain.EventType
	for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID}) {
		types = append(types, ev.Type)
	}
	for _, typ := range []domain.EventType{domain.EventBatchPlanned, domain.EventBatchCommitted, domain.EventFlowProgress} {
		if slices.Contains(types, typ) {
			t.Errorf("a dry run recorded %s", typ)
		}
	}
	for _, typ := range []domain.EventType{domain.EventCreateUpdate, domain.EventDatasetDefinition, domain.EventFlowDefinition} {
		if !slices.Contains(types, typ) {
			t.Errorf("a dry run did not record %s", typ)
		}
	}
	if cp, _ := store.Checkpoint("load"); cp.NextBatchID != 0 || cp.Offset != nil {
		t.Errorf("a dry run moved the checkpoint: %+v", cp)
	}
	// A dry run leaves nothing the next update would mistake for a started one.
	mustComplete(t, store, g, Options{})
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, 5)) {
		t.Errorf("the update after a dry run wrote %v", got)
	}
}

// TestQueryVersionChangeOfStreamingFlowIsReported: a streaming flow whose
// query changed goes on from its checkpoint, and the update warns that the
// rows written before keep the old query's results.
func TestQueryVersionChangeOfStreamingFlowIsReported(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 2)
	build := func(version string) *domain.Graph {
		f := appendFlow("load", "t", from(jsonFiles(dir)))
		f.Query.Version = version
		return newGraph("versions", []*domain.Dataset{streamingTable("t")}, f)
	}
	warnings := func(res *Result) int {
		n := 0
		for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventPlanningInformation}}) {
			if ev.Level == domain.LevelWarn && ev.Origin.FlowName == "load" {
				n++
			}
		}
		return n
	}
	if n := warnings(mustComplete(t, store, build("v1"), Options{})); n != 0 {
		t.Errorf("the first update warned %d times", n)
	}
	if n := warnings(mustComplete(t, store, build("v1"), Options{})); n != 0 {
		t.Errorf("an unchanged query warned %d times", n)
	}
	if n := warnings(mustComplete(t, store, build("v2"), Options{})); n != 1 {
		t.Errorf("a changed query warned %d times, want 1", n)
	}
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, 2)) {
		t.Errorf("a changed streaming query reread its source: t holds %v", got)
	}
}

// TestSchemaEvolvesAcrossBatches: a table without a declared schema takes the
// first batch's, and a later batch with a new column widens it; the schema
// as of an earlier position is still the narrower one.
func TestSchemaEvolvesAcrossBatches(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	writeFile(t, dir, "1.json", "{\"id\": 1}\n")
	g := newGraph("evolve", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(jsonFiles(dir))))
	mustComplete(t, store, g, Options{})
	before := store.LastSeq()
	writeFile(t, dir, "2.json", "{\"id\": 2, \"name\": \"two\"}\n")
	mustComplete(t, store, g, Options{})

	ctx := context.Background()
	old, err := TableSchemaAt(ctx, store, "t", before)
	if err != nil || old == nil || len(old.Fields) != 1 {
		t.Fatalf("schema as of the first update: %v (%v), want [id]", old, err)
	}
	now, err := TableSchemaAt(ctx, store, "t", 0)
	if err != nil || now == nil || now.Index("name") < 0 || now.Index("id") < 0 {
		t.Fatalf("schema now: %v (%v), want id and name", now, err)
	}
	b, err := ReadTable(ctx, store, "t", 0)
	if err != nil || b.Len() != 2 {
		t.Fatalf("t: %v (%v)", b, err)
	}
	if !b.Row(0)[b.Schema.Index("name")].IsNull() || b.Row(1)[b.Schema.Index("name")].AsString() != "two" {
		t.Errorf("t rows %v: the first row's name should be NULL", b.Rows())
	}
}

// TestDeclaredSchemaRefusesDrift: a batch that does not fit a declared
// schema fails the flow, and nothing of it is written. The failure is
// deterministic, so production mode does not retry it.
func TestDeclaredSchemaRefusesDrift(t *testing.T) {
	store := openStore(t)
	schema := domain.NewSchema(domain.Field{Name: "name", Type: domain.TypeString})
	ds := streamingTable("t")
	ds.Schema = &schema
	g := newGraph("drift", []*domain.Dataset{ds}, appendFlow("load", "t", from(sources.Range(0, 3))))
	res := mustFail(t, store, g, Options{}, domain.CodeSchemaDrift)
	if n := len(committedBatches(t, store, res.UpdateID, "load")); n != 0 {
		t.Errorf("%d batches committed", n)
	}
	if n := retries(t, store, res.UpdateID, "load"); n != 0 {
		t.Errorf("a schema drift was retried %d times", n)
	}
}

// TestOnceFlowIgnoresTheFileCountLimit: a once flow bounds its micro-batches
// by rows and bytes, for memory, but not by the number of files, which
// bounds streaming micro-batches only.
func TestOnceFlowIgnoresTheFileCountLimit(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	for i, name := range []string{"1.json", "2.json", "3.json"} {
		writeIDs(t, dir, name, int64(2*i), int64(2*i+2))
	}
	backfill := appendFlow("backfill", "t", wholeOfSource(jsonFiles(dir)))
	backfill.Once = true
	g := newGraph("oncefiles", []*domain.Dataset{streamingTable("t")}, backfill)
	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxFiles: 1, MaxRows: 1000}})
	if b := committedBatches(t, store, res.UpdateID, "backfill"); len(b) != 1 || b[0].NumRows != 6 {
		t.Errorf("the once flow committed %d batches, want all three files in one", len(b))
	}
	if got := sorted(ids(t, store, "t")); !slices.Equal(got, span(0, 6)) {
		t.Errorf("t holds %v", got)
	}
}

// countingSource is a source whose batches report rescued and malformed
// records, as a file source's do.
type countingSource struct {
	domain.Source
	rescued, malformed int64
}

func (s *countingSource) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	b, err := s.Source.Read(ctx, start, end)
	if b != nil {
		b.Rescued, b.Malformed = s.rescued, s.malformed
	}
	return b, err
}

// TestBadRecordCountsAreTheMainInputs: each batch's commit carries the
// rescued and malformed records its main input reported; a side input's
// do not count, since its rows are read again at every batch.
func TestBadRecordCountsAreTheMainInputs(t *testing.T) {
	store := openStore(t)
	f := appendFlow("load", "t", from(&countingSource{Source: sources.Range(0, 4), rescued: 2, malformed: 1}))
	f.Query.Side = []domain.Input{{Source: &countingSource{Source: sources.Range(0, 1), rescued: 50, malformed: 50}}}
	f.Query.Combine = &recordingCombiner{fn: func(in []*domain.Batch) (*domain.Batch, error) { return in[0], nil }}
	g := newGraph("counts", []*domain.Dataset{streamingTable("t")}, f)
	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: 2}})
	batches := committedBatches(t, store, res.UpdateID, "load")
	if len(batches) != 2 {
		t.Fatalf("%d batches, want 2", len(batches))
	}
	for _, b := range batches {
		if b.NumRescued != 2 || b.NumMalformed != 1 {
			t.Errorf("batch %d counts %d rescued and %d malformed, want 2 and 1", b.BatchID, b.NumRescued, b.NumMalformed)
		}
	}
}
