package sql

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// windowCalls lists the window function calls (f(...) OVER ...) of the
// select list, QUALIFY and ORDER BY, each once.
func windowCalls(items []item, qualify syntax.Expr, orderBy []*syntax.OrderItem) []*syntax.FuncCall {
	var calls []*syntax.FuncCall
	seen := map[string]bool{}
	for _, it := range items {
		exprCalls(it.expr, isWindowCall, &calls, seen)
	}
	exprCalls(qualify, isWindowCall, &calls, seen)
	for _, o := range orderBy {
		exprCalls(o.Expr, isWindowCall, &calls, seen)
	}
	return calls
}

// rankingFuncs are the window functions that are not aggregates.
var rankingFuncs = map[string]bool{"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true,
	"cume_dist": true, "ntile": true, "lag": true, "lead": true, "nth_value": true}

// windows plans the window calls: each becomes a column appended to the
// scope, and subst puts the column in place of the call.
func (pl *planner) windows(s *syntax.Select, calls []*syntax.FuncCall, src op, sc scope, subst func(syntax.Expr) (node, error)) (op, scope, func(syntax.Expr) (node, error), error) {
	named := map[string]*syntax.WindowSpec{}
	for _, w := range s.Windows {
		named[strings.ToLower(w.Name.Name)] = w.Spec
	}
	wo := &windowOp{child: src}
	out := scope{schema: domain.NewSchema(append([]domain.Field{}, sc.schema.Fields...)...), quals: append([]string{}, sc.quals...)}
	index := map[string]int{}
	for i, call := range calls {
		var wf *windowFunc
		spec, err := resolveWindow(call.Over, named)
		if err == nil {
			wf, err = pl.windowFunc(call, spec, sc, subst)
		}
		if err != nil {
			if !pl.report(err) {
				return nil, scope{}, nil, err
			}
			pl.compiler(sc, subst).compileRest(call)
			wf = &windowFunc{name: strings.ToLower(call.Name.Last().Name), t: unknownType, pos: call.Pos}
		}
		wo.funcs = append(wo.funcs, wf)
		index[exprKey(call)] = len(out.schema.Fields)
		out.schema.Fields = append(out.schema.Fields, domain.Field{Name: "__w" + strconv.Itoa(i), Type: wf.t, Nullable: true})
		out.quals = append(out.quals, "")
	}
	wo.out = out.schema
	next := func(e syntax.Expr) (node, error) {
		if f, ok := e.(*syntax.FuncCall); ok && f.Over != nil {
			if i, ok := index[exprKey(f)]; ok {
				return &colNode{idx: i, t: out.schema.Fields[i].Type}, nil
			}
		}
		if subst != nil {
			return subst(e)
		}
		return nil, nil
	}
	return wo, out, next, nil
}

// resolveWindow merges OVER w or OVER (w ...) with the WINDOW clause.
func resolveWindow(spec *syntax.WindowSpec, named map[string]*syntax.WindowSpec) (*syntax.WindowSpec, error) {
	if spec.Name == nil {
		return spec, nil
	}
	base, ok := named[strings.ToLower(spec.Name.Name)]
	if !ok {
		return nil, planErr(domain.CodeUnsupportedQuery, spec.Name.Pos, "no window named %s in the WINDOW clause", spec.Name.Name)
	}
	base, err := resolveWindow(base, named)
	if err != nil {
		return nil, err
	}
	merged := *base
	if len(spec.PartitionBy) > 0 {
		merged.PartitionBy = spec.PartitionBy
	}
	if len(spec.OrderBy) > 0 {
		merged.OrderBy = spec.OrderBy
	}
	if spec.Frame != nil {
		merged.Frame = spec.Frame
	}
	return &merged, nil
}

// windowFunc is one window call, compiled.
type windowFunc struct {
	name      string
	partition []node
	order     []node
	orderKeys []sortKey
	args      []node     // ranking functions' arguments (lag's value, offset, default)
	agg       *Aggregate // an aggregate over the frame
	frame     frame
	// ignoreNulls: lag, lead and nth_value skip NULL values (IGNORE NULLS)
	ignoreNulls bool
	t           domain.Type
	pos         syntax.Pos
}

