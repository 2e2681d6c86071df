package domain

import "strings"

// An AUTO CDC flow applies a stream of changes to its target by key. The
// flow's query gives, for every change, the columns to store followed by
// three columns the loader computes from the flow's clauses:
// ChangeSequenceColumn (SEQUENCE BY), ChangeDeleteColumn (APPLY AS DELETE
// WHEN) and ChangeTruncateColumn (APPLY AS TRUNCATE WHEN). Each committed
// micro-batch records the changes that altered the target's keyed state
// (see ChangeInfo): the table is the fold of those, in commit order.
const (
	ChangeSequenceColumn = "__cdc_sequence"
	ChangeDeleteColumn   = "__cdc_delete"
	ChangeTruncateColumn = "__cdc_truncate"
	// ChangeOpColumn is the operation of a recorded change: ChangeUpsert,
	// ChangeDelete or ChangeTruncate.
	ChangeOpColumn = "__cdc_op"
)

// The operations of ChangeOpColumn.
const (
	ChangeUpsert   int64 = 0
	ChangeDelete   int64 = 1
	ChangeTruncate int64 = 2
)

// The columns of an SCD type 2 table that bound each version of a row: the
// sequence of the change that began it, and of the change that ended it
// (NULL while it is current).
const (
	SCDStartColumn = "__START_AT"
	SCDEndColumn   = "__END_AT"
)

// PropTombstoneGC is the table property that sets, in seconds, how long an
// SCD type 1 table remembers a deleted key (so that an older change arriving
// later does not bring the row back). Two days by default.
const PropTombstoneGC = "pipelines.cdc.tombstoneGCThresholdInSeconds"

// DefaultTombstoneGCSeconds is PropTombstoneGC's default: two days.
const DefaultTombstoneGCSeconds = 2 * 24 * 60 * 60

// ChangeSpec is how an AUTO CDC flow applies its changes, as declared.
type ChangeSpec struct {
	Keys    []string
	SCDType int // 1 or 2
	// IgnoreNullUpdates, when set, names the columns whose NULL in an
	// update keeps the stored value.
	IgnoreNullUpdates *ColumnSet
	// TrackHistory names the columns whose changes begin a new version in
	// an SCD type 2 table; changes to the others update the current version
	// in place. nil tracks every column.
	TrackHistory *ColumnSet
	// Truncates reports whether the flow has APPLY AS TRUNCATE WHEN.
	Truncates bool
	// Snapshot makes the flow's query a snapshot of the source, read whole
	// at each update (AUTO CDC FROM SNAPSHOT): the flow applies what
	// changed since the last snapshot, sequenced by the update's start.
	Snapshot bool
}

// ColumnSet is a list of columns, or every column but a list (Except).
type ColumnSet struct {
	Except  bool     `json:"except,omitempty"`
	Columns []string `json:"columns"`
}

// Same reports whether two sets name the same columns (in any order and
// case); nil is every column.
func (c *ColumnSet) Same(o *ColumnSet) bool {
	if c == nil || o == nil {
		return c == o
	}
	if c.Except != o.Except || len(c.Columns) != len(o.Columns) {
		return false
	}
	seen := map[string]bool{}
	for _, n := range c.Columns {
		seen[strings.ToLower(n)] = true
	}
	for _, n := range o.Columns {
		if !seen[strings.ToLower(n)] {
			return false
		}
	}
	return true
}

// Resolve returns the indexes of the set's columns among names (every one
// for an Except set, but those listed); names must hold the listed ones.
func (c *ColumnSet) Resolve(names []string) []int {
	listed := map[string]bool{}
	for _, n := range c.Columns {
		listed[strings.ToLower(n)] = true
	}
	var out []int
	for i, n := range names {
		if listed[strings.ToLower(n)] != c.Except {
			out = append(out, i)
		}
	}
	return out
}

// ChangeInfo is what a micro-batch of an AUTO CDC flow recorded: the data of
// its batch_committed event holds the changes that altered the target's keyed
// state (the stored columns, ChangeSequenceColumn, ChangeOpColumn), and this
// says how to fold them.
type ChangeInfo struct {
	Keys         []string `json:"keys"`
	SCDType      int      `json:"scd_type"`
	SequenceType Type     `json:"sequence_type"`
	// TrackHistory are the columns an SCD type 2 table tracks history on;
	// nil for every column.
	TrackHistory *ColumnSet `json:"track_history,omitempty"`
	// TombstoneGCSeconds is how long an SCD type 1 table remembers a
	// deleted key: by the sequence when the sequence is a timestamp, else
	// by commit time.
	TombstoneGCSeconds int64 `json:"tombstone_gc_seconds"`
	// NumUpserted and NumDeleted count the rows of the table the batch
	// inserted or updated, and deleted (SCD 1); the changes applied as
	// upserts and as deletes (SCD 2).
	NumUpserted int64 `json:"num_upserted_rows"`
	NumDeleted  int64 `json:"num_deleted_rows"`
	// StateFingerprint identifies the table's keyed state after the batch,
	// so that a replay of the log can check it rebuilt the same state.
	StateFingerprint string `json:"state_fingerprint,omitempty"`
}
