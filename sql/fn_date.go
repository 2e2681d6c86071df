package sql

import (
	"math"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	fields := map[string]builtin{}
	for name := range dateFields {
		fields[name] = builtin{minArgs: 1, maxArgs: 1, compile: compileField}
	}
	register(fields)
	register(map[string]builtin{
		"current_date":        {minArgs: 0, maxArgs: 0, compile: compileNow},
		"curdate":             {minArgs: 0, maxArgs: 0, compile: compileNow},
		"current_timestamp":   {minArgs: 0, maxArgs: 0, compile: compileNow},
		"now":                 {minArgs: 0, maxArgs: 0, compile: compileNow},
		"localtimestamp":      {minArgs: 0, maxArgs: 0, compile: compileNow},
		"to_date":             {minArgs: 1, maxArgs: 2, compile: compileToDatetime},
		"to_timestamp":        {minArgs: 1, maxArgs: 2, compile: compileToDatetime},
		"try_to_timestamp":    {minArgs: 1, maxArgs: 2, compile: compileToDatetime},
		"try_to_date":         {minArgs: 1, maxArgs: 2, compile: compileToDatetime},
		"date_format":         {minArgs: 2, maxArgs: 2, compile: compileDateFormat},
		"date_add":            {minArgs: 2, maxArgs: 2, compile: compileDateAdd},
		"date_sub":            {minArgs: 2, maxArgs: 2, compile: compileDateAdd},
		"add_months":          {minArgs: 2, maxArgs: 2, compile: compileAddMonths},
		"datediff":            {minArgs: 2, maxArgs: 3, compile: compileDatediff},
		"date_diff":           {minArgs: 2, maxArgs: 2, compile: compileDatediff},
		"last_day":            {minArgs: 1, maxArgs: 1, compile: compileLastDay},
		"unix_date":           {minArgs: 1, maxArgs: 1, compile: compileUnixDate},
		"date_from_unix_date": {minArgs: 1, maxArgs: 1, compile: compileUnixDate},
		"unix_seconds":        {minArgs: 1, maxArgs: 1, compile: compileUnixTime},
		"unix_millis":         {minArgs: 1, maxArgs: 1, compile: compileUnixTime},
		"unix_micros":         {minArgs: 1, maxArgs: 1, compile: compileUnixTime},
		"timestamp_seconds":   {minArgs: 1, maxArgs: 1, compile: compileFromUnit},
		"timestamp_millis":    {minArgs: 1, maxArgs: 1, compile: compileFromUnit},
		"timestamp_micros":    {minArgs: 1, maxArgs: 1, compile: compileFromUnit},
		"make_date":           {minArgs: 3, maxArgs: 3, compile: compileMakeDate},
		"date_part":           {minArgs: 2, maxArgs: 2, compile: compileDatePart},
		"datepart":            {minArgs: 2, maxArgs: 2, compile: compileDatePart},
		"unix_timestamp":      {minArgs: 0, maxArgs: 2, compile: compileUnixTimestamp},
		"to_unix_timestamp":   {minArgs: 1, maxArgs: 2, compile: compileUnixTimestamp},
		"from_unixtime":       {minArgs: 1, maxArgs: 2, compile: compileFromUnixtime},
		"from_utc_timestamp":  {minArgs: 2, maxArgs: 2, compile: compileUTCShift},
		"to_utc_timestamp":    {minArgs: 2, maxArgs: 2, compile: compileUTCShift},
	})
}

// dateArg compiles argument i and brings it to a date (a timestamp's date in
// the session zone; a string with ANSI cast rules).
func (c *compiler) dateArg(e *syntax.FuncCall, i int) (node, error) {
	return c.convArg(e, i, domain.TypeDate)
}

func (c *compiler) tsArg(e *syntax.FuncCall, i int) (node, error) {
	return c.convArg(e, i, domain.TypeTimestamp)
}

