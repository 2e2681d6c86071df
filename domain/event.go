package domain

import (
	"encoding/json"
	"errors"
	"time"
)

// EventType names what an event records. The spelling follows the Databricks
// pipeline event log, so users' queries over it carry over.
type EventType string

// The event types.
const (
	EventCreateUpdate        EventType = "create_update"
	EventUpdateProgress      EventType = "update_progress"
	EventDatasetDefinition   EventType = "dataset_definition"
	EventFlowDefinition      EventType = "flow_definition"
	EventSinkDefinition      EventType = "sink_definition"
	EventFlowProgress        EventType = "flow_progress"
	EventBatchPlanned        EventType = "batch_planned"
	EventBatchCommitted      EventType = "batch_committed"
	EventSinkBatchDelivered  EventType = "sink_batch_delivered"
	EventOnceFlowDrained     EventType = "once_flow_drained"
	EventTableReset          EventType = "table_reset"
	EventCheckpointReset     EventType = "checkpoint_reset"
	EventCheckpointImported  EventType = "checkpoint_imported"
	EventPlanningInformation EventType = "planning_information"
	EventHookProgress        EventType = "hook_progress"
	EventStreamState         EventType = "stream_state"
)

// EventTypes lists every event type, in the order of DESIGN's table.
var EventTypes = []EventType{
	EventCreateUpdate, EventUpdateProgress, EventDatasetDefinition, EventFlowDefinition,
	EventSinkDefinition, EventFlowProgress, EventBatchPlanned, EventBatchCommitted,
	EventSinkBatchDelivered, EventOnceFlowDrained, EventTableReset, EventCheckpointReset,
	EventCheckpointImported, EventPlanningInformation, EventHookProgress, EventStreamState,
}

// Level is an event's severity.
type Level string

const (
	LevelInfo    Level = "INFO"
	LevelWarn    Level = "WARN"
	LevelError   Level = "ERROR"
	LevelMetrics Level = "METRICS"
)

// Event is one entry of the log. Seq is assigned by the store when the event
// commits; everything else is set by whoever appends it.
type Event struct {
	Seq       uint64     `json:"seq"`
	ID        string     `json:"id"`
	Timestamp time.Time  `json:"timestamp"`
	Type      EventType  `json:"event_type"`
	Level     Level      `json:"level"`
	Message   string     `json:"message"`
	Origin    Origin     `json:"origin"`
	Details   Details    `json:"details"`
	Error     *ErrorInfo `json:"error,omitempty"`
	// Data is the bulk payload (an encoded batch of rows), never JSON.
	Data []byte `json:"-"`
}

// Origin says where an event comes from.
type Origin struct {
	PipelineName string `json:"pipeline_name,omitempty"`
	UpdateID     string `json:"update_id,omitempty"`
	FlowName     string `json:"flow_name,omitempty"`
	DatasetName  string `json:"dataset_name,omitempty"`
	BatchID      *int64 `json:"batch_id,omitempty"`
}

// ErrorInfo is the error part of an event.
type ErrorInfo struct {
	Code    Code     `json:"code"`
	Message string   `json:"message"`
	Hint    string   `json:"hint,omitempty"`
	Names   []string `json:"names,omitempty"`
}

// ErrorInfoOf turns an error into the event's error part.
func ErrorInfoOf(err error) *ErrorInfo {
	if err == nil {
		return nil
	}
	if p, ok := err.(Problems); ok && len(p) > 0 {
		first := p[0]
		return &ErrorInfo{Code: first.Code, Message: p.Error(), Hint: first.Hint, Names: first.Names}
	}
	var e *Error
	if errors.As(err, &e) {
		return &ErrorInfo{Code: e.Code, Message: e.Error(), Hint: e.Hint, Names: e.Names}
	}
	return &ErrorInfo{Code: CodeFlowFailed, Message: err.Error()}
}

