package processors

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"os"
	"slices"
	"sort"
	"unsafe"

	"github.com/sluicehq/sluice/domain"
)

// spillRun is a run: identities moved out of memory to a file of their own (see
// identities.spillIfOver): the live ones of a stretch of the queue, oldest
// first. Memory keeps of a run only what answers most questions without
// reading it: a filter of the identities' index hashes (a new identity,
// most rows, is told apart there), a sparse index of the hashes, which of
// the run's identities died since (remembered anew), and how far the front
// of the queue has forgotten into it; about a byte and a half an identity.
//
// The file holds three sections: the identities in queue order, each its
// expiry, its part of the fingerprint and where its bytes are (entry,
// runEntrySize bytes); the identities' index hashes in order, each with
// its entry's number (runHashSize bytes); and the identities' bytes.
type spillRun struct {
	f      *os.File
	n      int      // identities
	hashes int64    // where the hashes start
	filter []uint64 // blocked bloom filter: 8 words (a cache line) a block
	sparse []uint64 // the hash at every runSparse-th place in hash order
	dead   []uint64 // a bit an identity: remembered anew since
	front  int      // identities before it are forgotten
	ahead  entries  // the entries from the front on, read a block at a time
}

const (
	runEntrySize  = 8 + 8 + 8 + 4 // expires, fingerprint part, bytes' offset, bytes' length
	runHashSize   = 8 + 4         // index hash, entry number
	runSparse     = 128           // hashes a sparse index entry stands for
	runFilterBits = 10            // filter bits an identity: about 1% false answers
)

// runEntry is one identity of a run, as its file holds it.
type runEntry struct {
	expires int64
	hash    uint64 // its part of the fingerprint
	off     int64
	size    int
}

// writeRun writes the identities of queue[from:to] (the live ones) to a
// new file in dir. The sections are written as they are made, through a
// small buffer: what memory holds beside the queue is the identities'
// hashes and entry numbers (16 bytes an identity, to sort), not the run.
func (ids *identities) writeRun(dir string, from, to int) (*spillRun, error) {
	type keyed struct {
		hash  uint64
		entry uint32
	}
	n := 0
	for i := from; i < to; i++ {
		if ids.queue[i].tag != 0 { // a dead one holds back nothing (see each)
			n++
		}
	}
	r, w, err := newRun(dir, n)
	if err != nil {
		return nil, err
	}
	off := r.bytesAt()
	byHash := make([]keyed, 0, r.n)
	for i := from; i < to; i++ {
		q := ids.queue[i]
		if q.tag == 0 {
			continue
		}
		identity := ids.bytesAt(ids.base + uint64(i))
		writeEntry(w, runEntry{q.expires, q.hash, off, len(identity)})
		byHash = append(byHash, keyed{ids.hash(identity), uint32(len(byHash))})
		off += int64(len(identity))
	}
	slices.SortFunc(byHash, func(a, b keyed) int { return cmp.Compare(a.hash, b.hash) })
	for j, k := range byHash {
		r.writeHash(w, j, k.hash, int(k.entry))
	}
	for i := from; i < to; i++ {
		if ids.queue[i].tag != 0 {
			_, _ = w.Write(ids.bytesAt(ids.base + uint64(i)))
		}
	}
	return r.written(w)
}

// newRun creates the file of a run of n identities, to write through w:
// its entries, then its hashes in order (writeHash), then its identities'
// bytes, and then written.
func newRun(dir string, n int) (*spillRun, *bufio.Writer, error) {
	f, err := os.CreateTemp(dir, "run-*")
	if err != nil {
		return nil, nil, err
	}
	r := &spillRun{f: f, n: n, hashes: int64(n) * runEntrySize,
		filter: make([]uint64, 8*max(1, (n*runFilterBits+511)/512)), dead: make([]uint64, (n+63)/64)}
	return r, bufio.NewWriterSize(f, 64<<10), nil
}

// bytesAt is where the run's identities' bytes start.
func (r *spillRun) bytesAt() int64 { return r.hashes + int64(r.n)*runHashSize }

// writeEntry writes an identity's entry. A failure of w sticks: written
// reports it.
func writeEntry(w *bufio.Writer, e runEntry) {
	b := w.AvailableBuffer() // appended to in place, without a copy
	b = binary.LittleEndian.AppendUint64(b, uint64(e.expires))
	b = binary.LittleEndian.AppendUint64(b, e.hash)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.off))
	b = binary.LittleEndian.AppendUint32(b, uint32(e.size))
	_, _ = w.Write(b)
}

