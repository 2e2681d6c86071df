package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sources"
)

func noopSink(context.Context, *domain.Batch, int64) error { return nil }

// events declares the depends_on pattern: two once backfills and a live flow
// into one table, then an export sink after the live flow.
func events(p *Pipeline) {
	p.CreateStreamingTable("events")
	p.AppendFlow("events", BatchFrom(sources.Range(0, 10)), Name("backfill_2024"), Once())
	p.AppendFlow("events", BatchFrom(sources.Range(10, 20)), Name("backfill_2025"), Once())
	p.AppendFlow("events", StreamFrom(sources.Range(20, 30)), Name("events_live"), DependsOn("backfill_2024", "backfill_2025"))
}

func TestResolveValid(t *testing.T) {
	p := New("valid")
	events(p)
	p.ForeachBatchSink("export_sink", noopSink)
	p.AppendFlow("export_sink", ReadStream("events"), Name("export"), DependsOn("events_live"))
	p.TemporaryView("recent", ReadStream("events").Filter(func(r Row) bool { return r.Get("id").AsInt() > 5 }))
	p.StreamingTable("recent_copy", ReadStream("recent"))
	p.MaterializedView("summary", Read("events"))
	g, problems := p.Resolve()
	if len(problems) > 0 {
		t.Fatalf("valid pipeline refused: %v", problems)
	}
	wantPreds := map[string][]string{
		"backfill_2024": nil,
		"backfill_2025": nil,
		"events_live":   {"backfill_2024", "backfill_2025"},
		"export":        {"backfill_2024", "backfill_2025", "events_live"},
		"recent_copy":   {"backfill_2024", "backfill_2025", "events_live"},
		"summary":       {"backfill_2024", "backfill_2025", "events_live"},
	}
	for f, want := range wantPreds {
		if got := g.Preds[f]; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("preds of %s = %v, want %v", f, got, want)
		}
	}
	if _, ok := g.Preds["recent"]; ok {
		t.Errorf("the view's flow has edges; views are inlined, not run")
	}
	if got := g.Flows["recent_copy"].Query.Input.Dataset; got != "events" {
		t.Errorf("read of the view resolves to %q, want the table behind it", got)
	}
	if n := len(g.Flows["recent_copy"].Query.Transforms); n != 1 {
		t.Errorf("inlined query has %d transforms, want the view's one", n)
	}
	wantOrder := "backfill_2024,backfill_2025,events_live,export,recent_copy,summary"
	if got := strings.Join(g.Order, ","); got != wantOrder {
		t.Errorf("order %s, want %s", got, wantOrder)
	}
	types := map[string]domain.FlowType{"export": domain.FlowSink, "summary": domain.FlowMaterializedView, "recent": domain.FlowView, "events_live": domain.FlowAppend}
	for f, want := range types {
		if got := g.Flows[f].Type; got != want {
			t.Errorf("type of %s = %s, want %s", f, got, want)
		}
	}
}

