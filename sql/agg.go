package sql

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Aggregate is an aggregate call (count(*), sum(x), count(DISTINCT a, b),
// max_by(x, y), percentile_cont(0.5) WITHIN GROUP (ORDER BY x),
// any(c) FILTER (WHERE d)) compiled against the schema its arguments read.
//
// An aggregate folds batches into per-group accumulators a column at a time:
// the caller assigns every row a group id (the planner's GROUP BY), calls Add
// for each batch and Result at the end. Accumulators of scalar kinds are
// typed slices indexed by group id, never a boxed value per row.
//
// The functions, with Spark 4's types and ANSI semantics: count,
// count_if, sum, try_sum, avg / mean, try_avg, min, max, max_by, min_by,
// first / first_value, last / last_value, any_value, collect_list /
// array_agg, collect_set, listagg / string_agg, approx_count_distinct,
// percentile, percentile_cont, percentile_disc, percentile_approx /
// approx_percentile, median, mode, stddev / std / stddev_samp, stddev_pop,
// variance / var_samp, var_pop, skewness, kurtosis, covar_pop, covar_samp,
// corr, bit_and, bit_or, bit_xor, bool_and / every, bool_or / some / any.
// All take FILTER (WHERE ...) and DISTINCT (not with WITHIN GROUP, except
// listagg ordered by its own argument).
//
// Differences from Spark: approx_count_distinct and percentile_approx are
// exact (within any error bound, but their memory grows with the data);
// decimals are doubles, so sum and avg of decimals are doubles.
// Where Spark's answer depends on the order rows arrive in (collect_list,
// first, last, any_value, listagg without WITHIN GROUP, max_by of equal
// keys, mode of equally frequent values), sluice gives one of Spark's
// possible answers: the order of the Add calls, the first row, the least
// value.
type Aggregate struct {
	call *syntax.FuncCall
	name string
	// args are the expressions read from every row, in the order the
	// accumulator expects them; constant arguments (a percentage, an
	// ignoreNulls flag) are folded into the accumulator at compile time.
	args     []*Compiled
	filter   *Compiled // FILTER (WHERE ...), nil without
	distinct bool
	t        domain.Type
	newAcc   func() accumulator
}

// accumulator folds rows into one state per group.
type accumulator interface {
	// grow makes room for groups 0..ngroups-1; ngroups never shrinks.
	grow(ngroups int)
	// add folds row i of the argument columns into group groups[i]; a
	// negative group skips the row (filtered out, or a DISTINCT duplicate).
	add(args []*domain.Column, groups []int32) error
	// result is one row per group, in group order.
	result() (*domain.Column, error)
}

// aggDef is one aggregate function of the registry: its argument counts and
// how to compile a call whose count is already checked.
type aggDef struct {
	minArgs, maxArgs int
	// withinGroup: the function takes WITHIN GROUP (ORDER BY ...): one
	// ordering, its value, for percentile_cont, percentile_disc (required)
	// and mode; any number, with DISTINCT, for listagg (orderings).
	withinGroup bool
	orderings   bool
	// ignoreNulls: the function accepts IGNORE NULLS / RESPECT NULLS.
	ignoreNulls bool
	compile     func(ac *aggCompile) error
}

// aggregates maps lower-case names to aggregate functions; agg_funcs.go
// fills it.
var aggregates = map[string]aggDef{}

// IsAggregate reports whether name (any case) is an aggregate function.
func IsAggregate(name string) bool {
	_, ok := aggregates[strings.ToLower(name)]
	return ok
}

// isAggregateCall reports whether e is a call of a built-in aggregate
// function that aggregates over groups, not over a window. A qualified name
// (schema.f) is a user's function.
func isAggregateCall(e syntax.Node) bool {
	f, ok := e.(*syntax.FuncCall)
	return ok && f.Over == nil && len(f.Name.Parts) == 1 && IsAggregate(f.Name.Last().Name)
}

// CompileAggregate compiles an aggregate call against the input schema its
// arguments read. Argument expressions are compiled with Compile. Errors are
// *Error with the position of the offending part: UNRESOLVED_ROUTINE (not an
// aggregate), WRONG_NUM_ARGS, DATATYPE_MISMATCH, NESTED_AGGREGATE_FUNCTION,
// INVALID_WITHIN_GROUP_EXPRESSION, or the errors of Compile.
func CompileAggregate(call *syntax.FuncCall, in domain.Schema) (*Aggregate, error) {
	if err := checkNoNestedAggregate(call); err != nil {
		return nil, err
	}
	return compileAggregate(call, in, func(e syntax.Expr) (*Compiled, error) { return Compile(e, in) })
}

// compileAggregate is CompileAggregate with the compiler of the arguments
// given: a query compiles them in its scope, where an aggregate over a
// window may read the group aggregates computed below it (CheckQuery has
// refused nested group aggregates).
func compileAggregate(call *syntax.FuncCall, in domain.Schema, compile func(syntax.Expr) (*Compiled, error)) (*Aggregate, error) {
	name := strings.ToLower(call.Name.Last().Name)
	def, ok := aggregates[name]
	if !ok || len(call.Name.Parts) > 1 {
		return nil, exprErr(domain.CodeUnresolvedRoutine, call.Name.Pos, "`%s` is not an aggregate function", call.Name)
	}
	if call.Over != nil {
		return nil, exprErr(domain.CodeNotImplemented, call.Over.Pos, "%s with OVER is a window function, which is evaluated by the window operator", name)
	}
	if n := len(call.Args); n < def.minArgs || (def.maxArgs >= 0 && n > def.maxArgs) {
		return nil, wrongArgs(call, name, builtin{minArgs: def.minArgs, maxArgs: def.maxArgs}.arity())
	}
	for _, a := range call.Args {
		_, star := a.(*syntax.Star)
		countStar := star && name == "count" && len(call.Args) == 1 && call.Quantifier != "DISTINCT"
		switch a.(type) {
		case *syntax.Star, *syntax.NamedArg, *syntax.Lambda, *syntax.Aliased:
			if !countStar {
				return nil, exprErr(domain.CodeDatatypeMismatch, a.Position(), "%s does not take this kind of argument", name)
			}
		}
	}
	if len(call.WithinGroup) > 0 {
		switch {
		case !def.withinGroup:
			return nil, exprErr(domain.CodeInvalidWithinGroup, call.WithinGroup[0].Pos, "%s does not take WITHIN GROUP", name)
		case len(call.WithinGroup) != 1 && !def.orderings:
			return nil, exprErr(domain.CodeInvalidWithinGroup, call.WithinGroup[1].Pos, "%s takes one ordering in WITHIN GROUP, %d given", name, len(call.WithinGroup))
		case call.Quantifier == "DISTINCT" && !def.orderings:
			return nil, exprErr(domain.CodeInvalidWithinGroup, call.Pos, "%s does not take DISTINCT with WITHIN GROUP", name)
		}
	}
	if call.Nulls != "" && !def.ignoreNulls {
		return nil, exprErr(domain.CodeUnsupportedCallSyntax, call.Pos, "%s does not take %s", name, call.Nulls)
	}
	a := &Aggregate{call: call, name: name, distinct: call.Quantifier == "DISTINCT"}
	if call.Filter != nil {
		f, err := compile(call.Filter)
		if err != nil {
			return nil, err
		}
		if f.root, err = (&compiler{in: in}).expectBool(f.root, call.Filter.Position(), "FILTER"); err != nil {
			return nil, err
		}
		a.filter = f
	}
	if err := def.compile(&aggCompile{a: a, call: call, name: name, in: in, compile: compile}); err != nil {
		return nil, err
	}
	return a, nil
}

// checkNoNestedAggregate finds an aggregate call inside the arguments, the
// FILTER or the WITHIN GROUP of call. Subqueries are their own scope.
func checkNoNestedAggregate(call *syntax.FuncCall) error {
	var inner *syntax.FuncCall
	visit := func(n syntax.Node) bool {
		if inner != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Query:
			return false
		case *syntax.FuncCall:
			if isAggregateCall(n) {
				inner = n
				return false
			}
		}
		return true
	}
	for _, a := range call.Args {
		syntax.Inspect(a, visit)
	}
	for _, o := range call.WithinGroup {
		syntax.Inspect(o.Expr, visit)
	}
	if call.Filter != nil {
		syntax.Inspect(call.Filter, visit)
	}
	if inner != nil {
		return exprErr(domain.CodeNestedAggregate, inner.Pos, "%s is called inside the aggregate %s", strings.ToLower(inner.Name.Last().Name), strings.ToLower(call.Name.Last().Name))
	}
	return nil
}