// Details holds the event-type specific part; exactly one field is set, the
// one named by the event type, so the JSON reads {"flow_progress": {...}}.
type Details struct {
	CreateUpdate        *CreateUpdate        `json:"create_update,omitempty"`
	UpdateProgress      *UpdateProgress      `json:"update_progress,omitempty"`
	DatasetDefinition   *DatasetDefinition   `json:"dataset_definition,omitempty"`
	FlowDefinition      *FlowDefinition      `json:"flow_definition,omitempty"`
	SinkDefinition      *SinkDefinition      `json:"sink_definition,omitempty"`
	FlowProgress        *FlowProgress        `json:"flow_progress,omitempty"`
	BatchPlanned        *BatchInfo           `json:"batch_planned,omitempty"`
	BatchCommitted      *BatchInfo           `json:"batch_committed,omitempty"`
	SinkBatchDelivered  *SinkBatchDelivered  `json:"sink_batch_delivered,omitempty"`
	OnceFlowDrained     *OnceFlowDrained     `json:"once_flow_drained,omitempty"`
	TableReset          *TableReset          `json:"table_reset,omitempty"`
	CheckpointReset     *CheckpointReset     `json:"checkpoint_reset,omitempty"`
	CheckpointImported  *CheckpointImported  `json:"checkpoint_imported,omitempty"`
	PlanningInformation *PlanningInformation `json:"planning_information,omitempty"`
	HookProgress        *HookProgress        `json:"hook_progress,omitempty"`
	StreamState         *StreamState         `json:"stream_state,omitempty"`
}

// CreateUpdate starts an update.
type CreateUpdate struct {
	Cause                    string   `json:"cause"`
	FullRefreshAll           bool     `json:"full_refresh_all,omitempty"`
	FullRefreshSelection     []string `json:"full_refresh_selection,omitempty"`
	RefreshSelection         []string `json:"refresh_selection,omitempty"`
	RefreshFailed            bool     `json:"refresh_failed,omitempty"`
	ResetCheckpointSelection []string `json:"reset_checkpoint_selection,omitempty"`
	DryRun                   bool     `json:"dry_run,omitempty"`
	Continuous               bool     `json:"continuous,omitempty"`
	Development              bool     `json:"development,omitempty"`
}

// UpdateState is the state of an update.
type UpdateState string

const (
	UpdateQueued          UpdateState = "QUEUED"
	UpdateCreated         UpdateState = "CREATED"
	UpdateInitializing    UpdateState = "INITIALIZING"
	UpdateResetting       UpdateState = "RESETTING"
	UpdateSettingUpTables UpdateState = "SETTING_UP_TABLES"
	UpdateRunning         UpdateState = "RUNNING"
	UpdateStopping        UpdateState = "STOPPING"
	UpdateCompleted       UpdateState = "COMPLETED"
	UpdateFailed          UpdateState = "FAILED"
	UpdateCanceled        UpdateState = "CANCELED"
)

// UpdateProgress records an update changing state.
type UpdateProgress struct {
	State UpdateState `json:"state"`
}

// DatasetDefinition records a dataset as declared for an update.
type DatasetDefinition struct {
	DatasetType     DatasetType       `json:"dataset_type"`
	Schema          *Schema           `json:"schema,omitempty"`
	NumFlows        int               `json:"num_flows"`
	Expectations    []string          `json:"expectations,omitempty"`
	TableProperties map[string]string `json:"table_properties,omitempty"`
	Comment         string            `json:"comment,omitempty"`
}

// FlowDefinition records a flow as declared for an update.
type FlowDefinition struct {
	OutputDataset string   `json:"output_dataset"`
	InputDatasets []string `json:"input_datasets,omitempty"`
	FlowType      FlowType `json:"flow_type"`
	Once          bool     `json:"once,omitempty"`
	DependsOn     []string `json:"depends_on,omitempty"`
	Comment       string   `json:"comment,omitempty"`
	QueryVersion  string   `json:"query_version,omitempty"`
}