// TestResolveCodes has one case per validation code: the smallest pipeline
// that shows it.
func TestResolveCodes(t *testing.T) {
	tests := []struct {
		name    string
		build   func(p *Pipeline)
		want    domain.Code
		mention []string // words the message must contain
	}{
		{"empty pipeline", func(p *Pipeline) {}, domain.CodeEmptyPipeline, nil},
		{"unknown target", func(p *Pipeline) {
			p.AppendFlow("evnts", StreamFrom(sources.Range(0, 1)), Name("f"))
		}, domain.CodeUnknownDataset, []string{"evnts"}},
		{"unknown read", func(p *Pipeline) {
			p.CreateStreamingTable("events")
			p.StreamingTable("copy", ReadStream("event"))
			p.AppendFlow("events", StreamFrom(sources.Range(0, 1)), Name("f"))
		}, domain.CodeUnknownDataset, []string{"event", `did you mean "events"`}},
		{"unknown depends_on", func(p *Pipeline) {
			events(p)
			p.AppendFlow("events", StreamFrom(sources.Range(0, 1)), Name("late"), DependsOn("backfil_2024"))
		}, domain.CodeUnknownDependsOn, []string{"backfil_2024", `did you mean "backfill_2024"`}},
		{"depends_on cycle", func(p *Pipeline) {
			p.CreateStreamingTable("t")
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("a"), DependsOn("c"))
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("b"), DependsOn("a"))
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("c"), DependsOn("b"))
		}, domain.CodeCircularDependency, []string{"a -[depends_on]-> b -[depends_on]-> c -[depends_on]-> a"}},
		{"cycle over data and ordering edges", func(p *Pipeline) {
			p.CreateStreamingTable("t1")
			p.CreateStreamingTable("t2")
			p.AppendFlow("t1", StreamFrom(sources.Range(0, 1)), Name("load"), DependsOn("copy"))
			p.AppendFlow("t2", ReadStream("t1"), Name("copy"))
		}, domain.CodeCircularDependency, []string{"copy -[depends_on]-> load -[writes t1, read by]-> copy"}},
		{"view cycle", func(p *Pipeline) {
			p.TemporaryView("v1", ReadStream("v2"))
			p.TemporaryView("v2", ReadStream("v1"))
			p.StreamingTable("t", ReadStream("v1"))
		}, domain.CodeCircularDependency, []string{"v1 -> v2 -> v1"}},
		{"duplicate dataset", func(p *Pipeline) {
			p.StreamingTable("t", StreamFrom(sources.Range(0, 1)))
			p.CreateStreamingTable("t")
		}, domain.CodeDuplicateIdentifiers, []string{`"t"`}},
		{"duplicate flow", func(p *Pipeline) {
			p.CreateStreamingTable("t")
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)))
			p.AppendFlow("t", StreamFrom(sources.Range(1, 2)))
		}, domain.CodeDuplicateIdentifiers, []string{`flow "t"`}},
		{"flow named like another table", func(p *Pipeline) {
			p.CreateStreamingTable("a")
			p.AppendFlow("a", StreamFrom(sources.Range(0, 1)), Name("load_a"))
			p.CreateStreamingTable("b")
			p.AppendFlow("b", StreamFrom(sources.Range(0, 1)), Name("a"))
		}, domain.CodeFlowNameIsTableName, []string{`"a"`, `"b"`}},
		{"predecessor writes a view", func(p *Pipeline) {
			p.TemporaryView("v", StreamFrom(sources.Range(0, 1)))
			p.StreamingTable("t", StreamFrom(sources.Range(0, 1)))
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("after"), DependsOn("v"))
		}, domain.CodePredecessorWritesView, []string{`"v"`}},
		{"continuous predecessor not once", func(p *Pipeline) {
			p.Continuous = true
			events(p)
			p.ForeachBatchSink("export_sink", noopSink)
			p.AppendFlow("export_sink", ReadStream("events"), Name("export"), DependsOn("backfill_2024"))
			p.ForeachBatchSink("audit_sink", noopSink)
			p.AppendFlow("audit_sink", ReadStream("events"), Name("audit"), DependsOn("export"))
		}, domain.CodePredecessorMustBeOnce, []string{`"audit"`, `"export"`}},
		{"foreachBatch flow once", func(p *Pipeline) {
			p.ForeachBatchSink("s", noopSink)
			p.AppendFlow("s", BatchFrom(sources.Range(0, 1)), Name("f"), Once())
		}, domain.CodeForeachBatchOnce, []string{`"f"`}},
		{"once over a stream", func(p *Pipeline) {
			p.CreateStreamingTable("t")
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("f"), Once())
		}, domain.CodeOnceOverStream, []string{`"f"`}},
		{"streaming table fed by a batch read", func(p *Pipeline) {
			p.CreateStreamingTable("t")
			p.AppendFlow("t", BatchFrom(sources.Range(0, 1)), Name("f"))
		}, domain.CodeStreamingTableBatchRead, []string{`"f"`, `"t"`}},
		{"dataset without a flow", func(p *Pipeline) {
			p.CreateStreamingTable("lonely")
			p.StreamingTable("t", StreamFrom(sources.Range(0, 1)))
		}, domain.CodeDatasetWithoutFlow, []string{`"lonely"`}},
		{"append flow into a materialized view", func(p *Pipeline) {
			p.MaterializedView("mv", BatchFrom(sources.Range(0, 1)))
			p.AppendFlow("mv", StreamFrom(sources.Range(0, 1)), Name("f"))
		}, domain.CodeInvalidFlowTarget, []string{`"mv"`}},
		{"option that does not apply", func(p *Pipeline) {
			p.CreateStreamingTable("t", Once())
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("f"))
		}, domain.CodeInvalidDefinition, []string{"Once"}},
		{"blank name", func(p *Pipeline) {
			p.StreamingTable(" ", StreamFrom(sources.Range(0, 1)))
		}, domain.CodeInvalidName, nil},
		{"incomplete import_checkpoint", func(p *Pipeline) {
			p.CreateStreamingTable("t")
			p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("f"), ImportCheckpoint("", "x"))
		}, domain.CodeImportCheckpointInvalid, []string{`"f"`}},
		{"invalid source option", func(p *Pipeline) {
			p.StreamingTable("t", StreamFrom(sources.Files("/data", sources.FileOptions{Format: "xml"})))
		}, domain.CodeSourceOptionInvalid, []string{`"t"`, "xml"}},
		{"streaming read of a materialized view", func(p *Pipeline) {
			p.StreamingTable("src", StreamFrom(sources.Range(0, 10)))
			p.MaterializedView("mv", Read("src"))
			p.StreamingTable("st", ReadStream("mv"))
		}, domain.CodeStreamOfMaterializedView, []string{`"st"`, `"mv"`}},
		{"reading a sink", func(p *Pipeline) {
			p.ForeachBatchSink("s", noopSink)
			p.StreamingTable("t", ReadStream("s"))
		}, domain.CodeUnknownDataset, []string{"sink"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New("test")
			tt.build(p)
			g, problems := p.Resolve()
			if g != nil {
				t.Fatalf("resolved a graph despite problems %v", problems)
			}
			var found *domain.Error
			for _, e := range problems {
				if e.Code == tt.want {
					found = e
				}
			}
			if found == nil {
				t.Fatalf("no %s among %v", tt.want, problems)
			}
			text := found.Error() + " hint: " + found.Hint
			for _, m := range tt.mention {
				if !strings.Contains(text, m) {
					t.Errorf("%q does not mention %q", text, m)
				}
			}
			if found.Hint == "" {
				t.Errorf("%s has no hint", found.Code)
			}
		})
	}
}

