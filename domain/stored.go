package domain

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"
)

// A batch read from a table remembers which stored batches its rows are,
// and a batch that only keeps some of them, in their order, remembers which
// it keeps. A table whose micro-batch is such a batch (a streaming table
// that filters or deduplicates another, a quarantine's kept rows) commits
// it as a Selection of the stored rows, a few bytes a row, rather than
// encoding, compressing and writing every value a second time. Readers get
// the same rows either way.
//
// What makes this safe: sluice's own operators never change a batch once
// built (they return new batches, or the one they were given); only
// Select, Concat, KeepRowsOf and SameColumnsAs carry the origin on, and
// every other way of making a batch starts without one; the methods that
// do change a batch (Extend, AppendRow) drop it; what a user's transform
// returns is taken for new rows (see KeepsSelections); a batch of no rows
// notes none; and a batch whose schema is no longer the stored one's,
// field for field, is not a selection of them (Selection says so).

// storedOrigin is where a batch's rows are stored.
type storedOrigin struct {
	schema  Schema // the stored batches' schema, all alike
	table   string
	batches []StoredBatch
	// keep lists the rows of the stored batches, end to end, that the
	// batch holds, in ascending order; nil when it holds them all.
	keep []int
}

// StoredBatch is a committed batch of a table's own rows: the seq of its
// batch_committed event and its number of rows.
type StoredBatch struct {
	Seq  uint64
	Rows int
}

// Selection is a batch's rows as rows of batches stored before it.
type Selection struct {
	// Table is the table the stored batches belong to.
	Table   string
	Batches []StoredBatch
	// Keep lists the rows kept, ascending, of the stored batches end to
	// end; nil keeps every row.
	Keep []int
}

// Total is the number of rows of the stored batches, end to end.
func (s Selection) Total() int {
	n := 0
	for _, b := range s.Batches {
		n += b.Rows
	}
	return n
}

// Len is the number of rows the selection keeps.
func (s Selection) Len() int {
	if s.Keep == nil {
		return s.Total()
	}
	return len(s.Keep)
}

// SetStored notes that b holds exactly the rows of table's batch committed
// at seq, as stored: what a reader of the table sets on a batch it read or
// took from memory.
func (b *Batch) SetStored(table string, seq uint64) {
	if len(b.Columns) == 0 || b.Len() == 0 { // no rows to keep (Concat passes it by)
		b.origin = nil
		return
	}
	b.origin = &storedOrigin{schema: b.Schema, table: table, batches: []StoredBatch{{Seq: seq, Rows: b.Len()}}}
}

// Selection returns b's rows as a selection of stored rows, when they are
// one: b's schema is still the stored batches' own.
func (b *Batch) Selection() (Selection, bool) {
	o := b.origin
	if o == nil || len(b.Columns) == 0 || !b.Schema.Equal(o.schema) {
		return Selection{}, false
	}
	return Selection{Table: o.table, Batches: o.batches, Keep: o.keep}, true
}

// KeepRowsOf notes that b holds the rows keep of src, in that order, so that
// b is a selection of the rows src is stored as, when src's are stored and
// keep ascends. For an operator that builds the rows itself.
func (b *Batch) KeepRowsOf(src *Batch, keep []int) {
	b.origin = nil
	o := src.origin
	if o == nil || len(keep) != b.Len() {
		return
	}
	if narrowed, ok := o.narrowed(keep, src.Len()); ok {
		b.origin = &storedOrigin{schema: o.schema, table: o.table, batches: o.batches, keep: narrowed}
	}
}

// narrowed is keep, rows of a batch of n rows stored as o says, as rows of
// o's stored batches end to end; ok is false unless keep ascends within n.
func (o *storedOrigin) narrowed(keep []int, n int) ([]int, bool) {
	for i := 1; i < len(keep); i++ {
		if keep[i] <= keep[i-1] {
			return nil, false
		}
	}
	out := make([]int, len(keep))
	for i, k := range keep {
		if k < 0 || k >= n {
			return nil, false
		}
		if o.keep != nil {
			k = o.keep[k]
		}
		out[i] = k
	}
	return out, true
}

// SelectionOf is the rows keep of b (ascending) as a selection of the
// stored rows b is, when b's rows are stored and keep ascends: what
// KeepRowsOf notes on a batch of those rows, without the batch.
func (b *Batch) SelectionOf(keep []int) (Selection, bool) {
	sel, ok := b.Selection()
	if !ok || len(keep) == 0 {
		return Selection{}, false
	}
	if sel.Keep, ok = b.origin.narrowed(keep, b.Len()); !ok {
		return Selection{}, false
	}
	return sel, true
}

