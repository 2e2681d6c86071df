package sources

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
)

// JSON lines: one object per line. The parser is written for this one shape,
// flat objects of scalars, so that a line costs one pass and no allocation
// beyond its string values with escapes (the others share the file's memory).
// Nested objects and arrays are checked and kept as their JSON text in a
// string column, to be taken apart with JSON functions in queries.
//
// It accepts exactly what encoding/json accepts as one object, and reads it
// the same way: invalid UTF-8 and unpaired surrogates become U+FFFD, the last
// of repeated keys wins, nesting deeper than 10000 is an error.

// maxJSONDepth is encoding/json's limit on nesting.
const maxJSONDepth = 10000

// decodeJSONLines adds the records of the lines of data to b. Blank lines are
// skipped. Line numbers in errors are 1-based lines of the file (data starts
// after b.lineBase lines).
func decodeJSONLines(b *builder, data string) error {
	var p jsonParser
	b.reserve(strings.Count(data, "\n") + 1)
	return eachLine(data, func(line int, text string) error {
		text = strings.TrimRight(text, "\r")
		if blankLine(text) {
			return nil
		}
		b.currentLine = b.lineBase + line
		// The record goes into the row only once the whole line parsed, so
		// that a bad line leaves no trace (no new column, no widened type).
		if err := p.parseObject(text); err != nil {
			return b.badRecord(text, err.Error())
		}
		for i := range p.fields {
			f := &p.fields[i]
			c := b.columnAt(i, f.key)
			if b.appendScalar(c, f.kind, f.num, f.str) {
				continue
			}
			v, raw := f.value()
			b.put(c, f.key, v, raw)
		}
		return b.endRow()
	})
}

// blankLine reports whether a line holds JSON whitespace only.
func blankLine(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// jsonField is a key and its scalar value, unboxed: nested values are
// strings of their JSON text.
type jsonField struct {
	key  string
	kind domain.Kind // null, boolean, bigint, double or string
	num  int64       // a boolean (0 or 1), a bigint, or a double's bits
	// str is a string's value, or a number's text where it differs from
	// how the number prints (doubles, -0).
	str string
}

// value is the field's value as a domain.Value, and its text as written.
func (f *jsonField) value() (domain.Value, string) {
	switch f.kind {
	case domain.KindNull:
		return domain.Null(), ""
	case domain.KindBool:
		return domain.Bool(f.num != 0), ""
	case domain.KindInt64:
		return domain.Int(f.num), f.str
	case domain.KindFloat64:
		return domain.Float(math.Float64frombits(uint64(f.num))), f.str
	}
	return domain.String(f.str), ""
}

// jsonParser walks one line. It is reused from line to line.
type jsonParser struct {
	s      string
	pos    int
	fields []jsonField // the keys and values of the line, in order
	buf    []byte      // scratch for strings with escapes
}

func (p *jsonParser) fail(format string, args ...any) error {
	return fmt.Errorf("column %d: %s", p.pos+1, fmt.Sprintf(format, args...))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

// parseObject parses one line holding one JSON object into p.fields.
func (p *jsonParser) parseObject(line string) error {
	p.s, p.pos, p.fields = line, 0, p.fields[:0]
	p.skipSpace()
	if p.pos >= len(p.s) || p.s[p.pos] != '{' {
		return p.fail("expected '{' at the start of a JSON object")
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.skipSpace()
			if p.pos >= len(p.s) || p.s[p.pos] != '"' {
				return p.fail("expected a quoted key")
			}
			key, err := p.str()
			if err != nil {
				return err
			}
			p.skipSpace()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return p.fail("expected ':' after key %q", key)
			}
			p.pos++
			p.skipSpace()
			p.fields = append(p.fields, jsonField{key: key})
			if err := p.value(&p.fields[len(p.fields)-1]); err != nil {
				return err
			}
			p.skipSpace()
			if p.pos >= len(p.s) {
				return p.fail("unexpected end of line inside an object")
			}
			c := p.s[p.pos]
			p.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				p.pos--
				return p.fail("expected ',' or '}' after the value of %q", key)
			}
		}
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return p.fail("unexpected text after the object")
	}
	return nil
}

// value parses the value of a key of the top-level object into f.
func (p *jsonParser) value(f *jsonField) error {
	if p.pos >= len(p.s) {
		return p.fail("expected a value")
	}
	start := p.pos
	switch c := p.s[p.pos]; {
	case c == '"':
		s, err := p.str()
		f.kind, f.str = domain.KindString, s
		return err
	case c == '{' || c == '[':
		if err := p.skipValue(2); err != nil {
			return err
		}
		f.kind, f.str = domain.KindString, p.s[start:p.pos]
		return nil
	case c == 't':
		f.kind, f.num = domain.KindBool, 1
		return p.literal("true")
	case c == 'f':
		f.kind, f.num = domain.KindBool, 0
		return p.literal("false")
	case c == 'n':
		f.kind = domain.KindNull
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		kind, num, err := p.number()
		if err != nil {
			return err
		}
		f.kind, f.num = kind, num
		if kind == domain.KindFloat64 || (num == 0 && c == '-') {
			// The text of a double (1.50, 1e3) differs from how it
			// prints; an integer's is the same, but for -0.
			f.str = p.s[start:p.pos]
		}
		return nil
	}
	return p.fail("unexpected character %q", p.s[p.pos])
}

