package sql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/domain"
	suggestpkg "github.com/sluicehq/sluice/internal/suggest"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Relation is a table a query reads, as the caller's catalog resolves it.
type Relation struct {
	Name   string // the dataset or source it stands for, as the caller names it
	Schema domain.Schema
	// Hidden is how many of the last columns of Schema a star leaves out:
	// they are read only by name (a file read's _metadata).
	Hidden int
	// View, when set, is the query of a view: it is planned in place of the
	// read, and a streaming read of the view reads its tables as streams.
	View *syntax.Query
}

// Catalog resolves the FROM items a query does not define itself: the
// pipeline's datasets and file reads. Errors are returned to the user as
// they are, so they should carry a code (TABLE_OR_VIEW_NOT_FOUND, ...).
type Catalog interface {
	// Table resolves a name; stream is true for STREAM(name).
	Table(name *syntax.Name, stream bool) (Relation, error)
	// TableFunc resolves a table-valued function such as read_files(...).
	TableFunc(call *syntax.FuncCall, stream bool) (Relation, error)
}

// Input is one relation a plan reads. A relation read twice (a self-join)
// is one input.
type Input struct {
	Relation
	Stream    bool
	Watermark *syntax.Watermark // WATERMARK ... DELAY OF ..., nil without
	Pos       syntax.Pos        // where the query first reads it
}

// Plan is a query resolved against its inputs' schemas, every expression
// compiled, ready to run over batches.
type Plan struct {
	Schema domain.Schema
	Inputs []Input
	root   op
	run    *runHolder
	sess   *Session // its Now is set at each Run
	// subqueries are the queries of subqueries in expressions, which see
	// their inputs whole
	subqueries []op
	mu         sync.Mutex // one Run at a time: subquery results and the time live in the plan
}