// SameColumnsAs notes that b is src under another schema, when b holds
// src's own columns in src's order: a projection of every column (SELECT
// *). Whether the schema is still the stored one is for Selection to say.
func (b *Batch) SameColumnsAs(src *Batch) {
	b.origin = nil
	if len(b.Columns) != len(src.Columns) || b.Len() != src.Len() {
		return
	}
	for j, c := range b.Columns {
		if c != src.Columns[j] {
			return
		}
	}
	b.origin = src.origin
}

// Unstored is b, taken for new rows: b itself when it notes no stored
// rows, else a copy that does not.
func (b *Batch) Unstored() *Batch {
	if b == nil || b.origin == nil {
		return b
	}
	out := *b
	out.origin = nil
	return &out
}

// concatOrigin is the origin of batches joined end to end, when each has
// one, of one table and one schema, and they are not the same stored batch
// twice. A batch of no rows adds none, whatever its origin.
func concatOrigin(batches []*Batch) *storedOrigin {
	var parts []*Batch
	for _, b := range batches {
		if b.Len() > 0 {
			parts = append(parts, b)
		}
	}
	if len(parts) == 0 || parts[0].origin == nil {
		return nil
	}
	first := parts[0].origin
	out := &storedOrigin{schema: first.schema, table: first.table}
	if len(parts) == 1 { // the others are empty
		if !parts[0].Schema.Equal(first.schema) { // Concat matched its columns by name
			return nil
		}
		out.batches, out.keep = first.batches, first.keep
		return out
	}
	all := true
	last := uint64(0) // the seq of the last stored batch so far
	for _, p := range parts {
		o := p.origin
		if o == nil || o.table != first.table || !o.schema.Equal(first.schema) || !p.Schema.Equal(first.schema) || o.batches[0].Seq <= last {
			return nil
		}
		last = o.batches[len(o.batches)-1].Seq
		all = all && o.keep == nil
	}
	total := 0
	for _, p := range parts {
		o := p.origin
		if !all {
			if o.keep == nil {
				for i := range p.Len() {
					out.keep = append(out.keep, total+i)
				}
			} else {
				for _, k := range o.keep {
					out.keep = append(out.keep, total+k)
				}
			}
		}
		for _, sb := range o.batches {
			total += sb.Rows
		}
		out.batches = append(out.batches, o.batches...)
	}
	return out
}

// selectionVersion leads an encoded selection.
const selectionVersion = 1

// EncodeSelection encodes a selection as a batch_committed event's payload:
// the version, the number of stored batches, each one's seq and rows, the
// number of rows kept, then, unless every row is kept, a bitmap of the rows
// kept (bit i%8 of byte i/8 for row i of the stored batches end to end).
func EncodeSelection(s Selection) []byte {
	out := make([]byte, 0, 16+len(s.Batches)*12+len(s.Keep)/4)
	out = append(out, selectionVersion)
	out = binary.AppendUvarint(out, uint64(len(s.Batches)))
	for _, b := range s.Batches {
		out = binary.AppendUvarint(out, b.Seq)
		out = binary.AppendUvarint(out, uint64(b.Rows))
	}
	out = binary.AppendUvarint(out, uint64(s.Len()))
	if s.Keep == nil {
		return out
	}
	bitmap := make([]byte, (s.Total()+7)/8)
	for _, k := range s.Keep {
		bitmap[k/8] |= 1 << (k % 8)
	}
	return append(out, bitmap...)
}

// maxSelectionRows bounds what a selection may claim, so that a damaged
// payload cannot ask for a bitmap larger than memory.
const maxSelectionRows = 1 << 40