// skipValue moves past any JSON value, checking it. depth is the nesting
// depth the value has if it is an object or an array.
func (p *jsonParser) skipValue(depth int) error {
	if p.pos >= len(p.s) {
		return p.fail("expected a value")
	}
	switch c := p.s[p.pos]; {
	case c == '"':
		_, err := p.str()
		return err
	case c == '{' || c == '[':
		if depth > maxJSONDepth {
			return p.fail("values nested more than %d deep", maxJSONDepth)
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.pos++
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == end {
			p.pos++
			return nil
		}
		for {
			p.skipSpace()
			if c == '{' {
				if p.pos >= len(p.s) || p.s[p.pos] != '"' {
					return p.fail("expected a quoted key")
				}
				if _, err := p.str(); err != nil {
					return err
				}
				p.skipSpace()
				if p.pos >= len(p.s) || p.s[p.pos] != ':' {
					return p.fail("expected ':' after a key")
				}
				p.pos++
				p.skipSpace()
			}
			if err := p.skipValue(depth + 1); err != nil {
				return err
			}
			p.skipSpace()
			if p.pos >= len(p.s) {
				return p.fail("unterminated nested value")
			}
			switch p.s[p.pos] {
			case end:
				p.pos++
				return nil
			case ',':
				p.pos++
			default:
				return p.fail("expected ',' or '%c' in a nested value", end)
			}
		}
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, err := p.number()
		return err
	}
	return p.fail("unexpected character %q", p.s[p.pos])
}

func (p *jsonParser) literal(word string) error {
	if !strings.HasPrefix(p.s[p.pos:], word) {
		return p.fail("expected %s", word)
	}
	p.pos += len(word)
	return nil
}

var errNumber = errors.New("malformed number")

// number parses a JSON number: a bigint when it is an integer that fits,
// else a double (±Inf beyond the range of a double), given as its bits.
func (p *jsonParser) number() (domain.Kind, int64, error) {
	start := p.pos
	if p.s[p.pos] == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits || (p.s[digits] == '0' && p.pos-digits > 1) {
		return 0, 0, p.fail("%v %q", errNumber, p.s[start:p.pos])
	}
	integer := true
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		integer = false
		p.pos++
		frac := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		if p.pos == frac {
			return 0, 0, p.fail("%v %q", errNumber, p.s[start:p.pos])
		}
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			p.pos++
		}
		exp := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		if p.pos == exp {
			return 0, 0, p.fail("%v %q", errNumber, p.s[start:p.pos])
		}
	}
	text := p.s[start:p.pos]
	if integer {
		if p.pos-digits <= 18 { // at most 18 digits: fits without overflow checks
			var n int64
			for i := digits; i < p.pos; i++ {
				n = n*10 + int64(p.s[i]-'0')
			}
			if digits > start {
				n = -n
			}
			return domain.KindInt64, n, nil
		}
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return domain.KindInt64, n, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, 0, p.fail("%v %q", errNumber, text)
	}
	return domain.KindFloat64, int64(math.Float64bits(f)), nil
}

// plainByte marks the bytes a string holds as they are: not a quote, a
// backslash, a control character or a byte of a multi-byte UTF-8 sequence.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str parses a quoted string; without escapes it is a slice of the line.
func (p *jsonParser) str() (string, error) {
	p.pos++ // the opening quote
	start := p.pos
	ascii := true
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if plainByte[c] {
			p.pos++
			continue
		}
		switch {
		case c == '"':
			s := p.s[start:p.pos]
			p.pos++
			if !ascii {
				s = validUTF8(s)
			}
			return s, nil
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", p.fail("control character %q in a string", c)
		}
		ascii = false
		p.pos++
	}
	return "", p.fail("unterminated string")
}

// escapedStr continues str from the first backslash, building the string.
func (p *jsonParser) escapedStr(start int) (string, error) {
	buf := append(p.buf[:0], p.s[start:p.pos]...)
	defer func() { p.buf = buf[:0] }()
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return validUTF8(string(buf)), nil
		case c < 0x20:
			return "", p.fail("control character %q in a string", c)
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.s) {
			break
		}
		e := p.s[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(p.s[p.pos:])
			if !ok {
				p.pos -= 2
				return "", p.fail("invalid \\u escape")
			}
			p.pos += 4
			if utf16.IsSurrogate(r) {
				// A pair makes one rune; anything else is U+FFFD, and what
				// follows is read on its own (as encoding/json does).
				r2, ok := rune(-1), false
				if strings.HasPrefix(p.s[p.pos:], `\u`) {
					r2, ok = hex4(p.s[p.pos+2:])
				}
				r = utf16.DecodeRune(r, r2)
				if ok && r != utf8.RuneError {
					p.pos += 6
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.pos -= 2
			return "", p.fail("invalid escape \\%c", e)
		}
	}
	return "", p.fail("unterminated string")
}

// hex4 reads the 4 hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// validUTF8 returns s with each byte that is not part of valid UTF-8 replaced
// by U+FFFD, as encoding/json reads strings.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	return sb.String()
}
