package sql

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// op is one operator of a plan. run returns a batch with the operator's
// schema; it may return a batch it was given (callers do not modify batches).
type op interface {
	schema() domain.Schema
	run(rs *runState) (*domain.Batch, error)
}

// batchOf builds an operator's output batch; rows counts the rows when
// there are no columns.
func batchOf(sch domain.Schema, cols []*domain.Column, rows int) (*domain.Batch, error) {
	if len(cols) == 0 {
		b := domain.NoColumns(rows)
		b.Schema = sch
		return b, nil
	}
	return domain.BatchOf(sch, cols)
}

// scanOp reads an input of the plan.
type scanOp struct {
	input int
	out   domain.Schema
}

func (o *scanOp) schema() domain.Schema { return o.out }
func (o *scanOp) run(rs *runState) (*domain.Batch, error) {
	return rs.inputs[o.input], nil
}

// valuesOp is VALUES rows (cols[c][r] the value of column c in row r), or
// rows empty rows for a SELECT without FROM.
type valuesOp struct {
	cols [][]node
	rows int
	out  domain.Schema
}

func (o *valuesOp) schema() domain.Schema { return o.out }
func (o *valuesOp) run(*runState) (*domain.Batch, error) {
	if len(o.cols) == 0 {
		return batchOf(o.out, nil, o.rows)
	}
	one := domain.NoColumns(1)
	n := len(o.cols[0])
	cols := make([]*domain.Column, len(o.cols))
	for c, vals := range o.cols {
		col := domain.NewColumn(o.out.Fields[c].Type.Kind, n)
		for _, v := range vals {
			vc, err := v.eval(one)
			if err != nil {
				return nil, err
			}
			if err := col.Append(vc.Value(0)); err != nil {
				return nil, err
			}
		}
		cols[c] = col
	}
	return batchOf(o.out, cols, n)
}

// rangeOp is range(start, end, step).
type rangeOp struct {
	start, end, step int64
	out              domain.Schema
}

func (o *rangeOp) schema() domain.Schema { return o.out }
func (o *rangeOp) run(*runState) (*domain.Batch, error) {
	var ids []int64
	for v := o.start; (o.step > 0 && v < o.end) || (o.step < 0 && v > o.end); v += o.step {
		ids = append(ids, v)
		if (o.step > 0 && v > math.MaxInt64-o.step) || (o.step < 0 && v < math.MinInt64-o.step) {
			break
		}
	}
	return batchOf(o.out, []*domain.Column{{Kind: domain.KindInt64, Ints: ids}}, len(ids))
}

// projectOp computes one column per expression.
type projectOp struct {
	child op
	exprs []node
	out   domain.Schema
}

func (o *projectOp) schema() domain.Schema { return o.out }
func (o *projectOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	cols := make([]*domain.Column, len(o.exprs))
	for i, e := range o.exprs {
		c, err := e.eval(b)
		if err != nil {
			return nil, err
		}
		cols[i] = fill(c, b.Len(), o.out.Fields[i].Type.Kind)
	}
	out, err := batchOf(o.out, cols, b.Len())
	if err != nil {
		return nil, err
	}
	out.SameColumnsAs(b) // SELECT * of a table's stored rows is still them
	return out, nil
}

// fill makes a column of kind null (a NULL literal) a column of NULLs of
// kind k, so every output column has its schema's kind.
func fill(c *domain.Column, rows int, k domain.Kind) *domain.Column {
	if c.Kind == k || k == domain.KindNull {
		return c
	}
	out := newCol(k, rows)
	out.Nulls = allNulls(rows)
	return out
}

// renameOp gives the child's columns new names.
type renameOp struct {
	child op
	out   domain.Schema
}

func (o *renameOp) schema() domain.Schema { return o.out }
func (o *renameOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	return batchOf(o.out, b.Columns, b.Len())
}

// filterOp keeps the rows where pred is true.
type filterOp struct {
	child op
	pred  node
}

