package processors

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// slow is a transform that takes d per batch, so that a flow that did not
// wait for another would visibly start before it ended.
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

// TestReaderRunsBesideWriters: a flow that reads a table as a stream runs
// beside the table's writers, taking their batches as they commit, and
// finishes after them with all they wrote; a flow that names a writer in
// depends_on still waits for it.
func TestReaderRunsBesideWriters(t *testing.T) {
	store := openStore(t)
	after := appendFlow("after", "c", from(sources.Range(0, 1)))
	after.DependsOn = []string{"write_a"}
	g := newGraph("sched", []*domain.Dataset{streamingTable("a"), streamingTable("b"), streamingTable("c")},
		// Two writers of a, one slow: the reader ends after both.
		appendFlow("write_a", "a", from(sources.Range(0, 6)), slow(20*time.Millisecond)),
		appendFlow("write_a_too", "a", from(sources.Range(100, 102))),
		appendFlow("read_a", "b", streamOf("a")),
		after)
	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: 2}})
	spans := flowSpans(t, store, res.UpdateID)
	for _, writer := range []string{"write_a", "write_a_too"} {
		if spans["read_a"].end < spans[writer].end {
			t.Errorf("read_a finished (seq %d) before %s (seq %d)", spans["read_a"].end, writer, spans[writer].end)
		}
	}
	// read_a committed a batch while the slow writer was still writing
	first := uint64(0)
	for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID, Flow: "read_a", Types: []domain.EventType{domain.EventBatchCommitted}}) {
		if first == 0 {
			first = ev.Seq
		}
	}
	if first == 0 || first > spans["write_a"].end {
		t.Errorf("read_a's first batch committed at seq %d, not before write_a finished (seq %d)", first, spans["write_a"].end)
	}
	assertAfter(t, store, res.UpdateID, "write_a", "after")
	if got, want := sorted(ids(t, store, "b")), append(span(0, 6), 100, 101); !slices.Equal(got, want) {
		t.Errorf("b holds %v, want all of a %v", got, want)
	}
}

