package sql

import (
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// windowOnly are the functions that exist only as window functions: a call
// of one needs OVER. (first_value, last_value and the aggregates are also
// aggregates, and valid without OVER.)
var windowOnly = map[string]bool{
	"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true, "cume_dist": true,
	"ntile": true, "lag": true, "lead": true, "nth_value": true,
}

// CheckQuery reports every misuse in q that does not need schemas, in
// source order, each an *Error with the position of the offending call:
//
//   - an aggregate, window or generator function in WHERE
//     (INVALID_WHERE_CONDITION);
//   - an aggregate in GROUP BY (GROUP_BY_AGGREGATE);
//   - an aggregate inside the arguments of another
//     (NESTED_AGGREGATE_FUNCTION);
//   - a window function (a call with OVER, or of a window-only function)
//     in a SELECT whose FROM reads a stream, directly, through a subquery
//     or through a CTE (NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING);
//   - row_number, rank, lag and the other window-only functions called
//     without OVER (WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE).
//
// Subqueries are checked as queries of their own: an aggregate in a scalar
// subquery of a WHERE is fine.
func CheckQuery(q *syntax.Query) []error {
	c := &checker{}
	c.query(q, nil)
	return c.errs
}

type checker struct {
	errs []error
}

// cteScope is the CTEs visible to a query: name -> reads a stream.
type cteScope struct {
	names  map[string]bool
	parent *cteScope
}

// streaming reports whether name is a CTE in scope that reads a stream; the
// innermost CTE of that name hides the others.
func (s *cteScope) streaming(name string) bool {
	for ; s != nil; s = s.parent {
		if st, ok := s.names[strings.ToLower(name)]; ok {
			return st
		}
	}
	return false
}

func (c *checker) report(code domain.Code, p syntax.Pos, format string, args ...any) {
	e := exprErr(code, p, format, args...)
	e.File = "query"
	c.errs = append(c.errs, e)
}

func (c *checker) query(q *syntax.Query, scope *cteScope) {
	if q == nil {
		return
	}
	if len(q.With) > 0 {
		scope = &cteScope{names: map[string]bool{}, parent: scope}
		for _, cte := range q.With {
			c.query(cte.Query, scope)
			scope.names[strings.ToLower(cte.Name.Name)] = queryStreams(cte.Query, scope)
		}
	}
	c.setExpr(q.Body, scope)
	streaming := setExprStreams(q.Body, scope)
	for _, o := range q.OrderBy {
		c.expr(o.Expr, scope, streaming, "")
	}
}

func (c *checker) setExpr(s syntax.SetExpr, scope *cteScope) {
	switch s := s.(type) {
	case *syntax.Select:
		c.selectBlock(s, scope)
	case *syntax.SetOp:
		c.setExpr(s.Left, scope)
		c.setExpr(s.Right, scope)
	case *syntax.ParenQuery:
		c.query(s.Query, scope)
	case *syntax.Values:
		for _, row := range s.Rows {
			for _, e := range row {
				c.expr(e, scope, false, "")
			}
		}
	}
}

func (c *checker) selectBlock(s *syntax.Select, scope *cteScope) {
	streaming := false
	for _, f := range s.From {
		streaming = streaming || fromStreams(f, scope)
	}
	for _, it := range s.Items {
		c.expr(it.Expr, scope, streaming, "")
	}
	for _, f := range s.From {
		c.from(f, scope, streaming)
	}
	for _, lv := range s.LateralViews {
		c.expr(lv.Func, scope, streaming, "")
	}
	c.expr(s.Where, scope, streaming, "WHERE")
	if s.GroupBy != nil {
		for _, e := range s.GroupBy.Items {
			c.expr(e, scope, streaming, "GROUP BY")
		}
	}
	c.expr(s.Having, scope, streaming, "")
	c.expr(s.Qualify, scope, streaming, "")
	for _, nw := range s.Windows {
		for _, e := range nw.Spec.PartitionBy {
			c.expr(e, scope, streaming, "")
		}
		for _, o := range nw.Spec.OrderBy {
			c.expr(o.Expr, scope, streaming, "")
		}
	}
}

// from checks the expressions and subqueries of a FROM item.
func (c *checker) from(f syntax.FromItem, scope *cteScope, streaming bool) {
	switch f := f.(type) {
	case *syntax.TableFunc:
		c.expr(f.Func, scope, streaming, "")
	case *syntax.SubqueryRef:
		c.query(f.Query, scope)
	case *syntax.ValuesRef:
		c.setExpr(f.Values, scope)
	case *syntax.Join:
		c.from(f.Left, scope, streaming)
		c.from(f.Right, scope, streaming)
		c.expr(f.On, scope, streaming, "")
	case *syntax.ParenJoin:
		c.from(f.Item, scope, streaming)
	}
}

// expr checks one expression of a SELECT block. streaming: the block reads a
// stream. clause: "WHERE" or "GROUP BY" when e is that clause, where more is
// forbidden.
func (c *checker) expr(e syntax.Expr, scope *cteScope, streaming bool, clause string) {
	if e == nil {
		return
	}
	syntax.Inspect(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Query:
			c.query(n, scope)
			return false
		case *syntax.FuncCall:
			c.call(n, streaming, clause)
		}
		return true
	})
}

