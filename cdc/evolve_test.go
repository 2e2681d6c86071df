package cdc

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// TestKeyTypeDrift: the stored columns may evolve, but not so that the keys
// held would be encoded otherwise.
func TestKeyTypeDrift(t *testing.T) {
	withKey := func(key domain.Type) domain.Schema {
		return domain.NewSchema(domain.Field{Name: "id", Type: key}, domain.Field{Name: "name", Type: domain.TypeString, Nullable: true})
	}
	tests := []struct {
		name     string
		from, to domain.Type
		drifts   bool
	}{
		{"int to bigint", domain.TypeInt32, domain.TypeInt64, false},
		{"bigint to double", domain.TypeInt64, domain.TypeFloat64, true},
		{"string to binary", domain.TypeString, domain.TypeBytes, true},
		{"decimal scale", domain.DecimalType(10, 2), domain.DecimalType(10, 3), true},
		{"decimal precision widened", domain.DecimalType(10, 2), domain.DecimalType(12, 2), false},
		{"array of bigint to double", domain.ListOf(domain.TypeInt64), domain.ListOf(domain.TypeFloat64), true},
		{"struct of a decimal widened", domain.StructOf(domain.Field{Name: "d", Type: domain.DecimalType(5, 1)}),
			domain.StructOf(domain.Field{Name: "d", Type: domain.DecimalType(9, 1)}), false},
		{"struct of one more field", domain.StructOf(domain.Field{Name: "a", Type: domain.TypeInt64}),
			domain.StructOf(domain.Field{Name: "a", Type: domain.TypeInt64}, domain.Field{Name: "b", Type: domain.TypeInt64}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, scd := range []int{1, 2} {
				s, err := New(domain.ChangeInfo{SCDType: scd, Keys: []string{"id"}, SequenceType: domain.TypeInt64}, withKey(tt.from))
				if err != nil {
					t.Fatal(err)
				}
				err = s.Evolve(withKey(tt.to))
				if got := domain.CodeOf(err) == domain.CodeCDCKeyDrift; got != tt.drifts {
					t.Errorf("SCD %d: Evolve = %v; want a key drift: %v", scd, err, tt.drifts)
				}
			}
		})
	}
}

// TestDecimalKeyWidened: after a decimal key widens to more digits at its
// scale, a change of a key held before finds it, and its delete is a row
// of the new type.
func TestDecimalKeyWidened(t *testing.T) {
	schemaOf := func(key domain.Type) domain.Schema {
		return domain.NewSchema(domain.Field{Name: "id", Type: key}, domain.Field{Name: "name", Type: domain.TypeString, Nullable: true})
	}
	batchOf := func(key domain.Type, del bool) *domain.Batch {
		s := schemaOf(key)
		fields := append(append([]domain.Field(nil), s.Fields...),
			domain.Field{Name: domain.ChangeSequenceColumn, Type: domain.TypeInt64},
			domain.Field{Name: domain.ChangeDeleteColumn, Type: domain.TypeBool},
			domain.Field{Name: domain.ChangeTruncateColumn, Type: domain.TypeBool})
		b := domain.NewBatch(domain.NewSchema(fields...), 1)
		seq := int64(1)
		if del {
			seq = 2
		}
		if err := b.AppendRow(domain.Decimal(domain.Int128{Lo: 100}, key.Precision, key.Scale), domain.String("ann"), domain.Int(seq), domain.Bool(del), domain.Bool(false)); err != nil {
			t.Fatal(err)
		}
		return b
	}
	narrow, wide := domain.DecimalType(10, 2), domain.DecimalType(12, 2)
	s, err := New(domain.ChangeInfo{SCDType: 1, Keys: []string{"id"}, SequenceType: domain.TypeInt64, TombstoneGCSeconds: 1 << 30}, schemaOf(narrow))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(batchOf(narrow, false), nil, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Evolve(schemaOf(wide)); err != nil {
		t.Fatal(err)
	}
	res, err := s.Apply(batchOf(wide, true), nil, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 1 || len(tableRows(t, s)) != 0 {
		t.Errorf("%d deleted, rows %v; want the key held before deleted", res.Deleted, tableRows(t, s))
	}
	if _, err := domain.EncodeBatch(res.Delta); err != nil {
		t.Errorf("the delta of the delete does not encode: %v", err)
	}
}
