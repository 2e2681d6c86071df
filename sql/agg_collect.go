package sql

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// The aggregates that collect values: collect_list, collect_set, listagg.

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
	order []*syntax.OrderItem
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
		k, err := ac.compile(o.Expr)
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
