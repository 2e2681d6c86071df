package sql

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// A correlated scalar subquery or EXISTS whose WHERE ties it to the query
// around it by equalities (inner = outer) is planned as Spark rewrites it:
// the subquery runs once, with the inner sides of the equalities as extra
// columns (and group keys, when it aggregates), and each outer row looks its
// outer sides up. A count over no rows is 0 there, as in Spark. Conditions
// of its WHERE that read both queries otherwise (o.ts BETWEEN p.start AND
// p.end, t2.x > t1.y) are a residual: the subquery's rows that the
// equalities match (all of them, without equalities) are paired with the
// outer row and the residual decides, as Spark's join with a condition
// does. A subquery that aggregates must be tied by equalities only; other
// correlations are NOT_IMPLEMENTED, with the join to write instead.

// decorrelate plans e, a *syntax.Subquery or *syntax.Exists that reads
// columns of outer, the first at ref.
func (pl *planner) decorrelate(e syntax.Expr, outer *compiler, ref syntax.Pos) (node, error) {
	outer = failing(outer)
	var q *syntax.Query
	kind, pos := "scalar", e.Position()
	switch e := e.(type) {
	case *syntax.Subquery:
		q = e.Query
	case *syntax.Exists:
		q, kind = e.Query, "exists"
	default:
		return nil, correlatedErr(ref, "only scalar subqueries and EXISTS may read the query around them")
	}
	sel, ok := q.Body.(*syntax.Select)
	if !ok || len(q.With) > 0 || q.Limit != nil || q.Offset != nil || len(sel.LateralViews) > 0 {
		return nil, correlatedErr(ref, "a correlated subquery must be one SELECT, without WITH, LIMIT or LATERAL VIEW")
	}
	kept, innerKeys, outerKeys, residual, err := pl.correlation(sel, outer)
	if err != nil {
		return nil, err
	}
	if len(innerKeys) == 0 && len(residual) == 0 {
		return nil, correlatedErr(ref, "it reads the query around it outside its WHERE")
	}
	aggregated := groups(sel)
	switch {
	case aggregated && len(residual) > 0:
		return nil, correlatedErr(residual[0].Position(), "a correlated subquery that aggregates must be tied to the query around it by equalities only")
	case aggregated && sel.Having != nil:
		// HAVING would drop keys whose value over no rows is not NULL
		return nil, correlatedErr(ref, "a correlated subquery that aggregates may not have HAVING")
	case kind == "exists" && aggregated && sel.GroupBy == nil:
		// a global aggregate has a row whatever its input: EXISTS is true
		return &litNode{t: domain.TypeBool, v: domain.Bool(true)}, nil
	}

	keyed := *sel
	keyed.Where = andAll(kept)
	keyed.Items = nil
	for i, k := range innerKeys {
		keyed.Items = append(keyed.Items, &syntax.SelectItem{Pos: k.Position(), Expr: k, Alias: &syntax.Ident{Pos: k.Position(), Name: "__corr" + strconv.Itoa(i)}})
	}
	if kind == "scalar" {
		keyed.Items = append(keyed.Items, sel.Items...)
	}
	if len(residual) > 0 { // the subquery's own columns, for the residual to read
		keyed.Items = append(keyed.Items, &syntax.SelectItem{Pos: pos, Expr: &syntax.Star{Pos: pos}})
	}
	if aggregated && (sel.GroupBy == nil || !sel.GroupBy.All) {
		g := &syntax.GroupBy{Pos: pos}
		if sel.GroupBy != nil {
			g.Items = append(g.Items, sel.GroupBy.Items...)
		}
		keyed.GroupBy = g
		g.Items = append(g.Items, innerKeys...)
	}
	o, err := pl.query(&syntax.Query{Pos: q.Pos, Body: &keyed})
	if err != nil {
		if se, ok := err.(*syntax.Error); ok && se.Code == domain.CodeUnresolvedColumn {
			if isOuter, _ := correlated(e, se.Pos, outer); isOuter {
				return nil, correlatedErr(se.Pos, "it reads the query around it outside its WHERE")
			}
		}
		return nil, err
	}
	width := len(o.schema().Fields) // the keys, the scalar's value, the subquery's own columns
	own := 0
	if len(residual) > 0 {
		if own, err = pl.ownColumns(sel, o, width); err != nil {
			return nil, err
		}
	}
	if kind == "scalar" && width-own != len(innerKeys)+1 {
		return nil, planErr(domain.CodeInvalidSubquery, pos, "a scalar subquery must return one column, this one returns %d", width-own-len(innerKeys))
	}
	// the value of a scalar subquery over no rows: a global aggregate's
	// (count 0), otherwise NULL
	var empty op
	if kind == "scalar" && aggregated && sel.GroupBy == nil {
		none := *sel
		none.Where = &syntax.Literal{Pos: pos, Kind: syntax.BoolLit, Text: "FALSE"}
		if empty, err = pl.query(&syntax.Query{Pos: q.Pos, Body: &none}); err != nil {
			return nil, correlatedErr(pos, "it reads the query around it outside its WHERE")
		}
		pl.subqueries = append(pl.subqueries, empty)
	}
	// the keys of both sides, in one type each
	keys := make([]node, len(outerKeys))
	proj := make([]node, len(o.schema().Fields))
	fields := append([]domain.Field{}, o.schema().Fields...)
	for i, f := range o.schema().Fields {
		proj[i] = &colNode{idx: i, t: f.Type}
	}
	for i, k := range outerKeys {
		x, err := outer.compile(k)
		if err != nil {
			return nil, err
		}
		t, ok := commonType(x.typ(), fields[i].Type, true)
		if !ok {
			return nil, planErr(domain.CodeDatatypeMismatch, k.Position(), "cannot compare %s with the subquery's %s", x.typ(), fields[i].Type)
		}
		keys[i] = implicit(x, t, k.Position())
		proj[i], fields[i].Type = implicit(proj[i], t, k.Position()), t
	}
	o = &projectOp{child: o, exprs: proj, out: domain.NewSchema(fields...)}
	pl.subqueries = append(pl.subqueries, o)
	t := domain.TypeBool
	if kind == "scalar" {
		t = fields[len(keys)].Type
	}
	cn := &correlatedNode{kind: kind, keys: keys, o: o, empty: empty, run: pl.run, t: t, pos: pos}
	if len(residual) > 0 {
		// the residual reads the subquery's columns, then the outer row's;
		// a name both have is the subquery's, as Spark resolves inner first
		isc, err := pl.probeFrom(sel.From)
		if err != nil {
			return nil, err
		}
		both := scope{schema: domain.Schema{Fields: append(slices.Clone(isc.schema.Fields), outer.in.Fields...)}, quals: append(slices.Clone(isc.quals), outer.quals...)}
		rc := pl.compiler(both, nil)
		rc.params = len(isc.schema.Fields)
		x, err := rc.compile(andAll(residual))
		if err != nil {
			return nil, err
		}
		c, err := asPredicate(&Compiled{root: x, expr: andAll(residual), in: both.schema, sess: pl.sess}, andAll(residual), "WHERE")
		if err != nil {
			return nil, err
		}
		cn.residual, cn.own, cn.pairs = c.root, own, both.schema
	}
	return cn, nil
}

