package cdc

import (
	"container/heap"
	"sort"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// Result is what applying a micro-batch of changes did.
type Result struct {
	// Delta holds the changes that altered the state, in DeltaSchema: what
	// the micro-batch records, and what Replay folds.
	Delta *domain.Batch
	// Upserted and Deleted count the table rows inserted or updated and
	// deleted (SCD 1), or the changes applied as upserts and deletes (SCD 2).
	Upserted, Deleted int64
}

// changeCols are the columns of a micro-batch of changes.
type changeCols struct {
	stored          []*domain.Column
	seq, del, trunc *domain.Column
	n               int
}

// Apply applies a micro-batch of changes at commit time now: rows of the
// stored columns (in the state's stored schema, see Evolve) followed by
// ChangeSequenceColumn, ChangeDeleteColumn and ChangeTruncateColumn. The
// change with the greatest sequence wins per key whatever the arrival
// order; of two with the same sequence, the later in the batch (or in a
// later batch) wins; an exact duplicate changes nothing. ignore, when set,
// names the columns whose NULL in an update keeps the stored value.
//
// On error the state may hold part of the batch: the caller must drop the
// state and fold the log again.
func (s *State) Apply(changes *domain.Batch, ignore *domain.ColumnSet, now time.Time) (*Result, error) {
	c, err := s.columns(changes)
	if err != nil {
		return nil, err
	}
	var ignoreIdx []int
	if ignore != nil {
		ignoreIdx = ignore.Resolve(s.stored.Names())
	}
	order := make([]int, c.n)
	for i := range order {
		order[i] = i
	}
	truncates := false
	for i := 0; i < c.n; i++ {
		if c.seq.IsNull(i) {
			return nil, s.nullSequence(c, i)
		}
		if c.trunc != nil && !c.trunc.IsNull(i) && c.trunc.Ints[i] != 0 {
			truncates = true
		}
	}
	if truncates || len(ignoreIdx) > 0 {
		// A truncate, and an update filling NULLs from the row before it,
		// depend on the changes before them in sequence order.
		sort.SliceStable(order, func(a, b int) bool {
			return domain.Compare(c.seq.Value(order[a]), c.seq.Value(order[b])) < 0
		})
	}
	s.stamp++
	res := &Result{}
	if s.info.SCDType == 2 {
		err = s.apply2(c, order, ignoreIdx, res)
	} else {
		err = s.apply1(c, order, ignoreIdx, now, res)
	}
	if err != nil {
		return nil, err
	}
	if res.Delta, err = s.finishDelta(); err != nil {
		return nil, err
	}
	if err := s.collect(now); err != nil {
		return nil, err
	}
	if err := s.spillOver(); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *State) columns(b *domain.Batch) (changeCols, error) {
	n := len(s.stored.Fields)
	if len(b.Columns) < n+3 {
		return changeCols{}, domain.Errorf(domain.CodeInvalidDefinition, "a batch of changes has %d columns; the flow stores %d and adds the sequence, delete and truncate columns", len(b.Columns), n)
	}
	for i, f := range s.stored.Fields {
		if g := b.Schema.Fields[i]; g.Name != f.Name || g.Type.Kind != f.Type.Kind {
			return changeCols{}, domain.Errorf(domain.CodeInvalidDefinition, "a batch of changes has column %s %s where the stored columns have %s %s", g.Name, g.Type, f.Name, f.Type)
		}
	}
	names := []string{domain.ChangeSequenceColumn, domain.ChangeDeleteColumn, domain.ChangeTruncateColumn}
	for k, name := range names {
		if b.Schema.Fields[n+k].Name != name {
			return changeCols{}, domain.Errorf(domain.CodeInvalidDefinition, "a batch of changes has %s where %s belongs", b.Schema.Fields[n+k].Name, name)
		}
	}
	if k := b.Columns[n].Kind; k != s.info.SequenceType.Kind && k != domain.KindNull {
		return changeCols{}, domain.Errorf(domain.CodeCDCSequenceDrift, "the sequence is of type %s in this batch and %s in the table", b.Schema.Fields[n].Type, s.info.SequenceType)
	}
	c := changeCols{stored: b.Columns[:n], seq: b.Columns[n], del: b.Columns[n+1], trunc: b.Columns[n+2], n: b.Len()}
	for _, col := range []*domain.Column{c.del, c.trunc} {
		if col.Kind != domain.KindBool && col.Kind != domain.KindNull {
			return changeCols{}, domain.Errorf(domain.CodeDatatypeMismatch, "APPLY AS DELETE / TRUNCATE WHEN must be a boolean condition, not %s", col.Kind)
		}
	}
	if c.del.Kind == domain.KindNull {
		c.del = nil
	}
	if c.trunc.Kind == domain.KindNull {
		c.trunc = nil
	}
	return c, nil
}

func isTrue(c *domain.Column, i int) bool {
	return c != nil && !c.IsNull(i) && c.Ints[i] != 0
}

func (s *State) nullSequence(c changeCols, i int) error {
	what := "a truncate"
	if !isTrue(c.trunc, i) {
		if _, null := s.keyAt(s.keyColumns(c.stored), i); null < 0 {
			what = "the change of " + s.describeKey(keyValues(s.keyColumns(c.stored), i))
		} else {
			what = "a change"
		}
	}
	return domain.Errorf(domain.CodeCDCNullSequence, "%s (row %d of the batch) has a NULL sequence", what, i+1)
}

func (s *State) nullKey(c changeCols, i, col int) error {
	return domain.Errorf(domain.CodeCDCNullKey, "key column %s is NULL in row %d of the batch", s.info.Keys[col], i+1).WithNames(s.info.Keys[col])
}

// appendDelta records one change in the delta: vals (nil for none) of
// the stored columns, seq and op.
func (s *State) appendDelta(vals []domain.Value, seq domain.Value, op int64) {
	n := len(s.stored.Fields)
	for j := 0; j < n; j++ {
		v := domain.Null()
		if vals != nil {
			v = vals[j]
		}
		if err := s.delta[j].Append(v); err != nil {
			panic(err) // the values are of the stored columns' kinds
		}
	}
	s.endDelta(seq, op)
}

// appendDeltaRow records an upsert of a row in the delta, decoding the row
// straight into the delta's columns.
func (s *State) appendDeltaRow(r row, seq domain.Value) {
	r.appendTo(s.delta[:len(s.stored.Fields)])
	s.endDelta(seq, domain.ChangeUpsert)
}

func (s *State) endDelta(seq domain.Value, op int64) {
	n := len(s.stored.Fields)
	if err := s.delta[n].Append(seq); err != nil {
		panic(err) // the sequence is of the sequence's type
	}
	s.delta[n+1].Ints = append(s.delta[n+1].Ints, op)
}

// startDelta makes the delta's columns, with room for capacity changes:
// one for each key the batch touched (and each truncate).
func (s *State) startDelta(capacity int) {
	schema := s.DeltaSchema()
	s.delta = make([]*domain.Column, len(schema.Fields))
	for i, f := range schema.Fields {
		s.delta[i] = domain.NewColumn(f.Type.Kind, capacity)
	}
}

// finishDelta returns the delta as a batch.
func (s *State) finishDelta() (*domain.Batch, error) {
	b, err := domain.BatchOf(s.DeltaSchema(), s.delta)
	s.delta = nil
	return b, err
}

// touched1 is an SCD 1 key a batch touched, with what it held before.
type touched1 struct {
	e       *entry
	seq     domain.Value
	row     row
	gone    bool
	existed bool
}

func (s *State) apply1(c changeCols, order []int, ignoreIdx []int, now time.Time, res *Result) error {
	touched := s.touched[:0]
	defer func() { // kept for the next batch, so that it grows once; emptied, so that it keeps no entry alive
		clear(touched)
		s.touched = touched[:0]
	}()
	// A key's winning change is held as its row's index (entry.pend) and
	// settled, its row encoded and kept, once the batch is done: a key
	// changes many times in a batch, most changes losing to a later one.
	// A truncate reads every key's sequence: the keys pending settle before
	// it. A NULL filled from the row before needs that row: with NULLs to
	// fill, each change settles at once.
	deferred := len(ignoreIdx) == 0
	var truncSeqs []domain.Value
	touch := func(e *entry, existed bool) {
		if e.stamp != s.stamp {
			touched = append(touched, touched1{e: e, seq: e.seq, row: e.row, gone: e.gone, existed: existed})
			e.stamp = s.stamp
		}
	}
	keyCols := s.keyColumns(c.stored)
	for _, i := range order {
		seq := c.seq.Value(i)
		if isTrue(c.trunc, i) {
			if s.floor.IsNull() || domain.Compare(seq, s.floor) > 0 {
				for _, t := range touched {
					s.settle(t.e, c, ignoreIdx)
				}
				seq = own(seq)
				truncSeqs = append(truncSeqs, seq)
				if err := s.truncate(seq, touch); err != nil {
					return err
				}
			}
			continue // a truncate no newer than the last one removes nothing more
		}
		key, null := s.keyAt(keyCols, i)
		if null >= 0 {
			return s.nullKey(c, i, null)
		}
		if !s.floor.IsNull() && domain.Compare(seq, s.floor) < 0 {
			continue // older than a truncate that came after it
		}
		e, err := s.entryAt(key, keyCols, i)
		if err != nil {
			return err
		}
		switch {
		case e == nil:
			id := string(key)
			e = &entry{id: id}
			s.one[id] = e
			touch(e, false)
		case e.pend > 0: // against the batch's change that leads
			j := e.pend - 1
			cmp := domain.Compare(seq, c.seq.Value(j))
			if cmp < 0 || cmp == 0 && s.rowOf(c, i, nil, nil) == s.rowOf(c, j, nil, nil) {
				continue // older, or an exact duplicate
			}
		default:
			cmp := domain.Compare(seq, e.seq)
			if cmp < 0 || cmp == 0 && s.rowOf(c, i, e, ignoreIdx) == e.row {
				continue // older, or an exact duplicate
			}
			touch(e, true)
		}
		e.pend = i + 1
		if !deferred {
			s.settle(e, c, ignoreIdx)
		}
	}
	s.startDelta(len(truncSeqs) + len(touched))
	for _, seq := range truncSeqs {
		s.noteSeq(seq)
		s.appendDelta(nil, seq, domain.ChangeTruncate)
	}
	for _, t := range touched {
		e := t.e
		s.settle(e, c, ignoreIdx)
		hadRow := t.existed && t.row != "" && !t.gone
		if !e.gone {
			s.rehashEntry(e)
		}
		if t.existed && !e.gone && domain.Compare(e.seq, t.seq) == 0 && e.row == t.row {
			continue // the batch changed it and changed it back
		}
		switch {
		case e.gone:
			if hadRow {
				res.Deleted++
			}
			continue
		case e.row == "":
			if hadRow {
				res.Deleted++
			}
			s.appendDelta(s.keyRow(e.id), e.seq, domain.ChangeDelete)
			s.bury(e, now)
		default:
			if !hadRow || t.row != e.row {
				res.Upserted++
			}
			s.appendDeltaRow(e.row, e.seq)
		}
		s.noteSeq(e.seq)
	}
	return nil
}

// rowOf is the row change i leaves its key with: none for a delete; the
// stored columns, with the NULLs of the columns ignoreIdx filled from e's
// row when e has one.
func (s *State) rowOf(c changeCols, i int, e *entry, ignoreIdx []int) row {
	if isTrue(c.del, i) {
		return ""
	}
	r := s.encodeAt(c.stored, len(c.stored), i)
	if e != nil && e.row != "" && len(ignoreIdx) > 0 {
		s.rowBuf = fillNulls(s.rowBuf[:0], r, e.row, ignoreIdx)
		r = row(s.rowBuf)
	}
	return r
}

// settle makes the change an entry holds as pending its sequence and row.
func (s *State) settle(e *entry, c changeCols, ignoreIdx []int) {
	if e.pend == 0 {
		return
	}
	i := e.pend - 1
	e.seq, e.row, e.gone, e.pend = own(c.seq.Value(i)), s.rowOf(c, i, e, ignoreIdx), false, 0
}

// fillNulls appends to b r with the NULLs of the columns idx taken from
// prev.
func fillNulls(b []byte, r, prev row, idx []int) []byte {
	vals, old := r.values(nil), prev.values(nil)
	for _, j := range idx {
		if vals[j].IsNull() {
			vals[j] = old[j]
		}
	}
	for _, v := range vals {
		b = appendValue(b, v)
	}
	return b
}

// keyRow is a row of the stored columns holding only the key id, valid
// until the next call.
func (s *State) keyRow(id string) []domain.Value {
	row := s.keyRowBuf[:0]
	for range s.stored.Fields {
		row = append(row, domain.Null())
	}
	for k, v := range s.keyOf(id) {
		row[s.keyIdx[k]] = v
	}
	s.keyRowBuf = row
	return row
}

// bury records a tombstone for collection.
func (s *State) bury(e *entry, now time.Time) {
	e.gcAt = s.gcMeasure(e.seq, now)
	heap.Push(&s.tombs, tomb{at: e.gcAt, id: e.id})
}

// truncate removes every key whose sequence is older than seq, and makes
// changes older than seq ignored from now on.
func (s *State) truncate(seq domain.Value, touch func(*entry, bool)) error {
	if s.floor.IsNull() || domain.Compare(seq, s.floor) > 0 {
		s.floor = seq
	}
	if s.spilled > 0 { // bring back the spilled keys it removes
		var orders []string
		err := s.cold.each(func(order, v []byte) error {
			if !s.thawed[string(order)] && domain.Compare(decodeEntry(v).seq, s.floor) < 0 {
				orders = append(orders, string(order))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, o := range orders {
			if _, err := s.thawEntry(o); err != nil {
				return err
			}
		}
	}
	var gone []string
	for k, e := range s.one {
		if domain.Compare(e.seq, s.floor) < 0 {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone) // the batch touches them in a stable order
	for _, k := range gone {
		e := s.one[k]
		if touch != nil {
			touch(e, true)
		}
		e.gone = true
		s.sum -= e.hash
		e.hash = 0
		delete(s.one, k)
	}
	return nil
}