// Type is the type of the aggregate's result.
func (a *Aggregate) Type() domain.Type { return a.t }

// String is the call as written (canonical SQL).
func (a *Aggregate) String() string { return a.call.String() }

// AggState is an accumulation of an Aggregate over batches.
type AggState struct {
	a       *Aggregate
	acc     accumulator
	seen    *distinctSet // DISTINCT only
	ngroups int
}

// NewState starts an empty accumulation with no groups.
func (a *Aggregate) NewState() *AggState {
	s := &AggState{a: a, acc: a.newAcc()}
	if a.distinct {
		s.seen = newDistinctSet(a.args)
	}
	return s
}

// Add folds every row i of b into group groups[i] (0 <= groups[i] <
// ngroups). ngroups may grow from call to call; a group that no row reaches
// has the aggregate's value over no rows (count 0, sum NULL, ...), so a
// global aggregate over empty input is Add(empty batch, nil, 1). b must
// have the schema the aggregate was compiled against. A row-level error
// (an overflowing sum, a failing argument) leaves the state undefined.
func (s *AggState) Add(b *domain.Batch, groups []int32, ngroups int) error {
	// wrong group ids are a bug of the caller, not of the query: no code
	if len(groups) != b.Len() {
		return fmt.Errorf("sql: %d group ids for a batch of %d rows", len(groups), b.Len())
	}
	for _, g := range groups {
		if g < 0 || int(g) >= ngroups {
			return fmt.Errorf("sql: group id %d is outside 0..%d", g, ngroups-1)
		}
	}
	if ngroups > s.ngroups {
		s.ngroups = ngroups
		s.acc.grow(ngroups)
	}
	if b.Len() == 0 {
		return nil
	}
	if s.a.filter != nil {
		// Only the rows that pass the filter are evaluated, as in Spark, so an
		// argument that fails on a filtered-out row does not fail the query.
		f, err := s.a.filter.Eval(b)
		if err != nil {
			return err
		}
		var sel []int
		for i, v := range f.Ints {
			if v == 1 && !isNullAt(f.Nulls, i) {
				sel = append(sel, i)
			}
		}
		if len(sel) == 0 {
			return nil
		}
		if len(sel) < b.Len() {
			b = gather(b, sel)
			picked := make([]int32, len(sel))
			for j, i := range sel {
				picked[j] = groups[i]
			}
			groups = picked
		}
	}
	cols := make([]*domain.Column, len(s.a.args))
	for i, arg := range s.a.args {
		c, err := arg.Eval(b)
		if err != nil {
			return err
		}
		cols[i] = c
	}
	if s.seen != nil {
		groups = s.seen.firstOccurrences(cols, groups)
	}
	return s.acc.add(cols, groups)
}

