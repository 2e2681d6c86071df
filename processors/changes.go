package processors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// A table that AUTO CDC flows write holds, in each batch_committed event,
// the changes that batch made to the table's keyed state (see package cdc),
// not rows to append. Its rows are the fold of those changes: the flows
// writing it keep the fold in memory for the update (changeTable), and
// readers fold the log up to the point they read.

// changeTable is the keyed state of a table AUTO CDC flows write, shared by
// those flows for the update and guarded by the table's commit lock.
type changeTable struct {
	gen    int64
	state  *cdc.State // nil before the table's first change
	loaded bool
}

// close drops the state (and its spill).
func (t *changeTable) close() error {
	if t.state == nil {
		return nil
	}
	err := t.state.Close()
	t.state = nil
	return err
}

// foldChanges folds the changes recorded for a table in generation gen,
// committed in [1, to]: nil when there are none.
func foldChanges(ctx context.Context, store *eventstore.Store, table string, gen int64, to uint64, budget int64) (*cdc.State, error) {
	var state *cdc.State
	err := store.Scan(ctx, eventstore.Filter{To: to, Dataset: table, Types: []domain.EventType{domain.EventBatchCommitted}},
		func(ev *domain.Event) error {
			bc := ev.Details.BatchCommitted
			if bc == nil || bc.TableGeneration != gen || bc.Changes == nil || len(ev.Data) == 0 {
				return nil
			}
			if bc.RowsRemoved != nil {
				return domain.Errorf(domain.CodeRowsVacuumed, "the changes of %s as of event %d (generation %d) were removed by vacuum", table, ev.Seq, gen).WithNames(table)
			}
			delta, err := domain.DecodeBatch(ev.Data)
			if err != nil {
				return err
			}
			_, err = foldBatch(&state, ev, delta, false, budget)
			return err
		})
	if err != nil && state != nil {
		_ = state.Close()
		state = nil
	}
	return state, err
}

// foldBatch folds a recorded batch of changes (the data of ev) into
// *state, which the table's first batch makes with the memory budget
// budget (see newState); with feed it returns what the batch did to the
// table's rows (see cdc.State.Replay). The caller closes the state.
func foldBatch(state **cdc.State, ev *domain.Event, delta *domain.Batch, feed bool, budget int64) (*domain.Batch, error) {
	info := ev.Details.BatchCommitted.Changes
	if *state == nil {
		s, err := newState(*info, cdc.StoredOf(delta.Schema), budget)
		if err != nil {
			return nil, err
		}
		*state = s
	}
	(*state).SetTombstoneGC(info.TombstoneGCSeconds) // the table property as it was at that batch
	return (*state).Replay(delta, ev.Timestamp, feed)
}

// DefaultStateMemory is how many bytes of keys the state of a table AUTO
// CDC flows write keeps in memory, by default, before it spills the rest
// to disk (Options.StateMemory).
const DefaultStateMemory = 1 << 30

// newState makes the empty keyed state of a table, which keeps about
// budget bytes of keys in memory (DefaultStateMemory when 0, every key
// when negative) and spills the rest to the system's temporary directory.
func newState(info domain.ChangeInfo, stored domain.Schema, budget int64) (*cdc.State, error) {
	s, err := cdc.New(info, stored)
	if err != nil {
		return nil, err
	}
	switch {
	case budget == 0:
		s.SpillBeyond(DefaultStateMemory, "")
	case budget > 0:
		s.SpillBeyond(budget, "")
	}
	return s, nil
}

// changeState returns the keyed state of the flow's target in generation
// gen, folding the log when the update has not yet.
func (r *flowRun) changeState(ctx context.Context, gen int64) (*changeTable, error) {
	t := r.s.changes[r.f.Target]
	if t.loaded && t.gen == gen {
		return t, nil
	}
	state, err := foldChanges(ctx, r.u.store, r.f.Target, gen, r.u.store.LastSeq(), r.u.opts.StateMemory)
	if err != nil {
		return nil, err
	}
	if err := t.close(); err != nil {
		_ = state.Close()
		return nil, err
	}
	t.gen, t.state, t.loaded = gen, state, true
	return t, nil
}

// changeInfo is what the flow records of how it applies changes, for the
// sequence type of this batch.
func (r *flowRun) changeInfo(seq domain.Type) (domain.ChangeInfo, error) {
	spec := r.f.Changes
	info := domain.ChangeInfo{Keys: spec.Keys, SCDType: spec.SCDType, SequenceType: seq, TrackHistory: spec.TrackHistory, TombstoneGCSeconds: domain.DefaultTombstoneGCSeconds}
	if v, ok := r.target.Properties[domain.PropTombstoneGC]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return info, domain.Errorf(domain.CodeInvalidDefinition, "table %q sets %s to %q, not a whole number of seconds", r.target.Name, domain.PropTombstoneGC, v).WithNames(r.target.Name)
		}
		info.TombstoneGCSeconds = n
	}
	return info, nil
}