// Run evaluates the query over complete inputs, one batch per input in the
// order of Inputs (a batch may be nil for an empty input).
func (p *Plan) Run(inputs []*domain.Batch) (*domain.Batch, error) {
	if len(inputs) != len(p.Inputs) {
		return nil, domain.Errorf(domain.CodeSchemaDrift, "the query reads %d inputs, %d given", len(p.Inputs), len(inputs))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rs := &runState{inputs: make([]*domain.Batch, len(inputs))}
	for i, b := range inputs {
		if b == nil {
			b = domain.NewBatch(p.Inputs[i].Schema, 0)
		}
		b, err := alignInput(b, p.Inputs[i])
		if err != nil {
			return nil, err
		}
		rs.inputs[i] = b
	}
	p.run.cur = rs
	defer func() { p.run.cur = nil }()
	p.sess.Now = time.Now() // current_timestamp is the time of this run
	out, err := p.root.run(rs)
	if err != nil {
		return nil, err
	}
	out.Schema = p.Schema
	return out, nil
}

// alignInput gives a batch the columns its input was planned with, by name:
// a table's columns may come in another order (its schema evolved as its
// flows' batches came) or be more (columns added since the planning, which
// the query does not read). A planned column the batch lacks is NULL; one of
// another type is SCHEMA_DRIFT.
func alignInput(b *domain.Batch, in Input) (*domain.Batch, error) {
	want := in.Schema
	same := len(b.Columns) == len(want.Fields)
	for i := 0; same && i < len(want.Fields); i++ {
		// the type, not only the kind: a decimal column widened since has
		// its values at another scale (Conform converts them)
		same = b.Schema.Fields[i].Name == want.Fields[i].Name && b.Schema.Fields[i].Type.Equal(want.Fields[i].Type)
	}
	if same {
		return b, nil
	}
	var fields []domain.Field
	var cols []*domain.Column
	for _, f := range want.Fields {
		if k := b.Schema.Index(f.Name); k >= 0 {
			fields = append(fields, b.Schema.Fields[k])
			cols = append(cols, b.Columns[k])
		}
	}
	picked := domain.NoColumns(b.Len())
	if len(cols) > 0 {
		var err error
		if picked, err = domain.BatchOf(domain.NewSchema(fields...), cols); err != nil {
			return nil, err
		}
	}
	nullable := make([]domain.Field, len(want.Fields))
	for i, f := range want.Fields {
		f.Nullable = true
		nullable[i] = f
	}
	return domain.Conform(in.Name, picked, domain.NewSchema(nullable...))
}

// PlanQuery resolves q against the catalog and compiles it under the
// session's time zone. current_timestamp and current_date are the time of
// each Run (of each micro-batch), as in Spark; a query that uses them gives
// other rows when a micro-batch runs again after a crash. Every error is a
// *Error with the position of the offending part of q.
func PlanQuery(q *syntax.Query, cat Catalog, s Session) (*Plan, error) {
	if errs := CheckQuery(q); len(errs) > 0 {
		return nil, errs[0]
	}
	pl := &planner{cat: cat, run: &runHolder{}, sess: s.resolved()}
	root, err := pl.query(q)
	if err != nil {
		return nil, err
	}
	return &Plan{Schema: root.schema(), Inputs: pl.inputs, root: root, run: pl.run, sess: pl.sess, subqueries: pl.subqueries}, nil
}

// PlanQueryAll is PlanQuery that goes on after an error, to report every
// error of q at once, in source order: each unresolved column, unknown
// function, type mismatch or wrong argument count, in every clause, CTE
// and subquery, with its code and position. It returns the plan only when
// there is no error, and then the very plan PlanQuery returns.
//
// An error that may follow from an earlier one is not reported: an
// expression that failed is of unknown type to what reads it (as an untyped
// NULL would be), and so is a column of a FROM item that failed (an unknown
// table): a name the query cannot resolve while such an item is in scope
// is taken to be one of its columns. Errors the catalog returns are
// reported as they are. Every problem CheckQuery finds is reported; the
// planner reports at most one error at a position, and none where
// CheckQuery did.
func PlanQueryAll(q *syntax.Query, cat Catalog, s Session) (*Plan, []error) {
	pl := &planner{cat: cat, run: &runHolder{}, sess: s.resolved(), errs: newProblems()}
	for _, err := range CheckQuery(q) {
		// each a problem of its own, even two at one position (a window
		// function without OVER over a stream)
		if e, ok := err.(*syntax.Error); ok {
			pl.errs.at[e.Pos] = true
		}
		pl.errs.list = append(pl.errs.list, err)
		pl.errs.doubt++
	}
	root, err := pl.query(q)
	if err != nil {
		pl.errs.add(err) // not expected: the planner goes on after errors
	}
	if len(pl.errs.list) > 0 {
		return nil, pl.errs.sorted()
	}
	return &Plan{Schema: root.schema(), Inputs: pl.inputs, root: root, run: pl.run, sess: pl.sess, subqueries: pl.subqueries}, nil
}

// runHolder lets nodes that run sub-plans (subqueries) reach the inputs of
// the current Run.
type runHolder struct{ cur *runState }

type runState struct {
	inputs []*domain.Batch
	// subquery results, computed once per Run
	cache map[op]*domain.Batch
}

// planner turns a query into a tree of operators.
type planner struct {
	cat    Catalog
	inputs []Input
	ctes   []map[string]*syntax.CTE // innermost last
	run    *runHolder
	// streamAll makes every table read a stream: the query of a view read
	// with STREAM(view)
	streamAll bool
	sess      *Session
	// subqueries are the queries of the subqueries in expressions
	subqueries []op
	// errs, when set, collects every error, and planning goes on after
	// each (PlanQueryAll); nil stops at the first
	errs *problems
}

// scope is what an expression at one point of a query can read: the columns
// of the operator below, each with the FROM item it came from.
type scope struct {
	schema domain.Schema
	quals  []string
	hidden []bool // columns a star leaves out; nil for none
}

func (s scope) concat(o scope) scope {
	out := scope{schema: domain.NewSchema(append(append([]domain.Field{}, s.schema.Fields...), o.schema.Fields...)...)}
	out.quals = append(append([]string{}, s.quals...), o.quals...)
	if s.hidden != nil || o.hidden != nil {
		out.hidden = append(append([]bool{}, s.hiddenMarks()...), o.hiddenMarks()...)
	}
	return out
}

func (s scope) hiddenMarks() []bool {
	if s.hidden != nil {
		return s.hidden
	}
	return make([]bool, len(s.schema.Fields))
}

func (s scope) isHidden(i int) bool { return s.hidden != nil && s.hidden[i] }

func qualified(sch domain.Schema, qual string) scope {
	q := make([]string, len(sch.Fields))
	for i := range q {
		q[i] = qual
	}
	return scope{schema: sch, quals: q}
}

// compile compiles e against sc; subst may stand in for parts of e. With
// PlanQueryAll it never fails: an expression with errors (recorded) or
// that reads something unknown compiles to an unknown value.
func (pl *planner) compile(e syntax.Expr, sc scope, subst func(syntax.Expr) (node, error)) (*Compiled, error) {
	n, err := pl.compiler(sc, subst).compile(e)
	if err != nil {
		return nil, err
	}
	return &Compiled{root: n, expr: e, in: sc.schema, sess: pl.sess}, nil
}

// compiler is the compiler of expressions over sc, with the planner's
// subqueries.
func (pl *planner) compiler(sc scope, subst func(syntax.Expr) (node, error)) *compiler {
	c := &compiler{in: sc.schema, quals: sc.quals, sess: pl.sess, errs: pl.errs}
	c.subst = func(x syntax.Expr) (node, error) {
		if subst != nil {
			if n, err := subst(x); n != nil || err != nil {
				return n, err
			}
		}
		return pl.subquery(x, c)
	}
	return c
}

// trial compiles e as compile does without PlanQueryAll: an error is
// returned, not recorded. It is for compiling an expression one way to see
// whether it can be (a join key of one side), before compiling it the
// usual way.
func (pl *planner) trial(e syntax.Expr, sc scope) (*Compiled, error) {
	saved := pl.errs
	pl.errs = nil
	defer func() { pl.errs = saved }()
	return pl.compile(e, sc, nil)
}

func planErr(code domain.Code, p syntax.Pos, format string, args ...any) *syntax.Error {
	return &syntax.Error{Code: code, File: "query", Pos: p, Message: fmt.Sprintf(format, args...)}
}

// ---- queries and set operations ----

func (pl *planner) query(q *syntax.Query) (op, error) {
	if len(q.With) > 0 {
		defs := map[string]*syntax.CTE{}
		pl.ctes = append(pl.ctes, defs)
		defer func() { pl.ctes = pl.ctes[:len(pl.ctes)-1] }()
		for _, c := range q.With {
			// a CTE sees the ones before it, as in Spark
			defs[strings.ToLower(c.Name.Name)] = c
		}
	}
	var root op
	var err error
	if s, ok := q.Body.(*syntax.Select); ok {
		root, err = pl.selectBlock(s, q.OrderBy)
	} else {
		if root, err = pl.setExpr(q.Body); err != nil {
			return nil, err
		}
		if len(q.OrderBy) > 0 {
			root, err = pl.sortOutput(root, q.OrderBy)
		}
	}
	if err != nil {
		return nil, err
	}
	if q.Limit != nil || q.Offset != nil {
		lim := &limitOp{child: root, limit: -1}
		if q.Limit != nil {
			if _, all := q.Limit.(*syntax.LimitAll); !all {
				if lim.limit, err = pl.constInt(q.Limit, "LIMIT"); err != nil && !pl.report(err) {
					return nil, err
				}
			}
		}
		if q.Offset != nil {
			if lim.offset, err = pl.constInt(q.Offset, "OFFSET"); err != nil && !pl.report(err) {
				return nil, err
			}
		}
		root = lim
	}
	return root, nil
}

// constInt evaluates a LIMIT or OFFSET: a constant, non-negative integer.
func (pl *planner) constInt(e syntax.Expr, what string) (int, error) {
	c, err := Compile(e, domain.Schema{})
	if err != nil {
		return 0, err
	}
	if c.Type().Kind != domain.KindInt64 {
		return 0, planErr(domain.CodeInvalidLimit, e.Position(), "%s needs an integer, found %s", what, c.Type())
	}
	col, err := c.Eval(domain.NoColumns(1))
	if err != nil {
		return 0, err
	}
	if col.IsNull(0) || col.Ints[0] < 0 || col.Ints[0] > 1<<31-1 {
		return 0, planErr(domain.CodeInvalidLimit, e.Position(), "%s must be a non-negative integer, found %s", what, col.Value(0))
	}
	return int(col.Ints[0]), nil
}

func (pl *planner) setExpr(s syntax.SetExpr) (op, error) {
	switch s := s.(type) {
	case *syntax.Select:
		return pl.selectBlock(s, nil)
	case *syntax.ParenQuery:
		return pl.query(s.Query)
	case *syntax.Values:
		return pl.values(s, nil)
	case *syntax.SetOp:
		l, err := pl.setExpr(s.Left)
		if err != nil {
			return nil, err
		}
		r, err := pl.setExpr(s.Right)
		if err != nil {
			return nil, err
		}
		return pl.setOp(s, l, r)
	}
	err := planErr(domain.CodeUnsupportedQuery, s.Position(), "this query form is not supported")
	if pl.report(err) {
		o, _ := opaque("")
		return o, nil
	}
	return nil, err
}

func (pl *planner) setOp(s *syntax.SetOp, l, r op) (op, error) {
	ls, rs := l.schema(), r.schema()
	if hasMarker(ls) || hasMarker(rs) {
		o, _ := opaque("") // columns not known: their number, their types
		return o, nil
	}
	if s.ByName && len(ls.Fields) == len(rs.Fields) {
		// the right side's columns, by the left side's names
		exprs := make([]node, len(ls.Fields))
		fields := make([]domain.Field, len(ls.Fields))
		for i, lf := range ls.Fields {
			j := rs.Index(lf.Name)
			if j < 0 {
				err := planErr(domain.CodeNumColumnsMismatch, s.Pos, "%s BY NAME: the right side has no column %s (it has %s)", s.Op, lf.Name, strings.Join(rs.Names(), ", "))
				if pl.report(err) {
					return l, nil
				}
				return nil, err
			}
			exprs[i], fields[i] = &colNode{idx: j, t: rs.Fields[j].Type}, rs.Fields[j]
		}
		rs = domain.NewSchema(fields...)
		r = &projectOp{child: r, exprs: exprs, out: rs}
	}
	if len(ls.Fields) != len(rs.Fields) {
		err := planErr(domain.CodeNumColumnsMismatch, s.Pos, "%s of %d columns with %d columns", s.Op, len(ls.Fields), len(rs.Fields))
		if pl.report(err) {
			return l, nil
		}
		return nil, err
	}
	fields := make([]domain.Field, len(ls.Fields))
	for i, lf := range ls.Fields {
		t, ok := commonType(lf.Type, rs.Fields[i].Type, false)
		if !ok {
			err := planErr(domain.CodeIncompatibleSetTypes, s.Pos, "column %d (%s) is %s on the left of %s and %s on the right",
				i+1, lf.Name, lf.Type, s.Op, rs.Fields[i].Type)
			if !pl.report(err) {
				return nil, err
			}
			t = unknownType
		}
		fields[i] = domain.Field{Name: lf.Name, Type: t, Nullable: lf.Nullable || rs.Fields[i].Nullable}
	}
	out := domain.NewSchema(fields...)
	op := strings.ToUpper(s.Op)
	if op == "MINUS" {
		op = "EXCEPT"
	}
	return &setOpOp{op: op, all: strings.EqualFold(s.Quantifier, "ALL"), l: conform(l, out), r: conform(r, out), out: out}, nil
}

// conform casts the columns of o's output to the types of out.
func conform(o op, out domain.Schema) op {
	in := o.schema()
	same := true
	exprs := make([]node, len(in.Fields))
	for i, f := range in.Fields {
		exprs[i] = implicit(&colNode{idx: i, t: f.Type}, out.Fields[i].Type, syntax.Pos{})
		if !f.Type.Equal(out.Fields[i].Type) {
			same = false // another kind, or a decimal of another scale
		}
	}
	if same {
		return o
	}
	return &projectOp{child: o, exprs: exprs, out: out}
}

func (pl *planner) values(v *syntax.Values, alias *syntax.Alias) (op, error) {
	if len(v.Rows) == 0 {
		err := planErr(domain.CodeUnsupportedQuery, v.Pos, "VALUES needs at least one row")
		if pl.report(err) {
			o, _ := opaque("")
			return o, nil
		}
		return nil, err
	}
	width := len(v.Rows[0])
	cols := make([][]node, width)
	var rows []int // the rows of the values of cols
	for r, row := range v.Rows {
		if len(row) != width {
			err := planErr(domain.CodeNumColumnsMismatch, v.Pos, "row %d of VALUES has %d values, the first has %d", r+1, len(row), width)
			if !pl.report(err) {
				return nil, err
			}
			for _, e := range row {
				pl.compile(e, scope{}, nil) // for its errors
			}
			continue
		}
		rows = append(rows, r)
		for i, e := range row {
			c, err := pl.compile(e, scope{}, nil)
			if err != nil {
				return nil, err
			}
			cols[i] = append(cols[i], c.root)
		}
	}
	fields := make([]domain.Field, width)
	for i := range cols {
		pos := make([]syntax.Pos, len(cols[i]))
		for k, r := range rows {
			pos[k] = v.Rows[r][i].Position()
		}
		t, err := unify(cols[i], pos)
		if err != nil {
			if !pl.report(err) {
				return nil, err
			}
			t = unknownType
		}
		fields[i] = domain.Field{Name: "col" + strconv.Itoa(i+1), Type: t, Nullable: true}
	}
	if alias != nil {
		for i, c := range alias.Columns {
			if i < width {
				fields[i].Name = c.Name
			}
		}
	}
	return &valuesOp{cols: cols, out: domain.NewSchema(fields...)}, nil
}

// ---- FROM ----

func (pl *planner) fromList(items []syntax.FromItem) (op, scope, error) {
	if len(items) == 0 {
		return &valuesOp{out: domain.Schema{}, rows: 1}, scope{}, nil
	}
	left, ls, err := pl.from(items[0])
	if err != nil {
		return nil, scope{}, err
	}
	for _, it := range items[1:] {
		if sq, ok := it.(*syntax.SubqueryRef); ok && sq.Lateral {
			if left, ls, err = pl.lateral(left, ls, sq, false, nil); err != nil {
				return nil, scope{}, err
			}
			continue
		}
		right, rs, err := pl.from(it)
		if err != nil {
			return nil, scope{}, err
		}
		left, ls = &joinOp{kind: "CROSS", l: left, r: right, out: ls.concat(rs).schema}, ls.concat(rs)
	}
	return left, ls, nil
}

// joinLateral plans left [INNER | CROSS | LEFT [OUTER]] JOIN LATERAL
// (query) [ON cond] (see lateral).
func (pl *planner) joinLateral(j *syntax.Join, l op, ls scope, sq *syntax.SubqueryRef) (op, scope, error) {
	kind := strings.ToUpper(j.Kind)
	if kind != "INNER" && kind != "CROSS" && kind != "LEFT" || j.Natural || len(j.Using) > 0 {
		return nil, scope{}, planErr(domain.CodeNotImplemented, j.Pos, "%s JOIN LATERAL is not supported: use [INNER] or LEFT JOIN LATERAL with ON, or a comma and WHERE", j.Kind)
	}
	return pl.lateral(l, ls, sq, kind == "LEFT", j.On)
}

func (pl *planner) from(it syntax.FromItem) (op, scope, error) {
	switch it := it.(type) {
	case *syntax.TableRef:
		return pl.tableRef(it)
	case *syntax.TableFunc:
		return pl.tableFunc(it)
	case *syntax.SubqueryRef:
		// a LATERAL subquery first in FROM has nothing before it to read: a
		// subquery like any other (after a comma, fromList plans it)
		o, err := pl.query(it.Query)
		if err != nil {
			return nil, scope{}, err
		}
		return pl.aliased(o, it.Alias, "")
	case *syntax.ValuesRef:
		o, err := pl.values(it.Values, it.Alias)
		if err != nil {
			return nil, scope{}, err
		}
		qual := ""
		if it.Alias != nil {
			qual = it.Alias.Name.Name
		}
		return o, qualified(o.schema(), qual), nil
	case *syntax.ParenJoin:
		o, sc, err := pl.from(it.Item)
		if err != nil || it.Alias == nil {
			return o, sc, err
		}
		return pl.aliased(o, it.Alias, "")
	case *syntax.Join:
		return pl.join(it)
	case *syntax.Pivot:
		return pl.pivot(it)
	case *syntax.Unpivot:
		return pl.unpivot(it)
	}
	return pl.failedFrom(planErr(domain.CodeUnsupportedQuery, it.Position(), "this FROM item is not supported"), nil, "")
}

// failedFrom is a FROM item that failed with err: with PlanQueryAll, err is
// recorded and the item is an opaque relation named by its alias or qual.
func (pl *planner) failedFrom(err error, a *syntax.Alias, qual string) (op, scope, error) {
	if !pl.report(err) {
		return nil, scope{}, err
	}
	if a != nil {
		qual = a.Name.Name
	}
	o, sc := opaque(qual)
	return o, sc, nil
}

// aliased is the function aliased with PlanQueryAll's errors recorded: an
// alias that does not fit (or that renames the columns of an opaque
// relation) makes an opaque relation of the alias's name.
func (pl *planner) aliased(o op, a *syntax.Alias, qual string) (op, scope, error) {
	if pl.errs != nil && a != nil && len(a.Columns) > 0 && hasMarker(o.schema()) {
		x, sc := opaque(a.Name.Name)
		return x, sc, nil
	}
	out, sc, err := aliased(o, a, qual)
	if err != nil {
		return pl.failedFrom(err, a, qual)
	}
	return out, sc, nil
}

// aliased names the output of a FROM item: its alias qualifies the columns,
// and an alias column list renames them.
func aliased(o op, a *syntax.Alias, qual string) (op, scope, error) {
	sch := o.schema()
	if a != nil {
		qual = a.Name.Name
		if len(a.Columns) > 0 {
			if len(a.Columns) != len(sch.Fields) {
				return nil, scope{}, planErr(domain.CodeNumColumnsMismatch, a.Pos, "the alias %s names %d columns, the query has %d", qual, len(a.Columns), len(sch.Fields))
			}
			fields := append([]domain.Field{}, sch.Fields...)
			for i, c := range a.Columns {
				fields[i].Name = c.Name
			}
			sch = domain.NewSchema(fields...)
			o = &renameOp{child: o, out: sch}
		}
	}
	return o, qualified(sch, qual), nil
}

func (pl *planner) cte(name *syntax.Name) *syntax.CTE {
	if len(name.Parts) != 1 {
		return nil
	}
	key := strings.ToLower(name.Parts[0].Name)
	for i := len(pl.ctes) - 1; i >= 0; i-- {
		if c, ok := pl.ctes[i][key]; ok {
			return c
		}
	}
	return nil
}

func (pl *planner) tableRef(t *syntax.TableRef) (op, scope, error) {
	if t.Sample != nil {
		return pl.sample(t)
	}
	if c := pl.cte(t.Name); c != nil && !t.Stream {
		// plan the CTE where it is read: CTEs defined after it are not visible
		saved := pl.ctes
		pl.ctes = pl.ctesBefore(c)
		o, err := pl.query(c.Query)
		pl.ctes = saved
		if err != nil {
			return nil, scope{}, err
		}
		if len(c.Columns) > 0 {
			o, _, err = pl.aliased(o, &syntax.Alias{Pos: c.Pos, Name: c.Name, Columns: c.Columns}, "")
			if err != nil {
				return nil, scope{}, err
			}
		}
		return pl.aliased(o, t.Alias, c.Name.Name)
	}
	stream := t.Stream || pl.streamAll
	rel, err := pl.cat.Table(t.Name, stream)
	if err != nil {
		return pl.failedFrom(err, t.Alias, t.Name.Last().Name)
	}
	if rel.View != nil {
		saved, savedCTEs := pl.streamAll, pl.ctes
		pl.streamAll, pl.ctes = stream, nil // a view sees its own CTEs only
		o, err := pl.query(rel.View)
		pl.streamAll, pl.ctes = saved, savedCTEs
		if err != nil {
			return nil, scope{}, err
		}
		return pl.aliased(o, t.Alias, t.Name.Last().Name)
	}
	idx := pl.input(rel, stream, t.Watermark, t.Pos)
	return pl.scan(idx, rel, t.Alias, t.Name.Last().Name)
}

// scan is a FROM item reading input idx of the relation, named by alias or
// qual, with the relation's hidden columns (the last rel.Hidden) left out of
// a star.
func (pl *planner) scan(idx int, rel Relation, alias *syntax.Alias, qual string) (op, scope, error) {
	o, sc, err := pl.aliased(&scanOp{input: idx, out: rel.Schema}, alias, qual)
	if err != nil || rel.Hidden == 0 || hasMarker(sc.schema) {
		return o, sc, err
	}
	sc.hidden = make([]bool, len(sc.schema.Fields))
	for i := len(sc.hidden) - rel.Hidden; i < len(sc.hidden); i++ {
		sc.hidden[i] = true
	}
	return o, sc, nil
}

// ctesBefore is the CTE scopes as they stood when c was defined: the scopes
// around it, and in its own WITH the CTEs before it.
func (pl *planner) ctesBefore(c *syntax.CTE) []map[string]*syntax.CTE {
	for i := len(pl.ctes) - 1; i >= 0; i-- {
		if pl.ctes[i][strings.ToLower(c.Name.Name)] == c {
			out := append([]map[string]*syntax.CTE{}, pl.ctes[:i]...)
			own := map[string]*syntax.CTE{}
			for k, v := range pl.ctes[i] {
				if before(v.Pos, c.Pos) {
					own[k] = v
				}
			}
			return append(out, own)
		}
	}
	return pl.ctes
}

func before(a, b syntax.Pos) bool { return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col) }

