package domain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestAppendJSON(t *testing.T) {
	pt := StructOf(Field{Name: "x", Type: TypeInt64}, Field{Name: "y", Type: TypeString})
	cases := []struct {
		v    Value
		t    Type
		want string
	}{
		{Null(), TypeInt64, `null`},
		{Bool(true), TypeBool, `true`},
		{Int(42), TypeInt64, `42`},
		{Int(math.MaxInt64), TypeInt64, `9223372036854775807`},
		{Int(math.MinInt64), TypeInt64, `-9223372036854775808`},
		{Float(2.5), TypeFloat64, `2.5`},
		{Float(1), TypeFloat64, `1.0`},
		{Float(1e21), TypeFloat64, `1.0E21`},
		{Float(1.5e-7), TypeFloat64, `1.5E-7`},
		{Float(math.Copysign(0, -1)), TypeFloat64, `-0.0`},
		{Float(math.NaN()), TypeFloat64, `"NaN"`},
		{Float(math.Inf(1)), TypeFloat64, `"Infinity"`},
		{Float(math.Inf(-1)), TypeFloat64, `"-Infinity"`},
		{String("a\"b\\c\n\x01é\u2028/"), TypeString, `"a\"b\\c\n\u0001é` + "\u2028" + `/"`},
		{String("bad\xffbyte"), TypeString, "\"bad\uFFFDbyte\""},
		{Bytes([]byte{0, 1, 2}), TypeBytes, `"AAEC"`},
		{Timestamp(time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)), TypeTimestamp, `"2026-12-01T10:00:00.123456Z"`},
		{Timestamp(time.Date(2026, 12, 1, 10, 0, 0, 120000000, time.UTC)), TypeTimestamp, `"2026-12-01T10:00:00.120Z"`},
		{Timestamp(time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("x", 3600))), TypeTimestamp, `"2026-12-01T09:00:00.000Z"`},
		{Date(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)), TypeDate, `"1969-12-31"`},
		{YearMonthInterval(-14), Type{Kind: KindYearMonthInterval}, `"INTERVAL '-1-2' YEAR TO MONTH"`},
		{DayTimeInterval(90061500000), Type{Kind: KindDayTimeInterval}, `"INTERVAL '1 01:01:01.5' DAY TO SECOND"`},
		{List(Int(1), Null()), ListOf(TypeInt64), `[1,null]`},
		{Struct(Int(7), String("why")), pt, `{"x":7,"y":"why"}`},
		{Struct(Null(), String("why")), pt, `{"y":"why"}`},
		{Struct(Int(1), Int(2), Int(3)), pt, `{"x":1,"y":2,"col3":3}`},
		{List(Struct(Int(1<<60), Null())), ListOf(pt), `[{"x":1152921504606846976}]`},
		{Map(MapEntry(String("a"), Float(1)), MapEntry(Int(2), Null())), MapOf(TypeString, TypeFloat64), `{"a":1.0,"2":null}`},
		{Map(MapEntry(Struct(Int(1), String("b")), Int(1))), MapOf(pt, TypeInt64), `{"[1,b]":1}`},
		{Map(MapEntry(TimestampMicros(1), Bool(false))), MapOf(TypeTimestamp, TypeBool), `{"1970-01-01 00:00:00.000001":false}`},
	}
	for _, c := range cases {
		got := string(AppendJSON(nil, c.v, c.t))
		if got != c.want {
			t.Errorf("%v: got %s, want %s", c.v, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%v: %s is not JSON", c.v, got)
		}
	}
}

func TestParseJSON(t *testing.T) {
	for _, tc := range []struct {
		src string
		ok  bool
	}{
		{`{}`, true}, {` [ 1 , -2.5e+3 , "a\\u0041" , true , false , null ] `, true}, {`"x"`, true},
		{`{"a":1,}`, false}, {`[1,]`, false}, {`01`, false}, {`1.`, false}, {`-`, false}, {`"\x"`, false},
		{"\"a\nb\"", false}, {`{"a" 1}`, false}, {`nul`, false}, {`[1] 2`, false}, {``, false},
		{strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth), true},
		{strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1), false},
	} {
		_, err := ParseJSON(tc.src)
		if (err == nil) != tc.ok {
			t.Errorf("ParseJSON(%.40q) = %v, want ok %v", tc.src, err, tc.ok)
		}
		if json.Valid([]byte(tc.src)) != tc.ok {
			t.Errorf("encoding/json disagrees on %.40q", tc.src)
		}
	}
}

func TestJSONObjectReaderErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`[1]`, "column 1: expected '{' at the start of a JSON object"},
		{`{"a":1`, "column 7: unexpected end of line inside an object"},
		{`{"a":1 "b":2}`, `column 8: expected ',' or '}' after the value of "a"`},
		{`{"a":01}`, `column 8: malformed number "01"`},
		{`{"a":1} x`, "column 9: unexpected text after the value"},
		{`{"a":"\q"}`, `column 7: invalid escape \q`},
	} {
		var r JSONObjectReader
		err := r.Read(tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Read(%q) = %v, want %s", tc.src, err, tc.want)
		}
	}
}

// standard is what encoding/json makes of JSON text: objects as maps (the
// last of repeated keys wins), numbers as their text.
func standard(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot read %q: %v", s, err)
	}
	return v
}

// nodeAny is a parsed tree as encoding/json's standard gives it.
func nodeAny(n *JSONNode) any {
	switch n.Kind {
	case JSONNull:
		return nil
	case JSONBool:
		return n.Text == "true"
	case JSONNumber:
		return json.Number(n.Text)
	case JSONString:
		return n.Text
	case JSONArray:
		out := make([]any, len(n.Items))
		for i, it := range n.Items {
			out[i] = nodeAny(it)
		}
		return out
	}
	out := map[string]any{}
	for i, k := range n.Keys {
		out[k] = nodeAny(n.Items[i])
	}
	return out
}

