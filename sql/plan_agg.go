package sql

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// exprCalls collects the function calls of e that pick selects, without
// entering subqueries (they are their own query).
func exprCalls(e syntax.Expr, pick func(*syntax.FuncCall) bool, into *[]*syntax.FuncCall, seen map[string]bool) {
	if e == nil {
		return
	}
	syntax.Inspect(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Subquery, *syntax.Exists:
			return false
		case *syntax.In:
			if n.Query != nil {
				exprCalls(n.X, pick, into, seen)
				return false
			}
		case *syntax.FuncCall:
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

func isGroupAggregate(f *syntax.FuncCall) bool { return isAggregateCall(f) }
func isWindowCall(f *syntax.FuncCall) bool     { return f.Over != nil }

// aggregateCalls lists the aggregate calls of the select list, HAVING,
// QUALIFY and ORDER BY, each once.
func aggregateCalls(s *syntax.Select, items []item, orderBy []*syntax.OrderItem) []*syntax.FuncCall {
	var calls []*syntax.FuncCall
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
	var wins []*syntax.FuncCall
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

func needsAggregate(s *syntax.Select, items []item, orderBy []*syntax.OrderItem) bool {
	return s.GroupBy != nil || len(aggregateCalls(s, items, orderBy)) > 0
}

// aggregate plans GROUP BY (or a global aggregate) and HAVING. The scope
// after it holds the group keys (a key that is a column keeps its name and
// qualifier, so the select list reads it as before) and the aggregate
// results; subst puts them in place of the expressions they stand for, and
// reports a column that is neither grouped nor aggregated as
// MISSING_AGGREGATION.
func (pl *planner) aggregate(s *syntax.Select, items []item, orderBy []*syntax.OrderItem, src op, sc scope) (op, scope, func(syntax.Expr) (node, error), error) {
	keysMark := pl.mark()
	keyExprs, sets, err := pl.groupKeys(s, items, sc)
	if err != nil {
		return nil, scope{}, nil, err
	}
	// a key that puts a row in several groups (a sliding window) or whose
	// value depends on other rows (a session window): an operator under
	// the aggregation gives each row its windows, for the key to read
	windowAt := slices.IndexFunc(keyExprs, isSlidingWindow)
	if windowAt >= 0 {
		if src, sc, err = pl.slidingWindows(keyExprs, windowAt, src, sc); err != nil {
			return nil, scope{}, nil, err
		}
	} else if windowAt = slices.IndexFunc(keyExprs, isSessionWindow); windowAt >= 0 {
		if src, sc, err = pl.sessions(keyExprs, windowAt, src, sc); err != nil {
			return nil, scope{}, nil, err
		}
	}
	ag := &aggOp{child: src, global: s.GroupBy == nil, sets: sets}
	var post scope
	keyIndex := map[string]int{}
	for i, k := range keyExprs {
		var key node
		if i == windowAt {
			key = &colNode{idx: len(sc.schema.Fields) - 1, t: sc.schema.Fields[len(sc.schema.Fields)-1].Type}
		} else {
			c, err := pl.compile(k, sc, nil)
			if err != nil {
				return nil, scope{}, nil, err
			}
			key = c.root
		}
		ag.keys = append(ag.keys, key)
		name, qual := "__k"+strconv.Itoa(i), ""
		if w := timeWindowName(k); w != "" {
			name = w // window.start reads it, as in Spark
		}
		if ref, ok := k.(*syntax.ColumnRef); ok {
			if idx, used, err := (&compiler{in: sc.schema, quals: sc.quals}).resolveColumn(ref.Parts); err == nil && used == len(ref.Parts) && !isMarker(sc.schema.Fields[idx]) {
				name, qual = sc.schema.Fields[idx].Name, sc.quals[idx]
			}
		}
		post.schema.Fields = append(post.schema.Fields, domain.Field{Name: name, Type: key.typ(), Nullable: true})
		post.quals = append(post.quals, qual)
		keyIndex[exprKey(k)] = i
	}
	// keys with errors (PlanQueryAll): what is grouped is not known
	doubtfulKeys := pl.doubted(keysMark)
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
	gid := -1 // the column of grouping_id, with grouping sets
	if sets != nil {
		gid = len(post.schema.Fields)
		post.schema.Fields = append(post.schema.Fields, domain.Field{Name: "__grouping_id", Type: domain.TypeInt64})
		post.quals = append(post.quals, "")
	}
	ag.out = post.schema
	pre := &compiler{in: sc.schema, quals: sc.quals}
	postC := &compiler{in: post.schema, quals: post.quals}
	subst := func(e syntax.Expr) (node, error) {
		switch e := e.(type) {
		case *syntax.FuncCall:
			if i, ok := aggIndex[exprKey(e)]; ok && e.Over == nil {
				return &colNode{idx: i, t: post.schema.Fields[i].Type}, nil
			}
			if n := strings.ToLower(e.Name.Last().Name); n == "grouping" || n == "grouping_id" {
				g, err := groupingCall(e, n, gid, keyIndex, len(keyExprs))
				if err != nil && doubtfulKeys {
					return unknownValue(), nil
				}
				return g, err
			}
		case *syntax.ColumnRef:
			if i, ok := keyIndex[exprKey(e)]; ok {
				// a key as written (a struct's field too: GROUP BY e.a), or
				// one that failed, reported where it is grouped by
				return &colNode{idx: i, t: post.schema.Fields[i].Type}, nil
			}
			if _, _, err := postC.resolveColumn(e.Parts); err == nil {
				return nil, nil
			}
			if idx, _, err := pre.resolveColumn(e.Parts); err == nil {
				if isMarker(sc.schema.Fields[idx]) || doubtfulKeys {
					return unknownValue(), nil // grouped or not, who knows
				}
				return nil, planErr(domain.CodeMissingAggregation, e.Pos, "`%s` is neither in GROUP BY nor inside an aggregate", syntax.Format(e))
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
		mark := pl.mark()
		c, err := pl.compile(s.Having, post, pl.aliasSubst(items, post, subst))
		if err != nil {
			return nil, scope{}, nil, err
		}
		if c, err = asPredicate(c, s.Having, "HAVING"); err != nil {
			if !pl.keep(mark, err) {
				return nil, scope{}, nil, err
			}
		} else {
			out = &filterOp{child: out, pred: c.root}
		}
	}
	return out, post, subst, nil
}

// groupKeys lists the GROUP BY expressions: ordinals and select-list
// aliases stand for their items, GROUP BY ALL for every item that holds no
// aggregate. With GROUPING SETS, ROLLUP or CUBE it also lists the sets, each
// the indexes of the keys it groups by (nil: one set of every key).
func (pl *planner) groupKeys(s *syntax.Select, items []item, sc scope) ([]syntax.Expr, [][]int, error) {
	if s.GroupBy == nil {
		return nil, nil, nil
	}
	if s.GroupBy.All {
		var keys []syntax.Expr
		for _, it := range items {
			var calls []*syntax.FuncCall
			exprCalls(it.expr, func(f *syntax.FuncCall) bool { return isGroupAggregate(f) || isWindowCall(f) }, &calls, map[string]bool{})
			if len(calls) == 0 {
				keys = append(keys, it.expr)
			}
		}
		return keys, nil, nil
	}
	g := &grouping{index: map[string]int{}}
	resolve := func(k syntax.Expr) (syntax.Expr, error) {
		if n, ok := ordinal(k); ok {
			if n < 1 || n > len(items) {
				err := planErr(domain.CodeGroupOrdinalRange, k.Position(), "GROUP BY %d, but the select list has %d columns", n, len(items))
				if pl.errs == nil {
					return nil, err
				}
				// either way, what is grouped is not known
				if opaqueItems(items) { // the list's length is not known
					pl.errs.doubt++
				} else {
					pl.report(err)
				}
				return k, nil // a constant key, as good as none
			}
			return items[n-1].expr, nil
		}
		return withAlias(k, items, sc), nil
	}
	// each item is a list of alternative sets; the sets of the clause are
	// every combination of one alternative per item
	sets := [][]int{{}}
	var plain []syntax.Expr
	for _, k := range s.GroupBy.Items {
		var alts [][]syntax.Expr
		switch k := k.(type) {
		case *syntax.GroupingSets:
			alts = k.Sets
		case *syntax.FuncCall:
			switch n := strings.ToLower(k.Name.Last().Name); {
			case n == "rollup" && len(k.Name.Parts) == 1:
				alts = rollup(k.Args)
			case n == "cube" && len(k.Name.Parts) == 1:
				alts = cube(k.Args)
			}
		}
		if alts == nil {
			alts = [][]syntax.Expr{{k}}
			plain = append(plain, k)
		}
		var next [][]int
		for _, set := range sets {
			for _, alt := range alts {
				combined := append([]int{}, set...)
				for _, e := range alt {
					r, err := resolve(e)
					if err != nil {
						return nil, nil, err
					}
					combined = append(combined, g.key(r))
				}
				next = append(next, combined)
			}
		}
		sets = next
	}
	if s.GroupBy.With != "" {
		// GROUP BY a, b WITH ROLLUP | CUBE is ROLLUP(a, b) | CUBE(a, b)
		var alts [][]syntax.Expr
		if strings.EqualFold(s.GroupBy.With, "WITH ROLLUP") || strings.EqualFold(s.GroupBy.With, "ROLLUP") {
			alts = rollup(plain)
		} else {
			alts = cube(plain)
		}
		sets = nil
		for _, alt := range alts {
			var set []int
			for _, e := range alt {
				r, err := resolve(e)
				if err != nil {
					return nil, nil, err
				}
				set = append(set, g.key(r))
			}
			sets = append(sets, set)
		}
	}
	if len(sets) == 1 && len(sets[0]) == len(g.keys) {
		sets = nil // plain GROUP BY
	}
	return g.keys, sets, nil
}

// grouping collects the distinct keys of a GROUP BY.
type grouping struct {
	keys  []syntax.Expr
	index map[string]int
}

func (g *grouping) key(e syntax.Expr) int {
	k := exprKey(e)
	if i, ok := g.index[k]; ok {
		return i
	}
	g.index[k] = len(g.keys)
	g.keys = append(g.keys, e)
	return len(g.keys) - 1
}

// rollup is ROLLUP(a, b): the sets (a, b), (a), ().
func rollup(args []syntax.Expr) [][]syntax.Expr {
	var out [][]syntax.Expr
	for n := len(args); n >= 0; n-- {
		out = append(out, args[:n])
	}
	return out
}

// cube is CUBE(a, b): every subset, (a, b), (a), (b), ().
func cube(args []syntax.Expr) [][]syntax.Expr {
	var out [][]syntax.Expr
	n := len(args)
	for mask := (1 << n) - 1; mask >= 0; mask-- {
		var set []syntax.Expr
		for i := 0; i < n; i++ {
			if mask&(1<<(n-1-i)) != 0 {
				set = append(set, args[i])
			}
		}
		out = append(out, set)
	}
	return out
}

// aggOp groups its input by keys and computes aggregates per group. A global
// aggregate (no GROUP BY) has one group even over no rows.
type aggOp struct {
	child  op
	keys   []node
	aggs   []*Aggregate
	global bool
	sets   [][]int // grouping sets (indexes of keys), nil for one set of every key
	out    domain.Schema
}

func (o *aggOp) schema() domain.Schema { return o.out }
func (o *aggOp) children() []op        { return []op{o.child} }
func (o *aggOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	keys, err := evalAll(o.keys, b)
	if err != nil {
		return nil, err
	}
	if o.sets == nil {
		all := make([]int, len(keys))
		for i := range all {
			all[i] = i
		}
		return o.group(b, keys, all, -1)
	}
	// each grouping set is a GROUP BY of its own; their rows one after the
	// other, with the grouping id that tells them apart
	var parts []*domain.Batch
	for _, set := range o.sets {
		part, err := o.group(b, keys, set, groupingID(set, len(keys)))
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return domain.ConcatByPosition(o.out, parts...)
}

// group computes the aggregates of b grouped by the keys of set; the other
// keys are NULL. gid >= 0 adds the grouping id column.
func (o *aggOp) group(b *domain.Batch, keys []*domain.Column, set []int, gid int64) (*domain.Batch, error) {
	setKeys := make([]*domain.Column, len(set))
	for i, k := range set {
		setKeys[i] = keys[k]
	}
	groups := make([]int32, b.Len())
	var firsts []int
	if len(set) == 0 {
		if b.Len() > 0 || o.global || o.sets != nil {
			firsts = []int{0}
		}
	} else {
		index := map[string]int32{}
		var buf []byte
		for i := 0; i < b.Len(); i++ {
			buf = AppendRowKey(buf[:0], setKeys, i)
			g, ok := index[string(buf)]
			if !ok {
				g = int32(len(firsts))
				index[string(buf)] = g
				firsts = append(firsts, i)
			}
			groups[i] = g
		}
	}
	n := len(firsts)
	cols := make([]*domain.Column, 0, len(o.out.Fields))
	for k, c := range keys {
		kind := o.out.Fields[k].Type.Kind
		if slices.Contains(set, k) && b.Len() > 0 {
			cols = append(cols, fill(gatherCol(c, firsts), n, kind))
			continue
		}
		nulls := newCol(kind, n)
		nulls.Nulls = allNulls(n)
		cols = append(cols, nulls)
	}
	for _, a := range o.aggs {
		st := a.NewState()
		if err := st.Add(b, groups, n); err != nil {
			return nil, err
		}
		c, err := st.Result()
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if gid >= 0 {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = gid
		}
		cols = append(cols, &domain.Column{Kind: domain.KindInt64, Ints: ids})
	}
	return batchOf(o.out, cols, n)
}

// groupingID is Spark's grouping_id of a set: a bit per key, the first key
// the highest, set when the key is not grouped (aggregated over).
func groupingID(set []int, keys int) int64 {
	var id int64
	for k := 0; k < keys; k++ {
		if !slices.Contains(set, k) {
			id |= 1 << (keys - 1 - k)
		}
	}
	return id
}

// groupingCall compiles grouping(key) (1 when the row aggregates over key)
// and grouping_id() (the bits of every key) or grouping_id(k1, k2, ...)
// (the bits of the keys named, the first the highest) over the grouping id
// column.
func groupingCall(e *syntax.FuncCall, name string, gid int, keyIndex map[string]int, keys int) (node, error) {
	if gid < 0 {
		return nil, planErr(domain.CodeUnsupportedQuery, e.Pos, "%s needs GROUPING SETS, ROLLUP or CUBE in GROUP BY", name)
	}
	col := &colNode{idx: gid, t: domain.TypeInt64}
	if name == "grouping_id" && len(e.Args) == 0 {
		return col, nil
	}
	if name == "grouping" && len(e.Args) != 1 {
		return nil, wrongArgs(e, name, "1")
	}
	shifts := make([]int64, len(e.Args)) // where each named key's bit is in the grouping id column
	for i, arg := range e.Args {
		k, ok := keyIndex[exprKey(arg)]
		if !ok {
			return nil, planErr(domain.CodeUnsupportedQuery, arg.Position(), "%s(%s): the argument must be a GROUP BY key", name, syntax.Format(arg))
		}
		shifts[i] = int64(keys - 1 - k)
	}
	return &fnNode{args: []node{col}, t: domain.TypeInt64, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Ints {
			var id int64
			for _, shift := range shifts {
				id = id<<1 | (v>>shift)&1
			}
			out.Ints[i] = id
		}
		return nil
	}}, nil
}

// compileAggregate compiles an aggregate call whose arguments read the
// scope (and, for an aggregate over a window, what subst stands in for).
//
// With PlanQueryAll it never fails: an aggregate with errors (recorded, and
// its arguments compiled for theirs), or whose arguments read something
// unknown, is of unknown type.
func (pl *planner) compileAggregate(call *syntax.FuncCall, sc scope, subst func(syntax.Expr) (node, error)) (*Aggregate, error) {
	mark := pl.mark()
	a, err := compileAggregate(call, sc.schema, func(e syntax.Expr) (*Compiled, error) { return pl.compile(e, sc, subst) })
	if pl.errs == nil {
		return a, err
	}
	if err != nil {
		pl.keep(mark, err)
		pl.compiler(sc, subst).compileRest(call)
		return &Aggregate{call: call, name: strings.ToLower(call.Name.Last().Name), t: unknownType}, nil
	}
	if pl.doubted(mark) {
		a.t = unknownType
	}
	return a, nil
}
