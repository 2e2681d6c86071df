package processors

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// A table's rows are the rows of its committed batches of the current
// generation: the log holds them, nothing else does. Reading a table is a
// scan of its batch_committed events.

// tableOffset is a position in a table's log: every batch committed at or
// before Seq, of generation Gen.
type tableOffset struct {
	Seq uint64 `json:"seq"`
	Gen int64  `json:"generation"`
}

func parseTableOffset(o domain.Offset) (tableOffset, error) {
	var t tableOffset
	if len(o) == 0 {
		return t, nil
	}
	if err := json.Unmarshal(o, &t); err != nil {
		return t, domain.Wrap(domain.CodeInvalidUpdateState, err, "reading a table offset")
	}
	return t, nil
}

func (t tableOffset) encode() domain.Offset {
	b, _ := json.Marshal(t)
	return b
}

// defaultStreamRows bounds a micro-batch of a table stream when the flow sets
// no bound, so that a reader catching up on a large table does not hold it
// all in memory at once.
const defaultStreamRows = 250_000

// tableSource reads a dataset of the pipeline: as a stream, the batches
// committed after the checkpoint; as a batch, the whole table.
type tableSource struct {
	store     *eventstore.Store
	table     string
	streaming bool
	committed *updateBatches // what the update committed, to plan without reading the log
}

// updateBatches lists the batches an update commits to its tables, so
// that a stream reading one plans its micro-batches from the list instead
// of reading the batches' events (with their rows) from the log.
//
// It also holds the rows of the latest batches, as committed, for the
// streams that read a table while its writers run (see the scheduler's
// leaders): such a stream takes them from memory rather than decoding what
// was just encoded. A batch is let go once every stream of the update that
// reads its table has read it, or gone past it (read its range from the
// log, or skipped it as of another generation). A batch that would take
// the held batches past heldMaxBytes is not held: a stream reads it from
// the log. Memory keeps the batches the streams read next: when a writer
// runs ahead of its readers, letting the oldest go instead would make them
// read every batch from the log, each let go just before they come to it.
type updateBatches struct {
	mu      sync.Mutex
	since   uint64 // the log's last seq when the update started: the list holds what came after
	tables  map[string][]batchRef
	readers map[string]int // the streams of the update that read each table

	// A table's list keeps its latest maxListed batches at most, so that a
	// continuous update's list does not grow with its age: floor is the
	// last seq dropped from it (the log has those batches).
	floor     map[string]uint64
	maxListed int

	held    map[heldKey]*heldRows
	heldSz  int            // the held rows' size in memory (memorySize)
	heldBy  map[string]int // heldSz by table
	maxHeld int            // the bound of heldSz: heldMaxBytes
}

// batchRef is a committed batch. Its fields never change once listed, so
// that a list handed out (after) is read without the lock.
type batchRef struct {
	seq   uint64
	gen   int64
	rows  int64
	empty bool // no data: no rows, no columns
	// changes: the batch holds AUTO CDC changes, which are folded with the
	// table's history, so never held.
	changes bool
}

type heldKey struct {
	table string
	seq   uint64
}

// heldRows are a batch's rows held for the streams that read its table.
type heldRows struct {
	batch *domain.Batch
	size  int
	reads int // the streams that took them
}

// heldMaxBytes bounds the memory of the batches held for the streams that
// read them (see memorySize).
const heldMaxBytes = 32 << 20

func newUpdateBatches(since uint64) *updateBatches {
	return &updateBatches{since: since, tables: map[string][]batchRef{}, readers: map[string]int{},
		floor: map[string]uint64{}, maxListed: maxListed, held: map[heldKey]*heldRows{}, heldBy: map[string]int{}, maxHeld: heldMaxBytes}
}

// maxListed bounds a table's list of committed batches (40 bytes each).
const maxListed = 1 << 16

// known is the seq after which the list holds every batch of table.
func (c *updateBatches) known(table string) uint64 {
	return max(c.since, c.floor[table])
}

// lastExcept is the seq of the last batch this update committed to a table
// not in skip; the seq the update started at when there is none.
func (c *updateBatches) lastExcept(skip map[string]bool) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.since
	for table, refs := range c.tables {
		if !skip[table] && len(refs) > 0 {
			last = max(last, refs[len(refs)-1].seq)
		}
	}
	return last
}

