package domain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// JSON text of values: the one encoder behind to_json, get_json_object's
// output, `sluice table --format jsonl` and every sink that writes JSON. It
// writes what Spark writes (Jackson, default options), so a file written by
// sluice reads back in Spark the same:
//
//   - struct fields that are NULL are left out; a NULL elsewhere is null;
//   - doubles in Java's notation (1.0, 1.0E10); NaN and the infinities,
//     which JSON has no number for, as the strings "NaN", "Infinity",
//     "-Infinity";
//   - bigints as numbers, all 64 bits of them;
//   - timestamps as strings, RFC 3339 in UTC with milliseconds
//     (2024-02-29T13:14:15.123Z) and microseconds when there are any
//     (Spark writes milliseconds only, which would lose data);
//   - dates as 2024-02-29, binary as base64, intervals as their SQL literal
//     (INTERVAL '1-2' YEAR TO MONTH);
//   - map keys as the key cast to a string;
//   - strings with quotes, backslashes and control characters escaped and
//     everything else as it is, a byte that is not UTF-8 as U+FFFD.
//
// ParseJSON reads back everything AppendJSON writes.

// AppendJSON appends v, a value of type t, as JSON. The type names struct
// fields; a struct with more fields than its type names them col1, col2...
func AppendJSON(b []byte, v Value, t Type) []byte { return AppendJSONStyled(b, v, t, nil) }

// JSONStyle changes what AppendJSONStyled writes (to_json's options): dates
// and timestamps by a pattern (the text is quoted), and a struct's NULL
// fields as null rather than left out. Its zero value is AppendJSON's.
type JSONStyle struct {
	Date       func(b []byte, days int64) []byte
	Timestamp  func(b []byte, us int64, ntz bool) []byte
	NullFields bool
}

// AppendJSONStyled is AppendJSON in a style (nil: AppendJSON's).
func AppendJSONStyled(b []byte, v Value, t Type, s *JSONStyle) []byte {
	switch v.kind {
	case KindNull:
		return append(b, "null"...)
	case KindBool:
		return strconv.AppendBool(b, v.AsBool())
	case KindInt64:
		return strconv.AppendInt(b, v.i, 10)
	case KindFloat64:
		if t.Bits == 32 {
			return appendJSONNumber(b, FormatFloat(v.AsFloat()))
		}
		return AppendJSONDouble(b, v.AsFloat())
	case KindDecimal:
		// its exact digits: a JSON number has no limit of precision
		return append(b, FormatDecimal(v.AsDecimal(), int(v.scale))...)
	case KindString:
		if t.Variant {
			return append(b, v.s...) // JSON already
		}
		return AppendJSONString(b, v.s)
	case KindBytes:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, []byte(v.s))
		return append(b, '"')
	case KindTimestamp:
		if s != nil && s.Timestamp != nil {
			return AppendJSONString(b, string(s.Timestamp(nil, v.i, t.NTZ)))
		}
		if t.NTZ { // a wall-clock time: no zone
			return strconv.AppendQuote(b, strings.TrimSuffix(formatJSONTimestamp(v.i), "Z"))
		}
		return strconv.AppendQuote(b, formatJSONTimestamp(v.i))
	case KindList:
		b = append(b, '[')
		for i, x := range v.l {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONStyled(b, x, elemType(t), s)
		}
		return append(b, ']')
	case KindMap:
		b = append(b, '{')
		for i, e := range v.l {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONString(b, MapKeyText(e.l[0]))
			b = append(b, ':')
			b = AppendJSONStyled(b, e.l[1], elemType(t), s)
		}
		return append(b, '}')
	case KindStruct:
		b = append(b, '{')
		first := true
		for i, x := range v.l {
			if x.IsNull() && (s == nil || !s.NullFields) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			name, ft := "col"+strconv.Itoa(i+1), Type{}
			if i < len(t.Fields) {
				name, ft = t.Fields[i].Name, t.Fields[i].Type
			}
			b = AppendJSONString(b, name)
			b = append(b, ':')
			b = AppendJSONStyled(b, x, ft, s)
		}
		return append(b, '}')
	case KindDate:
		if s != nil && s.Date != nil {
			return AppendJSONString(b, string(s.Date(nil, v.i)))
		}
	}
	// dates and intervals: their text, quoted
	return AppendJSONString(b, ScalarText(v))
}

func elemType(t Type) Type {
	if t.Elem != nil {
		return *t.Elem
	}
	return Type{}
}

// formatJSONTimestamp is a timestamp as JSON holds it: RFC 3339, UTC,
// milliseconds always and microseconds when there are any.
func formatJSONTimestamp(us int64) string {
	layout := "2006-01-02T15:04:05.000Z"
	if us%1000 != 0 {
		layout = "2006-01-02T15:04:05.000000Z"
	}
	return time.UnixMicro(us).UTC().Format(layout)
}

