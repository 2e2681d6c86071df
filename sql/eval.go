package sql

import (
	"math"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// node is a compiled expression. eval returns a column with one value per row
// of b; it may return one of b's own columns, which nobody modifies.
type node interface {
	typ() domain.Type
	eval(b *domain.Batch) (*domain.Column, error)
	// mayFail reports whether evaluation can return a row-level error, so
	// conditional forms know to evaluate it only on the rows that reach it.
	mayFail() bool
}

// ---- column helpers ----

func newCol(k domain.Kind, n int) *domain.Column {
	c := &domain.Column{Kind: k}
	switch k {
	case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
		c.Ints = make([]int64, n)
	case domain.KindFloat64:
		c.Floats = make([]float64, n)
	case domain.KindString, domain.KindBytes:
		c.Strs = make([]string, n)
	default:
		c.Values = make([]domain.Value, n)
	}
	return c
}

func allNulls(n int) []bool {
	s := make([]bool, n)
	for i := range s {
		s[i] = true
	}
	return s
}

// unionNulls is the null marks of a result NULL wherever any input is.
func unionNulls(n int, cols ...*domain.Column) []bool {
	var out []bool
	for _, c := range cols {
		if c.Kind.InValues() {
			// nested values and decimals may be NULL without a mark
			for i, v := range c.Values {
				if v.IsNull() && !isNullAt(c.Nulls, i) {
					if out == nil {
						out = make([]bool, n)
					}
					out[i] = true
				}
			}
		}
		if c.Nulls == nil {
			continue
		}
		if out == nil {
			out = make([]bool, n)
			copy(out, c.Nulls)
			continue
		}
		for i, x := range c.Nulls {
			out[i] = out[i] || x
		}
	}
	return out
}

func isNullAt(nulls []bool, i int) bool { return nulls != nil && nulls[i] }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// gather returns the batch of the rows sel of b.
func gather(b *domain.Batch, sel []int) *domain.Batch {
	if len(b.Columns) == 0 {
		out := domain.NoColumns(len(sel))
		out.Schema = b.Schema
		return out
	}
	cols := make([]*domain.Column, len(b.Columns))
	for i, c := range b.Columns {
		cols[i] = gatherCol(c, sel)
	}
	out, _ := domain.BatchOf(b.Schema, cols)
	out.KeepRowsOf(b, sel) // rows of a table's stored rows stay a selection of them
	return out
}

func gatherCol(c *domain.Column, sel []int) *domain.Column {
	out := &domain.Column{Kind: c.Kind}
	if c.Nulls != nil {
		out.Nulls = make([]bool, len(sel))
		for j, i := range sel {
			out.Nulls[j] = c.Nulls[i]
		}
	}
	switch c.Kind {
	case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
		out.Ints = make([]int64, len(sel))
		for j, i := range sel {
			out.Ints[j] = c.Ints[i]
		}
	case domain.KindFloat64:
		out.Floats = make([]float64, len(sel))
		for j, i := range sel {
			out.Floats[j] = c.Floats[i]
		}
	case domain.KindString, domain.KindBytes:
		out.Strs = make([]string, len(sel))
		for j, i := range sel {
			out.Strs[j] = c.Strs[i]
		}
	default:
		out.Values = make([]domain.Value, len(sel))
		for j, i := range sel {
			if c.Values != nil {
				out.Values[j] = c.Values[i]
			}
		}
	}
	return out
}

// copyAt sets row i of dst to row j of src; dst.Nulls must be set.
func copyAt(dst *domain.Column, i int, src *domain.Column, j int) {
	dst.Nulls[i] = src.Kind == domain.KindNull || src.IsNull(j)
	if dst.Nulls[i] {
		return
	}
	switch {
	case dst.Ints != nil:
		dst.Ints[i] = src.Ints[j]
	case dst.Floats != nil:
		dst.Floats[i] = src.Floats[j]
	case dst.Strs != nil:
		dst.Strs[i] = src.Strs[j]
	default:
		dst.Values[i] = src.Value(j)
	}
}

// scatter writes src's rows into dst at rows sel; dst.Nulls must be set.
func scatter(dst, src *domain.Column, sel []int) {
	for j, i := range sel {
		copyAt(dst, i, src, j)
	}
}

// zeroNulls restores the Column contract that a NULL row holds a zero in
// the typed slice, after a loop that computed every row.
func zeroNulls(c *domain.Column) {
	if c.Nulls == nil {
		return
	}
	for i, null := range c.Nulls {
		if !null {
			continue
		}
		switch c.Kind {
		case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
			c.Ints[i] = 0
		case domain.KindFloat64:
			c.Floats[i] = 0
		case domain.KindString, domain.KindBytes:
			c.Strs[i] = ""
		}
	}
}

// dropNulls returns nil for null marks that mark nothing.
func dropNulls(nulls []bool) []bool {
	for _, x := range nulls {
		if x {
			return nulls
		}
	}
	return nil
}

// evalAll evaluates each node over b.
func evalAll(ns []node, b *domain.Batch) ([]*domain.Column, error) {
	out := make([]*domain.Column, len(ns))
	for i, n := range ns {
		c, err := n.eval(b)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// ---- leaves ----

type colNode struct {
	idx int
	t   domain.Type
}

func (n *colNode) typ() domain.Type { return n.t }
func (n *colNode) mayFail() bool    { return false }
func (n *colNode) eval(b *domain.Batch) (*domain.Column, error) {
	return b.Columns[n.idx], nil
}

type fieldNode struct {
	x node
	i int
	t domain.Type
}

func (n *fieldNode) typ() domain.Type { return n.t }
func (n *fieldNode) mayFail() bool    { return n.x.mayFail() }
func (n *fieldNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := domain.NewColumn(n.t.Kind, rows)
	for r := 0; r < rows; r++ {
		v := x.Value(r)
		if v.IsNull() || n.i >= len(v.Fields()) {
			_ = out.Append(domain.Null())
			continue
		}
		if err := out.Append(v.Fields()[n.i]); err != nil {
			_ = out.Append(domain.Null())
		}
	}
	return out, nil
}

type litNode struct {
	t domain.Type
	v domain.Value // NULL when t is null or the literal is a typed NULL
}

func (n *litNode) typ() domain.Type { return n.t }
func (n *litNode) mayFail() bool    { return false }
func (n *litNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	c := newCol(n.t.Kind, rows)
	if n.v.IsNull() {
		c.Nulls = allNulls(rows)
		return c, nil
	}
	switch n.t.Kind {
	case domain.KindFloat64:
		f := n.v.AsFloat()
		for i := range c.Floats {
			c.Floats[i] = f
		}
	case domain.KindString, domain.KindBytes:
		s := n.v.AsString()
		for i := range c.Strs {
			c.Strs[i] = s
		}
	case domain.KindBool, domain.KindInt64, domain.KindDate, domain.KindTimestamp, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
		x := n.v.AsInt()
		for i := range c.Ints {
			c.Ints[i] = x
		}
	default:
		for i := range c.Values {
			c.Values[i] = n.v
		}
	}
	return c, nil
}

// nullAs gives a NULL-typed expression a concrete type: all rows NULL.
type nullAs struct {
	x node
	t domain.Type
}

func (n *nullAs) typ() domain.Type { return n.t }
func (n *nullAs) mayFail() bool    { return n.x.mayFail() }
func (n *nullAs) eval(b *domain.Batch) (*domain.Column, error) {
	if _, err := n.x.eval(b); err != nil {
		return nil, err
	}
	c := newCol(n.t.Kind, b.Len())
	c.Nulls = allNulls(b.Len())
	return c, nil
}

// ---- logic ----

type notNode struct{ x node }

func (n *notNode) typ() domain.Type { return domain.TypeBool }
func (n *notNode) mayFail() bool    { return n.x.mayFail() }
func (n *notNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, len(x.Ints)), Nulls: unionNulls(len(x.Ints), x)}
	for i, v := range x.Ints {
		out.Ints[i] = v ^ 1
	}
	if out.Nulls != nil {
		for i, null := range out.Nulls {
			if null {
				out.Ints[i] = 0
			}
		}
	}
	return out, nil
}

// logicNode is AND / OR with three-valued logic. The right side is
// evaluated only on the rows the left side does not decide, when it can fail.
type logicNode struct {
	and  bool
	l, r node
}

func (n *logicNode) typ() domain.Type { return domain.TypeBool }
func (n *logicNode) mayFail() bool    { return n.l.mayFail() || n.r.mayFail() }
func (n *logicNode) eval(b *domain.Batch) (*domain.Column, error) {
	l, err := n.l.eval(b)
	if err != nil {
		return nil, err
	}
	rows := len(l.Ints)
	// decided: the left side is false (AND) or true (OR) and not NULL
	decidedBy := int64(0)
	if !n.and {
		decidedBy = 1
	}
	var r *domain.Column
	if n.r.mayFail() {
		var sel []int
		for i, v := range l.Ints {
			if v != decidedBy || isNullAt(l.Nulls, i) {
				sel = append(sel, i)
			}
		}
		switch len(sel) {
		case rows:
			if r, err = n.r.eval(b); err != nil {
				return nil, err
			}
		case 0:
			// every row is decided; the right side's value does not matter
			r = &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
		default:
			part, err := n.r.eval(gather(b, sel))
			if err != nil {
				return nil, err
			}
			r = &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows), Nulls: make([]bool, rows)}
			scatter(r, part, sel)
			r.Nulls = dropNulls(r.Nulls)
		}
	} else if r, err = n.r.eval(b); err != nil {
		return nil, err
	}
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
	li, ri := l.Ints, r.Ints[:rows]
	if l.Nulls == nil && r.Nulls == nil {
		if n.and {
			for i := range li {
				out.Ints[i] = li[i] & ri[i]
			}
		} else {
			for i := range li {
				out.Ints[i] = li[i] | ri[i]
			}
		}
		return out, nil
	}
	nulls := make([]bool, rows)
	for i := range li {
		ln, rn := isNullAt(l.Nulls, i), isNullAt(r.Nulls, i)
		lv, rv := li[i], ri[i]
		if n.and {
			switch {
			case (!ln && lv == 0) || (!rn && rv == 0):
				out.Ints[i] = 0
			case ln || rn:
				nulls[i] = true
			default:
				out.Ints[i] = 1
			}
		} else {
			switch {
			case (!ln && lv == 1) || (!rn && rv == 1):
				out.Ints[i] = 1
			case ln || rn:
				nulls[i] = true
			}
		}
	}
	out.Nulls = dropNulls(nulls)
	return out, nil
}

