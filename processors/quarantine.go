package processors

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// The quarantine of a table (its property pipelines.quarantine = 'true')
// is the streaming table QuarantineTable(table): the rows its drop rules
// failed, as the flows made them, and where they came from. Each row goes
// there in the commit of the micro-batch that dropped it, and leaves it in
// the commit of the retry that lets it into the table: exactly once, in
// one or the other.

// Quarantine columns, after the row's own.
const (
	qFailed  = "_failed_expectations"
	qFlow    = "_flow"
	qBatch   = "_batch_id"
	qUpdate  = "_update_id"
	qAt      = "_quarantined_at"
	qRetries = "_retries"
)

var quarantineFields = []domain.Field{
	{Name: qFailed, Type: domain.ListOf(domain.TypeString)},
	{Name: qFlow, Type: domain.TypeString, Nullable: true},
	{Name: qBatch, Type: domain.TypeInt64, Nullable: true},
	{Name: qUpdate, Type: domain.TypeString, Nullable: true},
	{Name: qAt, Type: domain.TypeTimestamp},
	{Name: qRetries, Type: domain.TypeInt64},
}

// quarantined is where a quarantined row came from.
type quarantined struct {
	flow    string
	batch   int64
	update  string
	at      int64 // microseconds
	retries int64
}

// quarantineRows makes the quarantine table's rows of rows, each with the
// rules it failed and where it came from.
func quarantineRows(rows *domain.Batch, failed [][]string, from []quarantined) (*domain.Batch, error) {
	fields := append(append([]domain.Field{}, rows.Schema.Fields...), quarantineFields...)
	out := domain.NewBatch(domain.NewSchema(fields...), rows.Len())
	for i := range rows.Len() {
		names := make([]domain.Value, len(failed[i]))
		for j, n := range failed[i] {
			names[j] = domain.String(n)
		}
		q := from[i]
		vals := append(rows.Row(i), domain.List(names...), domain.String(q.flow), domain.Int(q.batch), domain.String(q.update),
			domain.TimestampMicros(q.at), domain.Int(q.retries))
		if err := out.AppendRow(vals...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// quarantineEvent is the batch_committed of rows into table's quarantine,
// by its writer's next batch (after that, when the same commit holds
// earlier batches of the writer): the rows' schema evolves the table's as
// a flow's would, or, afresh (the commit resets the table first), is the
// table's.
func quarantineEvent(store *eventstore.Store, base *domain.Event, table string, rows *domain.Batch, after int, afresh bool) (*domain.Event, error) {
	qt, writer := domain.QuarantineTable(table), domain.QuarantineWriter(table)
	cp, err := store.Checkpoint(writer)
	if err != nil {
		return nil, err
	}
	gen, err := store.TableGeneration(qt)
	if err != nil {
		return nil, err
	}
	info := &domain.BatchInfo{Flow: writer, Target: qt, BatchID: cp.NextBatchID + int64(after), Generation: cp.Generation, TableGeneration: gen, NumRows: int64(rows.Len())}
	if afresh {
		info.TableGeneration++ // the same commit resets the table first
	}
	if rows, err = fitTable(store, info, rows, afresh); err != nil {
		return nil, err
	}
	ev := *base
	ev.Type, ev.Level = domain.EventBatchCommitted, domain.LevelInfo
	ev.Origin.FlowName, ev.Origin.DatasetName, ev.Origin.BatchID = writer, qt, &info.BatchID
	ev.Message = fmt.Sprintf("%d rows of %q are in its quarantine %q (batch %d).", rows.Len(), table, qt, info.BatchID)
	ev.Details = domain.Details{BatchCommitted: info}
	if ev.Data, err = domain.EncodeBatch(rows); err != nil {
		return nil, err
	}
	return &ev, nil
}

// fitTable evolves a table's schema to take rows (afresh: the commit
// replaces the table), and returns the rows in the table's column order.
func fitTable(store *eventstore.Store, info *domain.BatchInfo, rows *domain.Batch, afresh bool) (*domain.Batch, error) {
	var cur *domain.Schema
	if !afresh {
		var err error
		if cur, err = store.TableSchema(info.Target); err != nil {
			return nil, err
		}
	}
	if cur == nil {
		info.Schema = &rows.Schema
		return rows, nil
	}
	next, err := domain.EvolveSchema(info.Target, *cur, rows.Schema, false)
	if err != nil {
		return nil, err
	}
	if !next.Equal(*cur) {
		info.Schema = &next
	}
	return domain.Conform(info.Target, rows, next)
}

// QuarantineResult says what a retry did.
type QuarantineResult struct {
	// Moved rows passed the table's rules now and are in the table.
	Moved int
	// Kept rows fail them still and stay in the quarantine.
	Kept int
}

// RetryQuarantine passes the rows of table's quarantine through the
// table's expectations as the graph has them now: the rows that pass go
// into the table and leave the quarantine, in one commit; the rest stay,
// with the rules they fail now and their retries counted. A row that fails
// a fail rule fails the retry, which then changes nothing.
func RetryQuarantine(ctx context.Context, store *eventstore.Store, g *domain.Graph, table string) (QuarantineResult, error) {
	var res QuarantineResult
	if id, running := active.Load(store); running {
		return res, domain.Errorf(domain.CodeUpdateRunning, "update %s is running on this storage: a retry would race its commits to the quarantine", shortID(id.(string))).
			WithHint("retry once the update has ended")
	}
	ds := g.Datasets[table]
	if ds == nil || ds.Properties[domain.PropQuarantine] != "true" {
		return res, domain.Errorf(domain.CodeInvalidDefinition, "%q has no quarantine", table).
			WithHint(fmt.Sprintf("set TBLPROPERTIES ('%s' = 'true') on the table, or name the table whose quarantine to retry", domain.PropQuarantine)).WithNames(table)
	}
	qt := domain.QuarantineTable(table)
	held, err := ReadTable(ctx, store, qt, 0)
	if err != nil {
		return res, err
	}
	if held.Len() == 0 {
		return res, nil // nothing to retry
	}
	// the rows as the table takes them (every column but the quarantine's,
	// wherever schema evolution put them), and where each came from
	var keep []int
	for j, f := range held.Schema.Fields {
		if !slices.ContainsFunc(quarantineFields, func(q domain.Field) bool { return q.Name == f.Name }) {
			keep = append(keep, j)
		}
	}
	rows := held.SelectColumns(keep)
	from := make([]quarantined, held.Len())
	col := func(name string) *domain.Column { return held.Columns[held.Schema.Index(name)] }
	for i := range from {
		from[i] = quarantined{flow: col(qFlow).Value(i).AsString(), batch: col(qBatch).Value(i).AsInt(), update: col(qUpdate).Value(i).AsString(),
			at: col(qAt).Value(i).AsInt(), retries: col(qRetries).Value(i).AsInt() + 1}
	}
	kept, rejected := rows, (*domain.Rejected)(nil)
	var quality *domain.DataQuality
	switch c := ds.Checker.(type) {
	case domain.Quarantiner:
		if kept, rejected, quality, err = c.CheckRejected(rows); err != nil {
			return res, err
		}
	case nil:
	default:
		return res, domain.Errorf(domain.CodeInvalidDefinition, "the expectations of %q cannot say which rows they drop", table).WithNames(table)
	}
	res.Moved = kept.Len()
	base := &domain.Event{Origin: domain.Origin{PipelineName: g.Name}}
	var evs []*domain.Event
	next := 0 // the writer's batches in this commit
	if res.Moved > 0 {
		// 1. the rows that pass, into the table
		writer := domain.QuarantineWriter(table)
		cp, err := store.Checkpoint(writer)
		if err != nil {
			return res, err
		}
		gen, err := store.TableGeneration(table)
		if err != nil {
			return res, err
		}
		info := &domain.BatchInfo{Flow: writer, Target: table, BatchID: cp.NextBatchID, Generation: cp.Generation, TableGeneration: gen, NumRows: int64(kept.Len()), DataQuality: quality}
		if kept, err = fitTable(store, info, kept, false); err != nil {
			return res, err
		}
		into := *base
		into.Type, into.Level = domain.EventBatchCommitted, domain.LevelInfo
		into.Origin.FlowName, into.Origin.DatasetName, into.Origin.BatchID = writer, table, &info.BatchID
		into.Message = fmt.Sprintf("A retry of the quarantine of %q let %d rows into it (batch %d).", table, kept.Len(), info.BatchID)
		into.Details = domain.Details{BatchCommitted: info}
		if into.Data, err = domain.EncodeBatch(kept); err != nil {
			return res, err
		}
		evs, next = append(evs, &into), 1
	}
	// 2. the quarantine afresh, with the rows that still fail
	qgen, err := store.TableGeneration(qt)
	if err != nil {
		return res, err
	}
	reset := *base
	reset.Type, reset.Level = domain.EventTableReset, domain.LevelInfo
	reset.Origin.DatasetName = qt
	reset.Message = fmt.Sprintf("A retry of the quarantine of %q moved %d rows out of %q.", table, res.Moved, qt)
	reset.Details = domain.Details{TableReset: &domain.TableReset{Table: qt, Generation: qgen + 1, Cause: "quarantine_retry"}}
	evs = append(evs, &reset)
	if rejected != nil {
		res.Kept = rejected.Rows.Len()
		left := make([]quarantined, res.Kept)
		for k, i := range rejected.Index {
			left[k] = from[i]
		}
		stay, err := quarantineRows(rejected.Rows, rejected.Failed, left)
		if err != nil {
			return res, err
		}
		ev, err := quarantineEvent(store, base, table, stay, next, true)
		if err != nil {
			return res, err
		}
		evs = append(evs, ev)
	}
	if _, err := store.Append(ctx, evs...); err != nil {
		return res, err
	}
	return res, nil
}
