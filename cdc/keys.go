package cdc

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql"
)

// This file is where a State's keys live: in its maps while they fit its
// memory budget, in its spill (see spill.go) beyond it. Every lookup of a
// key goes through entryOf or historyOf, every walk over the keys through
// eachEntry or eachHistory, and every micro-batch ends in spillOver.

// SpillBeyond gives the state a memory budget: past about budget bytes of
// keys, the keys a micro-batch did not touch are moved to a spill in a new
// directory under dir (the system's temporary directory when empty). A
// budget of 0 keeps every key in memory.
func (s *State) SpillBeyond(budget int64, dir string) {
	s.budget, s.spillDir = budget, dir
}

// Spilled reports how many keys the state has moved to its spill (and not
// brought back), for progress and tests.
func (s *State) Spilled() int { return s.spilled }

// InMemory reports how many keys the state holds in memory.
func (s *State) InMemory() int { return len(s.one) + len(s.two) }

// Close removes the state's spill, if it made one. A state needs no Close
// while it has no memory budget.
func (s *State) Close() error {
	if s.cold == nil {
		return nil
	}
	err := s.cold.close()
	s.cold = nil
	return err
}

// appendOrderKey encodes a key value so that the bytes order as the values
// do (appendSeqKey) and equal keys, -0.0 and 0.0 among them, encode alike.
func appendOrderKey(b []byte, v domain.Value) []byte {
	switch v.Kind() {
	case domain.KindFloat64:
		if v.AsFloat() == 0 {
			v = domain.Float(0)
		}
	case domain.KindList, domain.KindStruct, domain.KindMap:
		for _, x := range v.AsList() {
			if x.IsNull() {
				b = append(b, 1)
				continue
			}
			b = appendOrderKey(append(b, 2), x)
		}
		return append(b, 0)
	}
	return appendSeqKey(b, v)
}

func orderKey(key []domain.Value) string {
	var b []byte
	for _, v := range key {
		b = appendOrderKey(b, v)
	}
	return string(b)
}

// entryAt returns the SCD 1 entry of the key id, which is row i of the
// key columns keyCols: nil when the state does not hold it.
func (s *State) entryAt(id []byte, keyCols []*domain.Column, i int) (*entry, error) {
	if e := s.one[string(id)]; e != nil || s.spilled == 0 {
		return e, nil
	}
	return s.thawEntry(orderKey(keyValues(keyCols, i)))
}

// historyAt is entryAt for an SCD 2 key.
func (s *State) historyAt(id []byte, keyCols []*domain.Column, i int) (*history, error) {
	if h := s.two[string(id)]; h != nil || s.spilled == 0 {
		return h, nil
	}
	v, err := s.thaw(orderKey(keyValues(keyCols, i)))
	if v == nil || err != nil {
		return nil, err
	}
	h := decodeHistory(v)
	s.two[h.id] = h
	return h, nil
}

// thawEntry brings the SCD 1 entry of order key order back from the spill.
func (s *State) thawEntry(order string) (*entry, error) {
	v, err := s.thaw(order)
	if v == nil || err != nil {
		return nil, err
	}
	e := decodeEntry(v)
	s.one[e.id] = e
	return e, nil
}

// thaw reads a key from the spill to bring it back into memory: the spill
// drops it when the micro-batch ends (spillOver), and is not asked for it
// again meanwhile.
func (s *State) thaw(order string) ([]byte, error) {
	if s.thawed[order] {
		return nil, nil
	}
	v, ok, err := s.cold.get([]byte(order))
	if !ok || err != nil {
		return nil, err
	}
	if s.thawed == nil {
		s.thawed = map[string]bool{}
	}
	s.thawed[order] = true
	s.spilled--
	return v, nil
}

// eachEntry calls fn with every SCD 1 entry in key order. The spilled ones
// are decoded for the call and stay in the spill: fn must not change them.
func (s *State) eachEntry(fn func(*entry) error) error {
	hot := sortedByKey(s, s.one)
	return s.merge(len(hot), func(i int) string { return hot[i].order }, func(i int) error { return fn(s.one[hot[i].id]) },
		func(v []byte) error { return fn(decodeEntry(v)) })
}

// eachHistory is eachEntry for SCD 2 histories.
func (s *State) eachHistory(fn func(*history) error) error {
	hot := sortedByKey(s, s.two)
	return s.merge(len(hot), func(i int) string { return hot[i].order }, func(i int) error { return fn(s.two[hot[i].id]) },
		func(v []byte) error { return fn(decodeHistory(v)) })
}

// merge walks the n keys in memory (in order: orderAt gives their order
// keys, hot calls fn with one) and the spilled ones together, in order.
func (s *State) merge(n int, orderAt func(int) string, hot func(int) error, cold func([]byte) error) error {
	i := 0
	if s.spilled > 0 {
		err := s.cold.each(func(order, v []byte) error {
			if s.thawed[string(order)] {
				return nil
			}
			for ; i < n && orderAt(i) < string(order); i++ {
				if err := hot(i); err != nil {
					return err
				}
			}
			return cold(v)
		})
		if err != nil {
			return err
		}
	}
	for ; i < n; i++ {
		if err := hot(i); err != nil {
			return err
		}
	}
	return nil
}