func (pl *planner) input(rel Relation, stream bool, wm *syntax.Watermark, p syntax.Pos) int {
	for i, in := range pl.inputs {
		if in.Name == rel.Name && in.Stream == stream {
			return i
		}
	}
	pl.inputs = append(pl.inputs, Input{Relation: rel, Stream: stream, Watermark: wm, Pos: p})
	return len(pl.inputs) - 1
}

func (pl *planner) tableFunc(t *syntax.TableFunc) (op, scope, error) {
	name := strings.ToLower(t.Func.Name.Last().Name)
	if name == "range" && !t.Stream {
		o, err := pl.rangeOp(t.Func)
		if err != nil {
			return pl.failedFrom(err, t.Alias, "range")
		}
		return pl.aliased(o, t.Alias, "range")
	}
	// cloud_files, Auto Loader's legacy form, is a stream without STREAM.
	stream := t.Stream || pl.streamAll || name == "cloud_files"
	rel, err := pl.cat.TableFunc(t.Func, stream)
	if err != nil {
		return pl.failedFrom(err, t.Alias, name)
	}
	idx := pl.input(rel, stream, t.Watermark, t.Pos)
	return pl.scan(idx, rel, t.Alias, name)
}

// rangeOp is range(end), range(start, end) or range(start, end, step): a
// column id of bigint.
func (pl *planner) rangeOp(f *syntax.FuncCall) (op, error) {
	if len(f.Args) < 1 || len(f.Args) > 3 {
		return nil, wrongArgs(f, "range", "1 to 3")
	}
	var vals [3]int64
	vals[2] = 1
	for i, a := range f.Args {
		c, err := Compile(a, domain.Schema{})
		if err != nil {
			return nil, err
		}
		col, err := c.Eval(domain.NoColumns(1))
		if err != nil {
			return nil, err
		}
		if c.Type().Kind != domain.KindInt64 || col.IsNull(0) {
			return nil, planErr(domain.CodeDatatypeMismatch, a.Position(), "range needs constant integers")
		}
		vals[i] = col.Ints[0]
	}
	start, end, step := int64(0), vals[0], vals[2]
	if len(f.Args) >= 2 {
		start, end = vals[0], vals[1]
	}
	if step == 0 {
		return nil, planErr(domain.CodeDatatypeMismatch, f.Pos, "range needs a step other than 0")
	}
	return &rangeOp{start: start, end: end, step: step, out: domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64})}, nil
}

