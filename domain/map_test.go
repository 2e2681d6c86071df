package domain

import (
	"encoding/json"
	"testing"
)

func TestMapValue(t *testing.T) {
	m := Map(MapEntry(String("a"), Int(1)), MapEntry(String("b"), Null()))
	if m.Kind() != KindMap || len(m.Entries()) != 2 {
		t.Fatalf("map %v: kind %s, %d entries", m, m.Kind(), len(m.Entries()))
	}
	if got, want := m.String(), "{a -> 1, b -> NULL}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := Map().String(); got != "{}" {
		t.Errorf("empty map String() = %q", got)
	}
	same := Map(MapEntry(String("a"), Int(1)), MapEntry(String("b"), Null()))
	if !m.Equal(same) || Compare(m, same) != 0 {
		t.Error("equal maps differ")
	}
	// a map is not the list of its entries, and entry order matters
	if m.Equal(List(m.Entries()...)) {
		t.Error("a map equals a list")
	}
	other := Map(MapEntry(String("b"), Null()), MapEntry(String("a"), Int(1)))
	if m.Equal(other) || Compare(m, other) >= 0 {
		t.Errorf("Compare(%v, %v) = %d", m, other, Compare(m, other))
	}
}

func TestMapType(t *testing.T) {
	mt := MapOf(TypeString, ListOf(TypeInt64))
	if got, want := mt.String(), "map<string, array<bigint>>"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if mt.Equal(MapOf(TypeInt64, ListOf(TypeInt64))) || mt.Equal(ListOf(ListOf(TypeInt64))) {
		t.Error("map types with other keys or kinds are equal")
	}
	if !mt.Equal(MapOf(TypeString, ListOf(TypeInt64))) {
		t.Error("identical map types differ")
	}
	raw, err := json.Marshal(mt)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(raw), `{"kind":10,"key":{"kind":4},"elem":{"kind":8,"elem":{"kind":2}}}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Type
	if err := json.Unmarshal(raw, &back); err != nil || !back.Equal(mt) {
		t.Errorf("JSON round trip: %v, %v", back, err)
	}
}

// mapBatch is the batch pinned by testdata/batch_map_v3.golden: maps, empty
// and NULL, a NULL value, and a map inside a list.
func mapBatch(t testing.TB) *Batch {
	schema := NewSchema(
		Field{Name: "attrs", Type: MapOf(TypeString, TypeInt64), Nullable: true},
		Field{Name: "nested", Type: ListOf(MapOf(TypeInt64, TypeString)), Nullable: true},
	)
	return batchOfRows(t, schema,
		[]Value{Map(MapEntry(String("a"), Int(1)), MapEntry(String("b"), Null())), List(Map(MapEntry(Int(1), String("x"))))},
		[]Value{Map(), List(Map(), Null())},
		[]Value{Null(), Null()},
	)
}

func TestGoldenMapBatch(t *testing.T) {
	b := mapBatch(t)
	p, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, stored := range [][]byte{checkGolden(t, "batch_map_v3.golden", p), readGolden(t, "batch_map_v2.golden")} {
		got, err := DecodeBatch(stored)
		if err != nil {
			t.Fatal(err)
		}
		if diff := batchDiff(b, got); diff != "" {
			t.Errorf("golden map batch version %d decodes differently: %s", stored[0], diff)
		}
		if !got.Columns[0].IsNull(2) || got.Columns[0].IsNull(1) {
			t.Error("NULL map rows are not read back as NULL")
		}
	}
}