// checkDrift refuses a batch whose flow applies changes otherwise than the
// table was built with.
func (r *flowRun) checkDrift(have, want domain.ChangeInfo) error {
	table := r.f.Target
	switch {
	case !cdc.SameKeys(have.Keys, want.Keys):
		return domain.Errorf(domain.CodeCDCKeyDrift, "flow %q applies changes to %q by the keys (%s); the table was built by (%s)", r.f.Name, table,
			strings.Join(want.Keys, ", "), strings.Join(have.Keys, ", ")).WithNames(r.f.Name, table)
	case have.SCDType != want.SCDType || !have.TrackHistory.Same(want.TrackHistory):
		return domain.Errorf(domain.CodeCDCStoredAsDrift, "flow %q stores %q as SCD type %d%s; the table was built as SCD type %d%s", r.f.Name, table,
			want.SCDType, tracked(want.TrackHistory), have.SCDType, tracked(have.TrackHistory)).WithNames(r.f.Name, table)
	case want.SequenceType.Kind != domain.KindNull && !have.SequenceType.Equal(want.SequenceType):
		return domain.Errorf(domain.CodeCDCSequenceDrift, "flow %q sequences its changes by a %s; the table %q was built with a %s sequence", r.f.Name,
			want.SequenceType, table, have.SequenceType).WithNames(r.f.Name, table)
	}
	return nil
}

func tracked(c *domain.ColumnSet) string {
	switch {
	case c == nil:
		return ""
	case c.Except:
		return " tracking history on * EXCEPT (" + strings.Join(c.Columns, ", ") + ")"
	}
	return " tracking history on (" + strings.Join(c.Columns, ", ") + ")"
}