func (pl *planner) join(j *syntax.Join) (op, scope, error) {
	l, ls, err := pl.from(j.Left)
	if err != nil {
		return nil, scope{}, err
	}
	if sq, ok := j.Right.(*syntax.SubqueryRef); ok && sq.Lateral {
		return pl.joinLateral(j, l, ls, sq)
	}
	r, rs, err := pl.from(j.Right)
	if err != nil {
		return nil, scope{}, err
	}
	kind := strings.ToUpper(j.Kind)
	both := ls.concat(rs)
	jo := &joinOp{kind: kind, l: l, r: r}
	using := j.Using
	if j.Natural {
		for _, lf := range ls.schema.Fields {
			if rs.schema.Index(lf.Name) >= 0 {
				using = append(using, &syntax.Ident{Pos: j.Pos, Name: lf.Name})
			}
		}
	}
	var cond syntax.Expr = j.On
	if len(using) > 0 {
		// USING (a): l.a = r.a, and the output holds a once
		lw := len(ls.schema.Fields)
		for _, u := range using {
			li, ri := ls.schema.Index(u.Name), rs.schema.Index(u.Name)
			if li < 0 || ri < 0 {
				side := "left"
				if li >= 0 {
					side = "right"
				}
				err := planErr(domain.CodeUnresolvedColumn, u.Pos, "the %s side of the join has no column `%s` for USING", side, u.Name)
				if (li < 0 && hasMarker(ls.schema)) || (ri < 0 && hasMarker(rs.schema)) {
					continue // a column of the relation that failed, maybe
				}
				if !pl.report(err) {
					return nil, scope{}, err
				}
				continue
			}
			jo.usingL = append(jo.usingL, li)
			jo.usingR = append(jo.usingR, lw+ri)
		}
	}
	if cond != nil || len(jo.usingL) > 0 {
		if err := pl.equiKeys(jo, cond, ls, rs, both); err != nil {
			return nil, scope{}, err
		}
	}
	switch kind {
	case "LEFT SEMI", "LEFT ANTI":
		jo.out = ls.schema
		return jo, ls, nil
	}
	if len(jo.usingL) == 0 {
		jo.out = both.schema
		return jo, both, nil
	}
	// USING: the keys first (coalesced for a full join), then the other
	// columns of each side
	var keep []int
	var outSc scope
	for k, li := range jo.usingL {
		f := both.schema.Fields[li]
		rt := both.schema.Fields[jo.usingR[k]].Type
		if t, ok := commonType(f.Type, rt, false); ok {
			f.Type = t
		}
		outSc.schema.Fields = append(outSc.schema.Fields, f)
		outSc.quals = append(outSc.quals, "")
	}
	skip := map[int]bool{}
	for k := range jo.usingL {
		skip[jo.usingL[k]], skip[jo.usingR[k]] = true, true
	}
	for i, f := range both.schema.Fields {
		if !skip[i] {
			keep = append(keep, i)
			outSc.schema.Fields = append(outSc.schema.Fields, f)
			outSc.quals = append(outSc.quals, both.quals[i])
		}
	}
	jo.out = both.schema
	exprs := make([]node, 0, len(outSc.schema.Fields))
	for k, li := range jo.usingL {
		t := outSc.schema.Fields[k].Type
		l := implicit(&colNode{idx: li, t: both.schema.Fields[li].Type}, t, j.Pos)
		r := implicit(&colNode{idx: jo.usingR[k], t: both.schema.Fields[jo.usingR[k]].Type}, t, j.Pos)
		var key node = l
		switch kind {
		case "RIGHT":
			key = r
		case "FULL":
			key = &coalesceNode{args: []node{l, r}, t: t}
		}
		exprs = append(exprs, key)
	}
	for _, i := range keep {
		exprs = append(exprs, &colNode{idx: i, t: both.schema.Fields[i].Type})
	}
	// the key columns keep the left side's qualifier too, so l.a still reads
	for k, li := range jo.usingL {
		outSc.quals[k] = both.quals[li]
	}
	return &projectOp{child: jo, exprs: exprs, out: outSc.schema}, outSc, nil
}

