package sql

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON reader for the JSON functions: it keeps object keys in order
// (duplicates too, as Jackson reads them), the text of numbers as written,
// and the raw text of every value, which the col:path syntax returns.

type jsonKind byte

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

type jsonValue struct {
	kind  jsonKind
	raw   string // the value's text as written
	str   string // a string's value; a number's or a boolean's text
	keys  []string
	items []*jsonValue // an array's elements, an object's values
}

// maxJSONDepth bounds nesting so hostile input cannot exhaust the stack.
const maxJSONDepth = 1000

type jsonReader struct {
	s   string
	i   int
	bad bool
}

// parseJSON reads one JSON value filling s (surrounding whitespace allowed);
// ok is false when s is not valid JSON.
func parseJSON(s string) (*jsonValue, bool) {
	r := &jsonReader{s: s}
	v := r.value(0)
	r.space()
	if r.bad || r.i != len(s) {
		return nil, false
	}
	return v, true
}

func (r *jsonReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) fail() *jsonValue {
	r.bad = true
	return nil
}

func (r *jsonReader) value(depth int) *jsonValue {
	r.space()
	if r.bad || r.i >= len(r.s) || depth > maxJSONDepth {
		return r.fail()
	}
	start := r.i
	var v *jsonValue
	switch c := r.s[r.i]; {
	case c == '{':
		v = r.object(depth)
	case c == '[':
		v = r.array(depth)
	case c == '"':
		s, ok := r.string()
		if !ok {
			return r.fail()
		}
		v = &jsonValue{kind: jsonString, str: s}
	case c == '-' || (c >= '0' && c <= '9'):
		v = r.number()
	default:
		for _, w := range []struct {
			word string
			kind jsonKind
		}{{"true", jsonBool}, {"false", jsonBool}, {"null", jsonNull}} {
			if strings.HasPrefix(r.s[r.i:], w.word) {
				r.i += len(w.word)
				v = &jsonValue{kind: w.kind, str: w.word}
				break
			}
		}
	}
	if v == nil || r.bad {
		return r.fail()
	}
	v.raw = r.s[start:r.i]
	return v
}

func (r *jsonReader) object(depth int) *jsonValue {
	v := &jsonValue{kind: jsonObject}
	r.i++ // {
	r.space()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		return v
	}
	for {
		r.space()
		if r.i >= len(r.s) || r.s[r.i] != '"' {
			return r.fail()
		}
		k, ok := r.string()
		if !ok {
			return r.fail()
		}
		r.space()
		if r.i >= len(r.s) || r.s[r.i] != ':' {
			return r.fail()
		}
		r.i++
		item := r.value(depth + 1)
		if r.bad {
			return nil
		}
		v.keys, v.items = append(v.keys, k), append(v.items, item)
		r.space()
		if r.i >= len(r.s) {
			return r.fail()
		}
		r.i++
		switch r.s[r.i-1] {
		case ',':
		case '}':
			return v
		default:
			return r.fail()
		}
	}
}

func (r *jsonReader) array(depth int) *jsonValue {
	v := &jsonValue{kind: jsonArray}
	r.i++ // [
	r.space()
	if r.i < len(r.s) && r.s[r.i] == ']' {
		r.i++
		return v
	}
	for {
		item := r.value(depth + 1)
		if r.bad {
			return nil
		}
		v.items = append(v.items, item)
		r.space()
		if r.i >= len(r.s) {
			return r.fail()
		}
		r.i++
		switch r.s[r.i-1] {
		case ',':
		case ']':
			return v
		default:
			return r.fail()
		}
	}
}

func (r *jsonReader) number() *jsonValue {
	start := r.i
	digits := func() int {
		n := 0
		for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	if r.s[r.i] == '-' {
		r.i++
	}
	intStart := r.i
	if digits() == 0 || (r.s[intStart] == '0' && r.i-intStart > 1) {
		return r.fail() // no digits, or a leading zero
	}
	if r.i < len(r.s) && r.s[r.i] == '.' {
		r.i++
		if digits() == 0 {
			return r.fail()
		}
	}
	if r.i < len(r.s) && (r.s[r.i] == 'e' || r.s[r.i] == 'E') {
		r.i++
		if r.i < len(r.s) && (r.s[r.i] == '+' || r.s[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return r.fail()
		}
	}
	return &jsonValue{kind: jsonNumber, str: r.s[start:r.i]}
}

// isInt reports whether a JSON number is written as an integer.
func (v *jsonValue) isInt() bool { return !strings.ContainsAny(v.str, ".eE") }

func (r *jsonReader) string() (string, bool) {
	r.i++ // "
	var sb strings.Builder
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return sb.String(), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if r.i+1 >= len(r.s) {
				return "", false
			}
			r.i += 2
			switch e := r.s[r.i-1]; e {
			case '"', '\\', '/':
				sb.WriteByte(e)
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				ru, ok := r.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(ru) && strings.HasPrefix(r.s[r.i:], `\u`) {
					r.i += 2
					lo, ok := r.hex4()
					if !ok {
						return "", false
					}
					ru = utf16.DecodeRune(ru, lo)
				}
				sb.WriteRune(ru)
			default:
				return "", false
			}
		default:
			sb.WriteByte(c)
			r.i++
		}
	}
	return "", false
}

func (r *jsonReader) hex4() (rune, bool) {
	if r.i+4 > len(r.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(r.s[r.i:r.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	r.i += 4
	return rune(n), true
}

// ---- writing ----

// writeCompact appends v as compact JSON, as Spark (Jackson) writes what
// get_json_object returns: no spaces, floats in Java's notation.
func (v *jsonValue) writeCompact(sb *strings.Builder) {
	switch v.kind {
	case jsonString:
		writeJSONString(sb, v.str)
	case jsonNumber:
		if v.isInt() {
			sb.WriteString(v.str)
			return
		}
		f, _ := strconv.ParseFloat(v.str, 64)
		writeJSONFloat(sb, f)
	case jsonArray:
		sb.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				sb.WriteByte(',')
			}
			it.writeCompact(sb)
		}
		sb.WriteByte(']')
	case jsonObject:
		sb.WriteByte('{')
		for i, it := range v.items {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJSONString(sb, v.keys[i])
			sb.WriteByte(':')
			it.writeCompact(sb)
		}
		sb.WriteByte('}')
	default:
		sb.WriteString(v.str)
	}
}

// writeJSONString appends s quoted, escaping as Jackson does: quotes,
// backslashes and control characters; other characters as they are.
func writeJSONString(sb *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	sb.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				sb.WriteString(`\uFFFD`)
			} else {
				sb.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		switch c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		default:
			if c < 0x20 {
				sb.WriteString(`\u00`)
				sb.WriteByte(hex[c>>4])
				sb.WriteByte(hex[c&0xF])
			} else {
				sb.WriteByte(c)
			}
		}
		i++
	}
	sb.WriteByte('"')
}

// writeJSONFloat appends f in Java's notation; NaN and the infinities, which
// JSON has no number for, are quoted, as Jackson writes them by default.
func writeJSONFloat(sb *strings.Builder, f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		sb.WriteString(`"` + fmtFloat(f) + `"`)
		return
	}
	sb.WriteString(fmtFloat(f))
}