// writeHash writes the j-th hash in order, h of entry, noting it in the
// filter and the sparse index.
func (r *spillRun) writeHash(w *bufio.Writer, j int, h uint64, entry int) {
	b := w.AvailableBuffer()
	b = binary.LittleEndian.AppendUint64(b, h)
	b = binary.LittleEndian.AppendUint32(b, uint32(entry))
	_, _ = w.Write(b)
	if j%runSparse == 0 {
		r.sparse = append(r.sparse, h)
	}
	r.add(h)
}

// written ends the writing of a run; on a failure the file is removed.
func (r *spillRun) written(w *bufio.Writer) (*spillRun, error) {
	if err := w.Flush(); err != nil {
		_ = r.close()
		return nil, err
	}
	return r, nil
}

// The filter: a hash picks a block of 512 bits (a cache line), and
// seven bits in it.
func (r *spillRun) bits(h uint64) (block int, mask [8]uint64) {
	block = int((h >> 32) * uint64(len(r.filter)/8) >> 32)
	for k := uint64(0); k < 7; k++ {
		b := (h >> (k * 9)) & 511
		mask[b/64] |= 1 << (b % 64)
	}
	return block, mask
}

func (r *spillRun) add(h uint64) {
	block, mask := r.bits(h)
	for w, m := range mask {
		r.filter[8*block+w] |= m
	}
}

func (r *spillRun) mayHold(h uint64) bool {
	block, mask := r.bits(h)
	for w, m := range mask {
		if r.filter[8*block+w]&m != m {
			return false
		}
	}
	return true
}

func (r *spillRun) isDead(i int) bool { return r.dead[i/64]&(1<<(i%64)) != 0 }

// entry reads identity i's entry.
func (r *spillRun) entry(i int) (runEntry, error) {
	var b [runEntrySize]byte
	if _, err := r.f.ReadAt(b[:], int64(i)*runEntrySize); err != nil {
		return runEntry{}, err
	}
	return decodeEntry(b[:]), nil
}

// entries reads a run's entries in order, a block at a time: forgetting
// and a walk of the run read every entry from a place on, and a read of
// each alone would be a call into the kernel an identity.
type entries struct {
	buf []byte
	at  int // the entry buf starts with
}

// entriesAhead is how many entries a block holds.
const entriesAhead = 2048

// entryInOrder reads identity i's entry (i < r.n), reading the block from
// i on when the last block read does not hold it.
func (r *spillRun) entryInOrder(rd *entries, i int) (runEntry, error) {
	if i < rd.at || (i-rd.at+1)*runEntrySize > len(rd.buf) {
		n := min(r.n-i, entriesAhead)
		if cap(rd.buf) < n*runEntrySize {
			rd.buf = make([]byte, entriesAhead*runEntrySize)
		}
		rd.buf, rd.at = rd.buf[:n*runEntrySize], i
		if _, err := r.f.ReadAt(rd.buf, int64(i)*runEntrySize); err != nil {
			rd.buf = rd.buf[:0]
			return runEntry{}, err
		}
	}
	return decodeEntry(rd.buf[(i-rd.at)*runEntrySize:]), nil
}

func decodeEntry(b []byte) runEntry {
	return runEntry{int64(binary.LittleEndian.Uint64(b)), binary.LittleEndian.Uint64(b[8:]),
		int64(binary.LittleEndian.Uint64(b[16:])), int(binary.LittleEndian.Uint32(b[24:]))}
}

// find is the place in the run of identity, of index hash h, if the run
// holds it (dead or alive, forgotten or not).
func (r *spillRun) find(identity []byte, h uint64) (int, runEntry, bool, error) {
	if !r.mayHold(h) {
		return 0, runEntry{}, false, nil
	}
	// The hashes from the last sparse entry below h on, a stretch of the
	// sparse index's at a time, until one is greater than h: identities of
	// one hash sit side by side, however many.
	lo := sort.Search(len(r.sparse), func(j int) bool { return r.sparse[j] >= h })
	buf := make([]byte, runSparse*runHashSize)
	for start := max(0, lo-1) * runSparse; start < r.n; start += runSparse {
		end := min(r.n, start+runSparse)
		b := buf[:(end-start)*runHashSize]
		if _, err := r.f.ReadAt(b, r.hashes+int64(start)*runHashSize); err != nil {
			return 0, runEntry{}, false, err
		}
		for j := 0; j < end-start; j++ {
			k := b[j*runHashSize:]
			switch got := binary.LittleEndian.Uint64(k); {
			case got < h:
				continue
			case got > h:
				return 0, runEntry{}, false, nil
			}
			i := int(binary.LittleEndian.Uint32(k[8:]))
			e, err := r.entry(i)
			if err != nil {
				return 0, runEntry{}, false, err
			}
			got := make([]byte, e.size)
			if _, err := r.f.ReadAt(got, e.off); err != nil {
				return 0, runEntry{}, false, err
			}
			if bytes.Equal(got, identity) {
				return i, e, true, nil
			}
		}
	}
	return 0, runEntry{}, false, nil
}