// equiKeys splits a join condition into equalities between a left and a right
// expression, which the join hashes, and the rest, which it checks on each
// candidate pair.
func (pl *planner) equiKeys(jo *joinOp, cond syntax.Expr, ls, rs, both scope) error {
	lw := len(ls.schema.Fields)
	for k := range jo.usingL {
		li, ri := jo.usingL[k], jo.usingR[k]
		lt, rt := both.schema.Fields[li].Type, both.schema.Fields[ri].Type
		t, ok := commonType(lt, rt, true)
		if !ok {
			err := planErr(domain.CodeDatatypeMismatch, syntax.Pos{}, "USING column %s is %s on the left and %s on the right", both.schema.Fields[li].Name, lt, rt)
			if !pl.report(err) {
				return err
			}
			t = unknownType
		}
		jo.lkeys = append(jo.lkeys, implicit(&colNode{idx: li, t: lt}, t, syntax.Pos{}))
		jo.rkeys = append(jo.rkeys, implicit(&colNode{idx: ri - lw, t: rt}, t, syntax.Pos{}))
	}
	if cond == nil {
		return nil
	}
	var rest []syntax.Expr
	for _, c := range conjuncts(cond) {
		if b, ok := c.(*syntax.Binary); ok && (b.Op == "=" || b.Op == "==") {
			lk, rk, ok := pl.sides(b, ls, rs)
			if ok {
				jo.lkeys = append(jo.lkeys, lk)
				jo.rkeys = append(jo.rkeys, rk)
				continue
			}
		}
		rest = append(rest, c)
	}
	if len(rest) == 0 {
		return nil
	}
	residual := rest[0]
	for _, r := range rest[1:] {
		residual = &syntax.Binary{Pos: r.Position(), Op: "AND", L: residual, R: r}
	}
	mark := pl.mark()
	c, err := pl.compile(residual, both, nil)
	if err != nil {
		return err
	}
	if c.Type().Kind != domain.KindBool && c.Type().Kind != domain.KindNull {
		err := planErr(domain.CodeDatatypeMismatch, cond.Position(), "a join condition must be a boolean, found %s", c.Type())
		if !pl.keep(mark, err) {
			return err
		}
	}
	jo.cond = c.root
	return nil
}

