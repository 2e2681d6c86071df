package processors

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestUpdateOptionsAreValidated: contradictory or unknown selections fail
// the update before anything runs, with every problem and its code, and the
// failure is recorded.
func TestUpdateOptionsAreValidated(t *testing.T) {
	locked := streamingTable("locked")
	locked.Properties = map[string]string{domain.PropResetAllowed: "false"}
	g := newGraph("validate", []*domain.Dataset{streamingTable("t"), locked},
		appendFlow("load", "t", from(sources.Range(0, 3))),
		appendFlow("load_locked", "locked", from(sources.Range(0, 3))))
	tests := []struct {
		name string
		opts Options
		want []domain.Code
	}{
		{"full refresh of all with a selection", Options{FullRefreshAll: true, Refresh: []string{"t"}}, []domain.Code{domain.CodeConflictingUpdateOptions, domain.CodeTableNotResettable}},
		{"refresh failed with a selection", Options{RefreshFailed: true, FullRefresh: []string{"t"}}, []domain.Code{domain.CodeConflictingUpdateOptions}},
		{"a table both refreshed and fully refreshed", Options{Refresh: []string{"t"}, FullRefresh: []string{"t"}}, []domain.Code{domain.CodeConflictingUpdateOptions}},
		{"unknown table", Options{Refresh: []string{"nope"}}, []domain.Code{domain.CodeUnknownTableSelection}},
		{"unknown flow to reset", Options{ResetCheckpoint: []string{"nope"}}, []domain.Code{domain.CodeUnknownFlowSelection}},
		{"full refresh of a table that refuses it", Options{FullRefresh: []string{"locked"}}, []domain.Code{domain.CodeTableNotResettable}},
		{"full refresh of all includes the locked table", Options{FullRefreshAll: true}, []domain.Code{domain.CodeTableNotResettable}},
		{"every problem at once", Options{Refresh: []string{"nope"}, ResetCheckpoint: []string{"nada"}}, []domain.Code{domain.CodeUnknownTableSelection, domain.CodeUnknownFlowSelection}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := openStore(t)
			res := run(t, store, g, tt.opts)
			if res.State != domain.UpdateFailed {
				t.Fatalf("update %s, want FAILED", res.State)
			}
			var problems domain.Problems
			if !errors.As(res.Err, &problems) {
				t.Fatalf("error %v is not the list of problems", res.Err)
			}
			var codes []domain.Code
			for _, p := range problems {
				codes = append(codes, p.Code)
			}
			if !slices.Equal(codes, tt.want) {
				t.Errorf("problems %v, want %v", codes, tt.want)
			}
			if n := len(events(t, store, eventstore.Filter{Types: []domain.EventType{domain.EventFlowProgress}})); n != 0 {
				t.Errorf("an invalid update ran flows (%d flow_progress events)", n)
			}
			last := events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventUpdateProgress}})
			if up := last[len(last)-1]; up.Details.UpdateProgress.State != domain.UpdateFailed || up.Error == nil || up.Error.Code != tt.want[0] {
				t.Errorf("recorded %+v with %+v", up.Details.UpdateProgress, up.Error)
			}
		})
	}
}

// TestRecordInvalid: an update of a pipeline that failed validation is
// recorded as started and FAILED with its problems.
func TestRecordInvalid(t *testing.T) {
	store := openStore(t)
	problems := domain.Problems{domain.Errorf(domain.CodeCircularDependency, "a -> b -> a")}
	res, err := RecordInvalid(context.Background(), store, "broken", Options{Cause: "user_action"}, problems)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != domain.UpdateFailed || res.Err == nil {
		t.Fatalf("result %+v", res)
	}
	evs := events(t, store, eventstore.Filter{Update: res.UpdateID})
	if len(evs) != 4 || evs[0].Type != domain.EventCreateUpdate || evs[0].Details.CreateUpdate.Cause != "user_action" {
		t.Fatalf("recorded %d events, first %+v", len(evs), evs[0])
	}
	last := evs[len(evs)-1]
	if last.Details.UpdateProgress == nil || last.Details.UpdateProgress.State != domain.UpdateFailed || last.Error.Code != domain.CodeCircularDependency {
		t.Errorf("last event %+v error %+v", last.Details, last.Error)
	}
	if open, _ := store.OpenUpdates(); len(open) != 0 {
		t.Errorf("an invalid update is left open: %v", open)
	}
}

