package domain

import (
	"errors"
	"testing"
)

// TestEvolveSchema: Delta's type widening for a table whose schema comes
// from its batches, and SCHEMA_DRIFT for what does not widen or a declared
// schema does not take.
func TestEvolveSchema(t *testing.T) {
	field := func(typ Type) Schema { return NewSchema(Field{Name: "c", Type: typ, Nullable: true}) }
	for _, c := range []struct {
		have, in Type
		declared bool
		want     Type // Kind NULL: SCHEMA_DRIFT
	}{
		{TypeInt8, TypeInt16, false, TypeInt16},
		{TypeInt16, TypeInt32, false, TypeInt32},
		{TypeInt32, TypeInt64, false, TypeInt64},
		{TypeInt64, TypeInt8, false, TypeInt64},
		{TypeInt32, TypeInt64, true, Type{}},
		{TypeFloat32, TypeFloat64, false, TypeFloat64},
		{TypeInt64, TypeFloat64, false, TypeFloat64},
		{TypeFloat64, TypeInt64, true, TypeFloat64},
		{DecimalType(10, 2), DecimalType(12, 4), false, DecimalType(12, 4)},
		{DecimalType(10, 2), DecimalType(5, 1), true, DecimalType(10, 2)},
		{DecimalType(38, 0), DecimalType(38, 2), false, Type{}},
		{DecimalType(20, 1), TypeInt64, false, DecimalType(20, 1)},
		{TypeDate, TypeTimestampNTZ, false, TypeTimestampNTZ},
		{TypeTimestampNTZ, TypeDate, true, TypeTimestampNTZ},
		{TypeDate, TypeTimestampNTZ, true, Type{}},
		{TypeDate, TypeTimestamp, false, Type{}}, // only to TIMESTAMP_NTZ, as Delta
		{TypeString, TypeInt64, false, TypeString},
		{TypeInt64, TypeString, false, Type{}},
	} {
		got, err := EvolveSchema("t", field(c.have), field(c.in), c.declared)
		if c.want.Kind == KindNull {
			var de *Error
			if !errors.As(err, &de) || de.Code != CodeSchemaDrift {
				t.Errorf("%s then %s (declared %v): got %v, want SCHEMA_DRIFT", c.have, c.in, c.declared, err)
			}
			continue
		}
		if err != nil || !got.Fields[0].Type.Equal(c.want) {
			t.Errorf("%s then %s (declared %v): got %s, %v, want %s", c.have, c.in, c.declared, got, err, c.want)
		}
	}
}

// TestDateWidensToNTZ: a batch of dates read under a TIMESTAMP_NTZ schema
// (Conform, Concat) holds each date's midnight.
func TestDateWidensToNTZ(t *testing.T) {
	dates := NewBatch(NewSchema(Field{Name: "c", Type: TypeDate, Nullable: true}), 0)
	for _, v := range []Value{DateDays(0), Null(), DateDays(-1), DateDays(19782)} {
		if err := dates.AppendRow(v); err != nil {
			t.Fatal(err)
		}
	}
	ntz := NewSchema(Field{Name: "c", Type: TypeTimestampNTZ, Nullable: true})
	want := []Value{TimestampMicros(0), Null(), TimestampMicros(-microsPerDay), TimestampMicros(19782 * microsPerDay)}
	conformed, err := Conform("t", dates, ntz)
	if err != nil {
		t.Fatal(err)
	}
	concat, err := Concat(NewBatch(ntz, 0), dates)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Batch{"Conform": conformed, "Concat": concat} {
		if !b.Schema.Equal(ntz) {
			t.Errorf("%s: schema %s, want %s", name, b.Schema, ntz)
		}
		for i, w := range want {
			if got := b.Columns[0].Value(i); !got.Equal(w) {
				t.Errorf("%s row %d: %s, want %s", name, i, got, w)
			}
		}
	}
}