func (o *filterOp) schema() domain.Schema { return o.child.schema() }
func (o *filterOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	c, err := o.pred.eval(b)
	if err != nil {
		return nil, err
	}
	keep := make([]int, 0, b.Len())
	if c.Kind == domain.KindBool {
		for i, v := range c.Ints {
			if v == 1 && !isNullAt(c.Nulls, i) {
				keep = append(keep, i)
			}
		}
	}
	if len(keep) == b.Len() {
		return b, nil
	}
	return gather(b, keep), nil
}

// limitOp is LIMIT and OFFSET; limit < 0 is no limit.
type limitOp struct {
	child         op
	limit, offset int
}

func (o *limitOp) schema() domain.Schema { return o.child.schema() }
func (o *limitOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	start := min(o.offset, b.Len())
	end := b.Len()
	if o.limit >= 0 {
		end = min(end, start+o.limit)
	}
	if start == 0 && end == b.Len() {
		return b, nil
	}
	keep := make([]int, 0, end-start)
	for i := start; i < end; i++ {
		keep = append(keep, i)
	}
	return gather(b, keep), nil
}

// runBoth runs the two inputs of a join or a set operation.
func runBoth(rs *runState, l, r op) (*domain.Batch, *domain.Batch, error) {
	lb, err := l.run(rs)
	if err != nil {
		return nil, nil, err
	}
	rb, err := r.run(rs)
	if err != nil {
		return nil, nil, err
	}
	return lb, rb, nil
}

// ---- hashing rows ----

// AppendRowKey appends an encoding of row i of cols that is equal for equal
// rows and different otherwise (NULL equals NULL here, as GROUP BY,
// DISTINCT and set operations treat it; -0.0 equals 0.0 and NaN equals NaN).
func AppendRowKey(buf []byte, cols []*domain.Column, i int) []byte {
	for _, c := range cols {
		buf = appendKey(buf, c, i)
	}
	return buf
}

// DecodeRowKey reads the values of a row key AppendRowKey wrote of columns
// of the given types: the values back, but for a float's -0.0 (0.0) and
// NaNs (one NaN), which the key does not tell apart. Bytes that are no such
// key are an error.
func DecodeRowKey(key string, types []domain.Type) ([]domain.Value, error) {
	out := make([]domain.Value, len(types))
	d := rowKeyDecoder{s: key}
	for i, t := range types {
		switch d.byte() {
		case 0:
			continue // NULL
		case 1:
		default:
			return nil, errBadRowKey
		}
		switch t.Kind {
		case domain.KindBool, domain.KindInt64, domain.KindDate, domain.KindTimestamp, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
			out[i] = d.int(t.Kind)
		case domain.KindFloat64:
			out[i] = d.float()
		case domain.KindString, domain.KindBytes:
			out[i] = textOfKind(t.Kind, d.text())
		default:
			if out[i] = d.value(t, 0); out[i].IsNull() {
				d.bad = true // a NULL is written as one
			}
		}
		if d.bad {
			return nil, errBadRowKey
		}
	}
	if d.bad || len(d.s) > 0 {
		return nil, errBadRowKey
	}
	return out, nil
}

var errBadRowKey = errors.New("not a row key")

// rowKeyDecoder reads a row key from the front of s; bad is set, and
// zeros read, once s runs short or holds what no key does.
type rowKeyDecoder struct {
	s   string
	bad bool
}

// take reads n bytes; "" when fewer are left.
func (d *rowKeyDecoder) take(n int) string {
	if n > len(d.s) {
		d.bad, d.s = true, ""
		return ""
	}
	out := d.s[:n]
	d.s = d.s[n:]
	return out
}

func (d *rowKeyDecoder) byte() byte {
	if b := d.take(1); b != "" {
		return b[0]
	}
	return 0xFF // no key's byte
}

func (d *rowKeyDecoder) u64() uint64 {
	if b := d.take(8); b != "" {
		return binary.LittleEndian.Uint64([]byte(b))
	}
	return 0
}

// int reads an integer of a kind kept as one (a boolean 0 or 1).
func (d *rowKeyDecoder) int(k domain.Kind) domain.Value {
	x := d.u64()
	if k == domain.KindBool && x > 1 {
		d.bad = true
	}
	return intOfKind(k, int64(x))
}