// AppendJSONDouble appends f as a JSON number in Java's notation, or NaN and
// the infinities as strings.
func AppendJSONDouble(b []byte, f float64) []byte { return appendJSONNumber(b, FormatDouble(f)) }

// appendJSONNumber appends a number's text, quoting NaN and the infinities.
func appendJSONNumber(b []byte, text string) []byte {
	if text == "NaN" || strings.HasSuffix(text, "Infinity") {
		return strconv.AppendQuote(b, text)
	}
	return append(b, text...)
}

// AppendJSONString appends s quoted, escaping as Jackson does: quotes,
// backslashes and control characters; other characters as they are, and
// each byte that is not part of valid UTF-8 as U+FFFD (as encoding/json
// and Jackson read such a byte).
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	start := 0 // s[start:i] is waiting to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\uFFFD"...)
				start = i + 1
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// FormatDouble renders a double as Spark (Java) does: 1.0, 0.001, 1.0E7,
// 1.5E-4, NaN, Infinity.
func FormatDouble(f float64) string { return formatJava(f, 64) }

// FormatFloat renders a FLOAT (a double that a float holds) as Java's
// Float.toString does: the shortest digits that read back as the float, so
// 1.1 and not 1.100000023841858.
func FormatFloat(f float64) string { return formatJava(f, 32) }

// FormatNumber renders a double of type t: a float by its float digits.
func FormatNumber(f float64, t Type) string {
	if t.Bits == 32 {
		return FormatFloat(f)
	}
	return FormatDouble(f)
}

func formatJava(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(f)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bitSize)
		for i := 0; i < len(s); i++ {
			if s[i] == '.' {
				return s
			}
		}
		return s + ".0"
	}
	// scientific: mantissa with at least one decimal, E, exponent
	s := strconv.FormatFloat(f, 'E', -1, bitSize)
	mant, exp := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == 'E' {
			mant, exp = s[:i], s[i+1:]
		}
	}
	hasDot := false
	for i := 0; i < len(mant); i++ {
		if mant[i] == '.' {
			hasDot = true
		}
	}
	if !hasDot {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp) // E+07 is 7
	return mant + "E" + strconv.Itoa(e)
}

// ScalarText renders a scalar as CAST(v AS STRING) does: doubles in Java's
// notation, timestamps as 2024-02-29 13:14:15.123456 (UTC), binary as its
// bytes. Lists, structs and maps are rendered as Value.String does.
func ScalarText(v Value) string {
	switch v.kind {
	case KindNull:
		return "null"
	case KindBool:
		return strconv.FormatBool(v.AsBool())
	case KindInt64:
		return strconv.FormatInt(v.i, 10)
	case KindFloat64:
		return FormatDouble(v.AsFloat())
	case KindString, KindBytes:
		return v.s
	case KindTimestamp:
		return time.UnixMicro(v.i).UTC().Format("2006-01-02 15:04:05.999999")
	case KindDate:
		return time.Unix(v.i*86400, 0).UTC().Format("2006-01-02")
	}
	return v.String()
}

// MapKeyText is the text of a map key in JSON, as Spark writes it: a
// scalar as a string, a struct or an array as its values in brackets.
func MapKeyText(k Value) string {
	if k.kind != KindStruct && k.kind != KindList {
		return ScalarText(k)
	}
	b := []byte{'['}
	for i, x := range k.l {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, MapKeyText(x)...)
	}
	return string(append(b, ']'))
}

// typeKey starts a column type in an event's JSON as the store keeps it:
// {"kind":4}. The key cannot occur inside a JSON string, where every quote is
// escaped.
var typeKey = []byte(`"type":{"kind":`)

// NameTypes rewrites the column types in an event's JSON (details.*.schema)
// into their SQL names, as Type.String spells them: "bigint",
// "array<string>", "struct<a: bigint>". The store keeps the numeric form:
// stored events and projections are compared byte for byte by replay
// --verify, so the stored encoding stays as it is and only the output for
// people and scripts names the types.
func NameTypes(b []byte) []byte {
	i := bytes.Index(b, typeKey)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i >= 0 {
		start := i + len(`"type":`)
		dec := json.NewDecoder(bytes.NewReader(b[start:]))
		var t Type
		if err := dec.Decode(&t); err != nil {
			break // not a type after all: left as it is
		}
		out = AppendJSONString(append(out, b[:start]...), t.String())
		b = b[start+int(dec.InputOffset()):]
		i = bytes.Index(b, typeKey)
	}
	return append(out, b...)
}

// EventJSON is an event as sluice shows it to people and programs (sluice
// events --format jsonl, the API, webhooks): its JSON form, the timestamp
// in UTC and column types named as in SQL.
func EventJSON(ev *Event) ([]byte, error) {
	e := *ev
	e.Timestamp = e.Timestamp.UTC()
	b, err := json.Marshal(&e)
	if err != nil {
		return nil, err
	}
	return NameTypes(b), nil
}
