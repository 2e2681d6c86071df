package sql

import (
	"cmp"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Time windows that put a row in several groups, planned under the
// aggregation: sliding windows and session windows.
//
// Session windows: GROUP BY ..., session_window(ts, gap) groups each key's
// rows into sessions. A row opens [ts, ts + gap); a row of the same key at
// or before the session's end joins it and stretches it to its own end.
// The gap is a duration ('5 minutes', an interval) or an expression of the
// row (CASE ... THEN '1 minute' ...); a row whose time is NULL, or whose
// gap is NULL, not a duration or not positive, is in no session and left
// out, as in Spark. A sessionOp under the aggregation gives every row its
// session; the key reads it.

// sessionType is the session of a row, as Spark's session_window.
var sessionType = domain.StructOf(
	domain.Field{Name: "start", Type: domain.TypeTimestamp, Nullable: true},
	domain.Field{Name: "end", Type: domain.TypeTimestamp, Nullable: true},
)

// isSlidingWindow reports whether e is window(ts, duration, slide[, start])
// with a slide other than its duration: a row is in several windows.
func isSlidingWindow(e syntax.Expr) bool {
	f, ok := e.(*syntax.FuncCall)
	if !ok || len(f.Name.Parts) != 1 || !strings.EqualFold(f.Name.Last().Name, "window") || f.Over != nil || len(f.Args) < 3 {
		return false
	}
	dur, slide := f.Args[1], f.Args[2]
	return syntax.Format(dur) != syntax.Format(slide)
}

func isSessionWindow(e syntax.Expr) bool {
	f, ok := e.(*syntax.FuncCall)
	return ok && len(f.Name.Parts) == 1 && strings.EqualFold(f.Name.Last().Name, "session_window") && f.Over == nil
}

// timeWindowName is the column name Spark gives a GROUP BY key that is a
// time window, by which the select list may read it (window.start).
func timeWindowName(e syntax.Expr) string {
	f, ok := e.(*syntax.FuncCall)
	if !ok || len(f.Name.Parts) != 1 || f.Over != nil {
		return ""
	}
	switch n := strings.ToLower(f.Name.Last().Name); n {
	case "window", "session_window":
		return n
	}
	return ""
}

// sessionOp passes its child's rows that are in a session, in their
// order, with their session as a last column.
type sessionOp struct {
	child op
	keys  []node // the other GROUP BY keys: sessions are per value of them
	ts    node   // a timestamp
	gap   node   // a day-time interval
	out   domain.Schema
}

// sessions plans the session of each row for the GROUP BY key at (a
// session_window call) over src; the other keys partition the sessions.
// The returned scope has the session as its last column.
func (pl *planner) sessions(keyExprs []syntax.Expr, at int, src op, sc scope) (op, scope, error) {
	call := keyExprs[at].(*syntax.FuncCall)
	for i, k := range keyExprs {
		if i != at && isSessionWindow(k) {
			return nil, scope{}, planErr(domain.CodeUnsupportedQuery, k.Position(), "GROUP BY may hold one session_window")
		}
	}
	if len(call.Args) != 2 {
		return nil, scope{}, wrongArgs(call, "session_window", "2")
	}
	so := &sessionOp{child: src}
	for i, k := range keyExprs {
		if i == at {
			continue
		}
		c, err := pl.compile(k, sc, nil)
		if err != nil {
			return nil, scope{}, err
		}
		so.keys = append(so.keys, c.root)
	}
	cc := pl.compiler(sc, nil)
	ts, err := cc.compile(call.Args[0])
	if err != nil {
		return nil, scope{}, err
	}
	switch t := ts.typ(); t.Kind {
	case domain.KindTimestamp:
	case domain.KindString, domain.KindDate:
		ts = implicit(ts, domain.TypeTimestamp, call.Args[0].Position())
	default:
		return nil, scope{}, exprErr(domain.CodeDatatypeMismatch, call.Args[0].Position(), "session_window needs a timestamp, found %s", t)
	}
	so.ts = ts
	if so.gap, err = sessionGap(cc, call.Args[1]); err != nil {
		return nil, scope{}, err
	}
	so.out = domain.Schema{Fields: append(slices.Clone(src.schema().Fields), domain.Field{Name: "__session", Type: sessionType, Nullable: true})}
	out := scope{schema: so.out, quals: append(slices.Clone(sc.quals), "")}
	return so, out, nil
}

// sessionGap compiles the gap: a string literal is parsed once, as
// window() parses its durations; an interval is taken as it is; a string
// of the row is parsed row by row, NULL where it is not a duration.
func sessionGap(c *compiler, e syntax.Expr) (node, error) {
	if lit, ok := e.(*syntax.Literal); ok && lit.Kind == syntax.StringLit {
		var acc ivAcc
		if err := parseUnitString(&acc, lit.Value); err != nil || acc.ym || acc.fraction || acc.overflow || acc.micros <= 0 {
			return nil, exprErr(domain.CodeInvalidIntervalFormat, lit.Pos, "'%s' is not a positive duration of days or less, like '5 minutes'", lit.Value)
		}
		return &litNode{t: domain.Type{Kind: domain.KindDayTimeInterval}, v: domain.DayTimeInterval(acc.micros)}, nil
	}
	x, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	switch x.typ().Kind {
	case domain.KindDayTimeInterval:
		return x, nil
	case domain.KindString, domain.KindNull:
		return &fnNode{args: []node{x}, t: domain.Type{Kind: domain.KindDayTimeInterval}, body: func(out *domain.Column, a []*domain.Column) error {
			for i := range out.Ints {
				if isNullAt(out.Nulls, i) {
					continue
				}
				var acc ivAcc
				if err := parseUnitString(&acc, a[0].Strs[i]); err != nil || acc.ym || acc.fraction || acc.overflow {
					if out.Nulls == nil {
						out.Nulls = make([]bool, len(out.Ints))
					}
					out.Nulls[i] = true
					continue
				}
				out.Ints[i] = acc.micros
			}
			return nil
		}}, nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, e.Position(), "the gap of session_window must be a duration (a string like '5 minutes' or a day-time interval), found %s", x.typ())
}

func (o *sessionOp) schema() domain.Schema { return o.out }

func (o *sessionOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	keyCols, err := evalAll(o.keys, b)
	if err != nil {
		return nil, err
	}
	ts, err := o.ts.eval(b)
	if err != nil {
		return nil, err
	}
	gap, err := o.gap.eval(b)
	if err != nil {
		return nil, err
	}
	type event struct {
		row      int
		key      string
		at, ends int64
	}
	var events []event
	var key []byte
	for i := range b.Len() {
		if ts.IsNull(i) || gap.IsNull(i) || gap.Ints[i] <= 0 {
			continue
		}
		key = key[:0]
		for _, c := range keyCols {
			key = appendKey(key, c, i)
		}
		events = append(events, event{row: i, key: string(key), at: ts.Ints[i], ends: ts.Ints[i] + gap.Ints[i]})
	}
	slices.SortStableFunc(events, func(a, b event) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	})
	session := make([]domain.Value, b.Len())
	for lo := 0; lo < len(events); {
		hi, end := lo+1, events[lo].ends
		for hi < len(events) && events[hi].key == events[lo].key && events[hi].at <= end {
			end = max(end, events[hi].ends)
			hi++
		}
		v := domain.Struct(domain.TimestampMicros(events[lo].at), domain.TimestampMicros(end))
		for _, e := range events[lo:hi] {
			session[e.row] = v
		}
		lo = hi
	}
	keep := make([]int, 0, len(events))
	for _, e := range events {
		keep = append(keep, e.row)
	}
	slices.Sort(keep) // the rows in their order
	out := gather(b, keep)
	col := &domain.Column{Kind: domain.KindStruct, Values: make([]domain.Value, len(keep))}
	for j, i := range keep {
		col.Values[j] = session[i]
	}
	return domain.BatchOf(o.out, append(slices.Clone(out.Columns), col))
}

