package sql

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

func init() {
	first := aggDef{minArgs: 1, maxArgs: 2, ignoreNulls: true, compile: compileFirst}
	moment := aggDef{minArgs: 1, maxArgs: 1, compile: compileMoment}
	coMoment := aggDef{minArgs: 2, maxArgs: 2, compile: compileCoMoment}
	bit := aggDef{minArgs: 1, maxArgs: 1, compile: compileBit}
	boolAgg := aggDef{minArgs: 1, maxArgs: 1, compile: compileBoolAgg}
	listagg := aggDef{minArgs: 1, maxArgs: 2, withinGroup: true, orderings: true, compile: compileListagg}
	for name, def := range map[string]aggDef{
		"count":                 {minArgs: 1, maxArgs: -1, compile: compileCount},
		"count_if":              {minArgs: 1, maxArgs: 1, compile: compileCountIf},
		"approx_count_distinct": {minArgs: 1, maxArgs: 2, compile: compileApproxCountDistinct},
		"sum":                   {minArgs: 1, maxArgs: 1, compile: compileSum},
		"try_sum":               {minArgs: 1, maxArgs: 1, compile: compileSum},
		"avg":                   {minArgs: 1, maxArgs: 1, compile: compileAvg},
		"mean":                  {minArgs: 1, maxArgs: 1, compile: compileAvg},
		"try_avg":               {minArgs: 1, maxArgs: 1, compile: compileAvg},
		"min":                   {minArgs: 1, maxArgs: 1, compile: compileExtreme},
		"max":                   {minArgs: 1, maxArgs: 1, compile: compileExtreme},
		"max_by":                {minArgs: 2, maxArgs: 2, compile: compileBy},
		"min_by":                {minArgs: 2, maxArgs: 2, compile: compileBy},
		"first":                 first,
		"first_value":           first,
		"last":                  first,
		"last_value":            first,
		"any_value":             first,
		"collect_list":          {minArgs: 1, maxArgs: 1, compile: compileCollect},
		"array_agg":             {minArgs: 1, maxArgs: 1, compile: compileCollect},
		"collect_set":           {minArgs: 1, maxArgs: 1, compile: compileCollect},
		"listagg":               listagg,
		"string_agg":            listagg,
		"percentile_cont":       {minArgs: 1, maxArgs: 1, withinGroup: true, compile: compilePercentile},
		"percentile_disc":       {minArgs: 1, maxArgs: 1, withinGroup: true, compile: compilePercentile},
		"percentile":            {minArgs: 2, maxArgs: 3, compile: compilePercentile},
		"median":                {minArgs: 1, maxArgs: 1, compile: compilePercentile},
		"percentile_approx":     {minArgs: 2, maxArgs: 3, compile: compileApproxPercentile},
		"approx_percentile":     {minArgs: 2, maxArgs: 3, compile: compileApproxPercentile},
		"mode":                  {minArgs: 0, maxArgs: 2, withinGroup: true, compile: compileMode},
		"stddev":                moment,
		"std":                   moment,
		"stddev_samp":           moment,
		"stddev_pop":            moment,
		"variance":              moment,
		"var_samp":              moment,
		"var_pop":               moment,
		"skewness":              moment,
		"kurtosis":              moment,
		"covar_pop":             coMoment,
		"covar_samp":            coMoment,
		"corr":                  coMoment,
		"bit_and":               bit,
		"bit_or":                bit,
		"bit_xor":               bit,
		"bool_and":              boolAgg,
		"every":                 boolAgg,
		"bool_or":               boolAgg,
		"some":                  boolAgg,
		"any":                   boolAgg,
	} {
		aggregates[name] = def
	}
}

// ---- per-group columns ----

// growCol extends c, a column with one row per group, to n rows; the new
// groups are NULL until a row reaches them.
func growCol(c *domain.Column, n int) {
	add := n - len(c.Nulls)
	if add <= 0 {
		return
	}
	c.Nulls = append(c.Nulls, allNulls(add)...)
	switch c.Kind {
	case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate:
		c.Ints = append(c.Ints, make([]int64, add)...)
	case domain.KindFloat64:
		c.Floats = append(c.Floats, make([]float64, add)...)
	case domain.KindString, domain.KindBytes:
		c.Strs = append(c.Strs, make([]string, add)...)
	default:
		c.Values = append(c.Values, make([]domain.Value, add)...)
	}
}

// copyRow sets group g of dst to row i of src (of the same kind).
func copyRow(dst *domain.Column, g int, src *domain.Column, i int) {
	null := src.IsNull(i)
	dst.Nulls[g] = null
	switch {
	case dst.Ints != nil:
		dst.Ints[g] = src.Ints[i]
	case dst.Floats != nil:
		dst.Floats[g] = src.Floats[i]
	case dst.Strs != nil:
		dst.Strs[g] = src.Strs[i]
	case !null:
		dst.Values[g] = src.Values[i]
	default:
		dst.Values[g] = domain.Null()
	}
}

// snapshot copies a per-group column for Result, so that later Adds do not
// change a result already handed out.
func snapshot(c *domain.Column) *domain.Column {
	all := make([]int, len(c.Nulls))
	for i := range all {
		all[i] = i
	}
	out := gatherCol(c, all)
	out.Nulls = dropNulls(out.Nulls)
	return out
}

// rowNulls marks the rows where any argument is NULL (nil: none is).
func rowNulls(n int, cols []*domain.Column) []bool {
	for _, c := range cols {
		if c.Kind == domain.KindNull {
			return allNulls(n)
		}
	}
	return unionNulls(n, cols...)
}

// cmpAt orders row i of a against row j of b, of one kind, as Spark orders
// values: NaN above every double.
func cmpAt(a *domain.Column, i int, b *domain.Column, j int) int {
	switch a.Kind {
	case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate:
		return cmp.Compare(a.Ints[i], b.Ints[j])
	case domain.KindFloat64:
		return cmpFloat(a.Floats[i], b.Floats[j])
	case domain.KindString, domain.KindBytes:
		return strings.Compare(a.Strs[i], b.Strs[j])
	}
	return domain.Compare(a.Values[i], b.Values[j])
}

// ---- count, count_if, approx_count_distinct ----

type countAcc struct{ n []int64 }

func (a *countAcc) grow(n int) { a.n = append(a.n, make([]int64, n-len(a.n))...) }

