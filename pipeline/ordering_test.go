package pipeline

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

const pause = 40 * time.Millisecond

// The ordering rules of flow ordering with depends_on, one test each.

func TestDependsOnWaitsForEveryPredecessor(t *testing.T) {
	h := newHarness(t)
	p := New("wait")
	p.CreateStreamingTable("a")
	p.CreateStreamingTable("b")
	p.AppendFlow("a", StreamFrom(sources.Range(0, 5)).Transform(slow(pause)), Name("first"))
	p.AppendFlow("a", StreamFrom(sources.Range(5, 10)).Transform(slow(2*pause)), Name("second"))
	p.AppendFlow("b", StreamFrom(sources.Range(0, 5)), Name("after_both"), DependsOn("first", "second"))
	res := h.mustComplete(p, processors.Options{})
	tl := h.timeline(res.UpdateID)
	after(t, tl, "first", "after_both")
	after(t, tl, "second", "after_both")
}

func TestDependsOnFailedPredecessorSkips(t *testing.T) {
	h := newHarness(t)
	var fail atomic.Bool
	fail.Store(true)
	p := New("skip")
	p.CreateStreamingTable("a")
	p.AppendFlow("a", StreamFrom(sources.Range(0, 5)).Transform(failing(&fail)), Name("broken"))
	p.AppendFlow("a", StreamFrom(sources.Range(5, 10)), Name("fine"))
	p.AppendFlow("a", StreamFrom(sources.Range(10, 15)), Name("dependent"), DependsOn("broken", "fine"))
	res := h.run(p, processors.Options{Development: true})
	if res.State != domain.UpdateFailed {
		t.Fatalf("update %s, want FAILED", res.State)
	}
	tl := h.timeline(res.UpdateID)
	if tl["dependent"].start != 0 || tl["dependent"].status != domain.FlowSkipped || tl["dependent"].reason != domain.SkipUpstreamFailed {
		t.Errorf("dependent: %+v, want SKIPPED without starting", tl["dependent"])
	}
	if tl["fine"].status != domain.FlowCompleted || tl["broken"].status != domain.FlowFailed {
		t.Errorf("fine %s, broken %s", tl["fine"].status, tl["broken"].status)
	}
	if got := h.table("a"); len(got) != 5 {
		t.Errorf("table holds %v, want only the 5 rows of the flow that ran", got)
	}
}

func TestParallelBackfillsThenLive(t *testing.T) {
	h := newHarness(t)
	p := New("parallel")
	p.CreateStreamingTable("events")
	p.AppendFlow("events", BatchFrom(sources.Range(0, 10)).Transform(slow(pause)), Name("backfill_2024"), Once())
	p.AppendFlow("events", BatchFrom(sources.Range(10, 20)).Transform(slow(pause)), Name("backfill_2025"), Once())
	p.AppendFlow("events", StreamFrom(sources.Range(20, 30)), Name("events_live"), DependsOn("backfill_2024", "backfill_2025"))
	res := h.mustComplete(p, processors.Options{})
	tl := h.timeline(res.UpdateID)
	overlap(t, tl, "backfill_2024", "backfill_2025")
	after(t, tl, "backfill_2024", "events_live")
	after(t, tl, "backfill_2025", "events_live")
	if got := h.table("events"); len(got) != 30 {
		t.Errorf("events holds %d rows, want 30", len(got))
	}
}

func TestChainedBackfills(t *testing.T) {
	h := newHarness(t)
	p := New("chain")
	p.CreateStreamingTable("events")
	p.AppendFlow("events", BatchFrom(sources.Range(0, 10)).Transform(slow(pause)), Name("backfill_2024"), Once())
	p.AppendFlow("events", BatchFrom(sources.Range(10, 20)), Name("backfill_2025"), Once(), DependsOn("backfill_2024"))
	res := h.mustComplete(p, processors.Options{})
	after(t, h.timeline(res.UpdateID), "backfill_2024", "backfill_2025")
}

func TestOrderingAcrossTargets(t *testing.T) {
	h := newHarness(t)
	p := New("targets")
	p.CreateStreamingTable("dim")
	p.CreateStreamingTable("fact")
	p.AppendFlow("dim", StreamFrom(sources.Range(0, 10)).Transform(slow(pause)), Name("load_dim"))
	p.AppendFlow("fact", StreamFrom(sources.Range(0, 10)), Name("load_fact"), DependsOn("load_dim"))
	res := h.mustComplete(p, processors.Options{})
	after(t, h.timeline(res.UpdateID), "load_dim", "load_fact")
}