type isNullNode struct{ x node }

func (n *isNullNode) typ() domain.Type { return domain.TypeBool }
func (n *isNullNode) mayFail() bool    { return n.x.mayFail() }
func (n *isNullNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
	switch {
	case x.Kind.InValues():
		for i := range out.Ints {
			out.Ints[i] = b2i(x.IsNull(i))
		}
	default:
		for i, null := range x.Nulls {
			out.Ints[i] = b2i(null)
		}
	}
	return out, nil
}

// ---- comparison ----

// cmpNode compares two operands of one type. "<=>" is null-safe equality.
type cmpNode struct {
	op   string // = != < <= > >= <=>
	l, r node
}

func (n *cmpNode) typ() domain.Type { return domain.TypeBool }
func (n *cmpNode) mayFail() bool    { return n.l.mayFail() || n.r.mayFail() }

func (n *cmpNode) eval(b *domain.Batch) (*domain.Column, error) {
	l, err := n.l.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
	// a literal right side is compared as a scalar, without building a column
	if lit, ok := n.r.(*litNode); ok && !lit.v.IsNull() && n.op != "<=>" {
		switch l.Kind {
		case domain.KindInt64, domain.KindDate, domain.KindTimestamp, domain.KindBool, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
			cmpScalar(n.op, l.Ints, lit.v.AsInt(), out.Ints)
		case domain.KindFloat64:
			cmpFloatScalar(n.op, l.Floats, lit.v.AsFloat(), out.Ints)
		case domain.KindString, domain.KindBytes:
			cmpScalar(n.op, l.Strs, lit.v.AsString(), out.Ints)
		default:
			goto general
		}
		if l.Nulls != nil {
			out.Nulls = append([]bool(nil), l.Nulls...)
			for i, null := range out.Nulls {
				if null {
					out.Ints[i] = 0
				}
			}
		}
		return out, nil
	}
general:
	r, err := n.r.eval(b)
	if err != nil {
		return nil, err
	}
	op := n.op
	if op == "<=>" {
		op = "="
	}
	switch l.Kind {
	case domain.KindInt64, domain.KindDate, domain.KindTimestamp, domain.KindBool, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
		cmpVec(op, l.Ints, r.Ints, out.Ints)
	case domain.KindFloat64:
		cmpFloatVec(op, l.Floats, r.Floats, out.Ints)
	case domain.KindString, domain.KindBytes:
		cmpVec(op, l.Strs, r.Strs, out.Ints)
	case domain.KindNull:
	default:
		for i := 0; i < rows; i++ {
			out.Ints[i] = cmpResult(op, domain.Compare(l.Value(i), r.Value(i)))
		}
	}
	nullKind := l.Kind == domain.KindNull
	if n.op == "<=>" {
		if l.Nulls != nil || r.Nulls != nil || nullKind {
			for i := 0; i < rows; i++ {
				ln, rn := l.IsNull(i), r.IsNull(i)
				if ln || rn {
					out.Ints[i] = b2i(ln && rn)
				}
			}
		}
		return out, nil
	}
	if nullKind {
		out.Nulls = allNulls(rows)
		return out, nil
	}
	out.Nulls = unionNulls(rows, l, r)
	for i, null := range out.Nulls {
		if null {
			out.Ints[i] = 0
		}
	}
	return out, nil
}

