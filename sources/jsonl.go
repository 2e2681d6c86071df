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
// beyond its string values (which share the file's memory). Nested objects and
// arrays are kept as their JSON text in a string column, to be taken apart
// with JSON functions in queries.

// decodeJSONLines adds the records of lines [from, to) of data to b (to < 0:
// to the end). Blank lines are skipped. Line numbers in errors are 1-based
// lines of the file.
func decodeJSONLines(b *builder, data string, from, to int) error {
	line := 0
	for pos := 0; pos < len(data) && (to < 0 || line < to); line++ {
		end := strings.IndexByte(data[pos:], '\n')
		var text string
		if end < 0 {
			text, pos = data[pos:], len(data)
		} else {
			text, pos = data[pos:pos+end], pos+end+1
		}
		if line < from {
			continue
		}
		text = strings.TrimRight(text, "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		b.currentLine = line + 1
		if err := parseJSONObject(b, text); err != nil {
			if berr := b.badRecord(text, err.Error()); berr != nil {
				return berr
			}
			continue
		}
		if err := b.endRow(); err != nil {
			return err
		}
	}
	return nil
}

// jsonParser walks one line.
type jsonParser struct {
	s   string
	pos int
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

// parseJSONObject parses one line holding one JSON object into the current
// row of b. On error the row may be partly set; the caller rolls it back.
func parseJSONObject(b *builder, line string) error {
	p := jsonParser{s: line}
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
			v, err := p.value()
			if err != nil {
				return err
			}
			b.set(key, v)
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

func (p *jsonParser) value() (domain.Value, error) {
	if p.pos >= len(p.s) {
		return domain.Null(), p.fail("expected a value")
	}
	switch c := p.s[p.pos]; {
	case c == '"':
		s, err := p.str()
		return domain.String(s), err
	case c == '{' || c == '[':
		start := p.pos
		if err := p.skipNested(); err != nil {
			return domain.Null(), err
		}
		return domain.String(p.s[start:p.pos]), nil
	case c == 't':
		return domain.Bool(true), p.literal("true")
	case c == 'f':
		return domain.Bool(false), p.literal("false")
	case c == 'n':
		return domain.Null(), p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return domain.Null(), p.fail("unexpected character %q", p.s[p.pos])
}

func (p *jsonParser) literal(word string) error {
	if !strings.HasPrefix(p.s[p.pos:], word) {
		return p.fail("expected %s", word)
	}
	p.pos += len(word)
	return nil
}

var errNumber = errors.New("malformed number")

// number parses a JSON number: bigint when it is an integer that fits,
// double otherwise.
func (p *jsonParser) number() (domain.Value, error) {
	start := p.pos
	if p.s[p.pos] == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits || (p.s[digits] == '0' && p.pos-digits > 1) {
		return domain.Null(), p.fail("%v %q", errNumber, p.s[start:p.pos])
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
			return domain.Null(), p.fail("%v %q", errNumber, p.s[start:p.pos])
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
			return domain.Null(), p.fail("%v %q", errNumber, p.s[start:p.pos])
		}
	}
	text := p.s[start:p.pos]
	if integer {
		if len(text) <= 18 { // fits without overflow checks
			var n int64
			neg := text[0] == '-'
			for i := 0; i < len(text); i++ {
				if c := text[i]; c != '-' {
					n = n*10 + int64(c-'0')
				}
			}
			if neg {
				n = -n
			}
			return domain.Int(n), nil
		}
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return domain.Int(n), nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return domain.Null(), p.fail("%v %q", errNumber, text)
	}
	return domain.Float(f), nil
}

// str parses a quoted string; without escapes it is a slice of the line.
func (p *jsonParser) str() (string, error) {
	p.pos++ // the opening quote
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			s := p.s[start:p.pos]
			p.pos++
			return s, nil
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", p.fail("control character in a string")
		}
		p.pos++
	}
	return "", p.fail("unterminated string")
}

func (p *jsonParser) escapedStr(start int) (string, error) {
	var sb strings.Builder
	sb.WriteString(p.s[start:p.pos])
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return sb.String(), nil
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c != '\\':
			sb.WriteByte(c)
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
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(utf8.RuneError)
				if strings.HasPrefix(p.s[p.pos:], `\u`) {
					p.pos += 2
					if r2, err = p.hex4(); err != nil {
						return "", err
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			sb.WriteRune(r)
		default:
			return "", p.fail("invalid escape \\%c", e)
		}
	}
	return "", p.fail("unterminated string")
}

func (p *jsonParser) hex4() (rune, error) {
	if p.pos+4 > len(p.s) {
		return 0, p.fail("short \\u escape")
	}
	n, err := strconv.ParseUint(p.s[p.pos:p.pos+4], 16, 32)
	if err != nil {
		return 0, p.fail("invalid \\u escape %q", p.s[p.pos:p.pos+4])
	}
	p.pos += 4
	return rune(n), nil
}

// skipNested moves past a nested object or array, checking that brackets
// balance outside strings.
func (p *jsonParser) skipNested() error {
	var stack []byte
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch c {
		case '"':
			if _, err := p.str(); err != nil {
				return err
			}
			continue
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				return p.fail("mismatched %q", c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				p.pos++
				return nil
			}
		}
		p.pos++
	}
	return p.fail("unterminated nested value")
}
