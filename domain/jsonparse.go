package domain

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The one JSON reader: JSON lines sources read with JSONObjectReader, a flat
// pass that costs no allocation beyond strings with escapes; the JSON
// functions read with ParseJSON, a tree that keeps keys in order, duplicates
// too, and the text of every value. Both accept exactly what encoding/json
// accepts, and read it the same way: invalid UTF-8 and unpaired surrogates
// become U+FFFD, nesting deeper than 10000 is an error.

// maxJSONDepth is encoding/json's limit on nesting.
const maxJSONDepth = 10000

// JSONError is where and why JSON text does not parse.
type JSONError struct {
	Offset int // 0-based byte offset
	Reason string
}

func (e *JSONError) Error() string { return fmt.Sprintf("column %d: %s", e.Offset+1, e.Reason) }

// JSONField is one key of an object read by JSONObjectReader and its value,
// unboxed: an object or an array is a string of its JSON text.
type JSONField struct {
	Key      string
	plainKey bool  // Key is its text as written between the quotes
	Kind     Kind  // KindNull, KindBool, KindInt64, KindFloat64 or KindString
	Num      int64 // a boolean (0 or 1), a bigint, or a double's bits
	// Text is a string's value, or a number's text where it differs from
	// how the number prints (doubles, -0).
	Text string
	// Nested marks an object or an array, whose JSON text Text is.
	Nested bool
}

// JSON is the field's value as JSON text.
func (f *JSONField) JSON() string {
	switch {
	case f.Nested:
		return f.Text
	case f.Kind == KindString:
		return string(AppendJSONString(nil, f.Text))
	case f.Kind == KindNull:
		return "null"
	case f.Kind == KindBool:
		return strconv.FormatBool(f.Num != 0)
	case f.Text != "":
		return f.Text
	case f.Kind == KindInt64:
		return strconv.FormatInt(f.Num, 10)
	}
	return strconv.FormatFloat(math.Float64frombits(uint64(f.Num)), 'g', -1, 64)
}

// Value is the field's value, and its text as written when that differs
// from how the value prints.
func (f *JSONField) Value() (Value, string) {
	switch f.Kind {
	case KindNull:
		return Null(), ""
	case KindBool:
		return Bool(f.Num != 0), ""
	case KindInt64:
		return Int(f.Num), f.Text
	case KindFloat64:
		return Float(math.Float64frombits(uint64(f.Num))), f.Text
	}
	return String(f.Text), ""
}

// JSONObjectReader reads one JSON object at a time into Fields. It is meant
// to be reused, so that its scratch memory is.
type JSONObjectReader struct {
	p      jsonScanner
	Fields []JSONField // the keys and values of the last object, in order
}

