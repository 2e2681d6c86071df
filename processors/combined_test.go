package processors

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// recordingCombiner keeps the ids of every input of every call and combines
// with fn.
type recordingCombiner struct {
	mu    sync.Mutex
	calls [][][]int64 // per call, per input, the ids
	fn    func(inputs []*domain.Batch) (*domain.Batch, error)
}

func (c *recordingCombiner) Combine(_ context.Context, inputs []*domain.Batch) (*domain.Batch, error) {
	call := make([][]int64, len(inputs))
	for i, b := range inputs {
		if b == nil {
			continue
		}
		if j := b.Schema.Index("id"); j >= 0 {
			for r := range b.Len() {
				call[i] = append(call[i], b.Columns[j].Value(r).AsInt())
			}
		}
	}
	c.mu.Lock()
	c.calls = append(c.calls, call)
	c.mu.Unlock()
	return c.fn(inputs)
}

func (c *recordingCombiner) recorded() [][][]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// TestSideInputIsCombinedWithEachMicroBatch: a streaming flow with a side
// input calls its combiner once per micro-batch, with the micro-batch's rows
// first and the whole side table after; what the combiner returns is what
// the flow commits.
func TestSideInputIsCombinedWithEachMicroBatch(t *testing.T) {
	store := openStore(t)
	comb := &recordingCombiner{fn: func(in []*domain.Batch) (*domain.Batch, error) {
		// Each main id becomes id*1000 + the number of side rows, so the
		// table shows that the combiner's output was committed.
		var out []int64
		for r := range in[0].Len() {
			out = append(out, in[0].Columns[0].Value(r).AsInt()*1000+int64(in[1].Len()))
		}
		return idBatch(t, out...), nil
	}}
	enrich := appendFlow("enrich", "enriched", from(sources.Range(0, 6)))
	enrich.Query.Side = []domain.Input{wholeOf("dims")}
	enrich.Query.Combine = comb
	g := newGraph("side", []*domain.Dataset{streamingTable("dims"), streamingTable("enriched")},
		appendFlow("dims", "dims", from(sources.Range(100, 103))), enrich)

	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: 2}})

	batches := committedBatches(t, store, res.UpdateID, "enrich")
	calls := comb.recorded()
	if len(calls) != len(batches) || len(batches) != 3 {
		t.Fatalf("%d combiner calls for %d committed micro-batches, want 3 and 3", len(calls), len(batches))
	}
	for i, call := range calls {
		if len(call) != 2 {
			t.Fatalf("call %d had %d inputs, want the main one and the side one", i, len(call))
		}
		if want := span(int64(2*i), int64(2*i+2)); !slices.Equal(call[0], want) {
			t.Errorf("call %d main input %v, want %v", i, call[0], want)
		}
		if want := span(100, 103); !slices.Equal(call[1], want) {
			t.Errorf("call %d side input %v, want the whole side table %v", i, call[1], want)
		}
	}
	if got, want := ids(t, store, "enriched"), []int64{3, 1003, 2003, 3003, 4003, 5003}; !slices.Equal(got, want) {
		t.Errorf("enriched holds %v, want the combiner's output %v", got, want)
	}
	// The side input is a data edge: the flow reading dims waits for its writer.
	assertAfter(t, store, res.UpdateID, "dims", "enrich")
}

// TestSideInputIsReadAsOfEachMicroBatch: the side input is read again at
// each micro-batch, so rows added to it between updates are seen by the
// next micro-batch of the stream.
func TestSideInputIsReadAsOfEachMicroBatch(t *testing.T) {
	store := openStore(t)
	mainDir, sideDir := t.TempDir(), t.TempDir()
	writeIDs(t, mainDir, "1.json", 0, 2)
	writeIDs(t, sideDir, "1.json", 100, 101)
	comb := &recordingCombiner{fn: func(in []*domain.Batch) (*domain.Batch, error) { return in[0], nil }}
	f := appendFlow("enrich", "enriched", from(jsonFiles(mainDir)))
	f.Query.Side = []domain.Input{{Source: jsonFiles(sideDir)}}
	f.Query.Combine = comb
	g := newGraph("side", []*domain.Dataset{streamingTable("enriched")}, f)
	mustComplete(t, store, g, Options{})
	writeIDs(t, mainDir, "2.json", 2, 3)
	writeIDs(t, sideDir, "2.json", 101, 102)
	mustComplete(t, store, g, Options{})

	calls := comb.recorded()
	if len(calls) != 2 {
		t.Fatalf("%d combiner calls, want 2", len(calls))
	}
	if !slices.Equal(calls[0][1], []int64{100}) || !slices.Equal(sorted(calls[1][1]), []int64{100, 101}) {
		t.Errorf("side inputs %v then %v, want the whole side source each time", calls[0][1], calls[1][1])
	}
	if got := ids(t, store, "enriched"); !slices.Equal(got, span(0, 3)) {
		t.Errorf("enriched holds %v", got)
	}
}