// sides compiles l = r as a key on each side of a join, when one operand
// reads only the left and the other only the right.
func (pl *planner) sides(b *syntax.Binary, ls, rs scope) (node, node, bool) {
	try := func(a, c syntax.Expr) (node, node, bool) {
		la, err := pl.trial(a, ls)
		if err != nil {
			return nil, nil, false
		}
		rc, err := pl.trial(c, rs)
		if err != nil {
			return nil, nil, false
		}
		t, ok := commonType(la.Type(), rc.Type(), true)
		if !ok || la.Type().Kind == domain.KindNull {
			return nil, nil, false
		}
		return implicit(la.root, t, a.Position()), implicit(rc.root, t, c.Position()), true
	}
	if !readsColumns(b.L) || !readsColumns(b.R) {
		return nil, nil, false
	}
	if l, r, ok := try(b.L, b.R); ok {
		return l, r, true
	}
	return try(b.R, b.L)
}

func readsColumns(e syntax.Expr) bool {
	found := false
	syntax.Inspect(e, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ColumnRef); ok {
			found = true
		}
		return !found
	})
	return found
}

func conjuncts(e syntax.Expr) []syntax.Expr {
	if p, ok := e.(*syntax.Paren); ok {
		return conjuncts(p.X)
	}
	if b, ok := e.(*syntax.Binary); ok && b.Op == "AND" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []syntax.Expr{e}
}