func (c *compiler) convArg(e *syntax.FuncCall, i int, t domain.Type) (node, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	switch x.typ().Kind {
	case t.Kind:
		if x.typ().NTZ == t.NTZ {
			return x, nil
		}
		// a TIMESTAMP_NTZ is read as its wall-clock time in the session's
		// zone, so that its fields are its own
		return c.implicit(x, t, e.Args[i].Position()), nil
	case domain.KindNull, domain.KindString, domain.KindDate, domain.KindTimestamp:
		return c.implicit(x, t, e.Args[i].Position()), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs a %s, found %s", strings.ToLower(e.Name.Last().Name), t, x.typ())
}

// mapInts is a one-argument function over an int-backed column; f never fails.
func mapInts(x node, t domain.Type, f func(int64) int64) node {
	return &fnNode{args: []node{x}, t: t, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Ints {
			if !isNullAt(out.Nulls, i) {
				out.Ints[i] = f(v)
			}
		}
		return nil
	}}
}

// dateFields are the functions that read one field of a date (or of a
// timestamp's wall-clock time in the session zone).
var dateFields = map[string]bool{
	"year": true, "quarter": true, "month": true, "day": true, "dayofmonth": true, "dayofweek": true,
	"dayofyear": true, "weekday": true, "weekofyear": true, "hour": true, "minute": true, "second": true,
}

func compileField(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	var x node
	var err error
	switch name {
	case "hour", "minute", "second":
		x, err = c.tsArg(e, 0)
	default:
		x, err = c.dateArg(e, 0)
	}
	if err != nil {
		return nil, err
	}
	return c.fieldOf(x, name, e.Pos)
}

// fieldOf extracts a named field (Spark's EXTRACT names) of a date, timestamp
// or interval.
func (c *compiler) fieldOf(x node, name string, p syntax.Pos) (node, error) {
	k := x.typ().Kind
	if isInterval(k) {
		return intervalField(x, name, p)
	}
	loc := c.sess.TimeZone
	if k == domain.KindTimestamp {
		switch name {
		case "hour", "minute", "second":
			unit, period := microsPerSecond, int64(60)
			switch name {
			case "hour":
				unit, period = microsPerHour, 24
			case "minute":
				unit = microsPerMinute
			}
			return mapInts(x, domain.TypeInt64, func(us int64) int64 {
				wall := localMicros(us, loc)
				return (wall - floorDiv(wall, microsPerDay)*microsPerDay) / unit % period
			}), nil
		case "second_frac":
			return &fnNode{args: []node{x}, t: domain.TypeFloat64, body: func(out *domain.Column, a []*domain.Column) error {
				for i, us := range a[0].Ints {
					if !isNullAt(out.Nulls, i) {
						wall := localMicros(us, loc)
						out.Floats[i] = float64(wall-floorDiv(wall, microsPerMinute)*microsPerMinute) / 1e6
					}
				}
				return nil
			}}, nil
		}
		x = c.implicit(x, domain.TypeDate, p)
	} else if name == "hour" || name == "minute" || name == "second" || name == "second_frac" {
		x = c.implicit(x, domain.TypeTimestamp, p)
		return c.fieldOf(x, name, p)
	}
	var f func(days int64) int64
	switch name {
	case "year":
		f = func(d int64) int64 { y, _, _ := civil(d); return y }
	case "quarter":
		f = func(d int64) int64 { _, m, _ := civil(d); return (m + 2) / 3 }
	case "month":
		f = func(d int64) int64 { _, m, _ := civil(d); return m }
	case "day", "dayofmonth":
		f = func(d int64) int64 { _, _, dd := civil(d); return dd }
	case "dayofweek": // 1 = Sunday
		f = func(d int64) int64 { return ((d+4)%7+7)%7 + 1 }
	case "weekday", "dayofweek_iso": // 0 = Monday; ISO: 1 = Monday
		off := int64(0)
		if name == "dayofweek_iso" {
			off = 1
		}
		f = func(d int64) int64 { return ((d+3)%7+7)%7 + off }
	case "dayofyear":
		f = func(d int64) int64 { y, _, _ := civil(d); return d - daysFromCivil(y, 1, 1) + 1 }
	case "weekofyear":
		f = func(d int64) int64 { _, w := isoWeek(d); return w }
	case "yearofweek":
		f = func(d int64) int64 { y, _ := isoWeek(d); return y }
	default:
		return nil, exprErr(domain.CodeInvalidExtractField, p, "%s is not a field of a %s", name, x.typ())
	}
	return mapInts(x, domain.TypeInt64, f), nil
}