func (a *countAcc) add(args []*domain.Column, groups []int32) error {
	nulls := rowNulls(len(groups), args)
	for i, g := range groups {
		if g >= 0 && !isNullAt(nulls, i) {
			a.n[g]++
		}
	}
	return nil
}

func (a *countAcc) result() (*domain.Column, error) {
	return &domain.Column{Kind: domain.KindInt64, Ints: slices.Clone(a.n)}, nil
}

// compileCount: count(*) counts rows, count(a, b, ...) the rows where no
// argument is NULL.
func compileCount(ac *aggCompile) error {
	ac.a.t = domain.TypeInt64
	ac.a.newAcc = func() accumulator { return &countAcc{} }
	if _, star := ac.call.Args[0].(*Star); star {
		return nil
	}
	for i := range ac.call.Args {
		c, err := ac.arg(i)
		if err != nil {
			return err
		}
		ac.a.args = append(ac.a.args, c)
	}
	return nil
}

// compileApproxCountDistinct counts exactly: an exact count is within any
// error bound, and the per-group sets are what DISTINCT keeps anyway (at
// the cost of memory in proportion to the distinct values, where Spark's
// HyperLogLog++ sketch is of fixed size). The relative error argument is
// held to Spark's limit (at most 39%), then unused.
func compileApproxCountDistinct(ac *aggCompile) error {
	if len(ac.call.Args) == 2 {
		v, err := ac.constant(ac.call.Args[1], "relative standard deviation")
		if err != nil {
			return err
		}
		k := v.Kind()
		if (k != domain.KindFloat64 && k != domain.KindInt64) || numberOf(v) <= 0 || numberOf(v) > 0.39 {
			return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[1].Position(), "the relative standard deviation of approx_count_distinct must be a number in (0, 0.39], found %s", v)
		}
	}
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.distinct = true
	ac.a.t = domain.TypeInt64
	ac.a.newAcc = func() accumulator { return &countAcc{} }
	return nil
}

func numberOf(v domain.Value) float64 {
	if v.Kind() == domain.KindInt64 {
		return float64(v.AsInt())
	}
	return v.AsFloat()
}

type countIfAcc struct{ n []int64 }

func (a *countIfAcc) grow(n int) { a.n = append(a.n, make([]int64, n-len(a.n))...) }

func (a *countIfAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g >= 0 && x.Ints[i] == 1 && !isNullAt(x.Nulls, i) {
			a.n[g]++
		}
	}
	return nil
}

func (a *countIfAcc) result() (*domain.Column, error) {
	return &domain.Column{Kind: domain.KindInt64, Ints: slices.Clone(a.n)}, nil
}

func compileCountIf(ac *aggCompile) error {
	c, err := ac.boolArg(0)
	if err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = domain.TypeInt64
	ac.a.newAcc = func() accumulator { return &countIfAcc{} }
	return nil
}

func (ac *aggCompile) boolArg(i int) (*Compiled, error) {
	c, err := ac.arg(i)
	if err != nil {
		return nil, err
	}
	c.root, err = (&compiler{in: ac.in}).expectBool(c.root, ac.call.Args[i].Position(), ac.name)
	return c, err
}

// ---- sum, avg ----

// sumIntAcc sums bigints; an overflow of a partial sum is
// ARITHMETIC_OVERFLOW as in Spark's ANSI mode, or NULL for try_sum.
type sumIntAcc struct {
	sum      []int64
	has      []bool
	overflow []bool // try_sum: the group overflowed
	try      bool
	pos      Pos
}

func (a *sumIntAcc) grow(n int) {
	add := n - len(a.sum)
	a.sum = append(a.sum, make([]int64, add)...)
	a.has = append(a.has, make([]bool, add)...)
	a.overflow = append(a.overflow, make([]bool, add)...)
}

func (a *sumIntAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) {
			continue
		}
		v, s := x.Ints[i], a.sum[g]
		r := s + v
		if (r > s) != (v > 0) {
			if !a.try {
				return exprErr(domain.CodeArithmeticOverflow, a.pos, "sum overflows bigint: %d + %d", s, v)
			}
			a.overflow[g] = true
		}
		a.sum[g], a.has[g] = r, true
	}
	return nil
}

func (a *sumIntAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindInt64, Ints: slices.Clone(a.sum), Nulls: make([]bool, len(a.sum))}
	for g := range a.sum {
		if !a.has[g] || a.overflow[g] {
			out.Nulls[g], out.Ints[g] = true, 0
		}
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

type sumFloatAcc struct {
	sum []float64
	has []bool
}

func (a *sumFloatAcc) grow(n int) {
	add := n - len(a.sum)
	a.sum = append(a.sum, make([]float64, add)...)
	a.has = append(a.has, make([]bool, add)...)
}

func (a *sumFloatAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g >= 0 && !isNullAt(x.Nulls, i) {
			a.sum[g] += x.Floats[i]
			a.has[g] = true
		}
	}
	return nil
}

