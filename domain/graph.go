package domain

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"time"
)

// DatasetType is the kind of a dataset.
type DatasetType string

const (
	StreamingTable   DatasetType = "STREAMING_TABLE"
	MaterializedView DatasetType = "MATERIALIZED_VIEW"
	TemporaryView    DatasetType = "VIEW"
	SinkDataset      DatasetType = "SINK"
)

// Stored reports whether datasets of this type keep rows in sluice's log.
func (t DatasetType) Stored() bool { return t == StreamingTable || t == MaterializedView }

// FlowType is the kind of a flow, as in flow_definition events.
type FlowType string

const (
	FlowAppend           FlowType = "APPEND"
	FlowChange           FlowType = "CHANGE"
	FlowSnapshotChange   FlowType = "SNAPSHOT_CHANGE"
	FlowMaterializedView FlowType = "MATERIALIZED_VIEW"
	FlowView             FlowType = "VIEW"
	FlowSink             FlowType = "SINK"
)

// PropResetAllowed is the table property that, set to "false", refuses full
// refreshes of the table.
const PropResetAllowed = "pipelines.reset.allowed"

// Dataset is a declared dataset.
type Dataset struct {
	Name        string
	Type        DatasetType
	Comment     string
	Properties  map[string]string
	Schema      *Schema // declared; nil means inferred from the first batch
	Sink        Sink    // for sinks
	SinkFormat  string  // for sinks: "foreach_batch", "kafka", ...
	SinkOptions map[string]string
	// Expectations are checked on every row written to the dataset, by
	// Checker, which loading the pipeline builds from them.
	Expectations []Expectation
	Checker      Checker
}

// A Checker checks a dataset's expectations on the rows of a micro-batch
// before they are written: it returns the rows to write (without those a
// drop rule failed) and the counts, or the error of a row that fails a fail
// rule. Flows into one dataset may call it at once.
type Checker interface {
	Check(rows *Batch) (*Batch, *DataQuality, error)
}

// Rejected are the rows of a micro-batch that its drop rules failed, with
// the names of the rules each row failed: what a quarantine keeps.
type Rejected struct {
	Rows   *Batch
	Failed [][]string
	// Index is each row's place in the batch checked.
	Index []int
}

// A Quarantiner is a Checker that also gives the rows it drops.
type Quarantiner interface {
	CheckRejected(rows *Batch) (kept *Batch, rejected *Rejected, quality *DataQuality, err error)
}

// PropQuarantine is the table property that sends the rows a table's drop
// rules fail to its quarantine table, QuarantineTable(table).
const PropQuarantine = "pipelines.quarantine"

// QuarantineTable names the quarantine table of a table.
func QuarantineTable(table string) string { return table + "_quarantine" }

// QuarantineWriter names the writer of a quarantine table in its batch
// events and checkpoint: the rows come from the flows of the table, and
// from retries.
func QuarantineWriter(table string) string { return QuarantineTable(table) }

// Expectation is a data quality rule on a dataset's rows: a SQL boolean
// condition over its columns, and what a row that fails it does. A row
// passes when the condition is true or NULL, as a CHECK constraint does:
// write `col IS NOT NULL` to catch NULLs.
type Expectation struct {
	Name      string
	Condition string
	Action    ExpectAction
	// File, Line and Column place the expectation in a definition file
	// (a CONSTRAINT of a .sql file), when it was declared in one.
	File         string
	Line, Column int
}

// ExpectAction is what happens to a row that fails an expectation.
type ExpectAction string

const (
	ExpectWarn ExpectAction = "warn" // keep the row, count it (EXPECT)
	ExpectDrop ExpectAction = "drop" // drop the row, count it (ON VIOLATION DROP ROW)
	ExpectFail ExpectAction = "fail" // fail the flow; nothing of the batch is written (ON VIOLATION FAIL UPDATE)
)

// ResetAllowed reports whether a full refresh may reset the dataset.
func (d *Dataset) ResetAllowed() bool { return d.Properties[PropResetAllowed] != "false" }

// Flow is a declared flow: what it reads, how it transforms, where it writes.
type Flow struct {
	Name             string
	Target           string
	Type             FlowType
	Once             bool
	DependsOn        []string
	ImportCheckpoint *CheckpointRef
	Comment          string
	Conf             map[string]string
	Query            *Query
	// Changes is how an AUTO CDC flow (Type FlowChange) applies the rows
	// of its query, which end with the columns ChangeSequenceColumn,
	// ChangeDeleteColumn and ChangeTruncateColumn.
	Changes *ChangeSpec
	// Warnings are what loading the flow found to say (an option that has
	// no effect here); each update records them as planning_information
	// events.
	Warnings []string
}

