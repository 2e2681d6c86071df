package cdc

import (
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql"
)

// history is an SCD 2 key's state: its changes in sequence order, one per
// sequence. Its versions are the fold of them (versions): each change whose
// tracked columns differ from the current version's begins a version and
// ends the one before; a change to untracked columns only updates the
// current version; a delete ends it. Keeping the changes, not only the
// versions, is what lets a late change be spliced in exactly where it
// belongs: the history is always the one the sorted changes give.
type history struct {
	id      string // the encoded key: its key in the state's map (see keyOf)
	changes []change
	// before is the versions before the batch stamped stamp (Replay with a
	// feed).
	stamp  uint64
	before []version
}

// change is one change of an SCD 2 key, in one string: its sequence key
// (seqKey, see appendSeqKey), then its row (none for a delete); with the
// stamp of the batch that put it (Apply's; 0 for none), which tells the
// batch's first change of a sequence from a later one.
type change struct {
	data   string
	seqLen int32
	del    bool
	stamp  uint64
}

func (c change) seqKey() string { return c.data[:c.seqLen] }
func (c change) row() row       { return row(c.data[c.seqLen:]) }

// makeChange makes a change of sequence key k.
func (s *State) makeChange(k string, r row, del bool) change {
	return change{data: k + string(r), seqLen: int32(len(k)), del: del}
}

// putter is what putting changes into histories writes besides the
// histories themselves: a buffer, the fingerprint's movement, and the
// batch's pending changes. apply2 has two, each putting the changes of
// its own keys on a goroutine of its own.
type putter struct {
	buf   []byte
	sum   uint64 // what the changes put moved the fingerprint by (wrapping)
	pend  []pending2
	origs []change // the changes those replaced
}

// changeAt makes the change of row i of a batch: its sequence and, unless
// it is a delete, its stored columns, encoded in one allocation.
func (p *putter) changeAt(cols []*domain.Column, n, i int, seq domain.Value, del bool) change {
	b := appendSeqKey(p.buf[:0], seq)
	k := len(b)
	if !del {
		for j := 0; j < n; j++ {
			b = appendCell(b, cols[j], i)
		}
	}
	p.buf = b
	return change{data: string(b), seqLen: int32(k), del: del}
}

// version is one row of an SCD 2 table: the stored columns, valid from the
// sequence start until end (empty while current), as sequence keys.
type version struct {
	start, end string
	row        row
}

// versions folds a key's changes into its versions.
func (s *State) versions(h *history) []version {
	var out []version
	open := -1
	for _, c := range h.changes {
		switch {
		case c.del:
			if open >= 0 {
				out[open].end = c.seqKey()
				open = -1
			}
		case open >= 0 && s.sameTracked(out[open].row, c.row()):
			out[open].row = c.row()
		default:
			if open >= 0 {
				out[open].end = c.seqKey()
			}
			out = append(out, version{start: c.seqKey(), row: c.row()})
			open = len(out) - 1
		}
	}
	return out
}

// seqValue decodes a sequence key.
func (s *State) seqValue(k string) domain.Value {
	if k == "" {
		return domain.Null()
	}
	v, _ := decodeSeqKey(k, 0, s.info.SequenceType)
	return v
}

// versionRow is a version as a row of the table.
func (s *State) versionRow(v version) []domain.Value {
	return append(v.row.values(nil), s.seqValue(v.start), s.seqValue(v.end))
}

func (s *State) sameTracked(a, b row) bool {
	if a == b {
		return true
	}
	if len(s.trackIdx) == len(s.stored.Fields) {
		return false // every column tracked: rows of other bytes differ
	}
	s.va, s.vb = a.values(s.va), b.values(s.vb)
	for _, j := range s.trackIdx {
		if !s.va[j].Equal(s.vb[j]) {
			return false
		}
	}
	return true
}