// TestResolveReportsEverything checks that one broken pipeline reports all
// its problems at once, not the first only.
func TestResolveReportsEverything(t *testing.T) {
	p := New("broken")
	p.CreateStreamingTable("lonely")
	p.CreateStreamingTable("t")
	p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("a"), DependsOn("nope"))
	p.AppendFlow("t", StreamFrom(sources.Range(0, 1)), Name("b"), Once())
	p.AppendFlow("missing", StreamFrom(sources.Range(0, 1)), Name("c"))
	p.ForeachBatchSink("s", noopSink)
	p.AppendFlow("s", BatchFrom(sources.Range(0, 1)), Name("d"), Once())
	_, problems := p.Resolve()
	for _, want := range []domain.Code{domain.CodeDatasetWithoutFlow, domain.CodeUnknownDependsOn, domain.CodeOnceOverStream, domain.CodeUnknownDataset, domain.CodeForeachBatchOnce} {
		if !problems.Has(want) {
			t.Errorf("missing %s in %v", want, problems)
		}
	}
}

// TestTriggeredAcceptsAnyPredecessor: the rule of DEPENDS_ON_PREDECESSOR_MUST_BE_ONCE
// holds only for continuous pipelines.
func TestTriggeredAcceptsAnyPredecessor(t *testing.T) {
	build := func(continuous bool) domain.Problems {
		p := New("sinks")
		p.Continuous = continuous
		p.CreateStreamingTable("ordered_events")
		p.AppendFlow("ordered_events", BatchFrom(sources.Range(0, 10)), Name("events_backfill"), Once())
		p.ForeachBatchSink("events_export_sink", noopSink)
		p.AppendFlow("events_export_sink", ReadStream("ordered_events"), Name("export_events"), DependsOn("events_backfill"))
		p.ForeachBatchSink("events_audit_sink", noopSink)
		p.AppendFlow("events_audit_sink", ReadStream("ordered_events"), Name("audit_events"), DependsOn("export_events"))
		_, problems := p.Resolve()
		return problems
	}
	if problems := build(false); len(problems) > 0 {
		t.Errorf("triggered pipeline refused a foreachBatch predecessor: %v", problems)
	}
	if problems := build(true); !problems.Has(domain.CodePredecessorMustBeOnce) || len(problems) != 1 {
		t.Errorf("continuous pipeline: got %v, want exactly %s", problems, domain.CodePredecessorMustBeOnce)
	}
}

func TestResolveLeavesDeclarationsUntouched(t *testing.T) {
	p := New("twice")
	p.TemporaryView("v", StreamFrom(sources.Range(0, 3)).Filter(func(Row) bool { return true }))
	p.StreamingTable("t", ReadStream("v"))
	for i := 0; i < 2; i++ {
		g, problems := p.Resolve()
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		if n := len(g.Flows["t"].Query.Transforms); n != 1 {
			t.Fatalf("resolve %d: %d transforms, want 1", i, n)
		}
	}
}
