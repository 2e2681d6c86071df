package processors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// The tests of this package drive the runtime through its public surface:
// Run over a real store in a temporary directory, graphs built by hand, and
// the event log and ReadTable to see what happened. They do not reach into
// how a micro-batch is read or transformed, which may change.

// openStore opens a store in a fresh temporary directory, closed when the
// test ends. Sync writes are off: the tests do not cut power.
func openStore(t testing.TB) *eventstore.Store {
	t.Helper()
	return openStoreAt(t, t.TempDir())
}

func openStoreAt(t testing.TB, dir string, opts ...eventstore.Option) *eventstore.Store {
	t.Helper()
	store, err := eventstore.Open(dir, append([]eventstore.Option{eventstore.WithSyncWrites(false), eventstore.WithMemTableSize(4 << 20)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	return store
}

// quick makes retries, polls and idle detection fast enough for tests; the
// defaults wait seconds.
func quick(o Options) Options {
	if o.Retry == (RetryPolicy{}) {
		o.Retry = RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: 4 * time.Millisecond}
	}
	o.PollInterval = 10 * time.Millisecond
	o.IdleAfter = 30 * time.Millisecond
	return o
}

// run runs one update and fails the test when it could not be recorded.
func run(t testing.TB, store *eventstore.Store, g *domain.Graph, opts Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), store, g, quick(opts))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// mustComplete runs one update and fails the test unless it COMPLETED.
func mustComplete(t testing.TB, store *eventstore.Store, g *domain.Graph, opts Options) *Result {
	t.Helper()
	res := run(t, store, g, opts)
	if res.State != domain.UpdateCompleted {
		t.Fatalf("update %s: %v", res.State, res.Err)
	}
	return res
}

// mustFail runs one update and fails the test unless it FAILED with code.
func mustFail(t *testing.T, store *eventstore.Store, g *domain.Graph, opts Options, code domain.Code) *Result {
	t.Helper()
	res := run(t, store, g, opts)
	if res.State != domain.UpdateFailed {
		t.Fatalf("update %s, want FAILED with %s", res.State, code)
	}
	if got := domain.CodeOf(res.Err); got != code {
		t.Fatalf("update failed with %q (%v), want %s", got, res.Err, code)
	}
	return res
}

// newGraph resolves datasets and flows into a graph as the pipeline package
// does: a flow's predecessors are its depends_on flows and the writers of the
// datasets it reads, and Order is topological with ties broken by name.
func newGraph(name string, datasets []*domain.Dataset, flows ...*domain.Flow) *domain.Graph {
	g := &domain.Graph{
		Name:      name,
		Datasets:  map[string]*domain.Dataset{},
		Flows:     map[string]*domain.Flow{},
		Preds:     map[string][]string{},
		DependsOn: map[string][]string{},
	}
	for _, ds := range datasets {
		g.Datasets[ds.Name] = ds
	}
	writers := map[string][]string{}
	for _, f := range flows {
		g.Flows[f.Name] = f
		writers[f.Target] = append(writers[f.Target], f.Name)
	}
	for _, f := range flows {
		preds := map[string]bool{}
		for _, d := range f.DependsOn {
			preds[d] = true
			g.DependsOn[f.Name] = append(g.DependsOn[f.Name], d)
		}
		for _, in := range f.Query.Inputs() {
			for _, w := range writers[in.Dataset] {
				preds[w] = true
			}
		}
		g.Preds[f.Name] = slices.Sorted(maps.Keys(preds))
	}
	indeg := map[string]int{}
	for _, f := range flows {
		indeg[f.Name] = len(g.Preds[f.Name])
	}
	for len(g.Order) < len(flows) {
		var ready []string
		for f, n := range indeg {
			if n == 0 {
				ready = append(ready, f)
			}
		}
		if len(ready) == 0 {
			panic("newGraph: the flows form a cycle")
		}
		sort.Strings(ready)
		next := ready[0]
		delete(indeg, next)
		g.Order = append(g.Order, next)
		for f := range indeg {
			if slices.Contains(g.Preds[f], next) {
				indeg[f]--
			}
		}
	}
	return g
}

func streamingTable(name string) *domain.Dataset {
	return &domain.Dataset{Name: name, Type: domain.StreamingTable}
}

func materializedView(name string) *domain.Dataset {
	return &domain.Dataset{Name: name, Type: domain.MaterializedView}
}

func sinkDataset(name string, s domain.Sink) *domain.Dataset {
	return &domain.Dataset{Name: name, Type: domain.SinkDataset, Sink: s, SinkFormat: "foreach_batch"}
}

// appendFlow is a flow of type APPEND from in into target.
func appendFlow(name, target string, in domain.Input, transforms ...domain.Transform) *domain.Flow {
	return &domain.Flow{Name: name, Target: target, Type: domain.FlowAppend, Query: &domain.Query{Input: in, Transforms: transforms}}
}

// viewFlow is the flow of a materialized view.
func viewFlow(name, target string, in domain.Input, transforms ...domain.Transform) *domain.Flow {
	f := appendFlow(name, target, in, transforms...)
	f.Type = domain.FlowMaterializedView
	return f
}

// sinkFlow is a flow into a sink.
func sinkFlow(name, target string, in domain.Input, transforms ...domain.Transform) *domain.Flow {
	f := appendFlow(name, target, in, transforms...)
	f.Type = domain.FlowSink
	return f
}

// streamOf reads a table of the pipeline as a stream.
func streamOf(table string) domain.Input { return domain.Input{Dataset: table, Streaming: true} }

// wholeOf reads a table of the pipeline as a batch (its whole contents).
func wholeOf(table string) domain.Input { return domain.Input{Dataset: table} }

// from reads an external source as a stream.
func from(src domain.Source) domain.Input { return domain.Input{Source: src, Streaming: true} }

// writeIDs writes a JSON lines file of the ids [from, to) into dir.
func writeIDs(t *testing.T, dir, name string, from, to int64) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "{\"id\": %d}\n", i)
	}
	writeFile(t, dir, name, b.String())
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func jsonFiles(dir string) domain.Source {
	return sources.Files(dir, sources.FileOptions{Format: "json"})
}

