package eventstore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/sluicehq/sluice/domain"
)

// stateProjectorName is the name of the built-in projector.
const stateProjectorName = "state"

// Keys of the state projector.
const (
	stateCheckpointPrefix = "ckpt/"   // + flow -> Checkpoint as JSON
	stateTableGenPrefix   = "tgen/"   // + table -> generation, 8-byte big-endian
	stateFailedPrefix     = "failed/" // + flow -> dataset
	stateSchemaPrefix     = "schema/" // + table -> its schema (JSON) in the current generation
	stateVersionPrefix    = "tver/"   // + table -> seq of its last batch in the current generation, 8-byte big-endian
	stateOpenUpdatePrefix = "open/"   // + update id -> its flows not yet in a final status, JSON {flow: dataset}; only while the update has not ended
	stateReadPrefix       = "read/"   // + flow 0x00 generation(8) item -> how far the flow read the item: uvarint upto, uvarint lines
)

func readKey(flow string, gen int64, item string) []byte {
	k := append([]byte(stateReadPrefix+flow), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(gen))
	return append(k, item...)
}

// ItemRead returns how far the committed micro-batches of flow, in checkpoint
// generation gen, read an item of its source (see domain.ItemSource).
func (s *Store) ItemRead(flow string, gen int64, item string) (domain.ItemRead, bool, error) {
	v, found, err := s.Projection(stateProjectorName, readKey(flow, gen, item))
	if err != nil || !found {
		return domain.ItemRead{}, false, err
	}
	upto, n := binary.Uvarint(v)
	lines, m := binary.Uvarint(v[max(n, 0):])
	if n <= 0 || m <= 0 {
		return domain.ItemRead{}, false, domain.Errorf(domain.CodeInvalidUpdateState, "the read state of %q in flow %q is malformed", item, flow).WithNames(flow)
	}
	return domain.ItemRead{Item: item, Upto: int64(upto), Lines: int64(lines), ID: string(v[n+m:])}, true, nil
}

// ItemsRead returns how far the committed micro-batches of flow, in
// checkpoint generation gen, read every item of its source, by item.
func (s *Store) ItemsRead(flow string, gen int64) ([]domain.ItemRead, error) {
	prefix := readKey(flow, gen, "")
	var out []domain.ItemRead
	err := s.ScanProjection(stateProjectorName, prefix, func(k, v []byte) error {
		upto, n := binary.Uvarint(v)
		lines, m := binary.Uvarint(v[max(n, 0):])
		if n <= 0 || m <= 0 {
			return domain.Errorf(domain.CodeInvalidUpdateState, "a read state of flow %q is malformed", flow).WithNames(flow)
		}
		out = append(out, domain.ItemRead{Item: string(k[len(prefix):]), Upto: int64(upto), Lines: int64(lines), ID: string(v[n+m:])})
		return nil
	})
	return out, err
}

// setItems records how far a committed batch read its items: the value is
// upto and lines as uvarints, then the item's identity.
func setItems(w ProjectionWriter, flow string, gen int64, items []domain.ItemRead) error {
	for _, it := range items {
		v := binary.AppendUvarint(nil, uint64(it.Upto))
		v = binary.AppendUvarint(v, uint64(it.Lines))
		v = append(v, it.ID...)
		if err := w.Set(readKey(flow, gen, it.Item), v); err != nil {
			return err
		}
	}
	return nil
}

// OpenUpdate is an update the log shows started and not ended, with the
// flows it was running (flow name -> dataset).
type OpenUpdate struct {
	ID    string
	Flows map[string]string
}

// OpenUpdates returns the updates whose last update_progress is not a final
// state (COMPLETED, FAILED, CANCELED), with their flows whose last
// flow_progress is not final (COMPLETED, FAILED, SKIPPED, STOPPED, EXCLUDED),
// sorted by id. While no update runs, these are the updates of processes
// that ended without finishing them.
func (s *Store) OpenUpdates() ([]OpenUpdate, error) {
	var out []OpenUpdate
	err := s.ScanProjection(stateProjectorName, []byte(stateOpenUpdatePrefix), func(k, v []byte) error {
		u := OpenUpdate{ID: string(k[len(stateOpenUpdatePrefix):]), Flows: map[string]string{}}
		if err := json.Unmarshal(v, &u.Flows); err != nil {
			return domain.Wrap(domain.CodeInvalidUpdateState, err, "reading the open flows of update "+u.ID)
		}
		out = append(out, u)
		return nil
	})
	return out, err
}

