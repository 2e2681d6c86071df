package sql

import (
	"math"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"trunc":              {minArgs: 2, maxArgs: 2, compile: compileTrunc},
		"date_trunc":         {minArgs: 2, maxArgs: 2, compile: compileTrunc},
		"next_day":           {minArgs: 2, maxArgs: 2, compile: compileNextDay},
		"months_between":     {minArgs: 2, maxArgs: 3, compile: compileMonthsBetween},
		"dateadd":            {minArgs: 3, maxArgs: 3, compile: compileTimestampAdd},
		"timestampadd":       {minArgs: 3, maxArgs: 3, compile: compileTimestampAdd},
		"timestampdiff":      {minArgs: 3, maxArgs: 3, compile: compileTimestampDiff},
		"timediff":           {minArgs: 3, maxArgs: 3, compile: compileTimestampDiff},
		"make_timestamp":     {minArgs: 6, maxArgs: 7, compile: compileMakeTimestamp},
		"try_make_timestamp": {minArgs: 6, maxArgs: 7, compile: compileMakeTimestamp},
		"make_interval":      {minArgs: 0, maxArgs: 7, compile: compileMakeInterval},
		"try_make_interval":  {minArgs: 0, maxArgs: 7, compile: compileMakeInterval},
		"make_ym_interval":   {minArgs: 0, maxArgs: 2, compile: compileMakeInterval},
		"make_dt_interval":   {minArgs: 0, maxArgs: 4, compile: compileMakeInterval},
		"window":             {minArgs: 2, maxArgs: 4, compile: compileWindow},
	})
}

// literalText is the text of a string literal or of a bare word (the unit
// of timestampadd(HOUR, ...)), upper-cased.
func literalText(e syntax.Expr) (string, bool) {
	switch e := e.(type) {
	case *syntax.Literal:
		if e.Kind == syntax.StringLit {
			return strings.ToUpper(e.Value), true
		}
	case *syntax.ColumnRef:
		if len(e.Parts) == 1 {
			return strings.ToUpper(e.Parts[0].Name), true
		}
	}
	return "", false
}

// truncUnits maps trunc / date_trunc formats to units.
var truncUnits = map[string]string{
	"YEAR": "YEAR", "YYYY": "YEAR", "YY": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "MM": "MONTH", "MON": "MONTH",
	"WEEK": "WEEK", "DAY": "DAY", "DD": "DAY", "HOUR": "HOUR", "MINUTE": "MINUTE", "SECOND": "SECOND",
	"MILLISECOND": "MILLISECOND", "MICROSECOND": "MICROSECOND",
}

// truncDays truncates a day number to the start of its year, quarter, month
// or ISO week.
func truncDays(d int64, unit string) int64 {
	y, m, _ := civil(d)
	switch unit {
	case "YEAR":
		return daysFromCivil(y, 1, 1)
	case "QUARTER":
		return daysFromCivil(y, (m-1)/3*3+1, 1)
	case "MONTH":
		return daysFromCivil(y, m, 1)
	case "WEEK":
		return d - ((d+3)%7+7)%7
	}
	return d
}

// compileTrunc: trunc(date, fmt) truncates a date to a year, quarter, month
// or week; date_trunc(fmt, ts) a timestamp, in the session zone, down to the
// microsecond. An unknown format is NULL, as in Spark. The format must be a
// literal.
func compileTrunc(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	fi, xi := 1, 0
	if name == "date_trunc" {
		fi, xi = 0, 1
	}
	f, ok := literalText(e.Args[fi])
	if _, isCol := e.Args[fi].(*syntax.ColumnRef); !ok || isCol {
		return nil, exprErr(domain.CodeNotImplemented, e.Args[fi].Position(), "the format of %s must be a string literal", name)
	}
	unit, known := truncUnits[f]
	if name == "trunc" {
		x, err := c.dateArg(e, xi)
		if err != nil {
			return nil, err
		}
		switch unit {
		case "YEAR", "QUARTER", "MONTH", "WEEK":
			return mapInts(x, domain.TypeDate, func(d int64) int64 { return truncDays(d, unit) }), nil
		}
		return &litNode{t: domain.TypeDate}, nil
	}
	x, err := c.tsArg(e, xi)
	if err != nil {
		return nil, err
	}
	if !known {
		return &litNode{t: domain.TypeTimestamp}, nil
	}
	loc := c.sess.TimeZone
	if step, fine := map[string]int64{"MICROSECOND": 1, "MILLISECOND": 1000, "SECOND": microsPerSecond, "MINUTE": microsPerMinute, "HOUR": microsPerHour}[unit]; fine {
		return mapInts(x, domain.TypeTimestamp, func(us int64) int64 {
			wall := localMicros(us, loc)
			return fromLocalMicros(floorDiv(wall, step)*step, loc)
		}), nil
	}
	return mapInts(x, domain.TypeTimestamp, func(us int64) int64 {
		d := floorDiv(localMicros(us, loc), microsPerDay)
		return fromLocalMicros(truncDays(d, unit)*microsPerDay, loc)
	}), nil
}

