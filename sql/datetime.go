package sql

import (
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

const (
	microsPerSecond = int64(1e6)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
)

func isInterval(k domain.Kind) bool {
	return k == domain.KindYearMonthInterval || k == domain.KindDayTimeInterval
}

func isDatetime(k domain.Kind) bool {
	return k == domain.KindDate || k == domain.KindTimestamp || isInterval(k)
}

var (
	typeYearMonth = domain.Type{Kind: domain.KindYearMonthInterval}
	typeDayTime   = domain.Type{Kind: domain.KindDayTimeInterval}
)

// localMicros is the wall-clock time in loc of the UTC instant us, as
// microseconds since the local epoch.
func localMicros(us int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return us
	}
	_, off := time.UnixMicro(us).In(loc).Zone()
	return us + int64(off)*microsPerSecond
}

// fromLocalMicros is the UTC instant of the wall-clock time wall in loc. In a
// gap of a daylight-saving change the time is moved forward by the gap, in an
// overlap the earlier instant is taken, as java.time does.
func fromLocalMicros(wall int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return wall
	}
	// the offset at the instant a wall time denotes is one of the offsets in
	// effect a day around it
	_, off1 := time.UnixMicro(wall - microsPerDay).In(loc).Zone()
	_, off2 := time.UnixMicro(wall + microsPerDay).In(loc).Zone()
	first, second := int64(max(off1, off2)), int64(min(off1, off2)) // the earlier instant first
	for _, off := range []int64{first, second} {
		us := wall - off*microsPerSecond
		if localMicros(us, loc) == wall {
			return us
		}
	}
	// a gap: the wall time does not exist; move it forward by the gap
	return wall - second*microsPerSecond
}

// formatTimestamp renders a timestamp as Spark casts it to string, in loc.
func formatTimestamp(us int64, loc *time.Location) string {
	return time.UnixMicro(us).In(loc).Format("2006-01-02 15:04:05.999999")
}

// civil is the proleptic Gregorian date of a day number (days since
// 1970-01-01), by Howard Hinnant's days_from_civil inverse.
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysFromCivil is the day number of a proleptic Gregorian date.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// addMonthsDays adds months to a day number; a day past the end of the
// target month becomes its last day (2024-01-31 + 1 month = 2024-02-29).
func addMonthsDays(days, months int64) int64 {
	y, m, d := civil(days)
	t := y*12 + m - 1 + months
	y, m = floorDiv(t, 12), t-floorDiv(t, 12)*12+1
	return daysFromCivil(y, m, min(d, daysInMonth(y, m)))
}

// addMonthsMicros adds months to a timestamp, on its wall-clock date in loc.
func addMonthsMicros(us, months int64, loc *time.Location) int64 {
	wall := localMicros(us, loc)
	days := floorDiv(wall, microsPerDay)
	return shiftWall(us, wall, addMonthsDays(days, months)*microsPerDay+wall-days*microsPerDay, loc)
}

// shiftWall is the instant of the wall-clock time to, reached from the
// instant us whose wall-clock time is from: in an overlap it keeps us's
// offset, as java.time's ZonedDateTime.plusDays and plusMonths do.
func shiftWall(us, from, to int64, loc *time.Location) int64 {
	if r := to - (from - us); localMicros(r, loc) == to {
		return r
	}
	return fromLocalMicros(to, loc)
}

// addDayTime adds a day-time interval to a timestamp as Spark's
// timestampAddDayTime does: the whole days on the wall-clock date in loc
// (so a day across a daylight-saving change keeps the time of day), the rest
// as a duration.
func addDayTime(us, iv int64, loc *time.Location) (int64, domain.Code) {
	days := iv / microsPerDay
	if days != 0 {
		wall := localMicros(us, loc)
		if dateFits(floorDiv(wall, microsPerDay)+days) != "" {
			return 0, domain.CodeArithmeticOverflow
		}
		us = shiftWall(us, wall, wall+days*microsPerDay, loc)
	}
	return checkedAdd(us, iv-days*microsPerDay)
}

// Timestamps and dates must stay within Spark's range, years -290308 to
// 294247: microseconds since the epoch in an int64.
const maxDays = 106751991

// dayOnly marks a day-time interval whose unit is DAY (INTERVAL 3 DAYS, the
// difference of two dates): Spark adds it to a date as days, giving a date,
// where a finer interval gives a timestamp.
type dayOnly struct{ node }

