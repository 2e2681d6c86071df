package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// chain declares backfill_2024 -> backfill_2025 -> events_live into events;
// backfill_2025 fails while *fail is set.
func chain(fail *atomic.Bool) *Pipeline {
	p := New("chain")
	p.CreateStreamingTable("events")
	p.AppendFlow("events", BatchFrom(sources.Range(0, 10)), Name("backfill_2024"), Once())
	p.AppendFlow("events", BatchFrom(sources.Range(10, 20)).Transform(failing(fail)), Name("backfill_2025"), Once(), DependsOn("backfill_2024"))
	p.AppendFlow("events", StreamFrom(sources.Range(20, 30)), Name("events_live"), DependsOn("backfill_2025"))
	return p
}

func wantStatuses(t *testing.T, h *harness, res *processors.Result, want map[string]string) {
	t.Helper()
	tl := h.timeline(res.UpdateID)
	for f, w := range want {
		got := string(tl[f].status)
		if tl[f].reason != "" {
			got += "/" + tl[f].reason
		}
		if got != w {
			t.Errorf("%s: %s, want %s", f, got, w)
		}
	}
}

// TestOperationalRules walks one pipeline through the operational rules of
// flow ordering: restart, resume at the live flow, full refresh, checkpoint
// reset of the live flow.
func TestOperationalRules(t *testing.T) {
	h := newHarness(t)
	var fail atomic.Bool
	fail.Store(true)
	p := chain(&fail)

	// Update 1 stops at backfill_2025: backfill_2024 drained, the rest not.
	res := h.run(p, processors.Options{Development: true})
	if res.State != domain.UpdateFailed {
		t.Fatalf("update 1 %s, want FAILED", res.State)
	}
	wantStatuses(t, h, res, map[string]string{"backfill_2024": "COMPLETED", "backfill_2025": "FAILED", "events_live": "SKIPPED/UPSTREAM_FAILED"})

	t.Run("restart skips drained once flows and resumes at the first unfinished", func(t *testing.T) {
		fail.Store(false)
		res := h.mustComplete(p, processors.Options{})
		wantStatuses(t, h, res, map[string]string{"backfill_2024": "SKIPPED/ONCE_FLOW_ALREADY_DRAINED", "backfill_2025": "COMPLETED", "events_live": "COMPLETED"})
		after(t, h.timeline(res.UpdateID), "backfill_2025", "events_live")
		if got := h.table("events"); len(got) != 30 {
			t.Errorf("events holds %d rows, want 30", len(got))
		}
	})
	t.Run("after the live flow was reached a restart resumes only the live flow", func(t *testing.T) {
		res := h.mustComplete(p, processors.Options{})
		wantStatuses(t, h, res, map[string]string{"backfill_2024": "SKIPPED/ONCE_FLOW_ALREADY_DRAINED", "backfill_2025": "SKIPPED/ONCE_FLOW_ALREADY_DRAINED", "events_live": "COMPLETED"})
		if got := h.table("events"); len(got) != 30 {
			t.Errorf("events holds %d rows, want still 30", len(got))
		}
	})
	t.Run("full refresh clears completion and reruns the chain in order", func(t *testing.T) {
		res := h.mustComplete(p, processors.Options{FullRefreshAll: true})
		wantStatuses(t, h, res, map[string]string{"backfill_2024": "COMPLETED", "backfill_2025": "COMPLETED", "events_live": "COMPLETED"})
		tl := h.timeline(res.UpdateID)
		after(t, tl, "backfill_2024", "backfill_2025")
		after(t, tl, "backfill_2025", "events_live")
		got := h.table("events")
		if len(got) != 30 || got[0] != 0 || got[29] != 29 {
			t.Errorf("events after full refresh: %v, want 0..29 once each", got)
		}
		batches := h.events(eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventBatchCommitted}})
		for _, ev := range batches {
			if ev.Details.BatchCommitted.BatchID != 0 {
				t.Errorf("flow %s committed batch %d after a full refresh, want ids from 0", ev.Origin.FlowName, ev.Details.BatchCommitted.BatchID)
			}
		}
	})
	t.Run("checkpoint reset of the live flow replays only the live flow", func(t *testing.T) {
		res := h.mustComplete(p, processors.Options{ResetCheckpoint: []string{"events_live"}})
		wantStatuses(t, h, res, map[string]string{"backfill_2024": "SKIPPED/ONCE_FLOW_ALREADY_DRAINED", "backfill_2025": "SKIPPED/ONCE_FLOW_ALREADY_DRAINED", "events_live": "COMPLETED"})
		got := h.table("events")
		if len(got) != 40 {
			t.Errorf("events holds %d rows, want 40: the live range reread into the existing table", len(got))
		}
	})
	t.Run("projections rebuilt from the log are byte-equal", func(t *testing.T) {
		before, err := h.store.ProjectionDigest()
		if err != nil {
			t.Fatal(err)
		}
		if err := h.store.VerifyProjections(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := h.store.RebuildProjections(context.Background()); err != nil {
			t.Fatal(err)
		}
		after, err := h.store.ProjectionDigest()
		if err != nil {
			t.Fatal(err)
		}
		if before != after {
			t.Errorf("digest %s before, %s after rebuild", before, after)
		}
		if got := h.table("events"); len(got) != 40 {
			t.Errorf("events holds %d rows after rebuild, want 40", len(got))
		}
	})
}

