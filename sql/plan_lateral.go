package sql

import (
	"slices"
	"strconv"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// lateral plans left, LATERAL (query) [alias] (outerJoin false, on nil) and
// left [LEFT] JOIN LATERAL (query) [alias] [ON on]:
//   - a query without FROM adds its columns to each left row;
//   - one with a FROM is joined to left on the equalities of its WHERE
//     that tie it to left, and on the rest of that tie (o.ts BETWEEN
//     p.start AND p.end) as the join's condition; without equalities every
//     pair is a candidate;
//   - one that aggregates is grouped by the equalities' inner sides (it must
//     be tied by equalities only): without GROUP BY each left row gets one
//     row, the aggregate over no rows (count 0) where nothing matches, as
//     Spark gives it.
//
// A left row that nothing matches has no row, or, with LEFT JOIN LATERAL,
// one with the subquery's columns NULL. ON is a filter of an inner join
// and the condition of a left one.
func (pl *planner) lateral(left op, ls scope, sq *syntax.SubqueryRef, outerJoin bool, on syntax.Expr) (op, scope, error) {
	q, pos := sq.Query, sq.Pos
	sel, ok := q.Body.(*syntax.Select)
	if !ok || len(q.With) > 0 || q.Limit != nil || q.Offset != nil || len(sel.LateralViews) > 0 {
		return pl.failedFrom(correlatedErr(pos, "a LATERAL subquery must be one SELECT, without WITH, LIMIT or LATERAL VIEW"), sq.Alias, "")
	}
	qual := aliasName(sq.Alias)
	outer := failing(pl.compiler(ls, nil))
	if len(sel.From) == 0 {
		return pl.lateralSelect(left, ls, sq, sel, outer, outerJoin, on)
	}
	kept, innerKeys, outerKeys, residual, err := pl.correlation(sel, outer)
	if err != nil {
		return pl.failedFrom(err, sq.Alias, "")
	}
	aggregated := groups(sel)
	global := aggregated && sel.GroupBy == nil // one row per left row
	switch {
	case aggregated && (len(innerKeys) == 0 || len(residual) > 0):
		return pl.failedFrom(correlatedErr(pos, "a LATERAL subquery that aggregates must be tied to the left side by equalities of its WHERE only"), sq.Alias, "")
	case global && sel.Having != nil:
		return pl.failedFrom(correlatedErr(pos, "a LATERAL subquery that aggregates may not have HAVING"), sq.Alias, "")
	case global && outerJoin && on != nil:
		return pl.failedFrom(correlatedErr(on.Position(), "LEFT JOIN LATERAL of an aggregate with an ON condition is not supported; filter the aggregate's rows in a WHERE after the join"), sq.Alias, "")
	}
	keyed := *sel
	keyed.Where = andAll(kept)
	keyed.Items = slices.Clone(sel.Items)
	for i, k := range innerKeys {
		keyed.Items = append(keyed.Items, &syntax.SelectItem{Pos: k.Position(), Expr: k, Alias: &syntax.Ident{Pos: k.Position(), Name: "__corr" + strconv.Itoa(i)}})
	}
	if len(residual) > 0 { // the subquery's own columns, for the tie to read
		keyed.Items = append(keyed.Items, &syntax.SelectItem{Pos: pos, Expr: &syntax.Star{Pos: pos}})
	}
	if aggregated && (sel.GroupBy == nil || !sel.GroupBy.All) {
		g := &syntax.GroupBy{Pos: pos}
		if sel.GroupBy != nil {
			g.Items = append(g.Items, sel.GroupBy.Items...)
		}
		g.Items = append(g.Items, innerKeys...)
		keyed.GroupBy = g
	}
	r, err := pl.query(&syntax.Query{Pos: q.Pos, Body: &keyed})
	if err != nil {
		if se, ok := err.(*syntax.Error); ok && se.Code == domain.CodeUnresolvedColumn {
			return pl.failedFrom(correlatedErr(se.Pos, "it reads the left side outside its WHERE"), sq.Alias, "")
		}
		return nil, scope{}, err
	}
	// r's columns: the subquery's own items (a * among them is several),
	// the keys, then (with a residual) its FROM's columns
	total := len(r.schema().Fields)
	own := 0
	if len(residual) > 0 {
		if own, err = pl.ownColumns(sel, r, total); err != nil {
			return pl.failedFrom(err, sq.Alias, "")
		}
	}
	width := total - len(innerKeys) - own
	fields := slices.Clone(r.schema().Fields)
	if sq.Alias != nil && len(sq.Alias.Columns) > 0 {
		if len(sq.Alias.Columns) != width {
			return pl.failedFrom(planErr(domain.CodeNumColumnsMismatch, sq.Alias.Pos, "the alias %s names %d columns, the query has %d", qual, len(sq.Alias.Columns), width), sq.Alias, "")
		}
		for i, c := range sq.Alias.Columns {
			fields[i].Name = c.Name
		}
		r = &renameOp{child: r, out: domain.NewSchema(fields...)}
	}
	lw := len(ls.schema.Fields)
	// what the join's output is read as: the left's columns and the
	// subquery's items, its keys and FROM columns hidden (the residual, the
	// rest of the tie, reads the left's columns and the FROM's instead; a
	// name both have must be qualified there)
	hidden := func(i int) domain.Field {
		return domain.Field{Name: "__lateral" + strconv.Itoa(i), Type: fields[i].Type, Nullable: true}
	}
	items := ls.concat(qualified(domain.NewSchema(fields[:width]...), qual))
	for i := width; i < total; i++ {
		items.schema.Fields, items.quals = append(items.schema.Fields, hidden(i)), append(items.quals, "")
	}
	kind := "INNER"
	switch {
	case outerJoin || global:
		kind = "LEFT"
	case len(innerKeys) == 0:
		kind = "CROSS"
	}
	jo := &joinOp{kind: kind, l: left, r: r, out: items.schema}
	for i, k := range outerKeys {
		x, err := outer.compile(k)
		if err != nil {
			return pl.failedFrom(err, sq.Alias, "")
		}
		ri := width + i
		rt := fields[ri].Type
		t, ok := commonType(x.typ(), rt, true)
		if !ok {
			return pl.failedFrom(planErr(domain.CodeDatatypeMismatch, k.Position(), "cannot compare %s with the subquery's %s", x.typ(), rt), sq.Alias, "")
		}
		jo.lkeys = append(jo.lkeys, implicit(x, t, k.Position()))
		jo.rkeys = append(jo.rkeys, implicit(&colNode{idx: ri, t: rt}, t, k.Position()))
	}
	var conds []node
	if len(residual) > 0 {
		isc, err := pl.probeFrom(sel.From)
		if err != nil {
			return nil, scope{}, err
		}
		tie := scope{schema: domain.Schema{Fields: slices.Clone(ls.schema.Fields)}, quals: slices.Clone(ls.quals)}
		for i := 0; i < total-own; i++ {
			tie.schema.Fields, tie.quals = append(tie.schema.Fields, hidden(i)), append(tie.quals, "")
		}
		tie.schema.Fields, tie.quals = append(tie.schema.Fields, isc.schema.Fields...), append(tie.quals, isc.quals...)
		c, err := pl.compile(andAll(residual), tie, nil)
		if err == nil {
			c, err = asPredicate(c, andAll(residual), "WHERE")
		}
		if err != nil {
			return pl.failedFrom(err, sq.Alias, "")
		}
		conds = append(conds, c.root)
	}
	out := scope{schema: domain.Schema{Fields: slices.Clone(items.schema.Fields[:lw+width])}, quals: slices.Clone(items.quals[:lw+width])}
	if on != nil && outerJoin {
		c, err := pl.compile(on, items, nil)
		if err == nil {
			c, err = asPredicate(c, on, "ON")
		}
		if err != nil {
			return nil, scope{}, err
		}
		conds = append(conds, c.root)
	}
	jo.cond = andNodes(conds)
	// the output: the left's columns and the items; an aggregate over no
	// rows where a global aggregate matched nothing
	var empty op
	if global {
		none := *sel
		none.From, none.Where = sel.From, &syntax.Literal{Pos: pos, Kind: syntax.BoolLit, Text: "FALSE"}
		if empty, err = pl.query(&syntax.Query{Pos: q.Pos, Body: &none}); err != nil {
			return pl.failedFrom(correlatedErr(pos, "it reads the left side outside its WHERE"), sq.Alias, "")
		}
		pl.subqueries = append(pl.subqueries, empty)
	}
	exprs := make([]node, lw+width)
	for i := range exprs {
		exprs[i] = &colNode{idx: i, t: items.schema.Fields[i].Type}
		if empty != nil && i >= lw {
			matched := &colNode{idx: lw + width, t: fields[width].Type} // a key: NULL only where nothing matched
			exprs[i] = &emptyDefaultNode{x: exprs[i], matched: matched, empty: empty, col: i - lw, run: pl.run, pos: pos}
		}
	}
	var o op = &projectOp{child: jo, exprs: exprs, out: out.schema}
	if on != nil && !outerJoin {
		c, err := pl.compile(on, out, nil)
		if err == nil {
			c, err = asPredicate(c, on, "ON")
		}
		if err != nil {
			return nil, scope{}, err
		}
		o = &filterOp{child: o, pred: c.root}
	}
	return o, out, nil
}

// lateralSelect plans a LATERAL subquery without FROM: its items are
// columns added to each left row (NULL where ON does not hold, with LEFT
// JOIN LATERAL).
func (pl *planner) lateralSelect(left op, ls scope, sq *syntax.SubqueryRef, sel *syntax.Select, outer *compiler, outerJoin bool, on syntax.Expr) (op, scope, error) {
	qual := aliasName(sq.Alias)
	if sel.Where != nil || sel.GroupBy != nil || sel.Having != nil {
		return pl.failedFrom(correlatedErr(sq.Pos, "a LATERAL subquery without FROM may only select"), sq.Alias, "")
	}
	exprs := make([]node, 0, len(ls.schema.Fields)+len(sel.Items))
	for i, f := range ls.schema.Fields {
		exprs = append(exprs, &colNode{idx: i, t: f.Type})
	}
	var added []domain.Field
	for _, it := range sel.Items {
		x, err := outer.compile(it.Expr)
		if err != nil {
			return pl.failedFrom(err, sq.Alias, "")
		}
		name := outputName(it.Expr)
		if it.Alias != nil {
			name = it.Alias.Name
		}
		exprs = append(exprs, x)
		added = append(added, domain.Field{Name: name, Type: x.typ(), Nullable: true})
	}
	if sq.Alias != nil && len(sq.Alias.Columns) > 0 {
		if len(sq.Alias.Columns) != len(added) {
			return pl.failedFrom(planErr(domain.CodeNumColumnsMismatch, sq.Alias.Pos, "the alias %s names %d columns, the query has %d", qual, len(sq.Alias.Columns), len(added)), sq.Alias, "")
		}
		for i, c := range sq.Alias.Columns {
			added[i].Name = c.Name
		}
	}
	out := ls.concat(qualified(domain.NewSchema(added...), qual))
	var o op = &projectOp{child: left, exprs: exprs, out: out.schema}
	if on == nil {
		return o, out, nil
	}
	c, err := pl.compile(on, out, nil)
	if err == nil {
		c, err = asPredicate(c, on, "ON")
	}
	if err != nil {
		return nil, scope{}, err
	}
	if !outerJoin {
		return &filterOp{child: o, pred: c.root}, out, nil
	}
	masked := make([]node, len(out.schema.Fields))
	for i, f := range out.schema.Fields {
		masked[i] = &colNode{idx: i, t: f.Type}
		if i >= len(ls.schema.Fields) {
			masked[i] = &maskNode{x: masked[i], cond: c.root}
		}
	}
	return &projectOp{child: o, exprs: masked, out: out.schema}, out, nil
}

// andNodes is the conjunction of predicates (nil for none).
func andNodes(ps []node) node {
	if len(ps) == 0 {
		return nil
	}
	out := ps[0]
	for _, p := range ps[1:] {
		out = &logicNode{and: true, l: out, r: p}
	}
	return out
}

// maskNode is x where cond holds, NULL elsewhere.
type maskNode struct{ x, cond node }

func (n *maskNode) typ() domain.Type { return n.x.typ() }
func (n *maskNode) mayFail() bool    { return n.x.mayFail() || n.cond.mayFail() }
func (n *maskNode) eval(b *domain.Batch) (*domain.Column, error) {
	cols, err := evalAll([]node{n.x, n.cond}, b)
	if err != nil {
		return nil, err
	}
	x, c := cols[0], cols[1]
	var keep []int
	for i := range b.Len() {
		if c.Kind == domain.KindBool && c.Ints[i] == 1 && !isNullAt(c.Nulls, i) {
			keep = append(keep, i)
		}
	}
	if len(keep) == b.Len() {
		return x, nil
	}
	out := domain.NewColumn(x.Kind, b.Len())
	k := 0
	for i := range b.Len() {
		v := domain.Null()
		if k < len(keep) && keep[k] == i {
			v, k = x.Value(i), k+1
		}
		if err := out.Append(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// emptyDefaultNode is x where matched is not NULL, and elsewhere the value
// column col of empty (an aggregate over no rows: count 0).
type emptyDefaultNode struct {
	x, matched node
	empty      op
	col        int
	run        *runHolder
	pos        syntax.Pos
}

func (n *emptyDefaultNode) typ() domain.Type { return n.x.typ() }
func (n *emptyDefaultNode) mayFail() bool    { return true }
func (n *emptyDefaultNode) eval(b *domain.Batch) (*domain.Column, error) {
	cols, err := evalAll([]node{n.x, n.matched}, b)
	if err != nil {
		return nil, err
	}
	e, err := runOnce(n.run, n.empty, n.pos)
	if err != nil {
		return nil, err
	}
	none := domain.Null()
	if e.Len() == 1 {
		none = e.Columns[n.col].Value(0)
	}
	x, m := cols[0], cols[1]
	out := domain.NewColumn(x.Kind, b.Len())
	for i := range b.Len() {
		v := x.Value(i)
		if m.IsNull(i) {
			v = none
		}
		if err := out.Append(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