// frame is the rows an aggregate sees for the current row: ROWS offsets,
// or RANGE with UNBOUNDED / CURRENT ROW bounds (peers of the current row
// included).
type frame struct {
	rows                 bool
	startUnbounded       bool
	endUnbounded         bool
	startOffset, endOffs int64 // for ROWS: signed offsets (-n preceding, +n following)
	// for RANGE with offsets: the bound is a distance from the current row's
	// order key (signed as the offsets are, in the key's units)
	startRange, endRange bool
	startDist, endDist   float64
}

// windowFunc compiles a window call over its window. With PlanQueryAll it
// never fails: its errors are recorded, and a call with errors, or that
// reads something unknown, is of unknown type.
func (pl *planner) windowFunc(call *syntax.FuncCall, spec *syntax.WindowSpec, sc scope, subst func(syntax.Expr) (node, error)) (*windowFunc, error) {
	name := strings.ToLower(call.Name.Last().Name)
	wf := &windowFunc{name: name, pos: call.Pos}
	mark := pl.mark()
	defer func() {
		if pl.doubted(mark) {
			wf.t = unknownType
		}
	}()
	for _, p := range spec.PartitionBy {
		c, err := pl.compile(p, sc, subst)
		if err != nil {
			return nil, err
		}
		wf.partition = append(wf.partition, c.root)
	}
	for i, o := range spec.OrderBy {
		c, err := pl.compile(o.Expr, sc, subst)
		if err != nil {
			return nil, err
		}
		k := sortKey{col: i, desc: o.Desc, nullsFirst: !o.Desc}
		switch strings.ToUpper(o.Nulls) {
		case "FIRST":
			k.nullsFirst = true
		case "LAST":
			k.nullsFirst = false
		}
		wf.order = append(wf.order, c.root)
		wf.orderKeys = append(wf.orderKeys, k)
	}
	var orderTypes []domain.Type
	for _, o := range wf.order {
		orderTypes = append(orderTypes, o.typ())
	}
	fr, err := windowFrame(spec, orderTypes)
	if err != nil && !pl.keep(mark, err) {
		return nil, err
	}
	wf.frame = fr
	if rankingFuncs[name] {
		switch strings.ToUpper(call.Nulls) {
		case "":
		case "IGNORE NULLS", "RESPECT NULLS":
			if name != "lag" && name != "lead" && name != "nth_value" {
				err := planErr(domain.CodeUnsupportedCallSyntax, call.Pos, "%s does not take %s", name, call.Nulls)
				if !pl.report(err) {
					return nil, err
				}
			}
			wf.ignoreNulls = strings.EqualFold(call.Nulls, "IGNORE NULLS")
		}
		if len(spec.OrderBy) == 0 {
			err := planErr(domain.CodeUnsupportedQuery, call.Pos, "%s needs ORDER BY in its window", name)
			if !pl.report(err) {
				return nil, err
			}
		}
		argsMark := pl.mark()
		if err := pl.rankingArgs(wf, call, sc, subst); err != nil {
			if !pl.keep(argsMark, err) {
				return nil, err
			}
			pl.compiler(sc, subst).compileRest(call)
			wf.t = unknownType
		}
		return wf, nil
	}
	if !IsAggregate(name) {
		err := planErr(domain.CodeUnresolvedRoutine, call.Name.Pos, "`%s` is not a window or aggregate function", name)
		if !pl.report(err) {
			return nil, err
		}
		pl.compiler(sc, subst).compileRest(call)
		wf.t = unknownType
		return wf, nil
	}
	bare := *call
	bare.Over = nil
	a, err := pl.compileAggregate(&bare, sc, subst)
	if err != nil {
		return nil, err
	}
	wf.agg, wf.t = a, a.Type()
	return wf, nil
}