// commitChanges applies a micro-batch of changes to the flow's target and
// commits what changed, in one append with the batch's flow_progress: the
// changes that altered the table's keyed state go into the batch_committed
// event, so that folding the log gives the table. The caller holds the
// table's commit lock. On any error the table's state is dropped, to be
// folded again from the log.
func (r *flowRun) commitChanges(ctx context.Context, info *domain.BatchInfo, gen int64, rows *domain.Batch) (evs []*domain.Event, err error) {
	t, err := r.changeState(ctx, gen)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			t.loaded, t.state = false, nil
		}
	}()
	snapshot := r.f.Changes.Snapshot
	n, seqType := len(rows.Schema.Fields), domain.TypeTimestamp // a snapshot's version: when it was applied
	var version domain.Value                                    // of a snapshot from a snapshot source: in its offset
	if snapshot && r.f.Query.Input.Streaming {
		var so domain.SnapshotOffset
		if err := json.Unmarshal(info.End, &so); err != nil {
			return nil, domain.Wrap(domain.CodeInvalidUpdateState, err, "reading the version of a snapshot")
		}
		version, seqType = domain.Int(so.Version), domain.TypeInt64
	}
	if !snapshot {
		if n -= 3; n < 0 {
			return nil, domain.Errorf(domain.CodeInvalidDefinition, "flow %q gave a batch without the sequence, delete and truncate columns of an AUTO CDC flow", r.f.Name).WithNames(r.f.Name)
		}
		seqType = rows.Schema.Fields[n].Type
	}
	want, err := r.changeInfo(seqType)
	if err != nil {
		return nil, err
	}
	incoming := domain.NewSchema(rows.Schema.Fields[:n]...)
	var declared *domain.Schema
	if r.target.Schema != nil {
		d := cdc.StoredColumns(*r.target.Schema)
		declared = &d
	}
	base := declared
	if t.state != nil {
		if err := r.checkDrift(t.state.Info(), want); err != nil {
			return nil, err
		}
		s := t.state.Stored()
		base = &s
	}
	stored := incoming
	if base != nil {
		if stored, err = domain.EvolveSchema(r.f.Target, *base, incoming, declared != nil); err != nil {
			return nil, err
		}
	}
	if t.state == nil {
		if want.SequenceType.Kind == domain.KindNull {
			if rows.Len() > 0 {
				return nil, domain.Errorf(domain.CodeCDCNullSequence, "flow %q: every change of batch %d has a NULL sequence", r.f.Name, info.BatchID).WithNames(r.f.Name)
			}
			return nil, nil // nothing to apply, nor a type to build the table with
		}
		if t.state, err = newState(want, stored, r.u.opts.StateMemory); err != nil {
			return nil, err
		}
	} else if err := t.state.Evolve(stored); err != nil {
		return nil, err
	}
	t.state.SetTombstoneGC(want.TombstoneGCSeconds) // the table property, as it is now
	now := time.Now().UTC()
	var changes *domain.Batch
	if snapshot {
		part, err := domain.BatchOf(incoming, rows.Columns[:n])
		if err == nil {
			part, err = domain.Conform(r.f.Target, part, stored)
		}
		if err == nil {
			if version.IsNull() {
				version = domain.Timestamp(now.Truncate(time.Microsecond))
			}
			changes, err = t.state.SnapshotChanges(part, version)
		}
		if err != nil {
			return nil, r.changeError(err, info.BatchID)
		}
	} else if changes, err = conformChanges(r.f.Target, rows, stored); err != nil {
		return nil, err
	}
	res, err := t.state.Apply(changes, r.f.Changes.IgnoreNullUpdates, now)
	if err != nil {
		return nil, r.changeError(err, info.BatchID)
	}
	applied := t.state.Info()
	applied.NumUpserted, applied.NumDeleted = res.Upserted, res.Deleted
	applied.StateFingerprint = t.state.Fingerprint()
	info.Changes = &applied
	info.NumRows = int64(res.Delta.Len())
	schema := t.state.TableSchema()
	cur, err := r.u.store.TableSchema(r.f.Target)
	if err != nil {
		return nil, err
	}
	if cur == nil || !cur.Equal(schema) {
		info.Schema = &schema
	}
	ev := r.batchEvent(domain.EventBatchCommitted, *info)
	ev.Timestamp = now // the fold collects tombstones by the commit's time
	ev.Message = fmt.Sprintf("Flow %q committed batch %d to %q: %d rows upserted, %d deleted.", r.f.Name, info.BatchID, r.f.Target, res.Upserted, res.Deleted)
	ev.Details.BatchCommitted = info
	if ev.Data, err = domain.EncodeBatch(res.Delta); err != nil {
		return nil, err
	}
	progress := r.u.flowProgress(r.f, domain.FlowRunning, "", &domain.FlowMetrics{NumOutputRows: res.Upserted + res.Deleted, NumUpsertedRows: res.Upserted, NumDeletedRows: res.Deleted})
	id := info.BatchID
	progress.Origin.BatchID = &id
	progress.Level = domain.LevelMetrics
	progress.Message = fmt.Sprintf("Flow %q applied batch %d to %q: %d rows upserted, %d deleted.", r.f.Name, info.BatchID, r.f.Target, res.Upserted, res.Deleted)
	if n := t.state.Spilled(); n > 0 {
		progress.Message += fmt.Sprintf(" The table's state holds %d keys in memory and %d spilled to disk (state_memory_mib).", t.state.InMemory(), n)
	}
	progress.Details.FlowProgress.DataQuality = info.DataQuality
	return []*domain.Event{ev, progress}, nil
}

// changeError names the flow and the batch in an error applying changes.
func (r *flowRun) changeError(err error, batch int64) error {
	var de *domain.Error
	if errors.As(err, &de) {
		out := *de
		out.Message = fmt.Sprintf("flow %q, batch %d: %s", r.f.Name, batch, de.Message)
		out.Names = append([]string{r.f.Name, r.f.Target}, de.Names...)
		return &out
	}
	return err
}

// conformChanges returns a batch of changes with its stored columns in the
// stored schema (and its order), the three change columns after them.
func conformChanges(table string, rows *domain.Batch, stored domain.Schema) (*domain.Batch, error) {
	n := len(rows.Schema.Fields) - 3
	part, err := domain.BatchOf(domain.NewSchema(rows.Schema.Fields[:n]...), rows.Columns[:n])
	if err != nil {
		return nil, err
	}
	if part, err = domain.Conform(table, part, stored); err != nil {
		return nil, err
	}
	fields := append(append([]domain.Field(nil), part.Schema.Fields...), rows.Schema.Fields[n:]...)
	cols := append(append([]*domain.Column(nil), part.Columns...), rows.Columns[n:]...)
	if rows.Len() == 0 {
		// an empty batch has columns of NULL kind: give the sequence its type
		for i := range fields[n:] {
			if cols[len(part.Columns)+i].Kind != fields[len(part.Columns)+i].Type.Kind {
				cols[len(part.Columns)+i] = domain.NewColumn(fields[len(part.Columns)+i].Type.Kind, 0)
			}
		}
	}
	return domain.BatchOf(domain.NewSchema(fields...), cols)
}

// The columns a change feed adds to a table's, as Delta's change data feed
// names them.
const (
	CommitVersionColumn   = "_commit_version"
	CommitTimestampColumn = "_commit_timestamp"
)