// isoWeek is the ISO-8601 week-based year and week of a day: weeks start on
// Monday and week 1 holds the year's first Thursday.
func isoWeek(d int64) (int64, int64) {
	wd := ((d+3)%7 + 7) % 7 // 0 = Monday
	thursday := d - wd + 3  // the Thursday of d's week decides its year
	y, _, _ := civil(thursday)
	return y, (thursday-daysFromCivil(y, 1, 1))/7 + 1
}

func intervalField(x node, name string, p syntax.Pos) (node, error) {
	ym := x.typ().Kind == domain.KindYearMonthInterval
	var f func(int64) int64
	switch {
	case ym && name == "year":
		f = func(m int64) int64 { return m / 12 }
	case ym && name == "month":
		f = func(m int64) int64 { return m % 12 }
	case !ym && name == "day":
		f = func(us int64) int64 { return us / microsPerDay }
	case !ym && name == "hour":
		f = func(us int64) int64 { return us % microsPerDay / microsPerHour }
	case !ym && name == "minute":
		f = func(us int64) int64 { return us % microsPerHour / microsPerMinute }
	case !ym && (name == "second" || name == "second_frac"):
		return &fnNode{args: []node{x}, t: domain.TypeFloat64, body: func(out *domain.Column, a []*domain.Column) error {
			for i, us := range a[0].Ints {
				if !isNullAt(out.Nulls, i) {
					out.Floats[i] = float64(us%microsPerMinute) / 1e6
				}
			}
			return nil
		}}, nil
	default:
		return nil, exprErr(domain.CodeInvalidExtractField, p, "%s is not a field of an %s", name, x.typ())
	}
	return mapInts(x, domain.TypeInt64, f), nil
}

// extractNames maps Spark's EXTRACT / date_part field names to fields.
var extractNames = map[string]string{
	"YEAR": "year", "Y": "year", "YEARS": "year", "YR": "year", "YRS": "year",
	"YEAROFWEEK": "yearofweek",
	"QUARTER":    "quarter", "QTR": "quarter",
	"MONTH": "month", "MON": "month", "MONS": "month", "MONTHS": "month",
	"WEEK": "weekofyear", "W": "weekofyear", "WEEKS": "weekofyear",
	"DAY": "day", "D": "day", "DAYS": "day",
	"DAYOFWEEK": "dayofweek", "DOW": "dayofweek", "DAYOFWEEK_ISO": "dayofweek_iso", "DOW_ISO": "dayofweek_iso",
	"DOY":  "dayofyear",
	"HOUR": "hour", "H": "hour", "HOURS": "hour", "HR": "hour", "HRS": "hour",
	"MINUTE": "minute", "M": "minute", "MIN": "minute", "MINS": "minute", "MINUTES": "minute",
	"SECOND": "second_frac", "S": "second_frac", "SEC": "second_frac", "SECONDS": "second_frac", "SECS": "second_frac",
}

func (c *compiler) extract(e *syntax.Extract) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	return c.extractField(x, e.Field.Name, e.Field.Pos, e.X.Position())
}

