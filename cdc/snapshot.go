package cdc

import (
	"github.com/sluicehq/sluice/domain"
)

// SnapshotChanges turns a snapshot of the source (rows of the stored
// columns, each key once) taken at version into the changes that make the
// table hold it: an upsert of each row that is new or differs from the
// key's current row, a delete of each current key the snapshot lacks. The
// changes are in Apply's layout, sequenced by version, which must be
// greater than every sequence the table holds.
func (s *State) SnapshotChanges(snap *domain.Batch, version domain.Value) (*domain.Batch, error) {
	if !s.maxSeq.IsNull() && domain.Compare(version, s.maxSeq) <= 0 {
		return nil, domain.Errorf(domain.CodeCDCSnapshotVersion, "snapshot version %s is not greater than %s, the table's latest", version, s.maxSeq)
	}
	n := len(s.stored.Fields)
	if len(snap.Columns) != n {
		return nil, domain.Errorf(domain.CodeInvalidDefinition, "a snapshot has the columns %v; the table stores %v", snap.Schema.Names(), s.stored.Names())
	}
	fields := append(append([]domain.Field(nil), s.stored.Fields...),
		domain.Field{Name: domain.ChangeSequenceColumn, Type: s.info.SequenceType, Nullable: true},
		domain.Field{Name: domain.ChangeDeleteColumn, Type: domain.TypeBool, Nullable: true},
		domain.Field{Name: domain.ChangeTruncateColumn, Type: domain.TypeBool, Nullable: true})
	out := domain.NewBatch(domain.NewSchema(fields...), 0)
	emit := func(row []domain.Value, del bool) error {
		vals := append(append(make([]domain.Value, 0, n+3), row...), version, domain.Bool(del), domain.Bool(false))
		return out.AppendRow(vals...)
	}
	keyCols := s.keyColumns(snap.Columns)
	seen := make(map[string]bool, snap.Len())
	for i := 0; i < snap.Len(); i++ {
		key, null := s.keyAt(keyCols, i)
		if null >= 0 {
			return nil, domain.Errorf(domain.CodeCDCNullKey, "key column %s is NULL in row %d of the snapshot", s.info.Keys[null], i+1).WithNames(s.info.Keys[null])
		}
		if seen[string(key)] {
			return nil, domain.Errorf(domain.CodeCDCSnapshotKey, "the snapshot holds the key %s twice", s.describeKey(keyValues(keyCols, i)))
		}
		seen[string(key)] = true
		r := s.encodeAt(snap.Columns, n, i)
		if cur := s.current(string(key)); cur != "" && cur == r {
			continue
		}
		if err := emit(r.values(nil), false); err != nil {
			return nil, err
		}
	}
	// the keys the snapshot lacks, in key order
	var gone [][]domain.Value
	if s.info.SCDType == 2 {
		for _, k := range sortedKeys(s.two, func(h *history) []domain.Value { return h.key }) {
			if !seen[k] && s.current(k) != "" {
				gone = append(gone, s.two[k].key)
			}
		}
	} else {
		for _, k := range sortedKeys(s.one, func(e *entry) []domain.Value { return e.key }) {
			if !seen[k] && s.one[k].row != "" {
				gone = append(gone, s.one[k].key)
			}
		}
	}
	for _, key := range gone {
		if err := emit(keyRow(n, s.keyIdx, key), true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// current returns a key's current row: empty when the table does not hold
// the key (deleted, or never seen).
func (s *State) current(key string) row {
	if s.info.SCDType == 1 {
		if e := s.one[key]; e != nil {
			return e.row
		}
		return ""
	}
	h := s.two[key]
	if h == nil || len(h.changes) == 0 {
		return ""
	}
	return h.changes[len(h.changes)-1].row() // empty after a delete
}