// distinctSet remembers the (group, arguments) already folded, for
// DISTINCT. One scalar argument, the common case, is kept in a typed map;
// several, or arrays and structs, as encoded keys.
type distinctSet struct {
	ints map[groupInt]struct{} // one bool, bigint, date, timestamp or double
	strs map[groupStr]struct{} // one string or binary
	keys map[string]struct{}
	key  []byte // scratch for keys
}

type groupInt struct {
	g    int32
	null bool
	v    int64 // a double's normalized bits
}

type groupStr struct {
	g    int32
	null bool
	s    string
}

func newDistinctSet(args []*Compiled) *distinctSet {
	if len(args) == 1 {
		switch args[0].Type().Kind {
		case domain.KindBool, domain.KindInt64, domain.KindDate, domain.KindTimestamp, domain.KindFloat64:
			return &distinctSet{ints: map[groupInt]struct{}{}}
		case domain.KindString, domain.KindBytes:
			return &distinctSet{strs: map[groupStr]struct{}{}}
		}
	}
	return &distinctSet{keys: map[string]struct{}{}}
}

// firstOccurrences returns groups with -1 for every row whose group and
// argument values were seen before, in this batch or an earlier one.
func (d *distinctSet) firstOccurrences(cols []*domain.Column, groups []int32) []int32 {
	out := make([]int32, len(groups))
	for i, g := range groups {
		var dup bool
		switch {
		case d.ints != nil:
			c := cols[0]
			k := groupInt{g: g, null: isNullAt(c.Nulls, i)}
			switch {
			case k.null:
			case c.Kind == domain.KindFloat64:
				k.v = int64(normalFloatBits(c.Floats[i]))
			default:
				k.v = c.Ints[i]
			}
			if _, dup = d.ints[k]; !dup {
				d.ints[k] = struct{}{}
			}
		case d.strs != nil:
			c := cols[0]
			k := groupStr{g: g, null: isNullAt(c.Nulls, i), s: c.Strs[i]}
			if _, dup = d.strs[k]; !dup {
				d.strs[k] = struct{}{}
			}
		default:
			k := binary.LittleEndian.AppendUint32(d.key[:0], uint32(g))
			for _, c := range cols {
				k = appendKey(k, c, i)
			}
			d.key = k
			if _, dup = d.keys[string(k)]; !dup {
				d.keys[string(k)] = struct{}{}
			}
		}
		out[i] = g
		if dup {
			out[i] = -1
		}
	}
	return out
}

