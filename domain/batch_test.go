package domain

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// kindSamples holds one non-NULL value of each kind.
var kindSamples = map[Kind]Value{
	KindBool:      Bool(true),
	KindInt64:     Int(-9),
	KindFloat64:   Float(2.25),
	KindString:    String("s"),
	KindBytes:     Bytes([]byte{7}),
	KindTimestamp: TimestampMicros(-5),
	KindDate:      DateDays(-5),
	KindList:      List(Int(1), Null()),
	KindStruct:    Struct(String("f"), List()),
	KindMap:       Map(MapEntry(String("k"), Null())),
}

var allKinds = []Kind{KindNull, KindBool, KindInt64, KindFloat64, KindString, KindBytes, KindTimestamp, KindDate, KindList, KindStruct, KindMap}

// checkColumn checks a column's length and rows against want.
func checkColumn(t *testing.T, c *Column, want []Value) {
	t.Helper()
	if c.Len() != len(want) {
		t.Fatalf("Len() = %d, want %d", c.Len(), len(want))
	}
	if c.Nulls != nil && len(c.Nulls) != len(want) {
		t.Fatalf("%d null marks for %d rows", len(c.Nulls), len(want))
	}
	for i, w := range want {
		if got := c.Value(i); !got.Equal(w) {
			t.Errorf("row %d: Value = %v, want %v", i, got, w)
		}
		if got := c.IsNull(i); got != w.IsNull() {
			t.Errorf("row %d: IsNull = %v, want %v", i, got, w.IsNull())
		}
	}
}

func TestColumnAppend(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.String(), func(t *testing.T) {
			c := NewColumn(k, 2)
			if c.Len() != 0 || c.Nulls != nil {
				t.Fatalf("new column: Len %d, Nulls %v", c.Len(), c.Nulls)
			}
			var want []Value
			if v, ok := kindSamples[k]; ok {
				if err := c.Append(v); err != nil {
					t.Fatalf("Append(%v): %v", v, err)
				}
				want = append(want, v)
				if c.Nulls != nil {
					t.Error("Nulls set although no value is NULL")
				}
			}
			if err := c.Append(Null()); err != nil {
				t.Fatalf("Append(NULL): %v", err)
			}
			want = append(want, Null())
			if v, ok := kindSamples[k]; ok {
				if err := c.Append(v); err != nil {
					t.Fatalf("Append(%v) after a NULL: %v", v, err)
				}
				want = append(want, v)
			}
			checkColumn(t, c, want)

			// A value of any other kind is refused and leaves the column alone.
			for _, other := range allKinds {
				v, ok := kindSamples[other]
				if !ok || other == k {
					continue
				}
				err := c.Append(v)
				if err == nil {
					t.Errorf("Append(%s value) to a %s column: no error", other, k)
					continue
				}
				if !strings.Contains(err.Error(), other.String()) || !strings.Contains(err.Error(), k.String()) {
					t.Errorf("error %q does not name both kinds", err)
				}
			}
			checkColumn(t, c, want)
		})
	}
}