func isDayOnly(n node) bool { _, ok := n.(dayOnly); return ok }

// ---- interval literals ----

var unitNames = map[string]string{
	"YEAR": "YEAR", "YEARS": "YEAR", "MONTH": "MONTH", "MONTHS": "MONTH", "WEEK": "WEEK", "WEEKS": "WEEK",
	"DAY": "DAY", "DAYS": "DAY", "HOUR": "HOUR", "HOURS": "HOUR", "MINUTE": "MINUTE", "MINUTES": "MINUTE",
	"SECOND": "SECOND", "SECONDS": "SECOND", "MILLISECOND": "MILLISECOND", "MILLISECONDS": "MILLISECOND",
	"MICROSECOND": "MICROSECOND", "MICROSECONDS": "MICROSECOND",
}

// unitMicros is the length of the day-time units; year-month units are months.
var unitMicros = map[string]int64{
	"WEEK": 7 * microsPerDay, "DAY": microsPerDay, "HOUR": microsPerHour, "MINUTE": microsPerMinute,
	"SECOND": microsPerSecond, "MILLISECOND": 1000, "MICROSECOND": 1,
}

// ivAcc accumulates the parts of an interval literal.
type ivAcc struct {
	months, micros int64
	ym, dt, days   bool // seen year-month parts, day-time parts, only days so far
	overflow       bool
	fraction       bool // a value is finer than the smallest unit (months, microseconds)
}

func (a *ivAcc) add(unit string, value *big.Rat) {
	if unit == "YEAR" || unit == "MONTH" {
		a.ym = true
		if unit == "YEAR" {
			value = new(big.Rat).Mul(value, big.NewRat(12, 1))
		}
		a.months = a.sum(a.months, value)
		return
	}
	if !a.dt {
		a.days = true
	}
	a.dt = true
	if unit != "DAY" && unit != "WEEK" {
		a.days = false
	}
	a.micros = a.sum(a.micros, new(big.Rat).Mul(value, big.NewRat(unitMicros[unit], 1)))
}

func (a *ivAcc) sum(x int64, v *big.Rat) int64 {
	if !v.IsInt() {
		a.fraction = true
		return x
	}
	s := new(big.Int).Add(big.NewInt(x), v.Num())
	if !s.IsInt64() {
		a.overflow = true
		return x
	}
	return s.Int64()
}

func (c *compiler) interval(e *syntax.Interval) (node, error) {
	var acc ivAcc
	bad := func(format string, args ...any) error {
		return exprErr(domain.CodeInvalidIntervalFormat, e.Pos, format, args...)
	}
	for _, p := range e.Parts {
		unit, ok := unitNames[p.Unit]
		switch {
		case p.Unit == "" && p.Quoted:
			// INTERVAL '1 day 2 hours': the units are in the string
			if err := parseUnitString(&acc, p.Value); err != nil {
				return nil, bad("the interval '%s' is not valid: %v", p.Value, err)
			}
			continue
		case !ok:
			return nil, bad("%s is not an interval unit", p.Unit)
		}
		if p.ToUnit != "" {
			if err := parseRangeString(&acc, p.Value, p.Sign == "-", unit, unitNames[p.ToUnit]); err != nil {
				return nil, bad("the interval '%s' does not match %s TO %s: %v", p.Value, p.Unit, p.ToUnit, err)
			}
			continue
		}
		v, ok := ratNumber(strings.TrimSpace(p.Value))
		if !ok {
			return nil, bad("the interval value '%s' is not a number", p.Value)
		}
		if p.Sign == "-" {
			v.Neg(v)
		}
		acc.add(unit, v)
	}
	switch {
	case acc.ym && acc.dt:
		// Spark 4 refuses to mix the two families in one literal.
		return nil, bad("an interval cannot mix year-month with day-time units")
	case acc.fraction:
		return nil, bad("the interval %s is not a whole number of months or microseconds", syntax.Format(e))
	case acc.overflow:
		return nil, exprErr(domain.CodeArithmeticOverflow, e.Pos, "the interval %s is out of range", syntax.Format(e))
	case acc.ym:
		if acc.months != int64(int32(acc.months)) {
			return nil, exprErr(domain.CodeArithmeticOverflow, e.Pos, "the interval %s has more months than an int holds", syntax.Format(e))
		}
		return &litNode{t: typeYearMonth, v: domain.YearMonthInterval(acc.months)}, nil
	}
	var n node = &litNode{t: typeDayTime, v: domain.DayTimeInterval(acc.micros)}
	if acc.days {
		n = dayOnly{n}
	}
	return n, nil
}

