package cdc

import (
	"testing"

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
		{"same decimal", domain.DecimalType(10, 2), domain.DecimalType(10, 2), false},
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