// Read parses s, one JSON object with optional whitespace around it.
func (r *JSONObjectReader) Read(s string) error {
	p := &r.p
	p.s, p.pos, r.Fields = s, 0, r.Fields[:0]
	p.skipSpace()
	if p.pos >= len(p.s) || p.s[p.pos] != '{' {
		return p.fail("expected '{' at the start of a JSON object")
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
	} else {
		// the loop of key() and next() written out: this is the hot path
		// of JSON lines sources
		for {
			p.skipSpace()
			if p.pos >= len(p.s) || p.s[p.pos] != '"' {
				return p.fail("expected a quoted key")
			}
			f := r.next()
			if !p.sameKey(f) {
				key, err := p.str()
				if err != nil {
					return err
				}
				f.Key, f.plainKey = key, p.plain
			}
			key := f.Key
			p.skipSpace()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return p.fail("expected ':' after key %q", key)
			}
			p.pos++
			p.skipSpace()
			if err := p.field(f); err != nil {
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
	return p.end()
}

// sameKey moves past the quoted key at p.pos when it is written as f's
// key, the same field of the object read before, was: lines of JSON
// mostly repeat their keys in order, and a key so matched is read with
// one comparison, and kept as the string already read.
func (p *jsonScanner) sameKey(f *JSONField) bool {
	k := f.Key
	end := p.pos + 1 + len(k)
	if !f.plainKey || end >= len(p.s) || p.s[end] != '"' || p.s[p.pos+1:end] != k {
		return false
	}
	p.pos = end + 1
	return true
}

// next is the next field of Fields, cleared but for its key, which
// sameKey compares with the next key read. A field is reused in place,
// its members set one by one rather than the field copied in whole: a
// copy of a struct holding strings goes through the garbage collector's
// bulk write barrier while it marks, which costs more, at every field of
// every line, than the parse itself.
func (r *JSONObjectReader) next() *JSONField {
	if len(r.Fields) == cap(r.Fields) {
		r.Fields = append(r.Fields, JSONField{})
	} else {
		r.Fields = r.Fields[:len(r.Fields)+1]
	}
	f := &r.Fields[len(r.Fields)-1]
	f.Kind, f.Num, f.Nested = KindNull, 0, false
	if f.Text != "" {
		f.Text = ""
	}
	return f
}

// JSONKind is the kind of a JSON value.
type JSONKind uint8

const (
	JSONNull JSONKind = iota
	JSONBool
	JSONNumber
	JSONString
	JSONArray
	JSONObject
)

// JSONNode is one JSON value of a parsed tree.
type JSONNode struct {
	Kind   JSONKind
	Raw    string      // the value's text as written
	Offset int         // where Raw starts in the parsed text
	Text   string      // a string's value; a number's or a boolean's text
	Keys   []string    // an object's keys, in order, duplicates kept
	Items  []*JSONNode // an array's elements, an object's values
}

// IsInt reports whether a number is written as an integer.
func (n *JSONNode) IsInt() bool { return !strings.ContainsAny(n.Text, ".eE") }

// ParseJSON reads s, one JSON value with optional whitespace around it.
func ParseJSON(s string) (*JSONNode, error) {
	p := &jsonScanner{s: s}
	p.skipSpace()
	n, err := p.node(1)
	if err != nil {
		return nil, err
	}
	return n, p.end()
}

// ParseJSONSequence reads s as JSON values one after another, separated by
// whitespace (a multi-line JSON file), calling each with every value and its
// offset. At a value that does not parse it calls bad, with the value's
// offset and why, and stops: no value boundary can be found after it.
func ParseJSONSequence(s string, each func(n *JSONNode, offset int) error, bad func(offset int, err *JSONError) error) error {
	p := &jsonScanner{s: s}
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil
		}
		start := p.pos
		n, err := p.node(1)
		if err != nil {
			return bad(start, err.(*JSONError))
		}
		if err := each(n, start); err != nil {
			return err
		}
	}
}

// AppendCompact appends n as compact JSON, as Jackson writes a tree it
// read: no spaces, numbers with a fraction or exponent in Java's notation,
// strings escaped as AppendJSONString does.
func (n *JSONNode) AppendCompact(b []byte) []byte {
	switch n.Kind {
	case JSONString:
		return AppendJSONString(b, n.Text)
	case JSONNumber:
		if n.IsInt() {
			return append(b, n.Text...)
		}
		f, _ := strconv.ParseFloat(n.Text, 64)
		return AppendJSONDouble(b, f)
	case JSONArray, JSONObject:
		open, end := byte('['), byte(']')
		if n.Kind == JSONObject {
			open, end = '{', '}'
		}
		b = append(b, open)
		for i, it := range n.Items {
			if i > 0 {
				b = append(b, ',')
			}
			if n.Kind == JSONObject {
				b = AppendJSONString(b, n.Keys[i])
				b = append(b, ':')
			}
			b = it.AppendCompact(b)
		}
		return append(b, end)
	}
	return append(b, n.Text...)
}

// jsonScanner walks JSON text.
type jsonScanner struct {
	s     string
	pos   int
	buf   []byte // scratch for strings with escapes
	plain bool   // the last string read is its text as written (ASCII, no escapes)
}

var errJSONNumber = errors.New("malformed number")

func (p *jsonScanner) fail(format string, args ...any) error {
	return &JSONError{Offset: p.pos, Reason: fmt.Sprintf(format, args...)}
}

func (p *jsonScanner) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

// end checks that only whitespace follows.
func (p *jsonScanner) end() error {
	p.skipSpace()
	if p.pos != len(p.s) {
		return p.fail("unexpected text after the value")
	}
	return nil
}

// key reads an object's key and the colon after it.
func (p *jsonScanner) key() (string, error) {
	p.skipSpace()
	if p.pos >= len(p.s) || p.s[p.pos] != '"' {
		return "", p.fail("expected a quoted key")
	}
	key, err := p.str()
	if err != nil {
		return "", err
	}
	p.skipSpace()
	if p.pos >= len(p.s) || p.s[p.pos] != ':' {
		return "", p.fail("expected ':' after key %q", key)
	}
	p.pos++
	p.skipSpace()
	return key, nil
}