// parseUnitString reads '1 day 2 hours' and the like.
func parseUnitString(acc *ivAcc, s string) error {
	f := strings.Fields(strings.ToUpper(s))
	if len(f) > 0 && f[0] == "INTERVAL" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return errText("expected pairs of a number and a unit")
	}
	for i := 0; i < len(f); i += 2 {
		v, ok := ratNumber(f[i])
		unit, uok := unitNames[f[i+1]]
		if !ok || !uok {
			return errText("'" + f[i] + " " + f[i+1] + "' is not a number and a unit")
		}
		acc.add(unit, v)
	}
	return nil
}

type errText string

func (e errText) Error() string { return string(e) }

// parseRangeString reads the value of INTERVAL '...' from TO to: '1-2' YEAR
// TO MONTH, '1 10:30' DAY TO MINUTE, '10:30:15.5' HOUR TO SECOND, ...
func parseRangeString(acc *ivAcc, s string, neg bool, from, to string) error {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		neg, s = !neg, s[1:]
	} else {
		s = strings.TrimPrefix(s, "+")
	}
	order := []string{"YEAR", "MONTH"}
	if from != "YEAR" {
		order = []string{"DAY", "HOUR", "MINUTE", "SECOND"}
	}
	i, j := indexOf(order, from), indexOf(order, to)
	if i < 0 || j <= i {
		return errText("not a valid range of units")
	}
	units := order[i : j+1]
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ' ' || r == ':' })
	if len(fields) != len(units) {
		return errText("expected " + strings.Join(units, ", "))
	}
	for k, f := range fields {
		v, ok := ratNumber(f)
		if !ok || v.Sign() < 0 || (units[k] != "SECOND" && !v.IsInt()) {
			return errText("'" + f + "' is not a valid " + strings.ToLower(units[k]))
		}
		if k > 0 && ((units[k] == "MONTH" && v.Cmp(big.NewRat(12, 1)) >= 0) || (units[k] == "HOUR" && v.Cmp(big.NewRat(24, 1)) >= 0) ||
			(units[k] != "MONTH" && units[k] != "HOUR" && v.Cmp(big.NewRat(60, 1)) >= 0)) {
			return errText("the " + strings.ToLower(units[k]) + " " + f + " is out of range")
		}
		if neg {
			v.Neg(v)
		}
		acc.add(units[k], v)
	}
	if from == "DAY" && to == "DAY" {
		return nil
	}
	acc.days = false
	return nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// ---- arithmetic on dates, timestamps and intervals ----

// intBinNode combines two int-backed columns (or an int-backed and a double
// one) row by row; f returns the result or the code of a row-level error.
type intBinNode struct {
	l, r node
	t    domain.Type
	op   string
	pos  syntax.Pos
	fi   func(a, b int64) (int64, domain.Code)
	ff   func(a int64, b float64) (int64, domain.Code)
	// try: a row that fails is NULL instead (try_add and the other try_
	// forms of the operators).
	try bool
}

func (n *intBinNode) typ() domain.Type { return n.t }
func (n *intBinNode) mayFail() bool    { return !n.try || n.l.mayFail() || n.r.mayFail() }

func (n *intBinNode) eval(b *domain.Batch) (*domain.Column, error) {
	l, err := n.l.eval(b)
	if err != nil {
		return nil, err
	}
	r, err := n.r.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := newCol(n.t.Kind, rows)
	out.Nulls = unionNulls(rows, l, r)
	if l.Kind == domain.KindNull || r.Kind == domain.KindNull {
		out.Nulls = allNulls(rows)
		return out, nil
	}
	for i := 0; i < rows; i++ {
		if isNullAt(out.Nulls, i) {
			continue
		}
		var code domain.Code
		if n.ff != nil {
			out.Ints[i], code = n.ff(l.Ints[i], r.Floats[i])
		} else {
			out.Ints[i], code = n.fi(l.Ints[i], r.Ints[i])
		}
		if code != "" && n.try {
			setNull(out, i)
		} else if code != "" {
			return nil, exprErr(code, n.pos, "%s %s %s: %s", l.Value(i), n.op, r.Value(i), codeWhy(code, n.t))
		}
	}
	return out, nil
}