// ownColumns checks that the last columns of o, the keyed subquery, are
// its FROM's columns as the residual reads them (the FROM's scope), and
// says how many there are.
func (pl *planner) ownColumns(sel *syntax.Select, o op, width int) (int, error) {
	isc, err := pl.probeFrom(sel.From)
	if err != nil {
		return 0, err
	}
	own := len(isc.schema.Fields)
	fields := o.schema().Fields
	if own > width {
		return 0, correlatedErr(sel.Pos, "its FROM's columns cannot be read beside the query around it")
	}
	for i, f := range isc.schema.Fields {
		if !strings.EqualFold(fields[width-own+i].Name, f.Name) {
			return 0, correlatedErr(sel.Pos, "its FROM's columns cannot be read beside the query around it")
		}
	}
	return own, nil
}

// correlation splits the WHERE of sel, a subquery reading columns of outer,
// into its own conditions (kept), the equalities that tie it to outer
// (inner = outer, their sides in innerKeys and outerKeys) and the other
// conditions that read outer (residual).
func (pl *planner) correlation(sel *syntax.Select, outer *compiler) (kept, innerKeys, outerKeys, residual []syntax.Expr, err error) {
	// the subquery's own columns: a name it can read is its own, as Spark
	// resolves inner first
	isc, err := pl.probeFrom(sel.From)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	inner := &compiler{in: isc.schema, quals: isc.quals}
	side := func(x syntax.Expr) (in, out bool) {
		syntax.Inspect(x, func(nd syntax.Node) bool {
			switch nd := nd.(type) {
			case *syntax.ColumnRef:
				if _, _, err := inner.lookupColumn(nd.Parts); err == nil {
					in = true
				} else if _, _, err := outer.lookupColumn(nd.Parts); err == nil {
					out = true
				}
			case *syntax.Subquery, *syntax.Exists:
				return false
			}
			return true
		})
		return in, out
	}
	if sel.Where == nil {
		return nil, nil, nil, nil, nil
	}
	for _, cj := range conjuncts(sel.Where) {
		if _, out := side(cj); !out {
			kept = append(kept, cj)
			continue
		}
		if b, ok := cj.(*syntax.Binary); ok && (b.Op == "=" || b.Op == "==") {
			lIn, lOut := side(b.L)
			rIn, rOut := side(b.R)
			switch {
			case !lOut && rOut && !rIn:
				innerKeys, outerKeys = append(innerKeys, b.L), append(outerKeys, b.R)
				continue
			case !rOut && lOut && !lIn:
				innerKeys, outerKeys = append(innerKeys, b.R), append(outerKeys, b.L)
				continue
			}
		}
		residual = append(residual, cj)
	}
	return kept, innerKeys, outerKeys, residual, nil
}

