package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// Query is what a flow computes: one read, then transforms in order. Build
// one with ReadStream, Read, StreamFrom or BatchFrom and chain Filter, Map and
// Transform. Queries are values: each method returns a new Query and leaves
// the receiver as it was, so a query can be shared as the base of several.
type Query struct {
	q domain.Query
}

// ReadStream reads a dataset of the pipeline as a stream: each micro-batch
// gets the rows committed to it since the flow's checkpoint
// (spark.readStream.table).
func ReadStream(dataset string) Query {
	return Query{q: domain.Query{Input: domain.Input{Dataset: dataset, Streaming: true}}}
}

// Read reads a dataset of the pipeline as a batch: the whole dataset as it is
// when the flow runs (spark.read.table). Once flows and materialized views
// read this way.
func Read(dataset string) Query {
	return Query{q: domain.Query{Input: domain.Input{Dataset: dataset}}}
}

// StreamFrom reads an external source as a stream: each micro-batch gets what
// is new since the flow's checkpoint.
func StreamFrom(src domain.Source) Query {
	return Query{q: domain.Query{Input: domain.Input{Source: src, Streaming: true}}}
}

// BatchFrom reads an external source as a batch: everything it holds when the
// flow runs, in one micro-batch.
func BatchFrom(src domain.Source) Query {
	return Query{q: domain.Query{Input: domain.Input{Source: src}}}
}

func (q Query) with(t domain.Transform) Query {
	ts := make([]domain.Transform, len(q.q.Transforms), len(q.q.Transforms)+1)
	copy(ts, q.q.Transforms)
	q.q.Transforms = append(ts, t)
	return q
}

// Version declares the version of what the query computes. Go functions
// cannot be compared, so a change of them is told only by a new version: a
// materialized view whose version changed is recomputed, and a streaming
// flow whose version changed continues from its checkpoint, saying so in the
// update's planning_information (run a full refresh to reprocess).
func (q Query) Version(v string) Query {
	q.q.Version = v
	return q
}

// WithWatermark bounds how late the stream's rows may be: the watermark is
// the greatest value of column (a TIMESTAMP) the flow read, less delay; rows
// older than it are dropped and counted (withWatermark). It applies to the
// stream as read, before the query's transforms.
func (q Query) WithWatermark(column string, delay time.Duration) Query {
	w := &domain.Watermark{Column: column, EventTime: columnOf(column), Delay: delay}
	if old := q.q.Input.Watermark; old != nil {
		w.DedupOn = old.DedupOn
	}
	q.q.Input.Watermark = w
	return q
}

// DropDuplicatesWithinWatermark keeps the first row of each identity (the
// values of columns) and drops its later rows while its state lives: until
// the watermark passes the kept row's event time plus the delay
// (dropDuplicatesWithinWatermark). It needs WithWatermark.
func (q Query) DropDuplicatesWithinWatermark(columns ...string) Query {
	w := &domain.Watermark{}
	if old := q.q.Input.Watermark; old != nil {
		*w = *old
	}
	w.DedupOn = columns
	q.q.Input.Watermark = w
	return q
}

// columnOf evaluates to a column of the batch, by name.
type columnOf string

func (c columnOf) Eval(b *domain.Batch) (*domain.Column, error) {
	j := b.Schema.Index(string(c))
	if j < 0 {
		return nil, domain.Errorf(domain.CodeUnresolvedColumn, "the watermark's column %s is not in the stream (it has %v)", string(c), b.Schema.Names()).WithNames(string(c))
	}
	return b.Columns[j], nil
}

// Transform adds a transform over whole batches. It must be deterministic:
// after a crash the same batch is transformed again and must give the same
// rows.
func (q Query) Transform(t domain.Transform) Query { return q.with(t) }

// Filter keeps the rows for which keep returns true.
func (q Query) Filter(keep func(r Row) bool) Query {
	return q.with(domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		idx := make([]int, 0, b.Len())
		for i := 0; i < b.Len(); i++ {
			if keep(Row{b: b, i: i}) {
				idx = append(idx, i)
			}
		}
		if len(idx) == b.Len() {
			return b, nil
		}
		return b.Select(idx), nil
	}))
}

// Map turns each row into a row of schema out. An error from fn fails the
// micro-batch (nothing of it is committed) and names the row.
func (q Query) Map(out domain.Schema, fn func(r Row) ([]domain.Value, error)) Query {
	return q.with(domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		res := domain.NewBatch(out, b.Len())
		for i := 0; i < b.Len(); i++ {
			vals, err := fn(Row{b: b, i: i})
			if err != nil {
				return nil, domain.Wrap(domain.CodeUserFunctionFailed, err, fmt.Sprintf("map function on row %d of the batch", i))
			}
			if err := res.AppendRow(vals...); err != nil {
				return nil, domain.Wrap(domain.CodeUserFunctionFailed, err, fmt.Sprintf("map function result for row %d does not fit its schema", i))
			}
		}
		return res, nil
	}))
}

// Row is one row of a batch, seen by Filter and Map functions.
type Row struct {
	b *domain.Batch
	i int
}

// Get returns the value of the named column (case-insensitive), or NULL when
// there is no such column.
func (r Row) Get(column string) domain.Value {
	j := r.b.Schema.Index(column)
	if j < 0 {
		return domain.Null()
	}
	return r.b.Columns[j].Value(r.i)
}

// Value returns the value of the column at position j.
func (r Row) Value(j int) domain.Value { return r.b.Columns[j].Value(r.i) }

// Values returns the row's values in schema order.
func (r Row) Values() []domain.Value { return r.b.Row(r.i) }

// Schema is the schema of the row's batch.
func (r Row) Schema() domain.Schema { return r.b.Schema }