var weekdays = map[string]int64{ // 0 = Monday
	"MO": 0, "MON": 0, "MONDAY": 0, "TU": 1, "TUE": 1, "TUESDAY": 1, "WE": 2, "WED": 2, "WEDNESDAY": 2,
	"TH": 3, "THU": 3, "THURSDAY": 3, "FR": 4, "FRI": 4, "FRIDAY": 4, "SA": 5, "SAT": 5, "SATURDAY": 5,
	"SU": 6, "SUN": 6, "SUNDAY": 6,
}

// compileNextDay: next_day(date, dow) is the first date after date that
// falls on dow; an unknown day is ILLEGAL_DAY_OF_WEEK (Spark ANSI).
func compileNextDay(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	d, err := c.dateArg(e, 0)
	if err != nil {
		return nil, err
	}
	dow, err := c.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	if dow, err = asString(dow, e.Args[1].Position(), "next_day"); err != nil {
		return nil, err
	}
	return &fnNode{args: []node{d, dow}, t: domain.TypeDate, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i := range out.Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			want, ok := weekdays[strings.ToUpper(strings.TrimSpace(a[1].Strs[i]))]
			if !ok {
				return exprErr(domain.CodeIllegalDayOfWeek, e.Args[1].Position(), "'%s' is not a day of the week", a[1].Strs[i])
			}
			day := a[0].Ints[i]
			have := ((day+3)%7 + 7) % 7
			step := (want - have + 7) % 7
			if step == 0 {
				step = 7
			}
			out.Ints[i] = day + step
		}
		return nil
	}}, nil
}

// compileMonthsBetween follows Spark's monthsBetween: whole months when the
// days of month match or both are month ends, else the difference in
// seconds over months of 31 days, rounded to 8 digits unless roundOff is
// false.
func compileMonthsBetween(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	a, err := c.tsArg(e, 0)
	if err != nil {
		return nil, err
	}
	b, err := c.tsArg(e, 1)
	if err != nil {
		return nil, err
	}
	args := []node{a, b}
	if len(e.Args) == 3 {
		r, err := c.compile(e.Args[2])
		if err != nil {
			return nil, err
		}
		if r, err = c.expectBool(r, e.Args[2].Position(), "months_between"); err != nil {
			return nil, err
		}
		args = append(args, r)
	}
	loc := c.sess.TimeZone
	return &fnNode{args: args, t: domain.TypeFloat64, body: func(out *domain.Column, in []*domain.Column) error {
		for i := range out.Floats {
			if isNullAt(out.Nulls, i) {
				continue
			}
			roundOff := len(in) < 3 || in[2].Ints[i] != 0
			out.Floats[i] = monthsBetween(in[0].Ints[i], in[1].Ints[i], roundOff, loc)
		}
		return nil
	}}, nil
}

func monthsBetween(us1, us2 int64, roundOff bool, loc *time.Location) float64 {
	w1, w2 := localMicros(us1, loc), localMicros(us2, loc)
	d1, d2 := floorDiv(w1, microsPerDay), floorDiv(w2, microsPerDay)
	y1, m1, dd1 := civil(d1)
	y2, m2, dd2 := civil(d2)
	months := (y1*12 + m1) - (y2*12 + m2)
	if dd1 == dd2 || (dd1 == daysInMonth(y1, m1) && dd2 == daysInMonth(y2, m2)) {
		return float64(months)
	}
	secs := (dd1-dd2)*86400 + (w1-d1*microsPerDay)/microsPerSecond - (w2-d2*microsPerDay)/microsPerSecond
	diff := float64(months) + float64(secs)/(31*86400)
	if roundOff {
		return roundHalfUp(diff, 8)
	}
	return diff
}

// addUnits are the units of timestampadd and timestampdiff.
var addUnits = map[string]string{
	"YEAR": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "WEEK": "WEEK", "DAY": "DAY", "DAYOFYEAR": "DAY",
	"HOUR": "HOUR", "MINUTE": "MINUTE", "SECOND": "SECOND", "MILLISECOND": "MILLISECOND", "MICROSECOND": "MICROSECOND",
}

