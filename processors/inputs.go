package processors

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// sourceOf is the source behind one input of a query: a table of the
// pipeline, or an external source.
func (u *update) sourceOf(in domain.Input) domain.Source {
	if in.Dataset != "" {
		if in.Streaming {
			u.committed.addReader(in.Dataset)
		}
		return &tableSource{store: u.store, table: in.Dataset, streaming: in.Streaming, committed: u.committed}
	}
	switch src := in.Source.(type) {
	case EventLog:
		r := &eventLogReader{store: u.store}
		if u.g.Continuous {
			// a continuous update's readers of the log see it up to the
			// last commit of the other tables: their own commits are no
			// news to recompute for
			r.upto = func() uint64 { return u.committed.lastExcept(u.logReaderTargets()) }
		}
		return r
	case TableChanges:
		r := &feedReader{store: u.store, of: src, schema: u.feedSchema(src.Table)}
		u.keep(r) // it keeps the table's fold from one micro-batch to the next
		return r
	}
	return in.Source
}

// stopReading uncounts the streams of a flow's query over the pipeline's
// tables, once the flow has ended (see sourceOf).
func (u *update) stopReading(q *domain.Query) {
	for _, in := range append([]domain.Input{q.Input}, q.Side...) {
		if in.Dataset != "" && in.Streaming {
			u.committed.dropReader(in.Dataset)
		}
	}
}

// flowInputs is what a flow reads: its query's main input and its side
// inputs. The read step of a micro-batch reads them all, one batch each;
// the transform step makes the query's rows of them.
//
// Offsets are the main input's, so a streaming flow advances through its
// main input, and its side inputs are read whole at each micro-batch. A
// materialized view (whole) with side inputs plans the end of every input,
// listed, so that it recomputes when any of them changed.
type flowInputs struct {
	main  domain.Source
	sides []domain.Source
	whole bool
}

func (in *flowInputs) String() string {
	names := []string{in.main.String()}
	for _, side := range in.sides {
		names = append(names, side.String())
	}
	return strings.Join(names, " with ")
}

// listsEnds reports whether offsets list the end of every input.
func (in *flowInputs) listsEnds() bool { return in.whole && len(in.sides) > 0 }

// itemSource is the main input when it is an ItemSource read in ranges.
func (in *flowInputs) itemSource() (domain.ItemSource, bool) {
	is, ok := in.main.(domain.ItemSource)
	return is, ok && !in.whole
}

// items lists what a micro-batch ending at end reads of the main input's
// items, for the store to record when the micro-batch commits.
func (in *flowInputs) items(end domain.Offset) ([]domain.ItemRead, error) {
	if is, ok := in.itemSource(); ok {
		return is.Items(end)
	}
	return nil, nil
}

// reading returns the inputs with the main input planning against what
// state says the flow's committed micro-batches read.
func (in *flowInputs) reading(state domain.ReadState) *flowInputs {
	is, ok := in.itemSource()
	if !ok {
		return in
	}
	bound := *in
	bound.main = is.Reading(state)
	return &bound
}

// plan plans the micro-batch after start, within limit.
func (in *flowInputs) plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	if !in.listsEnds() {
		return in.main.Plan(ctx, start, limit)
	}
	ends := make([]domain.Offset, 0, 1+len(in.sides))
	any := false
	for _, src := range append([]domain.Source{in.main}, in.sides...) {
		end, ok, err := src.Plan(ctx, nil, limit)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			end = nil
		}
		any = any || ok
		ends = append(ends, end)
	}
	if !any {
		return nil, false, nil
	}
	out, err := json.Marshal(ends)
	return out, err == nil, err
}

// read reads the micro-batch from start to end: one batch per input, main
// first; nil for an input that has nothing yet.
func (in *flowInputs) read(ctx context.Context, start, end domain.Offset) ([]*domain.Batch, error) {
	batches := make([]*domain.Batch, 1+len(in.sides))
	if in.listsEnds() {
		var ends []domain.Offset
		if err := json.Unmarshal(end, &ends); err != nil || len(ends) != len(batches) {
			return nil, domain.Errorf(domain.CodeProjectionMismatch, "the offset %s does not list the ends of %d inputs", end, len(batches))
		}
		for i, src := range append([]domain.Source{in.main}, in.sides...) {
			if ends[i] == nil || string(ends[i]) == "null" {
				continue
			}
			b, err := src.Read(ctx, nil, ends[i])
			if err != nil {
				return nil, err
			}
			batches[i] = b
		}
		return batches, nil
	}
	b, err := in.main.Read(ctx, start, end)
	if err != nil {
		return nil, err
	}
	batches[0] = b
	for i, side := range in.sides {
		sideEnd, ok, err := side.Plan(ctx, nil, domain.ReadLimit{})
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if batches[i+1], err = side.Read(ctx, nil, sideEnd); err != nil {
			return nil, err
		}
	}
	return batches, nil
}

// feedSchema is the schema of a table's change feed as the graph declares
// the table (its columns as the batches evolved them otherwise).
func (u *update) feedSchema(table string) domain.Schema {
	if ds := u.g.Datasets[table]; ds != nil && ds.Schema != nil {
		return FeedSchema(*ds.Schema)
	}
	if s, err := u.store.TableSchema(table); err == nil && s != nil {
		return FeedSchema(*s)
	}
	return FeedSchema(domain.Schema{})
}

// logReaderTargets are the datasets of the flows that read event_log().
func (u *update) logReaderTargets() map[string]bool {
	out := map[string]bool{}
	for _, f := range u.g.Flows {
		if f.Query == nil {
			continue
		}
		for _, in := range f.Query.Inputs() {
			if _, ok := in.Source.(EventLog); ok {
				out[f.Target] = true
			}
		}
	}
	return out
}