// float reads a double as keys write it: 0.0 for -0.0, one NaN.
func (d *rowKeyDecoder) float() domain.Value {
	bits := d.u64()
	f := math.Float64frombits(bits)
	if normalFloatBits(f) != bits {
		d.bad = true
	}
	return domain.Float(f)
}

// uvarint reads a length, refusing one longer than what is left.
func (d *rowKeyDecoder) uvarint() int {
	n, k := binary.Uvarint([]byte(d.s[:min(len(d.s), binary.MaxVarintLen64)]))
	var canon [binary.MaxVarintLen64]byte
	if k <= 0 || n > uint64(len(d.s)-k) || binary.PutUvarint(canon[:], n) != k { // one way to write each length
		d.bad, d.s = true, ""
		return 0
	}
	d.s = d.s[k:]
	return int(n)
}

func (d *rowKeyDecoder) text() string { return d.take(d.uvarint()) }

// value reads what appendValueKey wrote of a value of type t, nested depth
// deep.
func (d *rowKeyDecoder) value(t domain.Type, depth int) domain.Value {
	k := domain.Kind(d.byte())
	if d.bad || depth > 64 || k != t.Kind && k != domain.KindNull {
		d.bad = true
		return domain.Null()
	}
	switch k {
	case domain.KindNull:
		return domain.Null()
	case domain.KindFloat64:
		return d.float()
	case domain.KindDecimal:
		hi, lo := d.u64(), d.u64()
		return domain.Decimal(domain.Int128{Hi: int64(hi), Lo: lo}, t.Precision, t.Scale)
	case domain.KindString, domain.KindBytes:
		return textOfKind(k, d.text())
	case domain.KindList, domain.KindStruct, domain.KindMap:
		n := d.uvarint() // an item takes a byte at least: n is bounded by what is left
		if d.bad {
			return domain.Null()
		}
		items := make([]domain.Value, 0, n)
		for i := 0; i < n && !d.bad; i++ {
			items = append(items, d.value(t.Item(i), depth+1))
		}
		switch k {
		case domain.KindList:
			return domain.List(items...)
		case domain.KindStruct:
			return domain.Struct(items...)
		}
		return domain.Map(items...)
	case domain.KindBool, domain.KindInt64, domain.KindDate, domain.KindTimestamp, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
		return d.int(k)
	}
	d.bad = true
	return domain.Null()
}

func textOfKind(k domain.Kind, s string) domain.Value {
	if k == domain.KindBytes {
		return domain.Bytes([]byte(s))
	}
	return domain.String(s)
}

func anyNullKey(cols []*domain.Column, i int) bool {
	for _, c := range cols {
		if c.Kind == domain.KindNull || isNullAt(c.Nulls, i) {
			return true
		}
	}
	return false
}

// ---- joins ----

// joinOp joins two inputs: rows pair when their keys are equal (NULL keys
// never match) and cond, if any, holds for the pair. Its output is every
// left column then every right column; semi and anti joins output the left.
type joinOp struct {
	kind         string // INNER, LEFT, RIGHT, FULL, CROSS, LEFT SEMI, LEFT ANTI
	l, r         op
	lkeys, rkeys []node // equal keys, evaluated over each side
	cond         node   // over left ++ right, nil for none
	// USING columns, as indexes into left ++ right, for the planner
	usingL, usingR []int
	out            domain.Schema
}

func (o *joinOp) schema() domain.Schema { return o.out }