func (a *sumFloatAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindFloat64, Floats: slices.Clone(a.sum), Nulls: make([]bool, len(a.sum))}
	for g, has := range a.has {
		out.Nulls[g] = !has
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileSum: the sum of bigints is a bigint, of doubles a double (Spark's
// types; decimals are doubles in sluice).
func compileSum(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	if err := ac.numeric(c, ac.call.Args[0].Position(), false); err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = c.Type()
	if ac.a.t.Kind == domain.KindInt64 {
		try, pos := ac.name == "try_sum", ac.call.Pos
		ac.a.newAcc = func() accumulator { return &sumIntAcc{try: try, pos: pos} }
		return nil
	}
	ac.a.newAcc = func() accumulator { return &sumFloatAcc{} }
	return nil
}

// avgAcc averages as a double, as Spark does for bigint and double input,
// so it cannot overflow (try_avg is avg).
type avgAcc struct {
	sum []float64
	n   []int64
}

func (a *avgAcc) grow(n int) {
	add := n - len(a.sum)
	a.sum = append(a.sum, make([]float64, add)...)
	a.n = append(a.n, make([]int64, add)...)
}

func (a *avgAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	if x.Kind == domain.KindInt64 {
		for i, g := range groups {
			if g >= 0 && !isNullAt(x.Nulls, i) {
				a.sum[g] += float64(x.Ints[i])
				a.n[g]++
			}
		}
		return nil
	}
	for i, g := range groups {
		if g >= 0 && !isNullAt(x.Nulls, i) {
			a.sum[g] += x.Floats[i]
			a.n[g]++
		}
	}
	return nil
}

func (a *avgAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindFloat64, Floats: make([]float64, len(a.sum)), Nulls: make([]bool, len(a.sum))}
	for g, n := range a.n {
		if n == 0 {
			out.Nulls[g] = true
			continue
		}
		out.Floats[g] = a.sum[g] / float64(n)
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

func compileAvg(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	if err := ac.numeric(c, ac.call.Args[0].Position(), false); err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = domain.TypeFloat64
	ac.a.newAcc = func() accumulator { return &avgAcc{} }
	return nil
}

// ---- min, max, max_by, min_by ----

// extremeAcc keeps the least (min) or greatest (max) value of each group, for
// every kind; doubles order NaN above every number, as Spark.
type extremeAcc struct {
	max bool
	out *domain.Column
}

func (a *extremeAcc) grow(n int) { growCol(a.out, n) }

func (a *extremeAcc) add(args []*domain.Column, groups []int32) error {
	x, out := args[0], a.out
	switch x.Kind {
	case domain.KindNull:
	case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate:
		if a.max {
			extremeLoop(x.Ints, x.Nulls, groups, out.Ints, out.Nulls, func(v, best int64) bool { return v > best })
		} else {
			extremeLoop(x.Ints, x.Nulls, groups, out.Ints, out.Nulls, func(v, best int64) bool { return v < best })
		}
	case domain.KindFloat64:
		if a.max {
			extremeLoop(x.Floats, x.Nulls, groups, out.Floats, out.Nulls, func(v, best float64) bool { return cmpFloat(v, best) > 0 })
		} else {
			extremeLoop(x.Floats, x.Nulls, groups, out.Floats, out.Nulls, func(v, best float64) bool { return cmpFloat(v, best) < 0 })
		}
	case domain.KindString, domain.KindBytes:
		if a.max {
			extremeLoop(x.Strs, x.Nulls, groups, out.Strs, out.Nulls, func(v, best string) bool { return v > best })
		} else {
			extremeLoop(x.Strs, x.Nulls, groups, out.Strs, out.Nulls, func(v, best string) bool { return v < best })
		}
	default:
		sign := -1
		if a.max {
			sign = 1
		}
		for i, g := range groups {
			if g >= 0 && !x.IsNull(i) && (out.Nulls[g] || domain.Compare(x.Values[i], out.Values[g])*sign > 0) {
				out.Values[g], out.Nulls[g] = x.Values[i], false
			}
		}
	}
	return nil
}

// extremeLoop keeps in best[g] the value v of the group's rows for which
// better(v, best[g]) held last; empty marks the groups without a value yet.
func extremeLoop[T any](vals []T, nulls []bool, groups []int32, best []T, empty []bool, better func(v, best T) bool) {
	for i, g := range groups {
		if g < 0 || isNullAt(nulls, i) {
			continue
		}
		if empty[g] || better(vals[i], best[g]) {
			best[g], empty[g] = vals[i], false
		}
	}
}

func (a *extremeAcc) result() (*domain.Column, error) { return snapshot(a.out), nil }

func compileExtreme(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = c.Type()
	max, kind := ac.name == "max", c.Type().Kind
	ac.a.newAcc = func() accumulator { return &extremeAcc{max: max, out: newCol(kind, 0)} }
	return nil
}

// byAcc is max_by(x, y) / min_by(x, y): the x of the row with the greatest
// (least) y; rows whose y is NULL are skipped, x may be NULL. Of rows with
// equal y the first one folded wins.
type byAcc struct {
	max  bool
	x, y *domain.Column
}

func (a *byAcc) grow(n int) { growCol(a.x, n); growCol(a.y, n) }

func (a *byAcc) add(args []*domain.Column, groups []int32) error {
	x, y := args[0], args[1]
	if y.Kind == domain.KindNull {
		return nil
	}
	sign := -1
	if a.max {
		sign = 1
	}
	for i, g := range groups {
		if g < 0 || y.IsNull(i) {
			continue
		}
		if a.y.Nulls[g] || cmpAt(y, i, a.y, int(g))*sign > 0 {
			copyRow(a.y, int(g), y, i)
			copyRow(a.x, int(g), x, i)
		}
	}
	return nil
}

func (a *byAcc) result() (*domain.Column, error) { return snapshot(a.x), nil }

func compileBy(ac *aggCompile) error {
	x, err := ac.arg(0)
	if err != nil {
		return err
	}
	y, err := ac.arg(1)
	if err != nil {
		return err
	}
	ac.a.args = []*Compiled{x, y}
	ac.a.t = x.Type()
	max, xk, yk := ac.name == "max_by", x.Type().Kind, y.Type().Kind
	ac.a.newAcc = func() accumulator { return &byAcc{max: max, x: newCol(xk, 0), y: newCol(yk, 0)} }
	return nil
}

// ---- first, last, any_value ----

// firstAcc keeps the first (or last) value folded into each group, skipping
// NULLs when ignoreNulls. Rows are in the order of the Add calls.
type firstAcc struct {
	last, ignoreNulls bool
	out               *domain.Column
	set               []bool
}

func (a *firstAcc) grow(n int) {
	growCol(a.out, n)
	a.set = append(a.set, make([]bool, n-len(a.set))...)
}

func (a *firstAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || (a.set[g] && !a.last) || (a.ignoreNulls && x.IsNull(i)) {
			continue
		}
		copyRow(a.out, int(g), x, i)
		a.set[g] = true
	}
	return nil
}

func (a *firstAcc) result() (*domain.Column, error) { return snapshot(a.out), nil }

// compileFirst: first(x [, ignoreNulls]) and the others; ignoreNulls must be
// a boolean constant, as in Spark, and IGNORE NULLS after the call is the
// same as true.
func compileFirst(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	ignore := ac.call.Nulls == "IGNORE NULLS"
	if len(ac.call.Args) == 2 {
		v, err := ac.constant(ac.call.Args[1], "ignoreNulls argument")
		if err != nil {
			return err
		}
		if v.Kind() != domain.KindBool {
			return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[1].Position(), "the ignoreNulls argument of %s must be a boolean constant, found %s", ac.name, v)
		}
		ignore = ignore || v.AsBool()
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = c.Type()
	last, kind := strings.HasPrefix(ac.name, "last"), c.Type().Kind
	ac.a.newAcc = func() accumulator { return &firstAcc{last: last, ignoreNulls: ignore, out: newCol(kind, 0)} }
	return nil
}

// ---- collect_list, collect_set ----

// collectAcc gathers each group's non-NULL values into an array, in the order
// they are folded; collect_set keeps the first of equal values. The arrays
// are Values, as every array is.
type collectAcc struct {
	set   bool
	lists [][]domain.Value
	seen  map[string]struct{}
	key   []byte
}

func (a *collectAcc) grow(n int) {
	a.lists = append(a.lists, make([][]domain.Value, n-len(a.lists))...)
}

func (a *collectAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || x.IsNull(i) {
			continue
		}
		if a.set {
			a.key = appendKey(binary.LittleEndian.AppendUint32(a.key[:0], uint32(g)), x, i)
			if _, dup := a.seen[string(a.key)]; dup {
				continue
			}
			a.seen[string(a.key)] = struct{}{}
		}
		a.lists[g] = append(a.lists[g], x.Value(i))
	}
	return nil
}

func (a *collectAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindList, Values: make([]domain.Value, len(a.lists))}
	for g, l := range a.lists {
		out.Values[g] = domain.List(slices.Clone(l)...)
	}
	return out, nil
}