func codeWhy(code domain.Code, t domain.Type) string {
	switch code {
	case domain.CodeIntervalDividedByZero:
		return "division by zero"
	case domain.CodeDatetimeOverflow:
		return "the result is beyond the range of " + t.String()
	}
	return "the result overflows " + t.String()
}

func addOverflows(a, b int64) bool { s := a + b; return (s > a) != (b > 0) }

func checkedAdd(a, b int64) (int64, domain.Code) {
	if addOverflows(a, b) {
		return 0, domain.CodeArithmeticOverflow
	}
	return a + b, ""
}

func checkedSub(a, b int64) (int64, domain.Code) {
	if b == math.MinInt64 {
		if a >= 0 {
			return 0, domain.CodeArithmeticOverflow
		}
		return a - b, ""
	}
	return checkedAdd(a, -b)
}

// months of a year-month interval are an int in Spark.
func monthsFit(m int64, code domain.Code) (int64, domain.Code) {
	if code == "" && m != int64(int32(m)) {
		return 0, domain.CodeArithmeticOverflow
	}
	return m, code
}

func dateFits(d int64) domain.Code {
	if d > maxDays || d < -maxDays-1 {
		return domain.CodeDatetimeOverflow
	}
	return ""
}

func (c *compiler) datetimeArith(e *syntax.Binary, l, r node) (node, error) {
	lk, rk := l.typ().Kind, r.typ().Kind
	// NULL takes the type that makes the operation valid
	if lk == domain.KindNull || rk == domain.KindNull {
		other := r
		if rk == domain.KindNull {
			other = l
		}
		t := other.typ()
		switch {
		case lk == domain.KindNull && e.Op == "-" && (t.Kind == domain.KindDate || t.Kind == domain.KindTimestamp):
			// NULL - a date is a date difference
		case t.Kind == domain.KindDate && (e.Op == "+" || e.Op == "-"):
			t = domain.TypeInt64
		case isInterval(t.Kind) && (e.Op == "*" || e.Op == "/"):
			t = domain.TypeFloat64
		case !isInterval(t.Kind):
			t = typeDayTime
		}
		if lk == domain.KindNull {
			l, lk = retype(l, t), t.Kind
		} else {
			r, rk = retype(r, t), t.Kind
		}
	}
	mk := func(l, r node, t domain.Type, fi func(a, b int64) (int64, domain.Code)) node {
		return &intBinNode{l: l, r: r, t: t, op: e.Op, pos: e.Pos, fi: fi}
	}
	loc := c.sess.TimeZone
	mismatch := func() (node, error) {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "%s cannot be applied to %s and %s", e.Op, l.typ(), r.typ())
	}
	switch e.Op {
	case "+", "-":
		sign := int64(1)
		if e.Op == "-" {
			sign = -1
		}
		// interval + datetime and int + date are commutative
		if e.Op == "+" && (isInterval(lk) && (rk == domain.KindDate || rk == domain.KindTimestamp) || lk == domain.KindInt64 && rk == domain.KindDate) {
			l, r, lk, rk = r, l, rk, lk
		}
		addSigned := func(a, b int64) (int64, domain.Code) {
			if sign < 0 {
				return checkedSub(a, b)
			}
			return checkedAdd(a, b)
		}
		switch {
		case lk == domain.KindDate && (rk == domain.KindInt64 || rk == domain.KindDayTimeInterval && isDayOnly(r)):
			per := int64(1)
			if rk == domain.KindDayTimeInterval {
				per = microsPerDay
			}
			return mk(l, r, domain.TypeDate, func(a, b int64) (int64, domain.Code) {
				d, code := addSigned(a, b/per)
				if code == "" {
					code = dateFits(d)
				}
				return d, code
			}), nil
		case lk == domain.KindDate && rk == domain.KindYearMonthInterval:
			return mk(l, r, domain.TypeDate, func(a, b int64) (int64, domain.Code) {
				d := addMonthsDays(a, sign*b)
				return d, dateFits(d)
			}), nil
		case lk == domain.KindDate && rk == domain.KindDayTimeInterval:
			// Spark 4: a date plus a finer interval is a timestamp
			return c.datetimeArith(e, c.implicit(l, domain.TypeTimestamp, e.L.Position()), r)
		case lk == domain.KindTimestamp && rk == domain.KindDayTimeInterval:
			if l.typ().NTZ {
				loc = time.UTC // a wall-clock time moves by the clock
			}
			return mk(l, r, l.typ(), func(a, b int64) (int64, domain.Code) {
				if sign < 0 {
					if b == math.MinInt64 {
						return 0, domain.CodeArithmeticOverflow
					}
					b = -b
				}
				return addDayTime(a, b, loc)
			}), nil
		case lk == domain.KindTimestamp && rk == domain.KindYearMonthInterval:
			if l.typ().NTZ {
				loc = time.UTC
			}
			return mk(l, r, l.typ(), func(a, b int64) (int64, domain.Code) {
				d := floorDiv(localMicros(a, loc), microsPerDay)
				if dateFits(addMonthsDays(d, sign*b)) != "" {
					return 0, domain.CodeDatetimeOverflow
				}
				return addMonthsMicros(a, sign*b, loc), ""
			}), nil
		case lk == rk && lk == domain.KindYearMonthInterval:
			return mk(l, r, typeYearMonth, func(a, b int64) (int64, domain.Code) { return monthsFit(addSigned(a, b)) }), nil
		case lk == rk && lk == domain.KindDayTimeInterval:
			n := mk(l, r, typeDayTime, addSigned)
			if isDayOnly(l) && isDayOnly(r) {
				return dayOnly{n}, nil
			}
			return n, nil
		case e.Op == "-" && lk == domain.KindDate && rk == domain.KindDate:
			// Spark 4 ANSI: the difference of dates is an INTERVAL DAY
			return dayOnly{mk(l, r, typeDayTime, func(a, b int64) (int64, domain.Code) { return (a - b) * microsPerDay, "" })}, nil
		case e.Op == "-" && (lk == domain.KindDate || lk == domain.KindTimestamp) && (rk == domain.KindDate || rk == domain.KindTimestamp):
			l, r = c.implicit(l, domain.TypeTimestamp, e.L.Position()), c.implicit(r, domain.TypeTimestamp, e.R.Position())
			return mk(l, r, typeDayTime, checkedSub), nil
		}
		return mismatch()
	case "*", "/":
		if e.Op == "*" && isNumeric(lk) && isInterval(rk) {
			l, r, lk, rk = r, l, rk, lk
		}
		if !isInterval(lk) || !isNumeric(rk) {
			return mismatch()
		}
		if rk == domain.KindDecimal {
			r, rk = implicit(r, domain.TypeFloat64, e.R.Position()), domain.KindFloat64
		}
		t := l.typ()
		n := &intBinNode{l: l, r: r, t: t, op: e.Op, pos: e.Pos}
		ym := lk == domain.KindYearMonthInterval
		fit := func(v int64, code domain.Code) (int64, domain.Code) {
			if ym {
				return monthsFit(v, code)
			}
			return v, code
		}
		if rk == domain.KindFloat64 {
			n.ff = func(a int64, b float64) (int64, domain.Code) {
				// Spark rounds HALF_UP (away from zero), as math.Round does
				f := math.Round(float64(a) * b)
				if e.Op == "/" {
					if b == 0 {
						return 0, domain.CodeIntervalDividedByZero
					}
					f = math.Round(float64(a) / b)
				}
				if math.IsNaN(f) || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
					return 0, domain.CodeArithmeticOverflow
				}
				return fit(int64(f), "")
			}
		} else if e.Op == "*" {
			n.fi = func(a, b int64) (int64, domain.Code) {
				if overflows("*", a, b) {
					return 0, domain.CodeArithmeticOverflow
				}
				return fit(a*b, "")
			}
		} else {
			n.fi = func(a, b int64) (int64, domain.Code) {
				if b == 0 {
					return 0, domain.CodeIntervalDividedByZero
				}
				if a == math.MinInt64 && b == -1 {
					return 0, domain.CodeArithmeticOverflow
				}
				return fit(divHalfUp(a, b), "")
			}
		}
		return n, nil
	}
	return mismatch()
}