func windowFrame(spec *syntax.WindowSpec, orderTypes []domain.Type) (frame, error) {
	f := frame{startUnbounded: true, endUnbounded: len(spec.OrderBy) == 0}
	if spec.Frame == nil {
		return f, nil
	}
	f.rows = strings.EqualFold(spec.Frame.Unit, "ROWS")
	end := spec.Frame.End
	if end == nil {
		end = &syntax.FrameBound{Kind: "CURRENT ROW"}
	}
	// bound reads one bound: unbounded, the current row, a number of rows
	// (ROWS) or a distance in the order key (RANGE)
	bound := func(b *syntax.FrameBound) (unbounded, isRange bool, off int64, dist float64, err error) {
		switch b.Kind {
		case "UNBOUNDED PRECEDING", "UNBOUNDED FOLLOWING":
			return true, false, 0, 0, nil
		case "CURRENT ROW":
			return false, false, 0, 0, nil
		}
		sign := int64(1)
		if b.Kind == "PRECEDING" {
			sign = -1
		}
		if f.rows {
			n, ok := ordinal(b.Expr)
			if !ok || n < 0 {
				return false, false, 0, 0, planErr(domain.CodeUnsupportedQuery, b.Pos, "a ROWS frame offset must be a non-negative integer constant")
			}
			return false, false, sign * int64(n), 0, nil
		}
		d, err := rangeDistance(b, orderTypes)
		return false, true, 0, float64(sign) * d, err
	}
	var err error
	if f.startUnbounded, f.startRange, f.startOffset, f.startDist, err = bound(spec.Frame.Start); err != nil {
		return f, err
	}
	if f.endUnbounded, f.endRange, f.endOffs, f.endDist, err = bound(end); err != nil {
		return f, err
	}
	return f, nil
}

// rangeDistance is the distance of a RANGE frame bound, in the units of the
// one order key: a number for a numeric key, a day-time interval for a
// timestamp (in microseconds) or a date (in days).
func rangeDistance(b *syntax.FrameBound, orderTypes []domain.Type) (float64, error) {
	if len(orderTypes) != 1 {
		return 0, planErr(domain.CodeDatatypeMismatch, b.Pos, "a RANGE frame with an offset needs exactly one ORDER BY key, found %d", len(orderTypes))
	}
	c, err := Compile(b.Expr, domain.Schema{})
	if err != nil {
		return 0, err
	}
	col, err := c.Eval(domain.NoColumns(1))
	if err != nil {
		return 0, err
	}
	v := col.Value(0)
	key := orderTypes[0].Kind
	var d float64
	switch {
	case v.IsNull():
		return 0, planErr(domain.CodeDatatypeMismatch, b.Pos, "a RANGE frame offset cannot be NULL")
	case (key == domain.KindInt64 || key == domain.KindFloat64) && v.Kind() == domain.KindInt64:
		d = float64(v.AsInt())
	case (key == domain.KindInt64 || key == domain.KindFloat64) && v.Kind() == domain.KindFloat64:
		d = v.AsFloat()
	case key == domain.KindTimestamp && v.Kind() == domain.KindDayTimeInterval:
		d = float64(v.AsInt())
	case key == domain.KindDate && v.Kind() == domain.KindDayTimeInterval:
		d = float64(v.AsInt()) / float64(microsPerDay)
	case key == domain.KindDate && v.Kind() == domain.KindInt64:
		d = float64(v.AsInt())
	default:
		return 0, planErr(domain.CodeDatatypeMismatch, b.Pos, "a RANGE frame over %s cannot be offset by %s; use a number for numbers, a day-time INTERVAL for dates and timestamps", orderTypes[0], c.Type())
	}
	if d < 0 || math.IsNaN(d) {
		return 0, planErr(domain.CodeDatatypeMismatch, b.Pos, "a RANGE frame offset must not be negative")
	}
	return d, nil
}

