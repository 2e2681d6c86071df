package cdc

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// A deleted key's tombstone keeps older changes out until it is collected:
// after the threshold, by commit time when the sequence is a number, by
// the greatest sequence when it is a timestamp.
func TestTombstoneCollection(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ts := func(sec int64) domain.Value {
		return domain.TimestampMicros(t0.Add(time.Duration(sec) * time.Second).UnixMicro())
	}
	num := func(n int64) domain.Value { return domain.Int(n) }
	cases := []struct {
		name string
		seq  func(int64) domain.Value
		typ  domain.Type
		// the commit times of the three batches: the delete, a late
		// change within the threshold, a late change after it
		at [3]time.Time
		// the sequences: of the insert and delete, and of the batch
		// that moves a timestamp sequence past the threshold
		late, del, later int64
	}{
		{"numbers, by commit time", num, domain.TypeInt64, [3]time.Time{t0, t0.Add(5 * time.Second), t0.Add(20 * time.Second)}, 1, 2, 3},
		{"timestamps, by sequence", ts, domain.Type{Kind: domain.KindTimestamp}, [3]time.Time{t0, t0, t0}, 1, 2, 30},
	}
	for _, tc := range cases {
		for _, budget := range []int64{0, 1} { // every key in memory; every key spilled after each batch
			t.Run(fmt.Sprintf("%s budget %d", tc.name, budget), func(t *testing.T) {
				schema := domain.NewSchema(append(append([]domain.Field(nil), stored.Fields...),
					domain.Field{Name: domain.ChangeSequenceColumn, Type: tc.typ},
					domain.Field{Name: domain.ChangeDeleteColumn, Type: domain.TypeBool},
					domain.Field{Name: domain.ChangeTruncateColumn, Type: domain.TypeBool})...)
				change := func(key int64, city string, seq int64, del bool) *domain.Batch {
					b := domain.NewBatch(schema, 1)
					if err := b.AppendRow(domain.Int(key), domain.String("n"), domain.String(city), tc.seq(seq), domain.Bool(del), domain.Bool(false)); err != nil {
						t.Fatal(err)
					}
					return b
				}
				s, err := New(domain.ChangeInfo{Keys: []string{"id"}, SCDType: 1, SequenceType: tc.typ, TombstoneGCSeconds: 10}, stored)
				if err != nil {
					t.Fatal(err)
				}
				s.SpillBeyond(budget, t.TempDir())
				defer s.Close()
				apply := func(b *domain.Batch, at time.Time) {
					if _, err := s.Apply(b, nil, at); err != nil {
						t.Fatal(err)
					}
				}
				apply(change(1, "del", tc.del, true), tc.at[0])
				apply(change(1, "late", tc.late, false), tc.at[1])
				if rows := tableRows(t, s); len(rows) != 0 {
					t.Fatalf("an older change came back through the tombstone: %v", rows)
				}
				apply(change(2, "other", tc.later, false), tc.at[2]) // moves the clock or the sequence on: the tombstone goes
				apply(change(1, "late", tc.late, false), tc.at[2])
				if rows := tableRows(t, s); len(rows) != 2 {
					t.Fatalf("after the tombstone was collected, the late change should apply: %v", rows)
				}
			})
		}
	}
}
