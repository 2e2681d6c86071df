package processors

import (
	"bytes"
	"hash/maphash"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// identities is the dedup state of a stream: the identities of the rows
// kept, each with when it expires, in the order they were remembered.
//
// It is laid out for a few hundred thousand live identities turning over
// millions of times: the identities' bytes sit in one arena in queue order
// (event time mostly grows, so the front expires first), and an index of
// open addressing finds an identity's place in the queue by a tag of its
// hash. Neither holds a pointer, so the garbage collector never walks them;
// the index is kept at most half full and deletes without tombstones, so
// that a lookup of a new identity (most rows) reads one or two slots of one
// cache line and no key bytes. The bytes are compared only when a tag
// matches; identities of one tag sit side by side in the index.
type identities struct {
	hash  func([]byte) uint64 // the index's hash
	slots []slot              // the index: a power of two long, at most half full
	queue []remembered
	arena []byte // the identities of queue[head:], end to end
	head  int    // queue[:head] is forgotten
	base  uint64 // the position of queue[0]
	live  int
	sum   uint64 // the live identities' hashes (see identityHash)

	warmth uint32 // what warm read: kept, so that the reads are made

	// budget is the memory the identities may take before the older half
	// of them moves to a run on disk (see spillIfOver), 0 for no end; runs
	// are those, oldest first, in runDir. err is the first failure of the
	// spill (see failed).
	budget int64
	runs   []*spillRun
	runDir string
	onDisk int // of the live identities, those in runs
	err    error
}

// slot is one place in the index: the tag of an identity's hash, never 0
// (0 is a free slot), and the low 32 bits of its queue position, which
// with the queue's base give the position (the queue is far shorter than
// 2^32).
type slot struct {
	tag uint32
	pos uint32
}

// remembered is one identity in the queue: where its bytes end in the
// arena, when it expires, its tag in the index (0 once it is dead: dropped
// from the index, it waits in the queue for the front to reach it), and
// its part of the fingerprint (kept rather than hashed again when it is
// forgotten: the hash reads every byte, one at a time, and costs more than
// the 8 bytes).
type remembered struct {
	end     int
	expires int64
	hash    uint64
	tag     uint32
}

func newIdentities(budget int64) *identities {
	seed := maphash.MakeSeed()
	return &identities{hash: func(b []byte) uint64 { return maphash.Bytes(seed, b) }, slots: make([]slot, 1024), budget: budget}
}

// len is the number of live identities.
func (ids *identities) len() int { return ids.live }

// tagOf is the index's tag of a hash: its high bits, never 0.
func tagOf(h uint64) uint32 { return uint32(h>>32) | 1 }

// home is the slot where the search for a tag starts: Fibonacci hashing
// of the tag, so that the index can be rebuilt from the tags alone.
func (ids *identities) home(tag uint32) int {
	return int((uint64(tag) * 0x9e3779b97f4a7c15) >> 32 & uint64(len(ids.slots)-1))
}

// position is the queue position that a slot holds.
func (ids *identities) position(s slot) uint64 {
	return ids.base + uint64(s.pos-uint32(ids.base))
}

// bytesAt is the identity at queue position pos.
func (ids *identities) bytesAt(pos uint64) []byte {
	i := int(pos - ids.base)
	start := 0
	if i > 0 {
		start = ids.queue[i-1].end
	}
	return ids.arena[start:ids.queue[i].end]
}

// lookup finds a live identity of the given tag: its queue position and
// whether it is live.
func (ids *identities) lookup(identity []byte, tag uint32) (uint64, bool) {
	mask := len(ids.slots) - 1
	for i := ids.home(tag); ids.slots[i].tag != 0; i = (i + 1) & mask {
		if ids.slots[i].tag == tag {
			if pos := ids.position(ids.slots[i]); bytes.Equal(ids.bytesAt(pos), identity) {
				return pos, true
			}
		}
	}
	return 0, false
}

// warm reads the slot where the search for tag starts, so that a search
// soon after finds it in the cache. A search reads one slot at random in a
// large index, and waits for memory; warming the slots of many identities
// first, one after another, lets their reads overlap.
func (ids *identities) warm(tag uint32) {
	ids.warmth += ids.slots[ids.home(tag)].tag
}

// remember notes an identity kept until expires, unless it is remembered
// until since or later, and reports whether it did. An identity remembered
// until before since is remembered anew.
func (ids *identities) remember(identity []byte, expires, since int64) bool {
	return ids.rememberHashed(identity, ids.hash(identity), expires, since)
}

// rememberHashed is remember of an identity whose index hash h is known:
// its tag finds it in memory, the whole hash in the runs on disk.
func (ids *identities) rememberHashed(identity []byte, h uint64, expires, since int64) bool {
	tag := tagOf(h)
	if pos, ok := ids.lookup(identity, tag); ok {
		if ids.queue[pos-ids.base].expires >= since {
			return false
		}
		ids.drop(ids.slotOf(tag, pos), pos)
	} else if len(ids.runs) > 0 {
		if r, i, e, ok := ids.lookupRuns(identity, h); ok {
			if e.expires >= since {
				return false
			}
			r.dead[i/64] |= 1 << (i % 64)
			ids.sum -= e.hash
			ids.live--
			ids.onDisk--
		}
	}
	pos := ids.base + uint64(len(ids.queue))
	hash := identityHash(identity, expires)
	// Grown to twice their length, not by append's quarter (each growth of
	// a long slice is fresh memory the process faults in page by page),
	// while twice the memory the identities take is within their budget.
	full := cap(ids.arena)-len(ids.arena) < len(identity) || len(ids.queue) == cap(ids.queue)
	if full && (ids.budget <= 0 || 2*ids.memory() <= ids.budget) {
		ids.arena, ids.queue = grown(ids.arena, len(identity)), grown(ids.queue, 1)
	}
	ids.arena = append(ids.arena, identity...)
	ids.queue = append(ids.queue, remembered{end: len(ids.arena), expires: expires, hash: hash, tag: tag})
	if 2*(ids.live-ids.onDisk+1) > len(ids.slots) {
		ids.grow()
	}
	ids.insert(slot{tag: tag, pos: uint32(pos)})
	ids.live++
	ids.sum += hash
	return true
}

// insert puts a slot in the first free place from its tag's home.
func (ids *identities) insert(s slot) {
	mask := len(ids.slots) - 1
	i := ids.home(s.tag)
	for ids.slots[i].tag != 0 {
		i = (i + 1) & mask
	}
	ids.slots[i] = s
}

// grow doubles the index.
func (ids *identities) grow() { ids.resize(2 * len(ids.slots)) }

// reserve makes room for n more identities of size bytes in all at once,
// rather than growing (and copying) the index, the queue and the arena
// again and again as they come.
func (ids *identities) reserve(n, size int) {
	ids.queue = grown(ids.queue, n)
	ids.arena = grown(ids.arena, size)
	slots := len(ids.slots)
	for 2*(ids.live-ids.onDisk+n) > slots {
		slots *= 2
	}
	if slots > len(ids.slots) {
		ids.resize(slots)
	}
}

// grown is s with room for n more elements: at least twice as long
// when it must grow, so that growing it again and again copies it only
// a few times over.
func grown[S ~[]E, E any](s S, n int) S {
	if cap(s)-len(s) >= n {
		return s
	}
	return slices.Grow(s, max(n, len(s)))
}

// resize makes the index size slots long.
func (ids *identities) resize(size int) {
	old := ids.slots
	ids.slots = make([]slot, size)
	for _, s := range old {
		if s.tag != 0 {
			ids.insert(s)
		}
	}
}

// slotOf is the index's slot of the live identity at queue position pos
// (-1 were it not in the index, which drop refuses with a panic).
func (ids *identities) slotOf(tag uint32, pos uint64) int {
	mask := len(ids.slots) - 1
	for i := ids.home(tag); ids.slots[i].tag != 0; i = (i + 1) & mask {
		if ids.slots[i] == (slot{tag: tag, pos: uint32(pos)}) {
			return i
		}
	}
	return -1
}

// each calls fn with the live identities in the order remembered, each
// with when it expires: what a snapshot of the state holds. Remembering
// them in that order makes the same state, as far as any answer or the
// fingerprint tells: a dead identity in the queue expired before the
// watermark of its death (see rememberHashed), and the watermark never
// moves back, so it holds back no identity from being forgotten. fn must
// not keep identity: its bytes are the state's own, or read into again.
func (ids *identities) each(fn func(identity []byte, expires int64)) {
	ids.eachRun(fn)
	for i := ids.head; i < len(ids.queue); i++ {
		if r := ids.queue[i]; r.tag != 0 {
			fn(ids.bytesAt(ids.base+uint64(i)), r.expires)
		}
	}
}

// drop forgets the live identity at queue position pos, whose slot is i
// (it stays in the queue, dead, until the front reaches it). The slots
// after i move back to fill the gap where their search would cross it, so
// that no search stops early.
func (ids *identities) drop(i int, pos uint64) {
	mask := len(ids.slots) - 1
	for j := (i + 1) & mask; ids.slots[j].tag != 0; j = (j + 1) & mask {
		// The slot at j may fill the gap at i unless its home lies
		// cyclically in (i, j]: then its search never passes i.
		if (j-ids.home(ids.slots[j].tag))&mask >= (j-i)&mask {
			ids.slots[i] = ids.slots[j]
			i = j
		}
	}
	ids.slots[i] = slot{}
	ids.live--
	r := &ids.queue[pos-ids.base]
	ids.sum -= r.hash
	r.tag = 0
}

// forgetBefore forgets the identities at the front of the queue that
// expire before t; an identity behind one that expires later waits for it.
func (ids *identities) forgetBefore(t int64) {
	if len(ids.runs) > 0 && !ids.forgetRuns(t) {
		return // the front is in a run, and waits there
	}
	for first := ids.head; ids.head < len(ids.queue) && ids.queue[ids.head].expires < t; {
		if (ids.head-first)%warmChunk == 0 { // warm the slots of the next ones (see warm)
			for _, r := range ids.queue[ids.head:min(ids.head+warmChunk, len(ids.queue))] {
				ids.warm(r.tag)
			}
		}
		pos := ids.base + uint64(ids.head)
		if tag := ids.queue[ids.head].tag; tag != 0 {
			ids.drop(ids.slotOf(tag, pos), pos)
		}
		ids.head++
	}
	if ids.head > 1024 && ids.head > len(ids.queue)/4 { // reuse the front of the queue and arena
		cut := ids.queue[ids.head-1].end
		n := copy(ids.arena, ids.arena[cut:])
		ids.arena = ids.arena[:n]
		for i := ids.head; i < len(ids.queue); i++ {
			ids.queue[i].end -= cut
		}
		n = copy(ids.queue, ids.queue[ids.head:])
		ids.queue = ids.queue[:n]
		ids.base += uint64(ids.head)
		ids.head = 0
	}
}

// identityHash is an identity's part of the state's fingerprint: a 64-bit
// xxHash of it, its expiry mixed in. Unlike the index's hash it is the same
// in every process, so that replay can compare it. It replaced the FNV-1a
// hash of the first stores (legacyIdentityHash), which reads a byte at a
// time and cost a dedup a fifth of its time.
func identityHash(identity []byte, at int64) uint64 {
	h := xxhash.Sum64(identity) ^ uint64(at)*0x9e3779b97f4a7c15
	// splitmix64's finalizer, so that the expiry moves every bit
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// legacyIdentityHash is identityHash as the stores written before it
// fingerprinted their state: a 64-bit FNV-1a hash of the identity and its
// expiry (see streamState.legacyFingerprint).
func legacyIdentityHash(identity []byte, at int64) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range identity {
		h = (h ^ uint64(c)) * 1099511628211
	}
	for i := 0; i < 8; i++ {
		h = (h ^ uint64(byte(at>>(8*i)))) * 1099511628211
	}
	return h
}
