package processors

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// EventLogSchema is the rows of event_log(): the columns of the Databricks
// event log, one row per event. details is the event's details as JSON
// (read with details:flow_progress.data_quality..., from_json or
// get_json_object); error is sluice's error part (code, message, hint).
var EventLogSchema = domain.NewSchema(
	domain.Field{Name: "id", Type: domain.TypeString},
	domain.Field{Name: "sequence", Type: domain.StructOf(domain.Field{Name: "control_plane_seq_no", Type: domain.TypeInt64})},
	domain.Field{Name: "origin", Type: domain.StructOf(
		domain.Field{Name: "pipeline_name", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "update_id", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "flow_name", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "dataset_name", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "batch_id", Type: domain.TypeInt64, Nullable: true})},
	domain.Field{Name: "timestamp", Type: domain.TypeTimestamp},
	domain.Field{Name: "message", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "level", Type: domain.TypeString},
	domain.Field{Name: "maturity_level", Type: domain.TypeString},
	domain.Field{Name: "error", Type: domain.StructOf(
		domain.Field{Name: "code", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "message", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "hint", Type: domain.TypeString, Nullable: true}), Nullable: true},
	domain.Field{Name: "details", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "event_type", Type: domain.TypeString},
)

// EventLog stands for event_log() in a query: the pipeline's own event
// log. It reads nothing itself: the update that runs a flow over it reads
// the update's store (see sourceOf), and the flow runs after every flow
// that does not read the log, so that it sees the whole update.
type EventLog struct{}

func (EventLog) String() string { return "event_log()" }

func (e EventLog) Plan(context.Context, domain.Offset, domain.ReadLimit) (domain.Offset, bool, error) {
	return nil, false, unbound(e)
}

func (e EventLog) Read(context.Context, domain.Offset, domain.Offset) (*domain.Batch, error) {
	return nil, unbound(e)
}

// unbound is the error of reading a source of the pipeline's own store
// outside an update, which gives it the store (sourceOf).
func unbound(src fmt.Stringer) error {
	return domain.Errorf(domain.CodeInvalidDefinition, "%s is read by an update of its pipeline", src)
}

// eventLogReader reads a store's events as rows; an offset is the seq of
// the last event read ({"seq": N}).
type eventLogReader struct {
	store *eventstore.Store
	// upto is how far the log is read (its end when nil)
	upto func() uint64
}

func (r *eventLogReader) String() string { return "event_log()" }

type eventLogPosition struct {
	Seq uint64 `json:"seq"`
}

func parseEventLogPosition(o domain.Offset) (uint64, error) {
	if o == nil {
		return 0, nil
	}
	var p eventLogPosition
	if err := json.Unmarshal(o, &p); err != nil {
		return 0, domain.Errorf(domain.CodeCheckpointInvalid, "the event log position %s cannot be read: %v", o, err)
	}
	return p.Seq, nil
}

// Plan returns the log's last seq, at most limit's rows past start.
func (r *eventLogReader) Plan(_ context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	from, err := parseEventLogPosition(start)
	if err != nil {
		return nil, false, err
	}
	end := r.store.LastSeq()
	if r.upto != nil {
		end = min(end, r.upto())
	}
	if end <= from {
		return nil, false, nil
	}
	if limit.MaxRows > 0 && end-from > uint64(limit.MaxRows) {
		end = from + uint64(limit.MaxRows)
	}
	out, err := json.Marshal(eventLogPosition{Seq: end})
	return out, err == nil, err
}

// parseEventLogRange reads the seqs of a range's start and end.
func parseEventLogRange(start, end domain.Offset) (from, to uint64, err error) {
	if from, err = parseEventLogPosition(start); err != nil {
		return 0, 0, err
	}
	to, err = parseEventLogPosition(end)
	return from, to, err
}

// Read returns the events after start up to end, in log order.
func (r *eventLogReader) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	from, to, err := parseEventLogRange(start, end)
	if err != nil {
		return nil, err
	}
	out := domain.NewBatch(EventLogSchema, int(min(to-from, 1<<16)))
	if to <= from {
		return out, nil
	}
	str := func(s string) domain.Value {
		if s == "" {
			return domain.Null()
		}
		return domain.String(s)
	}
	err = r.store.Scan(ctx, eventstore.Filter{From: from + 1, To: to}, func(ev *domain.Event) error {
		batch := domain.Null()
		if ev.Origin.BatchID != nil {
			batch = domain.Int(*ev.Origin.BatchID)
		}
		origin := domain.Struct(str(ev.Origin.PipelineName), str(ev.Origin.UpdateID), str(ev.Origin.FlowName), str(ev.Origin.DatasetName), batch)
		errPart := domain.Null()
		if e := ev.Error; e != nil {
			errPart = domain.Struct(str(string(e.Code)), str(e.Message), str(e.Hint))
		}
		details, err := json.Marshal(ev.Details)
		if err != nil {
			return fmt.Errorf("event %d: %w", ev.Seq, err)
		}
		return out.AppendRow(domain.String(ev.ID), domain.Struct(domain.Int(int64(ev.Seq))), origin, domain.Timestamp(ev.Timestamp),
			str(ev.Message), domain.String(string(ev.Level)), domain.String("STABLE"), errPart,
			domain.String(string(domain.NameTypes(details))), domain.String(string(ev.Type)))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