// DecodeSelection decodes what EncodeSelection wrote (the table is the
// event's to give). It never panics on bad input: damage is STORE_CORRUPT.
func DecodeSelection(p []byte) (Selection, error) {
	var s Selection
	bad := func(format string, args ...any) (Selection, error) {
		return Selection{}, Errorf(CodeStoreCorrupt, "a stored selection of rows: "+format, args...).
			WithHint("run `sluice doctor` to see what else is damaged; restore the store from a backup")
	}
	if len(p) == 0 || p[0] != selectionVersion {
		return bad("unknown version")
	}
	p = p[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	n, ok := next()
	if !ok || n == 0 || n > uint64(len(p)) {
		return bad("no stored batches")
	}
	total := uint64(0)
	for range n {
		seq, ok1 := next()
		rows, ok2 := next()
		if !ok1 || !ok2 || seq == 0 || rows == 0 || rows > maxSelectionRows || total+rows > maxSelectionRows {
			return bad("a stored batch cut short or out of range")
		}
		if k := len(s.Batches); k > 0 && seq <= s.Batches[k-1].Seq {
			return bad("stored batches out of order")
		}
		s.Batches = append(s.Batches, StoredBatch{Seq: seq, Rows: int(rows)})
		total += rows
	}
	kept, ok := next()
	if !ok || kept == 0 || kept > total {
		return bad("%d rows kept of %d", kept, total)
	}
	if len(p) == 0 && kept == total {
		return s, nil
	}
	if uint64(len(p)) != (total+7)/8 {
		return bad("a bitmap of %d bytes for %d rows", len(p), total)
	}
	ones := 0
	for _, c := range p {
		ones += bits.OnesCount8(c)
	}
	if uint64(ones) != kept || (total%8 != 0 && p[len(p)-1]>>(total%8) != 0) {
		return bad("the bitmap keeps %d rows, not %d", ones, kept)
	}
	s.Keep = make([]int, 0, kept)
	for i, c := range p {
		for c != 0 {
			s.Keep = append(s.Keep, 8*i+bits.TrailingZeros8(c))
			c &= c - 1
		}
	}
	return s, nil
}

// EachSource reads, with get, each stored batch the selection committed at
// event at keeps rows of, checks it is one, and calls fn with it (when fn
// is not nil): a batch_committed event of the selection's table before it,
// of its own rows (not a selection, not AUTO CDC changes), holding the rows
// the selection counts. Rows vacuum removed are ROWS_VACUUMED; anything
// else amiss is STORE_CORRUPT.
func (s Selection) EachSource(at uint64, get func(seq uint64) (*Event, error), fn func(i int, ev *Event) error) error {
	for i, sb := range s.Batches {
		bad := func(why string) error {
			return Errorf(CodeStoreCorrupt, "the rows of event %d are rows of the batch of %s at event %d, which %s", at, s.Table, sb.Seq, why).
				WithHint("run `sluice doctor` to see what else is damaged; restore the store from a backup").WithNames(s.Table)
		}
		if sb.Seq >= at {
			return bad("comes after it")
		}
		ev, err := get(sb.Seq)
		if err != nil {
			return Wrap(CodeOf(err), err, fmt.Sprintf("the batch of %s at event %d, which the rows of event %d keep rows of", s.Table, sb.Seq, at))
		}
		bc := ev.Details.BatchCommitted
		switch {
		case ev.Type != EventBatchCommitted || bc == nil || bc.Target != s.Table || bc.Selects != "" || bc.Changes != nil:
			return bad("is not a batch of its own rows")
		case bc.RowsRemoved != nil:
			return Errorf(CodeRowsVacuumed, "the rows of event %d are rows of the batch of %s at event %d, which vacuum removed at %s",
				at, s.Table, sb.Seq, bc.RowsRemoved.At.Format(time.RFC3339)).WithNames(s.Table)
		case len(ev.Data) == 0:
			return bad("holds no rows")
		case bc.NumRows != int64(sb.Rows):
			return bad(fmt.Sprintf("holds %d rows, not %d", bc.NumRows, sb.Rows))
		}
		if fn != nil {
			if err := fn(i, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// Rows is the batch of the selection's rows, given the stored batches'
// rows (each with its seq noted by SetStored), in order.
func (s Selection) Rows(stored []*Batch) (*Batch, error) {
	if len(stored) != len(s.Batches) {
		return nil, fmt.Errorf("%d stored batches for a selection of %d", len(stored), len(s.Batches))
	}
	for i, b := range stored {
		if b.Len() != s.Batches[i].Rows {
			return nil, Errorf(CodeStoreCorrupt, "a selection of rows counts %d rows in the batch at event %d, which holds %d", s.Batches[i].Rows, s.Batches[i].Seq, b.Len()).
				WithHint("run `sluice doctor` to see what else is damaged; restore the store from a backup")
		}
	}
	all, err := Concat(stored...)
	if err != nil {
		return nil, err
	}
	if s.Keep == nil {
		return all, nil
	}
	return all.Select(s.Keep), nil
}
