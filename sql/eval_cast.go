package sql

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// castNode converts between bigint, double, string, boolean, date and
// timestamp with Spark's ANSI rules: input that does not convert is
// CAST_INVALID_INPUT (NULL with try_cast), a value out of range CAST_OVERFLOW.
type castNode struct {
	x        node
	to       domain.Kind
	try      bool
	implicit bool
	pos      syntax.Pos
	loc      *time.Location // the session time zone; nil is UTC
	// bits is the width of the type cast to (INT 32, SMALLINT 16, TINYINT
	// 8, FLOAT 32): integers are stored as bigint, but a value outside the
	// named type's range is CAST_OVERFLOW, as in Spark; floats as doubles,
	// rounded to the nearest float; 0 for bigint and double
	bits int
	// ntz: the cast is to TIMESTAMP_NTZ, a wall-clock time
	ntz bool
}

func (n *castNode) typ() domain.Type { return domain.Type{Kind: n.to, Bits: n.bits, NTZ: n.ntz} }
func (n *castNode) mayFail() bool    { return !n.try || n.x.mayFail() }

func (n *castNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := newCol(n.to, rows)
	out.Nulls = unionNulls(rows, x)
	fail := func(i int, code domain.Code, v string) error {
		if n.try {
			if out.Nulls == nil {
				out.Nulls = make([]bool, rows)
			}
			out.Nulls[i] = true
			return nil
		}
		q := v
		if x.Kind == domain.KindString {
			q = "'" + v + "'"
		}
		if code == domain.CodeCastOverflow {
			return exprErr(code, n.pos, "the value %s of type %s is out of the range of %s", q, n.x.typ(), n.typ())
		}
		return exprErr(code, n.pos, "the value %s of type %s cannot be cast to %s", q, n.x.typ(), n.typ())
	}
	from := x.Kind
	loc := n.loc
	if loc == nil {
		loc = time.UTC
	}
	// a TIMESTAMP_NTZ is a wall-clock time: text and dates meet it in no
	// time zone, and the session's zone turns it into an instant and back
	fromNTZ := n.x.typ().NTZ
	wallLoc := loc
	if n.ntz || fromNTZ {
		wallLoc = time.UTC
	}
	for i := 0; i < rows; i++ {
		if isNullAt(x.Nulls, i) {
			continue
		}
		switch n.to {
		case domain.KindString:
			switch {
			case from == domain.KindTimestamp:
				out.Strs[i] = formatTimestamp(x.Ints[i], wallLoc)
			case from == domain.KindFloat64:
				out.Strs[i] = domain.FormatNumber(x.Floats[i], n.x.typ()) // a float by its own digits
			default:
				out.Strs[i] = toString(x, i)
			}
		case domain.KindInt64:
			switch from {
			case domain.KindBool, domain.KindInt64: // bigint to a narrower integer: checked below
				out.Ints[i] = x.Ints[i]
			case domain.KindTimestamp: // whole seconds since the epoch, rounded down
				out.Ints[i] = floorDiv(x.Ints[i], microsPerSecond)
			case domain.KindFloat64:
				f := math.Trunc(x.Floats[i])
				if math.IsNaN(f) || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
					if err := fail(i, domain.CodeCastOverflow, fmtFloat(x.Floats[i])); err != nil {
						return nil, err
					}
					continue
				}
				out.Ints[i] = int64(f)
			case domain.KindString:
				// text beyond the type's range is malformed input, as Spark
				// 4 says, not an overflow
				v, err := strconv.ParseInt(strings.TrimSpace(x.Strs[i]), 10, 64)
				if lo, hi := n.typ().IntRange(); err != nil || v < lo || v > hi {
					if err := fail(i, domain.CodeCastInvalidInput, x.Strs[i]); err != nil {
						return nil, err
					}
					continue
				}
				out.Ints[i] = v
			}
		case domain.KindFloat64:
			switch from {
			case domain.KindFloat64: // double to float: rounded below
				out.Floats[i] = x.Floats[i]
			case domain.KindTimestamp: // seconds since the epoch and their fraction
				out.Floats[i] = float64(x.Ints[i]) / 1e6
			case domain.KindBool, domain.KindInt64:
				out.Floats[i] = float64(x.Ints[i])
			case domain.KindString:
				f, ok := parseDouble(x.Strs[i])
				if !ok {
					if err := fail(i, domain.CodeCastInvalidInput, x.Strs[i]); err != nil {
						return nil, err
					}
					continue
				}
				out.Floats[i] = f
			}
		case domain.KindBool:
			switch from {
			case domain.KindInt64:
				out.Ints[i] = b2i(x.Ints[i] != 0)
			case domain.KindFloat64:
				out.Ints[i] = b2i(x.Floats[i] != 0)
			case domain.KindString:
				switch strings.ToLower(strings.TrimSpace(x.Strs[i])) {
				case "t", "true", "y", "yes", "1":
					out.Ints[i] = 1
				case "f", "false", "n", "no", "0":
				default:
					if err := fail(i, domain.CodeCastInvalidInput, x.Strs[i]); err != nil {
						return nil, err
					}
				}
			}
		case domain.KindDate:
			switch from {
			case domain.KindTimestamp:
				out.Ints[i] = floorDiv(localMicros(x.Ints[i], wallLoc), microsPerDay)
			case domain.KindString:
				d, ok := parseDate(x.Strs[i])
				if !ok {
					if err := fail(i, domain.CodeCastInvalidInput, x.Strs[i]); err != nil {
						return nil, err
					}
					continue
				}
				out.Ints[i] = d
			}
		case domain.KindTimestamp:
			switch from {
			case domain.KindInt64: // seconds since the epoch
				us, ok := mulMicros(x.Ints[i])
				if !ok {
					if err := fail(i, domain.CodeCastOverflow, toString(x, i)); err != nil {
						return nil, err
					}
					continue
				}
				out.Ints[i] = us
			case domain.KindFloat64: // seconds and their fraction, to the microsecond toward zero
				f := x.Floats[i] * 1e6
				if math.IsNaN(f) || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
					if err := fail(i, domain.CodeCastOverflow, fmtFloat(x.Floats[i])); err != nil {
						return nil, err
					}
					continue
				}
				out.Ints[i] = int64(f)
			case domain.KindTimestamp: // between TIMESTAMP and TIMESTAMP_NTZ
				switch {
				case fromNTZ && !n.ntz:
					out.Ints[i] = fromLocalMicros(x.Ints[i], loc)
				case !fromNTZ && n.ntz:
					out.Ints[i] = localMicros(x.Ints[i], loc)
				default:
					out.Ints[i] = x.Ints[i]
				}
			case domain.KindDate:
				out.Ints[i] = fromLocalMicros(x.Ints[i]*microsPerDay, wallLoc)
			case domain.KindString:
				us, ok := parseTimestampIn(x.Strs[i], wallLoc)
				if !ok {
					if err := fail(i, domain.CodeCastInvalidInput, x.Strs[i]); err != nil {
						return nil, err
					}
					continue
				}
				out.Ints[i] = us
			}
		}
	}
	if n.to == domain.KindFloat64 {
		roundFloats(n.typ(), out)
	}
	if n.bits > 0 && n.to == domain.KindInt64 {
		lo, hi := int64(-1)<<(n.bits-1), int64(1)<<(n.bits-1)-1
		for i, v := range out.Ints {
			if (v < lo || v > hi) && !isNullAt(out.Nulls, i) && !isNullAt(x.Nulls, i) {
				if err := fail(i, domain.CodeCastOverflow, toString(x, i)); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// toString renders row i of c as Spark's CAST(x AS STRING) does.
func toString(c *domain.Column, i int) string {
	switch c.Kind {
	case domain.KindString, domain.KindBytes:
		return c.Strs[i]
	case domain.KindInt64:
		return strconv.FormatInt(c.Ints[i], 10)
	case domain.KindFloat64:
		return fmtFloat(c.Floats[i])
	case domain.KindBool:
		return strconv.FormatBool(c.Ints[i] != 0)
	case domain.KindDate:
		return time.Unix(c.Ints[i]*86400, 0).UTC().Format("2006-01-02")
	case domain.KindTimestamp:
		return formatTimestamp(c.Ints[i], time.UTC)
	}
	if c.Kind.IsNested() {
		return nestedText(c.Value(i))
	}
	return c.Value(i).String()
}

// nestedText renders a value as Spark casts it to string: arrays [a, b],
// structs {a, b}, maps {k -> v}, NULL elements as null, and the scalars as
// their own casts do.
func nestedText(v domain.Value) string {
	switch v.Kind() {
	case domain.KindNull:
		return "null"
	case domain.KindList, domain.KindStruct, domain.KindMap:
		var b strings.Builder
		open, close := "[", "]"
		if v.Kind() != domain.KindList {
			open, close = "{", "}"
		}
		b.WriteString(open)
		for i, x := range v.AsList() {
			if i > 0 {
				b.WriteString(", ")
			}
			if v.Kind() == domain.KindMap {
				kv := x.Fields()
				b.WriteString(nestedText(kv[0]) + " -> " + nestedText(kv[1]))
				continue
			}
			b.WriteString(nestedText(x))
		}
		b.WriteString(close)
		return b.String()
	}
	c := domain.NewColumn(v.Kind(), 1)
	_ = c.Append(v)
	return toString(c, 0)
}

// parseDouble parses a string as Spark casts it to double: surrounding
// whitespace is ignored; Infinity, -Infinity and NaN are accepted; a trailing
// d/D/f/F suffix is allowed.
func parseDouble(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	case "nan":
		return math.NaN(), true
	}
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) {
		s = s[:n-1]
	}
	if s == "" || strings.ContainsAny(s, "xX_pPnNiI") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// beyond a double's range is an infinity (or zero), as Java reads
		// '10e400'; ParseFloat says so with ErrRange and that value
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// parseDate accepts Spark's date forms: yyyy, yyyy-[m]m, yyyy-[m]m-[d]d,
// optionally followed by a space or T and anything (a time).
func parseDate(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || parts[0] == "" {
		return 0, false
	}
	vals := [3]int{0, 1, 1}
	for i, p := range parts {
		if p == "" || len(p) > 7 || (i > 0 && len(p) > 2) || (i == 0 && len(p) < 4) {
			return 0, false
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return 0, false
			}
		}
		vals[i], _ = strconv.Atoi(p)
	}
	y, m, d := vals[0], vals[1], vals[2]
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // Feb 30 and the like
		return 0, false
	}
	return floorDiv(t.Unix(), 86400), true
}