// TestCombinerErrorFailsTheFlow: a combiner's error is the flow's, and
// nothing of the micro-batch is committed.
func TestCombinerErrorFailsTheFlow(t *testing.T) {
	store := openStore(t)
	comb := &recordingCombiner{fn: func([]*domain.Batch) (*domain.Batch, error) {
		return nil, domain.Errorf(domain.CodeDivideByZero, "division by zero")
	}}
	f := appendFlow("enrich", "enriched", from(sources.Range(0, 3)))
	f.Query.Side = []domain.Input{{Source: sources.Range(0, 1)}}
	f.Query.Combine = comb
	g := newGraph("side", []*domain.Dataset{streamingTable("enriched")}, f)
	res := mustFail(t, store, g, Options{}, domain.CodeDivideByZero)
	if n := len(committedBatches(t, store, res.UpdateID, "enrich")); n != 0 {
		t.Errorf("%d batches committed", n)
	}
	if got := ids(t, store, "enriched"); len(got) != 0 {
		t.Errorf("enriched holds %v", got)
	}
}

// countRows is a materialized view's query: one row, n = times * the number
// of input rows. times stands for a change of the query.
func countRows(times int64) domain.Transform {
	return domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		col := domain.NewColumn(domain.KindInt64, 1)
		col.Ints = append(col.Ints, times*int64(b.Len()))
		return domain.BatchOf(domain.NewSchema(domain.Field{Name: "n", Type: domain.TypeInt64}), []*domain.Column{col})
	})
}

// viewValue reads the one-row view's n.
func viewValue(t *testing.T, store *eventstore.Store, view string) []int64 {
	t.Helper()
	b, err := ReadTable(context.Background(), store, view, 0)
	if err != nil {
		t.Fatal(err)
	}
	return column(t, b, "n")
}

// TestMaterializedViewRecomputesOnlyOnChange: a materialized view is
// recomputed, replacing its rows, when an input changed or its query's
// version changed; otherwise the update leaves it as it is.
func TestMaterializedViewRecomputesOnlyOnChange(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 2)
	build := func(version string, times int64) *domain.Graph {
		mv := viewFlow("summary", "summary", wholeOf("events"), countRows(times))
		mv.Query.Version = version
		return newGraph("mv", []*domain.Dataset{streamingTable("events"), materializedView("summary")},
			appendFlow("load", "events", from(jsonFiles(dir))), mv)
	}
	steps := []struct {
		name       string
		before     func()
		g          *domain.Graph
		opts       Options
		recomputed bool
		want       []int64
	}{
		{"first update computes", nil, build("v1", 1), Options{}, true, []int64{2}},
		{"nothing changed", nil, build("v1", 1), Options{}, false, []int64{2}},
		{"input changed", func() { writeIDs(t, dir, "2.json", 2, 3) }, build("v1", 1), Options{}, true, []int64{3}},
		{"query version changed", nil, build("v2", 10), Options{}, true, []int64{30}},
		{"same version again", nil, build("v2", 10), Options{}, false, []int64{30}},
		{"full refresh of the view", nil, build("v2", 10), Options{FullRefresh: []string{"summary"}}, true, []int64{30}},
		{"input fully refreshed to nothing", func() {
			for _, name := range []string{"1.json", "2.json"} {
				if err := removeFile(dir, name); err != nil {
					t.Fatal(err)
				}
			}
			mustComplete(t, store, build("v2", 10), Options{FullRefresh: []string{"events"}})
		}, build("v2", 10), Options{}, true, []int64{0}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		genBefore, _ := store.TableGeneration("summary")
		res := mustComplete(t, store, st.g, st.opts)
		recomputes := events(t, store, eventstore.Filter{Update: res.UpdateID, Dataset: "summary", Types: []domain.EventType{domain.EventBatchCommitted}})
		if st.recomputed != (len(recomputes) == 1) {
			t.Errorf("%s: %d recomputes, want recomputed=%v", st.name, len(recomputes), st.recomputed)
		}
		genAfter, _ := store.TableGeneration("summary")
		if st.recomputed && genAfter <= genBefore || !st.recomputed && genAfter != genBefore {
			t.Errorf("%s: generation %d -> %d", st.name, genBefore, genAfter)
		}
		if got := viewValue(t, store, "summary"); !slices.Equal(got, st.want) {
			t.Errorf("%s: summary holds %v, want %v", st.name, got, st.want)
		}
		if res.Flows["summary"] != domain.FlowCompleted {
			t.Errorf("%s: summary is %s", st.name, res.Flows["summary"])
		}
	}
}