func (o *joinOp) run(rs *runState) (*domain.Batch, error) {
	lb, rb, err := runBoth(rs, o.l, o.r)
	if err != nil {
		return nil, err
	}
	li, ri, err := o.candidates(lb, rb)
	if err != nil {
		return nil, err
	}
	if o.cond != nil && len(li) > 0 {
		pairs, err := pairBatch(lb, rb, li, ri)
		if err != nil {
			return nil, err
		}
		c, err := o.cond.eval(pairs)
		if err != nil {
			return nil, err
		}
		n := 0
		for k := range li {
			if c.Kind == domain.KindBool && c.Ints[k] == 1 && !isNullAt(c.Nulls, k) {
				li[n], ri[n] = li[k], ri[k]
				n++
			}
		}
		li, ri = li[:n], ri[:n]
	}
	switch o.kind {
	case "LEFT SEMI", "LEFT ANTI":
		matched := make([]bool, lb.Len())
		for _, i := range li {
			matched[i] = true
		}
		var keep []int
		for i, m := range matched {
			if m == (o.kind == "LEFT SEMI") {
				keep = append(keep, i)
			}
		}
		return gather(lb, keep), nil
	case "LEFT", "FULL":
		li, ri = addUnmatched(li, ri, lb.Len(), false)
	}
	if o.kind == "RIGHT" || o.kind == "FULL" {
		ri, li = addUnmatched(ri, li, rb.Len(), true)
	}
	out, err := pairBatch(lb, rb, li, ri)
	if err != nil {
		return nil, err
	}
	out.Schema = o.out
	return out, nil
}

// candidates lists the pairs of rows whose keys are equal: by a hash of the
// right side's keys, or every pair when there are no keys.
func (o *joinOp) candidates(lb, rb *domain.Batch) ([]int, []int, error) {
	var li, ri []int
	if len(o.lkeys) == 0 {
		for i := 0; i < lb.Len(); i++ {
			for j := 0; j < rb.Len(); j++ {
				li, ri = append(li, i), append(ri, j)
			}
		}
		return li, ri, nil
	}
	lk, err := evalAll(o.lkeys, lb)
	if err != nil {
		return nil, nil, err
	}
	rk, err := evalAll(o.rkeys, rb)
	if err != nil {
		return nil, nil, err
	}
	table := make(map[string][]int, rb.Len())
	var buf []byte
	for j := 0; j < rb.Len(); j++ {
		if anyNullKey(rk, j) {
			continue
		}
		buf = AppendRowKey(buf[:0], rk, j)
		table[string(buf)] = append(table[string(buf)], j)
	}
	for i := 0; i < lb.Len(); i++ {
		if anyNullKey(lk, i) {
			continue
		}
		buf = AppendRowKey(buf[:0], lk, i)
		for _, j := range table[string(buf)] {
			li, ri = append(li, i), append(ri, j)
		}
	}
	return li, ri, nil
}

// addUnmatched adds, for every row of one side that no pair holds, a pair
// with no row (-1) on the other side. side is in row order (the probe walks
// the left side in order); with after the unmatched rows go at the end,
// else each in its place.
func addUnmatched(side, other []int, n int, after bool) ([]int, []int) {
	seen := make([]bool, n)
	for _, i := range side {
		if i >= 0 { // a full join's right pass sees the left pass's -1s
			seen[i] = true
		}
	}
	if after {
		for i := 0; i < n; i++ {
			if !seen[i] {
				side, other = append(side, i), append(other, -1)
			}
		}
		return side, other
	}
	outS, outO := make([]int, 0, len(side)+n), make([]int, 0, len(side)+n)
	k := 0
	for i := 0; i < n; i++ {
		if !seen[i] {
			outS, outO = append(outS, i), append(outO, -1)
			continue
		}
		for ; k < len(side) && side[k] == i; k++ {
			outS, outO = append(outS, i), append(outO, other[k])
		}
	}
	return outS, outO
}

// pairBatch builds the rows left[li[k]] ++ right[ri[k]]; -1 is a row of NULLs.
func pairBatch(lb, rb *domain.Batch, li, ri []int) (*domain.Batch, error) {
	cols := make([]*domain.Column, 0, len(lb.Columns)+len(rb.Columns))
	for _, c := range lb.Columns {
		cols = append(cols, gatherNullable(c, li))
	}
	for _, c := range rb.Columns {
		cols = append(cols, gatherNullable(c, ri))
	}
	sch := domain.NewSchema(append(append([]domain.Field{}, lb.Schema.Fields...), rb.Schema.Fields...)...)
	return batchOf(sch, cols, len(li))
}

