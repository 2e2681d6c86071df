package domain

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// Floats with particular bits, for identity tests.
var (
	negZero  = math.Copysign(0, -1)
	nan      = math.NaN()
	otherNaN = math.Float64frombits(0x7ff800000000beef) // a quiet NaN with another payload than math.NaN()
)

func TestKindString(t *testing.T) {
	tests := []struct {
		k    Kind
		want string
	}{
		{KindNull, "null"},
		{KindBool, "boolean"},
		{KindInt64, "bigint"},
		{KindFloat64, "double"},
		{KindString, "string"},
		{KindBytes, "binary"},
		{KindTimestamp, "timestamp"},
		{KindDate, "date"},
		{KindList, "array"},
		{KindStruct, "struct"},
		{KindMap, "map"},
		{KindYearMonthInterval, "interval year to month"},
		{KindDayTimeInterval, "interval day to second"},
		{KindDecimal, "decimal"},
		{Kind(14), "kind(14)"},
		{Kind(255), "kind(255)"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(tt.k), got, tt.want)
		}
	}
}

// TestKindNumbers pins the kind numbers: they are part of the batch codec.
func TestKindNumbers(t *testing.T) {
	got := []Kind{KindNull, KindBool, KindInt64, KindFloat64, KindString, KindBytes, KindTimestamp, KindDate, KindList, KindStruct, KindMap}
	for i, k := range got {
		if int(k) != i {
			t.Errorf("kind %s is %d, want %d", k, k, i)
		}
	}
	if KindYearMonthInterval != 11 || KindDayTimeInterval != 12 {
		t.Error("the interval kinds are 11 and 12")
	}
}

