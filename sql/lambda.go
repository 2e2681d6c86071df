package sql

import (
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Lambdas run column at a time too: a higher-order function flattens the
// elements of every row's array into one batch (with, for each element, the
// values of the outer columns the lambda reads, gathered from its row), so the
// lambda body is evaluated once per batch, not once per element.

func init() {
	register(map[string]builtin{
		"transform":        {minArgs: 2, maxArgs: 2, lambdas: true, compile: compileTransform},
		"filter":           {minArgs: 2, maxArgs: 2, lambdas: true, compile: compileTransform},
		"exists":           {minArgs: 2, maxArgs: 2, lambdas: true, compile: compileTransform},
		"forall":           {minArgs: 2, maxArgs: 2, lambdas: true, compile: compileTransform},
		"aggregate":        {minArgs: 3, maxArgs: 4, lambdas: true, compile: compileReduce},
		"reduce":           {minArgs: 3, maxArgs: 4, lambdas: true, compile: compileReduce},
		"zip_with":         {minArgs: 3, maxArgs: 3, lambdas: true, compile: compileZipWith},
		"map_zip_with":     {minArgs: 3, maxArgs: 3, lambdas: true, compile: compileMapZipWith},
		"map_filter":       {minArgs: 2, maxArgs: 2, lambdas: true, compile: compileMapLambda},
		"transform_values": {minArgs: 2, maxArgs: 2, lambdas: true, compile: compileMapLambda},
		"transform_keys":   {minArgs: 2, maxArgs: 2, lambdas: true, compile: compileMapLambda},
		"array_sort":       {minArgs: 1, maxArgs: 2, lambdas: true, compile: compileArraySort},
	})
}

// lambdaFn is a compiled lambda. Its body reads a batch whose columns are
// the lambda's parameters followed by the columns of the enclosing scope.
type lambdaFn struct {
	body   node
	params int
	outer  []domain.Field
	used   []bool // the outer columns the body reads; the others are not gathered
}

// lambda compiles argument i of e as a lambda whose parameters have the given
// types; arities lists the numbers of parameters the function accepts, and
// the types of the first n are used for a lambda of n parameters.
func (c *compiler) lambda(e *syntax.FuncCall, i int, name string, types []domain.Type, arities ...int) (*lambdaFn, error) {
	l, ok := e.Args[i].(*syntax.Lambda)
	if !ok {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs a lambda function (x -> ...) as argument %d", name, i+1)
	}
	if !slices.Contains(arities, len(l.Params)) {
		return nil, exprErr(domain.CodeWrongNumArgs, l.Pos, "the lambda of %s takes %v parameter(s), it has %d", name, arities, len(l.Params))
	}
	fields := make([]domain.Field, 0, len(l.Params)+len(c.in.Fields))
	doubted := c.argsDoubted()
	for j, p := range l.Params {
		for _, q := range l.Params[:j] {
			if strings.EqualFold(p.Name, q.Name) {
				return nil, exprErr(domain.CodeInvalidParameterValue, p.Pos, "the lambda has two parameters named %s", p.Name)
			}
		}
		t := types[j]
		if doubted {
			t = unknownType // typed after an argument that failed
		}
		fields = append(fields, domain.Field{Name: p.Name, Type: t, Nullable: true})
	}
	fields = append(fields, c.in.Fields...)
	n := len(l.Params)
	fn := &lambdaFn{params: n, outer: c.in.Fields, used: make([]bool, len(c.in.Fields))}
	lc := &compiler{in: domain.Schema{Fields: fields}, params: n, sess: c.sess, errs: c.errs}
	if c.quals != nil {
		lc.quals = append(make([]string, n), c.quals...)
	}
	// the body reads the enclosing columns it names, and so does the lambda
	// around it, if any
	lc.seen = func(j int) {
		if j >= n {
			fn.used[j-n] = true
			if c.seen != nil {
				c.seen(j - n)
			}
		}
	}
	body, err := lc.compile(l.Body)
	if err != nil {
		return nil, err
	}
	fn.body = body
	return fn, nil
}

// eval runs the body over one value of each parameter per element; rowOf
// gives, per element, the row of b its outer values come from.
func (f *lambdaFn) eval(b *domain.Batch, params []*domain.Column, rowOf []int) (*domain.Column, error) {
	cols := make([]*domain.Column, 0, len(params)+len(f.outer))
	cols = append(cols, params...)
	for j, fd := range f.outer {
		if f.used[j] {
			cols = append(cols, gatherCol(b.Columns[j], rowOf))
			continue
		}
		c := newCol(fd.Type.Kind, len(rowOf))
		c.Nulls = allNulls(len(rowOf))
		cols = append(cols, c)
	}
	fields := make([]domain.Field, len(params), len(cols))
	for j, p := range params {
		fields[j] = domain.Field{Name: "_", Type: domain.Type{Kind: p.Kind}, Nullable: true}
	}
	fields = append(fields, f.outer...)
	batch, err := domain.BatchOf(domain.Schema{Fields: fields}, cols)
	if err != nil {
		return nil, err
	}
	return f.body.eval(batch)
}

// valuesColumn makes a column of kind k holding vals.
func valuesColumn(k domain.Kind, vals []domain.Value) *domain.Column {
	c := newCol(k, len(vals))
	for i, v := range vals {
		putValue(c, i, v)
	}
	return c
}

// flat is the elements of a column of arrays, flattened: the element values,
// the row each came from and its position in its array; row r's elements are
// vals[start[r]:start[r+1]], none when the row is NULL.
type flat struct {
	vals  []domain.Value
	rowOf []int
	pos   []int64
	start []int
}

func flatten(col *domain.Column, rows int) flat {
	total := 0
	for r := 0; r < rows; r++ {
		if !col.IsNull(r) {
			total += len(col.Values[r].AsList())
		}
	}
	f := flat{vals: make([]domain.Value, 0, total), rowOf: make([]int, 0, total), pos: make([]int64, 0, total), start: make([]int, rows+1)}
	for r := 0; r < rows; r++ {
		f.start[r] = len(f.vals)
		if col.IsNull(r) {
			continue
		}
		for k, v := range col.Values[r].AsList() {
			f.vals = append(f.vals, v)
			f.rowOf = append(f.rowOf, r)
			f.pos = append(f.pos, int64(k))
		}
	}
	f.start[rows] = len(f.vals)
	return f
}

// hofNode is a higher-order function of one array or map argument: it
// flattens the argument, runs the lambda once and folds the results back per
// row with combine.
type hofNode struct {
	x       node
	fn      *lambdaFn
	t       domain.Type
	isMap   bool
	combine func(row []domain.Value, res *domain.Column, from int) (domain.Value, error)
}

func (n *hofNode) typ() domain.Type { return n.t }
func (n *hofNode) mayFail() bool    { return true }

func (n *hofNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	f := flatten(x, rows)
	var params []*domain.Column
	xt := n.x.typ()
	if n.isMap {
		keys, vals := make([]domain.Value, len(f.vals)), make([]domain.Value, len(f.vals))
		for i, en := range f.vals {
			keys[i], vals[i] = en.Fields()[0], en.Fields()[1]
		}
		params = []*domain.Column{valuesColumn(keyOf(xt).Kind, keys), valuesColumn(elemOf(xt).Kind, vals)}
	} else {
		params = []*domain.Column{valuesColumn(elemOf(xt).Kind, f.vals), {Kind: domain.KindInt64, Ints: f.pos}}
	}
	res, err := n.fn.eval(b, params[:n.fn.params], f.rowOf)
	if err != nil {
		return nil, err
	}
	out := newCol(n.t.Kind, rows)
	for r := 0; r < rows; r++ {
		if x.IsNull(r) {
			putValue(out, r, domain.Null())
			continue
		}
		v, err := n.combine(f.vals[f.start[r]:f.start[r+1]], res, f.start[r])
		if err != nil {
			return nil, err
		}
		putValue(out, r, v)
	}
	return out, nil
}

// boolResult is the lambda's result k as true, false or NULL (-1).
func boolResult(res *domain.Column, k int) int {
	if res.IsNull(k) {
		return -1
	}
	return int(res.Ints[k])
}

func compileTransform(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	arities := []int{1, 2}
	if name == "exists" || name == "forall" {
		arities = []int{1}
	}
	fn, err := c.lambda(e, 1, name, []domain.Type{elemOf(arr.typ()), domain.TypeInt64}, arities...)
	if err != nil {
		return nil, err
	}
	bt := fn.body.typ()
	if name != "transform" {
		if bt.Kind == domain.KindNull {
			fn.body = retype(fn.body, domain.TypeBool)
		} else if bt.Kind != domain.KindBool {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "the lambda of %s must return a boolean, it returns %s", name, bt)
		}
	}
	n := &hofNode{x: arr, fn: fn}
	switch name {
	case "transform":
		n.t = domain.ListOf(bt)
		n.combine = func(row []domain.Value, res *domain.Column, from int) (domain.Value, error) {
			out := make([]domain.Value, len(row))
			for k := range out {
				out[k] = res.Value(from + k)
			}
			return domain.List(out...), nil
		}
	case "filter":
		n.t = arr.typ()
		n.combine = func(row []domain.Value, res *domain.Column, from int) (domain.Value, error) {
			out := []domain.Value{}
			for k, v := range row {
				if boolResult(res, from+k) == 1 {
					out = append(out, v)
				}
			}
			return domain.List(out...), nil
		}
	default:
		// exists: true if the lambda is true for an element, else NULL if
		// it is NULL for one, else false; forall is its dual
		decide := 1
		if name == "forall" {
			decide = 0
		}
		n.t = domain.TypeBool
		n.combine = func(row []domain.Value, res *domain.Column, from int) (domain.Value, error) {
			sawNull := false
			for k := range row {
				switch boolResult(res, from+k) {
				case decide:
					return domain.Bool(decide == 1), nil
				case -1:
					sawNull = true
				}
			}
			if sawNull {
				return domain.Null(), nil
			}
			return domain.Bool(decide != 1), nil
		}
	}
	return n, nil
}