// TestRunOnClosedStore: an update that cannot be recorded at all is an
// error, not a Result.
func TestRunOnClosedStore(t *testing.T) {
	store, err := eventstore.Open(t.TempDir(), eventstore.WithSyncWrites(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	g := newGraph("closed", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(sources.Range(0, 1))))
	res, err := Run(context.Background(), store, g, Options{})
	if err == nil || res != nil {
		t.Errorf("Run on a closed store: %+v, %v; want an error", res, err)
	}
}

// TestAbandonedUpdateIsClosed: an update the log shows started and never
// ended (its process died) is closed by the next update: its unfinished
// flows and then the update are recorded FAILED with UPDATE_PROCESS_ENDED.
// Its finished flows keep their status.
func TestAbandonedUpdateIsClosed(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	const dead = "0badc0de-0000-4000-8000-000000000000"
	origin := func(flow, dataset string) domain.Origin {
		return domain.Origin{PipelineName: "crashy", UpdateID: dead, FlowName: flow, DatasetName: dataset}
	}
	// What a run appends before its process is killed in the middle of "load".
	_, err := store.Append(ctx,
		&domain.Event{Type: domain.EventCreateUpdate, Level: domain.LevelInfo, Origin: origin("", ""), Details: domain.Details{CreateUpdate: &domain.CreateUpdate{Cause: "api_call"}}},
		&domain.Event{Type: domain.EventUpdateProgress, Level: domain.LevelInfo, Origin: origin("", ""), Details: domain.Details{UpdateProgress: &domain.UpdateProgress{State: domain.UpdateRunning}}},
		&domain.Event{Type: domain.EventFlowProgress, Level: domain.LevelInfo, Origin: origin("load", "t"), Details: domain.Details{FlowProgress: &domain.FlowProgress{Status: domain.FlowRunning}}},
		&domain.Event{Type: domain.EventFlowProgress, Level: domain.LevelInfo, Origin: origin("other", "u"), Details: domain.Details{FlowProgress: &domain.FlowProgress{Status: domain.FlowRunning}}},
		&domain.Event{Type: domain.EventFlowProgress, Level: domain.LevelInfo, Origin: origin("other", "u"), Details: domain.Details{FlowProgress: &domain.FlowProgress{Status: domain.FlowCompleted}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	g := newGraph("crashy", []*domain.Dataset{streamingTable("t"), streamingTable("u")},
		appendFlow("load", "t", from(sources.Range(0, 2))),
		appendFlow("other", "u", from(sources.Range(0, 2))))
	// An update that leaves load alone, so that its failure stays the last word.
	mustComplete(t, store, g, Options{Refresh: []string{"u"}})
	assertClosedAsEnded(t, store, dead, []string{"load"})
	if failed, err := store.FailedFlows(); err != nil || failed["load"] != "t" {
		t.Errorf("failed flows %v (%v), want load: a refresh of failed tables would miss it", failed, err)
	}

	// The closing is recorded once, and the flow it failed is what a
	// refresh of failed tables runs.
	before := len(events(t, store, eventstore.Filter{Update: dead}))
	res := mustComplete(t, store, g, Options{RefreshFailed: true})
	if after := len(events(t, store, eventstore.Filter{Update: dead})); after != before {
		t.Errorf("the dead update got %d more events", after-before)
	}
	if res.Flows["load"] != domain.FlowCompleted || res.Flows["other"] != domain.FlowExcluded {
		t.Errorf("a refresh of failed tables ran %v, want load only", res.Flows)
	}
}

// assertClosedAsEnded checks that update id was closed as one whose process
// ended, with exactly the flows listed failed.
func assertClosedAsEnded(t *testing.T, store *eventstore.Store, id string, flows []string) {
	t.Helper()
	var failedFlows []string
	var updateFailed bool
	for _, ev := range events(t, store, eventstore.Filter{Update: id}) {
		switch {
		case ev.Type == domain.EventFlowProgress && ev.Details.FlowProgress.Status == domain.FlowFailed:
			if ev.Error == nil || ev.Error.Code != domain.CodeProcessEnded || ev.Level != domain.LevelError {
				t.Errorf("flow %s closed with %+v at %s", ev.Origin.FlowName, ev.Error, ev.Level)
			}
			failedFlows = append(failedFlows, ev.Origin.FlowName)
		case ev.Type == domain.EventUpdateProgress && ev.Details.UpdateProgress.State == domain.UpdateFailed:
			if ev.Error == nil || ev.Error.Code != domain.CodeProcessEnded {
				t.Errorf("update closed with %+v", ev.Error)
			}
			updateFailed = true
		}
	}
	if !updateFailed {
		t.Errorf("update %s was not closed FAILED", id)
	}
	if !slices.Equal(failedFlows, flows) {
		t.Errorf("flows closed FAILED: %v, want %v", failedFlows, flows)
	}
	if open, err := store.OpenUpdates(); err != nil || len(open) != 0 {
		t.Errorf("open updates after closing: %v (%v)", open, err)
	}
}

// TestImportCheckpoint: a flow importing another pipeline's checkpoint
// starts where that flow stopped, once; a checkpoint that cannot be
// imported fails the update with a code.
func TestImportCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 3)
	legacyDir := t.TempDir()
	legacy, err := eventstore.Open(legacyDir, eventstore.WithSyncWrites(false))
	if err != nil {
		t.Fatal(err)
	}
	old := newGraph("legacy", []*domain.Dataset{streamingTable("events")}, appendFlow("events", "events", from(jsonFiles(dir))))
	if res, err := Run(context.Background(), legacy, old, Options{}); err != nil || res.State != domain.UpdateCompleted {
		t.Fatalf("legacy update: %+v %v", res, err)
	}
	if err := legacy.Close(); err != nil {
		t.Fatal(err)
	}
	writeIDs(t, dir, "2.json", 3, 5)

	migrated := func(storage, flow string) *domain.Graph {
		f := appendFlow("events_v2", "events", from(jsonFiles(dir)))
		f.ImportCheckpoint = &domain.CheckpointRef{Storage: storage, Flow: flow}
		return newGraph("migrated", []*domain.Dataset{streamingTable("events")}, f)
	}

	store := openStore(t)
	res := mustComplete(t, store, migrated(legacyDir, "events"), Options{})
	if got := ids(t, store, "events"); !slices.Equal(got, span(3, 5)) {
		t.Errorf("events holds %v, want only what the legacy flow had not read", got)
	}
	if n := len(events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventCheckpointImported}})); n != 1 {
		t.Errorf("%d checkpoint_imported events, want 1", n)
	}
	res = mustComplete(t, store, migrated(legacyDir, "events"), Options{})
	if n := len(events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventCheckpointImported}})); n != 0 {
		t.Errorf("the checkpoint was imported again")
	}

	tests := []struct {
		name    string
		storage string
		flow    string
		code    domain.Code
	}{
		{"a flow that never committed", legacyDir, "no_such_flow", domain.CodeImportCheckpointInvalid},
		{"a storage that is not there", filepath.Join(t.TempDir(), "missing"), "events", domain.CodeCheckpointStoreUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustFail(t, openStore(t), migrated(tt.storage, tt.flow), Options{}, tt.code)
		})
	}
}