var unitMonths = map[string]int64{"YEAR": 12, "QUARTER": 3, "MONTH": 1}

var unitLength = map[string]int64{"HOUR": microsPerHour, "MINUTE": microsPerMinute, "SECOND": microsPerSecond, "MILLISECOND": 1000, "MICROSECOND": 1}

func unitArg(e *syntax.FuncCall, name string) (string, error) {
	u, ok := literalText(e.Args[0])
	unit, known := addUnits[u]
	if !ok || !known {
		return "", exprErr(domain.CodeInvalidParameterValueUnit, e.Args[0].Position(), "%s does not know the unit %s; use YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND", name, syntax.Format(e.Args[0]))
	}
	return unit, nil
}

// compileTimestampAdd: timestampadd(unit, n, ts). Units of a day and more
// move the wall-clock date in the session zone; finer units are durations.
func compileTimestampAdd(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	unit, err := unitArg(e, name)
	if err != nil {
		return nil, err
	}
	n, err := c.intArg(e, 1, strings.ToLower(e.Name.Last().Name))
	if err != nil {
		return nil, err
	}
	ts, err := c.tsArg(e, 2)
	if err != nil {
		return nil, err
	}
	loc := c.sess.TimeZone
	length, fine := unitLength[unit]
	monthsPer, daysPer := unitMonths[unit], map[string]int64{"WEEK": 7, "DAY": 1}[unit]
	f := func(us, q int64) (int64, domain.Code) {
		if fine {
			if overflows("*", q, length) {
				return 0, domain.CodeArithmeticOverflow
			}
			return checkedAdd(us, q*length)
		}
		// more than the days of the timestamp range is an overflow, and
		// keeps the products below from overflowing
		if q > maxDays || q < -maxDays {
			return 0, domain.CodeArithmeticOverflow
		}
		wall := localMicros(us, loc)
		d := floorDiv(wall, microsPerDay)
		nd := addMonthsDays(d, q*monthsPer) + q*daysPer
		if dateFits(nd) != "" {
			return 0, domain.CodeArithmeticOverflow
		}
		return shiftWall(us, wall, nd*microsPerDay+wall-d*microsPerDay, loc), ""
	}
	return &intBinNode{l: ts, r: n, t: domain.TypeTimestamp, op: "+ " + strings.ToLower(unit) + "s", pos: e.Pos, fi: f}, nil
}

// compileTimestampDiff: timestampdiff(unit, start, end) counts whole units
// from start to end, as java.time's ChronoUnit.between on the wall-clock
// date-times in the session zone (finer units than a day on the instants).
func compileTimestampDiff(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	unit, err := unitArg(e, name)
	if err != nil {
		return nil, err
	}
	a, err := c.tsArg(e, 1)
	if err != nil {
		return nil, err
	}
	b, err := c.tsArg(e, 2)
	if err != nil {
		return nil, err
	}
	loc := c.sess.TimeZone
	f := func(start, end int64) (int64, domain.Code) {
		if l, fine := unitLength[unit]; fine {
			d, code := checkedSub(end, start)
			return d / l, code
		}
		w1, w2 := localMicros(start, loc), localMicros(end, loc)
		switch unit {
		case "DAY", "WEEK":
			d := (w2 - w1) / microsPerDay
			if unit == "WEEK" {
				d /= 7
			}
			return d, ""
		}
		d1, d2 := floorDiv(w1, microsPerDay), floorDiv(w2, microsPerDay)
		t1, t2 := w1-d1*microsPerDay, w2-d2*microsPerDay
		if d2 > d1 && t2 < t1 {
			d2--
		} else if d2 < d1 && t2 > t1 {
			d2++
		}
		y1, m1, dd1 := civil(d1)
		y2, m2, dd2 := civil(d2)
		// java.time's LocalDate.until in months
		months := ((y2*12+m2)*32 + dd2 - (y1*12+m1)*32 - dd1) / 32
		return months / unitMonths[unit], ""
	}
	return &intBinNode{l: a, r: b, t: domain.TypeInt64, op: "to", pos: e.Pos, fi: f}, nil
}