// TestReaderOfAFailedWriter: when a writer fails, the flow that ran
// beside it keeps what it committed and stops; one that took nothing is
// skipped, as if it had waited.
func TestReaderOfAFailedWriter(t *testing.T) {
	tests := []struct {
		name   string
		failAt int // the writer's batch that fails
		want   domain.FlowStatus
	}{
		{"before any commit", 0, domain.FlowSkipped},
		{"after commits", 3, domain.FlowStopped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := openStore(t)
			batch := 0
			failing := domain.TransformFunc(func(ctx context.Context, b *domain.Batch) (*domain.Batch, error) {
				if batch++; batch > tc.failAt {
					return nil, domain.Errorf(domain.CodeInvalidDefinition, "broken")
				}
				return b, nil
			})
			g := newGraph("failed", []*domain.Dataset{streamingTable("a"), streamingTable("b")},
				appendFlow("write_a", "a", from(sources.Range(0, 10)), failing),
				appendFlow("read_a", "b", streamOf("a")))
			res, err := Run(context.Background(), store, g, Options{Limit: domain.ReadLimit{MaxRows: 2}, Development: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.State != domain.UpdateFailed {
				t.Fatalf("update %s, want FAILED", res.State)
			}
			spans := flowSpans(t, store, res.UpdateID)
			if spans["read_a"].status != tc.want {
				t.Errorf("read_a ended %s, want %s", spans["read_a"].status, tc.want)
			}
			if got, want := len(ids(t, store, "b")), len(ids(t, store, "a")); got != want {
				t.Errorf("b holds %d rows, a %d: the reader did not take all the writer committed", got, want)
			}
		})
	}
}

// TestFollowersOfFlowsThatNeverRan: a flow that runs beside a writer the
// scheduler skips (its own predecessor failed) is woken and skipped too;
// one stopped because its writer failed skips what waits for it, and the
// flows beside those; the update ends FAILED instead of waiting forever.
func TestFollowersOfFlowsThatNeverRan(t *testing.T) {
	store := openStore(t)
	failAfter := func(n int) domain.Transform {
		batch := 0
		return domain.TransformFunc(func(ctx context.Context, b *domain.Batch) (*domain.Batch, error) {
			time.Sleep(20 * time.Millisecond)
			if batch++; batch > n {
				return nil, domain.Errorf(domain.CodeInvalidDefinition, "broken")
			}
			return b, nil
		})
	}
	// x fails at once: write_a, which names it in depends_on, is skipped,
	// and read_a, beside write_a, with it.
	writeA := appendFlow("write_a", "a", from(sources.Range(0, 4)))
	writeA.DependsOn = []string{"x"}
	// w1 fails after 2 batches: f1, beside it, stops with them; z and w2,
	// which name f1 in depends_on, are skipped, and f2, beside w2, too.
	z := appendFlow("z", "z", from(sources.Range(0, 2)))
	z.DependsOn = []string{"f1"}
	w2 := appendFlow("w2", "b2", from(sources.Range(0, 2)))
	w2.DependsOn = []string{"f1"}
	g := newGraph("skipped", []*domain.Dataset{streamingTable("x"), streamingTable("a"), streamingTable("b"),
		streamingTable("b1"), streamingTable("c1"), streamingTable("z"), streamingTable("b2"), streamingTable("c2")},
		appendFlow("x", "x", from(sources.Range(0, 4)), failAfter(0)),
		writeA,
		appendFlow("read_a", "b", streamOf("a")),
		appendFlow("w1", "b1", from(sources.Range(0, 10)), failAfter(2)),
		appendFlow("f1", "c1", streamOf("b1")),
		z, w2,
		appendFlow("f2", "c2", streamOf("b2")))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, store, g, Options{Limit: domain.ReadLimit{MaxRows: 2}, Development: true})
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil || res.State != domain.UpdateFailed {
		t.Fatalf("update %s (%v), want FAILED without waiting for the timeout", res.State, ctx.Err())
	}
	got := map[string]string{}
	for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventFlowProgress}}) {
		if fp := ev.Details.FlowProgress; fp.Status.Terminal() {
			got[ev.Origin.FlowName] = string(fp.Status) + "/" + fp.Reason
		}
	}
	want := map[string]string{
		"x": "FAILED/", "write_a": "SKIPPED/UPSTREAM_FAILED", "read_a": "SKIPPED/UPSTREAM_FAILED",
		"w1": "FAILED/", "f1": "STOPPED/UPSTREAM_FAILED", "z": "SKIPPED/UPSTREAM_FAILED",
		"w2": "SKIPPED/UPSTREAM_FAILED", "f2": "SKIPPED/UPSTREAM_FAILED",
	}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s ended %s, want %s", f, got[f], w)
		}
	}
	if n := len(ids(t, store, "c1")); n != 4 {
		t.Errorf("f1 took %d rows, want the 4 w1 committed", n)
	}
}

