package sql

import (
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// exprCalls collects the function calls of e that pick selects, without
// entering subqueries (they are their own query).
func exprCalls(e Expr, pick func(*FuncCall) bool, into *[]*FuncCall, seen map[string]bool) {
	if e == nil {
		return
	}
	Inspect(e, func(n Node) bool {
		switch n := n.(type) {
		case *Subquery, *Exists:
			return false
		case *In:
			if n.Query != nil {
				exprCalls(n.X, pick, into, seen)
				return false
			}
		case *FuncCall:
			if pick(n) {
				if k := exprKey(n); !seen[k] {
					seen[k] = true
					*into = append(*into, n)
				}
				// an aggregate's arguments hold no other aggregate; a window
				// call's arguments may (SUM(COUNT(*)) OVER ()), found by the
				// aggregate pass, which does not pick window calls
				return false
			}
		}
		return true
	})
}

func isGroupAggregate(f *FuncCall) bool { return isAggregateCall(f) }
func isWindowCall(f *FuncCall) bool     { return f.Over != nil }

// aggregateCalls lists the aggregate calls of the select list, HAVING,
// QUALIFY and ORDER BY, each once.
func aggregateCalls(s *Select, items []item, orderBy []*OrderItem) []*FuncCall {
	var calls []*FuncCall
	seen := map[string]bool{}
	for _, it := range items {
		exprCalls(it.expr, isGroupAggregate, &calls, seen)
	}
	exprCalls(s.Having, isGroupAggregate, &calls, seen)
	exprCalls(s.Qualify, isGroupAggregate, &calls, seen)
	for _, o := range orderBy {
		exprCalls(o.Expr, isGroupAggregate, &calls, seen)
	}
	// aggregates inside window calls' arguments: SUM(COUNT(*)) OVER ()
	var wins []*FuncCall
	for _, it := range items {
		exprCalls(it.expr, isWindowCall, &wins, map[string]bool{})
	}
	for _, w := range wins {
		for _, a := range w.Args {
			exprCalls(a, isGroupAggregate, &calls, seen)
		}
		if w.Over != nil {
			for _, p := range w.Over.PartitionBy {
				exprCalls(p, isGroupAggregate, &calls, seen)
			}
			for _, o := range w.Over.OrderBy {
				exprCalls(o.Expr, isGroupAggregate, &calls, seen)
			}
		}
	}
	return calls
}

func needsAggregate(s *Select, items []item, orderBy []*OrderItem) bool {
	return s.GroupBy != nil || len(aggregateCalls(s, items, orderBy)) > 0
}

// aggregate plans GROUP BY (or a global aggregate) and HAVING. The scope
// after it holds the group keys (a key that is a column keeps its name and
// qualifier, so the select list reads it as before) and the aggregate
// results; subst puts them in place of the expressions they stand for, and
// reports a column that is neither grouped nor aggregated as
// MISSING_AGGREGATION.
func (pl *planner) aggregate(s *Select, items []item, orderBy []*OrderItem, src op, sc scope) (op, scope, func(Expr) (node, error), error) {
	keyExprs, err := groupKeys(s, items, sc)
	if err != nil {
		return nil, scope{}, nil, err
	}
	ag := &aggOp{child: src, global: s.GroupBy == nil}
	var post scope
	keyIndex := map[string]int{}
	for i, k := range keyExprs {
		c, err := pl.compile(k, sc, nil)
		if err != nil {
			return nil, scope{}, nil, err
		}
		ag.keys = append(ag.keys, c.root)
		name, qual := "__k"+strconv.Itoa(i), ""
		if ref, ok := k.(*ColumnRef); ok {
			if idx, used, err := (&compiler{in: sc.schema, quals: sc.quals}).resolveColumn(ref.Parts); err == nil && used == len(ref.Parts) {
				name, qual = sc.schema.Fields[idx].Name, sc.quals[idx]
			}
		}
		post.schema.Fields = append(post.schema.Fields, domain.Field{Name: name, Type: c.Type(), Nullable: true})
		post.quals = append(post.quals, qual)
		keyIndex[exprKey(k)] = i
	}
	calls := aggregateCalls(s, items, orderBy)
	aggIndex := map[string]int{}
	for i, call := range calls {
		a, err := pl.compileAggregate(call, sc, nil)
		if err != nil {
			return nil, scope{}, nil, err
		}
		ag.aggs = append(ag.aggs, a)
		post.schema.Fields = append(post.schema.Fields, domain.Field{Name: "__a" + strconv.Itoa(i), Type: a.Type(), Nullable: true})
		post.quals = append(post.quals, "")
		aggIndex[exprKey(call)] = len(keyExprs) + i
	}
	ag.out = post.schema
	pre := &compiler{in: sc.schema, quals: sc.quals}
	postC := &compiler{in: post.schema, quals: post.quals}
	subst := func(e Expr) (node, error) {
		switch e := e.(type) {
		case *FuncCall:
			if i, ok := aggIndex[exprKey(e)]; ok && e.Over == nil {
				return &colNode{idx: i, t: post.schema.Fields[i].Type}, nil
			}
		case *ColumnRef:
			if _, _, err := postC.resolveColumn(e.Parts); err == nil {
				return nil, nil
			}
			if _, _, err := pre.resolveColumn(e.Parts); err == nil {
				return nil, planErr(domain.CodeMissingAggregation, e.Pos, "`%s` is neither in GROUP BY nor inside an aggregate", Format(e))
			}
			return nil, nil
		}
		if i, ok := keyIndex[exprKey(e)]; ok {
			return &colNode{idx: i, t: post.schema.Fields[i].Type}, nil
		}
		return nil, nil
	}
	var out op = ag
	if s.Having != nil {
		c, err := pl.compile(withAliases(s.Having, items, post), post, subst)
		if err != nil {
			return nil, scope{}, nil, err
		}
		if c, err = asPredicate(c, s.Having, "HAVING"); err != nil {
			return nil, scope{}, nil, err
		}
		out = &filterOp{child: out, pred: c.root}
	}
	return out, post, subst, nil
}

// groupKeys lists the GROUP BY expressions: ordinals and select-list
// aliases stand for their items, GROUP BY ALL for every item that holds no
// aggregate.
func groupKeys(s *Select, items []item, sc scope) ([]Expr, error) {
	if s.GroupBy == nil {
		return nil, nil
	}
	if s.GroupBy.With != "" {
		return nil, planErr(domain.CodeUnsupportedQuery, s.GroupBy.Pos, "GROUP BY ... WITH %s is not supported yet; list the groups with UNION ALL", s.GroupBy.With)
	}
	if s.GroupBy.All {
		var keys []Expr
		for _, it := range items {
			var calls []*FuncCall
			exprCalls(it.expr, func(f *FuncCall) bool { return isGroupAggregate(f) || isWindowCall(f) }, &calls, map[string]bool{})
			if len(calls) == 0 {
				keys = append(keys, it.expr)
			}
		}
		return keys, nil
	}
	var keys []Expr
	for _, k := range s.GroupBy.Items {
		switch k := k.(type) {
		case *GroupingSets:
			return nil, planErr(domain.CodeUnsupportedQuery, k.Pos, "GROUPING SETS are not supported yet; list the groups with UNION ALL")
		case *FuncCall:
			if n := strings.ToLower(k.Name.Last().Name); n == "rollup" || n == "cube" {
				return nil, planErr(domain.CodeUnsupportedQuery, k.Pos, "%s is not supported yet; list the groups with UNION ALL", strings.ToUpper(n))
			}
		}
		if n, ok := ordinal(k); ok {
			if n < 1 || n > len(items) {
				return nil, planErr(domain.CodeGroupOrdinalRange, k.Position(), "GROUP BY %d, but the select list has %d columns", n, len(items))
			}
			keys = append(keys, items[n-1].expr)
			continue
		}
		keys = append(keys, withAliases(k, items, sc))
	}
	return keys, nil
}

// aggOp groups its input by keys and computes aggregates per group. A global
// aggregate (no GROUP BY) has one group even over no rows.
type aggOp struct {
	child  op
	keys   []node
	aggs   []*Aggregate
	global bool
	out    domain.Schema
}

func (o *aggOp) schema() domain.Schema { return o.out }
func (o *aggOp) rowWise() bool         { return false }
func (o *aggOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	keys, err := rowKeys(o.keys, b)
	if err != nil {
		return nil, err
	}
	groups := make([]int32, b.Len())
	var firsts []int
	if len(o.keys) == 0 {
		if b.Len() > 0 || o.global {
			firsts = []int{0}
		}
	} else {
		index := map[string]int32{}
		var buf []byte
		for i := 0; i < b.Len(); i++ {
			buf = appendRowKey(buf[:0], keys, i)
			g, ok := index[string(buf)]
			if !ok {
				g = int32(len(firsts))
				index[string(buf)] = g
				firsts = append(firsts, i)
			}
			groups[i] = g
		}
	}
	cols := make([]*domain.Column, 0, len(o.out.Fields))
	for k, c := range keys {
		cols = append(cols, fill(gatherCol(c, firsts), len(firsts), o.out.Fields[k].Type.Kind))
	}
	for _, a := range o.aggs {
		st := a.NewState()
		if err := st.Add(b, groups, len(firsts)); err != nil {
			return nil, err
		}
		c, err := st.Result()
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return batchOf(o.out, cols, len(firsts))
}

// compileAggregate compiles an aggregate call whose arguments read the
// scope (and, for an aggregate over a window, what subst stands in for).
func (pl *planner) compileAggregate(call *FuncCall, sc scope, subst func(Expr) (node, error)) (*Aggregate, error) {
	return compileAggregate(call, sc.schema, func(e Expr) (*Compiled, error) { return pl.compile(e, sc, subst) })
}
