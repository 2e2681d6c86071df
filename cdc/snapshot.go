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
		cur, err := s.current(key, keyCols, i)
		if err != nil {
			return nil, err
		}
		if cur != "" && cur == r {
			continue
		}
		if err := emit(r.values(nil), false); err != nil {
			return nil, err
		}
	}
	// the keys the snapshot lacks, in key order
	lacking := func(id string, cur row) error {
		if seen[id] || cur == "" {
			return nil
		}
		return emit(s.keyRow(id), true)
	}
	var err error
	if s.info.SCDType == 2 {
		err = s.eachHistory(func(h *history) error { return lacking(h.id, h.current()) })
	} else {
		err = s.eachEntry(func(e *entry) error { return lacking(e.id, e.row) })
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// current returns a key's current row: empty when the table does not hold
// the key (deleted, or never seen).
func (s *State) current(id []byte, keyCols []*domain.Column, i int) (row, error) {
	if s.info.SCDType == 1 {
		e, err := s.entryAt(id, keyCols, i)
		if e == nil || err != nil {
			return "", err
		}
		return e.row, nil
	}
	h, err := s.historyAt(id, keyCols, i)
	if h == nil || err != nil {
		return "", err
	}
	return h.current(), nil
}

// current returns the key's current row: empty after a delete.
func (h *history) current() row {
	if len(h.changes) == 0 {
		return ""
	}
	return h.changes[len(h.changes)-1].row()
}
