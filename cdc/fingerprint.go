package cdc

import (
	"encoding/binary"
	"fmt"
)

// A state's fingerprint is a 64-bit FNV-1a hash of each key's state (an SCD
// 1 entry: key, sequence, row or tombstone; an SCD 2 history: key and every
// change), summed over the keys, with the truncate floor and the greatest
// sequence: it does not depend on the order the keys were changed in, and
// it moves with each change, so a micro-batch records it at no cost beyond
// hashing what it changed. Replaying the log must give, after every
// micro-batch, the fingerprint the flow recorded when it committed.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvAdd(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// fnvString hashes s preceded by its length as a uvarint.
func fnvString(h uint64, s string) uint64 {
	var n [binary.MaxVarintLen64]byte
	h = fnvAdd(h, n[:binary.PutUvarint(n[:], uint64(len(s)))])
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// hashEntry hashes an SCD 1 key's state.
func (s *State) hashEntry(id string, e *entry) uint64 {
	h := fnvString(fnvOffset, id)
	s.rowBuf = appendValue(s.rowBuf[:0], e.seq)
	h = fnvAdd(h, s.rowBuf)
	return fnvString(h, string(e.row))
}

// rehashEntry moves the fingerprint from an entry's last hash to its hash
// now; gone entries hash to nothing.
func (s *State) rehashEntry(e *entry) {
	s.sum -= e.hash
	e.hash = 0
	if !e.gone {
		e.hash = s.hashEntry(e.id, e)
	}
	s.sum += e.hash
}

// hashChange hashes one change of an SCD 2 key: a history is its set of
// changes (one per sequence), so its part of the fingerprint is the sum of
// theirs, which put keeps as it places a change.
func (s *State) hashChange(id string, c change) uint64 {
	x := fnvString(fnvOffset, id)
	if c.del {
		x = fnvAdd(x, []byte{1})
	}
	return fnvString(x, c.data)
}

// rehashAll recomputes the fingerprint of every key (the rows were
// re-encoded for a new schema).
func (s *State) rehashAll() {
	s.sum = 0
	for _, e := range s.one {
		e.hash = 0
		s.rehashEntry(e)
	}
	for id, h := range s.two {
		for _, c := range h.changes {
			s.sum += s.hashChange(id, c)
		}
	}
}

// Fingerprint identifies the state: equal states have equal fingerprints.
func (s *State) Fingerprint() string {
	h := fnvAdd(fnvOffset, binary.LittleEndian.AppendUint64(nil, s.sum))
	h = fnvAdd(h, appendValue(nil, s.floor))
	h = fnvAdd(h, appendValue(nil, s.maxSeq))
	return fmt.Sprintf("%016x", h)
}