// timestampLayouts: the first zonedLayouts carry an offset.
const zonedLayouts = 2

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02 15",
}

// parseTimestampIn accepts yyyy-mm-dd[ |T]hh:mm[:ss[.ffffff]][Z|±hh:mm] and
// the date forms (midnight). Without an offset the value is in loc, the
// session time zone.
func parseTimestampIn(s string, loc *time.Location) (int64, bool) {
	if us, zoned, ok := parseISOTimestamp(s); ok {
		if zoned {
			return us, true
		}
		return fromLocalMicros(us, loc), true
	}
	return parseTimestampByLayouts(s, loc)
}

// parseTimestampByLayouts is parseTimestampIn for every form it takes.
func parseTimestampByLayouts(s string, loc *time.Location) (int64, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 10 && s[10] == 'T' {
		s = s[:10] + " " + s[11:]
	}
	if !strings.Contains(s, ":") {
		if d, ok := parseDate(s); ok && !strings.ContainsAny(s, " ") {
			return fromLocalMicros(d*microsPerDay, loc), true
		}
	}
	s = strings.Replace(s, " UTC", "Z", 1)
	for i, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if i < zonedLayouts {
				return t.UnixMicro(), true
			}
			return fromLocalMicros(t.UnixMicro(), loc), true
		}
	}
	return 0, false
}