func cmpResult(op string, c int) int64 {
	switch op {
	case "=":
		return b2i(c == 0)
	case "!=":
		return b2i(c != 0)
	case "<":
		return b2i(c < 0)
	case "<=":
		return b2i(c <= 0)
	case ">":
		return b2i(c > 0)
	}
	return b2i(c >= 0)
}

type ordered interface{ ~int64 | ~string }

func cmpScalar[T ordered](op string, a []T, s T, out []int64) {
	out = out[:len(a)]
	switch op {
	case "=":
		for i, x := range a {
			out[i] = b2i(x == s)
		}
	case "!=":
		for i, x := range a {
			out[i] = b2i(x != s)
		}
	case "<":
		for i, x := range a {
			out[i] = b2i(x < s)
		}
	case "<=":
		for i, x := range a {
			out[i] = b2i(x <= s)
		}
	case ">":
		for i, x := range a {
			out[i] = b2i(x > s)
		}
	default:
		for i, x := range a {
			out[i] = b2i(x >= s)
		}
	}
}

func cmpVec[T ordered](op string, a, b []T, out []int64) {
	out, b = out[:len(a)], b[:len(a)]
	switch op {
	case "=":
		for i, x := range a {
			out[i] = b2i(x == b[i])
		}
	case "!=":
		for i, x := range a {
			out[i] = b2i(x != b[i])
		}
	case "<":
		for i, x := range a {
			out[i] = b2i(x < b[i])
		}
	case "<=":
		for i, x := range a {
			out[i] = b2i(x <= b[i])
		}
	case ">":
		for i, x := range a {
			out[i] = b2i(x > b[i])
		}
	default:
		for i, x := range a {
			out[i] = b2i(x >= b[i])
		}
	}
}

