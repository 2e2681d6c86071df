package cdc

import (
	"time"

	"github.com/sluicehq/sluice/domain"
)

// The change types of a table's change feed, as Delta's change data feed
// names them.
const (
	Insert          = "insert"
	UpdatePreimage  = "update_preimage"
	UpdatePostimage = "update_postimage"
	Delete          = "delete"
)

// ChangeTypeColumn is the feed's column with the change type.
const ChangeTypeColumn = "_change_type"

// FeedSchema is the schema of a table's change feed: the table's columns and
// the change type.
func (s *State) FeedSchema() domain.Schema {
	fields := append([]domain.Field(nil), s.TableSchema().Fields...)
	fields = append(fields, domain.Field{Name: ChangeTypeColumn, Type: domain.TypeString})
	return domain.NewSchema(fields...)
}

// Replay folds the changes a micro-batch recorded (a Result's Delta), at
// its commit time now. With feed set it also returns what the micro-batch
// did to the table's rows, in FeedSchema: inserts, updates (the row before,
// then after) and deletes.
func (s *State) Replay(delta *domain.Batch, now time.Time, feed bool) (*domain.Batch, error) {
	if err := s.Evolve(StoredOf(delta.Schema)); err != nil {
		return nil, err
	}
	n := len(s.stored.Fields)
	if len(delta.Columns) != n+2 || delta.Schema.Fields[n].Name != domain.ChangeSequenceColumn || delta.Schema.Fields[n+1].Name != domain.ChangeOpColumn ||
		delta.Columns[n+1].Kind != domain.KindInt64 {
		return nil, domain.Errorf(domain.CodeBatchCodec, "a recorded batch of changes has the columns %v, not the stored columns, %s and %s",
			delta.Schema.Names(), domain.ChangeSequenceColumn, domain.ChangeOpColumn)
	}
	var out *domain.Batch
	if feed {
		out = domain.NewBatch(s.FeedSchema(), 0)
	}
	s.stamp++
	cols := delta.Columns[:n]
	keyCols := s.keyColumns(cols)
	seqs, ops := delta.Columns[n], delta.Columns[n+1]
	var touched []*history
	for i := 0; i < delta.Len(); i++ {
		seq, op := own(seqs.Value(i)), ops.Ints[i]
		if seq.IsNull() || op < domain.ChangeUpsert || op > domain.ChangeTruncate {
			return nil, domain.Errorf(domain.CodeBatchCodec, "row %d of a recorded batch of changes has sequence %s and operation %d", i+1, seq, op)
		}
		s.noteSeq(seq)
		if op == domain.ChangeTruncate {
			if s.info.SCDType != 1 {
				return nil, domain.Errorf(domain.CodeBatchCodec, "a recorded batch of changes of an SCD type 2 table holds a truncate")
			}
			if out != nil {
				if err := s.feedTruncate(out, seq); err != nil {
					return nil, err
				}
			}
			if err := s.truncate(seq, nil); err != nil {
				return nil, err
			}
			continue
		}
		key, null := s.keyAt(keyCols, i)
		if null >= 0 {
			return nil, domain.Errorf(domain.CodeBatchCodec, "row %d of a recorded batch of changes has a NULL key", i+1)
		}
		if s.info.SCDType == 2 {
			h, err := s.historyAt(key, keyCols, i)
			if err != nil {
				return nil, err
			}
			if h == nil {
				id := string(key)
				h = &history{id: id}
				s.two[id] = h
			}
			if out != nil && h.stamp != s.stamp {
				h.stamp, h.before = s.stamp, s.versions(h)
				touched = append(touched, h)
			}
			p := &s.putters[0]
			s.put(p, h, p.changeAt(cols, n, i, seq, op == domain.ChangeDelete), nil)
			s.sum, p.sum = s.sum+p.sum, 0
			continue
		}
		e, err := s.entryAt(key, keyCols, i)
		if err != nil {
			return nil, err
		}
		if e == nil {
			id := string(key)
			e = &entry{id: id}
			s.one[id] = e
		}
		before := e.row
		e.seq = seq
		if op == domain.ChangeDelete {
			e.row = ""
			s.rehashEntry(e)
			s.bury(e, now)
			if out != nil && before != "" {
				feedRow(out, before.values(nil), Delete)
			}
			continue
		}
		e.row = s.encodeAt(cols, n, i)
		s.rehashEntry(e)
		if out == nil {
			continue
		}
		if before != "" {
			feedRow(out, before.values(nil), UpdatePreimage)
			feedRow(out, e.row.values(nil), UpdatePostimage)
		} else {
			feedRow(out, e.row.values(nil), Insert)
		}
	}
	for _, h := range touched {
		s.feedVersions(out, h.before, s.versions(h))
		h.before = nil
	}
	if err := s.collect(now); err != nil {
		return nil, err
	}
	if err := s.spillOver(); err != nil {
		return nil, err
	}
	return out, nil
}