func TestValueConstructorsAndAccessors(t *testing.T) {
	tests := []struct {
		name  string
		v     Value
		kind  Kind
		check func(t *testing.T, v Value)
	}{
		{"zero value", Value{}, KindNull, nil},
		{"null", Null(), KindNull, nil},
		{"true", Bool(true), KindBool, func(t *testing.T, v Value) {
			if !v.AsBool() {
				t.Error("AsBool() = false")
			}
		}},
		{"false", Bool(false), KindBool, func(t *testing.T, v Value) {
			if v.AsBool() {
				t.Error("AsBool() = true")
			}
		}},
		{"int", Int(-42), KindInt64, func(t *testing.T, v Value) {
			if v.AsInt() != -42 {
				t.Errorf("AsInt() = %d", v.AsInt())
			}
		}},
		{"int min", Int(math.MinInt64), KindInt64, func(t *testing.T, v Value) {
			if v.AsInt() != math.MinInt64 {
				t.Errorf("AsInt() = %d", v.AsInt())
			}
		}},
		{"int max", Int(math.MaxInt64), KindInt64, func(t *testing.T, v Value) {
			if v.AsInt() != math.MaxInt64 {
				t.Errorf("AsInt() = %d", v.AsInt())
			}
		}},
		{"float", Float(1.5), KindFloat64, func(t *testing.T, v Value) {
			if v.AsFloat() != 1.5 {
				t.Errorf("AsFloat() = %v", v.AsFloat())
			}
		}},
		{"NaN keeps its bits", Float(otherNaN), KindFloat64, func(t *testing.T, v Value) {
			if math.Float64bits(v.AsFloat()) != math.Float64bits(otherNaN) {
				t.Errorf("AsFloat() bits = %x", math.Float64bits(v.AsFloat()))
			}
		}},
		{"negative zero keeps its sign", Float(negZero), KindFloat64, func(t *testing.T, v Value) {
			if f := v.AsFloat(); f != 0 || !math.Signbit(f) {
				t.Errorf("AsFloat() = %v, signbit %v", f, math.Signbit(f))
			}
		}},
		{"infinity", Float(math.Inf(-1)), KindFloat64, func(t *testing.T, v Value) {
			if !math.IsInf(v.AsFloat(), -1) {
				t.Errorf("AsFloat() = %v", v.AsFloat())
			}
		}},
		{"string", String("héllo, wörld"), KindString, func(t *testing.T, v Value) {
			if v.AsString() != "héllo, wörld" {
				t.Errorf("AsString() = %q", v.AsString())
			}
		}},
		{"empty string is not NULL", String(""), KindString, func(t *testing.T, v Value) {
			if v.AsString() != "" {
				t.Errorf("AsString() = %q", v.AsString())
			}
		}},
		{"bytes", Bytes([]byte{0, 1, 0xff}), KindBytes, func(t *testing.T, v Value) {
			if !bytes.Equal(v.AsBytes(), []byte{0, 1, 0xff}) {
				t.Errorf("AsBytes() = %x", v.AsBytes())
			}
		}},
		{"nil bytes", Bytes(nil), KindBytes, func(t *testing.T, v Value) {
			if len(v.AsBytes()) != 0 {
				t.Errorf("AsBytes() = %x", v.AsBytes())
			}
		}},
		{"timestamp micros", TimestampMicros(1_700_000_000_123_456), KindTimestamp, func(t *testing.T, v Value) {
			want := time.Date(2023, 11, 14, 22, 13, 20, 123456000, time.UTC)
			if !v.AsTime().Equal(want) || v.AsTime().Location() != time.UTC {
				t.Errorf("AsTime() = %v, want %v", v.AsTime(), want)
			}
			if v.AsInt() != 1_700_000_000_123_456 {
				t.Errorf("AsInt() = %d", v.AsInt())
			}
		}},
		{"timestamp before 1970", TimestampMicros(-1), KindTimestamp, func(t *testing.T, v Value) {
			want := time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)
			if !v.AsTime().Equal(want) {
				t.Errorf("AsTime() = %v, want %v", v.AsTime(), want)
			}
		}},
		{"timestamp from time", Timestamp(time.Date(1969, 7, 20, 20, 17, 40, 500, time.FixedZone("X", -5*3600))), KindTimestamp, func(t *testing.T, v Value) {
			// Sub-microsecond digits are dropped; the instant is kept, in UTC.
			want := time.Date(1969, 7, 21, 1, 17, 40, 0, time.UTC)
			if !v.AsTime().Equal(want) || v.AsTime().Location() != time.UTC {
				t.Errorf("AsTime() = %v, want %v", v.AsTime(), want)
			}
		}},
		{"timestamp before 1970 rounds down", Timestamp(time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC)), KindTimestamp, func(t *testing.T, v Value) {
			if v.AsInt() != -1 {
				t.Errorf("AsInt() = %d, want -1", v.AsInt())
			}
		}},
		{"date days", DateDays(19723), KindDate, func(t *testing.T, v Value) {
			if v.AsInt() != 19723 {
				t.Errorf("AsInt() = %d", v.AsInt())
			}
		}},
		{"date from time", Date(time.Date(2024, 1, 1, 23, 59, 0, 0, time.UTC)), KindDate, func(t *testing.T, v Value) {
			if v.AsInt() != 19723 {
				t.Errorf("AsInt() = %d, want 19723", v.AsInt())
			}
		}},
		{"date uses the time's own calendar day", Date(time.Date(2024, 1, 1, 23, 30, 0, 0, time.FixedZone("EST", -5*3600))), KindDate, func(t *testing.T, v Value) {
			// 2024-01-02 04:30 UTC, but 2024-01-01 where the time was taken.
			if v.AsInt() != 19723 {
				t.Errorf("AsInt() = %d, want 19723", v.AsInt())
			}
		}},
		{"date before 1970", Date(time.Date(1969, 12, 31, 12, 0, 0, 0, time.UTC)), KindDate, func(t *testing.T, v Value) {
			if v.AsInt() != -1 {
				t.Errorf("AsInt() = %d, want -1", v.AsInt())
			}
		}},
		{"date 1900", Date(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)), KindDate, func(t *testing.T, v Value) {
			if v.AsInt() != -25567 {
				t.Errorf("AsInt() = %d, want -25567", v.AsInt())
			}
		}},
		{"list", List(Int(1), Null(), String("x")), KindList, func(t *testing.T, v Value) {
			l := v.AsList()
			if len(l) != 3 || l[0].AsInt() != 1 || !l[1].IsNull() || l[2].AsString() != "x" {
				t.Errorf("AsList() = %v", l)
			}
		}},
		{"empty list is not NULL", List(), KindList, func(t *testing.T, v Value) {
			if len(v.AsList()) != 0 {
				t.Errorf("AsList() = %v", v.AsList())
			}
		}},
		{"struct", Struct(Int(7), List(Bool(true))), KindStruct, func(t *testing.T, v Value) {
			f := v.Fields()
			if len(f) != 2 || f[0].AsInt() != 7 || f[1].Kind() != KindList || !f[1].AsList()[0].AsBool() {
				t.Errorf("Fields() = %v", f)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.Kind(); got != tt.kind {
				t.Errorf("Kind() = %s, want %s", got, tt.kind)
			}
			if got, want := tt.v.IsNull(), tt.kind == KindNull; got != want {
				t.Errorf("IsNull() = %v, want %v", got, want)
			}
			if tt.check != nil {
				tt.check(t, tt.v)
			}
		})
	}
}