// cmpFloat orders doubles as Spark compares them: NaN equals NaN and is
// greater than every other value; -0 equals 0.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	}
	return -1
}

func cmpFloatScalar(op string, a []float64, s float64, out []int64) {
	if math.IsNaN(s) {
		for i, x := range a {
			out[i] = cmpResult(op, cmpFloat(x, s))
		}
		return
	}
	out = out[:len(a)]
	// NaN on the left is greater than s
	switch op {
	case "=":
		for i, x := range a {
			out[i] = b2i(x == s)
		}
	case "!=":
		for i, x := range a {
			out[i] = b2i(x != s)
		}
	case "<":
		for i, x := range a {
			out[i] = b2i(x < s)
		}
	case "<=":
		for i, x := range a {
			out[i] = b2i(x <= s)
		}
	case ">":
		for i, x := range a {
			out[i] = b2i(x > s || x != x)
		}
	default:
		for i, x := range a {
			out[i] = b2i(x >= s || x != x)
		}
	}
}

func cmpFloatVec(op string, a, b []float64, out []int64) {
	b = b[:len(a)]
	for i, x := range a {
		out[i] = cmpResult(op, cmpFloat(x, b[i]))
	}
}

type inNode struct {
	x    node
	list []node
	// a list of constants is looked up in a set
	set     *inSet
	setNull bool // the list holds a NULL
}

type inSet struct {
	ints   map[int64]struct{}
	floats map[float64]struct{}
	strs   map[string]struct{}
	nan    bool
}