// FuzzParseJSON: the reader accepts exactly what encoding/json accepts and
// reads the same values; the flat object reader agrees with the tree; and
// the compact form of a tree reads back as the same tree.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,{"c":"d"}],"a":2.50}`, `[1e400,-0,"\ud83d\ude00","\ud800x"]`,
		"\"\xff\"", `{"k":"\u00e9\n"}`, ` 12 `, `{"a":{}}`, `[[[]]]`, `-1.5E-3`, `"\/"`,
		`{"a long key":"a long value with \"quotes\" and \\ in it","b":"0123456789abcdef"}`,
		"{\"sixteen bytes ok\":\"seven b\xc3\xa9 after\"}", "\"eight by\ttab\"", "\"1234567\x7f\x80\"",
		"\"abcdefgh\\\"ijklmnop\"", "\"abcdefg\x1fhij\"", "\"abcdefghijklmno\xe9\"", "{\"abcdefghi\":\"0123456789\\u0041bcdefgh\"}",
		`{"left":"x","from":2,"the":3}`, `{"le\u0066t":1,"fro\"m":2}`, `{"left":1,"from\n":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseJSON(s)
		if valid := json.Valid([]byte(s)); valid != (err == nil) {
			t.Fatalf("ParseJSON(%q) = %v; encoding/json says valid %v", s, err, valid)
		}
		// A reader is reused: it holds another object's keys, then the
		// same object's.
		var r JSONObjectReader
		_ = r.Read(`{"left":"over","from":1.5,"the":{"last":"line"},"x":"y","a":"b"}`)
		for range 2 {
			flatErr := r.Read(s)
			if (flatErr == nil) != (err == nil && n.Kind == JSONObject) {
				t.Fatalf("Read(%q) = %v; ParseJSON = %v", s, flatErr, err)
			}
			if err == nil && flatErr == nil {
				checkFlat(t, s, n, r.Fields)
			}
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(standard(t, s), nodeAny(n)); diff != "" {
			t.Fatalf("ParseJSON(%q) differs from encoding/json (-want +got):\n%s", s, diff)
		}
		compact := n.AppendCompact(nil)
		again, err := ParseJSON(string(compact))
		if err != nil {
			t.Fatalf("compact form %q of %q does not parse: %v", compact, s, err)
		}
		if !bytes.Equal(again.AppendCompact(nil), compact) {
			t.Fatalf("compact form of %q is not stable: %q, then %q", s, compact, again.AppendCompact(nil))
		}
	})
}

func flatAny(v Value) any {
	switch v.Kind() {
	case KindNull:
		return nil
	case KindBool:
		return v.AsBool()
	}
	return v.AsString()
}

// fuzzValue builds a value and its type from fuzz input, consuming it.
type fuzzValue struct {
	data []byte
}

func (g *fuzzValue) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	c := g.data[0]
	g.data = g.data[1:]
	return c
}

func (g *fuzzValue) int64() int64 {
	var n uint64
	for i := 0; i < 8; i++ {
		n = n<<8 | uint64(g.byte())
	}
	return int64(n)
}

func (g *fuzzValue) str() string {
	n := int(g.byte() % 12)
	if n > len(g.data) {
		n = len(g.data)
	}
	s := string(g.data[:n])
	g.data = g.data[n:]
	return s
}

// typ picks a type; depth bounds nesting.
func (g *fuzzValue) typ(depth int) Type {
	k := Kind(g.byte() % 13)
	if depth > 2 && k.IsNested() {
		k = KindString
	}
	switch k {
	case KindNull:
		return TypeString
	case KindList:
		return ListOf(g.typ(depth + 1))
	case KindMap:
		return MapOf(g.typ(depth+1), g.typ(depth+1))
	case KindStruct:
		fields := make([]Field, 1+g.byte()%3)
		for i := range fields {
			fields[i] = Field{Name: g.str(), Type: g.typ(depth + 1), Nullable: true}
		}
		return StructOf(fields...)
	}
	return Type{Kind: k}
}

func (g *fuzzValue) value(t Type) Value {
	if g.byte()%7 == 0 {
		return Null()
	}
	switch t.Kind {
	case KindBool:
		return Bool(g.byte()%2 == 0)
	case KindInt64:
		return Int(g.int64())
	case KindFloat64:
		return Float(math.Float64frombits(uint64(g.int64())))
	case KindString:
		return String(g.str())
	case KindBytes:
		return Bytes([]byte(g.str()))
	case KindTimestamp:
		return TimestampMicros(g.int64() % (253402300800 * 1e6)) // before year 10000
	case KindDate:
		return DateDays(g.int64() % 2932896)
	case KindYearMonthInterval:
		return YearMonthInterval(g.int64())
	case KindDayTimeInterval:
		return DayTimeInterval(g.int64())
	case KindList, KindMap:
		items := make([]Value, g.byte()%4)
		for i := range items {
			if t.Kind == KindList {
				items[i] = g.value(*t.Elem)
			} else {
				items[i] = MapEntry(g.value(*t.Key), g.value(*t.Elem))
			}
		}
		if t.Kind == KindList {
			return List(items...)
		}
		return Map(items...)
	}
	fields := make([]Value, len(t.Fields))
	for i, f := range t.Fields {
		fields[i] = g.value(f.Type)
	}
	return Struct(fields...)
}

// expectedJSON is what encoding/json should read from AppendJSON(v, t).
func expectedJSON(v Value, t Type) any {
	switch v.Kind() {
	case KindNull:
		return nil
	case KindBool:
		return v.AsBool()
	case KindInt64:
		return json.Number(strconv.FormatInt(v.AsInt(), 10))
	case KindFloat64:
		f := v.AsFloat()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return FormatDouble(f)
		}
		return json.Number(FormatDouble(f))
	case KindString:
		return utf8Valid(v.AsString())
	case KindBytes:
		return base64.StdEncoding.EncodeToString(v.AsBytes())
	case KindTimestamp:
		return formatJSONTimestamp(v.AsInt())
	case KindList:
		out := make([]any, len(v.AsList()))
		for i, x := range v.AsList() {
			out[i] = expectedJSON(x, *t.Elem)
		}
		return out
	case KindMap:
		out := map[string]any{}
		for _, e := range v.Entries() {
			out[utf8Valid(MapKeyText(e.Fields()[0]))] = expectedJSON(e.Fields()[1], *t.Elem)
		}
		return out
	case KindStruct:
		out := map[string]any{}
		for i, x := range v.Fields() {
			if !x.IsNull() {
				out[utf8Valid(t.Fields[i].Name)] = expectedJSON(x, t.Fields[i].Type)
			}
		}
		return out
	}
	return utf8Valid(ScalarText(v))
}

// utf8Valid replaces each invalid byte with U+FFFD, as JSON readers do.
func utf8Valid(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += n
	}
	return string(b)
}

// checkFlat checks the fields the flat reader read from s against the tree.
func checkFlat(t *testing.T, s string, n *JSONNode, fields []JSONField) {
	t.Helper()
	if len(fields) != len(n.Keys) {
		t.Fatalf("%q: %d fields flat, %d in the tree", s, len(fields), len(n.Keys))
	}
	for i, fld := range fields {
		it := n.Items[i]
		if fld.Key != n.Keys[i] {
			t.Fatalf("%q: key %d is %q flat, %q in the tree", s, i, fld.Key, n.Keys[i])
		}
		v, _ := fld.Value()
		switch it.Kind {
		case JSONArray, JSONObject:
			if fld.Kind != KindString || fld.Text != it.Raw {
				t.Fatalf("%q: nested %q read flat as %v", s, it.Raw, v)
			}
		case JSONNumber:
			x, intErr := strconv.ParseInt(it.Text, 10, 64)
			f, _ := strconv.ParseFloat(it.Text, 64)
			if fld.Kind == KindInt64 && (intErr != nil || x != fld.Num) ||
				fld.Kind == KindFloat64 && (intErr == nil && it.IsInt() || math.Float64bits(f) != uint64(fld.Num)) {
				t.Fatalf("%q: %s read flat as %v", s, it.Text, v)
			}
		default:
			if want := nodeAny(it); !cmp.Equal(want, flatAny(v)) {
				t.Fatalf("%q: %s read flat as %v", s, it.Raw, v)
			}
		}
	}
}

// FuzzAppendJSON: every value of every type is written as JSON that
// encoding/json reads as the value, and that ParseJSON reads and writes
// back unchanged.
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte{9, 2, 1, 'a', 0, 3, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{10, 4, 3, 1, 3, 1, 'k', 1, 0xff, 0xfe, 'x', 1, 3, 0x7f, 0xf0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{8, 6, 1, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fuzzValue{data: data}
		typ := g.typ(0)
		v := g.value(typ)
		out := AppendJSON(nil, v, typ)
		if !json.Valid(out) {
			t.Fatalf("AppendJSON(%v) = %q, not JSON", v, out)
		}
		want := expectedJSON(v, typ)
		if diff := cmp.Diff(want, standard(t, string(out))); diff != "" {
			t.Fatalf("AppendJSON(%v) = %s; encoding/json reads (-want +got):\n%s", v, out, diff)
		}
		n, err := ParseJSON(string(out))
		if err != nil {
			t.Fatalf("ParseJSON(AppendJSON(%v) = %s): %v", v, out, err)
		}
		if again := n.AppendCompact(nil); !bytes.Equal(again, out) {
			t.Fatalf("AppendJSON(%v) = %s, but its compact form is %s", v, out, again)
		}
	})
}

// TestJSONNumbersAsStrconv: every number the scanner reads as a double,
// by its short path for plain decimals or otherwise, is the double
// strconv.ParseFloat reads, bit for bit (-0 included).
func TestJSONNumbersAsStrconv(t *testing.T) {
	cases := []string{"0.0", "-0.0", "0.5", "2.47", "-2.47", "0.1", "0.3", "1.000000000000001", "123456789012.345",
		"999999999999999.9", "9007199254740.993", "0.000000000000001", "0.0000000000000001", "1e3", "1.5E-7", "12345678901234567890.5",
		"4.35", "1.15", "100.0000", "3.141592653589793"}
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		intDigits, fracDigits := rng.Intn(10), 1+rng.Intn(10)
		var b strings.Builder
		if rng.Intn(4) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.FormatInt(rng.Int63n(int64(math.Pow10(intDigits))+1), 10))
		b.WriteByte('.')
		for range fracDigits {
			b.WriteByte(byte('0' + rng.Intn(10)))
		}
		cases = append(cases, b.String())
	}
	for _, text := range cases {
		p := &jsonScanner{s: text}
		kind, bits, err := p.number()
		want, werr := strconv.ParseFloat(text, 64)
		if err != nil || werr != nil || kind != KindFloat64 || p.pos != len(text) {
			t.Fatalf("%s: kind %s, pos %d, %v (strconv: %v)", text, kind, p.pos, err, werr)
		}
		if got := math.Float64frombits(uint64(bits)); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: %v (%x), strconv %v (%x)", text, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}