// SinkDefinition records a sink as declared for an update.
type SinkDefinition struct {
	Format  string            `json:"format"`
	Options map[string]string `json:"options,omitempty"`
}

// FlowStatus is the state of a flow within an update.
type FlowStatus string

const (
	FlowQueued    FlowStatus = "QUEUED"
	FlowStarting  FlowStatus = "STARTING"
	FlowRunning   FlowStatus = "RUNNING"
	FlowCompleted FlowStatus = "COMPLETED"
	FlowFailed    FlowStatus = "FAILED"
	FlowSkipped   FlowStatus = "SKIPPED"
	FlowStopped   FlowStatus = "STOPPED"
	FlowIdle      FlowStatus = "IDLE"
	FlowExcluded  FlowStatus = "EXCLUDED"
)

// Terminal reports whether a flow in status s has finished for this update.
func (s FlowStatus) Terminal() bool {
	switch s {
	case FlowCompleted, FlowFailed, FlowSkipped, FlowStopped, FlowExcluded:
		return true
	}
	return false
}

// Reasons a flow is SKIPPED, in FlowProgress.Reason.
const (
	SkipAlreadyDrained = "ONCE_FLOW_ALREADY_DRAINED"
	SkipUpstreamFailed = "UPSTREAM_FAILED"
)

// FlowProgress records a flow changing state.
type FlowProgress struct {
	Status      FlowStatus   `json:"status"`
	Reason      string       `json:"reason,omitempty"`
	Attempt     int          `json:"attempt,omitempty"`
	Metrics     *FlowMetrics `json:"metrics,omitempty"`
	DataQuality *DataQuality `json:"data_quality,omitempty"`
}

// FlowMetrics counts what a flow did.
type FlowMetrics struct {
	NumOutputRows   int64  `json:"num_output_rows"`
	NumUpsertedRows int64  `json:"num_upserted_rows,omitempty"`
	NumDeletedRows  int64  `json:"num_deleted_rows,omitempty"`
	BacklogRecords  *int64 `json:"backlog_records,omitempty"`
	NumBatches      int64  `json:"num_batches,omitempty"`
	// NumLateRowsDropped and NumDuplicatesDropped count the rows a
	// watermark dropped: older than it, or a later row of an identity seen.
	NumLateRowsDropped   int64 `json:"num_late_rows_dropped,omitempty"`
	NumDuplicatesDropped int64 `json:"num_duplicates_dropped,omitempty"`
}

// DataQuality counts expectation results.
type DataQuality struct {
	DroppedRecords int64               `json:"dropped_records"`
	Expectations   []ExpectationResult `json:"expectations,omitempty"`
}

// Add adds the counts of one micro-batch to a running total.
func (q *DataQuality) Add(b *DataQuality) {
	q.DroppedRecords += b.DroppedRecords
	for _, e := range b.Expectations {
		found := false
		for i := range q.Expectations {
			if q.Expectations[i].Name == e.Name && q.Expectations[i].Dataset == e.Dataset {
				q.Expectations[i].PassedRecords += e.PassedRecords
				q.Expectations[i].FailedRecords += e.FailedRecords
				found = true
			}
		}
		if !found {
			q.Expectations = append(q.Expectations, e)
		}
	}
}

// RowsRemoved records that vacuum removed a committed batch's rows, or the
// identities of a stream state.
type RowsRemoved struct {
	At        time.Time `json:"at"`
	Retention string    `json:"retention"` // the retention then in force, as Go writes a duration
}

// ExpectationResult counts one expectation's passes and failures.
type ExpectationResult struct {
	Name          string `json:"name"`
	Dataset       string `json:"dataset"`
	PassedRecords int64  `json:"passed_records"`
	FailedRecords int64  `json:"failed_records"`
}