func TestRetriesInProductionNotInDevelopment(t *testing.T) {
	flaky := func(failures int32) domain.Transform {
		var n atomic.Int32
		return domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
			if n.Add(1) <= failures {
				return nil, errors.New("connection reset by peer") // a transient error
			}
			return b, nil
		})
	}
	tests := []struct {
		name        string
		development bool
		failures    int32
		want        domain.UpdateState
		retries     int
	}{
		{"production retries until it works", false, 2, domain.UpdateCompleted, 2},
		{"production gives up after the attempts", false, 10, domain.UpdateFailed, 3},
		{"development does not retry", true, 1, domain.UpdateFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			p := New("retry")
			p.CreateStreamingTable("t")
			p.AppendFlow("t", StreamFrom(sources.Range(0, 5)).Transform(flaky(tt.failures)), Name("flaky"))
			p.StreamingTable("downstream", ReadStream("t"))
			res := h.run(p, processors.Options{Development: tt.development})
			if res.State != tt.want {
				t.Fatalf("update %s, want %s (%v)", res.State, tt.want, res.Err)
			}
			retries := 0
			for _, ev := range h.events(eventstore.Filter{Flow: "flaky", Types: []domain.EventType{domain.EventFlowProgress}}) {
				if ev.Details.FlowProgress.Reason == "RETRY" {
					retries++
				}
			}
			if retries != tt.retries {
				t.Errorf("%d retries, want %d", retries, tt.retries)
			}
			if tt.want == domain.UpdateFailed {
				wantStatuses(t, h, res, map[string]string{"flaky": "FAILED", "downstream": "SKIPPED/UPSTREAM_FAILED"})
			}
		})
	}
}

// medallion declares bronze <- source, silver <- bronze, gold <- silver, and
// an independent side table.
func medallion(failSilver *atomic.Bool) *Pipeline {
	p := New("medallion")
	p.StreamingTable("bronze", StreamFrom(sources.Range(0, 10)))
	p.StreamingTable("silver", ReadStream("bronze").Transform(failing(failSilver)))
	p.StreamingTable("gold", ReadStream("silver"))
	p.StreamingTable("side", StreamFrom(sources.Range(0, 3)), Properties(map[string]string{domain.PropResetAllowed: "false"}))
	return p
}