func compileMapLambda(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	m, err := c.nested(e, 0, domain.KindMap, name)
	if err != nil {
		return nil, err
	}
	kt, vt := keyOf(m.typ()), elemOf(m.typ())
	fn, err := c.lambda(e, 1, name, []domain.Type{kt, vt}, 2)
	if err != nil {
		return nil, err
	}
	bt := fn.body.typ()
	n := &hofNode{x: m, fn: fn, isMap: true}
	p := e.Pos
	switch name {
	case "map_filter":
		if bt.Kind == domain.KindNull {
			fn.body = retype(fn.body, domain.TypeBool)
		} else if bt.Kind != domain.KindBool {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "the lambda of %s must return a boolean, it returns %s", name, bt)
		}
		n.t = m.typ()
		n.combine = func(row []domain.Value, res *domain.Column, from int) (domain.Value, error) {
			out := []domain.Value{}
			for k, en := range row {
				if boolResult(res, from+k) == 1 {
					out = append(out, en)
				}
			}
			return domain.Map(out...), nil
		}
	case "transform_values":
		n.t = domain.MapOf(kt, bt)
		n.combine = func(row []domain.Value, res *domain.Column, from int) (domain.Value, error) {
			out := make([]domain.Value, len(row))
			for k, en := range row {
				out[k] = domain.MapEntry(en.Fields()[0], res.Value(from+k))
			}
			return domain.Map(out...), nil
		}
	default:
		if err := mapKeyCheck(bt, e.Args[1].Position(), name); err != nil {
			return nil, err
		}
		n.t = domain.MapOf(bt, vt)
		n.combine = func(row []domain.Value, res *domain.Column, from int) (domain.Value, error) {
			keys, vals := make([]domain.Value, len(row)), make([]domain.Value, len(row))
			for k, en := range row {
				keys[k], vals[k] = res.Value(from+k), en.Fields()[1]
			}
			return buildMap(keys, vals, p)
		}
	}
	return n, nil
}