// ids returns the column "id" of a table, in commit order.
func ids(t *testing.T, store *eventstore.Store, table string) []int64 {
	t.Helper()
	b, err := ReadTable(context.Background(), store, table, 0)
	if err != nil {
		t.Fatalf("reading %s: %v", table, err)
	}
	return column(t, b, "id")
}

func column(t *testing.T, b *domain.Batch, name string) []int64 {
	t.Helper()
	if b.Len() == 0 {
		return nil
	}
	j := b.Schema.Index(name)
	if j < 0 {
		t.Fatalf("no column %q in %s", name, b.Schema)
	}
	out := make([]int64, b.Len())
	for i := range out {
		out[i] = b.Columns[j].Value(i).AsInt()
	}
	return out
}

// sorted returns a sorted copy.
func sorted(xs []int64) []int64 {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

// span returns the ints [from, to).
func span(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// events returns the events that match f, in log order.
func events(t testing.TB, store *eventstore.Store, f eventstore.Filter) []*domain.Event {
	t.Helper()
	var out []*domain.Event
	if err := store.Scan(context.Background(), f, func(ev *domain.Event) error {
		out = append(out, ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// committedBatches returns the batch_committed details of a flow in an
// update, in commit order.
func committedBatches(t *testing.T, store *eventstore.Store, updateID, flow string) []*domain.BatchInfo {
	t.Helper()
	var out []*domain.BatchInfo
	for _, ev := range events(t, store, eventstore.Filter{Update: updateID, Flow: flow, Types: []domain.EventType{domain.EventBatchCommitted}}) {
		out = append(out, ev.Details.BatchCommitted)
	}
	return out
}

// flowProgress returns a flow's flow_progress events in an update.
func flowProgress(t *testing.T, store *eventstore.Store, updateID, flow string) []*domain.Event {
	t.Helper()
	return events(t, store, eventstore.Filter{Update: updateID, Flow: flow, Types: []domain.EventType{domain.EventFlowProgress}})
}

// finalProgress returns the flow's last flow_progress event in an update.
func finalProgress(t *testing.T, store *eventstore.Store, updateID, flow string) *domain.Event {
	t.Helper()
	evs := flowProgress(t, store, updateID, flow)
	if len(evs) == 0 {
		t.Fatalf("flow %s has no flow_progress in update %s", flow, updateID)
	}
	return evs[len(evs)-1]
}

// retries counts the RETRY restarts of a flow in an update.
func retries(t *testing.T, store *eventstore.Store, updateID, flow string) int {
	t.Helper()
	n := 0
	for _, ev := range flowProgress(t, store, updateID, flow) {
		if ev.Details.FlowProgress.Reason == "RETRY" {
			n++
		}
	}
	return n
}

// mapIDs is a transform that replaces each id by fn(id).
func mapIDs(fn func(int64) int64) domain.Transform {
	return domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		col := domain.NewColumn(domain.KindInt64, b.Len())
		j := b.Schema.Index("id")
		for i := range b.Len() {
			col.Ints = append(col.Ints, fn(b.Columns[j].Value(i).AsInt()))
		}
		return domain.BatchOf(domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64}), []*domain.Column{col})
	})
}

// idBatch builds a batch of one bigint column "id".
func idBatch(t testing.TB, xs ...int64) *domain.Batch {
	col := domain.NewColumn(domain.KindInt64, len(xs))
	col.Ints = append(col.Ints, xs...)
	b, err := domain.BatchOf(domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64}), []*domain.Column{col})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// failFirst is a transform that fails its first n calls with err, then
// passes batches through; calls counts every call.
type failFirst struct {
	n     int64
	err   error
	calls atomic.Int64
}

func (f *failFirst) Apply(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
	if f.calls.Add(1) <= f.n {
		return nil, f.err
	}
	return b, nil
}

// failingPlans wraps a source whose Plan fails its first n calls.
type failingPlans struct {
	domain.Source
	n     int64
	calls atomic.Int64
}

func (s *failingPlans) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	if s.calls.Add(1) <= s.n {
		return nil, false, errors.New("the source is unavailable")
	}
	return s.Source.Plan(ctx, start, limit)
}