// put places a change among a key's changes: it replaces the change of the
// same sequence (the later wins), returned as orig with had set, or is
// inserted at its place, pos. It reports false for an exact duplicate,
// which changes nothing. ignoreIdx, for an update, fills those columns'
// NULLs from the change before it.
func (s *State) put(p *putter, h *history, c change, ignoreIdx []int) (orig change, pos int, had, changed bool) {
	id, k := h.id, c.seqKey()
	n := len(h.changes)
	pos = n
	if n > 0 && h.changes[n-1].seqKey() >= k {
		pos = sort.Search(n, func(j int) bool { return h.changes[j].seqKey() >= k })
	}
	if !c.del && len(ignoreIdx) > 0 && pos > 0 && !h.changes[pos-1].del {
		p.buf = fillNulls(p.buf[:0], c.row(), h.changes[pos-1].row(), ignoreIdx)
		filled := s.makeChange(k, row(p.buf), false)
		filled.stamp = c.stamp
		c = filled
	}
	if pos < n && h.changes[pos].seqKey() == k {
		old := h.changes[pos]
		if old.del == c.del && old.data == c.data {
			return old, pos, true, false
		}
		h.changes[pos] = c
		p.sum += s.hashChange(id, c) - s.hashChange(id, old)
		return old, pos, true, true
	}
	p.sum += s.hashChange(id, c)
	if n == cap(h.changes) && n > 0 && c.stamp != 0 && h.changes[n-1].stamp == c.stamp {
		// A key changing again in the batch it last changed in (its
		// changes close together in the stream, as a CDC source's are)
		// is likely to change more: its room grows in larger steps than
		// append's first ones, one allocation and copy instead of three.
		// (A fold of the log puts unstamped changes: they grow as append
		// grows them.)
		h.changes = append(make([]change, 0, max(2*n, 8)), h.changes...)
	}
	if pos == n {
		h.changes = append(h.changes, c)
		return change{}, pos, false, true
	}
	h.changes = append(h.changes, change{})
	copy(h.changes[pos+1:], h.changes[pos:])
	h.changes[pos] = c
	return change{}, pos, false, true
}

// pending2 is a (key, sequence) a batch changed, first by its row row,
// the nth change of the batch's order: what the batch records is the last
// change of each, final. orig indexes the change it replaced in its
// putter's origs; -1 for none.
type pending2 struct {
	h              *history
	seq            string // its sequence key
	pos            int32  // where it was put among the key's changes
	row, nth, orig int32
	final          change
	changedBack    bool // final is the change it replaced: the batch changed it and changed it back
}

// putInParallelAtLeast is the fewest changes a batch puts on two
// goroutines.
var putInParallelAtLeast = 4096

func (s *State) apply2(c changeCols, order []int, ignoreIdx []int, res *Result) error {
	keyCols := s.keyColumns(c.stored)
	// First each change's history, found or made, in order: finding one
	// may bring it back from the spill, and making one adds to the map.
	// A large batch of a state that spilled nothing first looks its keys
	// up on two goroutines, which only read the map, and makes the
	// missing ones after.
	hs := s.hs[:0]
	defer func() { // kept for the next batch, so that they grow once; emptied, so that they keep no history alive
		clear(hs)
		s.hs = hs[:0]
		for i := range s.putters {
			p := &s.putters[i]
			clear(p.pend)
			clear(p.origs)
			p.pend, p.origs = p.pend[:0], p.origs[:0]
		}
	}()
	hs = slices.Grow(hs, len(order))[:len(order)]
	parts := 1
	if len(order) >= putInParallelAtLeast {
		parts = len(s.putters)
	}
	if parts > 1 && s.spilled == 0 {
		onParts(parts, func(part int) { s.lookUp(&s.putters[part], c, keyCols, order, hs, part, parts) })
	}
	for nth, i := range order {
		if isTrue(c.trunc, i) {
			return domain.Errorf(domain.CodeCDCInvalidClause, "row %d of the batch is a truncate, which an SCD type 2 table does not take", i+1)
		}
		if hs[nth] != nil {
			continue
		}
		key, null := s.keyAt(keyCols, i)
		if null >= 0 {
			return s.nullKey(c, i, null)
		}
		h, err := s.historyAt(key, keyCols, i)
		if err != nil {
			return err
		}
		if h == nil {
			id := string(key)
			h = &history{id: id}
			s.two[id] = h
		}
		hs[nth] = h
	}
	// Then the changes are put, a large batch's on two goroutines: each
	// putter takes the histories of one part, and puts their changes in
	// the batch's order, as one putter would.
	onParts(parts, func(part int) { s.putPart(&s.putters[part], c, order, hs, part, parts, ignoreIdx) })
	for i := range parts {
		s.sum += s.putters[i].sum
		s.putters[i].sum = 0
	}
	// Then the delta, in the batch's order: the parts' pending changes
	// merged by their place in it.
	var pends [len(s.putters)][]pending2
	for i := range parts {
		pends[i] = s.putters[i].pend
	}
	s.startDelta(len(pends[0]) + len(pends[1]))
	for len(pends[0])+len(pends[1]) > 0 {
		i := 0
		if len(pends[0]) == 0 || len(pends[1]) > 0 && pends[1][0].nth < pends[0][0].nth {
			i = 1
		}
		p := pends[i][0]
		pends[i] = pends[i][1:]
		if p.changedBack {
			continue
		}
		seq := c.seq.Value(int(p.row)) // the batch's, as the sequence key
		if p.final.del {
			res.Deleted++
			s.appendDelta(s.keyRow(p.h.id), seq, domain.ChangeDelete)
		} else {
			res.Upserted++
			s.appendDeltaRow(p.final.row(), seq)
		}
		s.noteSeq(seq)
	}
	return nil
}