// divHalfUp divides rounding half away from zero, as Guava's
// LongMath.divide(a, b, HALF_UP) that Spark uses for intervals.
func divHalfUp(a, b int64) int64 {
	q, r := a/b, a%b
	if r == 0 {
		return q
	}
	ar, ab := r, b
	if ar < 0 {
		ar = -ar
	}
	if ab < 0 {
		ab = -ab
	}
	if ar >= ab-ar {
		if (a < 0) != (b < 0) {
			return q - 1
		}
		return q + 1
	}
	return q
}

// ratNumber parses a plain decimal number, [+-]digits[.digits]: not the
// fractions and exponents big.Rat also reads.
func ratNumber(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 40 || strings.ContainsAny(s, "eE/_xXpP") {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

// castInterval casts to INTERVAL ... types: a string in Spark's interval
// form (INTERVAL '1-2' YEAR TO MONTH) or as the bare value for the target's
// units ('1-2'); an interval of the same family is kept as it is. The finer
// interval types (INTERVAL HOUR, INTERVAL DAY TO MINUTE) are all the day-time
// kind here: a cast to them does not truncate the finer fields as Spark's
// does, so it is refused unless it is a cast to DAY TO SECOND.
func (c *compiler) castInterval(e *syntax.Cast, x node) (node, error) {
	name := e.Type.Name
	from, to := "YEAR", "MONTH"
	t := typeYearMonth
	switch {
	case name == "INTERVAL YEAR TO MONTH", name == "INTERVAL YEAR", name == "INTERVAL MONTH":
		if name != "INTERVAL YEAR TO MONTH" {
			from, to = name[9:], name[9:]
		}
	case name == "INTERVAL DAY TO SECOND":
		from, to, t = "DAY", "SECOND", typeDayTime
	default:
		return nil, exprErr(domain.CodeNotImplemented, e.Type.Pos, "casts to %s are not supported; cast to INTERVAL YEAR TO MONTH or INTERVAL DAY TO SECOND", strings.ToLower(name))
	}
	switch k := x.typ().Kind; {
	case k == domain.KindNull:
		return retype(x, t), nil
	case k == t.Kind && (from != to || t.Kind == domain.KindDayTimeInterval):
		return x, nil
	case k != domain.KindString:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "cannot cast %s to %s", x.typ(), strings.ToLower(name))
	}
	return &fnNode{args: []node{x}, t: t, fails: !e.Try, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			v, ok := parseIntervalString(s, from, to)
			if !ok {
				if e.Try {
					if out.Nulls == nil {
						out.Nulls = make([]bool, len(a[0].Strs))
					}
					out.Nulls[i] = true
					continue
				}
				return exprErr(domain.CodeCastInvalidInput, e.Pos, "the value '%s' of type string cannot be cast to %s", s, strings.ToLower(name))
			}
			out.Ints[i] = v
		}
		return nil
	}}, nil
}

