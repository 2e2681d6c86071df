package sql

import (
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// lateralView plans LATERAL VIEW [OUTER] generator(args) table AS cols: the
// input's columns, then the generator's, one output row per generated row.
func (pl *planner) lateralView(src op, sc scope, lv *syntax.LateralView) (op, scope, error) {
	call := lv.Func
	if lv.Outer {
		// OUTER keeps a row whose generator makes none, as the _outer
		// variants do
		name := strings.ToLower(call.Name.Last().Name)
		if _, ok := generators[name+"_outer"]; ok && !strings.HasSuffix(name, "_outer") {
			c := *call
			c.Name = &syntax.Name{Pos: call.Name.Pos, Parts: []*syntax.Ident{{Pos: call.Name.Pos, Name: name + "_outer"}}}
			call = &c
		}
	}
	qual := ""
	if lv.Table != nil {
		qual = lv.Table.Name
	}
	return pl.generate(src, sc, call, lv.Columns, qual, lv.Pos)
}

// generate appends a generator's columns to the rows of src, named by names
// when given.
//
// With PlanQueryAll, a generator that fails, or that reads something
// unknown, makes the columns of an opaque relation named qual.
func (pl *planner) generate(src op, sc scope, call *syntax.FuncCall, names []*syntax.Ident, qual string, p syntax.Pos) (op, scope, error) {
	mark := pl.mark()
	failed := func(err error) (op, scope, error) {
		if err != nil && !pl.keep(mark, err) {
			return nil, scope{}, err
		}
		_, osc := opaque(qual)
		out := sc.concat(osc)
		return &opaqueOp{out: out.schema}, out, nil
	}
	g, err := compileGeneratorWith(call, &compiler{in: sc.schema, quals: sc.quals, sess: pl.sess, errs: pl.errs})
	if err != nil || pl.doubted(mark) {
		return failed(err)
	}
	gs := g.Schema()
	fields := append([]domain.Field{}, gs.Fields...)
	if len(names) > 0 {
		if len(names) != len(fields) {
			return failed(planErr(domain.CodeNumColumnsMismatch, p, "%s makes %d columns, %d names given", call.Name.Last().Name, len(fields), len(names)))
		}
		for i, n := range names {
			fields[i].Name = n.Name
		}
	}
	out := sc.concat(qualified(domain.NewSchema(fields...), qual))
	return &generateOp{child: src, g: g, out: out.schema}, out, nil
}

// generateOp runs a generator over its input: each generated row follows
// the columns of the input row it came from.
type generateOp struct {
	child op
	g     *Generator
	out   domain.Schema
}

func (o *generateOp) schema() domain.Schema { return o.out }
func (o *generateOp) rowWiseIn(i int) bool  { return rowWiseIn(o.child, i) }
func (o *generateOp) children() []op        { return []op{o.child} }
func (o *generateOp) run(rs *runState) (*domain.Batch, error) {
	b, err := o.child.run(rs)
	if err != nil {
		return nil, err
	}
	gen, from, err := o.g.Eval(b)
	if err != nil {
		return nil, err
	}
	cols := make([]*domain.Column, 0, len(o.out.Fields))
	for _, c := range b.Columns {
		cols = append(cols, gatherCol(c, from))
	}
	cols = append(cols, gen.Columns...)
	return batchOf(o.out, cols, len(from))
}

// selectGenerator runs a generator called at the top of a select item
// (SELECT explode(tags) AS tag, id FROM t) as Spark does, as a lateral view
// whose columns take the item's place. A SELECT may call one.
func (pl *planner) selectGenerator(src op, sc scope, items []item) (op, scope, []item, error) {
	found := -1
	for i, it := range items {
		fc, ok := it.expr.(*syntax.FuncCall)
		if ok && fc.Over == nil && len(fc.Name.Parts) == 1 {
			if _, gen := generators[strings.ToLower(fc.Name.Last().Name)]; gen {
				if found >= 0 {
					err := planErr(domain.CodeUnsupportedGenerator, fc.Pos, "a SELECT may call one generator; move the others to LATERAL VIEW")
					if !pl.report(err) {
						return nil, scope{}, nil, err
					}
					continue
				}
				found = i
				continue
			}
		}
		if len(it.aliases) > 0 {
			err := planErr(domain.CodeUnsupportedQuery, it.pos, "AS (a, b) names the columns of a generator such as posexplode; this item is not one")
			if !pl.report(err) {
				return nil, scope{}, nil, err
			}
		}
	}
	if found < 0 {
		return src, sc, items, nil
	}
	it := items[found]
	names := it.aliases
	if len(names) == 0 && it.name != outputName(it.expr) {
		names = []*syntax.Ident{{Pos: it.pos, Name: it.name}} // AS alias
	}
	before := len(sc.schema.Fields)
	src, sc, err := pl.generate(src, sc, it.expr.(*syntax.FuncCall), names, "", it.pos)
	if err != nil {
		return nil, scope{}, nil, err
	}
	var gen []item
	for i := before; i < len(sc.schema.Fields); i++ {
		f := sc.schema.Fields[i]
		gen = append(gen, item{expr: &syntax.ColumnRef{Pos: it.pos, Parts: []*syntax.Ident{{Pos: it.pos, Name: f.Name}}}, name: f.Name, pos: it.pos})
	}
	out := append(append(append([]item{}, items[:found]...), gen...), items[found+1:]...)
	return src, sc, out, nil
}