// gatherNullable is gatherCol where an index of -1 gives NULL.
func gatherNullable(c *domain.Column, sel []int) *domain.Column {
	if !slices.Contains(sel, -1) {
		return gatherCol(c, sel)
	}
	safe := make([]int, len(sel))
	for k, i := range sel {
		safe[k] = max(i, 0)
	}
	var out *domain.Column
	if c.Len() == 0 {
		out = newCol(c.Kind, len(sel))
	} else {
		out = gatherCol(c, safe)
	}
	if out.Nulls == nil {
		out.Nulls = make([]bool, len(sel))
	}
	for k, i := range sel {
		if i < 0 {
			out.Nulls[k] = true
			if out.Values != nil {
				out.Values[k] = domain.Null()
			}
		}
	}
	zeroNulls(out)
	return out
}

// ---- DISTINCT and set operations ----

type distinctOp struct{ child op }

func (o *distinctOp) schema() domain.Schema { return o.child.schema() }
func (o *distinctOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	return gather(b, firstOfEach(b.Columns, b.Len())), nil
}

// firstOfEach lists the first row of each distinct row value.
func firstOfEach(cols []*domain.Column, n int) []int {
	seen := make(map[string]bool, n)
	var keep []int
	var buf []byte
	for i := 0; i < n; i++ {
		buf = AppendRowKey(buf[:0], cols, i)
		if !seen[string(buf)] {
			seen[string(buf)] = true
			keep = append(keep, i)
		}
	}
	return keep
}

// setOpOp is UNION, INTERSECT or EXCEPT, with ALL (multiset) or not (set).
type setOpOp struct {
	op   string
	all  bool
	l, r op
	out  domain.Schema
}

func (o *setOpOp) schema() domain.Schema { return o.out }
func (o *setOpOp) run(rs *runState) (*domain.Batch, error) {
	lb, rb, err := runBoth(rs, o.l, o.r)
	if err != nil {
		return nil, err
	}
	if lb, err = batchOf(o.out, lb.Columns, lb.Len()); err != nil {
		return nil, err
	}
	if rb, err = batchOf(o.out, rb.Columns, rb.Len()); err != nil {
		return nil, err
	}
	if o.op == "UNION" {
		u, err := domain.ConcatByPosition(o.out, lb, rb)
		if err != nil {
			return nil, err
		}
		if o.all {
			return u, nil
		}
		return gather(u, firstOfEach(u.Columns, u.Len())), nil
	}
	// INTERSECT / EXCEPT: count the right side's rows, then walk the left
	counts := map[string]int{}
	var buf []byte
	for j := 0; j < rb.Len(); j++ {
		buf = AppendRowKey(buf[:0], rb.Columns, j)
		counts[string(buf)]++
	}
	emitted := map[string]bool{}
	var keep []int
	for i := 0; i < lb.Len(); i++ {
		buf = AppendRowKey(buf[:0], lb.Columns, i)
		k := string(buf)
		in := counts[k] > 0
		switch {
		case o.all && o.op == "INTERSECT":
			if in {
				counts[k]--
				keep = append(keep, i)
			}
		case o.all: // EXCEPT ALL
			if in {
				counts[k]--
			} else {
				keep = append(keep, i)
			}
		default:
			if in == (o.op == "INTERSECT") && !emitted[k] {
				emitted[k] = true
				keep = append(keep, i)
			}
		}
	}
	return gather(lb, keep), nil
}

// ---- sorting ----

type sortKey struct {
	col        int
	desc       bool
	nullsFirst bool
}

// sortOp orders rows by keys (columns of its child); equal rows keep their
// order.
type sortOp struct {
	child op
	keys  []sortKey
}

func (o *sortOp) schema() domain.Schema { return o.child.schema() }
func (o *sortOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	idx := make([]int, b.Len())
	for i := range idx {
		idx[i] = i
	}
	cmps := make([]func(i, j int) int, len(o.keys))
	for k, key := range o.keys {
		cmps[k] = columnOrder(b.Columns[key.col], key.desc, key.nullsFirst)
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		for _, c := range cmps {
			if r := c(i, j); r != 0 {
				return r
			}
		}
		return 0
	})
	return gather(b, idx), nil
}