func (c *compiler) extractField(x node, field string, fp, xp syntax.Pos) (node, error) {
	name, ok := extractNames[strings.ToUpper(field)]
	if !ok {
		return nil, exprErr(domain.CodeInvalidExtractField, fp, "%s is not a field EXTRACT knows", field)
	}
	switch k := x.typ().Kind; {
	case k == domain.KindString || k == domain.KindNull:
		x = c.implicit(x, domain.TypeTimestamp, xp)
	case !isDatetime(k):
		return nil, exprErr(domain.CodeDatatypeMismatch, xp, "cannot extract %s from a %s", field, x.typ())
	}
	return c.fieldOf(x, name, fp)
}

func compileDatePart(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	lit, ok := e.Args[0].(*syntax.Literal)
	if !ok || lit.Kind != syntax.StringLit {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "the field of date_part must be a string literal")
	}
	x, err := c.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	return c.extractField(x, lit.Value, lit.Pos, e.Args[1].Position())
}

// niladic compiles the functions Spark also accepts without parentheses.
func (c *compiler) niladic(name string) (node, bool) {
	switch name = strings.ToLower(name); name {
	case "current_date", "current_timestamp", "localtimestamp":
		n, _ := compileNow(c, nil, name)
		return n, true
	}
	return nil, false
}

func compileNow(c *compiler, _ *syntax.FuncCall, name string) (node, error) {
	t := domain.TypeTimestamp
	switch name {
	case "current_date", "curdate":
		t = domain.TypeDate
	case "localtimestamp":
		t = domain.TypeTimestampNTZ // the session zone's wall clock
	}
	return &nowNode{sess: c.sess, t: t}, nil
}

// nowNode is the session's current date, timestamp or unix time: the same
// for every row of an evaluation, read when it runs, so that a plan run at
// each micro-batch sees the time of that micro-batch (as Spark's
// current_timestamp is fixed per micro-batch).
type nowNode struct {
	sess *Session
	t    domain.Type
}

func (n *nowNode) typ() domain.Type { return n.t }
func (n *nowNode) mayFail() bool    { return false }
func (n *nowNode) eval(b *domain.Batch) (*domain.Column, error) {
	us := n.sess.Now.UnixMicro()
	var v domain.Value
	switch n.t.Kind {
	case domain.KindDate:
		v = domain.DateDays(floorDiv(localMicros(us, n.sess.TimeZone), microsPerDay))
	case domain.KindInt64:
		v = domain.Int(floorDiv(us, microsPerSecond))
	default:
		if n.t.NTZ {
			us = localMicros(us, n.sess.TimeZone)
		}
		v = domain.TimestampMicros(us)
	}
	return (&litNode{t: n.t, v: v}).eval(b)
}

// parseNode parses strings with a pattern into timestamps (or dates).
type parseNode struct {
	x    node
	p    pattern // the pattern, when it is a literal
	pat  node    // else the pattern column
	loc  *time.Location
	date bool
	try  bool
	pos  syntax.Pos
}

func (n *parseNode) typ() domain.Type {
	if n.date {
		return domain.TypeDate
	}
	return domain.TypeTimestamp
}
func (n *parseNode) mayFail() bool { return !n.try || n.x.mayFail() }