// parseISOTimestamp reads the common form yyyy-mm-ddThh:mm:ss[.f{1,9}]
// [Z|±hh:mm] (T or a space) without allocating: most timestamps in data
// are written so. It gives the microseconds (the wall clock's when there
// is no offset, said by zoned), and false for anything else, which
// parseTimestampIn then reads by its layouts.
func parseISOTimestamp(s string) (us int64, zoned, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return 0, false, false
	}
	num := func(i, n int) int64 {
		v := int64(0)
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int64(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, sec := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return 0, false, false
	}
	rest := s[19:]
	var frac int64
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return 0, false, false
		}
		digits := rest[1:n]
		for i := 0; i < 6; i++ { // microseconds: the first six digits
			frac *= 10
			if i < len(digits) {
				frac += int64(digits[i] - '0')
			}
		}
		rest = rest[n:]
	}
	us = ((daysFromCivil(y, mo, d)*24+h)*60+mi)*60*microsPerSecond + sec*microsPerSecond + frac
	switch {
	case rest == "":
		return us, false, true
	case rest == "Z":
		return us, true, true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, om := num(len(s)-5, 2), num(len(s)-2, 2)
		if oh < 0 || oh > 18 || om < 0 || om > 59 {
			return 0, false, false
		}
		off := (oh*60 + om) * 60 * microsPerSecond
		if rest[0] == '+' {
			off = -off
		}
		return us + off, true, true
	}
	return 0, false, false
}

// castNested compiles a cast to an array, map or struct type from a value
// of the same kind: element by element, struct fields by position (as
// Spark does), each element as its own cast would.
func (c *compiler) castNested(e *syntax.Cast, x node) (node, error) {
	to, err := DomainType(e.Type)
	if err != nil {
		return nil, err
	}
	if x.typ().Kind == domain.KindNull {
		return retype(x, to), nil
	}
	if !nestedCastable(x.typ(), to) {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "cannot cast %s to %s", x.typ(), to)
	}
	return &nestedCastNode{x: x, to: to, try: e.Try, pos: e.Pos, loc: c.sess.TimeZone}, nil
}