// aggregateNode folds each row's array with merge, one array position at a
// time: the merge lambda runs once per position over every row that has an
// element there.
type aggregateNode struct {
	arr, zero     node
	merge, finish *lambdaFn
	t             domain.Type
}

func (n *aggregateNode) typ() domain.Type { return n.t }
func (n *aggregateNode) mayFail() bool    { return true }

func (n *aggregateNode) eval(b *domain.Batch) (*domain.Column, error) {
	arr, err := n.arr.eval(b)
	if err != nil {
		return nil, err
	}
	zero, err := n.zero.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	acc := gatherCol(zero, everyRow(rows))
	if acc.Nulls == nil {
		acc.Nulls = make([]bool, rows)
	}
	et := elemOf(n.arr.typ())
	for k := 0; ; k++ {
		var sel []int
		var elems []domain.Value
		for r := 0; r < rows; r++ {
			if !arr.IsNull(r) && k < len(arr.Values[r].AsList()) {
				sel = append(sel, r)
				elems = append(elems, arr.Values[r].AsList()[k])
			}
		}
		if len(sel) == 0 {
			break
		}
		res, err := n.merge.eval(b, []*domain.Column{gatherCol(acc, sel), valuesColumn(et.Kind, elems)}, sel)
		if err != nil {
			return nil, err
		}
		scatter(acc, res, sel)
	}
	var live []int // the rows whose array is not NULL
	for r := 0; r < rows; r++ {
		if !arr.IsNull(r) {
			live = append(live, r)
		}
	}
	if n.finish != nil && len(live) > 0 {
		res, err := n.finish.eval(b, []*domain.Column{gatherCol(acc, live)}, live)
		if err != nil {
			return nil, err
		}
		acc = newCol(n.t.Kind, rows)
		acc.Nulls = make([]bool, rows)
		scatter(acc, res, live)
	}
	out := newCol(n.t.Kind, rows)
	out.Nulls = allNulls(rows)
	if len(live) > 0 {
		scatter(out, gatherCol(acc, live), live)
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileAggregate: aggregate(arr, zero, (acc, x) -> merge[, acc -> finish]).
// As in Spark, merge must return the type of zero.
func compileReduce(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	zero, err := c.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	zt := zero.typ()
	merge, err := c.lambda(e, 2, name, []domain.Type{zt, elemOf(arr.typ())}, 2)
	if err != nil {
		return nil, err
	}
	if mt := merge.body.typ(); !mt.Equal(zt) {
		if mt.Kind != domain.KindNull {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[2].Position(), "the merge lambda of %s returns %s, the initial value is %s: they must have one type", name, mt, zt)
		}
		merge.body = retype(merge.body, zt)
	}
	n := &aggregateNode{arr: arr, zero: zero, merge: merge, t: zt}
	if len(e.Args) == 4 {
		if n.finish, err = c.lambda(e, 3, name, []domain.Type{zt}, 1); err != nil {
			return nil, err
		}
		n.t = n.finish.body.typ()
	}
	return n, nil
}

// zipWithNode is zip_with(a, b, (x, y) -> ...): the shorter array is padded
// with NULLs.
type zipWithNode struct {
	a, b node
	fn   *lambdaFn
	t    domain.Type
}

func (n *zipWithNode) typ() domain.Type { return n.t }
func (n *zipWithNode) mayFail() bool    { return true }

func (n *zipWithNode) eval(b *domain.Batch) (*domain.Column, error) {
	ac, err := n.a.eval(b)
	if err != nil {
		return nil, err
	}
	bc, err := n.b.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	var xs, ys []domain.Value
	var rowOf []int
	start := make([]int, rows+1)
	for r := 0; r < rows; r++ {
		start[r] = len(xs)
		if ac.IsNull(r) || bc.IsNull(r) {
			continue
		}
		al, bl := ac.Values[r].AsList(), bc.Values[r].AsList()
		for k := 0; k < max(len(al), len(bl)); k++ {
			x, y := domain.Null(), domain.Null()
			if k < len(al) {
				x = al[k]
			}
			if k < len(bl) {
				y = bl[k]
			}
			xs, ys, rowOf = append(xs, x), append(ys, y), append(rowOf, r)
		}
	}
	start[rows] = len(xs)
	res, err := n.fn.eval(b, []*domain.Column{valuesColumn(elemOf(n.a.typ()).Kind, xs), valuesColumn(elemOf(n.b.typ()).Kind, ys)}, rowOf)
	if err != nil {
		return nil, err
	}
	out := newCol(domain.KindList, rows)
	for r := 0; r < rows; r++ {
		if ac.IsNull(r) || bc.IsNull(r) {
			putValue(out, r, domain.Null())
			continue
		}
		items := make([]domain.Value, start[r+1]-start[r])
		for k := range items {
			items[k] = res.Value(start[r] + k)
		}
		out.Values[r] = domain.List(items...)
	}
	return out, nil
}

func compileZipWith(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	a, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	b, err := c.nested(e, 1, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	fn, err := c.lambda(e, 2, name, []domain.Type{elemOf(a.typ()), elemOf(b.typ())}, 2)
	if err != nil {
		return nil, err
	}
	return &zipWithNode{a: a, b: b, fn: fn, t: domain.ListOf(fn.body.typ())}, nil
}

// compileArraySort: array_sort(arr) sorts ascending with NULLs last;
// array_sort(arr, (l, r) -> cmp) sorts by a comparator returning a negative,
// zero or positive integer. The comparator runs once per batch over every
// pair of elements of each row (arrays are short; this keeps the lambda
// column at a time).
func compileArraySort(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	et := elemOf(arr.typ())
	if len(e.Args) == 1 {
		if _, ok := e.Args[0].(*syntax.Lambda); ok {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s takes the array first", name)
		}
		if !orderable(et) {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s cannot order elements of type %s", name, et)
		}
		return &valuesNode{args: []node{arr}, t: arr.typ(), row: func(a []domain.Value) (domain.Value, error) {
			return domain.List(sortValues(a[0].AsList(), true, false)...), nil
		}}, nil
	}
	fn, err := c.lambda(e, 1, name, []domain.Type{et, et}, 2)
	if err != nil {
		return nil, err
	}
	if k := fn.body.typ().Kind; k != domain.KindInt64 {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "the comparator of %s must return an integer, it returns %s", name, fn.body.typ())
	}
	return &sortByNode{arr: arr, fn: fn, pos: e.Pos}, nil
}

type sortByNode struct {
	arr node
	fn  *lambdaFn
	pos syntax.Pos
}

func (n *sortByNode) typ() domain.Type { return n.arr.typ() }
func (n *sortByNode) mayFail() bool    { return true }

func (n *sortByNode) eval(b *domain.Batch) (*domain.Column, error) {
	arr, err := n.arr.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	var ls, rs []domain.Value
	var rowOf []int
	start := make([]int, rows+1)
	for r := 0; r < rows; r++ {
		start[r] = len(ls)
		if arr.IsNull(r) {
			continue
		}
		items := arr.Values[r].AsList()
		for _, x := range items {
			for _, y := range items {
				ls, rs, rowOf = append(ls, x), append(rs, y), append(rowOf, r)
			}
		}
	}
	start[rows] = len(ls)
	k := elemOf(n.arr.typ()).Kind
	res, err := n.fn.eval(b, []*domain.Column{valuesColumn(k, ls), valuesColumn(k, rs)}, rowOf)
	if err != nil {
		return nil, err
	}
	out := newCol(domain.KindList, rows)
	for r := 0; r < rows; r++ {
		if arr.IsNull(r) {
			putValue(out, r, domain.Null())
			continue
		}
		items := arr.Values[r].AsList()
		order := make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		var bad error
		slices.SortStableFunc(order, func(i, j int) int {
			at := start[r] + i*len(items) + j
			if res.IsNull(at) {
				if bad == nil {
					bad = exprErr(domain.CodeComparatorReturnsNull, n.pos, "the comparator returned NULL for %s and %s", items[i], items[j])
				}
				return 0
			}
			return int(max(-1, min(1, res.Ints[at])))
		})
		if bad != nil {
			return nil, bad
		}
		sorted := make([]domain.Value, len(items))
		for i, o := range order {
			sorted[i] = items[o]
		}
		out.Values[r] = domain.List(sorted...)
	}
	return out, nil
}

// mapZipWithNode is map_zip_with(m1, m2, (k, v1, v2) -> ...): for each key
// of either map (m1's in their order, then m2's others), the lambda of the
// key and its value in each map (NULL where a map lacks it).
type mapZipWithNode struct {
	a, b node
	fn   *lambdaFn
	t    domain.Type
}

func (n *mapZipWithNode) typ() domain.Type { return n.t }
func (n *mapZipWithNode) mayFail() bool    { return true }

func (n *mapZipWithNode) eval(b *domain.Batch) (*domain.Column, error) {
	cols, err := evalAll([]node{n.a, n.b}, b)
	if err != nil {
		return nil, err
	}
	ac, bc := cols[0], cols[1]
	rows := b.Len()
	var ks, xs, ys []domain.Value
	var rowOf []int
	start := make([]int, rows+1)
	for r := 0; r < rows; r++ {
		start[r] = len(ks)
		if ac.IsNull(r) || bc.IsNull(r) {
			continue
		}
		index := map[string]int{} // key -> its place among this row's keys
		for _, side := range []int{0, 1} {
			m := ac.Values[r]
			if side == 1 {
				m = bc.Values[r]
			}
			for _, e := range m.Entries() {
				k, v := e.Fields()[0], e.Fields()[1]
				id := string(appendValueKey(nil, k))
				at, seen := index[id]
				if !seen {
					at = len(ks)
					index[id] = at
					ks, xs, ys, rowOf = append(ks, k), append(xs, domain.Null()), append(ys, domain.Null()), append(rowOf, r)
				}
				if side == 0 {
					xs[at] = v
				} else {
					ys[at] = v
				}
			}
		}
	}
	start[rows] = len(ks)
	mt, bt := n.a.typ(), n.b.typ()
	res, err := n.fn.eval(b, []*domain.Column{valuesColumn(keyOf(mt).Kind, ks), valuesColumn(elemOf(mt).Kind, xs), valuesColumn(elemOf(bt).Kind, ys)}, rowOf)
	if err != nil {
		return nil, err
	}
	out := newCol(domain.KindMap, rows)
	for r := 0; r < rows; r++ {
		if ac.IsNull(r) || bc.IsNull(r) {
			putValue(out, r, domain.Null())
			continue
		}
		entries := make([]domain.Value, start[r+1]-start[r])
		for k := range entries {
			entries[k] = domain.MapEntry(ks[start[r]+k], res.Value(start[r]+k))
		}
		out.Values[r] = domain.Map(entries...)
	}
	return out, nil
}

func compileMapZipWith(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	a, err := c.nested(e, 0, domain.KindMap, name)
	if err != nil {
		return nil, err
	}
	b, err := c.nested(e, 1, domain.KindMap, name)
	if err != nil {
		return nil, err
	}
	if ka, kb := keyOf(a.typ()), keyOf(b.typ()); !ka.Equal(kb) {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "%s needs maps of one key type, found %s and %s", name, ka, kb)
	}
	fn, err := c.lambda(e, 2, name, []domain.Type{keyOf(a.typ()), elemOf(a.typ()), elemOf(b.typ())}, 3)
	if err != nil {
		return nil, err
	}
	return &mapZipWithNode{a: a, b: b, fn: fn, t: domain.MapOf(keyOf(a.typ()), fn.body.typ())}, nil
}