// ---- subqueries in expressions ----

// subquery compiles a scalar subquery, IN (subquery) or EXISTS; other
// expressions are left to the compiler. A subquery that reads columns of
// the enclosing query is planned again by decorrelate.
func (pl *planner) subquery(e syntax.Expr, c *compiler) (node, error) {
	if pl.errs != nil {
		// the columns the subquery could not resolve, recorded as it was
		// planned, may be the enclosing query's
		from, doubt := len(pl.errs.list), pl.errs.doubt
		n, err := pl.subqueryNode(e, c)
		found := append([]error(nil), pl.errs.list[from:]...)
		var derr error // decorrelate's, once an outer column is met
		for _, f := range found {
			if se, ok := f.(*syntax.Error); ok && se.Code == domain.CodeUnresolvedColumn {
				if outer, unknown := correlated(e, se.Pos, c); outer && !unknown {
					// plan it again, decorrelated, without the first
					// attempt's errors and doubts; what it records stays
					firstDoubt := pl.errs.doubt
					pl.errs.list, pl.errs.doubt = pl.errs.list[:from], doubt
					saved := pl.errs
					pl.errs = nil
					dn, err := pl.decorrelate(e, c, se.Pos)
					pl.errs = saved
					if err == nil {
						return dn, nil
					}
					pl.errs.list, pl.errs.doubt = append(pl.errs.list[:from], found...), firstDoubt
					derr = err
					break
				}
			}
		}
		kept := pl.errs.list[:from] // filtered in place
		said := false
		if de, ok := derr.(*syntax.Error); ok {
			for _, f := range found {
				if fe, ok := f.(*syntax.Error); ok && fe.Pos == de.Pos && fe.Code == de.Code {
					said = true // decorrelate met an error of the first attempt: it stays, once
				}
			}
		}
		for _, f := range found {
			if se, ok := f.(*syntax.Error); ok && se.Code == domain.CodeUnresolvedColumn {
				switch outer, unknown := correlated(e, se.Pos, c); {
				case unknown:
					continue // a column of a relation that failed, maybe
				case outer && said:
					continue // said once
				case outer:
					f, said = derr, true
				}
			}
			kept = append(kept, f)
		}
		pl.errs.list = kept
		return n, err
	}
	n, err := pl.subqueryNode(e, c)
	if se, ok := err.(*syntax.Error); ok && se.Code == domain.CodeUnresolvedColumn {
		if found, _ := correlated(e, se.Pos, c); found {
			return pl.decorrelate(e, c, se.Pos)
		}
	}
	return n, err
}

// correlated reports whether the column reference at p, which the subquery
// e could not resolve, names a column of the enclosing query, and whether
// that column is one of a relation that failed to plan (PlanQueryAll).
func correlated(e syntax.Expr, p syntax.Pos, outer *compiler) (found, unknown bool) {
	syntax.Inspect(e, func(n syntax.Node) bool {
		if ref, ok := n.(*syntax.ColumnRef); ok && !found {
			for _, part := range ref.Parts {
				if part.Pos == p {
					idx, _, err := outer.lookupColumn(ref.Parts)
					found = err == nil
					unknown = found && isMarker(outer.in.Fields[idx])
				}
			}
		}
		return !found
	})
	return found, unknown
}