func compileCollect(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	elem := c.Type()
	ac.a.t = domain.ListOf(elem)
	set := ac.name == "collect_set"
	ac.a.newAcc = func() accumulator {
		a := &collectAcc{set: set}
		if set {
			a.seen = map[string]struct{}{}
		}
		return a
	}
	return nil
}

// ---- listagg ----

// listaggAcc concatenates each group's non-NULL strings, in the order they
// are folded or, with WITHIN GROUP, sorted by the ordering keys (a stable
// sort: rows with equal keys keep their order).
type listaggAcc struct {
	vals  [][]string
	keys  [][][]domain.Value // per group and row, the ordering keys
	order []*OrderItem
	sep   string
	kind  domain.Kind
}

func (a *listaggAcc) grow(n int) {
	add := n - len(a.vals)
	a.vals = append(a.vals, make([][]string, add)...)
	a.keys = append(a.keys, make([][][]domain.Value, add)...)
}

func (a *listaggAcc) add(args []*domain.Column, groups []int32) error {
	x, keyCols := args[0], args[1:1+len(a.order)]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) {
			continue
		}
		a.vals[g] = append(a.vals[g], x.Strs[i])
		if len(keyCols) > 0 {
			// the keys may be of any kind: they are boxed, the strings are not
			k := make([]domain.Value, len(keyCols))
			for j, c := range keyCols {
				k[j] = c.Value(i)
			}
			a.keys[g] = append(a.keys[g], k)
		}
	}
	return nil
}

// cmpKeys orders two rows by the WITHIN GROUP keys: NULLs first in
// ascending order and last in descending order unless NULLS says otherwise,
// as Spark sorts.
func (a *listaggAcc) cmpKeys(x, y []domain.Value) int {
	for j, o := range a.order {
		xn, yn := x[j].IsNull(), y[j].IsNull()
		nullsFirst := o.Nulls == "FIRST" || (o.Nulls == "" && !o.Desc)
		var c int
		switch {
		case xn && yn:
			continue
		case xn || yn:
			c = 1
			if xn == nullsFirst {
				c = -1
			}
			return c
		}
		c = domain.Compare(x[j], y[j])
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (a *listaggAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: a.kind, Strs: make([]string, len(a.vals)), Nulls: make([]bool, len(a.vals))}
	for g, vals := range a.vals {
		if len(vals) == 0 {
			out.Nulls[g] = true
			continue
		}
		if len(a.order) > 0 {
			idx := make([]int, len(vals))
			for i := range idx {
				idx[i] = i
			}
			keys := a.keys[g]
			slices.SortStableFunc(idx, func(i, j int) int { return a.cmpKeys(keys[i], keys[j]) })
			sorted := make([]string, len(vals))
			for i, k := range idx {
				sorted[i] = vals[k]
			}
			vals = sorted
		}
		out.Strs[g] = strings.Join(vals, a.sep)
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileListagg: listagg(x [, delimiter]) [WITHIN GROUP (ORDER BY ...)] and
// string_agg. x is a string or binary (other scalars are cast to string);
// the delimiter a constant of the same type, NULL for none. With DISTINCT
// the orderings must be x itself (Spark's rule, so that DISTINCT is well
// defined).
func compileListagg(ac *aggCompile) error {
	x, err := ac.arg(0)
	if err != nil {
		return err
	}
	switch k := x.Type().Kind; {
	case k == domain.KindNull:
		x.root = retype(x.root, domain.TypeString)
	case scalarCastable(k):
		x.root = implicit(x.root, domain.TypeString, ac.call.Args[0].Position())
	case k != domain.KindString && k != domain.KindBytes:
		return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[0].Position(), "%s needs a string or binary value, found %s", ac.name, x.Type())
	}
	acc := &listaggAcc{kind: x.Type().Kind, order: ac.call.WithinGroup}
	if len(ac.call.Args) == 2 {
		v, err := ac.constant(ac.call.Args[1], "delimiter")
		if err != nil {
			return err
		}
		if !v.IsNull() && v.Kind() != acc.kind {
			return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[1].Position(), "the delimiter of %s must be a %s constant like its value, found %s", ac.name, acc.kind, v.Kind())
		}
		acc.sep = v.AsString()
	}
	ac.a.args = []*Compiled{x}
	for _, o := range ac.call.WithinGroup {
		if ac.a.distinct && o.Expr.String() != ac.call.Args[0].String() {
			return exprErr(domain.CodeInvalidWithinGroup, o.Pos, "%s(DISTINCT %s) can only be ordered by %s", ac.name, ac.call.Args[0], ac.call.Args[0])
		}
		k, err := Compile(o.Expr, ac.in)
		if err != nil {
			return err
		}
		ac.a.args = append(ac.a.args, k)
	}
	ac.a.t = x.Type()
	ac.a.newAcc = func() accumulator {
		c := *acc
		return &c
	}
	return nil
}

// ---- percentiles ----

// percentileAcc gathers each group's values (with their frequencies for
// percentile(x, p, frequency)) and computes, at the end, the continuous
// (interpolated) or discrete percentiles of them.
type percentileAcc struct {
	vals     [][]float64
	freqs    [][]int64 // only when weighted
	weighted bool      // a frequency argument; else every value counts once
	ps       []float64
	array    bool // percentile(x, array(...)): an array of results
	discrete bool
	desc     bool
	pos      Pos
}

func (a *percentileAcc) grow(n int) {
	add := n - len(a.vals)
	a.vals = append(a.vals, make([][]float64, add)...)
	if a.weighted {
		a.freqs = append(a.freqs, make([][]int64, add)...)
	}
}

func (a *percentileAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	if !a.weighted {
		for i, g := range groups {
			if g >= 0 && !isNullAt(x.Nulls, i) {
				a.vals[g] = append(a.vals[g], x.Floats[i])
			}
		}
		return nil
	}
	// as Spark: a NULL or zero frequency skips the row, a negative one fails
	f := args[1]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) || isNullAt(f.Nulls, i) || f.Ints[i] == 0 {
			continue
		}
		if f.Ints[i] < 0 {
			return exprErr(domain.CodeNegativeFrequency, a.pos, "the frequency %d of the value %s is negative", f.Ints[i], fmtFloat(x.Floats[i]))
		}
		a.vals[g] = append(a.vals[g], x.Floats[i])
		a.freqs[g] = append(a.freqs[g], f.Ints[i])
	}
	return nil
}