// columnOrder compares two rows of c: NULLs first or last, then values
// ascending or descending. NaN is larger than any number, as in Spark.
func columnOrder(c *domain.Column, desc, nullsFirst bool) func(i, j int) int {
	var cmp func(i, j int) int
	switch {
	case c.Kind == domain.KindNull:
		return func(int, int) int { return 0 }
	case c.Kind == domain.KindString || c.Kind == domain.KindBytes:
		cmp = func(i, j int) int { return strings.Compare(c.Strs[i], c.Strs[j]) }
	case c.Floats != nil:
		cmp = func(i, j int) int { return cmpFloat(c.Floats[i], c.Floats[j]) }
	case c.Ints != nil:
		cmp = func(i, j int) int {
			switch a, b := c.Ints[i], c.Ints[j]; {
			case a < b:
				return -1
			case a > b:
				return 1
			}
			return 0
		}
	default:
		cmp = func(i, j int) int { return domain.Compare(c.Values[i], c.Values[j]) }
	}
	return func(i, j int) int {
		ni, nj := c.IsNull(i), c.IsNull(j)
		switch {
		case ni && nj:
			return 0
		case ni != nj:
			if ni == nullsFirst {
				return -1
			}
			return 1
		}
		r := cmp(i, j)
		if desc {
			return -r
		}
		return r
	}
}

// ---- subqueries ----

// subqueryNode is a scalar subquery, EXISTS, or x IN (subquery). The
// subquery runs once per Run of the plan.
type subqueryNode struct {
	kind string // scalar, exists, in
	x    node   // the tested value, for in
	o    op
	run  *runHolder
	t    domain.Type
	pos  syntax.Pos
}

func (n *subqueryNode) typ() domain.Type { return n.t }
func (n *subqueryNode) mayFail() bool    { return true }

func (n *subqueryNode) result() (*domain.Batch, error) { return runOnce(n.run, n.o, n.pos) }

// runOnce runs a subquery's o once per Run of the plan.
func runOnce(run *runHolder, o op, pos syntax.Pos) (*domain.Batch, error) {
	rs := run.cur
	if rs == nil {
		return nil, planErr(domain.CodeInvalidSubquery, pos, "a subquery can only run inside its query")
	}
	if b, ok := rs.cache[o]; ok {
		return b, nil
	}
	b, err := o.run(rs)
	if err != nil {
		return nil, err
	}
	if rs.cache == nil {
		rs.cache = map[op]*domain.Batch{}
	}
	rs.cache[o] = b
	return b, nil
}

func (n *subqueryNode) eval(b *domain.Batch) (*domain.Column, error) {
	sub, err := n.result()
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	switch n.kind {
	case "exists":
		out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
		if sub.Len() > 0 {
			for i := range out.Ints {
				out.Ints[i] = 1
			}
		}
		return out, nil
	case "scalar":
		if sub.Len() > 1 {
			return nil, planErr(domain.CodeScalarSubqueryRows, n.pos, "the scalar subquery returned %d rows", sub.Len())
		}
		v := domain.Null()
		if sub.Len() == 1 {
			v = sub.Columns[0].Value(0)
		}
		return (&litNode{t: n.t, v: v}).eval(b)
	}
	// in: true when found, NULL when not found but x or a subquery value is NULL
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	hasNull := false
	var buf []byte
	vals := sub.Columns[:1]
	for j := 0; j < sub.Len(); j++ {
		if anyNullKey(vals, j) {
			hasNull = true
			continue
		}
		buf = AppendRowKey(buf[:0], vals, j)
		set[string(buf)] = true
	}
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows), Nulls: make([]bool, rows)}
	xs := []*domain.Column{x}
	for i := 0; i < rows; i++ {
		if anyNullKey(xs, i) {
			out.Nulls[i] = sub.Len() > 0
			continue
		}
		buf = AppendRowKey(buf[:0], xs, i)
		switch {
		case set[string(buf)]:
			out.Ints[i] = 1
		case hasNull:
			out.Nulls[i] = true
		}
	}
	return out, nil
}