// FeedSchema is the schema of a table's change feed: its columns, then the
// change type, the seq of the batch's event and its time.
func FeedSchema(table domain.Schema) domain.Schema {
	fields := append([]domain.Field(nil), table.Fields...)
	fields = append(fields,
		domain.Field{Name: cdc.ChangeTypeColumn, Type: domain.TypeString},
		domain.Field{Name: CommitVersionColumn, Type: domain.TypeInt64},
		domain.Field{Name: CommitTimestampColumn, Type: domain.TypeTimestamp})
	return domain.NewSchema(fields...)
}

// ScanChanges calls fn with what each batch committed to a stored table
// did to its rows, for the batches committed after since up to asOf (0:
// now) in the generation current at asOf, in commit order: the table's
// columns (as of the batch), the change type (insert, update_preimage,
// update_postimage, delete), the batch's event seq and its time. A table
// AUTO CDC flows write gives its inserts, updates and deletes, found by
// folding its changes from its first batch; any other table, its appended
// rows as inserts.
func ScanChanges(ctx context.Context, store *eventstore.Store, table string, since, asOf uint64, fn func(*domain.Batch) error) error {
	f := &changeFeed{store: store, table: table}
	defer f.close()
	return f.scan(ctx, since, asOf, fn)
}

// changeFeed reads a table's change feed (ScanChanges) and keeps the fold
// of its AUTO CDC changes up to where it read, so that a stream of the
// feed folds, at each micro-batch, only the batches after the one before:
// folding from the table's first batch each time grew with its history.
type changeFeed struct {
	store *eventstore.Store
	table string
	gen   int64
	at    uint64     // the log position read up to; 0: nothing folded
	state *cdc.State // the fold of the table's changes up to at; nil before its first
}

// scan is ScanChanges, going on from where the feed stands when it can: in
// the same generation, with nothing after since folded yet.
func (f *changeFeed) scan(ctx context.Context, since, asOf uint64, fn func(*domain.Batch) error) error {
	if asOf == 0 {
		asOf = f.store.LastSeq()
	}
	gen, err := generationAt(ctx, f.store, f.table, asOf)
	if err != nil {
		return err
	}
	if f.at > 0 && (gen != f.gen || f.at > since || f.at > asOf) {
		f.close() // fold again from the start
	}
	f.gen = gen
	err = f.store.Scan(ctx, eventstore.Filter{From: f.at + 1, To: asOf, Dataset: f.table, Types: []domain.EventType{domain.EventBatchCommitted}},
		func(ev *domain.Event) error {
			bc := ev.Details.BatchCommitted
			if bc == nil || bc.TableGeneration != gen || len(ev.Data) == 0 || (bc.Changes == nil && ev.Seq <= since) {
				return nil
			}
			if bc.RowsRemoved != nil {
				return domain.Errorf(domain.CodeRowsVacuumed, "the changes of %s in event %d were removed by vacuum", f.table, ev.Seq).WithNames(f.table)
			}
			b, err := rowsOf(f.store, ev)
			if err != nil {
				return err
			}
			var feed *domain.Batch
			if bc.Changes == nil {
				feed, err = withColumn(b, cdc.ChangeTypeColumn, domain.String(cdc.Insert), domain.TypeString)
			} else {
				feed, err = foldBatch(&f.state, ev, b, ev.Seq > since, 0)
			}
			if err != nil || feed == nil || feed.Len() == 0 {
				return err
			}
			if feed, err = withColumn(feed, CommitVersionColumn, domain.Int(int64(ev.Seq)), domain.TypeInt64); err != nil {
				return err
			}
			if feed, err = withColumn(feed, CommitTimestampColumn, domain.Timestamp(ev.Timestamp), domain.TypeTimestamp); err != nil {
				return err
			}
			return fn(feed)
		})
	if err != nil {
		f.close() // part folded: fold again from the start
		return err
	}
	f.at = asOf
	return nil
}

// close drops the fold (and its spill, if any).
func (f *changeFeed) close() {
	if f.state != nil {
		_ = f.state.Close()
	}
	f.state, f.at = nil, 0
}

// withColumn adds a column holding v on every row.
func withColumn(b *domain.Batch, name string, v domain.Value, t domain.Type) (*domain.Batch, error) {
	col := domain.NewColumn(t.Kind, b.Len())
	for i := 0; i < b.Len(); i++ {
		if err := col.Append(v); err != nil {
			return nil, err
		}
	}
	fields := append(append([]domain.Field(nil), b.Schema.Fields...), domain.Field{Name: name, Type: t})
	return domain.BatchOf(domain.NewSchema(fields...), append(append([]*domain.Column(nil), b.Columns...), col))
}