func (c *checker) call(f *syntax.FuncCall, streaming bool, clause string) {
	name := strings.ToLower(f.Name.Last().Name)
	window := f.Over != nil || windowOnly[name]
	switch {
	case clause == "WHERE" && (isAggregateCall(f) || window || isGenerator(name)):
		kind := "an aggregate"
		switch {
		case window:
			kind = "a window function"
		case isGenerator(name):
			kind = "a generator"
		}
		c.report(domain.CodeInvalidWhereCondition, f.Pos, "%s is %s, which WHERE cannot contain", name, kind)
		return
	case clause == "GROUP BY" && isAggregateCall(f):
		c.report(domain.CodeGroupByAggregate, f.Pos, "GROUP BY cannot contain the aggregate %s", name)
	}
	if f.Over == nil && windowOnly[name] {
		c.report(domain.CodeWindowFunctionWithoutOver, f.Pos, "the window function %s needs an OVER clause", name)
	}
	if window && streaming {
		// also without OVER: adding one would not make the query valid
		c.report(domain.CodeWindowInStreaming, f.Pos, "%s is a window function, which a query reading a stream cannot use", name)
	}
	if isAggregateCall(f) {
		if err := checkNoNestedAggregate(f); err != nil {
			e := err.(*syntax.Error)
			e.File = "query"
			c.errs = append(c.errs, e)
		}
	}
}

// queryStreams reports whether a query reads a stream anywhere in its body.
func queryStreams(q *syntax.Query, scope *cteScope) bool {
	if q == nil {
		return false
	}
	if len(q.With) > 0 {
		inner := &cteScope{names: map[string]bool{}, parent: scope}
		for _, cte := range q.With {
			inner.names[strings.ToLower(cte.Name.Name)] = queryStreams(cte.Query, inner)
		}
		scope = inner
	}
	return setExprStreams(q.Body, scope)
}

func setExprStreams(s syntax.SetExpr, scope *cteScope) bool {
	switch s := s.(type) {
	case *syntax.Select:
		for _, f := range s.From {
			if fromStreams(f, scope) {
				return true
			}
		}
	case *syntax.SetOp:
		return setExprStreams(s.Left, scope) || setExprStreams(s.Right, scope)
	case *syntax.ParenQuery:
		return queryStreams(s.Query, scope)
	}
	return false
}

func fromStreams(f syntax.FromItem, scope *cteScope) bool {
	switch f := f.(type) {
	case *syntax.TableRef:
		if f.Stream {
			return true
		}
		if len(f.Name.Parts) == 1 {
			return scope.streaming(f.Name.Parts[0].Name)
		}
	case *syntax.TableFunc:
		return f.Stream
	case *syntax.SubqueryRef:
		return queryStreams(f.Query, scope)
	case *syntax.Join:
		return fromStreams(f.Left, scope) || fromStreams(f.Right, scope)
	case *syntax.ParenJoin:
		return fromStreams(f.Item, scope)
	}
	return false
}

// isGenerator reports whether name is a table-generating function, which
// produces rows and so cannot be part of a condition.
func isGenerator(name string) bool {
	_, ok := generators[name]
	return ok
}
