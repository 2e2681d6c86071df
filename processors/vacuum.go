package processors

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// PropRetention is the table property that keeps the rows of a superseded
// generation of a table (before a full refresh, or a materialized view's
// earlier recompute) from vacuum for a while: Delta's property, read the same
// way ("interval 7 days").
const PropRetention = "delta.deletedFileRetentionDuration"

// DefaultRetention is the retention of a table without PropRetention, as
// Delta's.
const DefaultRetention = 7 * 24 * time.Hour

// VacuumOptions says what Vacuum removes.
type VacuumOptions struct {
	// Tables limits vacuum to these tables; nil means every table.
	Tables []string
	// Retain, when set, is the retention of every table instead of its
	// property.
	Retain *time.Duration
	// DryRun finds what would be removed and removes nothing.
	DryRun bool
	// Now is the time the retention counts back from; zero means now.
	Now time.Time
}

// Vacuumed is what Vacuum removed (or would remove) of one table.
type Vacuumed struct {
	Table       string
	Retention   time.Duration
	Generations []int64 // the superseded generations whose rows went
	Batches     int
	Rows        int64
	Bytes       int64 // of encoded rows
	// Kept counts the superseded batches past retention that stay: rows
	// another table keeps are still rows of them (see domain.Selection).
	Kept int
	// StateEvents counts the stream_state events of the table's flows
	// whose identities went (StateBytes of them): those before the flow's
	// latest snapshot, or of a checkpoint generation a reset left behind.
	StateEvents int
	StateBytes  int64
}

