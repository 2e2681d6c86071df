package processors

import (
	"context"
	"encoding/json"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// TableChanges stands for table_changes('t') in a query: the change feed
// of a table of the pipeline (see ScanChanges), read as a stream from the
// flow's checkpoint. The update that runs the flow reads its own store
// (see sourceOf), after the table's writers.
type TableChanges struct {
	Table string
	// Since leaves out the batches committed at or before this event seq.
	Since uint64
}

func (c TableChanges) String() string { return "table_changes(" + c.Table + ")" }

func (c TableChanges) Plan(context.Context, domain.Offset, domain.ReadLimit) (domain.Offset, bool, error) {
	return nil, false, unbound(c)
}

func (c TableChanges) Read(context.Context, domain.Offset, domain.Offset) (*domain.Batch, error) {
	return nil, unbound(c)
}

// feedReader reads a table's change feed; an offset is the event seq up to
// which the feed was read ({"seq": N}).
type feedReader struct {
	store  *eventstore.Store
	of     TableChanges
	schema domain.Schema
	feed   *changeFeed // the fold so far, kept from one micro-batch to the next
}

func (r *feedReader) String() string { return r.of.String() }

// Plan returns the log's last seq when a batch was committed to the table
// after start.
func (r *feedReader) Plan(ctx context.Context, start domain.Offset, _ domain.ReadLimit) (domain.Offset, bool, error) {
	from, err := parseEventLogPosition(start)
	if err != nil {
		return nil, false, err
	}
	from = max(from, r.of.Since)
	last := r.store.LastSeq()
	if last <= from {
		return nil, false, nil
	}
	found := false
	err = r.store.Scan(ctx, eventstore.Filter{From: from + 1, To: last, Dataset: r.of.Table, Types: []domain.EventType{domain.EventBatchCommitted}}, func(*domain.Event) error {
		found = true
		return errFound
	})
	if err != nil && err != errFound {
		return nil, false, err
	}
	if !found {
		return nil, false, nil
	}
	out, err := json.Marshal(eventLogPosition{Seq: last})
	return out, err == nil, err
}

// errFound stops a scan that found what it looked for.
var errFound = domain.Errorf(domain.CodeInvalidDefinition, "found")

// Read returns what the batches committed to the table after start, up to
// end, did: its rows with _change_type, _commit_version and
// _commit_timestamp.
func (r *feedReader) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	from, to, err := parseEventLogRange(start, end)
	if err != nil {
		return nil, err
	}
	out := domain.NewBatch(r.schema, 0)
	if r.feed == nil {
		r.feed = &changeFeed{store: r.store, table: r.of.Table}
	}
	err = r.feed.scan(ctx, max(from, r.of.Since), to, func(b *domain.Batch) error {
		var err error
		out, err = domain.Concat(out, b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Close drops the fold the reader kept (and its spill, if any).
func (r *feedReader) Close() {
	if r.feed != nil {
		r.feed.close()
	}
}
