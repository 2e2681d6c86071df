package sql

import (
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// A datetime pattern (Spark's DateTimeFormatter letters) compiled once into
// a list of fields, used both to format and to parse.
type patField struct {
	letter byte   // 0 for literal text
	count  int    // how many times the letter repeats
	lit    string // the text of a literal
}

type pattern []patField

// patLetters are the letters supported, with the most repeats each takes.
var patLetters = map[byte]int{
	'G': 3, 'y': 9, 'u': 9, 'M': 4, 'L': 4, 'd': 2, 'D': 3, 'Q': 4, 'E': 4, 'a': 1,
	'h': 2, 'H': 2, 'k': 2, 'K': 2, 'm': 2, 's': 2, 'S': 9, 'X': 5, 'x': 5, 'Z': 5, 'V': 2, 'z': 4,
}

// compilePattern translates a Spark datetime pattern, optional sections
// [...] among it. A letter Spark does not accept (or one sluice does not
// support: week-based fields w, W, Y, e, c, F; zone names O) is
// INVALID_DATETIME_PATTERN.
func compilePattern(s string) (pattern, error) {
	var out pattern
	depth := 0 // of optional sections
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == '\'':
			j := i + 1
			var lit strings.Builder
			for {
				if j >= len(s) {
					return nil, errText("unterminated quote")
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(s[j])
				j++
			}
			if j == i+1 {
				out = append(out, patField{lit: "'"})
			} else {
				out = append(out, patField{lit: lit.String()})
			}
			i = j + 1
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(s) && s[j] == ch {
				j++
			}
			most, ok := patLetters[ch]
			if !ok {
				return nil, errText("the letter '" + string(ch) + "' is not supported")
			}
			if j-i > most {
				return nil, errText("too many letters '" + string(ch) + "'")
			}
			out = append(out, patField{letter: ch, count: j - i})
			i = j
		case ch == '[':
			// an optional section: printed in full, parsed when it matches
			depth++
			out = append(out, patField{letter: '['})
			i++
		case ch == ']':
			if depth == 0 {
				return nil, errText("']' closes no optional section")
			}
			depth--
			out = append(out, patField{letter: ']'})
			i++
		case ch == '#' || ch == '{' || ch == '}':
			return nil, errText("'" + string(ch) + "' is reserved")
		default:
			j := i
			for j < len(s) && s[j] != '\'' && !(s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') && !strings.ContainsRune("[]#{}", rune(s[j])) {
				j++
			}
			out = append(out, patField{lit: s[i:j]})
			i = j
		}
	}
	if depth > 0 {
		return nil, errText("an optional section '[' is not closed")
	}
	return out, nil
}

func (c *compiler) patternArg(e syntax.Expr) (pattern, bool, error) {
	lit, ok := e.(*syntax.Literal)
	if !ok || lit.Kind != syntax.StringLit {
		return nil, false, nil
	}
	p, err := compilePattern(lit.Value)
	if err != nil {
		return nil, true, exprErr(domain.CodeInvalidDatetimePattern, e.Position(), "the datetime pattern '%s' is not valid: %v", lit.Value, err)
	}
	return p, true, nil
}