// nestedCastable reports whether CAST takes a value of type from to type to.
func nestedCastable(from, to domain.Type) bool {
	switch {
	case from.Kind == domain.KindNull, from.Equal(to):
		return true
	case from.Kind == domain.KindDecimal || to.Kind == domain.KindDecimal:
		return decimalCastable(from.Kind, to.Kind)
	case from.Kind == to.Kind && !to.Kind.IsNested():
		return true // another width (INT to TINYINT) or zone
	case from.Kind != to.Kind:
		return !to.Kind.IsNested() && castable(from.Kind, to.Kind)
	case to.Kind == domain.KindList:
		return nestedCastable(*from.Elem, *to.Elem)
	case to.Kind == domain.KindMap:
		return nestedCastable(*from.Key, *to.Key) && nestedCastable(*from.Elem, *to.Elem)
	case to.Kind == domain.KindStruct:
		if len(from.Fields) != len(to.Fields) {
			return false
		}
		for i := range to.Fields {
			if !nestedCastable(from.Fields[i].Type, to.Fields[i].Type) {
				return false
			}
		}
		return true
	}
	return false
}

// nestedCastNode casts arrays, maps and structs value by value.
type nestedCastNode struct {
	x   node
	to  domain.Type
	try bool
	pos syntax.Pos
	loc *time.Location
}

func (n *nestedCastNode) typ() domain.Type { return n.to }
func (n *nestedCastNode) mayFail() bool    { return !n.try || n.x.mayFail() }
func (n *nestedCastNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	out := newCol(n.to.Kind, b.Len())
	for i := range out.Values {
		v, err := n.value(x.Value(i), n.to)
		if err != nil {
			return nil, err
		}
		out.Values[i] = v
	}
	return out, nil
}

// value casts one value to t; with try, an element that does not cast
// makes the whole value NULL, as try_cast of the whole does.
func (n *nestedCastNode) value(v domain.Value, t domain.Type) (domain.Value, error) {
	if v.IsNull() {
		return v, nil
	}
	switch t.Kind {
	case domain.KindList, domain.KindMap, domain.KindStruct:
		items := v.AsList()
		out := make([]domain.Value, len(items))
		for i, item := range items {
			var it domain.Type
			switch t.Kind {
			case domain.KindList:
				it = *t.Elem
			case domain.KindMap:
				it = domain.StructOf(domain.Field{Name: "key", Type: *t.Key}, domain.Field{Name: "value", Type: *t.Elem, Nullable: true})
			default:
				it = t.Fields[i].Type
			}
			c, err := n.value(item, it)
			if err != nil || (n.try && c.IsNull() && !item.IsNull()) {
				return domain.Null(), err
			}
			out[i] = c
		}
		if t.Kind == domain.KindList {
			return domain.List(out...), nil
		}
		if t.Kind == domain.KindMap {
			return domain.Map(out...), nil
		}
		return domain.Struct(out...), nil
	}
	if v.Kind() == t.Kind && t.Kind != domain.KindDecimal && t.Bits == 0 {
		return v, nil
	}
	// a scalar element: the scalar cast (held to a narrow type's range), over
	// a one-row column
	from := domain.Type{Kind: v.Kind()}
	if v.Kind() == domain.KindDecimal {
		from = domain.DecimalType(v.Precision(), v.Scale())
	}
	c, err := castTo(&litNode{t: from, v: v}, t, n.try, n.pos, n.loc).eval(domain.NoColumns(1))
	if err != nil {
		return domain.Null(), err
	}
	return c.Value(0), nil
}

// mulMicros is seconds in microseconds, false when that overflows.
func mulMicros(sec int64) (int64, bool) {
	if sec > math.MaxInt64/microsPerSecond || sec < math.MinInt64/microsPerSecond {
		return 0, false
	}
	return sec * microsPerSecond, true
}

// castTo is CAST(n AS t) of a scalar: a decimal's cast when either side is a
// decimal, the scalar cast otherwise, to t's width and zone.
func castTo(n node, t domain.Type, try bool, pos syntax.Pos, loc *time.Location) node {
	switch {
	case n.typ().Equal(t):
		return n
	case n.typ().Kind == domain.KindDecimal || t.Kind == domain.KindDecimal:
		return &decCastNode{x: n, to: t, try: try, pos: pos}
	}
	return &castNode{x: n, to: t.Kind, try: try, pos: pos, loc: loc, bits: t.Bits, ntz: t.NTZ}
}