func TestUpdateSelections(t *testing.T) {
	t.Run("refresh selection excludes the rest", func(t *testing.T) {
		h := newHarness(t)
		var fail atomic.Bool
		res := h.mustComplete(medallion(&fail), processors.Options{Refresh: []string{"bronze", "side"}})
		wantStatuses(t, h, res, map[string]string{"bronze": "COMPLETED", "side": "COMPLETED", "silver": "EXCLUDED", "gold": "EXCLUDED"})
	})
	t.Run("refresh failed takes failed tables and their downstream", func(t *testing.T) {
		h := newHarness(t)
		var fail atomic.Bool
		fail.Store(true)
		p := medallion(&fail)
		if res := h.run(p, processors.Options{Development: true}); res.State != domain.UpdateFailed {
			t.Fatalf("first update %s, want FAILED", res.State)
		}
		fail.Store(false)
		res := h.mustComplete(p, processors.Options{RefreshFailed: true})
		wantStatuses(t, h, res, map[string]string{"bronze": "EXCLUDED", "side": "EXCLUDED", "silver": "COMPLETED", "gold": "COMPLETED"})
		if got := h.table("gold"); len(got) != 10 {
			t.Errorf("gold holds %d rows, want 10", len(got))
		}
		// Nothing failed any more: a second refresh of failed tables runs nothing.
		res = h.mustComplete(p, processors.Options{RefreshFailed: true})
		wantStatuses(t, h, res, map[string]string{"bronze": "EXCLUDED", "silver": "EXCLUDED", "gold": "EXCLUDED"})
	})
	t.Run("full refresh of a selection", func(t *testing.T) {
		h := newHarness(t)
		var fail atomic.Bool
		p := medallion(&fail)
		h.mustComplete(p, processors.Options{})
		res := h.mustComplete(p, processors.Options{FullRefresh: []string{"bronze"}})
		wantStatuses(t, h, res, map[string]string{"bronze": "COMPLETED", "silver": "EXCLUDED"})
		if got := h.table("bronze"); len(got) != 10 {
			t.Errorf("bronze holds %d rows after its full refresh, want 10", len(got))
		}
	})
	refused := []struct {
		name string
		opts processors.Options
		code domain.Code
		hint string
	}{
		{"full refresh of a table that forbids it", processors.Options{FullRefresh: []string{"side"}}, domain.CodeTableNotResettable, ""},
		{"full refresh of all with a table that forbids it", processors.Options{FullRefreshAll: true}, domain.CodeTableNotResettable, ""},
		{"unknown flow in checkpoint reset", processors.Options{ResetCheckpoint: []string{"silverr"}}, domain.CodeUnknownFlowSelection, "bronze, gold, side, silver"},
		{"unknown table in refresh", processors.Options{Refresh: []string{"platinum"}}, domain.CodeUnknownTableSelection, "bronze, gold, side, silver"},
		{"conflicting options", processors.Options{FullRefreshAll: true, Refresh: []string{"bronze"}}, domain.CodeConflictingUpdateOptions, ""},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			var fail atomic.Bool
			res := h.run(medallion(&fail), tt.opts)
			if res.State != domain.UpdateFailed || !strings.Contains(res.Err.Error(), string(tt.code)) {
				t.Fatalf("update %s with %v, want FAILED with %s", res.State, res.Err, tt.code)
			}
			if !strings.Contains(res.Err.Error()+hintsOf(res.Err), tt.hint) {
				t.Errorf("error %v does not list %q", res.Err, tt.hint)
			}
			if n := len(h.events(eventstore.Filter{Types: []domain.EventType{domain.EventFlowProgress, domain.EventBatchCommitted, domain.EventTableReset}})); n != 0 {
				t.Errorf("a refused update wrote %d flow or table events", n)
			}
		})
	}
}

func hintsOf(err error) string {
	var out string
	if p, ok := err.(domain.Problems); ok {
		for _, e := range p {
			out += " " + e.Hint
		}
	}
	return out
}

// TestDryRun: a dry run records the update and the definitions, and touches
// no table; a dry run of a broken pipeline reports every problem at once.
func TestDryRun(t *testing.T) {
	h := newHarness(t)
	var fail atomic.Bool
	res := h.mustComplete(medallion(&fail), processors.Options{DryRun: true})
	for _, ev := range h.events(eventstore.Filter{}) {
		switch ev.Type {
		case domain.EventCreateUpdate, domain.EventUpdateProgress, domain.EventDatasetDefinition, domain.EventFlowDefinition, domain.EventPlanningInformation:
			if ev.Origin.UpdateID != res.UpdateID {
				t.Errorf("event %s of another update", ev.Type)
			}
		default:
			t.Errorf("dry run wrote a %s event", ev.Type)
		}
	}
	if got := h.table("bronze"); len(got) != 0 {
		t.Errorf("dry run wrote %d rows", len(got))
	}

	broken := New("broken")
	broken.CreateStreamingTable("lonely")
	broken.StreamingTable("t", ReadStream("missing"))
	broken.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("x"), DependsOn("nope"))
	res = h.run(broken, processors.Options{DryRun: true})
	problems, ok := res.Err.(domain.Problems)
	if res.State != domain.UpdateFailed || !ok || len(problems) < 3 {
		t.Fatalf("dry run of a broken pipeline: %s, %v; want FAILED with every problem", res.State, res.Err)
	}
	failed := h.events(eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventUpdateProgress}})
	last := failed[len(failed)-1]
	if last.Error == nil || !strings.Contains(last.Error.Message, "nope") || !strings.Contains(last.Error.Message, "lonely") {
		t.Errorf("the failed update's event does not carry every problem: %+v", last.Error)
	}
}

// TestOnceFlowIsDurableAcrossStores: reopening the store keeps once
// completion (it lives in the log, not in memory).
func TestOnceFlowIsDurableAcrossStores(t *testing.T) {
	dir := t.TempDir()
	p := New("durable")
	p.CreateStreamingTable("t")
	p.AppendFlow("t", BatchFrom(sources.Range(0, 10)), Name("backfill"), Once())
	for i, want := range []string{"COMPLETED", "SKIPPED"} {
		store, err := eventstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background(), store, processors.Options{})
		if err != nil || res.State != domain.UpdateCompleted {
			t.Fatalf("update %d: %v %v", i, res, err)
		}
		if got := string(res.Flows["backfill"]); got != want {
			t.Errorf("update %d: backfill %s, want %s", i, got, want)
		}
		store.Close()
	}
}
