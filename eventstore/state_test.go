package eventstore

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

func planned(flow string, gen, id int64, start, end string) *domain.Event {
	return &domain.Event{Type: domain.EventBatchPlanned, Origin: domain.Origin{FlowName: flow},
		Details: domain.Details{BatchPlanned: &domain.BatchInfo{Flow: flow, Target: "t", BatchID: id, Generation: gen, Start: raw(start), End: raw(end)}}}
}

func committed(flow string, gen, id int64, end string) *domain.Event {
	return &domain.Event{Type: domain.EventBatchCommitted, Origin: domain.Origin{FlowName: flow},
		Details: domain.Details{BatchCommitted: &domain.BatchInfo{Flow: flow, Target: "t", BatchID: id, Generation: gen, End: raw(end), NumRows: 10}}}
}

func delivered(flow string, gen, id int64) *domain.Event {
	return &domain.Event{Type: domain.EventSinkBatchDelivered, Origin: domain.Origin{FlowName: flow},
		Details: domain.Details{SinkBatchDelivered: &domain.SinkBatchDelivered{Flow: flow, Sink: "s", BatchID: id, Generation: gen}}}
}

func drained(flow string, gen int64) *domain.Event {
	return &domain.Event{Type: domain.EventOnceFlowDrained, Origin: domain.Origin{FlowName: flow},
		Details: domain.Details{OnceFlowDrained: &domain.OnceFlowDrained{Flow: flow, Generation: gen}}}
}

func reset(flow string, gen int64) *domain.Event {
	return &domain.Event{Type: domain.EventCheckpointReset,
		Details: domain.Details{CheckpointReset: &domain.CheckpointReset{Flow: flow, Generation: gen, Cause: "test"}}}
}

func streamState(flow string, gen int64, snapshot bool) *domain.Event {
	return &domain.Event{Type: domain.EventStreamState, Origin: domain.Origin{FlowName: flow},
		Details: domain.Details{StreamState: &domain.StreamState{Flow: flow, Generation: gen, Snapshot: snapshot}}}
}

func imported(flow string, gen int64, offset string) *domain.Event {
	return &domain.Event{Type: domain.EventCheckpointImported,
		Details: domain.Details{CheckpointImported: &domain.CheckpointImported{Flow: flow, Generation: gen, Storage: "/x", SourceFlow: "g", Offset: raw(offset)}}}
}

func tableReset(table string, gen int64) *domain.Event {
	return &domain.Event{Type: domain.EventTableReset,
		Details: domain.Details{TableReset: &domain.TableReset{Table: table, Generation: gen, Cause: "full refresh"}}}
}

