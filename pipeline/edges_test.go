package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// Edge cases of the runtime, each once a way to lose or double rows.

func TestOnceFlowDrainsInBoundedBatches(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeJSON(t, dir, "a.json", 0, 10)
	writeJSON(t, dir, "b.json", 10, 20)
	writeJSON(t, dir, "c.json", 20, 30)
	p := New("once")
	p.CreateStreamingTable("t")
	p.AppendFlow("t", BatchFrom(sources.Files(dir, sources.FileOptions{Format: "json", MaxFilesPerTrigger: 1})), Name("backfill"), Once())
	res := h.mustComplete(p, processors.Options{})
	if got := h.table("t"); len(got) != 30 {
		t.Errorf("the backfill loaded %d rows, want 30", len(got))
	}
	if n := len(h.events(eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventBatchCommitted}})); n != 3 {
		t.Errorf("%d micro-batches, want 3 of one file each", n)
	}
	if n := len(h.events(eventstore.Filter{Types: []domain.EventType{domain.EventOnceFlowDrained}})); n != 1 {
		t.Errorf("%d once_flow_drained events, want 1", n)
	}
	h.mustComplete(p, processors.Options{})
	if got := h.table("t"); len(got) != 30 {
		t.Errorf("after a second update: %d rows, want 30", len(got))
	}
}

func TestUpstreamFullRefreshStopsTheStreamReader(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeJSON(t, dir, "a.json", 0, 10)
	p := New("x")
	p.StreamingTable("raw", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})))
	p.StreamingTable("copy", ReadStream("raw"))
	h.mustComplete(p, processors.Options{})
	h.mustComplete(p, processors.Options{FullRefresh: []string{"raw"}})
	res := h.run(p, processors.Options{Development: true})
	if domain.CodeOf(res.Err) != domain.CodeUpstreamReset {
		t.Fatalf("update %s with %v, want %s", res.State, res.Err, domain.CodeUpstreamReset)
	}
	if got := h.table("copy"); len(got) != 10 {
		t.Errorf("copy holds %d rows, want its 10: nothing reread silently", len(got))
	}
	h.mustComplete(p, processors.Options{FullRefresh: []string{"copy"}})
	if got := h.table("copy"); len(got) != 10 {
		t.Errorf("copy holds %d rows after its own full refresh, want 10", len(got))
	}
	// A full refresh of everything resets sink flows too: the export starts
	// over, under new batch ids, so a sink keyed by batch id takes the reread.
	export := newCollector()
	p.ForeachBatchSink("out", export.fn)
	p.AppendFlow("out", ReadStream("raw"), Name("export"))
	h.mustComplete(p, processors.Options{})
	h.mustComplete(p, processors.Options{FullRefreshAll: true})
	if export.rows() != 20 || len(export.order) != 2 || export.order[0] != 0 || export.order[1] != 1 {
		t.Errorf("export got %d rows in batches %v, want the 10 rows in batch 0, then again in batch 1", export.rows(), export.order)
	}
}

func TestMaterializedViewRecomputesOnlyWhenInputsChange(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeJSON(t, dir, "a.json", 0, 10)
	p := New("mv")
	p.StreamingTable("raw", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})))
	p.MaterializedView("evens", Read("raw").Filter(func(r Row) bool { return r.Get("id").AsInt()%2 == 0 }))
	commits := func(res *processors.Result) int {
		return len(h.events(eventstore.Filter{Update: res.UpdateID, Flow: "evens", Types: []domain.EventType{domain.EventBatchCommitted}}))
	}
	if res := h.mustComplete(p, processors.Options{}); commits(res) != 1 {
		t.Errorf("first update: %d recomputes, want 1", commits(res))
	}
	if res := h.mustComplete(p, processors.Options{}); commits(res) != 0 {
		t.Errorf("unchanged inputs: %d recomputes, want 0", commits(res))
	}
	writeJSON(t, dir, "b.json", 10, 20)
	if res := h.mustComplete(p, processors.Options{}); commits(res) != 1 {
		t.Errorf("new input: %d recomputes, want 1", commits(res))
	}
	if got := h.table("evens"); len(got) != 10 {
		t.Errorf("evens holds %d rows, want 10", len(got))
	}
	if res := h.mustComplete(p, processors.Options{FullRefresh: []string{"evens"}}); commits(res) != 1 {
		t.Errorf("full refresh: %d recomputes, want 1", commits(res))
	}
	if got := h.table("evens"); len(got) != 10 {
		t.Errorf("evens holds %d rows after its full refresh, want 10", len(got))
	}
}

func TestImportCheckpointOnAFullRefreshFirstUpdate(t *testing.T) {
	h, p, _ := migrated(t)
	h.mustComplete(p, processors.Options{FullRefreshAll: true})
	if got := h.table("events"); len(got) != 5 {
		t.Errorf("events holds %d rows, want the 5 after the imported position", len(got))
	}
}

func TestContinuousFailureSkipsDependents(t *testing.T) {
	h := newHarness(t)
	p := New("c")
	p.Continuous = true
	p.CreateStreamingTable("t")
	p.AppendFlow("t", BatchFrom(sources.Files(filepath.Join(t.TempDir(), "missing"), sources.FileOptions{Format: "json"})), Name("bf"), Once())
	p.AppendFlow("t", StreamFrom(sources.Range(0, 10)), Name("live"), DependsOn("bf"))
	res := h.run(p, processors.Options{Development: true})
	if res.State != domain.UpdateFailed {
		t.Fatalf("update %s, want FAILED", res.State)
	}
	wantStatuses(t, h, res, map[string]string{"bf": "FAILED", "live": "SKIPPED/UPSTREAM_FAILED"})
}