// next moves past the ',' or the closing end after a value; done is true at
// the end.
func (p *jsonScanner) next(end byte) (done bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return false, p.fail("unexpected end of text inside an object or array")
	}
	switch p.s[p.pos] {
	case end:
		p.pos++
		return true, nil
	case ',':
		p.pos++
		return false, nil
	}
	return false, p.fail("expected ',' or '%c'", end)
}

// field reads the value of a key of a top-level object into f.
func (p *jsonScanner) field(f *JSONField) error {
	if p.pos >= len(p.s) {
		return p.fail("expected a value")
	}
	start := p.pos
	switch c := p.s[p.pos]; {
	case c == '"':
		s, err := p.str()
		f.Kind, f.Text = KindString, s
		return err
	case c == '{' || c == '[':
		if err := p.skip(2); err != nil {
			return err
		}
		f.Kind, f.Text, f.Nested = KindString, p.s[start:p.pos], true
		return nil
	case c == 't':
		f.Kind, f.Num = KindBool, 1
		return p.literal("true")
	case c == 'f':
		f.Kind, f.Num = KindBool, 0
		return p.literal("false")
	case c == 'n':
		f.Kind = KindNull
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		kind, num, err := p.number()
		if err != nil {
			return err
		}
		f.Kind, f.Num = kind, num
		if kind == KindFloat64 || (num == 0 && c == '-') {
			// The text of a double (1.50, 1e3) differs from how it
			// prints; an integer's is the same, but for -0.
			f.Text = p.s[start:p.pos]
		}
		return nil
	}
	return p.fail("unexpected character %q", p.s[p.pos])
}

// node reads a value as a tree; depth is its nesting depth.
func (p *jsonScanner) node(depth int) (*JSONNode, error) {
	if p.pos >= len(p.s) {
		return nil, p.fail("expected a value")
	}
	start := p.pos
	n := &JSONNode{}
	switch c := p.s[p.pos]; {
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Text = JSONString, s
	case c == '{' || c == '[':
		if depth > maxJSONDepth {
			return nil, p.fail("values nested more than %d deep", maxJSONDepth)
		}
		end := byte(']')
		n.Kind = JSONArray
		if c == '{' {
			end, n.Kind = '}', JSONObject
		}
		p.pos++
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == end {
			p.pos++
			break
		}
		for {
			if c == '{' {
				k, err := p.key()
				if err != nil {
					return nil, err
				}
				n.Keys = append(n.Keys, k)
			} else {
				p.skipSpace()
			}
			item, err := p.node(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Items = append(n.Items, item)
			done, err := p.next(end)
			if err != nil {
				return nil, err
			}
			if done {
				break
			}
		}
	case c == 't', c == 'f', c == 'n':
		word, kind := "null", JSONNull
		if c == 't' {
			word, kind = "true", JSONBool
		} else if c == 'f' {
			word, kind = "false", JSONBool
		}
		if err := p.literal(word); err != nil {
			return nil, err
		}
		n.Kind, n.Text = kind, word
	case c == '-' || (c >= '0' && c <= '9'):
		if _, err := p.numberForm(); err != nil {
			return nil, err
		}
		n.Kind, n.Text = JSONNumber, p.s[start:p.pos]
	default:
		return nil, p.fail("unexpected character %q", c)
	}
	n.Raw, n.Offset = p.s[start:p.pos], start
	return n, nil
}

// skip moves past any JSON value, checking it. depth is the nesting depth
// the value has if it is an object or an array.
func (p *jsonScanner) skip(depth int) error {
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
		end := byte(']')
		if c == '{' {
			end = '}'
		}
		p.pos++
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == end {
			p.pos++
			return nil
		}
		for {
			if c == '{' {
				if _, err := p.key(); err != nil {
					return err
				}
			} else {
				p.skipSpace()
			}
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			if done, err := p.next(end); done || err != nil {
				return err
			}
		}
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := p.numberForm()
		return err
	}
	return p.fail("unexpected character %q", p.s[p.pos])
}

func (p *jsonScanner) literal(word string) error {
	if !strings.HasPrefix(p.s[p.pos:], word) {
		return p.fail("expected %s", word)
	}
	p.pos += len(word)
	return nil
}

// numberForm moves past a JSON number and reports whether it is written as
// an integer.
func (p *jsonScanner) numberForm() (integer bool, err error) {
	start := p.pos
	if p.s[p.pos] == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits || (p.s[digits] == '0' && p.pos-digits > 1) {
		return false, p.fail("%v %q", errJSONNumber, p.s[start:p.pos])
	}
	integer = true
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		integer = false
		p.pos++
		frac := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		if p.pos == frac {
			return false, p.fail("%v %q", errJSONNumber, p.s[start:p.pos])
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
			return false, p.fail("%v %q", errJSONNumber, p.s[start:p.pos])
		}
	}
	return integer, nil
}