// BatchInfo describes a planned or committed micro-batch. Start and End are
// the source range [Start, End) in the source's own JSON offset form.
type BatchInfo struct {
	Flow            string          `json:"flow"`
	Target          string          `json:"target"`
	BatchID         int64           `json:"batch_id"`
	Generation      int64           `json:"generation"`
	TableGeneration int64           `json:"table_generation,omitempty"`
	Start           json.RawMessage `json:"start,omitempty"`
	End             json.RawMessage `json:"end,omitempty"`
	NumRows         int64           `json:"num_rows"`
	// NumRescued counts the rows whose source record did not parse or fit,
	// kept with the record in _rescued_data.
	NumRescued int64 `json:"num_rescued_records,omitempty"`
	// NumMalformed counts the source records that did not parse or fit and
	// were not rescued: left out (mode DROPMALFORMED), or kept with NULLs
	// where they did not fit (PERMISSIVE without a rescued data column).
	NumMalformed int64 `json:"num_malformed_records,omitempty"`
	// RowsRemoved says the batch's rows were removed by vacuum (its
	// generation of the table was superseded and past the retention).
	RowsRemoved *RowsRemoved `json:"rows_removed,omitempty"`
	// Items are the source items the batch reads and how far (an
	// ItemSource's), recorded by the store once the batch commits.
	Items []ItemRead `json:"items,omitempty"`
	// QueryVersion is the version of the flow's query that computed the
	// batch (Query.Version).
	QueryVersion string `json:"query_version,omitempty"`
	// Schema is the table's schema from this batch on, set when the batch
	// gives the table its first schema or evolves it.
	Schema *Schema `json:"schema,omitempty"`
	// DataQuality counts the batch's expectation results, when the target
	// has expectations.
	DataQuality *DataQuality `json:"data_quality,omitempty"`
	// Changes is set on the batches of an AUTO CDC flow: the batch's data
	// holds changes to fold, not rows to append.
	Changes *ChangeInfo `json:"changes,omitempty"`
	// Selects names the table whose stored rows the batch's rows are: its
	// data is a Selection of that table's batches, not rows of its own.
	Selects string `json:"selects,omitempty"`
}

// SinkBatchDelivered records that a sink acknowledged a batch.
type SinkBatchDelivered struct {
	Flow       string `json:"flow"`
	Sink       string `json:"sink"`
	BatchID    int64  `json:"batch_id"`
	Generation int64  `json:"generation"`
	NumRows    int64  `json:"num_rows"`
}

// OnceFlowDrained records that a once flow finished; it stays drained until a
// full refresh or a checkpoint reset of the flow.
type OnceFlowDrained struct {
	Flow       string `json:"flow"`
	Generation int64  `json:"generation"`
}

// TableReset starts a new generation of a table: rows of older generations are
// no longer part of it.
type TableReset struct {
	Table      string `json:"table"`
	Generation int64  `json:"generation"`
	Cause      string `json:"cause"`
}

// CheckpointReset starts a new generation of a flow's checkpoint: it reads its
// source from the beginning and once completion is cleared. Batch ids restart
// at NextBatchID: 0 for a flow into a table, and for a flow into a sink the id
// after every id it ever used, so that a sink that records batch ids never
// mistakes the reread for batches it already has.
type CheckpointReset struct {
	Flow        string `json:"flow"`
	Generation  int64  `json:"generation"`
	Cause       string `json:"cause"`
	NextBatchID int64  `json:"next_batch_id,omitempty"`
}

// CheckpointImported records a flow starting from another pipeline's position.
type CheckpointImported struct {
	Flow       string          `json:"flow"`
	Generation int64           `json:"generation"`
	Storage    string          `json:"storage"`
	SourceFlow string          `json:"source_flow"`
	Offset     json.RawMessage `json:"offset,omitempty"`
	// Items is how far the source flow had read each item of an ItemSource.
	Items []ItemRead `json:"items,omitempty"`
}

// PlanningInformation says how a dataset is refreshed and why.
type PlanningInformation struct {
	Dataset   string `json:"dataset"`
	Technique string `json:"technique"`
	Reason    string `json:"reason"`
}

