package sql

import (
	"errors"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Planning that goes on after an error (PlanQueryAll) rests on three
// stand-ins, none of which a successful plan ever holds:
//
//   - an expression that failed compiles to a NULL of unknownType, which
//     every check accepts, as it accepts an untyped NULL;
//   - a FROM item that failed (an unknown table, say) is an opaque relation:
//     its scope holds one marker column (opaqueName), and every name the
//     scope cannot resolve otherwise reads the marker, as a value of
//     unknownType;
//   - a select list that expands the marker (SELECT * over an unknown table)
//     outputs it, so a query over that query is opaque too.
//
// An error found where something unknown was read is not reported: it may
// follow from the first one. The problems' doubt counter says when.

// unknownType is the type of what failed to plan: a NULL whose Elem is the
// sentinel unknownElem, so it is told apart from a NULL literal's type.
var unknownType = domain.Type{Kind: domain.KindNull, Elem: unknownElem}

var unknownElem = &domain.Type{}

func isUnknown(t domain.Type) bool { return t.Kind == domain.KindNull && t.Elem == unknownElem }

// unknownValue stands for an expression that failed.
func unknownValue() node { return &litNode{t: unknownType} }

// opaqueName names the marker column of an opaque relation; no SQL name
// can spell it.
const opaqueName = "\x00opaque"

func isMarker(f domain.Field) bool { return f.Name == opaqueName }

// opaqueOp stands for a relation that failed to plan. It never runs: a plan
// with errors is not returned.
type opaqueOp struct{ out domain.Schema }

func (o *opaqueOp) schema() domain.Schema { return o.out }
func (o *opaqueOp) run(*runState) (*domain.Batch, error) {
	return nil, planErr(domain.CodeUnsupportedQuery, syntax.Pos{}, "a relation that failed to plan cannot run")
}

// opaque is an opaque relation named qual.
func opaque(qual string) (op, scope) {
	sch := domain.NewSchema(domain.Field{Name: opaqueName, Type: unknownType, Nullable: true})
	return &opaqueOp{out: sch}, qualified(sch, qual)
}

// hasMarker reports whether a schema holds an opaque relation's marker.
func hasMarker(s domain.Schema) bool {
	for _, f := range s.Fields {
		if isMarker(f) {
			return true
		}
	}
	return false
}

// markerOf reports whether sc holds the marker of a relation named qual,
// or of any relation when qual is "".
func markerOf(sc scope, qual string) bool {
	for i, f := range sc.schema.Fields {
		if isMarker(f) && (qual == "" || strings.EqualFold(sc.quals[i], qual)) {
			return true
		}
	}
	return false
}

// opaqueItems reports whether a select list holds the columns, not known,
// of an opaque relation (a star over one): its length is not known either.
func opaqueItems(items []item) bool {
	for _, it := range items {
		if it.name == opaqueName {
			return true
		}
	}
	return false
}

// marker is the index of the marker a name path unresolved in the scope
// reads, -1 for none: t.a reads the marker of relation t, if t is opaque,
// and nothing if it is not; a and a.b (a not a relation) may be columns of
// any opaque relation, and read the first marker.
func (c *compiler) marker(parts []*syntax.Ident) int {
	named := len(parts) >= 2 && c.quals != nil && c.hasQual(parts[0].Name)
	for i, f := range c.in.Fields {
		if isMarker(f) && (!named || strings.EqualFold(c.quals[i], parts[0].Name)) {
			return i
		}
	}
	return -1
}

// problems collects the errors of a query planned by PlanQueryAll.
type problems struct {
	list []error
	at   map[syntax.Pos]bool // the positions reported: one error per position
	// doubt counts the errors met (reported or not) and the unknowns read:
	// an error found while it grows may follow from an earlier one
	doubt int
	// compiled holds the expressions compiled, so that after an error the
	// parts of an expression not compiled yet can be
	compiled map[syntax.Expr]bool
	// marks are the doubt counts when the expressions being compiled began,
	// innermost last
	marks []int
	// rest counts the failed expressions whose other parts are being
	// compiled (compileRest)
	rest int
}

func newProblems() *problems {
	return &problems{at: map[syntax.Pos]bool{}, compiled: map[syntax.Expr]bool{}}
}

// add records err, once per position, and counts it as a doubt.
func (p *problems) add(err error) {
	p.doubt++
	var e *syntax.Error
	if errors.As(err, &e) && e.Pos.Line > 0 {
		if p.at[e.Pos] {
			return
		}
		p.at[e.Pos] = true
	}
	p.list = append(p.list, err)
}

// keep records err, found by a step that began when the doubt count was
// mark, unless the step met a doubt (then err may follow from it). It
// reports whether planning goes on: false when the planner stops at the
// first error.
func (pl *planner) keep(mark int, err error) bool {
	if pl.errs == nil {
		return false
	}
	if pl.errs.doubt == mark {
		pl.errs.add(err)
	} else {
		pl.errs.doubt++
	}
	return true
}

// report is keep for an error that follows from no other: it is recorded.
func (pl *planner) report(err error) bool { return pl.keep(pl.mark(), err) }

// mark is the doubt count now, for keep.
func (pl *planner) mark() int {
	if pl.errs == nil {
		return 0
	}
	return pl.errs.doubt
}

// doubted reports whether a doubt was met since mark.
func (pl *planner) doubted(mark int) bool { return pl.errs != nil && pl.errs.doubt != mark }

// compileAll is compile for PlanQueryAll: an error is recorded, unless
// something e reads failed or is unknown, and e compiles to an unknown
// value; so does an expression that reads something unknown. The parts of
// e that the failing step had not compiled yet are compiled after it, for
// their own errors.
func (c *compiler) compileAll(e syntax.Expr) node {
	p := c.errs
	mark := p.doubt
	p.compiled[e] = true
	p.marks = append(p.marks, mark)
	n, err := c.compileNode(e)
	p.marks = p.marks[:len(p.marks)-1]
	switch {
	case err != nil:
		// in a call that failed, a column outside an aggregate may be the
		// argument of the aggregate the call was meant to be (sumx(a))
		inAggregate := p.rest > 0 && domain.CodeOf(err) == domain.CodeMissingAggregation
		if p.doubt == mark && !inAggregate {
			p.add(err)
		} else {
			p.doubt++
		}
		c.compileRest(e)
		return unknownValue()
	case p.doubt != mark:
		return unknownValue()
	case isUnknown(n.typ()):
		p.doubt++
	}
	return n
}

// argsDoubted reports, while a function call compiles, whether the
// arguments compiled so far met a doubt: the parameters of a lambda argument
// are then of unknown type.
func (c *compiler) argsDoubted() bool {
	p := c.errs
	return p != nil && len(p.marks) > 0 && p.doubt != p.marks[len(p.marks)-1]
}

// compileRest compiles the parts of e not compiled yet, after e failed: the
// arguments of a call, the operands of anything else. Lambdas (whose
// parameters only their function knows), window specifications and
// subqueries' own queries are left alone, and so are the FILTER and WITHIN
// GROUP of a call, which belong to an aggregate's scope.
func (c *compiler) compileRest(e syntax.Expr) {
	c.errs.rest++
	defer func() { c.errs.rest-- }()
	var parts []syntax.Node
	if f, ok := e.(*syntax.FuncCall); ok {
		for _, a := range f.Args {
			parts = append(parts, a)
		}
	} else {
		syntax.Inspect(e, func(n syntax.Node) bool {
			if n == syntax.Node(e) {
				return true
			}
			parts = append(parts, n)
			return false
		})
	}
	for _, part := range parts {
		syntax.Inspect(part, c.restPart)
	}
}

// restPart compiles n, a part of a failed expression, when it is an
// expression not compiled yet; it reports whether to look inside n.
func (c *compiler) restPart(n syntax.Node) bool {
	switch n.(type) {
	case *syntax.Lambda, *syntax.Star, *syntax.WindowSpec, *syntax.Query, *syntax.Name, *syntax.Ident, *syntax.Type, *syntax.LimitAll, *syntax.GroupingSets:
		return false
	case *syntax.NamedArg, *syntax.Aliased, *syntax.Tuple, *syntax.Paren:
		return true
	}
	x, ok := n.(syntax.Expr)
	if !ok {
		return true
	}
	if !c.errs.compiled[x] {
		c.compileAll(x)
	}
	return false
}

// sorted is the errors in source order (those without a position first).
func (p *problems) sorted() []error {
	pos := func(err error) syntax.Pos {
		var e *syntax.Error
		if errors.As(err, &e) {
			return e.Pos
		}
		return syntax.Pos{}
	}
	out := append([]error(nil), p.list...)
	sort.SliceStable(out, func(i, j int) bool { return before(pos(out[i]), pos(out[j])) })
	return out
}