func (pl *planner) rankingArgs(wf *windowFunc, call *syntax.FuncCall, sc scope, subst func(syntax.Expr) (node, error)) error {
	want := map[string][2]int{"row_number": {0, 0}, "rank": {0, 0}, "dense_rank": {0, 0}, "percent_rank": {0, 0},
		"cume_dist": {0, 0}, "ntile": {1, 1}, "lag": {1, 3}, "lead": {1, 3}, "nth_value": {2, 2}}[wf.name]
	if n := len(call.Args); n < want[0] || n > want[1] {
		return wrongArgs(call, wf.name, builtin{minArgs: want[0], maxArgs: want[1]}.arity())
	}
	for _, a := range call.Args {
		c, err := pl.compile(a, sc, subst)
		if err != nil {
			return err
		}
		wf.args = append(wf.args, c.root)
	}
	switch wf.name {
	case "row_number", "rank", "dense_rank", "ntile":
		wf.t = domain.TypeInt64
	case "percent_rank", "cume_dist":
		wf.t = domain.TypeFloat64
	case "lag", "lead", "nth_value":
		wf.t = wf.args[0].typ()
		if len(wf.args) == 3 {
			t, ok := commonType(wf.t, wf.args[2].typ(), false)
			if !ok {
				return planErr(domain.CodeDatatypeMismatch, call.Args[2].Position(), "the default of %s must have the type of its value, %s", wf.name, wf.t)
			}
			wf.t = t
			wf.args[0], wf.args[2] = implicit(wf.args[0], t, call.Pos), implicit(wf.args[2], t, call.Pos)
		}
	}
	for i := 1; i < len(wf.args) && i < 2; i++ {
		if wf.args[i].typ().Kind != domain.KindInt64 {
			return planErr(domain.CodeDatatypeMismatch, call.Args[i].Position(), "%s needs an integer offset", wf.name)
		}
	}
	if wf.name == "ntile" && wf.args[0].typ().Kind != domain.KindInt64 {
		return planErr(domain.CodeDatatypeMismatch, call.Args[0].Position(), "ntile needs an integer number of buckets")
	}
	return nil
}

// windowOp appends one column per window function to its input.
type windowOp struct {
	child op
	funcs []*windowFunc
	out   domain.Schema
}

func (o *windowOp) schema() domain.Schema { return o.out }
func (o *windowOp) children() []op        { return []op{o.child} }
func (o *windowOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	cols := append([]*domain.Column{}, b.Columns...)
	for _, f := range o.funcs {
		c, err := f.eval(b)
		if err != nil {
			return nil, err
		}
		cols = append(cols, fill(c, b.Len(), f.t.Kind))
	}
	return batchOf(o.out, cols, b.Len())
}

// eval sorts the rows by partition and order keys and computes the function
// over each partition, writing each row's value at its original position.
func (f *windowFunc) eval(b *domain.Batch) (*domain.Column, error) {
	n := b.Len()
	pk, err := evalAll(f.partition, b)
	if err != nil {
		return nil, err
	}
	ok, err := evalAll(f.order, b)
	if err != nil {
		return nil, err
	}
	part := make([]string, n)
	var buf []byte
	for i := 0; i < n; i++ {
		buf = AppendRowKey(buf[:0], pk, i)
		part[i] = string(buf)
	}
	cmps := make([]func(i, j int) int, len(ok))
	for k, key := range f.orderKeys {
		cmps[k] = columnOrder(ok[key.col], key.desc, key.nullsFirst)
	}
	orderCmp := func(i, j int) int {
		for _, c := range cmps {
			if r := c(i, j); r != 0 {
				return r
			}
		}
		return 0
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		if r := strings.Compare(part[i], part[j]); r != 0 {
			return r
		}
		return orderCmp(i, j)
	})
	out := newCol(f.t.Kind, n)
	out.Nulls = make([]bool, n)
	var args []*domain.Column
	if f.agg == nil {
		if args, err = evalAll(f.args, b); err != nil {
			return nil, err
		}
	}
	for start := 0; start < n; {
		end := start + 1
		for end < n && part[idx[end]] == part[idx[start]] {
			end++
		}
		rows := idx[start:end]
		if f.agg != nil {
			err = f.aggregate(b, rows, orderCmp, ok, out)
		} else {
			err = f.rank(rows, orderCmp, args, ok, out)
		}
		if err != nil {
			return nil, err
		}
		start = end
	}
	zeroNulls(out)
	return out, nil
}

// peersEnd is the end of the peer group (rows equal in the order keys) that
// starts at position i of rows.
func peersEnd(rows []int, i int, cmp func(a, b int) int) int {
	j := i + 1
	for j < len(rows) && cmp(rows[i], rows[j]) == 0 {
		j++
	}
	return j
}

