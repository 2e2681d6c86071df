package sql

import (
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// PIVOT and UNPIVOT are planned as the queries Spark rewrites them to: a
// PIVOT is an aggregate grouped by the source's other columns, with each
// aggregate once per value under FILTER (WHERE col <=> value); an UNPIVOT is
// stack() over the unpivoted columns beside the others, without the rows
// whose values are all NULL unless INCLUDE NULLS.

// probeFrom plans FROM items only to learn what they hold, leaving the
// planner as it was (their inputs are read by the plan that follows).
func (pl *planner) probeFrom(items []syntax.FromItem) (scope, error) {
	inputs, subs, errs := len(pl.inputs), len(pl.subqueries), pl.errs
	pl.errs = nil
	_, sc, err := pl.fromList(items)
	pl.inputs, pl.subqueries, pl.errs = pl.inputs[:inputs], pl.subqueries[:subs], errs
	return sc, err
}

// probeSchema is the columns of a FROM item, by probeFrom.
func (pl *planner) probeSchema(it syntax.FromItem) (domain.Schema, error) {
	sc, err := pl.probeFrom([]syntax.FromItem{it})
	return sc.schema, err
}

func (pl *planner) pivot(pv *syntax.Pivot) (op, scope, error) {
	sch, err := pl.probeSchema(pv.Source)
	if err != nil {
		return pl.failedFrom(err, pv.Alias, "")
	}
	if hasMarker(sch) {
		o, sc := opaque(aliasName(pv.Alias))
		return o, sc, nil
	}
	used := map[string]bool{}
	for _, c := range pv.For {
		used[strings.ToLower(c.Parts[len(c.Parts)-1].Name)] = true
	}
	for _, a := range pv.Aggs {
		if _, ok := a.Expr.(*syntax.FuncCall); !ok {
			return pl.failedFrom(planErr(domain.CodeUnsupportedQuery, a.Pos, "PIVOT needs aggregate functions, found %s", a.Expr), pv.Alias, "")
		}
		syntax.Inspect(a.Expr, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.ColumnRef); ok {
				used[strings.ToLower(c.Parts[len(c.Parts)-1].Name)] = true
			}
			return true
		})
	}
	sel := &syntax.Select{Pos: pv.Pos, From: []syntax.FromItem{pv.Source}}
	var group []syntax.Expr
	for _, f := range sch.Fields {
		if !used[strings.ToLower(f.Name)] {
			c := &syntax.ColumnRef{Pos: pv.Pos, Parts: []*syntax.Ident{{Pos: pv.Pos, Name: f.Name}}}
			group = append(group, c)
			sel.Items = append(sel.Items, &syntax.SelectItem{Pos: pv.Pos, Expr: c})
		}
	}
	for _, v := range pv.In {
		if len(v.Values) != len(pv.For) {
			return pl.failedFrom(planErr(domain.CodeNumColumnsMismatch, v.Pos, "PIVOT FOR %d columns, a value of %d", len(pv.For), len(v.Values)), pv.Alias, "")
		}
		var cond syntax.Expr
		for k, c := range pv.For {
			eq := &syntax.Binary{Pos: v.Pos, Op: "<=>", L: c, R: v.Values[k]}
			if cond == nil {
				cond = eq
			} else {
				cond = &syntax.Binary{Pos: v.Pos, Op: "AND", L: cond, R: eq}
			}
		}
		for _, a := range pv.Aggs {
			call := *a.Expr.(*syntax.FuncCall)
			filter := cond // this value's, and this aggregate's own
			if call.Filter != nil {
				filter = &syntax.Binary{Pos: v.Pos, Op: "AND", L: call.Filter, R: cond}
			}
			call.Filter = filter
			name := pivotValueName(v)
			if len(pv.Aggs) > 1 {
				agg := a.Expr.String()
				if a.Alias != nil {
					agg = a.Alias.Name
				}
				name += "_" + agg
			}
			sel.Items = append(sel.Items, &syntax.SelectItem{Pos: v.Pos, Expr: &call, Alias: &syntax.Ident{Pos: v.Pos, Name: name}})
		}
	}
	if len(group) > 0 {
		sel.GroupBy = &syntax.GroupBy{Pos: pv.Pos, Items: group}
	}
	o, err := pl.selectBlock(sel, nil)
	if err != nil {
		return nil, scope{}, err
	}
	return pl.aliased(o, pv.Alias, "")
}

// pivotValueName names the columns of a PIVOT value: its alias, or its
// text (a string without its quotes).
func pivotValueName(v *syntax.PivotValue) string {
	if v.Alias != nil {
		return v.Alias.Name
	}
	parts := make([]string, len(v.Values))
	for i, e := range v.Values {
		if l, ok := e.(*syntax.Literal); ok && l.Kind == syntax.StringLit {
			parts[i] = l.Value
		} else {
			parts[i] = e.String()
		}
	}
	return strings.Join(parts, "_")
}