func (n *parseNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	var pats *domain.Column
	if n.pat != nil {
		if pats, err = n.pat.eval(b); err != nil {
			return nil, err
		}
	}
	rows := b.Len()
	out := newCol(n.typ().Kind, rows)
	out.Nulls = make([]bool, rows)
	for i := 0; i < rows; i++ {
		if x.IsNull(i) || (pats != nil && pats.IsNull(i)) {
			out.Nulls[i] = true
			continue
		}
		p := n.p
		if pats != nil {
			if p, err = compilePattern(pats.Strs[i]); err != nil {
				return nil, exprErr(domain.CodeInvalidDatetimePattern, n.pos, "the datetime pattern '%s' is not valid: %v", pats.Strs[i], err)
			}
		}
		us, ok := p.parse(x.Strs[i], n.loc)
		if !ok {
			if n.try {
				out.Nulls[i] = true
				continue
			}
			return nil, exprErr(domain.CodeCannotParseTimestamp, n.pos, "the value '%s' does not match the pattern", x.Strs[i])
		}
		if n.date {
			us = floorDiv(localMicros(us, n.loc), microsPerDay)
		}
		out.Ints[i] = us
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

func compileToDatetime(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	date, try := strings.HasSuffix(name, "to_date"), strings.HasPrefix(name, "try_")
	target := domain.TypeTimestamp
	if date {
		target = domain.TypeDate
	}
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	switch k := x.typ().Kind; {
	case k == domain.KindDate || k == domain.KindTimestamp:
		// as in Spark, a date or timestamp is converted; a pattern is ignored
		return c.convArg(e, 0, target)
	case len(e.Args) == 1 && try && k == domain.KindString:
		return &castNode{x: x, to: target.Kind, try: true, pos: e.Pos, loc: c.sess.TimeZone}, nil
	case len(e.Args) == 1:
		return c.convArg(e, 0, target)
	}
	if x, err = asString(x, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	c.zoned(x)
	n := &parseNode{x: x, loc: c.sess.TimeZone, date: date, try: try, pos: e.Pos}
	return n, c.patternOf(n, e, 1, name)
}

// patternOf sets the pattern of n from argument i of e: a literal is
// compiled once, a column row by row.
func (c *compiler) patternOf(n *parseNode, e *syntax.FuncCall, i int, name string) error {
	p, isLit, err := c.patternArg(e.Args[i])
	if err != nil || isLit {
		n.p = p
		return err
	}
	pat, err := c.compile(e.Args[i])
	if err != nil {
		return err
	}
	n.pat, err = asString(pat, e.Args[i].Position(), name)
	return err
}

func compileDateFormat(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.tsArg(e, 0)
	if err != nil {
		return nil, err
	}
	return c.formatWith(x, e, 1, name)
}

// formatWith formats the timestamps x with the pattern argument i of e: a
// literal is compiled once, a column row by row.
func (c *compiler) formatWith(x node, e *syntax.FuncCall, i int, name string) (node, error) {
	p, isLit, err := c.patternArg(e.Args[i])
	if err != nil {
		return nil, err
	}
	if isLit {
		return c.formatNode(x, p), nil
	}
	pat, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	if pat, err = asString(pat, e.Args[i].Position(), name); err != nil {
		return nil, err
	}
	loc, pos := c.sess.TimeZone, e.Args[i].Position()
	return &fnNode{args: []node{x, pat}, t: domain.TypeString, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		var buf []byte
		for r, us := range a[0].Ints {
			if isNullAt(out.Nulls, r) {
				continue
			}
			p, err := compilePattern(a[1].Strs[r])
			if err != nil {
				return exprErr(domain.CodeInvalidDatetimePattern, pos, "the datetime pattern '%s' is not valid: %v", a[1].Strs[r], err)
			}
			buf = p.format(buf[:0], us, loc)
			out.Strs[r] = string(buf)
		}
		return nil
	}}, nil
}

func (c *compiler) formatNode(x node, p pattern) node {
	loc := c.sess.TimeZone
	return &fnNode{args: []node{x}, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		var buf []byte
		for i, us := range a[0].Ints {
			if !isNullAt(out.Nulls, i) {
				buf = p.format(buf[:0], us, loc)
				out.Strs[i] = string(buf)
			}
		}
		return nil
	}}
}

func compileDateAdd(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	d, err := c.dateArg(e, 0)
	if err != nil {
		return nil, err
	}
	n, err := c.intArg(e, 1, strings.ToLower(e.Name.Last().Name))
	if err != nil {
		return nil, err
	}
	op := "+"
	if name == "date_sub" {
		op = "-"
	}
	return c.datetimeArith(&syntax.Binary{Pos: e.Pos, Op: op, L: e.Args[0], R: e.Args[1]}, d, n)
}

func compileAddMonths(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	d, err := c.dateArg(e, 0)
	if err != nil {
		return nil, err
	}
	n, err := c.intArg(e, 1, strings.ToLower(e.Name.Last().Name))
	if err != nil {
		return nil, err
	}
	return &intBinNode{l: d, r: n, t: domain.TypeDate, op: "add_months", pos: e.Pos, fi: func(a, b int64) (int64, domain.Code) {
		if b > math.MaxInt32 || b < math.MinInt32 {
			return 0, domain.CodeArithmeticOverflow
		}
		r := addMonthsDays(a, b)
		return r, dateFits(r)
	}}, nil
}

func compileDatediff(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	if len(e.Args) == 3 { // DATEDIFF(unit, start, end) is timestampdiff
		return compileTimestampDiff(c, e, "datediff")
	}
	a, err := c.dateArg(e, 0)
	if err != nil {
		return nil, err
	}
	b, err := c.dateArg(e, 1)
	if err != nil {
		return nil, err
	}
	return &intBinNode{l: a, r: b, t: domain.TypeInt64, op: "-", pos: e.Pos, fi: func(x, y int64) (int64, domain.Code) { return x - y, "" }}, nil
}

func compileLastDay(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	d, err := c.dateArg(e, 0)
	if err != nil {
		return nil, err
	}
	return mapInts(d, domain.TypeDate, func(d int64) int64 {
		y, m, _ := civil(d)
		return daysFromCivil(y, m, daysInMonth(y, m))
	}), nil
}

func compileUnixDate(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	if name == "unix_date" {
		d, err := c.dateArg(e, 0)
		if err != nil {
			return nil, err
		}
		return mapInts(d, domain.TypeInt64, func(d int64) int64 { return d }), nil
	}
	n, err := c.intArg(e, 0, strings.ToLower(e.Name.Last().Name))
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{n}, t: domain.TypeDate, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i, d := range a[0].Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			if dateFits(d) != "" {
				return exprErr(domain.CodeDatetimeOverflow, e.Pos, "date_from_unix_date(%d) is beyond the range of dates", d)
			}
			out.Ints[i] = d
		}
		return nil
	}}, nil
}