func (f *windowFunc) rank(rows []int, cmp func(a, b int) int, args, orderKeys []*domain.Column, out *domain.Column) error {
	n := len(rows)
	switch f.name {
	case "row_number":
		for k, r := range rows {
			out.Ints[r] = int64(k + 1)
		}
	case "rank", "dense_rank", "percent_rank", "cume_dist":
		dense := int64(0)
		for i := 0; i < n; {
			j := peersEnd(rows, i, cmp)
			dense++
			for _, r := range rows[i:j] {
				switch f.name {
				case "rank":
					out.Ints[r] = int64(i + 1)
				case "dense_rank":
					out.Ints[r] = dense
				case "percent_rank":
					if n > 1 {
						out.Floats[r] = float64(i) / float64(n-1)
					}
				case "cume_dist":
					out.Floats[r] = float64(j) / float64(n)
				}
			}
			i = j
		}
	case "ntile":
		for k, r := range rows {
			if isNullAt(args[0].Nulls, r) || args[0].Ints[r] <= 0 {
				return planErr(domain.CodeInvalidParameterValue, f.pos, "ntile needs a positive number of buckets")
			}
			buckets := args[0].Ints[r]
			size, extra := int64(n)/buckets, int64(n)%buckets
			// the first extra buckets hold one row more
			pos := int64(k)
			if pos < extra*(size+1) {
				out.Ints[r] = pos/(size+1) + 1
			} else {
				out.Ints[r] = extra + (pos-extra*(size+1))/max(size, 1) + 1
			}
		}
	case "lag", "lead":
		for k, r := range rows {
			off := int64(1)
			if len(args) > 1 {
				if isNullAt(args[1].Nulls, r) {
					out.Nulls[r] = true
					continue
				}
				off = args[1].Ints[r]
			}
			step := int64(1)
			if f.name == "lag" {
				off, step = -off, -1
			}
			at := int64(k) + off
			if f.ignoreNulls && off != 0 {
				// the off-th row before (after) with a value
				at = -1
				for j, seen := int64(k)+step, int64(0); j >= 0 && j < int64(n); j += step {
					if !args[0].IsNull(rows[j]) {
						if seen++; seen == off*step {
							at = j
							break
						}
					}
				}
			}
			if at < 0 || at >= int64(n) {
				if len(args) == 3 {
					copyAt(out, r, args[2], r)
				} else {
					out.Nulls[r] = true
				}
				continue
			}
			copyAt(out, r, args[0], rows[at])
		}
	case "nth_value":
		dist := f.distances(rows, orderKeys)
		for k, r := range rows {
			if isNullAt(args[1].Nulls, r) || args[1].Ints[r] < 1 {
				return planErr(domain.CodeInvalidParameterValue, f.pos, "nth_value needs a positive position")
			}
			nth := args[1].Ints[r]
			lo, hi := f.frameOf(k, rows, cmp, dist)
			out.Nulls[r] = true
			for j := lo; j < hi; j++ {
				if f.ignoreNulls && args[0].IsNull(rows[j]) {
					continue
				}
				if nth--; nth == 0 {
					copyAt(out, r, args[0], rows[j])
					break
				}
			}
		}
	}
	return nil
}

// aggregate computes an aggregate over each row's frame within one
// partition (rows in window order).
func (f *windowFunc) aggregate(b *domain.Batch, rows []int, cmp func(a, b int) int, orderKeys []*domain.Column, out *domain.Column) error {
	n := len(rows)
	fr := f.frame
	value := func(sel []int) (*domain.Column, error) {
		st := f.agg.NewState()
		if err := st.Add(gather(b, sel), make([]int32, len(sel)), 1); err != nil {
			return nil, err
		}
		return st.Result()
	}
	switch {
	case fr.startUnbounded && fr.endUnbounded:
		c, err := value(rows)
		if err != nil {
			return err
		}
		for _, r := range rows {
			copyAt(out, r, c, 0)
		}
	case fr.startUnbounded && !fr.rows && !fr.endRange:
		// RANGE UNBOUNDED PRECEDING .. CURRENT ROW: a running value, the same
		// for all peers; folded in one state, a peer group at a time
		st := f.agg.NewState()
		for i := 0; i < n; {
			j := peersEnd(rows, i, cmp)
			if err := st.Add(gather(b, rows[i:j]), make([]int32, j-i), 1); err != nil {
				return err
			}
			c, err := st.Result()
			if err != nil {
				return err
			}
			for _, r := range rows[i:j] {
				copyAt(out, r, c, 0)
			}
			i = j
		}
	default:
		dist := f.distances(rows, orderKeys)
		for k, r := range rows {
			lo, hi := f.frameOf(k, rows, cmp, dist)
			var sel []int
			if lo < hi {
				sel = rows[lo:hi]
			}
			c, err := value(sel)
			if err != nil {
				return err
			}
			copyAt(out, r, c, 0)
		}
	}
	return nil
}

