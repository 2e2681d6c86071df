package processors

import (
	"bytes"
	"hash/maphash"
)

// identities is the dedup state of a stream: the identities of the rows
// kept, each with when it expires, in the order they were remembered.
//
// It is laid out for a few hundred thousand live identities turning over
// millions of times: the identities' bytes sit in one arena in queue order
// (event time mostly grows, so the front expires first), and the index maps
// a 64-bit hash of an identity to its place in the queue. Neither holds a
// pointer, so the garbage collector never walks them, and a lookup of a new
// identity (most rows) touches one map group and no key bytes. The bytes are
// compared only when the hash is found; two live identities of one hash (a
// clash, about once in 2^64 pairs) are kept exactly in a map of their own.
type identities struct {
	hash  func([]byte) uint64 // the index's hash
	index map[uint64]uint64   // hash → position in the queue
	clash map[string]uint64   // identity → position, for identities whose hash another live one holds
	queue []remembered
	arena []byte // the identities of queue[head:], end to end
	head  int    // queue[:head] is forgotten
	base  uint64 // the position of queue[0]
	live  int
	sum   uint64 // the live identities' hashes (see identityHash)
}

// remembered is one identity in the queue: where its bytes end in the
// arena, when it expires, and its part of the fingerprint.
type remembered struct {
	end     int
	expires int64
	hash    uint64 // identityHash(identity, expires)
}

func newIdentities() *identities {
	seed := maphash.MakeSeed()
	return &identities{hash: func(b []byte) uint64 { return maphash.Bytes(seed, b) }, index: map[uint64]uint64{}}
}

// len is the number of live identities.
func (ids *identities) len() int { return ids.live }

// bytesAt is the identity at queue position pos.
func (ids *identities) bytesAt(pos uint64) []byte {
	i := int(pos - ids.base)
	start := 0
	if i > 0 {
		start = ids.queue[i-1].end
	}
	return ids.arena[start:ids.queue[i].end]
}

// lookup finds an identity: its queue position and whether it is live.
func (ids *identities) lookup(identity []byte, h uint64) (uint64, bool) {
	if pos, ok := ids.index[h]; ok && bytes.Equal(ids.bytesAt(pos), identity) {
		return pos, true
	}
	if len(ids.clash) > 0 {
		pos, ok := ids.clash[string(identity)]
		return pos, ok
	}
	return 0, false
}

// remember notes an identity kept until expires, unless it is remembered
// until since or later, and reports whether it did. An identity remembered
// until before since is remembered anew.
func (ids *identities) remember(identity []byte, expires, since int64) bool {
	h := ids.hash(identity)
	if pos, ok := ids.lookup(identity, h); ok {
		if ids.queue[pos-ids.base].expires >= since {
			return false
		}
		ids.drop(identity, h, pos)
	}
	pos := ids.base + uint64(len(ids.queue))
	ids.arena = append(ids.arena, identity...)
	fp := identityHash(identity, expires)
	ids.queue = append(ids.queue, remembered{end: len(ids.arena), expires: expires, hash: fp})
	if _, taken := ids.index[h]; taken {
		if ids.clash == nil {
			ids.clash = map[string]uint64{}
		}
		ids.clash[string(identity)] = pos
	} else {
		ids.index[h] = pos
	}
	ids.live++
	ids.sum += fp
	return true
}

// drop forgets the identity at queue position pos (it stays in the queue,
// dead, until the front reaches it).
func (ids *identities) drop(identity []byte, h, pos uint64) {
	if at, ok := ids.index[h]; ok && at == pos {
		delete(ids.index, h)
	} else {
		delete(ids.clash, string(identity))
	}
	ids.live--
	ids.sum -= ids.queue[pos-ids.base].hash
}

// forgetBefore forgets the identities at the front of the queue that
// expire before t; an identity behind one that expires later waits for it.
func (ids *identities) forgetBefore(t int64) {
	for ids.head < len(ids.queue) && ids.queue[ids.head].expires < t {
		pos := ids.base + uint64(ids.head)
		identity := ids.bytesAt(pos)
		h := ids.hash(identity)
		if at, ok := ids.lookup(identity, h); ok && at == pos {
			ids.drop(identity, h, pos)
		}
		ids.head++
	}
	if ids.head > 1024 && ids.head > len(ids.queue)/2 { // reuse the front half of the queue and arena
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
// FNV-1a hash of it and its expiry. Unlike the index's hash it is the same
// in every process, so that replay can compare it.
func identityHash(identity []byte, at int64) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range identity {
		h = (h ^ uint64(c)) * 1099511628211
	}
	for i := 0; i < 8; i++ {
		h = (h ^ uint64(byte(at>>(8*i)))) * 1099511628211
	}
	return h
}
