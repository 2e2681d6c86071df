package domain

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// storedInts is a batch of one bigint column "id" holding xs, noted as the
// rows of table's batch at seq.
func storedInts(t testing.TB, table string, seq uint64, xs ...int64) *Batch {
	t.Helper()
	col := NewColumn(KindInt64, len(xs))
	col.Ints = append(col.Ints, xs...)
	b, err := BatchOf(NewSchema(Field{Name: "id", Type: TypeInt64}), []*Column{col})
	if err != nil {
		t.Fatal(err)
	}
	b.SetStored(table, seq)
	return b
}

// TestStoredRowsCarried: which batches are a selection of stored rows, and
// of which.
func TestStoredRowsCarried(t *testing.T) {
	a := func() *Batch { return storedInts(t, "t", 10, 0, 1, 2, 3, 4) }
	b := func() *Batch { return storedInts(t, "t", 12, 5, 6, 7) }
	concat := func(parts ...*Batch) *Batch {
		out, err := Concat(parts...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	renamed := func() *Batch {
		x := a()
		x.Schema = NewSchema(Field{Name: "other", Type: TypeInt64})
		return x
	}
	appended := func() *Batch {
		x := a()
		if err := x.AppendRow(Int(9)); err != nil {
			t.Fatal(err)
		}
		return x
	}
	rebuilt := func() *Batch {
		x := a()
		out, _ := BatchOf(x.Schema, x.Columns)
		return out
	}
	projected := func() *Batch {
		x := a()
		out, _ := BatchOf(x.Schema, x.Columns)
		out.SameColumnsAs(x)
		return out
	}
	// Two columns stored as (a, b), projected as (b, a) over the same
	// columns, then joined by name after an empty batch of (a, b): the
	// values would come back swapped if it were taken for a selection.
	swapped := func() *Batch {
		a, bb := NewColumn(KindInt64, 2), NewColumn(KindInt64, 2)
		a.Ints, bb.Ints = append(a.Ints, 1, 2), append(bb.Ints, 3, 4)
		ab := NewSchema(Field{Name: "a", Type: TypeInt64}, Field{Name: "b", Type: TypeInt64})
		x, err := BatchOf(ab, []*Column{a, bb})
		if err != nil {
			t.Fatal(err)
		}
		x.SetStored("t", 10)
		ba := NewSchema(Field{Name: "b", Type: TypeInt64}, Field{Name: "a", Type: TypeInt64})
		y, err := BatchOf(ba, []*Column{a, bb})
		if err != nil {
			t.Fatal(err)
		}
		y.SameColumnsAs(x)
		return concat(NewBatch(ab, 0), y)
	}
	kept := func(src *Batch, keep ...int) *Batch {
		out := src.Select(keep)
		return out
	}
	cases := []struct {
		name string
		b    *Batch
		want *Selection // nil: not a selection
	}{
		{"as stored", a(), &Selection{Table: "t", Batches: []StoredBatch{{10, 5}}}},
		{"rows kept in order", kept(a(), 0, 2, 4), &Selection{Table: "t", Batches: []StoredBatch{{10, 5}}, Keep: []int{0, 2, 4}}},
		{"rows of rows kept", kept(kept(a(), 1, 2, 4), 0, 2), &Selection{Table: "t", Batches: []StoredBatch{{10, 5}}, Keep: []int{1, 4}}},
		{"rows out of order", kept(a(), 2, 0), nil},
		{"a row twice", kept(a(), 1, 1), nil},
		{"two batches end to end", concat(a(), b()), &Selection{Table: "t", Batches: []StoredBatch{{10, 5}, {12, 3}}}},
		{"some rows of two batches", concat(kept(a(), 4), b()), &Selection{Table: "t", Batches: []StoredBatch{{10, 5}, {12, 3}}, Keep: []int{4, 5, 6, 7}}},
		{"rows kept of two batches", kept(concat(a(), kept(b(), 0, 2)), 0, 5, 6), &Selection{Table: "t", Batches: []StoredBatch{{10, 5}, {12, 3}}, Keep: []int{0, 5, 7}}},
		{"batches of two tables", concat(a(), storedInts(t, "u", 12, 5)), nil},
		{"one batch twice", concat(a(), a()), nil},
		{"batches out of order", concat(b(), a()), nil},
		{"a stored batch and another", concat(a(), idsBatch(t, 8)), nil},
		{"renamed in place", renamed(), nil},
		{"a row appended", appended(), nil},
		{"rebuilt from the columns", rebuilt(), nil},
		{"every column projected", projected(), &Selection{Table: "t", Batches: []StoredBatch{{10, 5}}}},
		{"never stored", idsBatch(t, 1, 2), nil},
		{"columns swapped, joined by name", swapped(), nil},
	}
	for _, c := range cases {
		got, ok := c.b.Selection()
		if !ok {
			if c.want != nil {
				t.Errorf("%s: not a selection, want %+v", c.name, *c.want)
			}
			continue
		}
		if c.want == nil {
			t.Errorf("%s: a selection %+v, want none", c.name, got)
			continue
		}
		if diff := cmp.Diff(*c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
			continue
		}
		// The selection, through its encoding, gives the batch's rows back
		// from the stored batches.
		sel, err := DecodeSelection(EncodeSelection(got))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var stored []*Batch
		for _, sb := range sel.Batches {
			stored = append(stored, map[uint64]*Batch{10: a(), 12: b()}[sb.Seq])
		}
		rows, err := sel.Rows(stored)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(c.b.Rows(), rows.Rows(), cmp.AllowUnexported(Value{})); diff != "" {
			t.Errorf("%s: the rows read back differ (-want +got):\n%s", c.name, diff)
		}
	}
}

func idsBatch(t testing.TB, xs ...int64) *Batch {
	b := storedInts(t, "", 0, xs...)
	b.origin = nil
	return b
}

func TestGoldenSelection(t *testing.T) {
	sel := Selection{Batches: []StoredBatch{{Seq: 7, Rows: 5}, {Seq: 300, Rows: 11}}, Keep: []int{0, 1, 3, 5, 8, 13, 15}}
	stored := checkGolden(t, "selection_v1.golden", EncodeSelection(sel))
	got, err := DecodeSelection(stored)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sel, got); diff != "" {
		t.Errorf("the golden selection decodes differently (-want +got):\n%s", diff)
	}
}

// TestDecodeSelectionRefuses: damage is STORE_CORRUPT, never another
// selection.
func TestDecodeSelectionRefuses(t *testing.T) {
	valid := EncodeSelection(Selection{Batches: []StoredBatch{{Seq: 7, Rows: 9}}, Keep: []int{0, 8}})
	all := EncodeSelection(Selection{Batches: []StoredBatch{{Seq: 7, Rows: 9}}})
	for _, c := range []struct {
		name string
		p    []byte
	}{
		{"empty", nil},
		{"another version", append([]byte{2}, valid[1:]...)},
		{"no batches", []byte{1, 0, 1}},
		{"batch of no rows", []byte{1, 1, 7, 0, 0}},
		{"seq 0", []byte{1, 1, 0, 9, 9}},
		{"batches out of order", []byte{1, 2, 7, 1, 7, 1, 2}},
		{"none kept", []byte{1, 1, 7, 9, 0}},
		{"more kept than stored", []byte{1, 1, 7, 9, 10}},
		{"bitmap cut short", valid[:len(valid)-1]},
		{"bitmap too long", append(bytes.Clone(valid), 0)},
		{"bitmap counts other rows", append(bytes.Clone(valid[:len(valid)-2]), 0x07, 0x01)},
		{"bitmap past the rows", append(bytes.Clone(valid[:len(valid)-2]), 0x01, 0x02)},
		{"all kept, then more", append(bytes.Clone(all), 0xff)},
	} {
		if _, err := DecodeSelection(c.p); CodeOf(err) != CodeStoreCorrupt {
			t.Errorf("%s: %v, want %s", c.name, err, CodeStoreCorrupt)
		}
	}
	for _, p := range [][]byte{valid, all} {
		if _, err := DecodeSelection(p); err != nil {
			t.Errorf("a valid selection: %v", err)
		}
	}
}

func FuzzDecodeSelection(f *testing.F) {
	f.Add(EncodeSelection(Selection{Batches: []StoredBatch{{Seq: 7, Rows: 9}}, Keep: []int{0, 8}}))
	f.Add(EncodeSelection(Selection{Batches: []StoredBatch{{Seq: 1, Rows: 3}, {Seq: 2, Rows: 70}}}))
	f.Add([]byte{1, 1, 7, 200, 200, 200, 200, 200, 1, 9})
	f.Fuzz(func(t *testing.T, p []byte) {
		var sel Selection
		var err error
		if n := bytesAllocated(func() { sel, err = DecodeSelection(p) }); n > allocBound(len(p)) {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(p), n)
		}
		if err != nil {
			if CodeOf(err) != CodeStoreCorrupt {
				t.Fatalf("error %q has code %q", err, CodeOf(err))
			}
			return
		}
		if !slices.IsSorted(sel.Keep) || sel.Len() == 0 || sel.Len() > sel.Total() || (sel.Keep != nil && sel.Keep[len(sel.Keep)-1] >= sel.Total()) {
			t.Fatalf("an impossible selection decoded: %+v", sel)
		}
		again, err := DecodeSelection(EncodeSelection(sel))
		if err != nil {
			t.Fatalf("re-encoded: %v", err)
		}
		if diff := cmp.Diff(sel, again); diff != "" {
			t.Fatalf("re-encoded selection differs (-first +second):\n%s", diff)
		}
	})
}

