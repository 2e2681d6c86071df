package sql

import (
	"cmp"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
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
		"histogram_numeric":     {minArgs: 2, maxArgs: 2, compile: compileHistogramNumeric},
		"schema_of_variant_agg": {minArgs: 1, maxArgs: 1, compile: compileSchemaOfVariantAgg},
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
		"regr_count":            coMoment,
		"regr_avgx":             coMoment,
		"regr_avgy":             coMoment,
		"regr_sxx":              coMoment,
		"regr_syy":              coMoment,
		"regr_sxy":              coMoment,
		"regr_slope":            coMoment,
		"regr_intercept":        coMoment,
		"regr_r2":               coMoment,
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
	if _, star := ac.call.Args[0].(*syntax.Star); star {
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
		if !isNumeric(k) || numberOf(v) <= 0 || numberOf(v) > 0.39 {
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
	switch v.Kind() {
	case domain.KindInt64:
		return float64(v.AsInt())
	case domain.KindDecimal:
		return domain.DecimalToFloat(v.AsDecimal(), v.Scale())
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
	pos      syntax.Pos
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
	return &domain.Column{Kind: domain.KindFloat64, Floats: slices.Clone(a.sum), Nulls: absent(a.has)}, nil
}

// compileSum: the sum of bigints is a bigint, of doubles a double (Spark's
// types; decimals are doubles in sluice).
func compileSum(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	if c.Type().Kind == domain.KindDecimal {
		decimalSum(ac, c, false)
		return nil
	}
	if err := ac.numeric(c, ac.call.Args[0].Position(), false); err != nil {
		return err
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = c.Type()
	if ac.a.t.Kind == domain.KindInt64 {
		ac.a.t = domain.TypeInt64 // the sum of any integers is a bigint
		try, pos := ac.name == "try_sum", ac.call.Pos
		ac.a.newAcc = func() accumulator { return &sumIntAcc{try: try, pos: pos} }
		return nil
	}
	ac.a.t = domain.TypeFloat64 // of floats too
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
	if c.Type().Kind == domain.KindDecimal {
		decimalSum(ac, c, true)
		return nil
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
	return &domain.Column{Kind: domain.KindInt64, Ints: slices.Clone(a.v), Nulls: absent(a.has)}, nil
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
	return &domain.Column{Kind: domain.KindBool, Ints: slices.Clone(a.v), Nulls: absent(a.has)}, nil
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

// absent marks NULL the groups no value reached, for a result column; nil
// when every group has one.
func absent(has []bool) []bool {
	nulls := make([]bool, len(has))
	for g, h := range has {
		nulls[g] = !h
	}
	return dropNulls(nulls)
}