func progress(flow, dataset string, st domain.FlowStatus) *domain.Event {
	return &domain.Event{Type: domain.EventFlowProgress, Origin: domain.Origin{FlowName: flow, DatasetName: dataset},
		Details: domain.Details{FlowProgress: &domain.FlowProgress{Status: st}}}
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func binfo(flow string, gen, id int64, start, end string) *domain.BatchInfo {
	return planned(flow, gen, id, start, end).Details.BatchPlanned
}

func TestStateCheckpointFold(t *testing.T) {
	const f = "f"
	tests := []struct {
		name   string
		events []*domain.Event
		want   Checkpoint
	}{
		{"no events", nil, Checkpoint{Flow: f}},
		{"planned", []*domain.Event{planned(f, 0, 0, `{"o":0}`, `{"o":5}`)},
			Checkpoint{Flow: f, Planned: binfo(f, 0, 0, `{"o":0}`, `{"o":5}`)}},
		{"planned then committed", []*domain.Event{planned(f, 0, 0, `{"o":0}`, `{"o":5}`), committed(f, 0, 0, `{"o":5}`)},
			Checkpoint{Flow: f, Offset: raw(`{"o":5}`), NextBatchID: 1}},
		{"two commits", []*domain.Event{committed(f, 0, 0, `1`), committed(f, 0, 1, `2`)},
			Checkpoint{Flow: f, Offset: raw(`2`), NextBatchID: 2}},
		{"planned of another generation is ignored", []*domain.Event{planned(f, 1, 0, `0`, `5`)},
			Checkpoint{Flow: f}},
		{"commit of an older generation is ignored", []*domain.Event{committed(f, 0, 0, `1`), reset(f, 1), committed(f, 0, 1, `2`)},
			Checkpoint{Flow: f, Generation: 1}},
		{"sink delivery of the planned batch", []*domain.Event{committed(f, 0, 0, `3`), planned(f, 0, 1, `3`, `9`), delivered(f, 0, 1)},
			Checkpoint{Flow: f, Offset: raw(`9`), NextBatchID: 2}},
		{"sink delivery of another batch id", []*domain.Event{planned(f, 0, 4, `3`, `9`), delivered(f, 0, 3)},
			Checkpoint{Flow: f, Planned: binfo(f, 0, 4, `3`, `9`)}},
		{"sink delivery without a plan", []*domain.Event{committed(f, 0, 0, `1`), delivered(f, 0, 1)},
			Checkpoint{Flow: f, Offset: raw(`1`), NextBatchID: 1}},
		{"sink delivery of another generation", []*domain.Event{planned(f, 0, 0, `0`, `9`), delivered(f, 1, 0)},
			Checkpoint{Flow: f, Planned: binfo(f, 0, 0, `0`, `9`)}},
		{"drained", []*domain.Event{committed(f, 0, 0, `1`), drained(f, 0)},
			Checkpoint{Flow: f, Offset: raw(`1`), NextBatchID: 1, Drained: true}},
		{"drained of an older generation is ignored", []*domain.Event{reset(f, 2), drained(f, 1)},
			Checkpoint{Flow: f, Generation: 2}},
		// seqs count from 1, the events' order in the list
		{"the latest stream state snapshot", []*domain.Event{streamState(f, 0, true), streamState(f, 0, false), streamState(f, 0, true), streamState(f, 0, false)},
			Checkpoint{Flow: f, StreamStateFrom: 3}},
		{"a snapshot of an older generation is ignored", []*domain.Event{reset(f, 1), streamState(f, 0, true)},
			Checkpoint{Flow: f, Generation: 1}},
		{"reset forgets the snapshot", []*domain.Event{streamState(f, 0, true), reset(f, 1)},
			Checkpoint{Flow: f, Generation: 1}},
		{"reset clears all but imported", []*domain.Event{imported(f, 0, `7`), committed(f, 0, 0, `8`), planned(f, 0, 1, `8`, `9`), drained(f, 0), reset(f, 1)},
			Checkpoint{Flow: f, Generation: 1, Imported: true}},
		{"reset of an older generation is ignored", []*domain.Event{reset(f, 2), committed(f, 2, 0, `1`), reset(f, 1)},
			Checkpoint{Flow: f, Generation: 2, Offset: raw(`1`), NextBatchID: 1}},
		{"reset of the same generation applies", []*domain.Event{reset(f, 2), committed(f, 2, 0, `1`), reset(f, 2)},
			Checkpoint{Flow: f, Generation: 2}},
		{"import", []*domain.Event{planned(f, 0, 0, `0`, `1`), imported(f, 0, `{"pos":42}`)},
			Checkpoint{Flow: f, Offset: raw(`{"pos":42}`), Imported: true}},
		{"import into a new generation", []*domain.Event{committed(f, 0, 0, `5`), imported(f, 3, `42`), committed(f, 3, 0, `43`)},
			Checkpoint{Flow: f, Generation: 3, Offset: raw(`43`), NextBatchID: 1, Imported: true}},
		{"import of an older generation is ignored", []*domain.Event{reset(f, 4), imported(f, 3, `42`)},
			Checkpoint{Flow: f, Generation: 4}},
		{"other flows and other events do not touch it", []*domain.Event{
			committed("g", 0, 0, `1`), reset("g", 5), drained("g", 5), planned("g", 5, 0, `0`, `1`), tableReset(f, 3),
			progress(f, "d", domain.FlowFailed), ev(domain.EventFlowDefinition, f, "d", "u", "")},
			Checkpoint{Flow: f}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			for _, e := range tc.events {
				mustAppend(t, s, e) // one Append each: the fold reads committed state
			}
			got, err := s.Checkpoint(f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(tc.want)
				t.Errorf("checkpoint =\n%s\nwant\n%s", gj, wj)
			}
			if len(tc.events) > 1 {
				// The same events in one Append fold the same way (the fold
				// reads its own writes within a transaction).
				s2 := openTest(t)
				mustAppend(t, s2, cloneEvents(tc.events)...)
				got2, err := s2.Checkpoint(f)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got2, tc.want) {
					t.Errorf("checkpoint from one Append = %+v, want %+v", got2, tc.want)
				}
			}
			if err := s.VerifyProjections(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func cloneEvents(events []*domain.Event) []*domain.Event {
	out := make([]*domain.Event, len(events))
	for i, e := range events {
		c := *e
		c.Seq, c.ID = 0, ""
		out[i] = &c
	}
	return out
}

func TestStateTableGenerationFold(t *testing.T) {
	tests := []struct {
		name   string
		events []*domain.Event
		want   map[string]int64
	}{
		{"never reset", nil, map[string]int64{"t": 0}},
		{"reset", []*domain.Event{tableReset("t", 1)}, map[string]int64{"t": 1, "u": 0}},
		{"reset twice", []*domain.Event{tableReset("t", 1), tableReset("t", 4)}, map[string]int64{"t": 4}},
		{"older generation ignored", []*domain.Event{tableReset("t", 4), tableReset("t", 2)}, map[string]int64{"t": 4}},
		{"tables apart", []*domain.Event{tableReset("t", 4), tableReset("u", 2)}, map[string]int64{"t": 4, "u": 2}},
		{"checkpoint reset is not a table reset", []*domain.Event{reset("t", 3)}, map[string]int64{"t": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			for _, e := range tc.events {
				mustAppend(t, s, e)
			}
			for table, want := range tc.want {
				got, err := s.TableGeneration(table)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("TableGeneration(%q) = %d, want %d", table, got, want)
				}
			}
		})
	}
}

func TestStateFailedFlowsFold(t *testing.T) {
	tests := []struct {
		name   string
		events []*domain.Event
		want   map[string]string
	}{
		{"none", nil, map[string]string{}},
		{"failed", []*domain.Event{progress("f", "d", domain.FlowRunning), progress("f", "d", domain.FlowFailed)}, map[string]string{"f": "d"}},
		{"failed then completed", []*domain.Event{progress("f", "d", domain.FlowFailed), progress("f", "d", domain.FlowCompleted)}, map[string]string{}},
		{"failed then skipped stays failed", []*domain.Event{progress("f", "d", domain.FlowFailed), progress("f", "d", domain.FlowSkipped), progress("f", "d", domain.FlowExcluded)}, map[string]string{"f": "d"}},
		{"completed then failed", []*domain.Event{progress("f", "d", domain.FlowCompleted), progress("f", "d", domain.FlowFailed)}, map[string]string{"f": "d"}},
		{"two flows", []*domain.Event{progress("f", "d", domain.FlowFailed), progress("g", "e", domain.FlowFailed), progress("f", "d", domain.FlowCompleted)}, map[string]string{"g": "e"}},
		{"without flow or status", []*domain.Event{progress("", "d", domain.FlowFailed), ev(domain.EventFlowProgress, "f", "d", "", "")}, map[string]string{}},
		{"failed without dataset", []*domain.Event{progress("f", "", domain.FlowFailed)}, map[string]string{"f": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			for _, e := range tc.events {
				mustAppend(t, s, e)
			}
			got, err := s.FailedFlows()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FailedFlows = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStateRefusesIncompleteEvents(t *testing.T) {
	tests := []struct {
		name string
		e    *domain.Event
	}{
		{"batch_planned without details", &domain.Event{Type: domain.EventBatchPlanned}},
		{"batch_committed without flow", &domain.Event{Type: domain.EventBatchCommitted, Details: domain.Details{BatchCommitted: &domain.BatchInfo{}}}},
		{"sink_batch_delivered without details", &domain.Event{Type: domain.EventSinkBatchDelivered}},
		{"once_flow_drained without details", &domain.Event{Type: domain.EventOnceFlowDrained}},
		{"checkpoint_reset without details", &domain.Event{Type: domain.EventCheckpointReset}},
		{"checkpoint_imported without flow", &domain.Event{Type: domain.EventCheckpointImported, Details: domain.Details{CheckpointImported: &domain.CheckpointImported{}}}},
		{"table_reset without table", &domain.Event{Type: domain.EventTableReset, Details: domain.Details{TableReset: &domain.TableReset{Generation: 1}}}},
	}
	s := openTest(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "", "", ""), tc.e)
			wantCode(t, err, domain.CodeInvalidDefinition)
		})
	}
	if s.LastSeq() != 0 {
		t.Fatalf("LastSeq = %d", s.LastSeq())
	}
}

// TestStateRefusesOutOfOrderCommit: a batch committed with another id than
// the flow's next is refused, so two writers of one flow cannot both land
// the same batch.
func TestStateRefusesOutOfOrderCommit(t *testing.T) {
	s := openTest(t)
	mustAppend(t, s, committed("f", 0, 0, `1`))
	for _, id := range []int64{0, 2} {
		if _, err := s.Append(context.Background(), committed("f", 0, id, `2`)); domain.CodeOf(err) != domain.CodeInvalidUpdateState {
			t.Errorf("batch %d after batch 0: %v, want %s", id, err, domain.CodeInvalidUpdateState)
		}
	}
	mustAppend(t, s, committed("f", 0, 1, `2`))
	if cp, _ := s.Checkpoint("f"); cp.NextBatchID != 2 || string(cp.Offset) != `2` {
		t.Errorf("checkpoint %+v, want next batch 2 at offset 2", cp)
	}
}

// TestItemsRead: a committed micro-batch records how far it read each item,
// with the item's identity; a later one moves an item on; another flow or
// generation sees nothing of it.
func TestItemsRead(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	p := planned("f", 0, 0, `0`, `1`)
	p.Details.BatchPlanned.Items = []domain.ItemRead{{Item: "a.json", Upto: 10, Lines: 2, ID: "803:1f"}, {Item: "b.json", Upto: 5}}
	c := committed("f", 0, 0, `1`)
	c.Details.BatchCommitted.Items = p.Details.BatchPlanned.Items
	p2 := planned("f", 0, 1, `1`, `2`)
	p2.Details.BatchPlanned.Items = []domain.ItemRead{{Item: "a.json", Upto: 30, Lines: 6, ID: "803:20"}}
	c2 := committed("f", 0, 1, `2`)
	c2.Details.BatchCommitted.Items = p2.Details.BatchPlanned.Items
	for _, ev := range []*domain.Event{p, c, p2, c2} {
		if _, err := s.Append(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ItemsRead("f", 0)
	want := []domain.ItemRead{{Item: "a.json", Upto: 30, Lines: 6, ID: "803:20"}, {Item: "b.json", Upto: 5}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ItemsRead = %+v, %v; want %+v", got, err, want)
	}
	if it, found, err := s.ItemRead("f", 0, "a.json"); err != nil || !found || it != want[0] {
		t.Fatalf("ItemRead = %+v, %v, %v", it, found, err)
	}
	for _, other := range []struct {
		flow string
		gen  int64
	}{{"g", 0}, {"f", 1}} {
		if _, found, err := s.ItemRead(other.flow, other.gen, "a.json"); err != nil || found {
			t.Fatalf("%s generation %d: found %v, %v", other.flow, other.gen, found, err)
		}
	}
}