// addReader counts a stream of the update that reads table.
func (c *updateBatches) addReader(table string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readers[table]++
}

// dropReader uncounts a stream of table that reads no more in this update
// (its flow ended). Reads are counted, not who read: a held batch read as
// many times as there are streams left is let go, and a stream left that
// had not read it reads it from the log.
func (c *updateBatches) dropReader(table string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readers[table]--
	for k, h := range c.held {
		if k.table == table && h.reads >= c.readers[table] {
			c.letGo(k)
		}
	}
}

// add records a committed batch, holding its rows (when not nil) for the
// update's streams that read its table.
func (c *updateBatches) add(table string, ref batchRef, rows *domain.Batch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	refs := append(c.tables[table], ref)
	if len(refs) > c.maxListed { // the older half goes: the log has it
		cut := len(refs) / 2
		c.floor[table] = refs[cut-1].seq
		for _, r := range refs[:cut] {
			c.letGo(heldKey{table: table, seq: r.seq})
		}
		refs = append([]batchRef(nil), refs[cut:]...)
	}
	c.tables[table] = refs
	if rows == nil || ref.empty || ref.changes || c.readers[table] == 0 {
		return
	}
	k := heldKey{table: table, seq: ref.seq}
	h := &heldRows{batch: rows, size: memorySize(rows)}
	if c.heldSz+h.size > c.maxHeld {
		return
	}
	c.held[k] = h
	c.heldSz += h.size
	c.heldBy[table] += h.size
}

// behind reports whether the streams reading table have yet to take more
// of its batches than half of what memory may hold: then the table's
// writer should not read ahead.
func (c *updateBatches) behind(table string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readers[table] > 0 && c.heldBy[table] > c.maxHeld/2
}

func (c *updateBatches) letGo(k heldKey) {
	if h := c.held[k]; h != nil {
		c.heldSz -= h.size
		c.heldBy[k.table] -= h.size
		delete(c.held, k)
	}
}

// after returns the batches committed to table after seq, when the list
// knows them all (seq is not before the update started, nor before the
// batches the list dropped).
func (c *updateBatches) after(table string, seq uint64) ([]batchRef, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if seq < c.known(table) {
		return nil, false
	}
	refs := c.tables[table]
	i := sort.Search(len(refs), func(i int) bool { return refs[i].seq > seq })
	return refs[i:], true
}