func (a *percentileAcc) result() (*domain.Column, error) {
	n := len(a.vals)
	out := &domain.Column{Kind: domain.KindFloat64, Floats: make([]float64, n), Nulls: make([]bool, n)}
	if a.array {
		out = &domain.Column{Kind: domain.KindList, Values: make([]domain.Value, n), Nulls: make([]bool, n)}
	}
	for g := range a.vals {
		d := a.distribution(g)
		if d.total == 0 {
			out.Nulls[g] = true
			if a.array {
				out.Values[g] = domain.Null()
			}
			continue
		}
		if !a.array {
			out.Floats[g] = a.at(d, a.ps[0])
			continue
		}
		items := make([]domain.Value, len(a.ps))
		for j, p := range a.ps {
			items[j] = domain.Float(a.at(d, p))
		}
		out.Values[g] = domain.List(items...)
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// distribution is a group's values in order, each standing for as many rows
// as its frequency: sorted[i] is the value of rows cum[i-1] to cum[i]-1.
type distribution struct {
	sorted []float64
	cum    []int64 // nil: every value once
	total  int64
}

// nth is the value of row k (0-based) of the distribution.
func (d distribution) nth(k int64) float64 {
	if d.cum == nil {
		return d.sorted[k]
	}
	i, _ := slices.BinarySearch(d.cum, k+1)
	return d.sorted[i]
}

func (a *percentileAcc) distribution(g int) distribution {
	if !a.weighted {
		sorted := slices.Clone(a.vals[g])
		slices.SortFunc(sorted, cmpFloat)
		if a.desc {
			slices.Reverse(sorted)
		}
		return distribution{sorted: sorted, total: int64(len(sorted))}
	}
	type weighted struct {
		v float64
		n int64
	}
	ws := make([]weighted, len(a.vals[g]))
	for i, v := range a.vals[g] {
		ws[i] = weighted{v, a.freqs[g][i]}
	}
	slices.SortFunc(ws, func(x, y weighted) int { return cmpFloat(x.v, y.v) })
	if a.desc {
		slices.Reverse(ws)
	}
	d := distribution{sorted: make([]float64, len(ws)), cum: make([]int64, len(ws))}
	for i, w := range ws {
		d.total += w.n
		d.sorted[i], d.cum[i] = w.v, d.total
	}
	return d
}

// at is percentile p of a distribution. Continuous: linear interpolation
// between the rows around position p*(n-1). Discrete: the first row whose
// cumulative distribution reaches p (the SQL standard, Spark 4's default).
func (a *percentileAcc) at(d distribution, p float64) float64 {
	if a.discrete {
		return d.nth(int64(discreteRank(p, int(d.total))))
	}
	pos := p * float64(d.total-1)
	lo, hi := math.Floor(pos), math.Ceil(pos)
	if lo == hi {
		return d.nth(int64(lo))
	}
	return (hi-pos)*d.nth(int64(lo)) + (pos-lo)*d.nth(int64(hi))
}

// compilePercentile: percentile_cont(p) and percentile_disc(p) WITHIN GROUP
// (ORDER BY x [DESC]), percentile(x, p [, frequency]) and percentile(x,
// array(p, ...) [, frequency]), median(x). The percentages are constants in [0, 1]; the result is a double
// (an array of doubles for an array of percentages).
func compilePercentile(ac *aggCompile) error {
	acc := &percentileAcc{discrete: ac.name == "percentile_disc"}
	var x, freq *Compiled
	var xPos Pos
	var pArg Expr
	var err error
	switch ac.name {
	case "percentile_cont", "percentile_disc":
		if len(ac.call.WithinGroup) == 0 {
			return exprErr(domain.CodeInvalidWithinGroup, ac.call.Pos, "%s needs WITHIN GROUP (ORDER BY ...)", ac.name)
		}
		if x, acc.desc, err = ac.ordered(); err != nil {
			return err
		}
		xPos, pArg = ac.call.WithinGroup[0].Pos, ac.call.Args[0]
	case "median":
		if x, err = ac.arg(0); err != nil {
			return err
		}
		xPos, acc.ps = ac.call.Args[0].Position(), []float64{0.5}
	default: // percentile
		if x, err = ac.arg(0); err != nil {
			return err
		}
		xPos, pArg = ac.call.Args[0].Position(), ac.call.Args[1]
		if len(ac.call.Args) == 3 {
			if freq, err = ac.arg(2); err != nil {
				return err
			}
			switch freq.Type().Kind {
			case domain.KindNull:
				freq.root = retype(freq.root, domain.TypeInt64)
			case domain.KindInt64:
			default:
				return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[2].Position(), "the frequency of percentile must be an integer, found %s", freq.Type())
			}
			acc.weighted, acc.pos = true, ac.call.Pos
		}
	}
	if err := ac.numeric(x, xPos, true); err != nil {
		return err
	}
	if pArg != nil {
		if acc.ps, acc.array, err = ac.percentages(pArg); err != nil {
			return err
		}
		if acc.array && ac.name != "percentile" {
			return exprErr(domain.CodeDatatypeMismatch, pArg.Position(), "the percentage of %s must be a number between 0 and 1, found an array", ac.name)
		}
	}
	ac.a.args = []*Compiled{x}
	if freq != nil {
		ac.a.args = append(ac.a.args, freq)
	}
	ac.a.t = domain.TypeFloat64
	if acc.array {
		ac.a.t = domain.ListOf(domain.TypeFloat64)
	}
	ac.a.newAcc = func() accumulator {
		c := *acc
		return &c
	}
	return nil
}

// percentages evaluates the percentage argument of a percentile: a
// constant in [0, 1], or array(p, ...) of them (array reports which).
func (ac *aggCompile) percentages(e Expr) (ps []float64, array bool, err error) {
	items := []Expr{e}
	if f, ok := e.(*FuncCall); ok && strings.EqualFold(f.Name.Last().Name, "array") && len(f.Name.Parts) == 1 {
		items, array = f.Args, true
	}
	for _, it := range items {
		v, err := ac.constant(it, "percentage")
		if err != nil {
			return nil, false, err
		}
		if k := v.Kind(); (k != domain.KindFloat64 && k != domain.KindInt64) || numberOf(v) < 0 || numberOf(v) > 1 {
			return nil, false, exprErr(domain.CodeDatatypeMismatch, it.Position(), "the percentage of %s must be a number between 0 and 1, found %s", ac.name, v)
		}
		ps = append(ps, numberOf(v))
	}
	return ps, array, nil
}

// ---- approx_percentile ----

// approxPercentileAcc is percentile_approx / approx_percentile, computed
// exactly: the exact answer is within any accuracy bound. Like Spark's it
// is a value of the input (the discrete percentile: the least value whose
// cumulative distribution reaches p), of the input's type, so bigints keep
// every digit and dates and timestamps are allowed.
type approxPercentileAcc struct {
	ints   [][]int64 // bigint, date, timestamp
	floats [][]float64
	kind   domain.Kind
	ps     []float64
	array  bool
}

func (a *approxPercentileAcc) grow(n int) {
	if a.kind == domain.KindFloat64 {
		a.floats = append(a.floats, make([][]float64, n-len(a.floats))...)
		return
	}
	a.ints = append(a.ints, make([][]int64, n-len(a.ints))...)
}

func (a *approxPercentileAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) {
			continue
		}
		if a.kind == domain.KindFloat64 {
			a.floats[g] = append(a.floats[g], x.Floats[i])
		} else {
			a.ints[g] = append(a.ints[g], x.Ints[i])
		}
	}
	return nil
}

