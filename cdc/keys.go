package cdc

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
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
	hot := sortedByKey(s.one, func(e *entry) []domain.Value { return e.key })
	return s.merge(len(hot), func(i int) string { return hot[i].order }, func(i int) error { return fn(s.one[hot[i].id]) },
		func(v []byte) error { return fn(decodeEntry(v)) })
}

// eachHistory is eachEntry for SCD 2 histories.
func (s *State) eachHistory(fn func(*history) error) error {
	hot := sortedByKey(s.two, func(h *history) []domain.Value { return h.key })
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
func sortedByKey[T any](m map[string]T, keyOf func(T) []domain.Value) []keyOrder {
	out := make([]keyOrder, 0, len(m))
	for id, v := range m {
		out = append(out, keyOrder{orderKey(keyOf(v)), id})
	}
	slices.SortFunc(out, func(a, b keyOrder) int { return strings.Compare(a.order, b.order) })
	return out
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
			puts[orderKey(e.key)] = encodeEntry(e)
			delete(s.one, id)
		}
		for id, h := range s.two {
			if s.InMemory() <= keep {
				break
			}
			puts[orderKey(h.key)] = encodeHistory(h)
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
		sum += 160 + int64(len(e.id)+len(e.row)+len(appendValue(s.rowBuf[:0], e.seq))) + valuesSize(e.key)
		if n++; n == 64 {
			break
		}
	}
	for _, h := range s.two {
		sum += 200 + int64(len(h.id)) + valuesSize(h.key)
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

func valuesSize(vals []domain.Value) int64 {
	n := int64(24 * len(vals))
	for _, v := range vals {
		n += int64(len(appendValue(nil, v)))
	}
	return n
}

// An entry in the spill: its id, fingerprint hash and tombstone measure,
// its key values, its sequence, then its row. A history: its id, key
// values, and its changes (each a delete flag, its sequence key's length,
// and its data).

func encodeEntry(e *entry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(e.id)))
	b = append(b, e.id...)
	b = binary.LittleEndian.AppendUint64(b, e.hash)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.gcAt))
	b = appendValues(b, e.key)
	b = appendValue(b, e.seq)
	return append(b, e.row...)
}

func decodeEntry(v []byte) *entry {
	s := string(v)
	e := &entry{}
	var p int
	e.id, p = readString(s, 0)
	e.hash, e.gcAt = le64(s[p:]), int64(le64(s[p+8:]))
	e.key, p = readValues(s, p+16)
	e.seq, p = decodeValue(s, p)
	e.row = row(s[p:])
	return e
}

func encodeHistory(h *history) []byte {
	b := binary.AppendUvarint(nil, uint64(len(h.id)))
	b = append(b, h.id...)
	b = appendValues(b, h.key)
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
	h.key, p = readValues(s, p)
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

func appendValues(b []byte, vals []domain.Value) []byte {
	b = binary.AppendUvarint(b, uint64(len(vals)))
	for _, v := range vals {
		b = appendValue(b, v)
	}
	return b
}

func readValues(s string, p int) ([]domain.Value, int) {
	n, w := uvarint(s[p:])
	p += w
	vals := make([]domain.Value, n)
	for i := range vals {
		vals[i], p = decodeValue(s, p)
	}
	return vals, p
}

func readString(s string, p int) (string, int) {
	n, w := uvarint(s[p:])
	p += w
	return s[p : p+int(n)], p + int(n)
}
