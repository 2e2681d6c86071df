package sql

import (
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// item is one select item after star expansion.
type item struct {
	expr    syntax.Expr
	name    string
	pos     syntax.Pos
	aliases []*syntax.Ident // AS (a, b): the names of a generator's columns
}

// selectBlock plans one SELECT: FROM, LATERAL VIEW, WHERE, GROUP BY and
// HAVING, window functions, the select list, QUALIFY, DISTINCT, and the
// ORDER BY of the query around it (which may read columns the select list
// drops).
func (pl *planner) selectBlock(s *syntax.Select, orderBy []*syntax.OrderItem) (op, error) {
	src, sc, err := pl.fromList(s.From)
	if err != nil {
		return nil, err
	}
	for _, lv := range s.LateralViews {
		if src, sc, err = pl.lateralView(src, sc, lv); err != nil {
			return nil, err
		}
	}
	if s.Where != nil {
		mark := pl.mark()
		c, err := pl.compile(s.Where, sc, nil)
		if err != nil {
			return nil, err
		}
		if c, err = asPredicate(c, s.Where, "WHERE"); err != nil {
			if !pl.keep(mark, err) {
				return nil, err
			}
		} else {
			src = &filterOp{child: src, pred: c.root}
		}
	}
	items, err := pl.expand(s.Items, sc)
	if err != nil {
		return nil, err
	}
	if src, sc, items, err = pl.selectGenerator(src, sc, items); err != nil {
		return nil, err
	}
	// after aggregation the select list reads group keys and aggregate
	// results; subst stands in for them
	var subst func(syntax.Expr) (node, error)
	if needsAggregate(s, items, orderBy) {
		if src, sc, subst, err = pl.aggregate(s, items, orderBy, src, sc); err != nil {
			return nil, err
		}
	}
	if calls := windowCalls(items, s.Qualify, orderBy); len(calls) > 0 {
		if src, sc, subst, err = pl.windows(s, calls, src, sc, subst); err != nil {
			return nil, err
		}
	}
	if s.Qualify != nil {
		mark := pl.mark()
		c, err := pl.compile(s.Qualify, sc, pl.aliasSubst(items, sc, subst))
		if err != nil {
			return nil, err
		}
		if c, err = asPredicate(c, s.Qualify, "QUALIFY"); err != nil {
			if !pl.keep(mark, err) {
				return nil, err
			}
		} else {
			src = &filterOp{child: src, pred: c.root}
		}
	}
	exprs := make([]node, len(items))
	fields := make([]domain.Field, len(items))
	for i, it := range items {
		c, err := pl.compile(it.expr, sc, subst)
		if err != nil {
			return nil, err
		}
		exprs[i] = c.root
		fields[i] = domain.Field{Name: it.name, Type: c.Type(), Nullable: true}
	}
	// ORDER BY items that are not output columns are computed as hidden
	// columns and dropped after the sort
	keys, hidden, err := pl.orderKeys(orderBy, items, sc, subst)
	if err != nil {
		return nil, err
	}
	if len(hidden) > 0 && strings.EqualFold(s.Quantifier, "DISTINCT") {
		err := planErr(domain.CodeUnsupportedQuery, orderBy[0].Pos, "with SELECT DISTINCT, ORDER BY can only use selected columns")
		if !pl.report(err) {
			return nil, err
		}
	}
	all := append([]node{}, exprs...)
	allFields := append([]domain.Field{}, fields...)
	for k, h := range hidden {
		all = append(all, h)
		allFields = append(allFields, domain.Field{Name: "__order" + strconv.Itoa(k), Type: h.typ(), Nullable: true})
	}
	var out op = &projectOp{child: src, exprs: all, out: domain.NewSchema(allFields...)}
	if strings.EqualFold(s.Quantifier, "DISTINCT") {
		out = &distinctOp{child: out}
	}
	if len(keys) > 0 {
		out = &sortOp{child: out, keys: keys}
	}
	if len(hidden) > 0 {
		out = &projectOp{child: out, exprs: columnsOf(fields), out: domain.NewSchema(fields...)}
	}
	return out, nil
}

func asPredicate(c *Compiled, e syntax.Expr, clause string) (*Compiled, error) {
	switch c.Type().Kind {
	case domain.KindBool:
		return c, nil
	case domain.KindNull:
		c.root = retype(c.root, domain.TypeBool)
		return c, nil
	}
	return nil, planErr(domain.CodeDatatypeMismatch, e.Position(), "%s needs a boolean condition, found %s", clause, c.Type())
}

func columnsOf(fields []domain.Field) []node {
	out := make([]node, len(fields))
	for i, f := range fields {
		out[i] = &colNode{idx: i, t: f.Type}
	}
	return out
}

// expand turns the select list into items, expanding *, t.* and their
// EXCEPT lists into the columns of the scope.
func (pl *planner) expand(list []*syntax.SelectItem, sc scope) ([]item, error) {
	var out []item
	for _, si := range list {
		st, ok := si.Expr.(*syntax.Star)
		if !ok {
			name := ""
			if si.Alias != nil {
				name = si.Alias.Name
			} else {
				name = outputName(si.Expr)
			}
			out = append(out, item{expr: si.Expr, name: name, pos: si.Pos, aliases: si.AliasColumns})
			continue
		}
		cols, err := starColumns(st, sc)
		if err != nil {
			if !pl.report(err) {
				return nil, err
			}
			// columns not known: those of an opaque relation
			cols = []item{{expr: &syntax.ColumnRef{Pos: st.Pos, Parts: []*syntax.Ident{{Pos: st.Pos, Name: opaqueName}}}, name: opaqueName, pos: st.Pos}}
		}
		out = append(out, cols...)
	}
	return out, nil
}

func starColumns(st *syntax.Star, sc scope) ([]item, error) {
	qual := ""
	if len(st.Qualifier) > 0 {
		qual = st.Qualifier[len(st.Qualifier)-1].Name
		found := false
		for _, q := range sc.quals {
			found = found || strings.EqualFold(q, qual)
		}
		if !found {
			if cols, ok := structStar(st, sc); ok {
				return cols, nil
			}
			return nil, planErr(domain.CodeUnresolvedColumn, st.Pos, "%s.* names no FROM item nor struct column", qual)
		}
	}
	except := map[string]bool{}
	for _, e := range st.Except {
		name := e.Parts[len(e.Parts)-1].Name
		found := false
		for i, f := range sc.schema.Fields {
			if strings.EqualFold(f.Name, name) && (qual == "" || strings.EqualFold(sc.quals[i], qual)) {
				found = true
			}
		}
		if !found && !markerOf(sc, qual) {
			return nil, unknownName(name, e.Pos, sc.schema.Names())
		}
		except[strings.ToLower(name)] = true
	}
	var out []item
	for i, f := range sc.schema.Fields {
		if qual != "" && !strings.EqualFold(sc.quals[i], qual) {
			continue
		}
		if except[strings.ToLower(f.Name)] || sc.isHidden(i) {
			continue
		}
		parts := []*syntax.Ident{{Pos: st.Pos, Name: f.Name}}
		if sc.quals != nil && sc.quals[i] != "" {
			parts = append([]*syntax.Ident{{Pos: st.Pos, Name: sc.quals[i]}}, parts...)
		}
		out = append(out, item{expr: &syntax.ColumnRef{Pos: st.Pos, Parts: parts}, name: f.Name, pos: st.Pos})
	}
	return out, nil
}

// structStar expands col.* for a struct column col: its fields, each named
// as itself, but those of EXCEPT.
func structStar(st *syntax.Star, sc scope) ([]item, bool) {
	if len(st.Qualifier) != 1 {
		return nil, false
	}
	col := st.Qualifier[0]
	i := sc.schema.Index(col.Name)
	if i < 0 || sc.schema.Fields[i].Type.Kind != domain.KindStruct {
		return nil, false
	}
	except := map[string]bool{}
	for _, e := range st.Except {
		except[strings.ToLower(e.Parts[len(e.Parts)-1].Name)] = true
	}
	var out []item
	for _, f := range sc.schema.Fields[i].Type.Fields {
		if except[strings.ToLower(f.Name)] {
			continue
		}
		ref := &syntax.ColumnRef{Pos: st.Pos, Parts: []*syntax.Ident{{Pos: st.Pos, Name: sc.schema.Fields[i].Name}, {Pos: st.Pos, Name: f.Name}}}
		out = append(out, item{expr: ref, name: f.Name, pos: st.Pos})
	}
	return out, true
}

// withAlias replaces a bare name that is not a column of the scope but a
// select-list alias by the aliased expression (GROUP BY may name an alias).
func withAlias(e syntax.Expr, items []item, sc scope) syntax.Expr {
	ref, ok := e.(*syntax.ColumnRef)
	if !ok || len(ref.Parts) != 1 || sc.schema.Index(ref.Parts[0].Name) >= 0 {
		return e
	}
	for _, it := range items {
		if strings.EqualFold(it.name, ref.Parts[0].Name) {
			return it.expr
		}
	}
	return e
}

// aliasSubst lets HAVING and QUALIFY read select-list aliases anywhere in
// their conditions: a bare name that is not a column of the scope but an
// alias compiles as the aliased expression. inner comes first.
func (pl *planner) aliasSubst(items []item, sc scope, inner func(syntax.Expr) (node, error)) func(syntax.Expr) (node, error) {
	return func(e syntax.Expr) (node, error) {
		if inner != nil {
			if n, err := inner(e); n != nil || err != nil {
				return n, err
			}
		}
		if aliased := withAlias(e, items, sc); aliased != e {
			c, err := pl.compile(aliased, sc, inner)
			if err != nil {
				return nil, err
			}
			return c.root, nil
		}
		return nil, nil
	}
}

// orderKeys resolves ORDER BY items: an ordinal or an output name reads the
// output column; anything else is computed from the scope as a hidden column.
func (pl *planner) orderKeys(orderBy []*syntax.OrderItem, items []item, sc scope, subst func(syntax.Expr) (node, error)) ([]sortKey, []node, error) {
	var keys []sortKey
	var hidden []node
	for _, o := range orderBy {
		k := sortKey{desc: o.Desc, nullsFirst: !o.Desc}
		switch strings.ToUpper(o.Nulls) {
		case "FIRST":
			k.nullsFirst = true
		case "LAST":
			k.nullsFirst = false
		}
		col := -1
		if n, ok := ordinal(o.Expr); ok {
			if n < 1 || n > len(items) {
				err := planErr(domain.CodeOrdinalOutOfRange, o.Expr.Position(), "ORDER BY %d, but the select list has %d columns", n, len(items))
				if pl.errs == nil {
					return nil, nil, err
				}
				if !opaqueItems(items) { // else the list's length is not known
					pl.report(err)
				}
				continue
			}
			col = n - 1
		} else if ref, ok := o.Expr.(*syntax.ColumnRef); ok && len(ref.Parts) == 1 {
			for i, it := range items {
				if strings.EqualFold(it.name, ref.Parts[0].Name) {
					col = i
					break
				}
			}
		}
		if col < 0 {
			// an expression equal to a select item reads that item
			f := exprKey(o.Expr)
			for i, it := range items {
				if exprKey(it.expr) == f {
					col = i
					break
				}
			}
		}
		if col < 0 {
			c, err := pl.compile(o.Expr, sc, subst)
			if err != nil {
				return nil, nil, err
			}
			col = len(items) + len(hidden)
			hidden = append(hidden, c.root)
		}
		k.col = col
		keys = append(keys, k)
	}
	return keys, hidden, nil
}

// sortOutput sorts the output of a set operation or VALUES: ORDER BY reads
// its columns by name or position.
func (pl *planner) sortOutput(o op, orderBy []*syntax.OrderItem) (op, error) {
	sch := o.schema()
	items := make([]item, len(sch.Fields))
	for i, f := range sch.Fields {
		items[i] = item{expr: &syntax.ColumnRef{Parts: []*syntax.Ident{{Name: f.Name}}}, name: f.Name}
	}
	keys, hidden, err := pl.orderKeys(orderBy, items, qualified(sch, ""), nil)
	if err != nil {
		return nil, err
	}
	if len(hidden) > 0 {
		// expressions over the output: compute, sort, drop
		all := append(columnsOf(sch.Fields), hidden...)
		fields := append([]domain.Field{}, sch.Fields...)
		for k, h := range hidden {
			fields = append(fields, domain.Field{Name: "__order" + strconv.Itoa(k), Type: h.typ(), Nullable: true})
		}
		sorted := &sortOp{child: &projectOp{child: o, exprs: all, out: domain.NewSchema(fields...)}, keys: keys}
		return &projectOp{child: sorted, exprs: columnsOf(sch.Fields), out: sch}, nil
	}
	return &sortOp{child: o, keys: keys}, nil
}

// ordinal reports whether e is an integer literal (ORDER BY 1).
func ordinal(e syntax.Expr) (int, bool) {
	lit, ok := e.(*syntax.Literal)
	if !ok || lit.Kind != syntax.NumberLit || lit.Suffix != "" || strings.ContainsAny(lit.Text, ".eE") {
		return 0, false
	}
	n, err := strconv.Atoi(lit.Text)
	return n, err == nil
}