// constSet prepares the lookup of a list of literals, for the kinds that
// have one.
func (n *inNode) constSet() {
	k := n.x.typ().Kind
	s := &inSet{}
	switch k {
	case domain.KindInt64, domain.KindDate, domain.KindTimestamp, domain.KindBool, domain.KindYearMonthInterval, domain.KindDayTimeInterval:
		s.ints = map[int64]struct{}{}
	case domain.KindFloat64:
		s.floats = map[float64]struct{}{}
	case domain.KindString:
		s.strs = map[string]struct{}{}
	default:
		return
	}
	for _, it := range n.list {
		lit, ok := it.(*litNode)
		if !ok {
			return
		}
		switch {
		case lit.v.IsNull():
			n.setNull = true
		case s.ints != nil:
			s.ints[lit.v.AsInt()] = struct{}{}
		case s.floats != nil:
			f := lit.v.AsFloat()
			if math.IsNaN(f) {
				s.nan = true
			}
			s.floats[f+0] = struct{}{} // -0 is 0
		default:
			s.strs[lit.v.AsString()] = struct{}{}
		}
	}
	n.set = s
}

func (n *inNode) evalSet(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
	s := n.set
	switch {
	case s.ints != nil:
		for i, v := range x.Ints {
			_, ok := s.ints[v]
			out.Ints[i] = b2i(ok)
		}
	case s.floats != nil:
		for i, v := range x.Floats {
			_, ok := s.floats[v]
			out.Ints[i] = b2i(ok || (s.nan && v != v))
		}
	default:
		for i, v := range x.Strs {
			_, ok := s.strs[v]
			out.Ints[i] = b2i(ok)
		}
	}
	nulls := make([]bool, rows)
	for i := range nulls {
		if isNullAt(x.Nulls, i) {
			nulls[i], out.Ints[i] = true, 0
		} else if n.setNull && out.Ints[i] == 0 {
			nulls[i] = true
		}
	}
	out.Nulls = dropNulls(nulls)
	return out, nil
}

func (n *inNode) typ() domain.Type { return domain.TypeBool }
func (n *inNode) mayFail() bool    { return anyMayFail(n.list) || n.x.mayFail() }

// eval: true if x equals an item; else NULL if x or any item is NULL; else
// false (SQL's IN).
func (n *inNode) eval(b *domain.Batch) (*domain.Column, error) {
	if n.set != nil {
		return n.evalSet(b)
	}
	rows := b.Len()
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
	nulls := make([]bool, rows)
	for _, it := range n.list {
		eq, err := (&cmpNode{op: "=", l: n.x, r: it}).eval(b)
		if err != nil {
			return nil, err
		}
		for i, v := range eq.Ints {
			if isNullAt(eq.Nulls, i) {
				nulls[i] = true
			} else if v == 1 {
				out.Ints[i] = 1
			}
		}
	}
	for i := range nulls {
		if out.Ints[i] == 1 {
			nulls[i] = false
		}
	}
	out.Nulls = dropNulls(nulls)
	return out, nil
}

// ---- arithmetic ----

type negNode struct {
	x   node
	pos syntax.Pos
}

func (n *negNode) typ() domain.Type { return n.x.typ() }
func (n *negNode) mayFail() bool    { return true }
func (n *negNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	out := newCol(x.Kind, b.Len())
	out.Nulls = unionNulls(b.Len(), x)
	switch x.Kind {
	case domain.KindFloat64:
		for i, v := range x.Floats {
			out.Floats[i] = -v
		}
		zeroNulls(out)
		return out, nil
	case domain.KindDecimal:
		// a decimal's range is symmetric: negation cannot overflow
		for i, v := range x.Values {
			if !v.IsNull() {
				out.Values[i] = domain.Decimal(v.AsDecimal().Neg(), v.Precision(), v.Scale())
			}
		}
		return out, nil
	}
	lo, _ := n.typ().IntRange()
	for i, v := range x.Ints {
		if v == lo && !isNullAt(x.Nulls, i) {
			return nil, exprErr(domain.CodeArithmeticOverflow, n.pos, "-(%d) overflows %s", v, n.typ())
		}
		out.Ints[i] = -v
	}
	zeroNulls(out)
	return out, nil
}

type arithNode struct {
	op   string
	l, r node
	t    domain.Type
	pos  syntax.Pos
}

func (n *arithNode) typ() domain.Type { return n.t }
func (n *arithNode) mayFail() bool    { return true }