// discreteRank is the 0-based position of the discrete percentile p among
// n sorted values: the first whose cumulative distribution reaches p.
func discreteRank(p float64, n int) int {
	return max(int(math.Ceil(p*float64(n)))-1, 0)
}

func (a *approxPercentileAcc) result() (*domain.Column, error) {
	n := max(len(a.ints), len(a.floats))
	out := newCol(a.kind, n)
	if a.array {
		out = newCol(domain.KindList, n)
	}
	out.Nulls = make([]bool, n)
	for g := 0; g < n; g++ {
		var pick func(p float64) domain.Value
		var count int
		if a.kind == domain.KindFloat64 {
			sorted := slices.Clone(a.floats[g])
			slices.SortFunc(sorted, cmpFloat)
			count = len(sorted)
			pick = func(p float64) domain.Value { return domain.Float(sorted[discreteRank(p, len(sorted))]) }
		} else {
			sorted := slices.Clone(a.ints[g])
			slices.Sort(sorted)
			count = len(sorted)
			pick = func(p float64) domain.Value {
				v := sorted[discreteRank(p, len(sorted))]
				switch a.kind {
				case domain.KindDate:
					return domain.DateDays(v)
				case domain.KindTimestamp:
					return domain.TimestampMicros(v)
				}
				return domain.Int(v)
			}
		}
		switch {
		case count == 0:
			out.Nulls[g] = true
			if a.array {
				out.Values[g] = domain.Null()
			}
		case a.array:
			items := make([]domain.Value, len(a.ps))
			for j, p := range a.ps {
				items[j] = pick(p)
			}
			out.Values[g] = domain.List(items...)
		case a.kind == domain.KindFloat64:
			out.Floats[g] = pick(a.ps[0]).AsFloat()
		default:
			out.Ints[g] = pick(a.ps[0]).AsInt()
		}
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileApproxPercentile: percentile_approx(x, p [, accuracy]) and
// approx_percentile, p a constant in [0, 1] or array(p, ...), accuracy a
// positive integer constant (checked, then unused: the answer is exact).
func compileApproxPercentile(ac *aggCompile) error {
	x, err := ac.arg(0)
	if err != nil {
		return err
	}
	switch k := x.Type().Kind; k {
	case domain.KindInt64, domain.KindFloat64, domain.KindDate, domain.KindTimestamp:
	case domain.KindNull:
		x.root = retype(x.root, domain.TypeFloat64)
	default:
		return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[0].Position(), "%s needs a number, a date or a timestamp, found %s", ac.name, x.Type())
	}
	acc := &approxPercentileAcc{kind: x.Type().Kind}
	if acc.ps, acc.array, err = ac.percentages(ac.call.Args[1]); err != nil {
		return err
	}
	if len(ac.call.Args) == 3 {
		v, err := ac.constant(ac.call.Args[2], "accuracy")
		if err != nil {
			return err
		}
		if v.Kind() != domain.KindInt64 || v.AsInt() <= 0 || v.AsInt() > math.MaxInt32 {
			return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[2].Position(), "the accuracy of %s must be an integer in [1, %d], found %s", ac.name, math.MaxInt32, v)
		}
	}
	ac.a.args = []*Compiled{x}
	ac.a.t = x.Type()
	if acc.array {
		ac.a.t = domain.ListOf(x.Type())
	}
	ac.a.newAcc = func() accumulator {
		c := *acc
		return &c
	}
	return nil
}