// TestSelectionOf: rows of a batch as a selection of the stored rows it
// is, without a batch of them: what KeepRowsOf notes on one.
func TestSelectionOf(t *testing.T) {
	whole := func() *Batch { return storedInts(t, "t", 10, 0, 1, 2, 3, 4) }
	someOf := func() *Batch { return whole().Select([]int{1, 3, 4}) } // rows 1, 3 and 4 of the stored batch
	unstored := func() *Batch { return whole().Unstored() }
	for _, c := range []struct {
		name  string
		batch func() *Batch
		keep  []int
		want  []int // the selection's Keep; nil for none
	}{
		{"rows of a stored batch", whole, []int{0, 2, 4}, []int{0, 2, 4}},
		{"rows of a selection", someOf, []int{0, 2}, []int{1, 4}},
		{"every row", whole, []int{0, 1, 2, 3, 4}, []int{0, 1, 2, 3, 4}},
		{"out of order", whole, []int{2, 1}, nil},
		{"twice", whole, []int{1, 1}, nil},
		{"out of range", whole, []int{5}, nil},
		{"none", whole, nil, nil},
		{"rows stored nowhere", unstored, []int{0}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.batch()
			sel, ok := b.SelectionOf(c.keep)
			if ok != (c.want != nil) || ok && !slices.Equal(sel.Keep, c.want) {
				t.Fatalf("SelectionOf(%v) = %v, %v; want keep %v", c.keep, sel, ok, c.want)
			}
			if !ok {
				return
			}
			// the same as KeepRowsOf notes on a batch of those rows
			kept := b.Select(c.keep)
			want, _ := kept.Selection()
			if diff := cmp.Diff(want, sel); diff != "" {
				t.Fatalf("SelectionOf differs from KeepRowsOf (-want +got):\n%s", diff)
			}
		})
	}
}