func (pl *planner) subqueryNode(e syntax.Expr, c *compiler) (node, error) {
	switch e := e.(type) {
	case *syntax.Subquery:
		o, err := pl.query(e.Query)
		if err != nil {
			return nil, err
		}
		if n := len(o.schema().Fields); n != 1 {
			return nil, planErr(domain.CodeInvalidSubquery, e.Pos, "a scalar subquery must return one column, this one returns %d", n)
		}
		pl.subqueries = append(pl.subqueries, o)
		return &subqueryNode{kind: "scalar", o: o, run: pl.run, t: o.schema().Fields[0].Type, pos: e.Pos}, nil
	case *syntax.Exists:
		o, err := pl.query(e.Query)
		if err != nil {
			return nil, err
		}
		pl.subqueries = append(pl.subqueries, o)
		return &subqueryNode{kind: "exists", o: o, run: pl.run, t: domain.TypeBool, pos: e.Pos}, nil
	case *syntax.In:
		if e.Query == nil {
			return nil, nil
		}
		o, err := pl.query(e.Query)
		if err != nil {
			return nil, err
		}
		if n := len(o.schema().Fields); n != 1 {
			return nil, planErr(domain.CodeInvalidSubquery, e.Pos, "IN (subquery) needs a subquery of one column, this one returns %d", n)
		}
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		t, ok := commonType(x.typ(), o.schema().Fields[0].Type, true)
		if !ok {
			return nil, planErr(domain.CodeDatatypeMismatch, e.Pos, "cannot compare %s with the subquery's %s", x.typ(), o.schema().Fields[0].Type)
		}
		pl.subqueries = append(pl.subqueries, o)
		var n node = &subqueryNode{kind: "in", x: implicit(x, t, e.X.Position()), o: conform(o, domain.NewSchema(domain.Field{Name: "v", Type: t})), run: pl.run, t: domain.TypeBool, pos: e.Pos}
		if e.Not {
			n = &notNode{x: n}
		}
		return n, nil
	}
	return nil, nil
}

// ---- output naming ----

// outputName is the column name Spark gives a select item without an alias.
func outputName(e syntax.Expr) string {
	switch e := e.(type) {
	case *syntax.ColumnRef:
		return e.Parts[len(e.Parts)-1].Name
	case *syntax.FieldAccess:
		return e.Field.Name
	case *syntax.Paren:
		return outputName(e.X)
	case *syntax.FuncCall:
		// Spark names count(*) count(1), as it rewrites it
		if len(e.Args) == 1 && strings.EqualFold(e.Name.Last().Name, "count") && e.Over == nil {
			if _, star := e.Args[0].(*syntax.Star); star {
				return "count(1)"
			}
		}
	}
	return syntax.Format(e)
}

func unknownName(name string, p syntax.Pos, names []string) *syntax.Error {
	msg := fmt.Sprintf("no column named `%s`", name)
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == opaqueName })
	if s := suggestpkg.Closest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean `%s`?", s)
	}
	return planErr(domain.CodeUnresolvedColumn, p, "%s", msg)
}

// RowWiseIn reports whether each row the plan outputs comes from one row of
// input i, whatever the other inputs hold (projections, filters,
// generators, and joins that keep input i on their left, or inner): the
// plan can then run on each micro-batch of a stream read as input i, with
// the other inputs read whole beside it.
func (p *Plan) RowWiseIn(i int) bool {
	for _, sub := range p.subqueries {
		if reads(sub, i) {
			return false // WHERE v > (SELECT avg(v) FROM STREAM(x)) needs all of x
		}
	}
	return rowWiseIn(p.root, i)
}

func rowWiseIn(o op, i int) bool {
	switch o := o.(type) {
	case *scanOp:
		return o.input == i
	case *projectOp:
		return rowWiseIn(o.child, i)
	case *renameOp:
		return rowWiseIn(o.child, i)
	case *filterOp:
		return rowWiseIn(o.child, i)
	case *joinOp:
		l, r := reads(o.l, i), reads(o.r, i)
		switch {
		case l && !r:
			return o.kind != "RIGHT" && o.kind != "FULL" && rowWiseIn(o.l, i)
		case r && !l:
			return (o.kind == "INNER" || o.kind == "RIGHT" || o.kind == "CROSS") && rowWiseIn(o.r, i)
		}
	}
	if g, ok := o.(interface{ rowWiseIn(int) bool }); ok {
		return g.rowWiseIn(i)
	}
	return false
}

// reads reports whether input i is read anywhere under o.
func reads(o op, i int) bool {
	if s, ok := o.(*scanOp); ok {
		return s.input == i
	}
	for _, c := range children(o) {
		if reads(c, i) {
			return true
		}
	}
	return false
}

func children(o op) []op {
	switch o := o.(type) {
	case *projectOp:
		return []op{o.child}
	case *renameOp:
		return []op{o.child}
	case *filterOp:
		return []op{o.child}
	case *limitOp:
		return []op{o.child}
	case *distinctOp:
		return []op{o.child}
	case *sortOp:
		return []op{o.child}
	case *joinOp:
		return []op{o.l, o.r}
	case *setOpOp:
		return []op{o.l, o.r}
	}
	if p, ok := o.(interface{ children() []op }); ok {
		return p.children()
	}
	return nil
}

// exprKey is e's text with its names in lower case (SQL names ignore case)
// and its string literals as written: two expressions with one key are the
// same expression, as GROUP BY matches the select list against its keys.
func exprKey(e syntax.Expr) string {
	s := syntax.Format(e)
	var b strings.Builder
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			c = s[i]
		case c == '\'':
			inString = !inString
		case !inString && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