func TestIdleIsReportedOnce(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeJSON(t, dir, "a.json", 0, 10)
	p := New("idle")
	p.Continuous = true
	p.StreamingTable("raw", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})))
	opts := fast(processors.Options{})
	opts.PollInterval, opts.IdleAfter = 20*time.Millisecond, 5*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	res, err := p.Run(ctx, h.store, opts)
	if err != nil || res.State != domain.UpdateCanceled {
		t.Fatalf("update %v %v", res, err)
	}
	counts := map[domain.FlowStatus]int{}
	for _, ev := range h.events(eventstore.Filter{Update: res.UpdateID, Flow: "raw", Types: []domain.EventType{domain.EventFlowProgress}}) {
		counts[ev.Details.FlowProgress.Status]++
	}
	if counts[domain.FlowIdle] != 1 || counts[domain.FlowRunning] != 1 {
		t.Errorf("IDLE %d times, RUNNING %d times with no new data; want once each", counts[domain.FlowIdle], counts[domain.FlowRunning])
	}
}

func TestPanicInAUserFunctionFailsTheFlow(t *testing.T) {
	h := newHarness(t)
	p := New("panic")
	p.StreamingTable("t", StreamFrom(sources.Range(0, 5)).Filter(func(r Row) bool {
		panic("a bug in a user's filter")
	}))
	res := h.run(p, processors.Options{Development: true})
	if domain.CodeOf(res.Err) != domain.CodeUserFunctionFailed || !strings.Contains(res.Err.Error(), "panicked") {
		t.Fatalf("update %s with %v, want %s", res.State, res.Err, domain.CodeUserFunctionFailed)
	}
}

func TestOneUpdateAtATime(t *testing.T) {
	h := newHarness(t)
	started := make(chan struct{})
	release := make(chan struct{})
	p := New("busy")
	p.StreamingTable("t", StreamFrom(sources.Range(0, 5)).Transform(domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		close(started)
		<-release
		return b, nil
	})))
	done := make(chan *processors.Result)
	go func() { done <- h.run(p, processors.Options{}) }()
	<-started
	_, err := p.Run(context.Background(), h.store, processors.Options{})
	close(release)
	if domain.CodeOf(err) != domain.CodeUpdateRunning {
		t.Errorf("a second update at once: %v, want %s", err, domain.CodeUpdateRunning)
	}
	if res := <-done; res.State != domain.UpdateCompleted {
		t.Errorf("the first update %s", res.State)
	}
	if got := h.table("t"); len(got) != 5 {
		t.Errorf("t holds %d rows, want 5", len(got))
	}
}

func TestStringColumnTakesLaterNumbers(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeFile(t, dir, "1.json", `{"id": 1, "zip": "A1B"}`+"\n")
	p := ingest(dir, sources.FileOptions{MaxFilesPerTrigger: 1})
	h.mustComplete(p, processors.Options{})
	writeFile(t, dir, "2.json", `{"id": 2, "zip": 12345}`+"\n")
	h.mustComplete(p, processors.Options{})
	b, err := processors.ReadTable(context.Background(), h.store, "raw", 0)
	if err != nil || b.Len() != 2 || b.Row(1)[1].AsString() != "12345" {
		t.Errorf("raw: %v (%v), want the zip code kept as text", b.Rows(), err)
	}
}

// TestBatchTooLargeIsPlannedAgainSmaller: a planned batch too large for one
// commit is planned again, same id, fewer rows, and the rest follows.
func TestBatchTooLargeIsPlannedAgainSmaller(t *testing.T) {
	store, err := eventstore.Open(t.TempDir(), eventstore.WithSyncWrites(false), eventstore.WithMemTableSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const n = 6_000_000 // about 24 MB encoded: more than one event may hold with this memtable
	p := New("big")
	p.CreateStreamingTable("t")
	p.AppendFlow("t", BatchFrom(sources.Range(0, n)), Name("backfill"), Once())
	// Bounds above the default, so that a batch outgrows the commit.
	res, err := p.Run(context.Background(), store, processors.Options{Limit: domain.ReadLimit{MaxRows: n}})
	if err != nil || res.State != domain.UpdateCompleted {
		t.Fatalf("update %v: %v", res, err)
	}
	b, err := processors.ReadTable(context.Background(), store, "t", 0)
	if err != nil || b.Len() != n {
		t.Fatalf("t holds %d rows (%v), want %d", b.Len(), err, n)
	}
	var replans int
	store.Scan(context.Background(), eventstore.Filter{Types: []domain.EventType{domain.EventBatchPlanned}}, func(ev *domain.Event) error {
		if ev.Level == domain.LevelWarn {
			replans++
		}
		return nil
	})
	if replans == 0 {
		t.Errorf("no batch was planned again; the test did not reach the limit")
	}
}

// TestCancelStopsDependents: canceling an update stops the running flow and
// the flows waiting on it; none of them is reported as failed or skipped.
func TestCancelStopsDependents(t *testing.T) {
	h := newHarness(t)
	started := make(chan struct{})
	p := New("cancel")
	p.CreateStreamingTable("t")
	p.AppendFlow("t", StreamFrom(sources.Range(0, 5)).Transform(domain.TransformFunc(func(ctx context.Context, b *domain.Batch) (*domain.Batch, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})), Name("slow"))
	p.AppendFlow("t", StreamFrom(sources.Range(5, 10)), Name("after"), DependsOn("slow"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err := p.Run(ctx, h.store, fast(processors.Options{}))
	if err != nil || res.State != domain.UpdateCanceled {
		t.Fatalf("update %v %v, want CANCELED", res, err)
	}
	wantStatuses(t, h, res, map[string]string{"slow": "STOPPED", "after": "STOPPED"})
	if got := h.table("t"); len(got) != 0 {
		t.Errorf("t holds %d rows after a cancel before any commit", len(got))
	}
}
