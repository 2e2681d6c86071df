package sql

import (
	"math"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// rowKeyOf is the row key of one row holding vals, of the given types.
func rowKeyOf(t testing.TB, types []domain.Type, vals []domain.Value) string {
	t.Helper()
	cols := make([]*domain.Column, len(types))
	for i, typ := range types {
		cols[i] = domain.NewColumn(typ.Kind, 1)
		if err := cols[i].Append(vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	return string(AppendRowKey(nil, cols, 0))
}

var rowKeyTypes = []domain.Type{
	domain.TypeInt64, domain.TypeBool, domain.TypeDate, domain.TypeTimestamp, domain.TypeFloat64, domain.TypeString,
	domain.TypeBytes, domain.DecimalType(10, 2), domain.ListOf(domain.TypeString),
	domain.StructOf(domain.Field{Name: "a", Type: domain.TypeInt64}, domain.Field{Name: "d", Type: domain.DecimalType(5, 1)}),
	domain.MapOf(domain.TypeString, domain.TypeFloat64),
}

func TestDecodeRowKey(t *testing.T) {
	dec := domain.Decimal(domain.Int128{Lo: 12345}, 10, 2)
	tests := []struct {
		name  string
		vals  []domain.Value
		wants []domain.Value // what decodes, where it differs from vals
	}{
		{name: "values", vals: []domain.Value{domain.Int(-7), domain.Bool(true), domain.DateDays(19000), domain.TimestampMicros(1_700_000_000_000_000),
			domain.Float(2.5), domain.String("a\x00b"), domain.Bytes([]byte{0, 1}), dec, domain.List(domain.String("x"), domain.Null()),
			domain.Struct(domain.Int(1), domain.Decimal(domain.Int128{Lo: 15}, 5, 1)), domain.Map(domain.MapEntry(domain.String("k"), domain.Float(1)))}},
		{name: "NULLs", vals: make([]domain.Value, len(rowKeyTypes))},
		{name: "empty", vals: []domain.Value{domain.Int(0), domain.Bool(false), domain.DateDays(0), domain.TimestampMicros(0), domain.Float(0),
			domain.String(""), domain.Bytes(nil), domain.Decimal(domain.Int128{}, 10, 2), domain.List(), domain.Struct(domain.Null(), domain.Null()), domain.Map()}},
		{name: "-0.0 is 0.0", vals: []domain.Value{domain.Int(1), domain.Bool(false), domain.DateDays(0), domain.TimestampMicros(0), domain.Float(math.Copysign(0, -1)),
			domain.String(""), domain.Bytes(nil), dec, domain.List(), domain.Struct(domain.Int(1), domain.Null()), domain.Map()},
			wants: []domain.Value{domain.Int(1), domain.Bool(false), domain.DateDays(0), domain.TimestampMicros(0), domain.Float(0),
				domain.String(""), domain.Bytes(nil), dec, domain.List(), domain.Struct(domain.Int(1), domain.Null()), domain.Map()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := rowKeyOf(t, rowKeyTypes, tt.vals)
			got, err := DecodeRowKey(key, rowKeyTypes)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.vals
			if tt.wants != nil {
				want = tt.wants
			}
			for i, v := range got {
				if !v.Equal(want[i]) || v.Kind() != want[i].Kind() {
					t.Errorf("value %d: got %v (%s), want %v (%s)", i, v, v.Kind(), want[i], want[i].Kind())
				}
			}
			if again := rowKeyOf(t, rowKeyTypes, got); again != key {
				t.Errorf("the decoded values encode as %q, not %q", again, key)
			}
			for n := 0; n < len(key); n++ {
				if _, err := DecodeRowKey(key[:n], rowKeyTypes); err == nil {
					t.Errorf("the key cut to %d bytes decodes", n)
				}
			}
			if _, err := DecodeRowKey(key+"\x00", rowKeyTypes); err == nil {
				t.Error("the key with a byte more decodes")
			}
		})
	}
}

// FuzzDecodeRowKey: any bytes decode or are refused, without a panic, and
// what decodes encodes back as the same bytes.
func FuzzDecodeRowKey(f *testing.F) {
	f.Add(rowKeyOf(f, rowKeyTypes, make([]domain.Value, len(rowKeyTypes))))
	f.Add(rowKeyOf(f, rowKeyTypes, []domain.Value{domain.Int(5), domain.Bool(true), domain.DateDays(1), domain.TimestampMicros(2), domain.Float(3),
		domain.String("s"), domain.Bytes([]byte("b")), domain.Decimal(domain.Int128{Lo: 9}, 10, 2), domain.List(domain.String("x")),
		domain.Struct(domain.Int(1), domain.Null()), domain.Map(domain.MapEntry(domain.String("k"), domain.Null()))}))
	f.Fuzz(func(t *testing.T, key string) {
		vals, err := DecodeRowKey(key, rowKeyTypes)
		if err != nil {
			return
		}
		if again := rowKeyOf(t, rowKeyTypes, vals); again != key {
			t.Fatalf("%q decodes to %v, which encodes as %q", key, vals, again)
		}
	})
}
