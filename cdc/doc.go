// Package cdc applies changes by key to the tables AUTO CDC flows write,
// as SCD type 1 (the current row of each key) or SCD type 2 (every version
// of each key, between __START_AT and __END_AT).
//
// A table's state is a fold of its recorded changes: a micro-batch of
// changes goes through State.Apply, which returns the changes that altered
// the state (the delta), and the flow records that delta in the micro-batch's
// batch_committed event. State.Replay folds recorded deltas, so the flow
// after a restart, a reader of the table, an as-of read and a verifying
// replay all rebuild the same state from the log alone.
package cdc