// parseIntervalString reads '1-2', or INTERVAL '1-2' YEAR TO MONTH, for the
// units from TO to.
func parseIntervalString(s, from, to string) (int64, bool) {
	s = strings.TrimSpace(s)
	up := strings.ToUpper(s)
	if strings.HasPrefix(up, "INTERVAL") {
		rest := strings.TrimSpace(s[len("INTERVAL"):])
		neg := false
		if strings.HasPrefix(rest, "-") {
			neg, rest = true, strings.TrimSpace(rest[1:])
		}
		end := strings.LastIndexByte(rest, '\'')
		if !strings.HasPrefix(rest, "'") || end <= 0 {
			return 0, false
		}
		units := strings.Fields(strings.ToUpper(rest[end+1:]))
		want := []string{from, "TO", to}
		if from == to {
			want = want[:1]
		}
		if strings.Join(units, " ") != strings.Join(want, " ") {
			return 0, false
		}
		s = rest[1:end]
		if neg {
			s = "-" + strings.TrimSpace(s)
		}
	}
	var acc ivAcc
	if from == to {
		v, ok := ratNumber(s)
		if !ok {
			return 0, false
		}
		acc.add(from, v)
	} else if parseRangeString(&acc, s, false, from, to) != nil {
		return 0, false
	}
	if acc.fraction || acc.overflow || acc.months != int64(int32(acc.months)) {
		return 0, false
	}
	return acc.months + acc.micros, true
}