// slidingOp passes each of its child's rows once per sliding window that
// holds its time ([start, end) with start ≡ the window's start modulo the
// slide), with the window as a last column; a row whose time is NULL is in
// none.
type slidingOp struct {
	child              op
	ts                 node
	dur, slide, offset int64
	out                domain.Schema
}

// slidingWindows plans the windows of each row for the GROUP BY key at (a
// sliding window call) over src; the returned scope has the window as its
// last column.
func (pl *planner) slidingWindows(keyExprs []syntax.Expr, at int, src op, sc scope) (op, scope, error) {
	for i, k := range keyExprs {
		if i != at && (isSlidingWindow(k) || isSessionWindow(k)) {
			return nil, scope{}, planErr(domain.CodeUnsupportedQuery, k.Position(), "GROUP BY may hold one sliding or session window")
		}
	}
	ts, dur, slide, offset, err := windowSpec(pl.compiler(sc, nil), keyExprs[at].(*syntax.FuncCall))
	if err != nil {
		return nil, scope{}, err
	}
	so := &slidingOp{child: src, ts: ts, dur: dur, slide: slide, offset: offset}
	so.out = domain.Schema{Fields: append(slices.Clone(src.schema().Fields), domain.Field{Name: "__window", Type: windowType(ts.typ()), Nullable: true})}
	return so, scope{schema: so.out, quals: append(slices.Clone(sc.quals), "")}, nil
}

func (o *slidingOp) schema() domain.Schema { return o.out }

func (o *slidingOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	ts, err := o.ts.eval(b)
	if err != nil {
		return nil, err
	}
	var rows []int
	var windows []domain.Value
	for i := range b.Len() {
		if ts.IsNull(i) {
			continue
		}
		t := ts.Ints[i]
		last := t - ((t-o.offset)%o.slide+o.slide)%o.slide // the last window start at or before t
		for s := last - (o.dur-1)/o.slide*o.slide; s <= last; s += o.slide {
			if s+o.dur > t {
				rows = append(rows, i)
				windows = append(windows, domain.Struct(domain.TimestampMicros(s), domain.TimestampMicros(s+o.dur)))
			}
		}
	}
	out := gather(b, rows)
	return domain.BatchOf(o.out, append(slices.Clone(out.Columns), &domain.Column{Kind: domain.KindStruct, Values: windows}))
}