func (r *spillRun) close() error {
	err := r.f.Close()
	if rerr := os.Remove(r.f.Name()); err == nil {
		err = rerr
	}
	return err
}

// spillIfOver moves the older half of the identities in memory to a new
// run, once they take more memory than their budget, and gives the memory
// back. The runs live in a directory of their own under the system's
// temporary directory, removed by close.
func (ids *identities) spillIfOver() {
	if ids.budget <= 0 || ids.err != nil || ids.memory() <= ids.budget {
		return
	}
	if ids.runDir == "" {
		dir, err := os.MkdirTemp("", "sluice-dedup-spill-")
		if err != nil {
			ids.err = dedupSpillErr(err, "making the spill directory")
			return
		}
		ids.runDir = dir
	}
	cut := ids.head + (len(ids.queue)-ids.head)/2
	if cut-ids.head < spillAtLeast {
		return // too few to be worth a file: the budget is smaller than the state's least
	}
	r, err := ids.writeRun(ids.runDir, ids.head, cut)
	if err != nil {
		ids.err = dedupSpillErr(err, "writing identities to the spill in "+ids.runDir)
		return
	}
	ids.runs = append(ids.runs, r)
	ids.onDisk += r.n
	ids.mergeRuns()
	// The moved identities leave memory (live still: counted in live and
	// sum): the queue, the arena and the index are made again at the size
	// of what stays.
	start := 0
	if cut > 0 {
		start = ids.queue[cut-1].end
	}
	queue := slices.Clone(ids.queue[cut:])
	for i := range queue {
		queue[i].end -= start
	}
	ids.arena = slices.Clone(ids.arena[start:])
	ids.base += uint64(cut)
	ids.queue, ids.head = queue, 0
	size := 1024
	for 2*len(queue) > size {
		size *= 2
	}
	ids.slots = make([]slot, size)
	for i, q := range queue {
		if q.tag != 0 {
			ids.insert(slot{tag: q.tag, pos: uint32(ids.base + uint64(i))})
		}
	}
}

// mergeRuns merges the newest two runs into one while the older holds at
// most twice the live identities of the newer, leaving the oldest run
// (forgetting reads it from its front) as it is. When a run is made, each
// run from the second on so holds more than twice the live identities of
// the next (deaths since may lessen an older one): however large the
// state grows past its budget, a lookup asks a few runs' filters, about
// the logarithm of the runs a spill makes, and an identity is written
// again as many times at most. The merges run in the commit that spilled:
// one spill may rewrite most of what is on disk, a cost spread over the
// spills before it.
func (ids *identities) mergeRuns() {
	for n := len(ids.runs); n >= 3 && ids.runs[n-2].live() <= 2*ids.runs[n-1].live(); n = len(ids.runs) {
		merged, err := ids.mergeTwo(ids.runs[n-2], ids.runs[n-1])
		if err != nil {
			ids.err = dedupSpillErr(err, "merging files of the spill in "+ids.runDir)
			return
		}
		var cerr error
		for _, r := range ids.runs[n-2:] {
			cerr = errors.Join(cerr, r.close())
		}
		ids.runs = append(ids.runs[:n-2], merged) // the merged run holds what they held
		if cerr != nil {
			ids.err = dedupSpillErr(cerr, "removing a file of the spill in "+ids.runDir)
			return
		}
	}
}

// live is the number of the run's identities neither forgotten nor dead.
func (r *spillRun) live() int {
	dead := 0
	for w, word := range r.dead {
		switch lo := 64 * w; {
		case lo+64 <= r.front:
			continue
		case lo < r.front:
			word &^= 1<<(r.front-lo) - 1
		}
		dead += bits.OnesCount64(word)
	}
	return r.n - r.front - dead
}

