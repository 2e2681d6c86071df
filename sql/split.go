package sql

import "strconv"

// AggColumn is the name of the column that stands for aggregate i in the
// expressions SplitAggregates returns: __agg0, __agg1, ...
func AggColumn(i int) string { return "__agg" + strconv.Itoa(i) }

// SplitAggregates rewrites e for evaluation after grouping: each aggregate
// call (not under OVER) becomes a reference to the column AggColumn(i),
// where i is its index in the returned calls. calls are the aggregates
// already split out of the other expressions of the same SELECT (nil for
// the first): a call written the same way as one of them reuses its column,
// so `SELECT sum(x) ... HAVING sum(x) > 1` computes sum(x) once.
//
// A window call is kept, but aggregates in its arguments and its window are
// replaced (`sum(count(x)) OVER ()` windows over the grouped count).
// Subqueries are their own scope and are left as they are. e itself is not
// modified: the nodes on the path to a replaced call are copies.
func SplitAggregates(e Expr, calls []*FuncCall) (Expr, []*FuncCall) {
	s := &splitter{calls: calls}
	return s.expr(e), s.calls
}

type splitter struct {
	calls []*FuncCall
}

func (s *splitter) ref(f *FuncCall) Expr {
	text := f.String()
	i := 0
	for ; i < len(s.calls); i++ {
		if s.calls[i].String() == text {
			break
		}
	}
	if i == len(s.calls) {
		s.calls = append(s.calls, f)
	}
	return &ColumnRef{Pos: f.Pos, Parts: []*Ident{{Pos: f.Pos, Name: AggColumn(i)}}}
}

func (s *splitter) exprs(es []Expr) []Expr {
	if es == nil {
		return nil
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = s.expr(e)
	}
	return out
}

func (s *splitter) order(items []*OrderItem) []*OrderItem {
	if items == nil {
		return nil
	}
	out := make([]*OrderItem, len(items))
	for i, o := range items {
		c := *o
		c.Expr = s.expr(o.Expr)
		out[i] = &c
	}
	return out
}

// expr returns e with its aggregates replaced; e is copied, never changed.
func (s *splitter) expr(e Expr) Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *FuncCall:
		if isAggregateCall(e) {
			return s.ref(e)
		}
		c := *e
		c.Args = s.exprs(e.Args)
		c.WithinGroup = s.order(e.WithinGroup)
		c.Filter = s.expr(e.Filter)
		if e.Over != nil {
			w := *e.Over
			w.PartitionBy = s.exprs(e.Over.PartitionBy)
			w.OrderBy = s.order(e.Over.OrderBy)
			c.Over = &w
		}
		return &c
	case *FieldAccess:
		c := *e
		c.X = s.expr(e.X)
		return &c
	case *Subscript:
		c := *e
		c.X, c.Index = s.expr(e.X), s.expr(e.Index)
		return &c
	case *JSONPath:
		c := *e
		c.X = s.expr(e.X)
		c.Steps = make([]*JSONStep, len(e.Steps))
		for i, st := range e.Steps {
			cs := *st
			cs.Index = s.expr(st.Index)
			c.Steps[i] = &cs
		}
		return &c
	case *Unary:
		c := *e
		c.X = s.expr(e.X)
		return &c
	case *Binary:
		c := *e
		c.L, c.R = s.expr(e.L), s.expr(e.R)
		return &c
	case *Paren:
		c := *e
		c.X = s.expr(e.X)
		return &c
	case *Tuple:
		c := *e
		c.Items = s.exprs(e.Items)
		return &c
	case *Is:
		c := *e
		c.X = s.expr(e.X)
		return &c
	case *IsDistinct:
		c := *e
		c.X, c.Y = s.expr(e.X), s.expr(e.Y)
		return &c
	case *In:
		c := *e
		c.X, c.List = s.expr(e.X), s.exprs(e.List)
		return &c
	case *Between:
		c := *e
		c.X, c.Lo, c.Hi = s.expr(e.X), s.expr(e.Lo), s.expr(e.Hi)
		return &c
	case *Like:
		c := *e
		c.X, c.Pattern, c.Patterns, c.Escape = s.expr(e.X), s.expr(e.Pattern), s.exprs(e.Patterns), s.expr(e.Escape)
		return &c
	case *Case:
		c := *e
		c.Operand, c.Else = s.expr(e.Operand), s.expr(e.Else)
		c.Whens = make([]*When, len(e.Whens))
		for i, w := range e.Whens {
			c.Whens[i] = &When{Pos: w.Pos, Cond: s.expr(w.Cond), Result: s.expr(w.Result)}
		}
		return &c
	case *Cast:
		c := *e
		c.X = s.expr(e.X)
		return &c
	case *NamedArg:
		c := *e
		c.Value = s.expr(e.Value)
		return &c
	case *Aliased:
		c := *e
		c.X = s.expr(e.X)
		return &c
	case *Lambda:
		c := *e
		c.Body = s.expr(e.Body)
		return &c
	case *Extract:
		c := *e
		c.X = s.expr(e.X)
		return &c
	case *Trim:
		c := *e
		c.Chars, c.X = s.expr(e.Chars), s.expr(e.X)
		return &c
	case *GroupingSets:
		c := *e
		c.Sets = make([][]Expr, len(e.Sets))
		for i, set := range e.Sets {
			c.Sets[i] = s.exprs(set)
		}
		return &c
	}
	// leaves (literals, columns, stars) and subqueries, which are their own
	// scope
	return e
}