// groups reports whether sel groups or aggregates its rows.
func groups(sel *syntax.Select) bool {
	found := sel.GroupBy != nil
	for _, it := range sel.Items {
		syntax.Inspect(it.Expr, func(nd syntax.Node) bool {
			found = found || isAggregateCall(nd)
			return !found
		})
	}
	return found
}

// failing is c returning its errors instead of recording them (as
// PlanQueryAll's compilers do): a decorrelated plan is all or nothing.
func failing(c *compiler) *compiler {
	f := *c
	f.errs = nil
	return &f
}

func correlatedErr(p syntax.Pos, why string) error {
	return planErr(domain.CodeNotImplemented, p, "this correlated subquery is not supported: %s; join the two queries instead", why)
}

func andAll(es []syntax.Expr) syntax.Expr {
	var out syntax.Expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = &syntax.Binary{Pos: e.Position(), Op: "AND", L: out, R: e}
		}
	}
	return out
}

// correlatedNode is a decorrelated scalar subquery or EXISTS: o is the
// subquery keyed by its correlation columns (its first len(keys)), keys
// the outer sides; empty, when set, gives a scalar's value over no rows.
// residual, when set, is the rest of the correlation, over the outer row's
// columns and the subquery's own (o's last own columns).
type correlatedNode struct {
	kind     string // scalar or exists
	keys     []node
	o        op
	empty    op
	run      *runHolder
	t        domain.Type
	pos      syntax.Pos
	residual node
	own      int
	pairs    domain.Schema // what residual reads: the subquery's own columns, then the outer row's
}

func (n *correlatedNode) typ() domain.Type { return n.t }
func (n *correlatedNode) mayFail() bool    { return true }