// Recomputes reports whether the flow reads its inputs whole at each run: a
// materialized view, and an AUTO CDC flow taking snapshots of a dataset
// (one taking them from a snapshot source reads them as a stream).
func (f *Flow) Recomputes() bool {
	return f.Type == FlowMaterializedView || (f.Type == FlowSnapshotChange && !f.Query.Input.Streaming)
}

// SnapshotOffset is the offset of a source of snapshots: the version of the
// last snapshot read. A flow applying them sequences each by its version.
type SnapshotOffset struct {
	Version int64 `json:"version"`
}

// CheckpointRef names a flow in another pipeline's storage.
type CheckpointRef struct {
	Storage string // the other pipeline's storage directory
	Flow    string // the flow's name there
}

// Query is a flow's work: one input, then transforms in order. A query over
// several relations (a join, a union, a subquery) also reads Side inputs:
// each is read whole, as a batch, every time the flow runs (a snapshot of a
// table beside the stream, as Spark's stream-static joins read it), and
// Combine makes the rows from Input's batch followed by one batch per side
// input, before the transforms.
type Query struct {
	Input      Input
	Side       []Input
	Combine    Combiner
	Transforms []Transform
	// Version is a fingerprint of what the query computes: the canonical
	// text of an SQL flow's query, the version a Go flow declares. A
	// materialized view whose version changed is recomputed; a streaming
	// flow whose version changed continues from its checkpoint, and the
	// update says so. Empty: changes are not told apart.
	Version string
}

// Inputs lists every input of the query: Input, then the side inputs.
func (q *Query) Inputs() []Input { return append([]Input{q.Input}, q.Side...) }

// Combiner makes a query's rows from the batches of its inputs.
type Combiner interface {
	Combine(ctx context.Context, inputs []*Batch) (*Batch, error)
}

// Input is where a query's rows come from: a dataset of the pipeline (read as
// a stream or as a batch) or an external source.
type Input struct {
	Dataset   string // a dataset of the pipeline; empty for an external source
	Streaming bool
	Source    Source // when Dataset is empty
	// Watermark, on a streaming input, drops its late rows and, when it
	// deduplicates, the later rows of an identity.
	Watermark *Watermark
}

// Watermark bounds how late the rows of a stream may arrive. The watermark
// is the greatest event time the flow's committed micro-batches read, less
// Delay: computed when a micro-batch commits, used by the next, never
// moving back. A row whose event time is before it is dropped (and counted).
//
// With DedupOn, the first row of each identity (the values of those
// columns) is kept and the later rows of that identity are dropped, while
// its state lives: until the watermark passes the kept row's event time
// plus Delay (Spark's dropDuplicatesWithinWatermark). A row without an event
// time is kept and not remembered.
type Watermark struct {
	Column    string    // the event time, as written (for messages)
	EventTime Evaluator // each row's event time: a TIMESTAMP column
	Delay     time.Duration
	DedupOn   []string
}

// Evaluator computes a column from a batch's rows.
type Evaluator interface {
	Eval(b *Batch) (*Column, error)
}

// Describe names the input for messages.
func (in Input) Describe() string {
	kind := "batch"
	if in.Streaming {
		kind = "stream"
	}
	if in.Dataset != "" {
		return kind + " read of " + in.Dataset
	}
	if in.Source != nil {
		return kind + " read of " + in.Source.String()
	}
	return kind + " read of nothing"
}

// Transform changes a batch: a projection, a filter, a user function. It must
// be deterministic: the same batch always gives the same result, so a batch
// re-run after a crash writes the same rows. It returns a batch of its own
// and leaves the one it is given as it is (its columns included): the
// streams that read a table share the rows its writers committed.
type Transform interface {
	Apply(ctx context.Context, b *Batch) (*Batch, error)
}

// KeepsSelections is implemented by a Transform or Combiner whose batches,
// once built, are never changed (sluice's SQL plans): a batch it returns
// that is a selection of a table's stored rows (Batch.Selection) still is
// one, and its flow may commit it as one. What any other returns is taken
// for new rows, since it may write into a batch it built from selected
// rows.
type KeepsSelections interface {
	KeepsSelections()
}

// TransformFunc adapts a function to Transform.
type TransformFunc func(ctx context.Context, b *Batch) (*Batch, error)

// Apply calls f.
func (f TransformFunc) Apply(ctx context.Context, b *Batch) (*Batch, error) { return f(ctx, b) }

// Offset is a position in a source, in the source's own JSON form
// (a sequence number, a set of files, Kafka offsets per partition). A nil
// Offset is the beginning.
type Offset = json.RawMessage