var unitScale = map[string]int64{"seconds": microsPerSecond, "millis": 1000, "micros": 1}

func compileUnixTime(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.tsArg(e, 0)
	if err != nil {
		return nil, err
	}
	s := unitScale[strings.TrimPrefix(name, "unix_")]
	return mapInts(x, domain.TypeInt64, func(us int64) int64 { return floorDiv(us, s) }), nil
}

func compileFromUnit(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	s := unitScale[strings.TrimPrefix(name, "timestamp_")]
	if name == "timestamp_seconds" {
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		if x.typ().Kind == domain.KindDecimal {
			x = implicit(x, domain.TypeFloat64, e.Args[0].Position())
		}
		if x.typ().Kind == domain.KindFloat64 {
			// fractional seconds; NaN and infinities are NULL, as in Spark
			return &fnNode{args: []node{x}, t: domain.TypeTimestamp, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
				for i, f := range a[0].Floats {
					switch us := f * 1e6; {
					case isNullAt(out.Nulls, i):
					case math.IsNaN(f) || math.IsInf(f, 0):
						if out.Nulls == nil {
							out.Nulls = make([]bool, len(a[0].Floats))
						}
						out.Nulls[i] = true
					case us < -9.223372036854775808e18 || us >= 9.223372036854775808e18:
						return exprErr(domain.CodeArithmeticOverflow, e.Pos, "timestamp_seconds(%s) overflows a timestamp", fmtFloat(f))
					default:
						out.Ints[i] = int64(us)
					}
				}
				return nil
			}}, nil
		}
	}
	n, err := c.intArg(e, 0, strings.ToLower(e.Name.Last().Name))
	if err != nil {
		return nil, err
	}
	return &intBinNode{l: n, r: &litNode{t: domain.TypeInt64, v: domain.Int(s)}, t: domain.TypeTimestamp, op: "*", pos: e.Pos,
		fi: func(a, b int64) (int64, domain.Code) {
			if overflows("*", a, b) {
				return 0, domain.CodeArithmeticOverflow
			}
			return a * b, ""
		}}, nil
}