// ---- mode ----

// modeKey is a value: ints and double bits in i, strings in s, and arrays
// and structs encoded (appendValueKey) in s.
type modeKey struct {
	i int64
	s string
}

// modeAcc counts each group's values; the result is the most frequent one,
// and of equally frequent ones the least (the greatest with ORDER BY x
// DESC). Spark returns any of them without the deterministic flag; the
// least is one of them.
type modeAcc struct {
	counts []map[modeKey]int64
	kind   domain.Kind
	desc   bool
	nested map[string]domain.Value // arrays and structs by their encoding
}

func (a *modeAcc) grow(n int) {
	a.counts = append(a.counts, make([]map[modeKey]int64, n-len(a.counts))...)
}

func (a *modeAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || x.IsNull(i) {
			continue
		}
		var k modeKey
		switch x.Kind {
		case domain.KindFloat64:
			k.i = int64(normalFloatBits(x.Floats[i]))
		case domain.KindString, domain.KindBytes:
			k.s = x.Strs[i]
		case domain.KindList, domain.KindStruct:
			k.s = string(appendValueKey(nil, x.Values[i]))
			if _, ok := a.nested[k.s]; !ok {
				a.nested[k.s] = x.Values[i]
			}
		default:
			k.i = x.Ints[i]
		}
		if a.counts[g] == nil {
			a.counts[g] = map[modeKey]int64{}
		}
		a.counts[g][k]++
	}
	return nil
}

func (a *modeAcc) less(x, y modeKey) bool {
	var c int
	switch a.kind {
	case domain.KindFloat64:
		c = cmpFloat(math.Float64frombits(uint64(x.i)), math.Float64frombits(uint64(y.i)))
	case domain.KindString, domain.KindBytes:
		c = strings.Compare(x.s, y.s)
	case domain.KindList, domain.KindStruct:
		c = domain.Compare(a.nested[x.s], a.nested[y.s])
	default:
		c = cmp.Compare(x.i, y.i)
	}
	if a.desc {
		return c > 0
	}
	return c < 0
}

func (a *modeAcc) result() (*domain.Column, error) {
	out := newCol(a.kind, len(a.counts))
	out.Nulls = make([]bool, len(a.counts))
	for g, m := range a.counts {
		if len(m) == 0 {
			out.Nulls[g] = true
			continue
		}
		var best modeKey
		var bestN int64
		for k, n := range m {
			if n > bestN || (n == bestN && a.less(k, best)) {
				best, bestN = k, n
			}
		}
		switch a.kind {
		case domain.KindFloat64:
			out.Floats[g] = math.Float64frombits(uint64(best.i))
		case domain.KindString, domain.KindBytes:
			out.Strs[g] = best.s
		case domain.KindList, domain.KindStruct:
			out.Values[g] = a.nested[best.s]
		default:
			out.Ints[g] = best.i
		}
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileMode: mode(x [, deterministic]) or mode() WITHIN GROUP (ORDER BY x
// [DESC]), over values of any kind.
func compileMode(ac *aggCompile) error {
	var x *Compiled
	var desc bool
	var err error
	switch {
	case len(ac.call.WithinGroup) > 0:
		if len(ac.call.Args) > 0 {
			return exprErr(domain.CodeWrongNumArgs, ac.call.Pos, "mode takes no argument with WITHIN GROUP, %d given", len(ac.call.Args))
		}
		x, desc, err = ac.ordered()
	case len(ac.call.Args) == 0:
		return wrongArgs(ac.call, "mode", "1 or 2")
	default:
		if len(ac.call.Args) == 2 {
			v, err := ac.constant(ac.call.Args[1], "deterministic argument")
			if err != nil {
				return err
			}
			if v.Kind() != domain.KindBool {
				return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[1].Position(), "the deterministic argument of mode must be a boolean constant, found %s", v)
			}
		}
		x, err = ac.arg(0)
	}
	if err != nil {
		return err
	}
	kind := x.Type().Kind
	if kind == domain.KindNull {
		kind = domain.KindFloat64
		x.root = retype(x.root, domain.TypeFloat64)
	}
	ac.a.args = []*Compiled{x}
	ac.a.t = x.Type()
	ac.a.newAcc = func() accumulator { return &modeAcc{kind: kind, desc: desc, nested: map[string]domain.Value{}} }
	return nil
}

// ---- variance, standard deviation, skewness, kurtosis ----

// momentAcc keeps count, mean and the sums of powers of deviations of each
// group (the one-pass updates of Spark's CentralMomentAgg). Spark merges
// partial results of its partitions, so its last digits depend on how the
// rows were split; these are the results of one partition. A division by zero is NULL, as in Spark 4 (not the
// legacy NaN): the sample forms of one row, the skewness and kurtosis of
// equal values.
type momentAcc struct {
	n, mean, m2, m3, m4 []float64
	stat                string // var_samp, var_pop, stddev_samp, stddev_pop, skewness or kurtosis
	higher              bool   // m3 and m4 are needed
}

func (a *momentAcc) grow(n int) {
	add := n - len(a.n)
	a.n = append(a.n, make([]float64, add)...)
	a.mean = append(a.mean, make([]float64, add)...)
	a.m2 = append(a.m2, make([]float64, add)...)
	if a.higher {
		a.m3 = append(a.m3, make([]float64, add)...)
		a.m4 = append(a.m4, make([]float64, add)...)
	}
}

func (a *momentAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) {
			continue
		}
		a.n[g]++
		d := x.Floats[i] - a.mean[g]
		dn := d / a.n[g]
		a.mean[g] += dn
		a.m2[g] += d * (d - dn)
		if a.higher {
			d2, dn2 := d*d, dn*dn
			a.m3[g] = a.m3[g] - 3*dn*a.m2[g] + d*(d2-dn2)
			a.m4[g] = a.m4[g] - 4*dn*a.m3[g] - 6*dn2*a.m2[g] + d*(d*d2-dn*dn2)
		}
	}
	return nil
}