// TestTriggeredForeachBatchSequence: in a triggered pipeline a foreachBatch
// flow can be a predecessor (export, then audit of the same rows).
func TestTriggeredForeachBatchSequence(t *testing.T) {
	h := newHarness(t)
	export, audit := newCollector(), newCollector()
	p := New("sinks")
	p.CreateStreamingTable("ordered_events")
	p.AppendFlow("ordered_events", BatchFrom(sources.Range(0, 100)), Name("events_backfill"), Once())
	p.ForeachBatchSink("events_export_sink", export.fn)
	p.AppendFlow("events_export_sink", ReadStream("ordered_events").Transform(slow(pause)), Name("export_events"), DependsOn("events_backfill"))
	p.ForeachBatchSink("events_audit_sink", audit.fn)
	p.AppendFlow("events_audit_sink", ReadStream("ordered_events"), Name("audit_events"), DependsOn("export_events"))
	res := h.mustComplete(p, processors.Options{})
	tl := h.timeline(res.UpdateID)
	after(t, tl, "events_backfill", "export_events")
	after(t, tl, "export_events", "audit_events")
	if export.rows() != 100 || audit.rows() != 100 {
		t.Errorf("export got %d rows, audit %d, want 100 each", export.rows(), audit.rows())
	}
	if len(export.order) != 1 || export.order[0] != 0 {
		t.Errorf("export batch ids %v, want [0]", export.order)
	}
}

// TestValidationBeforeAnythingRuns: unknown names and cycles are refused
// before any flow starts; the log holds only the failed update.
func TestValidationBeforeAnythingRuns(t *testing.T) {
	builds := map[string]func(p *Pipeline){
		"unknown name": func(p *Pipeline) {
			p.CreateStreamingTable("t")
			p.AppendFlow("t", StreamFrom(sources.Range(0, 5)), Name("a"))
			p.AppendFlow("t", StreamFrom(sources.Range(0, 5)), Name("b"), DependsOn("missing"))
		},
		"cycle": func(p *Pipeline) {
			p.CreateStreamingTable("t")
			p.AppendFlow("t", StreamFrom(sources.Range(0, 5)), Name("a"), DependsOn("b"))
			p.AppendFlow("t", StreamFrom(sources.Range(0, 5)), Name("b"), DependsOn("a"))
		},
	}
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			p := New(name)
			build(p)
			res := h.run(p, processors.Options{})
			if res.State != domain.UpdateFailed {
				t.Fatalf("update %s, want FAILED", res.State)
			}
			for _, ev := range h.events(eventstore.Filter{}) {
				switch ev.Type {
				case domain.EventCreateUpdate, domain.EventUpdateProgress:
				default:
					t.Errorf("event %s written by an invalid pipeline", ev.Type)
				}
			}
		})
	}
}

// TestContinuousBackfillThenLive: in a continuous pipeline the live flow and
// a foreachBatch export start when the once backfill drains, keep running,
// are woken by commits, and stop cleanly on cancel.
func TestContinuousBackfillThenLive(t *testing.T) {
	h := newHarness(t)
	export := newCollector()
	p := New("continuous")
	p.Continuous = true
	p.CreateStreamingTable("backfilled_events")
	p.AppendFlow("backfilled_events", BatchFrom(sources.Range(0, 50)).Transform(slow(pause)), Name("events_backfill"), Once())
	p.AppendFlow("backfilled_events", StreamFrom(sources.Range(50, 100)), Name("events_live"), DependsOn("events_backfill"))
	p.ForeachBatchSink("events_export_sink", export.fn)
	p.AppendFlow("events_export_sink", ReadStream("backfilled_events"), Name("export_events"), DependsOn("events_backfill"))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *processors.Result)
	go func() {
		res, err := p.Run(ctx, h.store, fast(processors.Options{Limit: domain.ReadLimit{MaxRows: 10}}))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	deadline := time.After(20 * time.Second)
	for export.rows() < 100 {
		select {
		case <-deadline:
			t.Fatalf("export saw %d of 100 rows", export.rows())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	res := <-done
	if res.State != domain.UpdateCanceled {
		t.Fatalf("update %s (%v), want CANCELED", res.State, res.Err)
	}
	tl := h.timeline(res.UpdateID)
	after(t, tl, "events_backfill", "events_live")
	after(t, tl, "events_backfill", "export_events")
	want := map[string]domain.FlowStatus{"events_backfill": domain.FlowCompleted, "events_live": domain.FlowStopped, "export_events": domain.FlowStopped}
	for f, st := range want {
		if tl[f].status != st {
			t.Errorf("%s ended %s, want %s", f, tl[f].status, st)
		}
	}
	if got := h.table("backfilled_events"); len(got) != 100 {
		t.Errorf("table holds %d rows, want 100", len(got))
	}
	if len(export.order) < 2 {
		t.Errorf("export got %d batches; with 10-row micro-batches it should have been woken several times", len(export.order))
	}
	for i, id := range export.order {
		if id != int64(i) {
			t.Fatalf("export batch ids %v, want 0, 1, 2, ...", export.order)
		}
	}
}