// TestDefinitionsAreRecorded: each update, a dry run too, records every
// dataset and flow as declared, with sink options' secrets redacted, and the
// warnings loading found about a flow.
func TestDefinitionsAreRecorded(t *testing.T) {
	store := openStore(t)
	sink := sinkDataset("export", &recordingSink{})
	sink.SinkOptions = map[string]string{"url": "https://example.com", "api_token": "hunter2"}
	mv := materializedView("summary")
	mv.Comment = "one row"
	load := appendFlow("load", "t", from(sources.Range(0, 2)))
	load.Warnings = []string{"the option maxFileAge has no effect here"}
	g := newGraph("defs", []*domain.Dataset{streamingTable("t"), mv, sink},
		load,
		viewFlow("summary", "summary", wholeOf("t"), countRows(1)),
		sinkFlow("export", "export", streamOf("t")))
	res := mustComplete(t, store, g, Options{DryRun: true})
	defs := map[string]*domain.Event{}
	var warnings []string
	for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID}) {
		switch ev.Type {
		case domain.EventPlanningInformation:
			if ev.Level == domain.LevelWarn {
				warnings = append(warnings, ev.Origin.FlowName+": "+ev.Details.PlanningInformation.Reason)
			}
		case domain.EventDatasetDefinition, domain.EventSinkDefinition:
			defs["dataset "+ev.Origin.DatasetName] = ev
		case domain.EventFlowDefinition:
			defs["flow "+ev.Origin.FlowName] = ev
		}
	}
	if len(defs) != 6 {
		t.Fatalf("definitions %v, want 3 datasets and 3 flows", keysOf(defs))
	}
	if d := defs["dataset export"].Details.SinkDefinition; d == nil || d.Options["api_token"] != "*****" || d.Options["url"] != "https://example.com" {
		t.Errorf("sink definition %+v: the token must be redacted, the url kept", d)
	}
	if d := defs["dataset summary"].Details.DatasetDefinition; d.DatasetType != domain.MaterializedView || d.Comment != "one row" || d.NumFlows != 1 {
		t.Errorf("summary definition %+v", d)
	}
	if d := defs["flow summary"].Details.FlowDefinition; d.FlowType != domain.FlowMaterializedView || !slices.Equal(d.InputDatasets, []string{"t"}) {
		t.Errorf("flow summary definition %+v", d)
	}
	// What loading found to say of a flow is said again by every update.
	if want := []string{"load: the option maxFileAge has no effect here"}; !slices.Equal(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEventLogOfAnUpdate pins the events one update of a two-flow chain
// appends, in order: what readers of the log (the CLI, the UI, replay,
// users' queries) see. Run with -update to rewrite the golden file after a
// deliberate change. copy names load in depends_on, so that it waits for
// it instead of running beside it: the two flows' events do not interleave.
func TestEventLogOfAnUpdate(t *testing.T) {
	store := openStore(t)
	copyFlow := appendFlow("copy", "copy", streamOf("raw"))
	copyFlow.DependsOn = []string{"load"}
	g := newGraph("chain", []*domain.Dataset{streamingTable("raw"), streamingTable("copy")},
		appendFlow("load", "raw", from(sources.Range(0, 5))),
		copyFlow)
	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: 2}})
	var b strings.Builder
	for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID}) {
		b.WriteString(describeEvent(ev))
		b.WriteByte('\n')
	}
	golden := filepath.Join("testdata", "update_events.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("the update's events differ from %s (run with -update after a deliberate change):\n%s", golden, lineDiff(string(want), got))
	}
}