func TestBytesIsImmutable(t *testing.T) {
	in := []byte("abc")
	v := Bytes(in)
	in[0] = 'X'
	out := v.AsBytes()
	out[1] = 'Y'
	if got := string(v.AsBytes()); got != "abc" {
		t.Errorf("value changed through the slices given and taken: %q", got)
	}
}

func TestValueString(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{Null(), "NULL"},
		{Bool(true), "true"},
		{Bool(false), "false"},
		{Int(0), "0"},
		{Int(-7), "-7"},
		{Int(math.MinInt64), "-9223372036854775808"},
		{Float(1.5), "1.5"},
		{Float(0.1), "0.1"},
		{Float(1e21), "1e+21"},
		{Float(nan), "NaN"},
		{Float(math.Inf(1)), "+Inf"},
		{Float(math.Inf(-1)), "-Inf"},
		{Float(negZero), "-0"},
		{String(""), ""},
		{String("a b"), "a b"},
		{Bytes(nil), "X''"},
		{Bytes([]byte{0, 0xab, 0xff}), "X'00ABFF'"},
		{TimestampMicros(0), "1970-01-01T00:00:00Z"},
		{TimestampMicros(1_500_000), "1970-01-01T00:00:01.5Z"},
		{TimestampMicros(-1), "1969-12-31T23:59:59.999999Z"},
		{TimestampMicros(-14_182_940_000_000), "1969-07-20T20:17:40Z"},
		{DateDays(0), "1970-01-01"},
		{DateDays(-1), "1969-12-31"},
		{DateDays(-25567), "1900-01-01"},
		{DateDays(19723), "2024-01-01"},
		{List(), "[]"},
		{List(Int(1), Null(), String("x")), "[1, NULL, x]"},
		{List(List(Int(1), Int(2)), List()), "[[1, 2], []]"},
		{Struct(), "{}"},
		{Struct(Int(1), List(Bool(true)), Struct(String("a"))), "{1, [true], {a}}"},
		{Value{kind: Kind(42)}, "?"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestValueEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b Value
		want bool
	}{
		{"null null", Null(), Null(), true},
		{"zero value is null", Value{}, Null(), true},
		{"null vs false", Null(), Bool(false), false},
		{"null vs zero int", Null(), Int(0), false},
		{"null vs empty string", Null(), String(""), false},
		{"null vs empty list", Null(), List(), false},
		{"bools", Bool(true), Bool(true), true},
		{"bools differ", Bool(true), Bool(false), false},
		{"ints", Int(5), Int(5), true},
		{"ints differ", Int(5), Int(-5), false},
		{"int vs timestamp", Int(5), TimestampMicros(5), false},
		{"timestamp vs date", TimestampMicros(5), DateDays(5), false},
		{"int vs bool", Int(1), Bool(true), false},
		{"int vs float", Int(1), Float(1), false},
		{"floats", Float(2.5), Float(2.5), true},
		{"NaN is NaN", Float(nan), Float(nan), true},
		{"NaN payloads differ", Float(nan), Float(otherNaN), false},
		{"negative zero is not zero", Float(negZero), Float(0), false},
		{"negative zero", Float(negZero), Float(negZero), true},
		{"strings", String("a"), String("a"), true},
		{"strings differ", String("a"), String("A"), false},
		{"string vs bytes", String("a"), Bytes([]byte("a")), false},
		{"bytes", Bytes([]byte{1, 2}), Bytes([]byte{1, 2}), true},
		{"dates", DateDays(-3), DateDays(-3), true},
		{"lists", List(Int(1), Null()), List(Int(1), Null()), true},
		{"empty lists", List(), List([]Value{}...), true},
		{"list lengths differ", List(Int(1)), List(Int(1), Int(1)), false},
		{"list vs struct", List(Int(1)), Struct(Int(1)), false},
		{"nested lists", List(List(Float(nan), Struct(String("x")))), List(List(Float(nan), Struct(String("x")))), true},
		{"nested lists differ deep down", List(List(Struct(String("x")))), List(List(Struct(String("y")))), false},
		{"nested null vs value", Struct(Null()), Struct(Int(0)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Equal(tt.b); got != tt.want {
				t.Errorf("%v.Equal(%v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := tt.b.Equal(tt.a); got != tt.want {
				t.Errorf("%v.Equal(%v) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name string
		a, b Value
		want int // sign only
	}{
		{"null null", Null(), Null(), 0},
		{"null first", Null(), Bool(false), -1},
		{"null before int", Null(), Int(math.MinInt64), -1},
		{"value after null", List(), Null(), 1},
		{"false before true", Bool(false), Bool(true), -1},
		{"ints", Int(-3), Int(2), -1},
		{"int extremes", Int(math.MinInt64), Int(math.MaxInt64), -1},
		{"equal ints", Int(9), Int(9), 0},
		{"floats", Float(2), Float(1.5), 1},
		{"-inf before numbers", Float(math.Inf(-1)), Float(-math.MaxFloat64), -1},
		{"NaN after +inf", Float(nan), Float(math.Inf(1)), 1},
		{"NaN after numbers", Float(nan), Float(1), 1},
		{"numbers before NaN", Float(-1), Float(nan), -1},
		{"NaN is NaN", Float(nan), Float(nan), 0},
		{"negative zero before zero", Float(negZero), Float(0), -1},
		{"strings", String("a"), String("b"), -1},
		{"strings by bytes", String("B"), String("a"), -1},
		{"prefix first", String("ab"), String("abc"), -1},
		{"bytes", Bytes([]byte{0xff}), Bytes([]byte{0x00, 0x01}), 1},
		{"timestamps before 1970", TimestampMicros(-2), TimestampMicros(-1), -1},
		{"dates", DateDays(-1), DateDays(0), -1},
		{"lists elementwise", List(Int(1), Int(5)), List(Int(2)), -1},
		{"shorter list first", List(Int(1)), List(Int(1), Null()), -1},
		{"null element first", List(Null()), List(Int(0)), -1},
		{"structs", Struct(String("a"), Int(2)), Struct(String("a"), Int(1)), 1},
		{"nested", List(List(Int(1), Int(2))), List(List(Int(1), Int(3))), -1},
		{"kinds in kind order", Int(100), Float(-1), -1},
		{"string before bytes", String("z"), Bytes(nil), -1},
	}
	sign := func(x int) int {
		switch {
		case x < 0:
			return -1
		case x > 0:
			return 1
		}
		return 0
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sign(Compare(tt.a, tt.b)); got != tt.want {
				t.Errorf("Compare(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := sign(Compare(tt.b, tt.a)); got != -tt.want {
				t.Errorf("Compare(%v, %v) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
		})
	}
}

// orderValues are values of every kind, including the awkward floats, for
// checking that Compare is a total order consistent with Equal.
func orderValues() []Value {
	vals := []Value{
		Null(), Bool(false), Bool(true),
		Int(math.MinInt64), Int(-1), Int(0), Int(1), Int(math.MaxInt64),
		Float(math.Inf(-1)), Float(-1), Float(negZero), Float(0), Float(math.SmallestNonzeroFloat64),
		Float(1), Float(math.Inf(1)), Float(nan), Float(otherNaN), Float(-nan), Float(math.Float64frombits(0xfff0000000000001)),
		String(""), String("a"), String("ab"), String("b"),
		Bytes(nil), Bytes([]byte{0}), Bytes([]byte{0xff}),
		TimestampMicros(-1), TimestampMicros(0), TimestampMicros(1),
		DateDays(-1), DateDays(0),
	}
	n := len(vals)
	for i := 0; i < n; i += 4 {
		vals = append(vals, List(vals[i]), Struct(vals[i], vals[(i+1)%n]))
	}
	vals = append(vals, List(), Struct(), List(Float(nan), Float(0)), List(Float(nan), Float(negZero)), List(List()))
	return vals
}

func TestCompareIsATotalOrderConsistentWithEqual(t *testing.T) {
	vals := orderValues()
	for _, a := range vals {
		for _, b := range vals {
			ab, ba := Compare(a, b), Compare(b, a)
			if (ab < 0) != (ba > 0) || (ab == 0) != (ba == 0) {
				t.Errorf("Compare(%v, %v) = %d but Compare(%v, %v) = %d", a, b, ab, b, a, ba)
			}
			if (ab == 0) != a.Equal(b) {
				t.Errorf("Compare(%v, %v) = %d but Equal = %v", a, b, ab, a.Equal(b))
			}
			for _, c := range vals {
				if ab <= 0 && Compare(b, c) <= 0 && Compare(a, c) > 0 {
					t.Errorf("not transitive: %v <= %v <= %v but %v > %v", a, b, c, a, c)
				}
			}
		}
	}
}

func TestCompareSortsDeterministically(t *testing.T) {
	vals := orderValues()
	a := slices.Clone(vals)
	b := slices.Clone(vals)
	slices.Reverse(b)
	slices.SortFunc(a, Compare)
	slices.SortFunc(b, Compare)
	for i := range a {
		if !a[i].Equal(b[i]) {
			t.Fatalf("sorting from two orders differs at %d: %v vs %v", i, a[i], b[i])
		}
	}
}

func TestSchemaIndex(t *testing.T) {
	s := NewSchema(
		Field{Name: "id", Type: TypeInt64},
		Field{Name: "UserName", Type: TypeString, Nullable: true},
		Field{Name: "Été", Type: TypeDate},
		Field{Name: "username", Type: TypeString}, // shadowed by UserName
	)
	tests := []struct {
		name string
		want int
	}{
		{"id", 0},
		{"ID", 0},
		{"Id", 0},
		{"username", 1},
		{"USERNAME", 1},
		{"userName", 1},
		{"été", 2},
		{"ÉTÉ", 2},
		{"missing", -1},
		{"", -1},
		{"id ", -1},
	}
	for _, tt := range tests {
		if got := s.Index(tt.name); got != tt.want {
			t.Errorf("Index(%q) = %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := (Schema{}).Index("id"); got != -1 {
		t.Errorf("empty schema: Index = %d, want -1", got)
	}
	if got, want := s.Names(), []string{"id", "UserName", "Été", "username"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
}

func TestTypeString(t *testing.T) {
	tests := []struct {
		typ  Type
		want string
	}{
		{Type{}, "null"},
		{TypeBool, "boolean"},
		{TypeInt64, "bigint"},
		{TypeFloat64, "double"},
		{TypeString, "string"},
		{TypeBytes, "binary"},
		{TypeTimestamp, "timestamp"},
		{TypeDate, "date"},
		{ListOf(TypeString), "array<string>"},
		{ListOf(ListOf(TypeInt64)), "array<array<bigint>>"},
		{Type{Kind: KindList}, "array<null>"},
		{StructOf(), "struct<>"},
		{StructOf(Field{Name: "a", Type: TypeInt64}, Field{Name: "b", Type: TypeString}), "struct<a: bigint, b: string>"},
		{ListOf(StructOf(Field{Name: "x", Type: ListOf(TypeDate)}, Field{Name: "y", Type: StructOf(Field{Name: "z", Type: TypeBytes})})),
			"array<struct<x: array<date>, y: struct<z: binary>>>"},
		{Type{Kind: Kind(77)}, "kind(77)"},
	}
	for _, tt := range tests {
		if got := tt.typ.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestTypeAndSchemaEqual(t *testing.T) {
	a := StructOf(Field{Name: "a", Type: ListOf(TypeInt64), Nullable: true, Comment: "one"})
	b := StructOf(Field{Name: "a", Type: ListOf(TypeInt64), Nullable: true, Comment: "other"})
	if !a.Equal(b) {
		t.Error("types differing only by a comment are not Equal")
	}
	for _, o := range []Type{
		StructOf(Field{Name: "A", Type: ListOf(TypeInt64), Nullable: true}),
		StructOf(Field{Name: "a", Type: ListOf(TypeInt64)}),
		StructOf(Field{Name: "a", Type: ListOf(TypeFloat64), Nullable: true}),
		StructOf(Field{Name: "a", Type: Type{Kind: KindList}, Nullable: true}),
		ListOf(TypeInt64),
		StructOf(),
	} {
		if a.Equal(o) || o.Equal(a) {
			t.Errorf("%v Equal %v", a, o)
		}
	}
	s := NewSchema(Field{Name: "id", Type: TypeInt64}, Field{Name: "tags", Type: ListOf(TypeString), Nullable: true})
	if got, want := s.String(), "id bigint NOT NULL, tags array<string>"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !s.Equal(NewSchema(s.Fields...)) || s.Equal(NewSchema(s.Fields[0])) {
		t.Error("Schema.Equal is wrong")
	}
}

// TestOwnStrings: the text of values, at every depth, no longer shares the
// bytes it was cut from, and reads the same; a list two values share is
// owned for both.
func TestOwnStrings(t *testing.T) {
	read := "alpha beta gamma delta key value"
	shared := []Value{String(read[17:22]), Null()}
	for _, tt := range []struct {
		name string
		vals []Value
	}{
		{"none", nil},
		{"no text", []Value{Int(1), Null(), Struct(Int(2))}},
		{"flat", []Value{String(read[0:5]), Bytes([]byte("b")), String("")}},
		{"nested", []Value{Struct(String(read[6:10]), List(String(read[11:16]), Null())), Map(MapEntry(String(read[23:26]), String(read[27:])))}},
		{"shared list", []Value{Struct(shared...), List(shared...)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := render(tt.vals)
			OwnStrings(tt.vals)
			if got := render(tt.vals); got != want {
				t.Errorf("owned: %s, want %s", got, want)
			}
			lo := uintptr(unsafe.Pointer(unsafe.StringData(read)))
			var check func([]Value)
			check = func(vs []Value) {
				for _, v := range vs {
					if p := uintptr(unsafe.Pointer(unsafe.StringData(v.s))); v.s != "" && p >= lo && p < lo+uintptr(len(read)) {
						t.Errorf("%q still shares the bytes it was cut from", v.s)
					}
					check(v.l)
				}
			}
			check(tt.vals)
		})
	}
}

func render(vals []Value) string {
	var b strings.Builder
	for _, v := range vals {
		b.WriteString(v.String())
		b.WriteByte(';')
	}
	return b.String()
}
