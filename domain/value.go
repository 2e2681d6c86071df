package domain

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is the kind of a value or a column type.
type Kind uint8

// The kinds. Their numbers are part of the batch codec: never renumber.
const (
	KindNull              Kind = 0
	KindBool              Kind = 1
	KindInt64             Kind = 2
	KindFloat64           Kind = 3
	KindString            Kind = 4
	KindBytes             Kind = 5
	KindTimestamp         Kind = 6 // microseconds since the Unix epoch, UTC
	KindDate              Kind = 7 // days since the Unix epoch
	KindList              Kind = 8
	KindStruct            Kind = 9
	KindMap               Kind = 10 // entries in insertion order, each a Struct(key, value)
	KindYearMonthInterval Kind = 11 // a number of months
	KindDayTimeInterval   Kind = 12 // a number of microseconds
	KindDecimal           Kind = 13 // an exact 128-bit unscaled integer with a precision and a scale
)

var kindNames = [...]string{"null", "boolean", "bigint", "double", "string", "binary", "timestamp", "date", "array", "struct",
	"map", "interval year to month", "interval day to second", "decimal"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one value of any kind. The zero Value is NULL. Scalars live in i
// (bool, int64, timestamp, date, and float64 as its bits) or s (string, bytes);
// lists, structs and maps in l. A decimal keeps the low 64 bits of its
// unscaled value in i and, only when the value does not fit in an int64, the
// high 64 bits in s, with its precision and scale beside the kind (where they
// cost no room). Values are immutable once built.
type Value struct {
	kind        Kind
	prec, scale uint8
	i           int64
	s           string
	l           []Value
}

// Constructors.
func Null() Value { return Value{} }
func Bool(b bool) Value {
	v := Value{kind: KindBool}
	if b {
		v.i = 1
	}
	return v
}
func Int(i int64) Value              { return Value{kind: KindInt64, i: i} }
func Float(f float64) Value          { return Value{kind: KindFloat64, i: int64(math.Float64bits(f))} }
func String(s string) Value          { return Value{kind: KindString, s: s} }
func Bytes(b []byte) Value           { return Value{kind: KindBytes, s: string(b)} }
func TimestampMicros(us int64) Value { return Value{kind: KindTimestamp, i: us} }
func DateDays(d int64) Value         { return Value{kind: KindDate, i: d} }
func List(items ...Value) Value      { return Value{kind: KindList, l: items} }

// YearMonthInterval is an INTERVAL YEAR TO MONTH of the given months.
func YearMonthInterval(months int64) Value { return Value{kind: KindYearMonthInterval, i: months} }

// DayTimeInterval is an INTERVAL DAY TO SECOND of the given microseconds.
func DayTimeInterval(us int64) Value { return Value{kind: KindDayTimeInterval, i: us} }

// Struct builds a struct value; fields are positional, named by the type.
func Struct(fields ...Value) Value { return Value{kind: KindStruct, l: fields} }

// Map builds a map value from its entries, each a MapEntry, in insertion
// order. Keys are not checked for duplicates: the functions that build maps
// decide what a duplicate key means.
func Map(entries ...Value) Value { return Value{kind: KindMap, l: entries} }

// MapEntry is one entry of a map: a struct of the key and the value.
func MapEntry(key, value Value) Value { return Struct(key, value) }

// Timestamp converts t to a timestamp value (microsecond precision, UTC).
func Timestamp(t time.Time) Value { return TimestampMicros(t.UnixMicro()) }

// Date converts the calendar date of t (in t's location) to a date value.
func Date(t time.Time) Value {
	y, m, d := t.Date()
	return DateDays(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

func (v Value) Kind() Kind        { return v.kind }
func (v Value) IsNull() bool      { return v.kind == KindNull }
func (v Value) AsBool() bool      { return v.i != 0 }
func (v Value) AsInt() int64      { return v.i }
func (v Value) AsFloat() float64  { return math.Float64frombits(uint64(v.i)) }
func (v Value) AsString() string  { return v.s }
func (v Value) AsBytes() []byte   { return []byte(v.s) }
func (v Value) AsList() []Value   { return v.l }
func (v Value) AsTime() time.Time { return time.UnixMicro(v.i).UTC() }
func (v Value) Fields() []Value   { return v.l }

// Entries returns a map's entries, each a struct of the key and the value.
func (v Value) Entries() []Value { return v.l }

// OwnStrings copies the text of vals, at every depth, into one allocation
// of their own, in place. A decoder's values share the bytes it read:
// owning their text lets those bytes go (or be unmapped) while the values
// live on.
func OwnStrings(vals []Value) {
	var all strings.Builder
	var write func([]Value)
	write = func(vs []Value) {
		for i := range vs {
			all.WriteString(vs[i].s)
			write(vs[i].l)
		}
	}
	write(vals)
	if all.Len() == 0 {
		return
	}
	owned, at := all.String(), 0
	// The same walk again, handing out the copies: a list shared by two
	// values is met twice, its text copied twice, in the same order.
	var take func([]Value)
	take = func(vs []Value) {
		for i := range vs {
			n := len(vs[i].s)
			vs[i].s, at = owned[at:at+n], at+n
			take(vs[i].l)
		}
	}
	take(vals)
}

// IsNested reports whether values of kind k live in a Column's Values
// (arrays, structs, maps), where a NULL may be a NULL Value without a mark.
func (k Kind) IsNested() bool { return k == KindList || k == KindStruct || k == KindMap }

// InValues reports whether a Column of kind k keeps its rows in Values: the
// nested kinds, NULL, and decimals (whose 128 bits and scale travel in each
// Value). A NULL there may be a NULL Value without a mark.
func (k Kind) InValues() bool { return k.IsNested() || k == KindNull || k == KindDecimal }

// Equal reports whether two values are the same, NULL equal to NULL and NaN to
// NaN (bitwise): this is identity, not SQL equality.
func (v Value) Equal(o Value) bool {
	if v.kind != o.kind || v.i != o.i || v.s != o.s || len(v.l) != len(o.l) || v.scale != o.scale || v.prec != o.prec {
		return false
	}
	for i := range v.l {
		if !v.l[i].Equal(o.l[i]) {
			return false
		}
	}
	return true
}

// String renders the value for people (logs, the table format).
func (v Value) String() string {
	switch v.kind {
	case KindNull:
		return "NULL"
	case KindBool:
		return strconv.FormatBool(v.AsBool())
	case KindInt64:
		return strconv.FormatInt(v.i, 10)
	case KindFloat64:
		return strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
	case KindDecimal:
		return FormatDecimal(v.AsDecimal(), int(v.scale))
	case KindString:
		return v.s
	case KindBytes:
		return fmt.Sprintf("X'%X'", v.s)
	case KindTimestamp:
		return v.AsTime().Format("2006-01-02T15:04:05.999999Z")
	case KindDate:
		return time.Unix(v.i*86400, 0).UTC().Format("2006-01-02")
	case KindYearMonthInterval:
		return "INTERVAL '" + FormatYearMonth(v.i) + "' YEAR TO MONTH"
	case KindDayTimeInterval:
		return "INTERVAL '" + FormatDayTime(v.i) + "' DAY TO SECOND"
	case KindList, KindStruct:
		var b strings.Builder
		open, close := "[", "]"
		if v.kind == KindStruct {
			open, close = "{", "}"
		}
		b.WriteString(open)
		for i, x := range v.l {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(x.String())
		}
		b.WriteString(close)
		return b.String()
	case KindMap:
		// as Spark shows maps: {a -> 1, b -> 2}
		var b strings.Builder
		b.WriteByte('{')
		for i, e := range v.l {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.l[0].String())
			b.WriteString(" -> ")
			b.WriteString(e.l[1].String())
		}
		b.WriteByte('}')
		return b.String()
	}
	return "?"
}

// Compare orders two values of the same kind (NULL first). It is a total order
// for sorting and tests, not SQL comparison: it returns 0 exactly when Equal
// is true. Floats are ordered by value, -0 before 0, and NaN after every
// number (as Spark sorts them), NaNs among themselves by their bits.
func Compare(a, b Value) int {
	if a.kind != b.kind {
		return int(a.kind) - int(b.kind)
	}
	switch a.kind {
	case KindFloat64:
		x, y := a.AsFloat(), b.AsFloat()
		xNaN, yNaN := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xNaN != yNaN:
			if xNaN {
				return 1
			}
			return -1
		case x < y:
			return -1
		case x > y:
			return 1
		case a.i == b.i:
			return 0
		case xNaN: // two NaNs with different bits
			if uint64(a.i) < uint64(b.i) {
				return -1
			}
			return 1
		case math.Signbit(x): // -0 and 0
			return -1
		}
		return 1
	case KindDecimal:
		if c := CompareDecimal(a.AsDecimal(), int(a.scale), b.AsDecimal(), int(b.scale)); c != 0 {
			return c
		}
		// equal values of different scales (1.0 and 1.00) are not Equal
		if c := int(a.scale) - int(b.scale); c != 0 {
			return c
		}
		return int(a.prec) - int(b.prec)
	case KindString, KindBytes:
		return strings.Compare(a.s, b.s)
	case KindList, KindStruct, KindMap:
		for i := 0; i < len(a.l) && i < len(b.l); i++ {
			if c := Compare(a.l[i], b.l[i]); c != 0 {
				return c
			}
		}
		return len(a.l) - len(b.l)
	}
	switch {
	case a.i < b.i:
		return -1
	case a.i > b.i:
		return 1
	}
	return 0
}

// FormatYearMonth renders months as Spark writes a year-month interval's
// value: [-]y-m.
func FormatYearMonth(months int64) string {
	sign, m := "", uint64(months)
	if months < 0 {
		sign, m = "-", uint64(-months) // -MinInt64 wraps to its magnitude
	}
	return sign + strconv.FormatUint(m/12, 10) + "-" + strconv.FormatUint(m%12, 10)
}

// FormatDayTime renders microseconds as Spark writes a day-time interval's
// value: [-]d hh:mm:ss[.ffffff], the fraction without trailing zeros.
func FormatDayTime(us int64) string {
	sign, u := "", uint64(us)
	if us < 0 {
		sign, u = "-", uint64(-us)
	}
	frac := u % 1e6
	secs := u / 1e6
	s := fmt.Sprintf("%s%d %02d:%02d:%02d", sign, secs/86400, secs/3600%24, secs/60%60, secs%60)
	if frac != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
	}
	return s
}