func (n *correlatedNode) eval(b *domain.Batch) (*domain.Column, error) {
	sub, err := runOnce(n.run, n.o, n.pos)
	if err != nil {
		return nil, err
	}
	if n.residual != nil {
		return n.evalResidual(b, sub)
	}
	nk := len(n.keys)
	index := make(map[string]int, sub.Len()) // key -> row, -1 when more than one
	var buf []byte
	subKeys := sub.Columns[:nk]
	for j := 0; j < sub.Len(); j++ {
		if anyNullKey(subKeys, j) {
			continue // NULL = x is never true
		}
		buf = AppendRowKey(buf[:0], subKeys, j)
		if _, dup := index[string(buf)]; dup {
			index[string(buf)] = -1
		} else {
			index[string(buf)] = j
		}
	}
	none := domain.Null()
	if n.empty != nil {
		e, err := runOnce(n.run, n.empty, n.pos)
		if err != nil {
			return nil, err
		}
		if e.Len() == 1 {
			none = e.Columns[0].Value(0)
		}
	}
	keys, err := evalAll(n.keys, b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := domain.NewColumn(n.t.Kind, rows)
	for i := 0; i < rows; i++ {
		j, found := -2, false
		if !anyNullKey(keys, i) {
			buf = AppendRowKey(buf[:0], keys, i)
			j, found = index[string(buf)]
		}
		var v domain.Value
		switch {
		case n.kind == "exists":
			v = domain.Bool(found)
		case !found:
			v = none
		case j < 0:
			return nil, planErr(domain.CodeScalarSubqueryRows, n.pos, "the correlated scalar subquery returned more than one row for a row of the query around it")
		default:
			v = sub.Columns[nk].Value(j)
		}
		if err := out.Append(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// residualPairs bounds the (outer row, subquery row) pairs the residual is
// evaluated on at once.
const residualPairs = 64 << 10

// evalResidual pairs each outer row of b with the subquery's rows its keys
// match (all rows, without keys) and keeps the pairs the residual holds
// for: EXISTS is whether one does, a scalar the value of the one that does
// (NULL for none; more than one is SCALAR_SUBQUERY_TOO_MANY_ROWS).
func (n *correlatedNode) evalResidual(b, sub *domain.Batch) (*domain.Column, error) {
	nk := len(n.keys)
	rowsOf := map[string][]int{} // key -> the subquery's rows
	var all []int
	var buf []byte
	for j := 0; j < sub.Len(); j++ {
		if nk == 0 {
			all = append(all, j)
			continue
		}
		if anyNullKey(sub.Columns[:nk], j) {
			continue // NULL = x is never true
		}
		buf = AppendRowKey(buf[:0], sub.Columns[:nk], j)
		rowsOf[string(buf)] = append(rowsOf[string(buf)], j)
	}
	keys, err := evalAll(n.keys, b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	match := make([]int, rows) // the subquery row that matched: -1 none
	for i := range match {
		match[i] = -1
	}
	ownCols := sub.Columns[len(sub.Columns)-n.own:]
	var outerRows, subRows []int
	flush := func() error {
		if len(outerRows) == 0 {
			return nil
		}
		cols := make([]*domain.Column, 0, len(n.pairs.Fields))
		for _, c := range ownCols {
			cols = append(cols, gatherCol(c, subRows))
		}
		cols = append(cols, gather(b, outerRows).Columns...)
		pb, err := domain.BatchOf(n.pairs, cols)
		if err != nil {
			return err
		}
		holds, err := n.residual.eval(pb)
		if err != nil {
			return err
		}
		for p, i := range outerRows {
			if holds.Ints[p] != 1 || isNullAt(holds.Nulls, p) {
				continue
			}
			if match[i] >= 0 && match[i] != subRows[p] && n.kind == "scalar" {
				return planErr(domain.CodeScalarSubqueryRows, n.pos, "the correlated scalar subquery returned more than one row for a row of the query around it")
			}
			match[i] = subRows[p]
		}
		outerRows, subRows = outerRows[:0], subRows[:0]
		return nil
	}
	for i := 0; i < rows; i++ {
		candidates := all
		if nk > 0 {
			if anyNullKey(keys, i) {
				continue
			}
			buf = AppendRowKey(buf[:0], keys, i)
			candidates = rowsOf[string(buf)]
		}
		for _, j := range candidates {
			outerRows, subRows = append(outerRows, i), append(subRows, j)
			if len(outerRows) == residualPairs {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	out := domain.NewColumn(n.t.Kind, rows)
	for i := 0; i < rows; i++ {
		v := domain.Bool(match[i] >= 0)
		if n.kind == "scalar" {
			v = domain.Null()
			if match[i] >= 0 {
				v = sub.Columns[nk].Value(match[i])
			}
		}
		if err := out.Append(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