func (n *arithNode) eval(b *domain.Batch) (*domain.Column, error) {
	l, err := n.l.eval(b)
	if err != nil {
		return nil, err
	}
	r, err := n.r.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := newCol(n.t.Kind, rows)
	out.Nulls = unionNulls(rows, l, r)
	if n.t.Kind == domain.KindFloat64 {
		defer roundFloats(n.t, out)
		a, c, o := l.Floats, r.Floats[:len(l.Floats)], out.Floats[:len(l.Floats)]
		switch n.op {
		case "+":
			for i := range a {
				o[i] = a[i] + c[i]
			}
		case "-":
			for i := range a {
				o[i] = a[i] - c[i]
			}
		case "*":
			for i := range a {
				o[i] = a[i] * c[i]
			}
		case "/", "%":
			for i := range a {
				if c[i] == 0 {
					if isNullAt(out.Nulls, i) {
						continue
					}
					return nil, exprErr(domain.CodeDivideByZero, n.pos, "%s %s %s: division by zero", fmtFloat(a[i]), n.op, fmtFloat(c[i]))
				}
				if n.op == "/" {
					o[i] = a[i] / c[i]
				} else {
					o[i] = math.Mod(a[i], c[i])
				}
			}
		}
		zeroNulls(out)
		return out, nil
	}
	a, c, o := l.Ints, r.Ints[:len(l.Ints)], out.Ints[:len(l.Ints)]
	var bad = -1
	switch n.op {
	case "+":
		for i := range a {
			s := a[i] + c[i]
			if (s > a[i]) != (c[i] > 0) && bad < 0 {
				bad = i
			}
			o[i] = s
		}
	case "-":
		for i := range a {
			s := a[i] - c[i]
			if (s < a[i]) != (c[i] > 0) && bad < 0 {
				bad = i
			}
			o[i] = s
		}
	case "*":
		for i := range a {
			x, y := a[i], c[i]
			p := x * y
			if x != 0 && (p/x != y || (x == -1 && y == math.MinInt64)) && bad < 0 {
				bad = i
			}
			o[i] = p
		}
	case "%":
		for i := range a {
			if c[i] == 0 {
				if isNullAt(out.Nulls, i) {
					continue
				}
				return nil, exprErr(domain.CodeDivideByZero, n.pos, "%d %% 0: division by zero", a[i])
			}
			if c[i] == -1 {
				o[i] = 0
				continue
			}
			o[i] = a[i] % c[i]
		}
	}
	if bad >= 0 {
		// the first overflow may be on a NULL row, whose values are zeros and
		// cannot overflow; but check every row to be sure
		for i := bad; i < len(a); i++ {
			if isNullAt(out.Nulls, i) {
				continue
			}
			if overflows(n.op, a[i], c[i]) {
				return nil, exprErr(domain.CodeArithmeticOverflow, n.pos, "%d %s %d overflows bigint", a[i], n.op, c[i])
			}
		}
	}
	if n.t.Bits != 0 {
		// INT, SMALLINT, TINYINT: the bigint result is exact; it must fit
		lo, hi := n.t.IntRange()
		for i, v := range o {
			if (v < lo || v > hi) && !isNullAt(out.Nulls, i) {
				return nil, exprErr(domain.CodeArithmeticOverflow, n.pos, "%d %s %d overflows %s", a[i], n.op, c[i], n.t)
			}
		}
	}
	zeroNulls(out)
	return out, nil
}

// roundFloats rounds a column of t FLOAT to floats: the result of an
// operation on floats, computed in double, rounded once (which for + - * /
// is the float operation's own result).
func roundFloats(t domain.Type, c *domain.Column) {
	if t.Bits == 32 {
		for i, f := range c.Floats {
			c.Floats[i] = float64(float32(f))
		}
	}
}

// overflowsType is overflows for a result of type t, held to t's range.
func overflowsType(op string, x, y int64, t domain.Type) bool {
	if t.Bits == 0 {
		return overflows(op, x, y)
	}
	var r int64
	switch op {
	case "+":
		r = x + y
	case "-":
		r = x - y
	case "*":
		r = x * y // two narrow integers: exact in 64 bits
	default:
		return false
	}
	lo, hi := t.IntRange()
	return r < lo || r > hi
}

func overflows(op string, x, y int64) bool {
	switch op {
	case "+":
		s := x + y
		return (s > x) != (y > 0)
	case "-":
		s := x - y
		return (s < x) != (y > 0)
	case "*":
		p := x * y
		return x != 0 && (p/x != y || (x == -1 && y == math.MinInt64))
	}
	return false
}

// fmtFloat renders a double as Spark (Java) does: 1.0, 0.001, 1.0E7, 1.5E-4.
func fmtFloat(f float64) string { return domain.FormatDouble(f) }