// compileMakeTimestamp: make_timestamp(year, month, day, hour, min, sec[,
// zone]); sec may have a fraction, and 60 (with no fraction) is the next
// minute.
func compileMakeTimestamp(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	try := strings.HasPrefix(name, "try_") // NULL where the fields make no timestamp
	args := make([]node, 6)
	for i := 0; i < 5; i++ {
		var err error
		if args[i], err = c.intArg(e, i, strings.ToLower(e.Name.Last().Name)); err != nil {
			return nil, err
		}
	}
	sec, err := c.compile(e.Args[5])
	if err != nil {
		return nil, err
	}
	if k := sec.typ().Kind; !isNumeric(k) && k != domain.KindNull && k != domain.KindString {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[5].Position(), "make_timestamp needs seconds as a number, found %s", sec.typ())
	}
	args[5] = implicit(sec, domain.TypeFloat64, e.Args[5].Position())
	loc := c.sess.TimeZone
	if len(e.Args) == 7 {
		z, ok := literalText(e.Args[6])
		if _, isCol := e.Args[6].(*syntax.ColumnRef); !ok || isCol {
			return nil, exprErr(domain.CodeNotImplemented, e.Args[6].Position(), "the time zone of make_timestamp must be a string literal")
		}
		lit := e.Args[6].(*syntax.Literal)
		if loc, err = parseZone(lit.Value); err != nil {
			return nil, exprErr(domain.CodeInvalidTimeZone, lit.Pos, "'%s' is not a time zone", z)
		}
	}
	return &fnNode{args: args, t: domain.TypeTimestamp, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i := range out.Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			y, mo, d, h, mi := a[0].Ints[i], a[1].Ints[i], a[2].Ints[i], a[3].Ints[i], a[4].Ints[i]
			s := a[5].Floats[i]
			us := int64(math.Round(s * 1e6))
			bad := y < -290000 || y > 290000 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) ||
				h < 0 || h > 23 || mi < 0 || mi > 59 || math.IsNaN(s) || s < 0 || s >= 61
			if try && (bad || s >= 60 && us != 60*microsPerSecond) {
				setNull(out, i)
				continue
			}
			if !bad && s >= 60 && us != 60*microsPerSecond {
				// 60 seconds is the next minute; 60 and a fraction is nothing
				return exprErr(domain.CodeInvalidFractionOfSecond, e.Pos, "make_timestamp(%d, %d, %d, %d, %d, %s): seconds of 60 take no fraction", y, mo, d, h, mi, fmtFloat(s))
			}
			if bad {
				return exprErr(domain.CodeDatetimeFieldOutOfRange, e.Pos, "make_timestamp(%d, %d, %d, %d, %d, %s) is not a valid timestamp", y, mo, d, h, mi, fmtFloat(s))
			}
			wall := daysFromCivil(y, mo, d)*microsPerDay + h*microsPerHour + mi*microsPerMinute
			out.Ints[i] = fromLocalMicros(wall, loc) + us
		}
		return nil
	}}, nil
}

// compileMakeInterval builds intervals from numbers: make_ym_interval(years,
// months), make_dt_interval(days, hours, mins, secs), and make_interval(years,
// months, weeks, days, hours, mins, secs), which Spark types as a calendar
// interval mixing both: here it is a year-month interval when only years
// and months are given, a day-time one when those are literal zeros, and
// NOT_IMPLEMENTED otherwise.
func compileMakeInterval(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	try := strings.HasPrefix(name, "try_") // NULL where the interval overflows
	name = strings.TrimPrefix(name, "try_")
	units := []string{"YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND"}
	switch name {
	case "make_ym_interval":
		units = units[:2]
	case "make_dt_interval":
		units = units[3:]
	}
	ym := name == "make_ym_interval" || (name == "make_interval" && len(e.Args) <= 2)
	if name == "make_interval" && !ym {
		for _, a := range e.Args[:2] {
			if l, ok := a.(*syntax.Literal); !ok || l.Kind != syntax.NumberLit || strings.Trim(l.Text, "0.") != "" {
				return nil, exprErr(domain.CodeNotImplemented, e.Pos, "make_interval mixing years or months with days or times is not supported; use make_ym_interval or make_dt_interval")
			}
		}
		units, e = units[2:], &syntax.FuncCall{Pos: e.Pos, Name: e.Name, Args: e.Args[2:]}
	}
	args := make([]node, len(e.Args))
	for i := range e.Args {
		x, err := c.compile(e.Args[i])
		if err != nil {
			return nil, err
		}
		k := x.typ().Kind
		switch {
		case units[i] == "SECOND" && (isNumeric(k) || k == domain.KindNull):
			args[i] = implicit(x, domain.TypeFloat64, e.Args[i].Position())
		case k == domain.KindInt64 || k == domain.KindNull:
			args[i] = implicit(x, domain.TypeInt64, e.Args[i].Position())
		default:
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs integers, found %s", name, x.typ())
		}
	}
	t := typeDayTime
	if ym {
		t = typeYearMonth
	}
	perUnit := map[string]int64{"YEAR": 12, "MONTH": 1}
	for u, l := range unitMicros {
		perUnit[u] = l
	}
	if len(args) == 0 {
		zero := domain.DayTimeInterval(0)
		if ym {
			zero = domain.YearMonthInterval(0)
		}
		return &litNode{t: t, v: zero}, nil
	}
	return &fnNode{args: args, t: t, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i := range out.Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			var sum int64
			var code domain.Code
			for j, col := range a {
				var part int64
				if col.Kind == domain.KindFloat64 { // seconds, to the microsecond
					f := math.Round(col.Floats[i] * 1e6)
					if math.IsNaN(f) || math.Abs(f) >= 9.2e18 {
						code = domain.CodeArithmeticOverflow
						break
					}
					part = int64(f)
				} else if per := perUnit[units[j]]; overflows("*", col.Ints[i], per) {
					code = domain.CodeArithmeticOverflow
					break
				} else {
					part = col.Ints[i] * per
				}
				if sum, code = checkedAdd(sum, part); code != "" {
					break
				}
			}
			if ym {
				sum, code = monthsFit(sum, code)
			}
			switch {
			case code != "" && try:
				setNull(out, i)
				continue
			case code != "":
				return exprErr(code, e.Pos, "%s: the interval is out of range", name)
			}
			out.Ints[i] = sum
		}
		return nil
	}}, nil
}

