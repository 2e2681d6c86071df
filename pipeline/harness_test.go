package pipeline

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// harness runs pipelines over a real store in a temporary directory.
type harness struct {
	t     *testing.T
	store *eventstore.Store
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	store, err := eventstore.Open(t.TempDir(), eventstore.WithSyncWrites(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return &harness{t: t, store: store}
}

// fast makes retries quick for tests.
func fast(o processors.Options) processors.Options {
	o.Retry = processors.RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: 5 * time.Millisecond}
	o.PollInterval = 10 * time.Millisecond
	o.IdleAfter = 50 * time.Millisecond
	return o
}

func (h *harness) run(p *Pipeline, opts processors.Options) *processors.Result {
	h.t.Helper()
	res, err := p.Run(context.Background(), h.store, fast(opts))
	if err != nil {
		h.t.Fatalf("run: %v", err)
	}
	return res
}

// mustComplete runs an update and fails the test unless it COMPLETED.
func (h *harness) mustComplete(p *Pipeline, opts processors.Options) *processors.Result {
	h.t.Helper()
	res := h.run(p, opts)
	if res.State != domain.UpdateCompleted {
		h.t.Fatalf("update %s: %v", res.State, res.Err)
	}
	return res
}

func (h *harness) events(f eventstore.Filter) []*domain.Event {
	h.t.Helper()
	var out []*domain.Event
	if err := h.store.Scan(context.Background(), f, func(ev *domain.Event) error {
		out = append(out, ev)
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// span is when a flow ran in an update: the seq of its STARTING event and of
// its terminal event.
type span struct {
	start, end uint64
	status     domain.FlowStatus
	reason     string
}

func (h *harness) timeline(updateID string) map[string]span {
	h.t.Helper()
	out := map[string]span{}
	for _, ev := range h.events(eventstore.Filter{Update: updateID, Types: []domain.EventType{domain.EventFlowProgress}}) {
		fp := ev.Details.FlowProgress
		s := out[ev.Origin.FlowName]
		if fp.Status == domain.FlowStarting && s.start == 0 {
			s.start = ev.Seq
		}
		if fp.Status.Terminal() {
			s.end, s.status, s.reason = ev.Seq, fp.Status, fp.Reason
		}
		out[ev.Origin.FlowName] = s
	}
	return out
}

// after checks that flow b started only after flow a finished.
func after(t *testing.T, tl map[string]span, a, b string) {
	t.Helper()
	if tl[a].end == 0 || tl[b].start == 0 {
		t.Fatalf("%s or %s did not run: %+v %+v", a, b, tl[a], tl[b])
	}
	if tl[b].start < tl[a].end {
		t.Errorf("%s started (seq %d) before %s finished (seq %d)", b, tl[b].start, a, tl[a].end)
	}
}

// overlap checks that two flows ran at the same time.
func overlap(t *testing.T, tl map[string]span, a, b string) {
	t.Helper()
	if !(tl[a].start < tl[b].end && tl[b].start < tl[a].end) {
		t.Errorf("%s (%d..%d) and %s (%d..%d) did not overlap", a, tl[a].start, tl[a].end, b, tl[b].start, tl[b].end)
	}
}

func (h *harness) table(name string) []int64 {
	h.t.Helper()
	b, err := processors.ReadTable(context.Background(), h.store, name, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	var ids []int64
	if b.Len() == 0 {
		return ids
	}
	j := b.Schema.Index("id")
	for i := 0; i < b.Len(); i++ {
		ids = append(ids, b.Columns[j].Value(i).AsInt())
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	return ids
}

// slow is a transform that takes d, so that flows running at the same time
// visibly overlap.
func slow(d time.Duration) domain.Transform {
	return domain.TransformFunc(func(ctx context.Context, b *domain.Batch) (*domain.Batch, error) {
		select {
		case <-time.After(d):
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// failing is a transform that fails while *fail is true.
func failing(fail *atomic.Bool) domain.Transform {
	return domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		if fail.Load() {
			return nil, errors.New("injected failure")
		}
		return b, nil
	})
}

// collector is a foreachBatch function that keeps what it receives.
type collector struct {
	mu      sync.Mutex
	batches map[int64][]int64
	order   []int64
}

func newCollector() *collector { return &collector{batches: map[int64][]int64{}} }

func (c *collector) fn(_ context.Context, b *domain.Batch, id int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []int64
	if j := b.Schema.Index("id"); j >= 0 {
		for i := 0; i < b.Len(); i++ {
			ids = append(ids, b.Columns[j].Value(i).AsInt())
		}
	}
	c.batches[id] = ids
	c.order = append(c.order, id)
	return nil
}

func (c *collector) rows() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, ids := range c.batches {
		n += len(ids)
	}
	return n
}

// legacyStorage runs, in a storage of its own, another pipeline whose flow
// "events" reads the JSON files in dir, and returns that storage: the place
// an import_checkpoint takes a position from.
func legacyStorage(t *testing.T, dir string) string {
	t.Helper()
	storage := t.TempDir()
	old, err := eventstore.Open(storage)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	legacy := New("legacy")
	legacy.StreamingTable("events", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})))
	if res, err := legacy.Run(context.Background(), old, processors.Options{}); err != nil || res.State != domain.UpdateCompleted {
		t.Fatal(res, err)
	}
	return storage
}

// migrated sets up a migration: a legacy pipeline read 1.json (ids 0..9)
// into its flow "events", then 2.json (ids 10..14) landed; the returned
// pipeline's flow events_v2 reads the same directory, importing the legacy
// checkpoint. It returns the harness, the pipeline and the directory.
func migrated(t *testing.T) (*harness, *Pipeline, string) {
	t.Helper()
	dir := t.TempDir()
	writeJSON(t, dir, "1.json", 0, 10)
	oldStorage := legacyStorage(t, dir)
	writeJSON(t, dir, "2.json", 10, 15)
	p := New("migrated")
	p.CreateStreamingTable("events")
	p.AppendFlow("events", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})), Name("events_v2"), ImportCheckpoint(oldStorage, "events"))
	return newHarness(t), p, dir
}