func (pl *planner) unpivot(up *syntax.Unpivot) (op, scope, error) {
	sch, err := pl.probeSchema(up.Source)
	if err != nil {
		return pl.failedFrom(err, up.Alias, "")
	}
	if hasMarker(sch) {
		o, sc := opaque(aliasName(up.Alias))
		return o, sc, nil
	}
	pos := up.Pos
	unpivoted := map[string]bool{}
	args := []syntax.Expr{&syntax.Literal{Pos: pos, Kind: syntax.NumberLit, Text: strconv.Itoa(len(up.In))}}
	for _, set := range up.In {
		if len(set.Columns) != len(up.Values) {
			return pl.failedFrom(planErr(domain.CodeNumColumnsMismatch, set.Pos, "UNPIVOT into %d value columns, a set of %d", len(up.Values), len(set.Columns)), up.Alias, "")
		}
		var names []string
		for _, c := range set.Columns {
			name := c.Parts[len(c.Parts)-1].Name
			unpivoted[strings.ToLower(name)] = true
			names = append(names, name)
		}
		label := strings.Join(names, "_")
		if set.Alias != nil {
			label = set.Alias.Name
		}
		args = append(args, &syntax.Literal{Pos: set.Pos, Kind: syntax.StringLit, Value: label})
		for _, c := range set.Columns {
			args = append(args, c)
		}
	}
	inner := &syntax.Select{Pos: pos, From: []syntax.FromItem{up.Source}}
	for _, f := range sch.Fields {
		if !unpivoted[strings.ToLower(f.Name)] {
			inner.Items = append(inner.Items, &syntax.SelectItem{Pos: pos, Expr: &syntax.ColumnRef{Pos: pos, Parts: []*syntax.Ident{{Pos: pos, Name: f.Name}}}})
		}
	}
	stack := &syntax.FuncCall{Pos: pos, Name: &syntax.Name{Pos: pos, Parts: []*syntax.Ident{{Pos: pos, Name: "stack"}}}, Args: args}
	inner.Items = append(inner.Items, &syntax.SelectItem{Pos: pos, Expr: stack, AliasColumns: append([]*syntax.Ident{up.Name}, up.Values...)})
	q := &syntax.Query{Pos: pos, Body: inner}
	if !up.IncludeNulls {
		var allNull syntax.Expr
		for _, v := range up.Values {
			isNull := &syntax.Is{Pos: pos, X: &syntax.ColumnRef{Pos: pos, Parts: []*syntax.Ident{v}}, What: "NULL"}
			if allNull == nil {
				allNull = isNull
			} else {
				allNull = &syntax.Binary{Pos: pos, Op: "AND", L: allNull, R: isNull}
			}
		}
		outer := &syntax.Select{Pos: pos, Items: []*syntax.SelectItem{{Pos: pos, Expr: &syntax.Star{Pos: pos}}},
			From:  []syntax.FromItem{&syntax.SubqueryRef{Pos: pos, Query: q}},
			Where: &syntax.Unary{Pos: pos, Op: "NOT", X: &syntax.Paren{Pos: pos, X: allNull}}}
		q = &syntax.Query{Pos: pos, Body: outer}
	}
	o, err := pl.query(q)
	if err != nil {
		return nil, scope{}, err
	}
	return pl.aliased(o, up.Alias, "")
}

func aliasName(a *syntax.Alias) string {
	if a == nil {
		return ""
	}
	return a.Name.Name
}

// sample plans TABLESAMPLE as Spark samples: n ROWS is the first n rows;
// n PERCENT and BUCKET x OUT OF y keep each row with that probability
// (rand(seed) below it, seeded by REPEATABLE), so the size varies.
func (pl *planner) sample(t *syntax.TableRef) (op, scope, error) {
	s, pos := t.Sample, t.Sample.Pos
	src := *t
	src.Sample, src.Alias = nil, nil
	q := &syntax.Query{Pos: pos, Body: &syntax.Select{Pos: pos, Items: []*syntax.SelectItem{{Pos: pos, Expr: &syntax.Star{Pos: pos}}}, From: []syntax.FromItem{&src}}}
	if s.Unit == "ROWS" {
		q.Limit, q.LimitPos = s.Size, pos
	} else {
		var frac syntax.Expr = &syntax.Binary{Pos: pos, Op: "/", L: s.Size, R: &syntax.Literal{Pos: pos, Kind: syntax.NumberLit, Text: "100.0"}}
		if s.Unit == "" {
			frac = &syntax.Binary{Pos: pos, Op: "/", L: s.Bucket, R: s.Buckets}
		}
		rand := &syntax.FuncCall{Pos: pos, Name: &syntax.Name{Pos: pos, Parts: []*syntax.Ident{{Pos: pos, Name: "rand"}}}}
		if s.Seed != nil {
			rand.Args = []syntax.Expr{s.Seed}
		}
		q.Body.(*syntax.Select).Where = &syntax.Binary{Pos: pos, Op: "<", L: rand, R: frac}
	}
	o, err := pl.query(q)
	if err != nil {
		return nil, scope{}, err
	}
	return pl.aliased(o, t.Alias, t.Name.Last().Name)
}