func (a *momentAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindFloat64, Floats: make([]float64, len(a.n)), Nulls: make([]bool, len(a.n))}
	for g, n := range a.n {
		m2 := a.m2[g]
		var v float64
		ok := n > 0
		switch a.stat {
		case "var_samp", "stddev_samp":
			ok = n > 1
			v = m2 / (n - 1)
		case "var_pop", "stddev_pop":
			v = m2 / n
		case "skewness":
			ok = ok && m2 != 0
			v = math.Sqrt(n) * a.m3[g] / math.Sqrt(m2*m2*m2)
		case "kurtosis":
			ok = ok && m2 != 0
			v = n*a.m4[g]/(m2*m2) - 3
		}
		if !ok {
			out.Nulls[g] = true
			continue
		}
		if strings.HasPrefix(a.stat, "stddev") {
			v = math.Sqrt(v)
		}
		out.Floats[g] = v
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

func compileMoment(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	if err := ac.numeric(c, ac.call.Args[0].Position(), true); err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = domain.TypeFloat64
	stat := map[string]string{"variance": "var_samp", "stddev": "stddev_samp", "std": "stddev_samp"}[ac.name]
	if stat == "" {
		stat = ac.name
	}
	higher := stat == "skewness" || stat == "kurtosis"
	ac.a.newAcc = func() accumulator { return &momentAcc{stat: stat, higher: higher} }
	return nil
}

// ---- covariance, correlation ----

// coMomentAcc keeps count, means and co-moments of each group's (x, y)
// pairs where neither is NULL, with the updates of Spark's Covariance and
// Corr. As in Spark 4, covar_samp of one pair and corr of one pair are
// NULL; corr of a constant column is NaN (0/0), as Spark computes it.
type coMomentAcc struct {
	n, xAvg, yAvg, ck, xMk, yMk []float64
	stat                        string // covar_pop, covar_samp or corr
}

func (a *coMomentAcc) grow(n int) {
	add := n - len(a.n)
	for _, s := range []*[]float64{&a.n, &a.xAvg, &a.yAvg, &a.ck, &a.xMk, &a.yMk} {
		*s = append(*s, make([]float64, add)...)
	}
}

func (a *coMomentAcc) add(args []*domain.Column, groups []int32) error {
	x, y := args[0], args[1]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) || isNullAt(y.Nulls, i) {
			continue
		}
		xv, yv := x.Floats[i], y.Floats[i]
		a.n[g]++
		dx, dy := xv-a.xAvg[g], yv-a.yAvg[g]
		a.xAvg[g] += dx / a.n[g]
		a.yAvg[g] += dy / a.n[g]
		a.ck[g] += dx * (yv - a.yAvg[g])
		a.xMk[g] += dx * (xv - a.xAvg[g])
		a.yMk[g] += dy * (yv - a.yAvg[g])
	}
	return nil
}

func (a *coMomentAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindFloat64, Floats: make([]float64, len(a.n)), Nulls: make([]bool, len(a.n))}
	for g, n := range a.n {
		switch {
		case a.stat == "covar_pop" && n > 0:
			out.Floats[g] = a.ck[g] / n
		case a.stat == "covar_samp" && n > 1:
			out.Floats[g] = a.ck[g] / (n - 1)
		case a.stat == "corr" && n > 1:
			out.Floats[g] = a.ck[g] / math.Sqrt(a.xMk[g]*a.yMk[g])
		default:
			out.Nulls[g] = true
		}
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

func compileCoMoment(ac *aggCompile) error {
	for i := range 2 {
		c, err := ac.arg(i)
		if err != nil {
			return err
		}
		if err := ac.numeric(c, ac.call.Args[i].Position(), true); err != nil {
			return err
		}
		ac.a.args = append(ac.a.args, c)
	}
	ac.a.t = domain.TypeFloat64
	stat := ac.name
	ac.a.newAcc = func() accumulator { return &coMomentAcc{stat: stat} }
	return nil
}

// ---- bit_and, bit_or, bit_xor ----

type bitAcc struct {
	op  string // and, or, xor
	v   []int64
	has []bool
}

func (a *bitAcc) grow(n int) {
	add := n - len(a.v)
	a.v = append(a.v, make([]int64, add)...)
	a.has = append(a.has, make([]bool, add)...)
}

func (a *bitAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) {
			continue
		}
		v := x.Ints[i]
		switch {
		case !a.has[g]:
			a.v[g], a.has[g] = v, true
		case a.op == "and":
			a.v[g] &= v
		case a.op == "or":
			a.v[g] |= v
		default:
			a.v[g] ^= v
		}
	}
	return nil
}

func (a *bitAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindInt64, Ints: slices.Clone(a.v), Nulls: make([]bool, len(a.v))}
	for g, has := range a.has {
		out.Nulls[g] = !has
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileBit: bit_and, bit_or and bit_xor of integers (a NULL literal is a
// bigint; Spark takes no strings here).
func compileBit(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	switch c.Type().Kind {
	case domain.KindNull:
		c.root = retype(c.root, domain.TypeInt64)
	case domain.KindInt64:
	default:
		return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[0].Position(), "%s needs an integer, found %s", ac.name, c.Type())
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = domain.TypeInt64
	op := strings.TrimPrefix(ac.name, "bit_")
	ac.a.newAcc = func() accumulator { return &bitAcc{op: op} }
	return nil
}

// ---- bool_and, bool_or ----

type boolAcc struct {
	and bool
	v   []int64
	has []bool
}

func (a *boolAcc) grow(n int) {
	add := n - len(a.v)
	a.v = append(a.v, make([]int64, add)...)
	a.has = append(a.has, make([]bool, add)...)
}

func (a *boolAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || isNullAt(x.Nulls, i) {
			continue
		}
		switch {
		case !a.has[g]:
			a.v[g], a.has[g] = x.Ints[i], true
		case a.and:
			a.v[g] &= x.Ints[i]
		default:
			a.v[g] |= x.Ints[i]
		}
	}
	return nil
}

func (a *boolAcc) result() (*domain.Column, error) {
	out := &domain.Column{Kind: domain.KindBool, Ints: slices.Clone(a.v), Nulls: make([]bool, len(a.v))}
	for g, has := range a.has {
		out.Nulls[g] = !has
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileBoolAgg: bool_and and every; bool_or, some and any.
func compileBoolAgg(ac *aggCompile) error {
	c, err := ac.boolArg(0)
	if err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = domain.TypeBool
	and := ac.name == "bool_and" || ac.name == "every"
	ac.a.newAcc = func() accumulator { return &boolAcc{and: and} }
	return nil
}