func pad(b []byte, v int64, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], v, 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// format renders the instant us (in loc) with the pattern.
func (p pattern) format(b []byte, us int64, loc *time.Location) []byte {
	wall := localMicros(us, loc)
	days := floorDiv(wall, microsPerDay)
	tod := wall - days*microsPerDay
	y, m, d := civil(days)
	for _, f := range p {
		switch f.letter {
		case 0:
			b = append(b, f.lit...)
		case '[', ']': // a timestamp has every field: optional sections print
		case 'G':
			if y > 0 {
				b = append(b, "AD"...)
			} else {
				b = append(b, "BC"...)
			}
		case 'y', 'u':
			yy := y
			if f.letter == 'y' && yy <= 0 {
				yy = 1 - yy // year of era
			}
			if f.count == 2 {
				b = pad(b, ((yy%100)+100)%100, 2)
			} else {
				b = pad(b, yy, f.count)
			}
		case 'M', 'L':
			switch f.count {
			case 3:
				b = append(b, time.Month(m).String()[:3]...)
			case 4:
				b = append(b, time.Month(m).String()...)
			default:
				b = pad(b, m, f.count)
			}
		case 'd':
			b = pad(b, d, f.count)
		case 'D':
			b = pad(b, days-daysFromCivil(y, 1, 1)+1, f.count)
		case 'Q':
			b = pad(b, (m+2)/3, f.count)
		case 'E':
			wd := time.Weekday(((days+4)%7 + 7) % 7).String() // 1970-01-01 was a Thursday
			if f.count < 4 {
				wd = wd[:3]
			}
			b = append(b, wd...)
		case 'a':
			if tod < 12*microsPerHour {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'H':
			b = pad(b, tod/microsPerHour, f.count)
		case 'k':
			h := tod / microsPerHour
			if h == 0 {
				h = 24
			}
			b = pad(b, h, f.count)
		case 'h', 'K':
			h := tod / microsPerHour % 12
			if h == 0 && f.letter == 'h' {
				h = 12
			}
			b = pad(b, h, f.count)
		case 'm':
			b = pad(b, tod/microsPerMinute%60, f.count)
		case 's':
			b = pad(b, tod/microsPerSecond%60, f.count)
		case 'S':
			frac := strconv.FormatInt(tod%microsPerSecond+microsPerSecond, 10)[1:] + "000"
			b = append(b, frac[:f.count]...)
		case 'X', 'x', 'Z', 'V', 'z':
			b = appendZone(b, f, us, loc)
		}
	}
	return b
}

func appendZone(b []byte, f patField, us int64, loc *time.Location) []byte {
	name, off := time.UnixMicro(us).In(loc).Zone()
	switch f.letter {
	case 'V':
		return append(b, loc.String()...)
	case 'z':
		return append(b, name...)
	}
	if off == 0 && f.letter == 'X' {
		return append(b, 'Z')
	}
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	h, mi := int64(off/3600), int64(off/60%60)
	if f.letter == 'Z' && f.count < 4 {
		return pad(pad(append(b, sign), h, 2), mi, 2)
	}
	b = pad(append(b, sign), h, 2)
	switch {
	case f.count == 1:
		if mi != 0 {
			b = pad(b, mi, 2)
		}
	case f.count == 2:
		b = pad(b, mi, 2)
	default:
		b = pad(append(b, ':'), mi, 2)
	}
	return b
}

// parse reads s with the pattern; fields it lacks default as Spark's do
// (year 1970, month and day 1, midnight). The result is in loc unless the
// text carries an offset. An optional section [...] is read when it matches
// and skipped when it does not.
func (p pattern) parse(s string, loc *time.Location) (int64, bool) {
	st := parseState{y: 1970, m: 1, d: 1, pm: -1}
	if !st.fields(p, s) || st.pos != len(s) {
		return 0, false
	}
	return st.result(loc)
}

// parseState is what parsing has read so far, copied to try an optional
// section and restored when it does not match.
type parseState struct {
	pos              int
	y, m, d, doy     int64
	h, mi, sec, frac int64
	pm               int
	h12              bool
	off              int64
	hasOff           bool
}

// fields reads the fields of p from s at st.pos.
func (st *parseState) fields(p pattern, s string) bool {
	num := func(minW, maxW int) (int64, bool) {
		start := st.pos
		if st.pos < len(s) && (s[st.pos] == '-' || s[st.pos] == '+') && maxW > 4 {
			st.pos++
		}
		ds := st.pos
		for st.pos < len(s) && st.pos-ds < maxW && s[st.pos] >= '0' && s[st.pos] <= '9' {
			st.pos++
		}
		if st.pos-ds < minW {
			return 0, false
		}
		v, err := strconv.ParseInt(s[start:st.pos], 10, 64)
		return v, err == nil
	}
	for k := 0; k < len(p); k++ {
		f := p[k]
		if f.letter == '[' {
			end := closing(p, k)
			saved := *st
			if !st.fields(p[k+1:end], s) {
				*st = saved
			}
			k = end
			continue
		}
		// a number followed directly by another number field takes exactly
		// its width, so yyyyMMdd parses
		adjacent := k+1 < len(p) && p[k+1].letter != 0 && p[k+1].letter != '[' && p[k+1].letter != ']'
		w := func(n int) int {
			if adjacent {
				return f.count
			}
			return n
		}
		var ok bool
		switch f.letter {
		case 0:
			ok = strings.HasPrefix(s[st.pos:], f.lit)
			st.pos += len(f.lit)
		case 'y', 'u':
			if f.count == 2 {
				st.y, ok = num(2, 2)
				st.y += 2000
			} else {
				st.y, ok = num(f.count, w(10))
			}
		case 'M', 'L':
			if f.count >= 3 {
				ok = false
				for mm := 1; mm <= 12; mm++ {
					name := time.Month(mm).String()
					if f.count == 3 {
						name = name[:3]
					}
					if len(s)-st.pos >= len(name) && strings.EqualFold(s[st.pos:st.pos+len(name)], name) {
						st.m, st.pos, ok = int64(mm), st.pos+len(name), true
						break
					}
				}
			} else {
				st.m, ok = num(f.count, w(2))
			}
		case 'd':
			st.d, ok = num(f.count, w(2))
		case 'D':
			st.doy, ok = num(f.count, w(3))
		case 'H', 'k':
			st.h, ok = num(f.count, w(2))
		case 'h', 'K':
			st.h, ok = num(f.count, w(2))
			st.h12 = true
		case 'm':
			st.mi, ok = num(f.count, w(2))
		case 's':
			st.sec, ok = num(f.count, w(2))
		case 'S':
			start := st.pos
			for st.pos < len(s) && st.pos-start < f.count && s[st.pos] >= '0' && s[st.pos] <= '9' {
				st.pos++
			}
			digits := s[start:st.pos] + "000000000"
			st.frac, _ = strconv.ParseInt(digits[:6], 10, 64)
			ok = st.pos > start
		case 'a':
			switch {
			case strings.HasPrefix(strings.ToUpper(s[st.pos:]), "AM"):
				st.pm, ok = 0, true
			case strings.HasPrefix(strings.ToUpper(s[st.pos:]), "PM"):
				st.pm, ok = 1, true
			}
			st.pos += 2
		case 'E':
			ok = false
			for wd := 0; wd < 7; wd++ {
				name := time.Weekday(wd).String()
				if f.count < 4 {
					name = name[:3]
				}
				if len(s)-st.pos >= len(name) && strings.EqualFold(s[st.pos:st.pos+len(name)], name) {
					st.pos, ok = st.pos+len(name), true
					break
				}
			}
		case 'X', 'x', 'Z':
			st.off, ok = parseOffset(s, &st.pos)
			st.hasOff = true
		default:
			return false // G, Q, V, z are not parsed
		}
		if !ok || st.pos > len(s) {
			return false
		}
	}
	return true
}

// closing is the index of the ']' that closes the '[' at open.
func closing(p pattern, open int) int {
	depth := 0
	for k := open; k < len(p); k++ {
		switch p[k].letter {
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return len(p) // compilePattern refuses an unclosed section
}

// result is the instant the fields read make.
func (st *parseState) result(loc *time.Location) (int64, bool) {
	h := st.h
	if st.h12 {
		if h < 1 || h > 12 || st.pm < 0 {
			return 0, false
		}
		h = h%12 + int64(st.pm)*12
	} else if st.pm >= 0 {
		return 0, false
	}
	y, m, d := st.y, st.m, st.d
	if m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) || h > 23 || st.mi > 59 || st.sec > 59 {
		return 0, false
	}
	days := daysFromCivil(y, m, d)
	if st.doy > 0 {
		if st.doy > 365+b2i(isLeap(y)) {
			return 0, false
		}
		days = daysFromCivil(y, 1, 1) + st.doy - 1
	}
	if dateFits(days) != "" {
		return 0, false
	}
	wall := days*microsPerDay + h*microsPerHour + st.mi*microsPerMinute + st.sec*microsPerSecond + st.frac
	if st.hasOff {
		return wall - st.off*microsPerSecond, true
	}
	return fromLocalMicros(wall, loc), true
}

// parseOffset reads Z, +hh, +hhmm or +hh:mm.
func parseOffset(s string, pos *int) (int64, bool) {
	r := s[*pos:]
	if strings.HasPrefix(r, "Z") {
		*pos++
		return 0, true
	}
	if len(r) < 3 || (r[0] != '+' && r[0] != '-') {
		return 0, false
	}
	h, err := strconv.Atoi(r[1:3])
	if err != nil {
		return 0, false
	}
	n, mi := 3, 0
	rest := r[3:]
	rest = strings.TrimPrefix(rest, ":")
	if len(rest) >= 2 && rest[0] >= '0' && rest[0] <= '9' {
		if mi, err = strconv.Atoi(rest[:2]); err != nil {
			return 0, false
		}
		n = len(r) - len(rest) + 2
	}
	*pos += n
	off := int64(h*3600 + mi*60)
	if r[0] == '-' {
		off = -off
	}
	return off, true
}