// mergeTwo writes the live identities of runs a and b, a the older, to a
// new run, in the same order, in three passes that read a and b in order:
// the entries, the hashes (the two runs' hashes merged, each in order
// already) and the bytes. What memory takes beside the new run's filter
// and sparse index is a count of the dead identities for each 64 of a and
// b, and the buffers.
func (ids *identities) mergeTwo(a, b *spillRun) (*spillRun, error) {
	ra, rb := newRanks(a), newRanks(b)
	m, w, err := newRun(ids.runDir, ra.live+rb.live)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*spillRun, error) {
		_ = m.close()
		return nil, err
	}

	// The entries, and where the live identities' bytes lie in a and b.
	off := m.bytesAt()
	for _, r := range []*spillRun{a, b} {
		var rd entries
		for i := r.front; i < r.n; i++ {
			if r.isDead(i) {
				continue
			}
			e, err := r.entryInOrder(&rd, i)
			if err != nil {
				return fail(err)
			}
			e.off = off
			writeEntry(w, e)
			off += int64(e.size)
		}
	}

	// The hashes: the two runs' in order, merged, each entry numbered
	// anew among the live ones (b's after a's).
	ha, hb := newHashReader(a), newHashReader(b)
	next := func(h *hashReader, rk ranks, base int) (uint64, int, bool, error) {
		for {
			hash, i, ok, err := h.next()
			if !ok || err != nil {
				return 0, 0, ok, err
			}
			if i >= h.r.front && !h.r.isDead(i) {
				return hash, base + rk.rank(i), true, nil
			}
		}
	}
	hA, iA, okA, err := next(ha, ra, 0)
	if err != nil {
		return fail(err)
	}
	hB, iB, okB, err := next(hb, rb, ra.live)
	if err != nil {
		return fail(err)
	}
	for j := 0; okA || okB; j++ {
		var hash uint64
		var entry int
		if okA && (!okB || hA <= hB) {
			hash, entry = hA, iA
			hA, iA, okA, err = next(ha, ra, 0)
		} else {
			hash, entry = hB, iB
			hB, iB, okB, err = next(hb, rb, ra.live)
		}
		if err != nil {
			return fail(err)
		}
		m.writeHash(w, j, hash, entry)
	}

	// The bytes, in the entries' order.
	for _, r := range []*spillRun{a, b} {
		if err := r.eachLive(func(identity []byte, _ runEntry) { _, _ = w.Write(identity) }); err != nil {
			return fail(err)
		}
	}
	return m.written(w)
}

// eachLive calls fn with the run's live identities in order, each with its
// entry, reading the entries and the bytes in order (the bytes of the
// dead ones read and passed by). The bytes fn gets are read into again
// after it returns.
func (r *spillRun) eachLive(fn func(identity []byte, e runEntry)) error {
	if r.front == r.n {
		return nil
	}
	var rd entries
	first, err := r.entryInOrder(&rd, r.front)
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, first.off, 1<<62), 64<<10)
	var p []byte
	for i := r.front; i < r.n; i++ {
		e, err := r.entryInOrder(&rd, i)
		if err != nil {
			return err
		}
		p = slices.Grow(p[:0], e.size)[:e.size]
		if _, err := io.ReadFull(br, p); err != nil {
			return err
		}
		if !r.isDead(i) {
			fn(p, e)
		}
	}
	return nil
}

// ranks numbers a run's live identities in order: dead[w] counts the dead
// ones before identity 64w. (Only the oldest run, never merged, has
// forgotten any: a merged run's front is 0; rank takes any front.)
type ranks struct {
	r    *spillRun
	dead []int
	live int
}

func newRanks(r *spillRun) ranks {
	rk := ranks{r: r, dead: make([]int, len(r.dead)+1)}
	for w, word := range r.dead {
		rk.dead[w+1] = rk.dead[w] + bits.OnesCount64(word)
	}
	rk.live = r.n - r.front - (rk.deadBefore(r.n) - rk.deadBefore(r.front))
	return rk
}

// deadBefore is the number of dead identities before identity i.
func (rk ranks) deadBefore(i int) int {
	n := rk.dead[i/64]
	if i%64 != 0 {
		n += bits.OnesCount64(rk.r.dead[i/64] & (1<<(i%64) - 1))
	}
	return n
}

// rank is the number of live identities before identity i.
func (rk ranks) rank(i int) int {
	return i - rk.r.front - (rk.deadBefore(i) - rk.deadBefore(rk.r.front))
}

// hashReader reads a run's hashes in order, a block of entriesAhead at a
// time.
type hashReader struct {
	r   *spillRun
	buf []byte
	pos int // the next hash to read
	end int // buf holds the hashes up to here
}