type keyOrder struct{ order, id string }

// sortedByKey returns the ids of a map of the state's keys in the order of
// their values, with their order keys.
func sortedByKey[T any](s *State, m map[string]T) []keyOrder {
	out := make([]keyOrder, 0, len(m))
	for id := range m {
		out = append(out, keyOrder{orderKey(s.keyOf(id)), id})
	}
	slices.SortFunc(out, func(a, b keyOrder) int { return strings.Compare(a.order, b.order) })
	return out
}

// keyOf is the key values of an id: a key is kept only as its id (the
// key's row key, see sql.AppendRowKey), which the state decodes in the
// rare places it needs the values (a delete's row, the order of keys, a
// key's place in the spill). The values are the ones the key was first
// seen with, but for a double's -0.0 (0.0) and NaNs (one NaN), which are
// one key.
func (s *State) keyOf(id string) []domain.Value {
	vals, err := sql.DecodeRowKey(id, s.keyTypes)
	if err != nil {
		panic(fmt.Sprintf("cdc: a key id of the state does not decode as keys of types %v: %v", s.keyTypes, err)) // the state encoded it
	}
	return vals
}

// spillOver ends a micro-batch: it drops from the spill the keys brought
// back, and when the keys in memory outgrow the budget, moves keys to the
// spill until they take three quarters of it.
func (s *State) spillOver() error {
	if s.budget <= 0 || (len(s.thawed) == 0 && s.InMemory() == 0) {
		return nil
	}
	per := s.bytesPerKey()
	keep := int(s.budget * 3 / 4 / per)
	puts := map[string][]byte{}
	if int64(s.InMemory())*per > s.budget {
		for id, e := range s.one {
			if s.InMemory() <= keep {
				break
			}
			puts[orderKey(s.keyOf(id))] = encodeEntry(e)
			delete(s.one, id)
		}
		for id, h := range s.two {
			if s.InMemory() <= keep {
				break
			}
			puts[orderKey(s.keyOf(id))] = encodeHistory(h)
			delete(s.two, id)
		}
	}
	if len(puts) == 0 && len(s.thawed) == 0 {
		return nil
	}
	var dels []string
	for k := range s.thawed {
		if _, back := puts[k]; !back {
			dels = append(dels, k)
		}
	}
	if s.cold == nil {
		var err error
		if s.cold, err = openSpill(s.spillDir); err != nil {
			return err
		}
	}
	if err := s.cold.write(puts, dels); err != nil {
		return err
	}
	s.spilled += len(puts)
	s.thawed = nil
	return nil
}

// bytesPerKey estimates what a key takes in memory, from a sample of them.
func (s *State) bytesPerKey() int64 {
	var sum, n int64
	for _, e := range s.one {
		sum += 160 + int64(2*len(e.id)+len(e.row)+len(appendValue(s.rowBuf[:0], e.seq)))
		if n++; n == 64 {
			break
		}
	}
	for _, h := range s.two {
		sum += 200 + int64(2*len(h.id))
		for _, c := range h.changes {
			sum += 32 + int64(len(c.data))
		}
		if n++; n == 64 {
			break
		}
	}
	if n == 0 {
		return 1
	}
	return max(sum/n, 1)
}

// An entry in the spill: its id, fingerprint hash and tombstone measure,
// its sequence, then its row. A history: its id and its changes (each a
// delete flag, its sequence key's length, and its data).

func encodeEntry(e *entry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(e.id)))
	b = append(b, e.id...)
	b = binary.LittleEndian.AppendUint64(b, e.hash)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.gcAt))
	b = appendValue(b, e.seq)
	return append(b, e.row...)
}

func decodeEntry(v []byte) *entry {
	s := string(v)
	e := &entry{}
	var p int
	e.id, p = readString(s, 0)
	e.hash, e.gcAt = le64(s[p:]), int64(le64(s[p+8:]))
	e.seq, p = decodeValue(s, p+16)
	e.row = row(s[p:])
	return e
}

func encodeHistory(h *history) []byte {
	b := binary.AppendUvarint(nil, uint64(len(h.id)))
	b = append(b, h.id...)
	b = binary.AppendUvarint(b, uint64(len(h.changes)))
	for _, c := range h.changes {
		if c.del {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(c.seqLen))
		b = binary.AppendUvarint(b, uint64(len(c.data)))
		b = append(b, c.data...)
	}
	return b
}

func decodeHistory(v []byte) *history {
	s := string(v)
	h := &history{}
	var p int
	h.id, p = readString(s, 0)
	n, w := uvarint(s[p:])
	p += w
	h.changes = make([]change, n)
	for i := range h.changes {
		del := s[p] == 1
		k, w := uvarint(s[p+1:])
		p += 1 + w
		var data string
		data, p = readString(s, p)
		h.changes[i] = change{data: data, seqLen: int32(k), del: del}
	}
	return h
}

func readString(s string, p int) (string, int) {
	n, w := uvarint(s[p:])
	p += w
	return s[p : p+int(n)], p + int(n)
}