// HookDelivery is one event told to a hook.
type HookDelivery struct {
	Hook    string
	Trigger string
	// IdempotencyKey is the same for every try and every process that
	// delivers this event to this hook: a receiver keeps the first.
	IdempotencyKey string
	Attempt        int
	Event          *Event
}

// HookProgress records an event hook's outcome.
type HookProgress struct {
	Hook     string `json:"hook"`
	Seq      uint64 `json:"event_seq"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
}

// StreamState records, in the commit of a micro-batch of a flow whose
// stream has a watermark, what the flow keeps between micro-batches: the
// watermark the next micro-batch uses and, in the event's data, the
// identities the micro-batch began to remember (column identity) with when
// they expire (column expires). The flow's state is the fold of these
// events of its checkpoint generation.
//
// Now and then a commit holds a second one, a snapshot (Snapshot set):
// its data is the whole state after the micro-batch, every identity
// remembered, in the order remembered. The fold starts again from it, so
// that a restart reads the latest snapshot and the events after it, not
// the flow's whole history; its counts of rows dropped are 0 (the
// micro-batch's own event has them).
//
// The identities of the events before a flow's latest snapshot are read by
// no restart: sluice vacuum removes them once past the retention of the
// flow's table (IdentitiesRemoved), keeping the rest of the event.
type StreamState struct {
	Flow       string `json:"flow"`
	BatchID    int64  `json:"batch_id"`
	Generation int64  `json:"generation"`
	// Watermark is nil until a micro-batch read a row with an event time.
	Watermark            *time.Time `json:"watermark,omitempty"`
	NumLateRowsDropped   int64      `json:"num_late_rows_dropped"`
	NumDuplicatesDropped int64      `json:"num_duplicates_dropped"`
	// NumStateRows is how many identities the flow remembers after the
	// micro-batch.
	NumStateRows int64 `json:"num_state_rows"`
	// StateFingerprint identifies the flow's state after the micro-batch,
	// so that a replay of the log can check it rebuilt the same state.
	StateFingerprint string `json:"state_fingerprint,omitempty"`
	Snapshot         bool   `json:"snapshot,omitempty"`
	// IdentitiesOf says the event's data is a selection of stored rows
	// (EncodeSelection), the rows whose identities the micro-batch began to
	// remember, rather than the identities themselves: those are the
	// flow's rows as it read them from its input table, and this
	// records them in a few bits a row. Snapshots hold the identities.
	IdentitiesOf *IdentityRows `json:"identities_of,omitempty"`
	// SnapshotPart numbers, from 1, the parts of a snapshot recorded in
	// parts, as a state too large for one event is (0 for a snapshot in
	// one event): each part holds the identities remembered after those of
	// the part before. The parts but the last are committed one by one
	// just before their micro-batch, and hold no fingerprint; the last is
	// committed with the micro-batch and names the first by its seq
	// (SnapshotFrom). A snapshot is whole once its last part is: the parts
	// of a micro-batch that did not commit are read by no fold, and its
	// retry records them anew.
	SnapshotPart int    `json:"snapshot_part,omitempty"`
	SnapshotFrom uint64 `json:"snapshot_from,omitempty"`
	// IdentitiesRemoved says vacuum removed the event's identities (its
	// data), a later snapshot holding the state.
	IdentitiesRemoved *RowsRemoved `json:"identities_removed,omitempty"`
}

// IdentityRows is how a stream_state event's selection of rows gives
// identities: the rows are of the table Table; each row's identity is the
// key of its columns Columns (in the deduplication's encoding), remembered
// until its TIMESTAMP column EventTime plus Delay (microseconds).
type IdentityRows struct {
	Table     string   `json:"table"`
	Columns   []string `json:"columns"`
	EventTime string   `json:"event_time"`
	Delay     int64    `json:"delay_us"`
}