// Vacuum removes the rows of superseded generations of stored tables
// superseded longer ago than their retention: the rows of a table's current
// generation are never touched, and every event stays, its metadata whole, so the audit
// trail and replay are as before. A read of removed rows (an as-of read of
// an earlier generation) is then ROWS_VACUUMED. The space goes back to the
// disk when the store is next compacted (eventstore.Store.Reclaim).
//
// It removes, too, the identities of the stream_state events of the
// table's deduplicating flows that no restart reads: those before the
// flow's latest snapshot, once that snapshot is older than the retention,
// and those of a checkpoint generation a reset (or import) left behind
// longer ago. replay --verify then checks such a flow's state from the
// first snapshot after the cut.
func Vacuum(ctx context.Context, store *eventstore.Store, opts VacuumOptions) ([]Vacuumed, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	props := map[string]map[string]string{}        // the latest definition's table properties
	superseded := map[string]map[int64]time.Time{} // when each generation was followed by the next
	type batch struct {
		seq   uint64
		gen   int64
		rows  int64
		bytes int64
	}
	batches := map[string][]batch{}
	selects := map[uint64][]uint64{} // the stored batches each selection batch keeps rows of
	type stateEvent struct {
		seq      uint64
		gen      int64
		at       time.Time
		snapshot bool // a snapshot begins here
		bytes    int64
	}
	states := map[string][]stateEvent{}           // by flow
	partsFrom := map[uint64]bool{}                // the first parts of the snapshots in parts
	var stateSelects []uint64                     // the stored batches stream states hold the identities of (domain.IdentityRows)
	stateTable := map[string]string{}             // each deduplicating flow's table
	restarted := map[string]map[int64]time.Time{} // when each checkpoint generation of a flow began
	err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventDatasetDefinition, domain.EventTableReset, domain.EventBatchCommitted,
		domain.EventStreamState, domain.EventCheckpointReset, domain.EventCheckpointImported}},
		func(ev *domain.Event) error {
			d := ev.Details
			began := func(flow string, gen int64) {
				if restarted[flow] == nil {
					restarted[flow] = map[int64]time.Time{}
				}
				if _, ok := restarted[flow][gen]; !ok {
					restarted[flow][gen] = ev.Timestamp
				}
			}
			switch {
			case d.StreamState != nil:
				st := d.StreamState
				if st.IdentitiesOf != nil && len(ev.Data) > 0 {
					sel, err := domain.DecodeSelection(ev.Data)
					if err != nil {
						return domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the stream state of flow %q at event %d", st.Flow, ev.Seq))
					}
					for _, sb := range sel.Batches {
						stateSelects = append(stateSelects, sb.Seq)
					}
				}
				// A snapshot in parts begins at its first part, once its last
				// names it (the parts of a micro-batch that did not commit
				// begin none).
				states[st.Flow] = append(states[st.Flow], stateEvent{ev.Seq, st.Generation, ev.Timestamp, st.Snapshot && st.SnapshotPart == 0, int64(len(ev.Data))})
				if st.SnapshotFrom != 0 {
					partsFrom[st.SnapshotFrom] = true
				}
				stateTable[st.Flow] = ev.Origin.DatasetName
			case d.CheckpointReset != nil:
				began(d.CheckpointReset.Flow, d.CheckpointReset.Generation)
			case d.CheckpointImported != nil:
				began(d.CheckpointImported.Flow, d.CheckpointImported.Generation)
			case d.DatasetDefinition != nil:
				props[ev.Origin.DatasetName] = d.DatasetDefinition.TableProperties
			case d.TableReset != nil:
				t := d.TableReset
				if superseded[t.Table] == nil {
					superseded[t.Table] = map[int64]time.Time{}
				}
				for g := range t.Generation { // every generation before it, if not already
					if _, ok := superseded[t.Table][g]; !ok {
						superseded[t.Table][g] = ev.Timestamp
					}
				}
			case d.BatchCommitted != nil && len(ev.Data) > 0:
				bc := d.BatchCommitted
				batches[bc.Target] = append(batches[bc.Target], batch{ev.Seq, bc.TableGeneration, bc.NumRows, int64(len(ev.Data))})
				if bc.Selects != "" {
					sel, err := domain.DecodeSelection(ev.Data)
					if err != nil {
						return domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the rows of %s at event %d", bc.Target, ev.Seq))
					}
					for _, sb := range sel.Batches {
						selects[ev.Seq] = append(selects[ev.Seq], sb.Seq)
					}
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	tables := slices.Clone(opts.Tables)
	if tables == nil {
		for t := range batches {
			tables = append(tables, t)
		}
		for _, t := range stateTable {
			if batches[t] == nil && !slices.Contains(tables, t) {
				tables = append(tables, t)
			}
		}
	}
	slices.Sort(tables)
	tables = slices.Compact(tables) // a table named twice is vacuumed once
	// What each table would lose, first: a batch whose rows another
	// table's batch keeps stays while that batch does.
	removing := map[uint64]bool{}
	plans := make([]Vacuumed, 0, len(tables))
	candidates := make([][]batch, 0, len(tables)) // by table: what retention lets go
	for _, table := range tables {
		retention := DefaultRetention
		if v, ok := props[table][PropRetention]; ok {
			r, err := ParseRetention(v)
			if err != nil {
				return nil, domain.Errorf(domain.CodeInvalidParameterValue, "table %q: %s %q: %v", table, PropRetention, v, err).WithNames(table).
					WithHint("write the retention as Delta does, e.g. 'interval 7 days', or pass --retain")
			}
			retention = r
		}
		if opts.Retain != nil {
			retention = *opts.Retain
		}
		current, err := store.TableGeneration(table)
		if err != nil {
			return nil, err
		}
		var past []batch
		for _, b := range batches[table] {
			at, ok := superseded[table][b.gen]
			if b.gen >= current || !ok || at.After(now.Add(-retention)) {
				continue
			}
			past = append(past, b)
			removing[b.seq] = true
		}
		plans = append(plans, Vacuumed{Table: table, Retention: retention})
		candidates = append(candidates, past)
	}
	kept := map[uint64]bool{}
	for seq, stored := range selects {
		if !removing[seq] {
			for _, s := range stored {
				kept[s] = true
			}
		}
	}
	// The rows a stream state holds the identities of stay while its event
	// holds them, even where this vacuum removes them (stream states go
	// last): a later vacuum removes those rows.
	for _, s := range stateSelects {
		kept[s] = true
	}
	// Selections go first, so that a vacuum cut short never leaves one
	// whose rows are gone.
	out := make([]Vacuumed, len(plans))
	var removals [3][][]uint64 // the selections, then the rest, then the stream states, by table
	for i, v := range plans {
		var sels, rest []uint64
		for _, b := range candidates[i] {
			if kept[b.seq] {
				v.Kept++
				continue
			}
			if len(v.Generations) == 0 || v.Generations[len(v.Generations)-1] != b.gen {
				v.Generations = append(v.Generations, b.gen)
			}
			v.Batches++
			v.Rows += b.rows
			v.Bytes += b.bytes
			if selects[b.seq] != nil {
				sels = append(sels, b.seq)
			} else {
				rest = append(rest, b.seq)
			}
		}
		out[i] = v
		removals[0], removals[1] = append(removals[0], sels), append(removals[1], rest)
	}
	// The stream states of the tables' flows: what no restart reads, once
	// superseded longer ago than the table's retention.
	for i, v := range out {
		var seqs []uint64
		for _, flow := range slices.Sorted(maps.Keys(stateTable)) {
			if stateTable[flow] != v.Table {
				continue
			}
			cp, err := store.Checkpoint(flow)
			if err != nil {
				return nil, err
			}
			evs := states[flow]
			for j, e := range evs {
				evs[j].snapshot = e.snapshot || partsFrom[e.seq]
			}
			var nextSnapshot time.Time // of the current generation, after the event at hand
			var gone []uint64
			for j := len(evs) - 1; j >= 0; j-- { // from the last, to know each event's next snapshot
				e := evs[j]
				var unread time.Time // since when no restart reads e
				switch {
				case e.gen < cp.Generation:
					for g, at := range restarted[flow] {
						if g > e.gen && (unread.IsZero() || at.Before(unread)) {
							unread = at
						}
					}
				case e.gen == cp.Generation && e.seq < cp.StreamStateFrom:
					unread = nextSnapshot
				}
				if e.snapshot && e.gen == cp.Generation {
					nextSnapshot = e.at
				}
				if e.bytes == 0 || unread.IsZero() || unread.After(now.Add(-v.Retention)) {
					continue // no identities (or removed already), or read, or within the retention
				}
				gone = append(gone, e.seq)
				out[i].StateEvents++
				out[i].StateBytes += e.bytes
			}
			slices.Reverse(gone)
			seqs = append(seqs, gone...)
		}
		removals[2] = append(removals[2], seqs)
	}
	if opts.DryRun {
		return out, nil
	}
	for _, byTable := range removals {
		for i, seqs := range byTable {
			if len(seqs) == 0 {
				continue
			}
			if _, err := store.RemoveRows(ctx, seqs, domain.RowsRemoved{At: now.UTC(), Retention: out[i].Retention.String()}); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// ParseRetention reads a retention as Delta's properties write it:
// "interval 7 days", "7 days", "168 hours", or a Go duration ("168h").
func ParseRetention(s string) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSpace(strings.TrimPrefix(t, "interval"))
	if d, err := time.ParseDuration(t); err == nil && d >= 0 {
		return d, nil
	}
	n, unit, ok := strings.Cut(t, " ")
	count, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || count < 0 {
		return 0, fmt.Errorf("not a duration")
	}
	units := map[string]time.Duration{"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour}
	u, ok := units[strings.TrimSuffix(strings.TrimSpace(unit), "s")]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (seconds, minutes, hours, days or weeks)", unit)
	}
	return time.Duration(count) * u, nil
}
