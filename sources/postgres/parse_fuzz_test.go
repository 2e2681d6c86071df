package postgres

import (
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// FuzzParseText: any column text, read as any mapped type, gives a value
// of the type or an error, never a panic.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"t", "-12", "1.50", `\x00ff`, "2026-01-02", "2026-01-02 03:04:05.123456+02", "2026-01-02 03:04:05", `{"a": [1]}`, "Infinity", ""} {
		f.Add(s, uint8(0))
	}
	types := []domain.Type{domain.TypeBool, domain.TypeInt64, domain.TypeFloat64, domain.DecimalType(12, 2), domain.TypeBytes,
		domain.TypeDate, domain.TypeTimestamp, domain.TypeTimestampNTZ, domain.TypeVariant, domain.TypeString}
	f.Fuzz(func(t *testing.T, s string, k uint8) {
		typ := types[int(k)%len(types)]
		v, err := parseText(s, typ)
		if err == nil && !v.IsNull() && v.Kind() != typ.Kind {
			t.Fatalf("%q as %s gave a %s", s, typ, v.Kind())
		}
	})
}