// panicOnRead wraps a source whose Read panics for ranges that start at or
// after the id from.
type panicOnRead struct {
	domain.Source
	from int64
}

func (s *panicOnRead) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	b, err := s.Source.Read(ctx, start, end)
	if err == nil && b.Len() > 0 && b.Columns[0].Value(0).AsInt() >= s.from {
		panic("the source broke")
	}
	return b, err
}

// recordingSink is a foreachBatch sink that keeps every delivery; fail, when
// set, decides whether a delivery fails.
type recordingSink struct {
	mu         sync.Mutex
	deliveries []delivery
	fail       func(batchID int64) error
}

type delivery struct {
	flow    string
	batchID int64
	ids     []int64
}

func (s *recordingSink) Deliver(_ context.Context, b domain.SinkBatch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		if err := s.fail(b.BatchID); err != nil {
			return err
		}
	}
	d := delivery{flow: b.Flow, batchID: b.BatchID}
	if j := b.Rows.Schema.Index("id"); j >= 0 {
		for i := range b.Rows.Len() {
			d.ids = append(d.ids, b.Rows.Columns[j].Value(i).AsInt())
		}
	}
	s.deliveries = append(s.deliveries, d)
	return nil
}

func (s *recordingSink) taken() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deliveries)
}

func removeFile(dir, name string) error { return os.Remove(filepath.Join(dir, name)) }

// flowSpan is when a flow ran in an update: the seq of its first STARTING
// event and of its final event.
type flowSpan struct {
	start, end uint64
	status     domain.FlowStatus
}

func flowSpans(t *testing.T, store *eventstore.Store, updateID string) map[string]flowSpan {
	t.Helper()
	out := map[string]flowSpan{}
	for _, ev := range events(t, store, eventstore.Filter{Update: updateID, Types: []domain.EventType{domain.EventFlowProgress}}) {
		fp, s := ev.Details.FlowProgress, out[ev.Origin.FlowName]
		if fp.Status == domain.FlowStarting && s.start == 0 {
			s.start = ev.Seq
		}
		if fp.Status.Terminal() {
			s.end, s.status = ev.Seq, fp.Status
		}
		out[ev.Origin.FlowName] = s
	}
	return out
}

// assertAfter checks that flow b started only after flow a finished.
func assertAfter(t *testing.T, store *eventstore.Store, updateID, a, b string) {
	t.Helper()
	spans := flowSpans(t, store, updateID)
	if spans[a].end == 0 || spans[b].start == 0 {
		t.Fatalf("%s or %s did not run: %+v %+v", a, b, spans[a], spans[b])
	}
	if spans[b].start < spans[a].end {
		t.Errorf("%s started (seq %d) before %s finished (seq %d)", b, spans[b].start, a, spans[a].end)
	}
}