func feedRow(out *domain.Batch, row []domain.Value, typ string) {
	vals := append(append(make([]domain.Value, 0, len(row)+1), row...), domain.String(typ))
	if err := out.AppendRow(vals...); err != nil {
		panic(err) // made in the feed's schema
	}
}

// feedTruncate records the deletes of the rows a truncate at seq removes.
func (s *State) feedTruncate(out *domain.Batch, seq domain.Value) error {
	return s.eachEntry(func(e *entry) error {
		if e.row != "" && domain.Compare(e.seq, seq) < 0 {
			feedRow(out, e.row.values(nil), Delete)
		}
		return nil
	})
}

// feedVersions records how a key's versions changed: a version is known by
// its start.
func (s *State) feedVersions(out *domain.Batch, before, after []version) {
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case j == len(after) || (i < len(before) && before[i].start < after[j].start):
			feedRow(out, s.versionRow(before[i]), Delete)
			i++
		case i == len(before) || after[j].start < before[i].start:
			feedRow(out, s.versionRow(after[j]), Insert)
			j++
		default:
			b, a := s.versionRow(before[i]), s.versionRow(after[j])
			if !rowsEqual(b, a) {
				feedRow(out, b, UpdatePreimage)
				feedRow(out, a, UpdatePostimage)
			}
			i++
			j++
		}
	}
}

// Rows calls fn with the table's rows in key order (and for SCD 2, each
// key's versions in order), chunk rows at a time, in TableSchema.
func (s *State) Rows(chunk int, fn func(*domain.Batch) error) error {
	schema := s.TableSchema()
	n := len(s.stored.Fields)
	var cols []*domain.Column
	rows := 0
	start := func() {
		cols = make([]*domain.Column, len(schema.Fields))
		for i, f := range schema.Fields {
			cols[i] = domain.NewColumn(f.Type.Kind, chunk)
		}
		rows = 0
	}
	flush := func() error {
		b, err := domain.BatchOf(schema, cols)
		if err != nil {
			return err
		}
		start()
		return fn(b)
	}
	// each row decoded straight into the columns
	emit := func(r row, v *version) error {
		r.appendTo(cols[:n])
		if v != nil {
			for j, k := range []string{v.start, v.end} {
				if err := cols[n+j].Append(s.seqValue(k)); err != nil {
					return err
				}
			}
		}
		if rows++; rows == chunk {
			return flush()
		}
		return nil
	}
	start()
	var err error
	if s.info.SCDType == 2 {
		err = s.eachHistory(func(h *history) error {
			for _, v := range s.versions(h) {
				if err := emit(v.row, &v); err != nil {
					return err
				}
			}
			return nil
		})
	} else {
		err = s.eachEntry(func(e *entry) error {
			if e.row == "" {
				return nil
			}
			return emit(e.row, nil)
		})
	}
	if err != nil {
		return err
	}
	if rows > 0 {
		return flush()
	}
	return nil
}