// Checkpoint is a flow's position in its source, as the log's batch events
// leave it: the projection the flow runner resumes from.
type Checkpoint struct {
	Flow        string            `json:"flow"`
	Generation  int64             `json:"generation"`
	NextBatchID int64             `json:"next_batch_id"`
	Offset      json.RawMessage   `json:"offset,omitempty"`  // end of the last committed range (nil = beginning)
	Planned     *domain.BatchInfo `json:"planned,omitempty"` // a planned batch not yet committed: rerun it with the same batch_id and range after a crash
	Drained     bool              `json:"drained,omitempty"` // once flow finished (until checkpoint reset)
	// QueryVersion is the version of the query that computed the last
	// committed batch.
	QueryVersion string `json:"query_version,omitempty"`
	Imported     bool   `json:"imported,omitempty"` // import_checkpoint was taken (never cleared, not even by reset: taken once)
	// StreamStateFrom is the seq of the generation's latest stream_state
	// snapshot (domain.StreamState), of its first part when it was
	// recorded in parts: the flow's stream state is the fold
	// of its events from there. 0 when there is none (a reset clears it,
	// and leaves the checkpoint as stores before snapshots recorded it).
	StreamStateFrom uint64 `json:"stream_state_from,omitempty"`
}

// Checkpoint returns the committed checkpoint of flow; a zero Checkpoint
// (with Flow set) when the log holds none for it.
func (s *Store) Checkpoint(flow string) (Checkpoint, error) {
	v, found, err := s.Projection(stateProjectorName, []byte(stateCheckpointPrefix+flow))
	if err != nil || !found {
		return Checkpoint{Flow: flow}, err
	}
	var c Checkpoint
	if err := json.Unmarshal(v, &c); err != nil {
		return Checkpoint{Flow: flow}, domain.Wrap(domain.CodeInvalidUpdateState, err, fmt.Sprintf("reading the checkpoint of flow %q", flow)).WithNames(flow)
	}
	return c, nil
}