// onParts calls fn for each part of parts, on a goroutine each when there
// are more than one. A panic in one is raised again here, in the flow's
// goroutine, whose recover fails the micro-batch rather than the process.
func onParts(parts int, fn func(part int)) {
	if parts == 1 {
		fn(0)
		return
	}
	panics := make([]any, parts)
	var wg sync.WaitGroup
	for part := range parts {
		wg.Go(func() {
			defer func() { panics[part] = recover() }()
			fn(part)
		})
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
}

// lookUp finds the histories the state holds of part part of parts of the
// batch's changes (the part-th share of order), into hs; it leaves nil
// those of keys it does not hold, and those of changes with a NULL key or
// a truncate, for apply2 to make or refuse.
func (s *State) lookUp(p *putter, c changeCols, keyCols []*domain.Column, order []int, hs []*history, part, parts int) {
	lo, hi := len(order)*part/parts, len(order)*(part+1)/parts
	for nth := lo; nth < hi; nth++ {
		i := order[nth]
		if isTrue(c.trunc, i) || firstNull(keyCols, i) >= 0 {
			continue
		}
		p.buf = sql.AppendRowKey(p.buf[:0], keyCols, i)
		hs[nth] = s.two[string(p.buf)]
	}
}

// putPart puts the batch's changes of the histories of part part of parts
// (hs holds each change's history, in order's order).
func (s *State) putPart(p *putter, c changeCols, order []int, hs []*history, part, parts int, ignoreIdx []int) {
	nStored := len(c.stored)
	for nth, i := range order {
		h := hs[nth]
		if partOf(h, parts) != part {
			continue
		}
		ch := p.changeAt(c.stored, nStored, i, c.seq.Value(i), isTrue(c.del, i))
		ch.stamp = s.stamp
		// A change of a sequence the batch already changed is not the
		// batch's first: its pend has the change it replaced.
		if orig, pos, had, changed := s.put(p, h, ch, ignoreIdx); changed && (!had || orig.stamp != s.stamp) {
			pend := pending2{h: h, seq: ch.seqKey(), pos: int32(pos), row: int32(i), nth: int32(nth), orig: -1}
			if had {
				pend.orig = int32(len(p.origs))
				p.origs = append(p.origs, orig)
			}
			p.pend = append(p.pend, pend)
		}
	}
	// Then what each pending change became by the end of the batch.
	for k := range p.pend {
		pend := &p.pend[k]
		at := int(pend.pos) // where it was put, unless a later change of the key in the batch went before it
		if at >= len(pend.h.changes) || pend.h.changes[at].seqKey() != pend.seq {
			at = s.find(pend.h, pend.seq)
		}
		pend.final = pend.h.changes[at]
		if pend.orig >= 0 {
			orig := p.origs[pend.orig]
			pend.changedBack = pend.final.del == orig.del && pend.final.data == orig.data
		}
	}
}

// partOf is the part of parts that a history is put by: a hash of where it
// lives, which stays put (the collector does not move objects).
func partOf(h *history, parts int) int {
	if parts == 1 {
		return 0
	}
	return int((uint64(uintptr(unsafe.Pointer(h))) * 0x9e3779b97f4a7c15 >> 32) % uint64(parts))
}

// find returns the index of the change of sequence key k, which h holds.
func (s *State) find(h *history, k string) int {
	if n := len(h.changes); n > 0 && h.changes[n-1].seqKey() == k {
		return n - 1
	}
	return sort.Search(len(h.changes), func(j int) bool { return h.changes[j].seqKey() >= k })
}