// take returns the parts of table's batches of generation gen committed
// in (from, to], in commit order: the rows of each batch held, and ranges
// of the log for the rest (what came before the update or the list
// dropped, what memory let go). It counts the read: a batch every reader
// has read is let go. It reports false when the range is for the log
// alone: it holds AUTO CDC changes (folded with the table's history), or
// it ends at a batch not listed yet.
func (c *updateBatches) take(table string, from, to uint64, gen int64) ([]heldPart, bool, error) {
	if c == nil {
		return nil, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []heldPart
	fromLog := func(lo, hi uint64) {
		if n := len(parts); n > 0 && parts[n-1].rows == nil {
			parts[n-1].to = hi // one scan for consecutive batches let go
			return
		}
		parts = append(parts, heldPart{from: lo, to: hi})
	}
	if known := c.known(table); from < known { // what came before the update, or the list dropped
		if hi := min(to, known); from < hi {
			fromLog(from+1, hi)
		}
		from = known
	}
	refs := c.tables[table]
	if to > from {
		// A batch is listed just after its commit, under its table's lock,
		// so every batch of the table before to is listed once to is; a
		// range planned from the log may end at a batch not listed yet.
		if j := sort.Search(len(refs), func(j int) bool { return refs[j].seq >= to }); j == len(refs) || refs[j].seq != to {
			c.passed(table, from, to)
			return nil, false, nil
		}
	}
	i := sort.Search(len(refs), func(i int) bool { return refs[i].seq > from })
	var taken []heldKey
	for ; i < len(refs) && refs[i].seq <= to; i++ {
		ref := refs[i]
		if ref.changes {
			c.passed(table, from, to)
			return nil, false, nil
		}
		k := heldKey{table: table, seq: ref.seq}
		if ref.gen != gen || ref.empty {
			if c.held[k] != nil {
				taken = append(taken, k) // gone past: the stream does not come back for it
			}
			continue
		}
		h := c.held[k]
		if h == nil {
			fromLog(ref.seq, ref.seq)
			continue
		}
		// The stream gets its own batch over the shared columns: a
		// source's counts (rescued, malformed) are not carried on, as the
		// log does not carry them.
		b := *h.batch
		b.Rescued, b.Malformed = 0, 0
		parts = append(parts, heldPart{from: ref.seq, to: ref.seq, rows: &b})
		taken = append(taken, k)
	}
	for _, k := range taken {
		c.read(k)
	}
	return parts, true, nil
}

// read counts a read of the held batch k, letting it go once every
// reader has read it.
func (c *updateBatches) read(k heldKey) {
	if h := c.held[k]; h != nil {
		if h.reads++; h.reads >= c.readers[k.table] {
			c.letGo(k)
		}
	}
}

// passed counts as read the batches of table held in (from, to], a range
// a stream reads from the log: it does not come back for them, and they
// must not stay held for it.
func (c *updateBatches) passed(table string, from, to uint64) {
	for k := range c.held {
		if k.table == table && k.seq > from && k.seq <= to {
			c.read(k)
		}
	}
}

// heldPart is a part of a range of a table's batches: the rows of one
// batch held, or (rows nil) the log's seqs [from, to] to read.
type heldPart struct {
	from, to uint64
	rows     *domain.Batch
}

// memorySize estimates the memory a batch's rows take: its slices and the
// bytes of its strings. Nested values count their headers only.
func memorySize(b *domain.Batch) int {
	n := 0
	for _, c := range b.Columns {
		n += len(c.Nulls) + 8*len(c.Ints) + 8*len(c.Floats) + 16*len(c.Strs) + 56*len(c.Values)
		for _, s := range c.Strs {
			n += len(s)
		}
	}
	return n
}

func (s *tableSource) String() string { return "table " + s.table }

// Plan finds the committed batches after start. For a stream, at most
// limit.MaxRows rows (but at least one batch), of the generation the stream
// started in: a stream whose table was fully refreshed since is an error, not
// a silent reread. For a batch read, the whole table, once.
func (s *tableSource) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err // a stopped flow plans nothing more
	}
	gen, err := s.store.TableGeneration(s.table)
	if err != nil {
		return nil, false, err
	}
	if !s.streaming {
		if len(start) > 0 {
			return nil, false, nil // a batch read takes the table once
		}
		version, err := s.store.TableVersion(s.table)
		if err != nil {
			return nil, false, err
		}
		return tableOffset{Seq: version, Gen: gen}.encode(), true, nil
	}
	from, err := parseTableOffset(start)
	if err != nil {
		return nil, false, err
	}
	if len(start) > 0 && from.Gen != gen {
		return nil, false, domain.Errorf(domain.CodeUpstreamReset,
			"table %q was fully refreshed (generation %d, now %d) since this flow last read it as a stream", s.table, from.Gen, gen).
			WithHint(fmt.Sprintf("run a full refresh of the flow's target too, so it rereads %q from its new start, or reset the flow's checkpoint", s.table)).
			WithNames(s.table)
	}
	if limit.MaxRows == 0 {
		limit.MaxRows = defaultStreamRows
	}
	last := s.store.LastSeq()
	if from.Seq >= last {
		return nil, false, nil
	}
	var end uint64
	var rows int64
	if refs, ok := s.committed.after(s.table, from.Seq); ok {
		for _, ref := range refs {
			if ref.seq > last || ref.gen != gen {
				continue
			}
			if end > 0 && rows+ref.rows > limit.MaxRows {
				break
			}
			end, rows = ref.seq, rows+ref.rows
		}
		if end == 0 {
			return nil, false, nil
		}
		return tableOffset{Seq: end, Gen: gen}.encode(), true, nil
	}
	errStop := fmt.Errorf("stop")
	err = s.store.Scan(ctx, eventstore.Filter{From: from.Seq + 1, To: last, Dataset: s.table, Types: []domain.EventType{domain.EventBatchCommitted}},
		func(ev *domain.Event) error {
			bc := ev.Details.BatchCommitted
			if bc == nil || bc.TableGeneration != gen {
				return nil
			}
			if end > 0 && rows+bc.NumRows > limit.MaxRows {
				return errStop
			}
			end, rows = ev.Seq, rows+bc.NumRows
			return nil
		})
	if err != nil && err != errStop {
		return nil, false, err
	}
	if end == 0 {
		return nil, false, nil
	}
	return tableOffset{Seq: end, Gen: gen}.encode(), true, nil
}