// ReadLimit bounds one micro-batch; zero means no bound.
type ReadLimit struct {
	MaxRows  int64
	MaxFiles int64
	MaxBytes int64
}

// ItemRead says how far a micro-batch reads one item of its source: for a
// file, its path, the byte offset after the micro-batch and the lines before
// that offset.
type ItemRead struct {
	Item  string `json:"item"`
	Upto  int64  `json:"upto"`
	Lines int64  `json:"lines,omitempty"`
	// ID is the identity of what was read (a file's device and inode), so
	// that another file put at the same path is read from its start, not
	// from where this one was left.
	ID string `json:"id,omitempty"`
}

// ReadState tells how far the committed micro-batches of a flow (of its
// current generation) read each item of its source.
type ReadState interface {
	ItemRead(item string) (ItemRead, bool, error)
}

// An ItemSource is a Source of many items (files) that leaves the record of
// what it read to the store: each offset names only the items of its own
// micro-batch (Items), the store keeps how far every item was read (a
// projection of the committed micro-batches), and planning consults it
// (Reading). So a micro-batch's events and its planning cost the same
// whatever the history.
type ItemSource interface {
	Source
	// Items lists the items the micro-batch ending at end reads, and how far.
	Items(end Offset) ([]ItemRead, error)
	// Reading returns the source planning against what state says was read.
	Reading(state ReadState) Source
}

// Source is an external source of rows: files, Kafka, a table of another
// system, a Go function.
//
// The contract that makes exactly-once possible: Read(start, end) returns the
// same rows every time it is called with the same range.
type Source interface {
	// String names the source in events and messages.
	String() string
	// Plan returns the end of the next range to read from start, bounded by
	// limit. ok is false when nothing new is available.
	Plan(ctx context.Context, start Offset, limit ReadLimit) (end Offset, ok bool, err error)
	// Read returns exactly the rows in [start, end).
	Read(ctx context.Context, start, end Offset) (*Batch, error)
}

// Committer is implemented by sources that keep data for sluice until it
// is committed (a replication slot keeps the log): Committed(end) says that
// every micro-batch up to end committed, so the source may let go of what
// is before end. Planning is no such sign: the next micro-batch is planned
// while one commits.
type Committer interface {
	Committed(ctx context.Context, end Offset) error
}

// Closer is implemented by sources and sinks that hold connections or
// subscriptions: an update closes them when it ends, and the next one opens
// them again when it first uses them.
type Closer interface {
	Close()
}

// Validator is implemented by sources that can check their configuration
// before anything runs; pipeline validation reports what Validate returns.
type Validator interface {
	Validate() error
}

// SinkBatch is one micro-batch delivered to a sink.
type SinkBatch struct {
	Flow       string
	Sink       string
	BatchID    int64
	Generation int64
	Rows       *Batch
}

// Sink is an external destination. Delivery is at least once: after a crash
// the same batch id may be delivered again, with the same rows, so a sink that
// records batch ids can make its writes idempotent.
type Sink interface {
	Deliver(ctx context.Context, b SinkBatch) error
}

// Graph is a resolved and validated pipeline: every name known, no cycle.
type Graph struct {
	Name       string
	Continuous bool
	Datasets   map[string]*Dataset
	Flows      map[string]*Flow
	// Order lists flow names in a topological order (predecessors first, ties by name).
	Order []string
	// Preds maps a flow to the flows that must finish before it starts in a
	// triggered update: its depends_on flows and the writers of what it reads.
	Preds map[string][]string
	// DependsOn maps a flow to its ordering predecessors only (depends_on),
	// the ones that gate it in a continuous update.
	DependsOn map[string][]string
}

// DatasetNames lists dataset names sorted.
func (g *Graph) DatasetNames() []string { return slices.Sorted(maps.Keys(g.Datasets)) }

// FlowNames lists flow names sorted.
func (g *Graph) FlowNames() []string { return slices.Sorted(maps.Keys(g.Flows)) }

// Writers lists the flows that write dataset, sorted.
func (g *Graph) Writers(dataset string) []string {
	var out []string
	for _, name := range g.Order {
		if g.Flows[name].Target == dataset {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Downstream returns the flows that, directly or not, come after any of the
// given flows (the flows themselves excluded).
func (g *Graph) Downstream(flows []string) map[string]bool {
	succ := map[string][]string{}
	for f, preds := range g.Preds {
		for _, p := range preds {
			succ[p] = append(succ[p], f)
		}
	}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(f string) {
		for _, s := range succ[f] {
			if !seen[s] {
				seen[s] = true
				walk(s)
			}
		}
	}
	for _, f := range flows {
		walk(f)
	}
	for _, f := range flows {
		delete(seen, f)
	}
	return seen
}