func compileMakeDate(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	args := make([]node, 3)
	for i := range args {
		var err error
		if args[i], err = c.intArg(e, i, strings.ToLower(e.Name.Last().Name)); err != nil {
			return nil, err
		}
	}
	return &fnNode{args: args, t: domain.TypeDate, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i := range out.Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			y, m, d := a[0].Ints[i], a[1].Ints[i], a[2].Ints[i]
			if y < -290000 || y > 290000 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
				return exprErr(domain.CodeDatetimeFieldOutOfRange, e.Pos, "make_date(%d, %d, %d) is not a valid date", y, m, d)
			}
			out.Ints[i] = daysFromCivil(y, m, d)
		}
		return nil
	}}, nil
}

const defaultTimestampPattern = "yyyy-MM-dd HH:mm:ss"

func compileUnixTimestamp(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	if len(e.Args) == 0 {
		return &nowNode{sess: c.sess, t: domain.TypeInt64}, nil
	}
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if k := x.typ().Kind; k == domain.KindString || k == domain.KindNull {
		n := &parseNode{x: retype(x, domain.TypeString), p: mustPattern(defaultTimestampPattern), loc: c.sess.TimeZone, pos: e.Pos}
		if len(e.Args) == 2 {
			if err := c.patternOf(n, e, 1, name); err != nil {
				return nil, err
			}
		}
		x = n
	} else if x, err = c.tsArg(e, 0); err != nil {
		return nil, err
	}
	return mapInts(x, domain.TypeInt64, func(us int64) int64 { return floorDiv(us, microsPerSecond) }), nil
}

func mustPattern(s string) pattern {
	p, err := compilePattern(s)
	if err != nil {
		panic(err)
	}
	return p
}

func compileFromUnixtime(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	n, err := c.intArg(e, 0, strings.ToLower(e.Name.Last().Name))
	if err != nil {
		return nil, err
	}
	ts := &intBinNode{l: n, r: &litNode{t: domain.TypeInt64, v: domain.Int(microsPerSecond)}, t: domain.TypeTimestamp, op: "*", pos: e.Pos,
		fi: func(a, b int64) (int64, domain.Code) {
			if overflows("*", a, b) {
				return 0, domain.CodeArithmeticOverflow
			}
			return a * b, ""
		}}
	if len(e.Args) == 2 {
		return c.formatWith(ts, e, 1, name)
	}
	return c.formatNode(ts, mustPattern(defaultTimestampPattern)), nil
}

// compileUTCShift: from_utc_timestamp(ts, tz) gives the instant whose UTC
// wall-clock time is ts's wall-clock time in tz; to_utc_timestamp is the
// inverse (Spark's convertTz). The zone must be a literal.
func compileUTCShift(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.tsArg(e, 0)
	if err != nil {
		return nil, err
	}
	lit, ok := e.Args[1].(*syntax.Literal)
	if !ok || lit.Kind != syntax.StringLit {
		return nil, exprErr(domain.CodeNotImplemented, e.Args[1].Position(), "the time zone of %s must be a string literal", name)
	}
	tz, err := parseZone(lit.Value)
	if err != nil {
		return nil, exprErr(domain.CodeInvalidTimeZone, lit.Pos, "'%s' is not a time zone", lit.Value)
	}
	if name == "from_utc_timestamp" {
		return mapInts(x, domain.TypeTimestamp, func(us int64) int64 { return localMicros(us, tz) }), nil
	}
	return mapInts(x, domain.TypeTimestamp, func(us int64) int64 { return fromLocalMicros(us, tz) }), nil
}