// TestMaterializedViewWithSideInput: a view over several inputs is
// recomputed when any of them changed, with every input read whole.
func TestMaterializedViewWithSideInput(t *testing.T) {
	store := openStore(t)
	mainDir, sideDir := t.TempDir(), t.TempDir()
	writeIDs(t, mainDir, "1.json", 0, 2)
	writeIDs(t, sideDir, "1.json", 0, 1)
	comb := &recordingCombiner{fn: func(in []*domain.Batch) (*domain.Batch, error) {
		// n = main rows + 100 * side rows
		col := domain.NewColumn(domain.KindInt64, 1)
		col.Ints = append(col.Ints, int64(in[0].Len())+100*int64(in[1].Len()))
		return domain.BatchOf(domain.NewSchema(domain.Field{Name: "n", Type: domain.TypeInt64}), []*domain.Column{col})
	}}
	mv := viewFlow("joined", "joined", wholeOf("events"))
	mv.Query.Side = []domain.Input{{Source: jsonFiles(sideDir)}}
	mv.Query.Combine = comb
	g := newGraph("mvside", []*domain.Dataset{streamingTable("events"), materializedView("joined")},
		appendFlow("load", "events", from(jsonFiles(mainDir))), mv)

	mustComplete(t, store, g, Options{})
	if got := viewValue(t, store, "joined"); !slices.Equal(got, []int64{102}) {
		t.Fatalf("joined holds %v, want [102]", got)
	}
	mustComplete(t, store, g, Options{})
	if n := len(comb.recorded()); n != 1 {
		t.Errorf("an update with no change combined again (%d calls)", n)
	}
	writeIDs(t, sideDir, "2.json", 1, 3)
	mustComplete(t, store, g, Options{})
	if got := viewValue(t, store, "joined"); !slices.Equal(got, []int64{302}) {
		t.Errorf("after the side input changed joined holds %v, want [302]", got)
	}
}

// TestMaterializedViewOverSource: a view reading an external source is
// recomputed when the source has new data, and not otherwise.
func TestMaterializedViewOverSource(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 3)
	g := newGraph("mvsrc", []*domain.Dataset{materializedView("counted")},
		viewFlow("counted", "counted", wholeOfSource(jsonFiles(dir)), countRows(1)))
	mustComplete(t, store, g, Options{})
	res := mustComplete(t, store, g, Options{})
	if n := len(committedBatches(t, store, res.UpdateID, "counted")); n != 0 {
		t.Errorf("an unchanged source recomputed the view")
	}
	writeIDs(t, dir, "2.json", 3, 4)
	mustComplete(t, store, g, Options{})
	if got := viewValue(t, store, "counted"); !slices.Equal(got, []int64{4}) {
		t.Errorf("counted holds %v, want [4]", got)
	}
}

// TestInputsWithNothingYet: an input with nothing to read still has its
// place in the combiner's inputs, empty, so that the side inputs keep their
// positions; a view recomputes when any input has data.
func TestInputsWithNothingYet(t *testing.T) {
	// n = 10 * main rows + side rows
	count := func(in []*domain.Batch) (*domain.Batch, error) {
		col := domain.NewColumn(domain.KindInt64, 1)
		col.Ints = append(col.Ints, 10*int64(in[0].Len())+int64(in[1].Len()))
		return domain.BatchOf(domain.NewSchema(domain.Field{Name: "n", Type: domain.TypeInt64}), []*domain.Column{col})
	}
	tests := []struct {
		name       string
		flow       func(*recordingCombiner) *domain.Flow
		dataset    *domain.Dataset
		wantInputs [][]int64
		want       []int64
	}{
		{"stream with an empty side source", func(c *recordingCombiner) *domain.Flow {
			f := appendFlow("f", "out", from(sources.Range(0, 2)))
			f.Query.Side, f.Query.Combine = []domain.Input{{Source: sources.Range(7, 7)}}, c
			return f
		}, streamingTable("out"), [][]int64{{0, 1}, nil}, []int64{20}},
		{"view whose main source is empty", func(c *recordingCombiner) *domain.Flow {
			f := viewFlow("f", "out", wholeOfSource(sources.Range(7, 7)))
			f.Query.Side, f.Query.Combine = []domain.Input{{Source: sources.Range(0, 3)}}, c
			return f
		}, materializedView("out"), [][]int64{nil, {0, 1, 2}}, []int64{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := openStore(t)
			comb := &recordingCombiner{fn: count}
			mustComplete(t, store, newGraph("empty", []*domain.Dataset{tt.dataset}, tt.flow(comb)), Options{})
			calls := comb.recorded()
			if len(calls) != 1 || len(calls[0]) != 2 || !slices.Equal(calls[0][0], tt.wantInputs[0]) || !slices.Equal(calls[0][1], tt.wantInputs[1]) {
				t.Errorf("combiner calls %v, want one with %v", calls, tt.wantInputs)
			}
			if got := viewValue(t, store, "out"); !slices.Equal(got, tt.want) {
				t.Errorf("out holds %v, want %v", got, tt.want)
			}
		})
	}
}