// TestIndependentFlowsRunConcurrently: flows with no edge between them do
// not wait for each other.
func TestIndependentFlowsRunConcurrently(t *testing.T) {
	store := openStore(t)
	started := make(chan struct{}, 2)
	release := make(chan struct{})
	// Each flow's transform waits until both flows are in one: possible only
	// if they run at the same time.
	meet := domain.TransformFunc(func(ctx context.Context, b *domain.Batch) (*domain.Batch, error) {
		started <- struct{}{}
		select {
		case <-release:
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	g := newGraph("parallel", []*domain.Dataset{streamingTable("a"), streamingTable("b")},
		appendFlow("fa", "a", from(sources.Range(0, 1)), meet),
		appendFlow("fb", "b", from(sources.Range(0, 1)), meet))
	done := make(chan *Result, 1)
	go func() {
		res, _ := Run(context.Background(), store, g, quick(Options{}))
		done <- res
	}()
	for range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("the two independent flows did not run at the same time")
		}
	}
	close(release)
	if res := <-done; res == nil || res.State != domain.UpdateCompleted {
		t.Fatalf("update %+v", res)
	}
}

// TestFailureSkipsDownstream: a failed flow's downstream flows end SKIPPED
// (UPSTREAM_FAILED), others complete, and the update FAILED with the
// failure's error.
func TestFailureSkipsDownstream(t *testing.T) {
	store := openStore(t)
	broken := domain.TransformFunc(func(context.Context, *domain.Batch) (*domain.Batch, error) {
		return nil, errors.New("disk quota exceeded")
	})
	chained := appendFlow("chained", "d", from(sources.Range(0, 1)))
	chained.DependsOn = []string{"copy"}
	g := newGraph("skip", []*domain.Dataset{streamingTable("a"), streamingTable("b"), streamingTable("c"), streamingTable("d")},
		appendFlow("load", "a", from(sources.Range(0, 3)), broken),
		appendFlow("copy", "b", streamOf("a")),
		appendFlow("unrelated", "c", from(sources.Range(0, 3))),
		chained)
	res := mustFail(t, store, g, Options{Development: true}, domain.CodeUserFunctionFailed)
	want := map[string]domain.FlowStatus{
		"load": domain.FlowFailed, "copy": domain.FlowSkipped, "chained": domain.FlowSkipped, "unrelated": domain.FlowCompleted,
	}
	for f, st := range want {
		if res.Flows[f] != st {
			t.Errorf("%s is %s, want %s", f, res.Flows[f], st)
		}
	}
	for _, f := range []string{"copy", "chained"} {
		ev := finalProgress(t, store, res.UpdateID, f)
		if ev.Details.FlowProgress.Reason != domain.SkipUpstreamFailed || ev.Level != domain.LevelWarn {
			t.Errorf("%s skipped with reason %q at level %s", f, ev.Details.FlowProgress.Reason, ev.Level)
		}
	}
	last := events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventUpdateProgress}})
	if up := last[len(last)-1]; up.Details.UpdateProgress.State != domain.UpdateFailed || up.Error == nil || up.Error.Code != domain.CodeUserFunctionFailed {
		t.Errorf("the update's last progress is %+v with %+v", up.Details.UpdateProgress, up.Error)
	}
}

