package sql

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// The statistical aggregates: percentiles, mode, moments, covariance.

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
	pos      syntax.Pos
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
	var xPos syntax.Pos
	var pArg syntax.Expr
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
func (ac *aggCompile) percentages(e syntax.Expr) (ps []float64, array bool, err error) {
	items := []syntax.Expr{e}
	if f, ok := e.(*syntax.FuncCall); ok && strings.EqualFold(f.Name.Last().Name, "array") && len(f.Name.Parts) == 1 {
		items, array = f.Args, true
	}
	for _, it := range items {
		v, err := ac.constant(it, "percentage")
		if err != nil {
			return nil, false, err
		}
		if k := v.Kind(); !isNumeric(k) || numberOf(v) < 0 || numberOf(v) > 1 {
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
			pick = func(p float64) domain.Value { return intOfKind(a.kind, sorted[discreteRank(p, len(sorted))]) }
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
// NULL; corr of a constant column is NaN (0/0), as Spark computes it. The
// regr_ functions (y first, then x, as SQL writes them) read the same sums:
// regr_slope and regr_intercept are NULL where x is constant, regr_r2 is
// then NULL, and 1 where y is.
type coMomentAcc struct {
	n, xAvg, yAvg, ck, xMk, yMk []float64
	stat                        string // covar_pop, covar_samp, corr or a regr_ function
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
	if a.stat == "regr_count" {
		out := &domain.Column{Kind: domain.KindInt64, Ints: make([]int64, len(a.n))}
		for g, n := range a.n {
			out.Ints[g] = int64(n)
		}
		return out, nil
	}
	out := &domain.Column{Kind: domain.KindFloat64, Floats: make([]float64, len(a.n)), Nulls: make([]bool, len(a.n))}
	for g, n := range a.n {
		slope := a.ck[g] / a.xMk[g]
		switch {
		case n == 0:
			out.Nulls[g] = true
		case a.stat == "regr_avgx":
			out.Floats[g] = a.xAvg[g]
		case a.stat == "regr_avgy":
			out.Floats[g] = a.yAvg[g]
		case a.stat == "regr_sxx":
			out.Floats[g] = a.xMk[g]
		case a.stat == "regr_syy":
			out.Floats[g] = a.yMk[g]
		case a.stat == "regr_sxy":
			out.Floats[g] = a.ck[g]
		case strings.HasPrefix(a.stat, "regr_") && a.xMk[g] == 0:
			out.Nulls[g] = true // x constant: no line
		case a.stat == "regr_slope":
			out.Floats[g] = slope
		case a.stat == "regr_intercept":
			out.Floats[g] = a.yAvg[g] - slope*a.xAvg[g]
		case a.stat == "regr_r2" && a.yMk[g] == 0:
			out.Floats[g] = 1
		case a.stat == "regr_r2":
			out.Floats[g] = a.ck[g] * a.ck[g] / (a.xMk[g] * a.yMk[g])
		}
		switch {
		case a.stat == "covar_pop" && n > 0:
			out.Floats[g] = a.ck[g] / n
		case a.stat == "covar_samp" && n > 1:
			out.Floats[g] = a.ck[g] / (n - 1)
		case a.stat == "corr" && n > 1:
			out.Floats[g] = a.ck[g] / math.Sqrt(a.xMk[g]*a.yMk[g])
		case !strings.HasPrefix(a.stat, "regr_"):
			out.Nulls[g] = true
		}
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

func compileCoMoment(ac *aggCompile) error {
	order := []int{0, 1}
	if strings.HasPrefix(ac.name, "regr_") {
		order = []int{1, 0} // regr_f(y, x): x first to the accumulator
	}
	for _, i := range order {
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
	if ac.name == "regr_count" {
		ac.a.t = domain.TypeInt64
	}
	stat := ac.name
	ac.a.newAcc = func() accumulator { return &coMomentAcc{stat: stat} }
	return nil
}