func TestColumnTypedStorage(t *testing.T) {
	c := NewColumn(KindInt64, 0)
	for _, v := range []Value{Int(3), Null(), Int(-1)} {
		if err := c.Append(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Ints; len(got) != 3 || got[0] != 3 || got[1] != 0 || got[2] != -1 {
		t.Errorf("Ints = %v, want [3 0 -1] (zero under a NULL)", got)
	}
	if got := c.Nulls; len(got) != 3 || got[0] || !got[1] || got[2] {
		t.Errorf("Nulls = %v", got)
	}

	f := NewColumn(KindFloat64, 0)
	for _, x := range []float64{nan, negZero} {
		if err := f.Append(Float(x)); err != nil {
			t.Fatal(err)
		}
	}
	if math.Float64bits(f.Floats[0]) != math.Float64bits(nan) || !math.Signbit(f.Floats[1]) {
		t.Errorf("Floats = %v: bits not kept", f.Floats)
	}
	if !f.Value(0).Equal(Float(nan)) || !f.Value(1).Equal(Float(negZero)) {
		t.Errorf("Value() = %v, %v", f.Value(0), f.Value(1))
	}

	// A list column may also hold NULL as a value without a null mark.
	l := &Column{Kind: KindList, Values: []Value{List(), Null()}}
	if l.IsNull(0) || !l.IsNull(1) {
		t.Errorf("IsNull = %v, %v; want false, true", l.IsNull(0), l.IsNull(1))
	}
}

var rowSchema = NewSchema(
	Field{Name: "id", Type: TypeInt64},
	Field{Name: "name", Type: TypeString, Nullable: true},
	Field{Name: "tags", Type: ListOf(TypeString), Nullable: true},
	Field{Name: "score", Type: TypeFloat64, Nullable: true},
)

func checkRectangular(t *testing.T, b *Batch) {
	t.Helper()
	for j, c := range b.Columns {
		if c.Len() != b.Len() {
			t.Errorf("column %d has %d rows, the batch %d", j, c.Len(), b.Len())
		}
		if c.Nulls != nil && len(c.Nulls) != b.Len() {
			t.Errorf("column %d has %d null marks, the batch %d rows", j, len(c.Nulls), b.Len())
		}
	}
}

func checkBatchRows(t *testing.T, b *Batch, want [][]Value) {
	t.Helper()
	checkRectangular(t, b)
	got := b.Rows()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
		}
		for j := range want[i] {
			if !got[i][j].Equal(want[i][j]) {
				t.Errorf("row %d column %d: %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
}

func TestBatchAppendRow(t *testing.T) {
	b := NewBatch(rowSchema, 1)
	rows := [][]Value{
		{Int(1), String("a"), List(String("x")), Float(1)},
		{Int(2), Null(), Null(), Null()},
	}
	for _, r := range rows {
		if err := b.AppendRow(r...); err != nil {
			t.Fatalf("AppendRow(%v): %v", r, err)
		}
	}
	checkBatchRows(t, b, rows)

	bad := []struct {
		name string
		row  []Value
		msg  string
	}{
		{"too few values", []Value{Int(3)}, "1 values for 4 columns"},
		{"too many values", []Value{Int(3), Null(), Null(), Null(), Null()}, "5 values for 4 columns"},
		{"first column", []Value{String("3"), String("b"), Null(), Null()}, `column "id"`},
		{"last column", []Value{Int(3), String("b"), List(), Int(4)}, `column "score"`},
		{"after NULLs", []Value{Null(), Null(), Null(), String("x")}, `column "score"`},
		{"middle column", []Value{Int(3), Null(), String("tag"), Float(2)}, `column "tags"`},
	}
	for _, tt := range bad {
		err := b.AppendRow(tt.row...)
		if err == nil {
			t.Errorf("%s: AppendRow(%v): no error", tt.name, tt.row)
			continue
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %q does not mention %q", tt.name, err, tt.msg)
		}
		if b.Len() != len(rows) {
			t.Errorf("%s: Len() = %d after a failed append, want %d", tt.name, b.Len(), len(rows))
		}
		checkBatchRows(t, b, rows)
	}

	// The batch is still usable after the failures.
	last := []Value{Int(3), String("c"), List(), Float(nan)}
	if err := b.AppendRow(last...); err != nil {
		t.Fatal(err)
	}
	checkBatchRows(t, b, append(rows, last))
}

func TestBatchAppendRowFirstNullThenError(t *testing.T) {
	// The first NULL of a column creates its null marks; a failure in a later
	// column must take that row back out of them too.
	b := NewBatch(rowSchema, 0)
	if err := b.AppendRow(Int(1), String("a"), List(), Float(0)); err != nil {
		t.Fatal(err)
	}
	if err := b.AppendRow(Int(2), Null(), Null(), String("bad")); err == nil {
		t.Fatal("no error")
	}
	checkBatchRows(t, b, [][]Value{{Int(1), String("a"), List(), Float(0)}})
	if err := b.AppendRow(Int(2), String("b"), List(String("t")), Float(1)); err != nil {
		t.Fatal(err)
	}
	checkBatchRows(t, b, [][]Value{
		{Int(1), String("a"), List(), Float(0)},
		{Int(2), String("b"), List(String("t")), Float(1)},
	})
}

func TestBatchNoColumns(t *testing.T) {
	b := NewBatch(Schema{}, 0)
	for range 3 {
		if err := b.AppendRow(); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() != 3 || len(b.Rows()) != 3 || len(b.Row(0)) != 0 {
		t.Errorf("Len %d, Rows %v", b.Len(), b.Rows())
	}
	if err := b.AppendRow(Int(1)); err == nil {
		t.Error("a value for no column: no error")
	}
	if s := b.Select([]int{2, 0}); s.Len() != 2 {
		t.Errorf("Select: Len %d, want 2", s.Len())
	}
	var nilBatch *Batch
	if nilBatch.Len() != 0 {
		t.Error("nil batch has rows")
	}
}

func TestBatchSelect(t *testing.T) {
	schema := NewSchema(
		Field{Name: "b", Type: TypeBool, Nullable: true},
		Field{Name: "i", Type: TypeInt64},
		Field{Name: "f", Type: TypeFloat64, Nullable: true},
		Field{Name: "s", Type: TypeString},
		Field{Name: "x", Type: TypeBytes, Nullable: true},
		Field{Name: "t", Type: TypeTimestamp},
		Field{Name: "d", Type: TypeDate, Nullable: true},
		Field{Name: "l", Type: ListOf(TypeInt64), Nullable: true},
		Field{Name: "r", Type: StructOf(Field{Name: "a", Type: TypeString}), Nullable: true},
		Field{Name: "n", Type: Type{}, Nullable: true},
	)
	b := NewBatch(schema, 0)
	var rows [][]Value
	for i := range 5 {
		r := []Value{Bool(i%2 == 0), Int(int64(i)), Float(float64(i) / 2), String(strings.Repeat("s", i)),
			Bytes([]byte{byte(i)}), TimestampMicros(int64(-i)), DateDays(int64(i)), List(Int(int64(i))), Struct(String("a")), Null()}
		if i == 3 {
			for _, j := range []int{0, 2, 4, 6, 7, 8} {
				r[j] = Null()
			}
		}
		if err := b.AppendRow(r...); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	tests := []struct {
		name string
		keep []int
	}{
		{"all", []int{0, 1, 2, 3, 4}},
		{"none", []int{}},
		{"nil", nil},
		{"reordered and repeated", []int{3, 0, 3, 4}},
		{"only the null row", []int{3}},
		{"no null row", []int{4, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := b.Select(tt.keep)
			if !s.Schema.Equal(schema) {
				t.Error("schema changed")
			}
			want := make([][]Value, len(tt.keep))
			for k, i := range tt.keep {
				want[k] = rows[i]
			}
			checkBatchRows(t, s, want)
		})
	}

	// The selection is a copy: changing it leaves the original alone.
	s := b.Select([]int{0})
	s.Columns[1].Ints[0] = 99
	s.Columns[3].Strs[0] = "changed"
	if s.Columns[0].Nulls != nil {
		s.Columns[0].Nulls[0] = true
	}
	checkBatchRows(t, b, rows)
	if err := s.AppendRow(rows[1]...); err != nil {
		t.Fatal(err)
	}
	checkBatchRows(t, b, rows)
}

func TestBatchOf(t *testing.T) {
	schema := NewSchema(Field{Name: "a", Type: TypeInt64}, Field{Name: "b", Type: TypeString, Nullable: true})
	ints := func(x ...int64) *Column { return &Column{Kind: KindInt64, Ints: x} }
	strs := func(x ...string) *Column { return &Column{Kind: KindString, Strs: x} }

	b, err := BatchOf(schema, []*Column{ints(1, 2), {Kind: KindString, Strs: []string{"x", ""}, Nulls: []bool{false, true}}})
	if err != nil {
		t.Fatal(err)
	}
	checkBatchRows(t, b, [][]Value{{Int(1), String("x")}, {Int(2), Null()}})

	if b, err := BatchOf(schema, []*Column{ints(), strs()}); err != nil || b.Len() != 0 {
		t.Errorf("empty columns: %v, %v", b, err)
	}
	if b, err := BatchOf(Schema{}, nil); err != nil || b.Len() != 0 {
		t.Errorf("no columns: %v, %v", b, err)
	}

	bad := []struct {
		name string
		cols []*Column
		msg  string
	}{
		{"too few columns", []*Column{ints(1)}, "1 columns for a schema of 2"},
		{"too many columns", []*Column{ints(1), strs("x"), strs("y")}, "3 columns for a schema of 2"},
		{"wrong kind", []*Column{ints(1), ints(2)}, `column "b" is bigint`},
		{"wrong kind first", []*Column{strs("1"), strs("2")}, `column "a" is string`},
		{"lengths differ", []*Column{ints(1, 2), strs("x")}, `column "b" has 1 rows, column "a" has 2`},
		{"null marks short", []*Column{ints(1, 2), {Kind: KindString, Strs: []string{"x", "y"}, Nulls: []bool{false}}}, "1 null marks for 2 rows"},
		{"null marks long", []*Column{{Kind: KindInt64, Ints: []int64{1}, Nulls: []bool{false, true}}, strs("x")}, "2 null marks for 1 rows"},
		{"nil column", []*Column{ints(1), nil}, `column "b" is missing`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			b, err := BatchOf(schema, tt.cols)
			if err == nil {
				t.Fatalf("no error; batch of %d rows", b.Len())
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not mention %q", err, tt.msg)
			}
		})
	}
}

func TestConcatByPosition(t *testing.T) {
	a := NewBatch(NewSchema(Field{Name: "x", Type: TypeInt64}, Field{Name: "x", Type: TypeString}), 1)
	_ = a.AppendRow(Int(1), String("a"))
	b := NewBatch(NewSchema(Field{Name: "y", Type: TypeInt64}, Field{Name: "z", Type: TypeString}), 1)
	_ = b.AppendRow(Int(2), Null())
	out, err := ConcatByPosition(a.Schema, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out.Rows()); got != "[[1 a] [2 NULL]]" {
		t.Fatalf("rows %s", got)
	}
	if _, err := ConcatByPosition(a.Schema, a, NewBatch(NewSchema(Field{Name: "y", Type: TypeInt64}), 0)); err == nil {
		t.Fatal("a batch of another width was stacked")
	}
}

// TestBatchExtend checks that Extend appends rows of the same schema in
// place, as Concat would join them, and leaves a batch of another schema
// to Concat, changing nothing.
func TestBatchExtend(t *testing.T) {
	xs := NewSchema(Field{Name: "x", Type: TypeInt64, Nullable: true}, Field{Name: "s", Type: TypeString, Nullable: true})
	tests := []struct {
		name string
		more []*Batch
		ok   bool
	}{
		{"same schema", []*Batch{batchOfRows(t, xs, []Value{Int(3), String("c")})}, true},
		{"NULLs where the first has none", []*Batch{batchOfRows(t, xs, []Value{Null(), String("c")}, []Value{Int(4), Null()})}, true},
		{"several", []*Batch{batchOfRows(t, xs, []Value{Int(3), String("c")}), batchOfRows(t, xs), batchOfRows(t, xs, []Value{Int(5), String("e")})}, true},
		{"another column", []*Batch{batchOfRows(t, NewSchema(Field{Name: "x", Type: TypeInt64, Nullable: true}), []Value{Int(3)})}, false},
		{"another type", []*Batch{batchOfRows(t, NewSchema(Field{Name: "x", Type: TypeFloat64, Nullable: true}, Field{Name: "s", Type: TypeString, Nullable: true}), []Value{Float(3), String("c")})}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBatch(xs, 8)
			for _, r := range [][]Value{{Int(1), String("a")}, {Int(2), String("b")}} {
				if err := b.AppendRow(r...); err != nil {
					t.Fatal(err)
				}
			}
			before := fmt.Sprint(b.Rows())
			want, err := Concat(append([]*Batch{b}, tc.more...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Extend(tc.more...); got != tc.ok {
				t.Fatalf("Extend = %v, want %v", got, tc.ok)
			}
			if !tc.ok {
				if got := fmt.Sprint(b.Rows()); got != before {
					t.Errorf("a refused Extend changed the batch: %s, was %s", got, before)
				}
				return
			}
			if got, w := fmt.Sprint(b.Rows()), fmt.Sprint(want.Rows()); got != w || b.Len() != want.Len() {
				t.Errorf("extended to %s (%d rows), Concat gives %s (%d)", got, b.Len(), w, want.Len())
			}
		})
	}
}

func TestDataQualityAdd(t *testing.T) {
	total := &DataQuality{}
	for i := 0; i < 3; i++ {
		total.Add(&DataQuality{DroppedRecords: 1, Expectations: []ExpectationResult{{Name: "a", Dataset: "t", PassedRecords: 2, FailedRecords: 1}}})
	}
	total.Add(&DataQuality{Expectations: []ExpectationResult{{Name: "b", Dataset: "t", PassedRecords: 1}}})
	if total.DroppedRecords != 3 || len(total.Expectations) != 2 || total.Expectations[0].PassedRecords != 6 || total.Expectations[0].FailedRecords != 3 {
		t.Fatalf("total %+v", total)
	}
}

func TestSelectColumns(t *testing.T) {
	b := NewBatch(NewSchema(Field{Name: "a", Type: TypeInt64}, Field{Name: "b", Type: TypeString}, Field{Name: "c", Type: TypeInt64}), 2)
	for i := range 2 {
		if err := b.AppendRow(Int(int64(i)), String("x"), Int(int64(10+i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		keep  []int
		names string
		row1  string
	}{{[]int{2, 0}, "[c a]", "[11 1]"}, {[]int{1}, "[b]", "[x]"}, {nil, "[]", "[]"}} {
		got := b.SelectColumns(tc.keep)
		if fmt.Sprint(got.Schema.Names()) != tc.names || got.Len() != 2 || fmt.Sprint(got.Row(1)) != tc.row1 {
			t.Errorf("SelectColumns(%v): %v, %d rows, row 1 %v", tc.keep, got.Schema.Names(), got.Len(), got.Row(1))
		}
	}
}

// TestConcatWithNulls: batches with NULLs concatenate to the same rows,
// and the same encoding, as appending every row to one batch; a NULL row's
// slot in a part that holds something there is not carried over.
func TestConcatWithNulls(t *testing.T) {
	tests := []struct {
		name string
		typ  Type
		vals []Value
	}{
		{"bigint", TypeInt64, []Value{Int(1), Null(), Int(3)}},
		{"boolean", TypeBool, []Value{Null(), Bool(true), Bool(false)}},
		{"double", TypeFloat64, []Value{Float(1.5), Null(), Null()}},
		{"string", TypeString, []Value{String("a"), Null(), String("")}},
		{"binary", TypeBytes, []Value{Null(), Bytes([]byte{0, 1}), Bytes(nil)}},
		{"timestamp", TypeTimestamp, []Value{TimestampMicros(7), Null(), TimestampMicros(-7)}},
		{"date", TypeDate, []Value{DateDays(3), Null(), DateDays(4)}},
		{"array", ListOf(TypeInt64), []Value{List(Int(1)), Null(), List()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			schema := NewSchema(Field{Name: "c", Type: tc.typ, Nullable: true})
			whole := NewBatch(schema, 0)
			var parts []*Batch
			for _, first := range []bool{true, false} { // a part without NULLs first, then ones with them
				for _, v := range tc.vals {
					if first && v.IsNull() {
						continue
					}
					p := NewBatch(schema, 1)
					if err := p.AppendRow(v); err != nil {
						t.Fatal(err)
					}
					if err := whole.AppendRow(v); err != nil {
						t.Fatal(err)
					}
					parts = append(parts, p)
				}
			}
			// a NULL row whose slot holds a value: Concat must not carry it
			dirty := NewBatch(schema, 1)
			_ = dirty.AppendRow(tc.vals[0])
			if !tc.vals[0].IsNull() {
				dirty.Columns[0].Nulls = []bool{true}
				parts = append(parts, dirty)
				_ = whole.AppendRow(Null())
			}
			got, err := Concat(parts...)
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != whole.Len() {
				t.Fatalf("%d rows, want %d", got.Len(), whole.Len())
			}
			for i := 0; i < whole.Len(); i++ {
				if g, w := got.Columns[0].Value(i), whole.Columns[0].Value(i); Compare(g, w) != 0 || g.IsNull() != w.IsNull() {
					t.Errorf("row %d is %v, want %v", i, g, w)
				}
			}
			ge, err1 := EncodeBatch(got)
			we, err2 := EncodeBatch(whole)
			if err1 != nil || err2 != nil || !bytes.Equal(ge, we) {
				t.Errorf("the encodings differ (%v, %v)", err1, err2)
			}
		})
	}
}