// Read returns the rows of the batches in (start, end] of end's generation;
// a batch read returns the whole table as of end.
func (s *tableSource) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	from, err := parseTableOffset(start)
	if err != nil {
		return nil, err
	}
	to, err := parseTableOffset(end)
	if err != nil {
		return nil, err
	}
	if !s.streaming {
		from = tableOffset{}
	}
	if to.Seq == 0 {
		return &domain.Batch{}, nil // nothing committed in the generation
	}
	if s.streaming {
		if parts, ok, err := s.committed.take(s.table, from.Seq, to.Seq, to.Gen); err != nil || ok {
			if err != nil {
				return nil, err
			}
			return readParts(ctx, s.store, s.table, parts, to.Gen)
		}
	}
	return readBatches(ctx, s.store, s.table, from.Seq+1, to.Seq, to.Gen)
}

// readParts concatenates the rows of parts of a table's batches of
// generation gen: those memory holds as they are, and each range of the
// log read batch by batch, so that a range holding none of the table's
// batches adds nothing.
func readParts(ctx context.Context, store *eventstore.Store, table string, parts []heldPart, gen int64) (*domain.Batch, error) {
	var batches []*domain.Batch
	for _, p := range parts {
		if p.rows != nil {
			batches = append(batches, p.rows)
			continue
		}
		err := scanBatches(ctx, store, table, p.from, p.to, gen, func(b *domain.Batch) error {
			batches = append(batches, b)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return domain.Concat(batches...)
}

// readBatches concatenates the rows of the table's batches of generation gen
// committed in [from, to].
func readBatches(ctx context.Context, store *eventstore.Store, table string, from, to uint64, gen int64) (*domain.Batch, error) {
	return readParts(ctx, store, table, []heldPart{{from: from, to: to}}, gen)
}

// scanBatches calls fn with the rows of each of the table's batches of
// generation gen committed in [from, to], in commit order. The rows of a
// table AUTO CDC flows write are the fold of its changes: fn gets them in
// key order, tableChunk rows at a time, once every batch is folded; such a
// table is read whole, from its first batch.
func scanBatches(ctx context.Context, store *eventstore.Store, table string, from, to uint64, gen int64, fn func(*domain.Batch) error) error {
	var state *cdc.State
	defer func() {
		if state != nil {
			_ = state.Close()
		}
	}()
	err := store.Scan(ctx, eventstore.Filter{From: from, To: to, Dataset: table, Types: []domain.EventType{domain.EventBatchCommitted}},
		func(ev *domain.Event) error {
			bc := ev.Details.BatchCommitted
			if bc == nil || bc.TableGeneration != gen {
				return nil
			}
			if r := bc.RowsRemoved; r != nil && bc.NumRows > 0 {
				return domain.Errorf(domain.CodeRowsVacuumed, "the rows of %s as of event %d (generation %d) were removed by vacuum at %s (retention %s)",
					table, to, gen, r.At.Format(time.RFC3339), r.Retention).WithNames(table)
			}
			if len(ev.Data) == 0 {
				return nil
			}
			b, err := rowsOf(store, ev)
			if err != nil {
				return err
			}
			if bc.Changes == nil {
				return fn(b)
			}
			if from > 1 {
				return domain.Errorf(domain.CodeCDCTargetNotStream, "table %q is written by an AUTO CDC flow; its rows are updated and deleted, so it cannot be read from event %d on", table, from).WithNames(table)
			}
			_, err = foldBatch(&state, ev, b, false, 0)
			return err
		})
	if err != nil || state == nil {
		return err
	}
	return state.Rows(tableChunk, fn)
}

// rowsOf is the rows of a batch_committed event of a table: its own,
// decoded, or, when it is a selection of another table's stored rows (see
// domain.Selection), those rows. Either way the batch notes where its rows
// are stored, so that a flow keeping some of them commits a selection too.
func rowsOf(store *eventstore.Store, ev *domain.Event) (*domain.Batch, error) {
	bc := ev.Details.BatchCommitted
	if bc.Selects == "" {
		b, err := domain.DecodeBatch(ev.Data)
		if err != nil {
			return nil, err
		}
		if bc.Changes == nil {
			b.SetStored(bc.Target, ev.Seq)
		}
		return b, nil
	}
	sel, err := domain.DecodeSelection(ev.Data)
	if err != nil {
		return nil, domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the rows of %s at event %d", bc.Target, ev.Seq))
	}
	sel.Table = bc.Selects
	stored := make([]*domain.Batch, len(sel.Batches))
	err = sel.EachSource(ev.Seq, store.Get, func(i int, src *domain.Event) error {
		b, err := domain.DecodeBatch(src.Data)
		if err != nil {
			return domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the rows of %s at event %d", sel.Table, src.Seq))
		}
		b.SetStored(sel.Table, src.Seq)
		stored[i] = b
		return nil
	})
	if err != nil {
		return nil, domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the rows of %s at event %d", bc.Target, ev.Seq))
	}
	return sel.Rows(stored)
}

// tableChunk is how many rows of a folded table a reader gets at a time.
const tableChunk = 65536

// ReadTable returns the rows of a stored table as of a log position: the
// batches of the generation current at asOf, committed at or before it.
// asOf 0 means now. It holds the whole table in memory: ScanTable reads it a
// batch at a time.
func ReadTable(ctx context.Context, store *eventstore.Store, table string, asOf uint64) (*domain.Batch, error) {
	if asOf == 0 {
		asOf = store.LastSeq()
	}
	gen, err := generationAt(ctx, store, table, asOf)
	if err != nil {
		return nil, err
	}
	return readBatches(ctx, store, table, 1, asOf, gen)
}

// ScanTable calls fn with the rows of each committed batch of a stored table
// as of a log position (asOf 0: now), in commit order, one batch in memory at
// a time. Each batch has the schema it was committed with (TableSchemaAt
// gives the table's). fn returning an error stops the scan with it.
func ScanTable(ctx context.Context, store *eventstore.Store, table string, asOf uint64, fn func(*domain.Batch) error) error {
	if asOf == 0 {
		asOf = store.LastSeq()
	}
	gen, err := generationAt(ctx, store, table, asOf)
	if err != nil {
		return err
	}
	return scanBatches(ctx, store, table, 1, asOf, gen, fn)
}

// TableSchemaAt returns the schema of a stored table as of a log position
// (asOf 0: now): the schema its batches evolved to in the generation current
// then; nil when the generation has no batch.
func TableSchemaAt(ctx context.Context, store *eventstore.Store, table string, asOf uint64) (*domain.Schema, error) {
	if asOf == 0 || asOf >= store.LastSeq() {
		return store.TableSchema(table)
	}
	gen, err := generationAt(ctx, store, table, asOf)
	if err != nil {
		return nil, err
	}
	var schema *domain.Schema
	err = store.Scan(ctx, eventstore.Filter{To: asOf, Dataset: table, Types: []domain.EventType{domain.EventBatchCommitted}},
		func(ev *domain.Event) error {
			if bc := ev.Details.BatchCommitted; bc != nil && bc.TableGeneration == gen && bc.Schema != nil {
				schema = bc.Schema
			}
			return nil
		})
	return schema, err
}

// generationAt returns the generation of a table as of a log position. It
// walks the table_reset events (few), not the table's (its batches, with
// their rows).
func generationAt(ctx context.Context, store *eventstore.Store, table string, asOf uint64) (int64, error) {
	var gen int64
	err := store.Scan(ctx, eventstore.Filter{To: asOf, Types: []domain.EventType{domain.EventTableReset}},
		func(ev *domain.Event) error {
			if tr := ev.Details.TableReset; tr != nil && tr.Table == table {
				gen = tr.Generation
			}
			return nil
		})
	return gen, err
}