// distances prepares the RANGE offsets of the frame, when it has some.
func (f *windowFunc) distances(rows []int, orderKeys []*domain.Column) *rangeDistances {
	if !f.frame.startRange && !f.frame.endRange {
		return nil
	}
	return newRangeDistances(rows, orderKeys[0], f.orderKeys[0].desc)
}

// frameOf is the frame [lo, hi) of position k of a partition.
func (f *windowFunc) frameOf(k int, rows []int, cmp func(a, b int) int, dist *rangeDistances) (int, int) {
	fr, n := f.frame, len(rows)
	lo, hi := 0, n
	switch {
	case fr.startUnbounded:
	case fr.rows:
		lo = k + int(fr.startOffset)
	case fr.startRange:
		lo = dist.from(k, fr.startDist)
	default: // RANGE CURRENT ROW: the first peer
		lo = peersStart(rows, k, cmp)
	}
	switch {
	case fr.endUnbounded:
	case fr.rows:
		hi = k + int(fr.endOffs) + 1
	case fr.endRange:
		hi = dist.to(k, fr.endDist)
	default:
		hi = peersEnd(rows, k, cmp)
	}
	return max(lo, 0), min(hi, n)
}

// peersStart is the first position of the peer group of position i.
func peersStart(rows []int, i int, cmp func(a, b int) int) int {
	for i > 0 && cmp(rows[i-1], rows[i]) == 0 {
		i--
	}
	return i
}

// rangeDistances finds the rows of a partition within a distance of a
// row's order key. In "position" space (the key, negated when the order is
// descending) the partition's non-NULL keys ascend, and a frame of
// distances [start, end] from a row is the rows with positions in
// [pos + start, pos + end]; a row with a NULL key frames the NULL rows.
type rangeDistances struct {
	pos    []float64 // by position in the partition
	null   []bool
	lo, hi int // the non-NULL positions [lo, hi)
}

func newRangeDistances(rows []int, key *domain.Column, desc bool) *rangeDistances {
	d := &rangeDistances{pos: make([]float64, len(rows)), null: make([]bool, len(rows)), lo: -1}
	for i, r := range rows {
		if key.IsNull(r) {
			d.null[i] = true
			continue
		}
		if d.lo < 0 {
			d.lo = i
		}
		d.hi = i + 1
		v := float64(0)
		if key.Floats != nil {
			v = key.Floats[r]
		} else {
			v = float64(key.Ints[r])
		}
		if desc {
			v = -v
		}
		d.pos[i] = v
	}
	if d.lo < 0 {
		d.lo, d.hi = 0, 0
	}
	return d
}

// nullRun is the run of NULL-key positions around i.
func (d *rangeDistances) nullRun(i int) (int, int) {
	lo, hi := i, i+1
	for lo > 0 && d.null[lo-1] {
		lo--
	}
	for hi < len(d.null) && d.null[hi] {
		hi++
	}
	return lo, hi
}

// from is the first position at distance start or more from position i.
func (d *rangeDistances) from(i int, start float64) int {
	if d.null[i] {
		lo, _ := d.nullRun(i)
		return lo
	}
	want := d.pos[i] + start
	return d.lo + sort.Search(d.hi-d.lo, func(j int) bool { return d.pos[d.lo+j] >= want })
}

// to is the position after the last at distance end or less from i.
func (d *rangeDistances) to(i int, end float64) int {
	if d.null[i] {
		_, hi := d.nullRun(i)
		return hi
	}
	want := d.pos[i] + end
	return d.lo + sort.Search(d.hi-d.lo, func(j int) bool { return d.pos[d.lo+j] > want })
}