// compileWindow: window(ts, duration[, slide[, start]]) is the tumbling
// window holding ts, struct<start, end>. A sliding window (slide shorter
// than the duration) gives each row several windows: it needs a generator
// that expressions do not have.
func compileWindow(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	ts, dur, slide, start, err := windowSpec(c, e)
	if err != nil {
		return nil, err
	}
	if slide != dur {
		return nil, exprErr(domain.CodeNotImplemented, e.Args[2].Position(), "a sliding window (slide %s, duration %s) puts a row in several windows: use it as a GROUP BY key",
			domain.FormatDayTime(slide), domain.FormatDayTime(dur))
	}
	return &fnNode{args: []node{ts}, t: windowType(ts.typ()), body: func(out *domain.Column, a []*domain.Column) error {
		for i, us := range a[0].Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			// Spark: timestamp - (timestamp - start + duration) % duration
			ws := us - ((us-start)%dur+dur)%dur
			out.Values[i] = domain.Struct(domain.TimestampMicros(ws), domain.TimestampMicros(ws+dur))
		}
		return nil
	}}, nil
}

// windowType is the struct window() gives for a time of type t.
func windowType(t domain.Type) domain.Type {
	wt := domain.TypeTimestamp
	if t.NTZ {
		wt = domain.TypeTimestampNTZ
	}
	return domain.StructOf(domain.Field{Name: "start", Type: wt, Nullable: true}, domain.Field{Name: "end", Type: wt, Nullable: true})
}

// windowSpec compiles window(ts, duration[, slide[, start]]): the time and
// the durations in microseconds (the slide is the duration by default).
func windowSpec(c *compiler, e *syntax.FuncCall) (ts node, dur, slide, start int64, err error) {
	if ts, err = c.tsArg(e, 0); err != nil {
		return nil, 0, 0, 0, err
	}
	durs := make([]int64, 3)
	for i := 1; i < len(e.Args); i++ {
		s, ok := e.Args[i].(*syntax.Literal)
		if !ok || s.Kind != syntax.StringLit {
			return nil, 0, 0, 0, exprErr(domain.CodeNotImplemented, e.Args[i].Position(), "the durations of window must be string literals like '5 minutes'")
		}
		var acc ivAcc
		if err := parseUnitString(&acc, s.Value); err != nil || acc.ym || acc.fraction || acc.overflow {
			return nil, 0, 0, 0, exprErr(domain.CodeInvalidIntervalFormat, s.Pos, "'%s' is not a duration of days or less, like '5 minutes'", s.Value)
		}
		durs[i-1] = acc.micros
	}
	dur, slide, start = durs[0], durs[1], durs[2]
	if len(e.Args) < 3 {
		slide = dur
	}
	switch {
	case dur <= 0:
		return nil, 0, 0, 0, exprErr(domain.CodeInvalidIntervalFormat, e.Args[1].Position(), "the window duration must be positive")
	case slide <= 0 || slide > dur:
		return nil, 0, 0, 0, exprErr(domain.CodeInvalidIntervalFormat, e.Args[2].Position(), "the slide of a window must be positive and at most its duration")
	case start <= -slide || start >= slide:
		return nil, 0, 0, 0, exprErr(domain.CodeInvalidIntervalFormat, e.Args[3].Position(), "the start of a window must be less than its slide, either way")
	}
	return ts, dur, slide, start, nil
}