func newHashReader(r *spillRun) *hashReader { return &hashReader{r: r} }

// next is the next hash and its entry's number; ok is false past the last.
func (h *hashReader) next() (hash uint64, entry int, ok bool, err error) {
	if h.pos == h.r.n {
		return 0, 0, false, nil
	}
	if h.pos == h.end { // blocks start at multiples of entriesAhead
		n := min(h.r.n-h.pos, entriesAhead)
		if h.buf == nil {
			h.buf = make([]byte, entriesAhead*runHashSize)
		}
		if _, err := h.r.f.ReadAt(h.buf[:n*runHashSize], h.r.hashes+int64(h.pos)*runHashSize); err != nil {
			return 0, 0, false, err
		}
		h.end = h.pos + n
	}
	k := h.buf[h.pos%entriesAhead*runHashSize:]
	h.pos++
	return binary.LittleEndian.Uint64(k), int(binary.LittleEndian.Uint32(k[8:])), true, nil
}

// spillAtLeast is the fewest queue entries a spill moves.
const spillAtLeast = 64

// memory is about the bytes the identities in memory take: what the
// budget bounds. What memory keeps of the runs (about a byte and a half an
// identity on disk) is not counted: counted, it would reach the budget
// once the runs hold about budget/1.5 identities, and from then on every
// micro-batch would spill a run of its own.
func (ids *identities) memory() int64 {
	return int64(cap(ids.arena) + cap(ids.queue)*int(unsafe.Sizeof(remembered{})) + len(ids.slots)*int(unsafe.Sizeof(slot{})))
}

// failed is the first failure of the spill, if any: the identities are
// not what they should be, and the micro-batch must not commit.
func (ids *identities) failed() error { return ids.err }

// lookupRuns finds a live identity in the runs, newest first: the run and
// its place there. (A copy that died in a run was remembered anew after
// it: that one, in memory or a newer run, is found first, and forgotten
// after it.)
func (ids *identities) lookupRuns(identity []byte, h uint64) (*spillRun, int, runEntry, bool) {
	for j := len(ids.runs) - 1; j >= 0; j-- {
		r := ids.runs[j]
		i, e, ok, err := r.find(identity, h)
		if err != nil {
			ids.err = dedupSpillErr(err, "reading the spill in "+ids.runDir)
			return nil, 0, runEntry{}, false
		}
		if ok && i >= r.front {
			return r, i, e, true
		}
	}
	return nil, 0, runEntry{}, false
}

// forgetRuns forgets, from the oldest run, the identities that expire
// before t, as forgetBefore does in memory, and reports whether every run
// is forgotten (so that the queue in memory is the front).
func (ids *identities) forgetRuns(t int64) bool {
	for len(ids.runs) > 0 {
		r := ids.runs[0]
		for ; r.front < r.n; r.front++ {
			if r.isDead(r.front) {
				continue
			}
			e, err := r.entryInOrder(&r.ahead, r.front)
			if err != nil {
				ids.err = dedupSpillErr(err, "reading the spill in "+ids.runDir)
				return false
			}
			if e.expires >= t {
				return false
			}
			ids.sum -= e.hash
			ids.live--
			ids.onDisk--
		}
		if err := r.close(); err != nil {
			ids.err = dedupSpillErr(err, "removing a file of the spill in "+ids.runDir)
			return false
		}
		ids.runs = ids.runs[1:]
	}
	return true
}

// eachRun calls fn with the live identities of the runs, in queue order.
func (ids *identities) eachRun(fn func(identity []byte, expires int64)) {
	for _, r := range ids.runs {
		if err := r.eachLive(func(identity []byte, e runEntry) { fn(identity, e.expires) }); err != nil {
			ids.err = dedupSpillErr(err, "reading the spill in "+ids.runDir)
			return
		}
	}
}

// close removes the spill, if there is one.
func (ids *identities) close() error {
	var errs []error
	for _, r := range ids.runs {
		errs = append(errs, r.close())
	}
	ids.runs = nil
	if ids.runDir != "" {
		errs = append(errs, os.RemoveAll(ids.runDir))
		ids.runDir = ""
	}
	if err := errors.Join(errs...); err != nil {
		return dedupSpillErr(err, "removing the spill")
	}
	return nil
}

// dedupSpillErr is a failure of the spill: of the disk under it, which may
// pass (space freed), so retriable; the retry folds the state again from
// the log.
func dedupSpillErr(err error, what string) error {
	return domain.Wrap(domain.CodeDedupStateSpill, err, what).AsRetriable()
}