// describeEvent renders what of an event does not change from run to run.
func describeEvent(ev *domain.Event) string {
	parts := []string{string(ev.Type), string(ev.Level)}
	o := ev.Origin
	if o.FlowName != "" {
		parts = append(parts, "flow="+o.FlowName)
	}
	if o.DatasetName != "" {
		parts = append(parts, "dataset="+o.DatasetName)
	}
	if o.BatchID != nil {
		parts = append(parts, fmt.Sprintf("batch=%d", *o.BatchID))
	}
	d := ev.Details
	switch {
	case d.UpdateProgress != nil:
		parts = append(parts, string(d.UpdateProgress.State))
	case d.FlowProgress != nil:
		parts = append(parts, string(d.FlowProgress.Status))
		if m := d.FlowProgress.Metrics; m != nil {
			parts = append(parts, fmt.Sprintf("rows=%d batches=%d", m.NumOutputRows, m.NumBatches))
		}
	case d.BatchPlanned != nil:
		parts = append(parts, fmt.Sprintf("[%s, %s)", d.BatchPlanned.Start, d.BatchPlanned.End))
	case d.BatchCommitted != nil:
		parts = append(parts, fmt.Sprintf("[%s, %s) rows=%d", d.BatchCommitted.Start, d.BatchCommitted.End, d.BatchCommitted.NumRows))
	}
	return strings.Join(parts, " ")
}

// lineDiff lists the lines of want and got that differ, by position.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}