// appendKey encodes row i of c so that two rows get the same bytes exactly
// when Spark treats them as the same value for DISTINCT and grouping: -0.0
// is 0.0 and every NaN is one NaN.
func appendKey(k []byte, c *domain.Column, i int) []byte {
	if c.Kind == domain.KindNull || c.IsNull(i) {
		return append(k, 0)
	}
	switch {
	case c.Ints != nil: // bool, bigint, date, timestamp, intervals
		return binary.LittleEndian.AppendUint64(append(k, 1), uint64(c.Ints[i]))
	case c.Floats != nil:
		return binary.LittleEndian.AppendUint64(append(k, 1), normalFloatBits(c.Floats[i]))
	case c.Strs != nil:
		k = binary.AppendUvarint(append(k, 1), uint64(len(c.Strs[i])))
		return append(k, c.Strs[i]...)
	}
	return appendValueKey(append(k, 1), c.Values[i])
}

func appendValueKey(k []byte, v domain.Value) []byte {
	k = append(k, byte(v.Kind()))
	switch v.Kind() {
	case domain.KindNull:
		return k
	case domain.KindFloat64:
		return binary.LittleEndian.AppendUint64(k, normalFloatBits(v.AsFloat()))
	case domain.KindDecimal:
		// values of one column share a scale: the unscaled value decides
		u := v.AsDecimal()
		k = binary.LittleEndian.AppendUint64(k, uint64(u.Hi))
		return binary.LittleEndian.AppendUint64(k, u.Lo)
	case domain.KindString, domain.KindBytes:
		k = binary.AppendUvarint(k, uint64(len(v.AsString())))
		return append(k, v.AsString()...)
	case domain.KindList, domain.KindStruct, domain.KindMap:
		items := v.AsList()
		k = binary.AppendUvarint(k, uint64(len(items)))
		for _, x := range items {
			k = appendValueKey(k, x)
		}
		return k
	}
	return binary.LittleEndian.AppendUint64(k, uint64(v.AsInt()))
}

func normalFloatBits(f float64) uint64 {
	switch {
	case f != f:
		return math.Float64bits(math.NaN())
	case f == 0:
		return 0
	}
	return math.Float64bits(f)
}

// Result is the aggregate's value for every group, in group order.
func (s *AggState) Result() (*domain.Column, error) { return s.acc.result() }

// aggCompile is what an aggDef's compile works on: it fills a.args, a.t and
// a.newAcc.
type aggCompile struct {
	a       *Aggregate
	call    *syntax.FuncCall
	name    string
	in      domain.Schema
	compile func(syntax.Expr) (*Compiled, error) // compiles an argument in the caller's scope
}

// arg compiles argument i, to be read from every row.
func (ac *aggCompile) arg(i int) (*Compiled, error) { return ac.compile(ac.call.Args[i]) }

// ordered compiles the WITHIN GROUP expression, and reports DESC.
func (ac *aggCompile) ordered() (*Compiled, bool, error) {
	o := ac.call.WithinGroup[0]
	c, err := ac.compile(o.Expr)
	return c, o.Desc, err
}

// constant evaluates argument e, which must not read a column (Spark: a
// foldable expression), e.g. the percentage of percentile.
func (ac *aggCompile) constant(e syntax.Expr, what string) (domain.Value, error) {
	readsColumn := false
	syntax.Inspect(e, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ColumnRef); ok {
			readsColumn = true
		}
		return !readsColumn
	})
	if readsColumn {
		return domain.Value{}, exprErr(domain.CodeDatatypeMismatch, e.Position(), "the %s of %s must be a constant", what, ac.name)
	}
	// a one-column schema, so that the batch has one row to evaluate on
	one := domain.NewSchema(domain.Field{Name: "_", Type: domain.TypeInt64, Nullable: true})
	c, err := Compile(e, one)
	if err != nil {
		return domain.Value{}, err
	}
	b, _ := domain.BatchOf(one, []*domain.Column{{Kind: domain.KindInt64, Ints: []int64{0}}})
	col, err := c.Eval(b)
	if err != nil {
		return domain.Value{}, err
	}
	return col.Value(0), nil
}

// numeric brings a row argument to bigint or double: a NULL literal becomes
// double, a string is cast to double (Spark's ANSI coercion of a string where
// a number is expected); toDouble casts bigint too.
func (ac *aggCompile) numeric(c *Compiled, p syntax.Pos, toDouble bool) error {
	switch k := c.Type().Kind; {
	case k == domain.KindNull, k == domain.KindString:
		c.root = implicit(c.root, domain.TypeFloat64, p)
	case k == domain.KindInt64 && toDouble, k == domain.KindDecimal:
		// sum, avg, min and max keep decimals exact before this
		c.root = implicit(c.root, domain.TypeFloat64, p)
	case !isNumeric(k):
		return exprErr(domain.CodeDatatypeMismatch, p, "%s needs a number, found %s", ac.name, c.Type())
	}
	return nil
}
