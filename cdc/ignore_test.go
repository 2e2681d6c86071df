package cdc

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// IGNORE NULL UPDATES keeps the stored value of the columns it names where
// an update has NULL: all of them, a list, or all but a list; a delete and a
// new key are not updates.
func TestIgnoreNullUpdates(t *testing.T) {
	cases := []struct {
		name   string
		ignore *domain.ColumnSet
		want   string
	}{
		{"off", nil, "[1 NULL NULL]"},
		{"every column", &domain.ColumnSet{Except: true}, "[1 ann oslo]"},
		{"a list", &domain.ColumnSet{Columns: []string{"name"}}, "[1 ann NULL]"},
		{"all but a list", &domain.ColumnSet{Except: true, Columns: []string{"name"}}, "[1 NULL oslo]"},
	}
	for _, scd := range []int{1, 2} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("scd%d %s", scd, tc.name), func(t *testing.T) {
				s, err := New(domain.ChangeInfo{Keys: []string{"id"}, SCDType: scd, SequenceType: domain.TypeInt64, TombstoneGCSeconds: 1 << 30}, stored)
				if err != nil {
					t.Fatal(err)
				}
				b := changeRows(t,
					[]domain.Value{domain.Int(1), domain.String("ann"), domain.String("oslo"), domain.Int(1), domain.Bool(false), domain.Bool(false)},
					[]domain.Value{domain.Int(1), domain.Null(), domain.Null(), domain.Int(2), domain.Bool(false), domain.Bool(false)})
				if _, err := s.Apply(b, tc.ignore, time.Unix(0, 0)); err != nil {
					t.Fatal(err)
				}
				rows := tableRows(t, s)
				last := rows[len(rows)-1][:3] // the current row (SCD 2: the last version)
				if got := fmt.Sprint(last); got != tc.want {
					t.Fatalf("current row %s, want %s", got, tc.want)
				}
			})
		}
	}
}

// TestOneDeltaRowPerSequence: changes of one key and sequence repeated in a
// batch (an exact duplicate, then another value, the later winning) are
// one change of the batch's delta, with or without NULLs filled.
func TestOneDeltaRowPerSequence(t *testing.T) {
	for _, scd := range []int{1, 2} {
		for _, ignore := range []*domain.ColumnSet{nil, {Except: true}} {
			t.Run(fmt.Sprintf("scd%d ignore %v", scd, ignore != nil), func(t *testing.T) {
				s, err := New(domain.ChangeInfo{Keys: []string{"id"}, SCDType: scd, SequenceType: domain.TypeInt64, TombstoneGCSeconds: 1 << 30}, stored)
				if err != nil {
					t.Fatal(err)
				}
				b := changeRows(t,
					[]domain.Value{domain.Int(1), domain.String("ann"), domain.String("oslo"), domain.Int(1), domain.Bool(false), domain.Bool(false)},
					[]domain.Value{domain.Int(1), domain.Null(), domain.String("rome"), domain.Int(2), domain.Bool(false), domain.Bool(false)},
					[]domain.Value{domain.Int(1), domain.Null(), domain.String("rome"), domain.Int(2), domain.Bool(false), domain.Bool(false)},
					[]domain.Value{domain.Int(1), domain.String("bob"), domain.Null(), domain.Int(2), domain.Bool(false), domain.Bool(false)})
				res, err := s.Apply(b, ignore, time.Unix(0, 0))
				if err != nil {
					t.Fatal(err)
				}
				want := map[int]int{1: 1, 2: 2}[scd] // SCD 1: the key's last row; SCD 2: one per sequence
				if n := res.Delta.Len(); n != want || res.Upserted != int64(want) {
					t.Errorf("delta of %d rows, %d upserted; want %d", n, res.Upserted, want)
				}
				rows := tableRows(t, s)
				// NULLs are filled from the row before: SCD 1's current row
				// (the first change of sequence 2), SCD 2's change before
				// sequence 2.
				wantLast := "[1 bob NULL]"
				if ignore != nil {
					wantLast = map[int]string{1: "[1 bob rome]", 2: "[1 bob oslo]"}[scd]
				}
				if got := fmt.Sprint(rows[len(rows)-1][:3]); got != wantLast {
					t.Errorf("current row %s, want %s", got, wantLast)
				}
			})
		}
	}
}

// changeRows is a batch of changes (changeSchema) of the given rows, which
// may hold NULLs where batchOf's changes cannot.
func changeRows(t *testing.T, rows ...[]domain.Value) *domain.Batch {
	t.Helper()
	b := domain.NewBatch(changeSchema(), len(rows))
	for _, r := range rows {
		if err := b.AppendRow(r...); err != nil {
			t.Fatal(err)
		}
	}
	return b
}