// number parses a JSON number: a bigint when it is an integer that fits,
// else a double (±Inf beyond the range of a double), given as its bits.
func (p *jsonScanner) number() (Kind, int64, error) {
	start := p.pos
	// Most numbers are short integers: read in one pass.
	i, neg := p.pos, p.s[p.pos] == '-'
	if neg {
		i++
	}
	var n int64
	digits := i
	for ; i < len(p.s) && i-digits < 19 && p.s[i] >= '0' && p.s[i] <= '9'; i++ {
		n = n*10 + int64(p.s[i]-'0')
	}
	if d := i - digits; d > 0 && d < 19 && (d == 1 || p.s[digits] != '0') &&
		(i == len(p.s) || p.s[i] != '.' && p.s[i] != 'e' && p.s[i] != 'E' && (p.s[i] < '0' || p.s[i] > '9')) {
		p.pos = i
		if neg {
			n = -n
		}
		return KindInt64, n, nil
	}
	if f, end, ok := shortDecimal(p.s, digits, i, n); ok {
		p.pos = end
		if neg {
			f = -f
		}
		return KindFloat64, int64(math.Float64bits(f)), nil
	}
	integer, err := p.numberForm()
	if err != nil {
		return 0, 0, err
	}
	text := p.s[start:p.pos]
	if integer {
		digits := text
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) <= 18 { // at most 18 digits: fits without overflow checks
			var n int64
			for i := 0; i < len(digits); i++ {
				n = n*10 + int64(digits[i]-'0')
			}
			if len(digits) < len(text) {
				n = -n
			}
			return KindInt64, n, nil
		}
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return KindInt64, n, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, 0, p.fail("%v %q", errJSONNumber, text)
	}
	return KindFloat64, int64(math.Float64bits(f)), nil
}

// shortDecimal reads a number written as digits, a point and digits, with
// no exponent and at most 15 digits in all (most prices and measures),
// whose integer digits s[digits:i] are n, from the point at s[i] on: the
// digits as an integer, divided by a power of ten. Both are exact in a
// double, so the one division rounds correctly (as strconv's exact path
// does). It reports false for any other form.
func shortDecimal(s string, digits, i int, n int64) (float64, int, bool) {
	d := i - digits
	if d == 0 || d > 1 && s[digits] == '0' || i >= len(s) || s[i] != '.' {
		return 0, 0, false
	}
	i++
	frac := i
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if d+i-frac >= 15 {
			return 0, 0, false
		}
	}
	if i == frac || i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		return 0, 0, false
	}
	return float64(n) / exactPow10[i-frac], i, true
}

// exactPow10 are the powers of ten a double holds exactly that
// shortDecimal divides by.
var exactPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// plainByte marks the bytes a string holds as they are: not a quote, a
// backslash, a control character or a byte of a multi-byte UTF-8 sequence.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// load64 is the 8 bytes of s at i, little-endian (one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// notPlain8 marks, in the high bit of each byte, the bytes of w that
// plainByte does not hold: a quote, a backslash, a control character or a
// byte of 0x80 or more. Borrows may mark bytes above the lowest marked
// one too, never one below it, so its lowest mark is exact.
func notPlain8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (w-ones*0x20)&^w | w) & highs
}

// str parses a quoted string; without escapes it is a slice of the text.
func (p *jsonScanner) str() (string, error) {
	p.pos++ // the opening quote
	start := p.pos
	ascii := true
	// Eight bytes at a time to the first that is not plain: strings are
	// most of a JSON line's bytes.
	for p.pos+8 <= len(p.s) {
		if special := notPlain8(load64(p.s, p.pos)); special != 0 {
			p.pos += bits.TrailingZeros64(special) >> 3
			break
		}
		p.pos += 8
	}
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
			if p.plain = ascii; !ascii {
				s = ValidUTF8(s)
			}
			return s, nil
		case c == '\\':
			p.plain = false
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
func (p *jsonScanner) escapedStr(start int) (string, error) {
	buf := append(p.buf[:0], p.s[start:p.pos]...)
	defer func() { p.buf = buf[:0] }()
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return ValidUTF8(string(buf)), nil
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

// ValidUTF8 returns s with each byte that is not part of valid UTF-8 replaced
// by U+FFFD, as encoding/json reads strings and Java's decoders decode.
func ValidUTF8(s string) string {
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