// TestSelections: Refresh runs only the named tables' flows, RefreshFailed
// the flows of failed tables and everything downstream; the others are
// EXCLUDED, and an excluded predecessor does not hold back its successors.
func TestSelections(t *testing.T) {
	store := openStore(t)
	var fail atomic.Bool
	failing := domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		if fail.Load() {
			return nil, errors.New("injected failure")
		}
		return b, nil
	})
	g := newGraph("select", []*domain.Dataset{streamingTable("a"), streamingTable("b"), streamingTable("c")},
		appendFlow("load_a", "a", from(sources.Range(0, 2))),
		appendFlow("load_b", "b", from(sources.Range(0, 2)), failing),
		appendFlow("copy_b", "c", streamOf("b")))

	res := mustComplete(t, store, g, Options{Refresh: []string{"c"}})
	if want := map[string]domain.FlowStatus{"load_a": domain.FlowExcluded, "load_b": domain.FlowExcluded, "copy_b": domain.FlowCompleted}; !mapsEqual(res.Flows, want) {
		t.Errorf("refresh c: flows %v, want %v", res.Flows, want)
	}

	fail.Store(true)
	res = run(t, store, g, Options{Development: true})
	if res.Flows["load_b"] != domain.FlowFailed || res.Flows["copy_b"] != domain.FlowSkipped {
		t.Fatalf("flows %v, want load_b FAILED and copy_b SKIPPED", res.Flows)
	}

	fail.Store(false)
	res = mustComplete(t, store, g, Options{RefreshFailed: true})
	if want := map[string]domain.FlowStatus{"load_a": domain.FlowExcluded, "load_b": domain.FlowCompleted, "copy_b": domain.FlowCompleted}; !mapsEqual(res.Flows, want) {
		t.Errorf("refresh failed: flows %v, want %v", res.Flows, want)
	}
	if got := ids(t, store, "c"); !slices.Equal(got, span(0, 2)) {
		t.Errorf("c holds %v", got)
	}
	res = mustComplete(t, store, g, Options{RefreshFailed: true})
	for f, st := range res.Flows {
		if st != domain.FlowExcluded {
			t.Errorf("with nothing failed, a refresh of failed tables ran %s (%s)", f, st)
		}
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCancelStopsTheUpdate: canceling the context stops the running flow
// and the flows waiting for it (STOPPED, not FAILED or SKIPPED), commits
// nothing half-done, and ends the update CANCELED.
func TestCancelStopsTheUpdate(t *testing.T) {
	store := openStore(t)
	started := make(chan struct{})
	blocking := domain.TransformFunc(func(ctx context.Context, b *domain.Batch) (*domain.Batch, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	g := newGraph("cancel", []*domain.Dataset{streamingTable("a"), streamingTable("b")},
		appendFlow("load", "a", from(sources.Range(0, 3)), blocking),
		appendFlow("copy", "b", streamOf("a")))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Result, 1)
	go func() {
		res, err := Run(ctx, store, g, quick(Options{}))
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	<-started
	cancel()
	res := <-done
	if res == nil || res.State != domain.UpdateCanceled || res.Err != nil {
		t.Fatalf("update %+v, want CANCELED without error", res)
	}
	if res.Flows["load"] != domain.FlowStopped || res.Flows["copy"] != domain.FlowStopped {
		t.Errorf("flows %v, want both STOPPED", res.Flows)
	}
	if got := ids(t, store, "a"); len(got) != 0 {
		t.Errorf("a canceled micro-batch committed %v", got)
	}
	if open, err := store.OpenUpdates(); err != nil || len(open) != 0 {
		t.Errorf("a canceled update is left open: %v (%v)", open, err)
	}
}

// TestOneUpdateAtATime: a second update of the same store while one runs is
// refused with UPDATE_ALREADY_RUNNING; the first is not disturbed.
func TestOneUpdateAtATime(t *testing.T) {
	store := openStore(t)
	started, release := make(chan struct{}), make(chan struct{})
	hold := domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		close(started)
		<-release
		return b, nil
	})
	g := newGraph("busy", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(sources.Range(0, 3)), hold))
	done := make(chan *Result, 1)
	go func() {
		res, _ := Run(context.Background(), store, g, quick(Options{}))
		done <- res
	}()
	<-started
	_, err := Run(context.Background(), store, g, quick(Options{}))
	close(release)
	if domain.CodeOf(err) != domain.CodeUpdateRunning {
		t.Errorf("a second update at once: %v, want %s", err, domain.CodeUpdateRunning)
	}
	if res := <-done; res == nil || res.State != domain.UpdateCompleted {
		t.Errorf("the first update: %+v", res)
	}
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, 3)) {
		t.Errorf("t holds %v", got)
	}
}