// TableGeneration returns the generation of table: 0 when it was never reset.
func (s *Store) TableGeneration(table string) (int64, error) {
	v, found, err := s.Projection(stateProjectorName, []byte(stateTableGenPrefix+table))
	if err != nil || !found {
		return 0, err
	}
	if len(v) != 8 {
		return 0, domain.Errorf(domain.CodeInvalidUpdateState, "the generation of table %q is %d bytes long, not 8", table, len(v)).WithNames(table)
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// TableSchema returns the schema of table in its current generation: the
// schema its batches evolved to (nil when it has no batch yet).
func (s *Store) TableSchema(table string) (*domain.Schema, error) {
	v, found, err := s.Projection(stateProjectorName, []byte(stateSchemaPrefix+table))
	if err != nil || !found {
		return nil, err
	}
	var sc domain.Schema
	if err := json.Unmarshal(v, &sc); err != nil {
		return nil, domain.Wrap(domain.CodeInvalidUpdateState, err, fmt.Sprintf("reading the schema of table %q", table)).WithNames(table)
	}
	return &sc, nil
}

// TableVersion returns the seq of the last batch committed to table in its
// current generation: 0 when the generation has no batch. Two reads of a
// table with the same generation and version see the same rows.
func (s *Store) TableVersion(table string) (uint64, error) {
	v, found, err := s.Projection(stateProjectorName, []byte(stateVersionPrefix+table))
	if err != nil || !found {
		return 0, err
	}
	if len(v) != 8 {
		return 0, domain.Errorf(domain.CodeInvalidUpdateState, "the version of table %q is %d bytes long, not 8", table, len(v)).WithNames(table)
	}
	return binary.BigEndian.Uint64(v), nil
}

// FailedFlows returns the flows whose last FAILED flow_progress has not been
// followed by a COMPLETED one, each with the dataset it writes (the origin's
// dataset_name). A flow that failed and was then skipped, stopped or excluded
// has still not succeeded, so it stays failed: this is what --refresh-failed
// selects.
func (s *Store) FailedFlows() (map[string]string, error) {
	out := map[string]string{}
	err := s.ScanProjection(stateProjectorName, []byte(stateFailedPrefix), func(k, v []byte) error {
		out[string(k[len(stateFailedPrefix):])] = string(v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// stateProjector is the built-in projector: checkpoints, table generations and
// failed flows. Its fold rules (events not listed leave the state unchanged):
//
//   - batch_planned, of the checkpoint's generation: Planned = the batch.
//   - batch_committed, of the checkpoint's generation: Offset = End,
//     NextBatchID = BatchID+1, Planned = nil, QueryVersion = the batch's, and
//     how far the batch read each of its Items (keyed by flow, generation and
//     item). A batch id other
//     than NextBatchID is refused (its Append fails): two writers planned
//     one batch.
//   - sink_batch_delivered, of the checkpoint's generation, for the planned
//     batch id: Offset = Planned.End, NextBatchID = BatchID+1, Planned = nil,
//     and how far the planned batch read each of its Items.
//   - once_flow_drained, of the checkpoint's generation: Drained = true.
//   - checkpoint_reset, unless of an older generation: Generation = the
//     event's, Offset = nil, NextBatchID = the event's (0 but for sink
//     flows), Planned = nil, Drained = false (Imported is kept).
//   - checkpoint_imported, unless of an older generation: Generation = the
//     event's, Offset = the imported offset, NextBatchID = 0, Planned = nil,
//     Imported = true, and how far the imported flow read each item.
//   - batch_committed, of the table's generation: the table's version (the
//     event's seq) and, when the batch carries one, its schema.
//   - table_reset, unless of an older generation: the table's generation, no
//     version, no schema.
//   - flow_progress FAILED: the flow (origin flow_name) is failed, writing
//     origin dataset_name; flow_progress COMPLETED: it is not. Other statuses
//     leave it as it is.
//   - create_update: the update (origin update_id) is open, with no flows;
//     update_progress COMPLETED, FAILED or CANCELED: it is not. While it is
//     open, a flow_progress of it records the flow as going (with its
//     dataset), or, for COMPLETED, FAILED, SKIPPED, STOPPED and EXCLUDED, as
//     no longer going.
//
// A batch event of another generation than the checkpoint's is ignored: it
// belongs to a generation a reset (or import) left behind. A reset or import
// whose generation equals the current one still applies. The events that move
// a checkpoint or a table generation must carry their details and a flow
// (table) name: one without is refused, which fails its Append, rather than
// silently lost.
type stateProjector struct{}

func (stateProjector) Name() string { return stateProjectorName }

func (stateProjector) Apply(w ProjectionWriter, ev *domain.Event) error {
	d := ev.Details
	switch ev.Type {
	case domain.EventBatchPlanned:
		if d.BatchPlanned == nil {
			return missingDetails(ev)
		}
		b := *d.BatchPlanned
		return updateCheckpoint(w, ev, b.Flow, func(c *Checkpoint) bool {
			if b.Generation != c.Generation {
				return false
			}
			c.Planned = &b
			return true
		})
	case domain.EventBatchCommitted:
		if d.BatchCommitted == nil {
			return missingDetails(ev)
		}
		b := d.BatchCommitted
		if err := setTableState(w, ev.Seq, b); err != nil {
			return err
		}
		var outOfOrder *Checkpoint
		applied := false
		err := updateCheckpoint(w, ev, b.Flow, func(c *Checkpoint) bool {
			if b.Generation != c.Generation {
				return false
			}
			if b.BatchID != c.NextBatchID {
				outOfOrder = c
				return false
			}
			c.Offset, c.NextBatchID, c.Planned, c.QueryVersion = b.End, b.BatchID+1, nil, b.QueryVersion
			applied = true
			return true
		})
		if err == nil && outOfOrder != nil {
			// Two writers planned the same batch: refuse the second commit
			// rather than let a batch land twice.
			err = domain.Errorf(domain.CodeInvalidUpdateState, "flow %q commits batch %d but its next batch is %d: another update may be writing the same flow",
				b.Flow, b.BatchID, outOfOrder.NextBatchID).WithNames(b.Flow)
		}
		if err == nil && applied {
			err = setItems(w, b.Flow, b.Generation, b.Items)
		}
		return err
	case domain.EventSinkBatchDelivered:
		if d.SinkBatchDelivered == nil {
			return missingDetails(ev)
		}
		b := d.SinkBatchDelivered
		var items []domain.ItemRead
		err := updateCheckpoint(w, ev, b.Flow, func(c *Checkpoint) bool {
			if b.Generation != c.Generation || c.Planned == nil || c.Planned.BatchID != b.BatchID {
				return false
			}
			items = c.Planned.Items
			c.Offset, c.NextBatchID, c.Planned, c.QueryVersion = c.Planned.End, b.BatchID+1, nil, c.Planned.QueryVersion
			return true
		})
		if err == nil {
			err = setItems(w, b.Flow, b.Generation, items)
		}
		return err
	case domain.EventOnceFlowDrained:
		if d.OnceFlowDrained == nil {
			return missingDetails(ev)
		}
		o := d.OnceFlowDrained
		return updateCheckpoint(w, ev, o.Flow, func(c *Checkpoint) bool {
			if o.Generation != c.Generation || c.Drained {
				return false
			}
			c.Drained = true
			return true
		})
	case domain.EventCheckpointReset:
		if d.CheckpointReset == nil {
			return missingDetails(ev)
		}
		r := d.CheckpointReset
		return updateCheckpoint(w, ev, r.Flow, func(c *Checkpoint) bool {
			if r.Generation < c.Generation {
				return false
			}
			c.Generation, c.Offset, c.NextBatchID, c.Planned, c.Drained, c.StreamStateFrom = r.Generation, nil, r.NextBatchID, nil, false, 0
			return true
		})
	case domain.EventStreamState:
		st := d.StreamState
		if st == nil || !st.Snapshot || st.SnapshotPart > 0 && st.SnapshotFrom == 0 {
			return nil // the state's fold, which the flow reads from the log; or a part of a snapshot, not its last
		}
		return updateCheckpoint(w, ev, st.Flow, func(c *Checkpoint) bool {
			if st.Generation != c.Generation {
				return false
			}
			c.StreamStateFrom = ev.Seq
			if st.SnapshotFrom != 0 {
				c.StreamStateFrom = st.SnapshotFrom // its first part
			}
			return true
		})
	case domain.EventCheckpointImported:
		if d.CheckpointImported == nil {
			return missingDetails(ev)
		}
		im := d.CheckpointImported
		applied := false
		err := updateCheckpoint(w, ev, im.Flow, func(c *Checkpoint) bool {
			if im.Generation < c.Generation {
				return false
			}
			c.Generation, c.Offset, c.NextBatchID, c.Planned, c.Imported, c.StreamStateFrom = im.Generation, im.Offset, 0, nil, true, 0
			applied = true
			return true
		})
		if err == nil && applied {
			err = setItems(w, im.Flow, im.Generation, im.Items)
		}
		return err
	case domain.EventTableReset:
		if d.TableReset == nil {
			return missingDetails(ev)
		}
		t := d.TableReset
		if t.Table == "" {
			return missingName(ev, "table")
		}
		key := []byte(stateTableGenPrefix + t.Table)
		cur, found, err := w.Get(key)
		if err != nil {
			return err
		}
		if found && len(cur) == 8 && t.Generation < int64(binary.BigEndian.Uint64(cur)) {
			return nil
		}
		if err := w.Delete([]byte(stateSchemaPrefix + t.Table)); err != nil {
			return err
		}
		if err := w.Delete([]byte(stateVersionPrefix + t.Table)); err != nil {
			return err
		}
		return w.Set(key, binary.BigEndian.AppendUint64(nil, uint64(t.Generation)))
	case domain.EventFlowProgress:
		flow := ev.Origin.FlowName
		if d.FlowProgress == nil || flow == "" {
			return nil // no status, or not about one flow
		}
		if err := setOpenFlow(w, ev.Origin.UpdateID, flow, ev.Origin.DatasetName, d.FlowProgress.Status); err != nil {
			return err
		}
		switch d.FlowProgress.Status {
		case domain.FlowFailed:
			return w.Set([]byte(stateFailedPrefix+flow), []byte(ev.Origin.DatasetName))
		case domain.FlowCompleted:
			return w.Delete([]byte(stateFailedPrefix + flow))
		}
	case domain.EventCreateUpdate:
		if ev.Origin.UpdateID != "" {
			return w.Set([]byte(stateOpenUpdatePrefix+ev.Origin.UpdateID), []byte("{}"))
		}
	case domain.EventUpdateProgress:
		if d.UpdateProgress == nil || ev.Origin.UpdateID == "" {
			return nil
		}
		switch d.UpdateProgress.State {
		case domain.UpdateCompleted, domain.UpdateFailed, domain.UpdateCanceled:
			return w.Delete([]byte(stateOpenUpdatePrefix + ev.Origin.UpdateID))
		}
	}
	return nil
}

// setOpenFlow records, in its open update, whether a flow is still going:
// there for the statuses it goes on from, gone after the final ones.
func setOpenFlow(w ProjectionWriter, update, flow, dataset string, status domain.FlowStatus) error {
	if update == "" {
		return nil
	}
	key := []byte(stateOpenUpdatePrefix + update)
	v, found, err := w.Get(key)
	if err != nil || !found {
		return err // an update that ended (or never started) tracks nothing
	}
	flows := map[string]string{}
	if err := json.Unmarshal(v, &flows); err != nil {
		return domain.Wrap(domain.CodeInvalidUpdateState, err, "reading the open flows of update "+update)
	}
	switch status {
	case domain.FlowCompleted, domain.FlowFailed, domain.FlowSkipped, domain.FlowStopped, domain.FlowExcluded:
		if _, ok := flows[flow]; !ok {
			return nil
		}
		delete(flows, flow)
	default:
		if d, ok := flows[flow]; ok && d == dataset {
			return nil
		}
		flows[flow] = dataset
	}
	v, err = json.Marshal(flows) // map keys sorted: deterministic
	if err != nil {
		return err
	}
	return w.Set(key, v)
}

// updateCheckpoint reads flow's checkpoint, applies change, and writes it back
// when change reports a change.
func updateCheckpoint(w ProjectionWriter, ev *domain.Event, flow string, change func(*Checkpoint) bool) error {
	if flow == "" {
		return missingName(ev, "flow")
	}
	key := []byte(stateCheckpointPrefix + flow)
	c := Checkpoint{Flow: flow}
	v, found, err := w.Get(key)
	if err != nil {
		return err
	}
	if found {
		if err := json.Unmarshal(v, &c); err != nil {
			return domain.Wrap(domain.CodeInvalidUpdateState, err, fmt.Sprintf("reading the checkpoint of flow %q", flow)).WithNames(flow)
		}
	}
	if !change(&c) {
		return nil
	}
	v, err = json.Marshal(c)
	if err != nil {
		return domain.Wrap(domain.CodeInvalidDefinition, err, fmt.Sprintf("encoding the checkpoint of flow %q", flow)).WithNames(flow)
	}
	return w.Set(key, v)
}

func missingDetails(ev *domain.Event) error {
	return domain.Errorf(domain.CodeInvalidDefinition, "a %s event without %s details", ev.Type, ev.Type).
		WithHint(fmt.Sprintf("set Details.%s on %s events", detailsField(ev.Type), ev.Type))
}

func missingName(ev *domain.Event, what string) error {
	return domain.Errorf(domain.CodeInvalidDefinition, "a %s event without a %s name in its details", ev.Type, what).
		WithHint(fmt.Sprintf("set the %s in the event's %s details", what, ev.Type))
}

// detailsField names the Details field of an event type, for hints.
func detailsField(t domain.EventType) string {
	switch t {
	case domain.EventBatchPlanned:
		return "BatchPlanned"
	case domain.EventBatchCommitted:
		return "BatchCommitted"
	case domain.EventSinkBatchDelivered:
		return "SinkBatchDelivered"
	case domain.EventOnceFlowDrained:
		return "OnceFlowDrained"
	case domain.EventCheckpointReset:
		return "CheckpointReset"
	case domain.EventCheckpointImported:
		return "CheckpointImported"
	case domain.EventTableReset:
		return "TableReset"
	}
	return string(t)
}

// setTableState records, for a batch of the table's current generation, the
// table's version (the batch's seq) and, when the batch carries one, its
// schema.
func setTableState(w ProjectionWriter, seq uint64, b *domain.BatchInfo) error {
	if b.Target == "" {
		return nil
	}
	cur, found, err := w.Get([]byte(stateTableGenPrefix + b.Target))
	if err != nil {
		return err
	}
	var gen int64
	if found && len(cur) == 8 {
		gen = int64(binary.BigEndian.Uint64(cur))
	}
	if gen != b.TableGeneration {
		return nil
	}
	if err := w.Set([]byte(stateVersionPrefix+b.Target), binary.BigEndian.AppendUint64(nil, seq)); err != nil {
		return err
	}
	if b.Schema == nil {
		return nil
	}
	v, err := json.Marshal(b.Schema)
	if err != nil {
		return err
	}
	return w.Set([]byte(stateSchemaPrefix+b.Target), v)
}