// TestContinuousUpdate: in a continuous update a reader runs beside its
// writer, woken by its commits; flows with nothing to do report IDLE, and
// canceling ends the update CANCELED with every flow STOPPED.
func TestContinuousUpdate(t *testing.T) {
	store := openStore(t)
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 3)
	g := newGraph("live", []*domain.Dataset{streamingTable("raw"), streamingTable("copy"), materializedView("summary"), materializedView("counted")},
		appendFlow("load", "raw", from(jsonFiles(dir))),
		appendFlow("copy", "copy", streamOf("raw")),
		// A view over a table is woken by the table's commits, a view over
		// a source by polling it.
		viewFlow("summary", "summary", wholeOf("raw"), countRows(1)),
		viewFlow("counted", "counted", wholeOfSource(jsonFiles(dir)), countRows(1)))
	g.Continuous = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Result, 1)
	go func() {
		res, err := Run(ctx, store, g, quick(Options{}))
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	caughtUp := func(n int64) func() bool {
		return func() bool {
			return len(ids(t, store, "copy")) == int(n) &&
				slices.Equal(viewValue(t, store, "summary"), []int64{n}) &&
				slices.Equal(viewValue(t, store, "counted"), []int64{n})
		}
	}
	statuses := func(flow string) []domain.FlowStatus {
		var out []domain.FlowStatus
		for _, ev := range events(t, store, eventstore.Filter{Flow: flow, Types: []domain.EventType{domain.EventFlowProgress}}) {
			out = append(out, ev.Details.FlowProgress.Status)
		}
		return out
	}
	waitFor(t, caughtUp(3))
	// Caught up, the flows go IDLE; new data makes them RUNNING again.
	waitFor(t, func() bool {
		return slices.Contains(statuses("load"), domain.FlowIdle) && slices.Contains(statuses("copy"), domain.FlowIdle)
	})
	writeIDs(t, dir, "2.json", 3, 5)
	waitFor(t, caughtUp(5))
	for _, flow := range []string{"load", "copy"} {
		st := statuses(flow)
		idle := slices.Index(st, domain.FlowIdle)
		if idle < 0 || !slices.Contains(st[idle:], domain.FlowRunning) {
			t.Errorf("%s went %v, want RUNNING again after IDLE", flow, st)
		}
	}
	cancel()
	res := <-done
	if res.State != domain.UpdateCanceled {
		t.Errorf("update %s (%v), want CANCELED", res.State, res.Err)
	}
	for flow, st := range res.Flows {
		if st != domain.FlowStopped {
			t.Errorf("%s is %s, want STOPPED", flow, st)
		}
	}
	if got := sorted(ids(t, store, "copy")); !slices.Equal(got, span(0, 5)) {
		t.Errorf("copy holds %v", got)
	}
}

// TestContinuousUpdateStopsOnFailure: a flow failing in a continuous update
// stops the whole update, which ends FAILED.
func TestContinuousUpdateStopsOnFailure(t *testing.T) {
	store := openStore(t)
	broken := domain.TransformFunc(func(context.Context, *domain.Batch) (*domain.Batch, error) {
		return nil, errors.New("bad batch")
	})
	g := newGraph("live", []*domain.Dataset{streamingTable("a"), streamingTable("b")},
		appendFlow("good", "a", from(sources.Range(0, 3))),
		appendFlow("bad", "b", from(sources.Range(0, 3)), broken))
	g.Continuous = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, store, g, quick(Options{Development: true}))
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the continuous update did not stop when a flow failed")
	}
	if res.State != domain.UpdateFailed || res.Flows["bad"] != domain.FlowFailed || res.Flows["good"] != domain.FlowStopped {
		t.Errorf("update %s, flows %v: want FAILED, bad FAILED, good STOPPED", res.State, res.Flows)
	}
}

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCancelDuringRetryBackoff: canceling an update while a flow waits to
// be retried ends the wait at once: the flow is STOPPED, the update
// CANCELED, not FAILED.
func TestCancelDuringRetryBackoff(t *testing.T) {
	store := openStore(t)
	broken := &failFirst{n: 1 << 30, err: errors.New("the broker is down")}
	g := newGraph("backoff", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(sources.Range(0, 2)), broken))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Result, 1)
	go func() {
		res, err := Run(ctx, store, g, quick(Options{Retry: RetryPolicy{Attempts: 5, Initial: time.Hour, Max: time.Hour}}))
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	// Wait until the flow failed once and waits an hour for its retry.
	waitFor(t, func() bool {
		for _, ev := range events(t, store, eventstore.Filter{Flow: "load", Types: []domain.EventType{domain.EventFlowProgress}}) {
			if ev.Details.FlowProgress.Reason == "RETRY" {
				return true
			}
		}
		return false
	})
	cancel()
	select {
	case res := <-done:
		if res.State != domain.UpdateCanceled || res.Flows["load"] != domain.FlowStopped {
			t.Errorf("update %s, flows %v: want CANCELED with load STOPPED", res.State, res.Flows)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the update did not stop while its flow waited for a retry")
	}
}
