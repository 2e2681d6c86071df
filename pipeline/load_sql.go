package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/expectations"
	"github.com/sluicehq/sluice/internal/suggest"
	"github.com/sluicehq/sluice/processors"
	kafkasink "github.com/sluicehq/sluice/sinks/kafka"
	parquetsink "github.com/sluicehq/sluice/sinks/parquet"
	postgressink "github.com/sluicehq/sluice/sinks/postgres"
	wmsink "github.com/sluicehq/sluice/sinks/watermill"
	"github.com/sluicehq/sluice/sinks/webhook"
	"github.com/sluicehq/sluice/sql"
	"github.com/sluicehq/sluice/sql/syntax"
)

// SQLFile is one file of a pipeline's SQL.
type SQLFile struct {
	Path string // as messages show it, relative to the pipeline directory
	Text string
}

// SQLOptions configure LoadSQL.
type SQLOptions struct {
	// Configuration holds the ${key} values, and the session settings each
	// file starts with (SET changes them from that point of the file on).
	Configuration map[string]string
	// Catalog and Schema are the pipeline's default namespace: a qualified
	// name in it (schema.name, catalog.schema.name), like LIVE.name, names a
	// dataset of the pipeline.
	Catalog, Schema string
	// Dir is the directory relative read_files paths are under.
	Dir string
	// Storage is the pipeline's storage directory: sources that keep what
	// they take from a broker until it commits (read_nats, read_amqp)
	// keep it under it.
	Storage string
}

// LoadSQL declares in p the datasets and flows of the files, as the Go API
// would: streaming tables, materialized views, flows, with every query
// planned against the schemas of what it reads. Temporary views are planned
// into the queries that read them. It reports every problem of every file,
// each with its file, line and column.
func (p *Pipeline) LoadSQL(files []SQLFile, opts SQLOptions) domain.Problems {
	l := &sqlLoader{p: p, opts: opts, datasets: map[string]*sqlDataset{}, sources: map[string]domain.Source{}, sourceNotes: map[string][]string{}}
	for _, f := range files {
		l.parse(f)
	}
	for _, ds := range l.order {
		l.schemaOf(ds)
	}
	for _, f := range l.flows {
		if f.plan == nil && !f.failed {
			l.planFlow(f)
		}
	}
	l.declare()
	if len(l.problems) > 0 {
		l.markIncomplete()
	}
	return l.problems
}

// markIncomplete tells the pipeline that its SQL did not load whole, and
// which datasets are missing or lost every flow that fills them: what
// Resolve would find missing about them follows from problems already
// reported (see AllProblems).
func (l *sqlLoader) markIncomplete() {
	if l.p.incomplete == nil {
		l.p.incomplete = map[string]bool{}
	}
	l.p.loadFailed = true
	filled := map[*sqlDataset]bool{}
	for _, f := range l.flows {
		if !f.failed && f.plan != nil && f.target != nil {
			filled[f.target] = true
		}
	}
	for _, ds := range l.order {
		if ds.failed || (len(ds.flows) > 0 && !filled[ds]) {
			l.p.incomplete[ds.name] = true
		}
	}
}

type sqlLoader struct {
	p        *Pipeline
	opts     SQLOptions
	problems domain.Problems
	datasets map[string]*sqlDataset // by lower-case name
	order    []*sqlDataset
	flows    []*sqlFlow
	sources  map[string]domain.Source // file reads, by the relation name given to the planner
	// what loading has to say of file reads (options without effect here),
	// by relation name, for the flows that read them
	sourceNotes map[string][]string
	// resolving is the chain of datasets whose schemas are being resolved,
	// each reading the next: a cycle is named by it
	resolving []string
}

// cycle names the cycle that reading name closes: "a -> b -> a", each
// dataset reading the next.
func (l *sqlLoader) cycle(name string) string {
	i := len(l.resolving) - 1
	for i > 0 && !strings.EqualFold(l.resolving[i], name) {
		i--
	}
	return strings.Join(append(append([]string{}, l.resolving[i:]...), name), " -> ")
}

// sqlDataset is a dataset declared by a CREATE statement.
type sqlDataset struct {
	name   string
	stmt   *syntax.CreateDataset
	file   *sqlFile
	kind   syntax.DatasetKind
	schema *domain.Schema // resolved: declared, or planned
	// declared is the column list's schema, when the statement has one
	declared *domain.Schema
	flows    []*sqlFlow
	// expectations from CONSTRAINT ... EXPECT, with their parsed conditions
	expectations []domain.Expectation
	expectExprs  []syntax.Expr
	// computed are the GENERATED ALWAYS AS and DEFAULT columns
	computed  []computedColumn
	resolving bool
	// the session and namespace where it was declared (for a view's query)
	conf   map[string]string
	ns     namespace
	failed bool
}

// computedColumn is a column a table computes from each row it is given:
// always (GENERATED ALWAYS AS), or when the flow gives no value (DEFAULT).
type computedColumn struct {
	name   string
	expr   syntax.Expr
	always bool
}

// sqlFlow is a query that fills a dataset: a dataset's own query, or a
// CREATE FLOW.
type sqlFlow struct {
	name      string
	target    *sqlDataset
	query     *syntax.Query
	file      *sqlFile
	pos       syntax.Pos
	once      bool
	dependsOn []string
	comment   string
	conf      map[string]string
	ns        namespace
	plan      *sql.Plan
	views     []*sqlDataset // the temporary views planned into it
	failed    bool
	planning  bool
	// a target named before its CREATE: looked up once all files are parsed
	pendingTarget *syntax.Name
	pendingOwn    bool
	// cdc are the clauses of an AUTO CDC flow, nil for others
	cdc *changeClauses
}

type sqlFile struct {
	SQLFile
}

// namespace is where names resolve: the current catalog and schema (as USE
// sets them), and the pipeline's own, whose datasets are named plainly.
type namespace struct{ catalog, schema, ownCatalog, ownSchema string }

// problem records err, placed in the file when it is a position error.
func (l *sqlLoader) problem(f *sqlFile, err error) {
	if f != nil {
		err = syntax.Locate(err, f.Path, f.Text)
	}
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Wrap(domain.CodeInvalidDefinition, err, "")
	}
	l.problems = append(l.problems, de)
}

// problemAt records a problem at a position of a file.
func (l *sqlLoader) problemAt(f *sqlFile, pos syntax.Pos, code domain.Code, format string, args ...any) {
	l.problem(f, &syntax.Error{Code: code, File: f.Path, Pos: pos, Message: fmt.Sprintf(format, args...)})
}

func (l *sqlLoader) parse(in SQLFile) {
	f := &sqlFile{SQLFile: in}
	parsed, errs := syntax.ParseFileAll(in.Path, in.Text, l.opts.Configuration)
	for _, err := range errs {
		l.problem(f, err)
	}
	if parsed == nil {
		return
	}
	conf := map[string]string{}
	for k, v := range l.opts.Configuration {
		conf[k] = v
	}
	ns := namespace{catalog: l.opts.Catalog, schema: l.opts.Schema, ownCatalog: l.opts.Catalog, ownSchema: l.opts.Schema}
	for _, st := range parsed.Statements {
		switch st := st.(type) {
		case *syntax.Set:
			if st.HasVal {
				conf = copyConf(conf)
				conf[st.Key] = st.Value
			}
		case *syntax.Use:
			switch st.Kind {
			case "CATALOG":
				ns.catalog = st.Name.Last().Name
			default:
				if len(st.Name.Parts) == 2 {
					ns.catalog = st.Name.Parts[0].Name
				}
				ns.schema = st.Name.Last().Name
			}
		case *syntax.CreateDataset:
			l.createDataset(f, st, conf, ns)
		case *syntax.CreateFlow:
			l.createFlow(f, st, conf, ns)
		case *syntax.AutoCDC:
			name := ""
			if st.Target != nil {
				name = st.Target.Last().Name
			}
			l.autoCDCFlow(f, name, st, nil, conf, ns)
		case *syntax.QueryStmt:
			l.problemAt(f, st.Pos, domain.CodeInvalidDefinition, "a query on its own defines nothing; write CREATE MATERIALIZED VIEW name AS before it")
		default:
			l.problemAt(f, st.Position(), domain.CodeNotImplemented, "this statement does not run in a pipeline")
		}
	}
}

func copyConf(c map[string]string) map[string]string {
	out := make(map[string]string, len(c)+1)
	for k, v := range c {
		out[k] = v
	}
	return out
}

// ownName is the dataset a name stands for: the name resolved as Spark
// resolves it against the current catalog and schema (LIVE.name in the
// pipeline's own), keyed by as much of catalog.schema.name as differs from
// the pipeline's own namespace: t, sales.t, main.sales.t. ok is false for a
// name of more than three parts.
func (ns namespace) ownName(n *syntax.Name) (string, bool) {
	parts := n.Parts
	cat, sch := ns.catalog, ns.schema
	var name string
	switch len(parts) {
	case 1:
		name = parts[0].Name
	case 2:
		if strings.EqualFold(parts[0].Name, "LIVE") {
			return parts[1].Name, true
		}
		sch, name = parts[0].Name, parts[1].Name
	case 3:
		cat, sch, name = parts[0].Name, parts[1].Name, parts[2].Name
	default:
		return "", false
	}
	own := func(x, mine string) bool { return x == "" || strings.EqualFold(x, mine) }
	switch {
	case own(cat, ns.ownCatalog) && own(sch, ns.ownSchema):
		return name, true
	case own(cat, ns.ownCatalog):
		return sch + "." + name, true
	case sch == "":
		sch = "default"
	}
	return cat + "." + sch + "." + name, true
}

func nameText(n *syntax.Name) string {
	parts := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		parts[i] = p.Name
	}
	return strings.Join(parts, ".")
}

func (l *sqlLoader) createDataset(f *sqlFile, st *syntax.CreateDataset, conf map[string]string, ns namespace) {
	name, ok := ns.ownName(st.Name)
	if !ok {
		l.problemAt(f, st.Name.Pos, domain.CodeInvalidDefinition, "%s has more than three parts; a dataset is named name, schema.name or catalog.schema.name", nameText(st.Name))
		return
	}
	if prev, dup := l.datasets[strings.ToLower(name)]; dup {
		l.problemAt(f, st.Name.Pos, domain.CodeDuplicateIdentifiers, "%s is already declared at %s:%d", name, prev.file.Path, prev.stmt.Pos.Line)
		return
	}
	ds := &sqlDataset{name: name, stmt: st, file: f, kind: st.Kind(), conf: conf, ns: ns}
	l.datasets[strings.ToLower(name)] = ds
	l.order = append(l.order, ds)
	if ds.kind == syntax.View && st.Query == nil {
		l.problemAt(f, st.Pos, domain.CodeInvalidDefinition, "view %s needs AS query", name)
		ds.failed = true
	}
	if ds.kind == syntax.MaterializedView && st.Query == nil {
		l.problemAt(f, st.Pos, domain.CodeInvalidDefinition, "materialized view %s needs AS query", name)
		ds.failed = true
	}
	l.columns(ds)
	if st.Query != nil && ds.kind != syntax.View {
		fl := &sqlFlow{name: name, target: ds, query: st.Query, file: f, pos: st.Pos, conf: conf, ns: ns}
		ds.flows = append(ds.flows, fl)
		l.flows = append(l.flows, fl)
	}
}

// columns reads a dataset's column list: the declared schema; expectations
// and generated columns are refused until they run.
func (l *sqlLoader) columns(ds *sqlDataset) {
	var fields []domain.Field
	typed := true
	for _, el := range ds.stmt.Elements {
		switch el := el.(type) {
		case *syntax.ColumnDef:
			if el.Type == nil {
				typed = false
				continue
			}
			t, err := sql.DomainType(el.Type)
			if err != nil {
				l.problem(ds.file, err)
				continue
			}
			fd := domain.Field{Name: el.Name.Name, Type: t, Nullable: !el.NotNull && !el.PrimaryKey}
			if el.Comment != nil {
				fd.Comment = el.Comment.Value
			}
			switch {
			case el.Mask != nil:
				l.problemAt(ds.file, el.Pos, domain.CodeNotImplemented, "column masks do not run yet")
			case el.Generated != nil && el.Generated.Identity:
				l.problemAt(ds.file, el.Pos, domain.CodeNotImplemented, "identity columns do not run yet; compute %s in the query", el.Name.Name)
			case el.Generated != nil:
				ds.computed = append(ds.computed, computedColumn{name: el.Name.Name, expr: el.Generated.Expr, always: true})
			case el.Default != nil:
				ds.computed = append(ds.computed, computedColumn{name: el.Name.Name, expr: el.Default})
			}
			fields = append(fields, fd)
		case *syntax.Constraint:
			if el.Kind != syntax.Expect && el.Kind != syntax.Check {
				continue // keys are information only
			}
			e := domain.Expectation{Condition: syntax.Format(el.Expr), Action: domain.ExpectWarn, File: ds.file.Path, Line: el.Pos.Line, Column: el.Pos.Col}
			if el.Name != nil {
				e.Name = el.Name.Name
			} else {
				e.Name = fmt.Sprintf("check_%d", len(ds.expectations)+1)
			}
			switch {
			case el.Kind == syntax.Check || el.OnViolation == "FAIL UPDATE":
				e.Action = domain.ExpectFail
			case el.OnViolation == "DROP ROW":
				e.Action = domain.ExpectDrop
			}
			ds.expectations = append(ds.expectations, e)
			ds.expectExprs = append(ds.expectExprs, el.Expr)
		}
	}
	if ds.stmt.RowFilter != nil {
		l.problemAt(ds.file, ds.stmt.RowFilter.Pos, domain.CodeNotImplemented, "row filters do not run yet")
	}
	if len(fields) > 0 && typed {
		s := domain.NewSchema(fields...)
		ds.declared = &s
	}
}

func (l *sqlLoader) createFlow(f *sqlFile, st *syntax.CreateFlow, conf map[string]string, ns namespace) {
	name := st.Name.Last().Name
	ins, ok := st.Body.(*syntax.InsertInto)
	if !ok {
		if cdc, ok := st.Body.(*syntax.AutoCDC); ok {
			l.autoCDCFlow(f, name, cdc, st, conf, ns)
		}
		return
	}
	fl := &sqlFlow{name: name, query: ins.Query, file: f, pos: st.Pos, once: ins.Once, conf: conf, ns: ns}
	if !ins.ByName {
		// kept as a failed flow, so its target is not also reported as
		// having no flow
		l.problemAt(f, ins.Pos, domain.CodeNotImplemented, "INSERT INTO without BY NAME matches columns by position, which sluice does not do yet; write INSERT INTO %s BY NAME and name the query's columns as the table's", nameText(ins.Target))
		fl.failed = true
	}
	fl.flowClauses(st)
	l.attach(fl, ins.Target)
}

// flowClauses takes the COMMENT and DEPENDS ON of a CREATE FLOW.
func (fl *sqlFlow) flowClauses(st *syntax.CreateFlow) {
	if st.Comment != nil {
		fl.comment = st.Comment.Value
	}
	if st.DependsOn != nil {
		for _, d := range st.DependsOn.Flows {
			fl.dependsOn = append(fl.dependsOn, d.Last().Name)
		}
	}
}

// attach adds a flow, with the target it names (which may be declared
// later, in this file or another).
func (l *sqlLoader) attach(fl *sqlFlow, targetName *syntax.Name) {
	target, own := fl.ns.ownName(targetName)
	ds := l.datasets[strings.ToLower(target)]
	l.flows = append(l.flows, fl)
	if !own || ds == nil {
		fl.target = &sqlDataset{name: nameText(targetName)}
		fl.targetRef(targetName, own)
		return
	}
	fl.target = ds
	ds.flows = append(ds.flows, fl)
}

// autoCDCFlow declares an AUTO CDC flow: a CREATE FLOW name AS AUTO CDC
// ..., or an APPLY CHANGES INTO on its own (st nil), named after its
// target. Its query reads the source whole (SELECT *); the clauses are
// compiled against the source's columns.
func (l *sqlLoader) autoCDCFlow(f *sqlFile, name string, a *syntax.AutoCDC, st *syntax.CreateFlow, conf map[string]string, ns namespace) {
	if st == nil {
		// APPLY CHANGES INTO t on its own: a flow named t, or t_2, t_3...
		// for the next ones into t
		base, n := name, 1
		for l.flowNamed(name) {
			n++
			name = fmt.Sprintf("%s_%d", base, n)
		}
	}
	c := sqlChangeClauses(a, name, f.Path, conf)
	for _, err := range c.checkClauses() {
		l.problem(f, err)
	}
	q := &syntax.Query{Pos: a.Pos, Body: &syntax.Select{Pos: a.Pos,
		Items: []*syntax.SelectItem{{Pos: a.Pos, Expr: &syntax.Star{Pos: a.Pos}}},
		From:  []syntax.FromItem{a.Source}}}
	pos := a.Pos
	fl := &sqlFlow{name: name, query: q, file: f, pos: pos, once: a.Once, conf: conf, ns: ns, cdc: c}
	if st != nil {
		fl.pos = st.Pos
		fl.flowClauses(st)
	}
	l.attach(fl, a.Target)
}

// flowNamed reports whether a flow of that name was declared.
func (l *sqlLoader) flowNamed(name string) bool {
	for _, f := range l.flows {
		if strings.EqualFold(f.name, name) {
			return true
		}
	}
	return false
}

// targetRef remembers a flow target to look up once every file is parsed.
func (f *sqlFlow) targetRef(n *syntax.Name, own bool) {
	f.pendingTarget, f.pendingOwn = n, own
}

// schemaOf resolves a dataset's schema: its column list, or the schema of
// the query that fills it.
func (l *sqlLoader) schemaOf(ds *sqlDataset) (*domain.Schema, bool) {
	if ds.schema != nil || ds.failed {
		return ds.schema, !ds.failed
	}
	if ds.resolving {
		l.problemAt(ds.file, ds.stmt.Pos, domain.CodeCircularDependency, "%s reads itself through the datasets it reads: %s (each reads the next)", ds.name, l.cycle(ds.name))
		ds.failed = true
		return nil, false
	}
	ds.resolving = true
	l.resolving = append(l.resolving, ds.name)
	defer func() { ds.resolving, l.resolving = false, l.resolving[:len(l.resolving)-1] }()
	if ds.kind == syntax.View {
		p, _, ok := l.planQuery(ds.stmt.Query, ds.file, ds.ns, ds, ds.conf)
		if !ok {
			ds.failed = true
			return nil, false
		}
		ds.schema = &p.Schema
		return ds.schema, true
	}
	if ds.declared != nil {
		ds.schema = ds.declared
	}
	l.resolvePending()
	if ds.kind == syntax.Sink {
		// a sink has no schema: each flow delivers its own rows
		for _, f := range ds.flows {
			if f.plan == nil && !f.failed {
				l.planFlow(f)
			}
		}
		if len(ds.flows) == 0 {
			l.problemAt(ds.file, ds.stmt.Pos, domain.CodeDatasetWithoutFlow, "sink %s has no flow writing to it; add one: CREATE FLOW f AS INSERT INTO %s BY NAME SELECT ...", ds.name, ds.name)
			ds.failed = true
		}
		return nil, !ds.failed
	}
	for _, f := range ds.flows {
		if f.plan == nil && !f.failed {
			l.planFlow(f)
		}
		if f.plan == nil {
			continue
		}
		if ds.declared != nil {
			// the flow's columns must fit the declared ones
			declared, out := *ds.declared, withoutComputed(f.outSchema(), ds.computed)
			if f.cdc != nil {
				declared, out = cdc.StoredColumns(declared), cdc.StoredColumns(out)
			}
			if _, err := domain.EvolveSchema(ds.name, declared, out, true); err != nil {
				l.problemAt(f.file, f.query.Pos, domain.CodeOf(err), "the query of %s does not fit the columns declared for %s: %s", f.name, ds.name, errorMessage(err))
				f.failed = true
			}
			continue
		}
		// several flows: the table takes the columns of all of them, as
		// its schema evolves when their batches come
		s := f.outSchema()
		if ds.schema != nil {
			evolved, err := domain.EvolveSchema(ds.name, *ds.schema, s, false)
			if err != nil {
				l.problemAt(f.file, f.pos, domain.CodeOf(err), "flow %s does not fit the columns of the other flows into %s: %s", f.name, ds.name, errorMessage(err))
				f.failed = true
				continue
			}
			s = evolved
		}
		ds.schema = &s
	}
	if ds.schema == nil {
		if len(ds.flows) == 0 {
			l.problemAt(ds.file, ds.stmt.Pos, domain.CodeDatasetWithoutFlow, "%s has neither a query nor a flow that fills it, nor a column list", ds.name)
		}
		ds.failed = true
		return nil, false
	}
	return ds.schema, true
}

// resolvePending attaches flows whose target was declared after them.
func (l *sqlLoader) resolvePending() {
	for _, f := range l.flows {
		if f.pendingTarget == nil {
			continue
		}
		n := f.pendingTarget
		f.pendingTarget = nil
		name, _ := f.ns.ownName(n)
		ds := l.datasets[strings.ToLower(name)]
		if !f.pendingOwn || ds == nil {
			l.problemAt(f.file, n.Pos, domain.CodeUnknownDataset, "flow %s inserts into %s, which the pipeline does not declare", f.name, nameText(n))
			f.failed = true
			continue
		}
		f.target = ds
		ds.flows = append(ds.flows, f)
	}
}

func (l *sqlLoader) planFlow(f *sqlFlow) {
	l.resolvePending()
	if f.failed || f.plan != nil {
		return
	}
	if f.planning {
		target := f.name
		if f.target != nil {
			target = f.target.name
		}
		l.problemAt(f.file, f.pos, domain.CodeCircularDependency, "flow %s reads its own target through the datasets it reads: %s (each reads the next)", f.name, l.cycle(target))
		f.failed = true
		return
	}
	f.planning = true
	defer func() { f.planning = false }()
	p, views, ok := l.planQuery(f.query, f.file, f.ns, f.target, f.conf)
	if !ok {
		f.failed = true
		return
	}
	if f.cdc != nil {
		if _, err := f.cdc.compile(p.Schema); err != nil {
			l.problem(f.file, err)
			f.failed = true
			return
		}
	}
	f.plan, f.views = p, views
}

// outSchema is the columns a planned flow writes into its target: its
// query's, or for an AUTO CDC flow the stored columns (and __START_AT and
// __END_AT for SCD type 2).
func (f *sqlFlow) outSchema() domain.Schema {
	if f.cdc == nil {
		return f.plan.Schema
	}
	s, err := f.cdc.tableSchema(f.plan.Schema)
	if err != nil {
		return f.plan.Schema // reported when planned
	}
	return s
}

// planQuery plans a query of a file against the pipeline's datasets. It
// returns the temporary views planned into it (those they read included).
func (l *sqlLoader) planQuery(q *syntax.Query, file *sqlFile, ns namespace, target *sqlDataset, conf map[string]string) (*sql.Plan, []*sqlDataset, bool) {
	sess, err := sql.SessionFromConf(conf)
	if err != nil {
		l.problemAt(file, q.Pos, domain.CodeOf(err), "%s", errorMessage(err))
		return nil, nil, false
	}
	sess.Catalog, sess.Schema = ns.catalog, ns.schema
	cat := &sqlCatalog{l: l, file: file, ns: ns, target: target, metadata: readsMetadata(q)}
	p, errs := sql.PlanQueryAll(q, cat, sess)
	if len(errs) > 0 {
		for _, err := range errs {
			// the catalog's INVALID_DEFINITION (a dataset or view read that
			// is invalid) was reported with that dataset's own errors
			if cat.reported && domain.CodeOf(err) == domain.CodeInvalidDefinition {
				continue
			}
			l.problem(file, err)
		}
		return nil, nil, false
	}
	return p, cat.views, true
}

// sqlCatalog resolves the FROM items of one query.
type sqlCatalog struct {
	l        *sqlLoader
	file     *sqlFile
	ns       namespace
	target   *sqlDataset
	reported bool          // the error returned was recorded already
	views    []*sqlDataset // the views the query reads, directly or through others
	// metadata: the query (or a view it reads) names _metadata, so file
	// reads add it (it costs a value per row)
	metadata bool
}

// readsMetadata reports whether a query names the file metadata column.
func readsMetadata(q *syntax.Query) bool {
	found := false
	syntax.Inspect(q, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ColumnRef:
			for _, p := range n.Parts {
				found = found || strings.EqualFold(p.Name, "_metadata")
			}
		case *syntax.FuncCall: // input_file_name() reads _metadata.file_path
			found = found || (len(n.Name.Parts) == 1 && strings.EqualFold(n.Name.Last().Name, "input_file_name"))
		}
		return !found
	})
	return found
}

func (c *sqlCatalog) Table(n *syntax.Name, stream bool) (sql.Relation, error) {
	name, own := c.ns.ownName(n)
	ds := c.l.datasets[strings.ToLower(name)]
	if !own || ds == nil {
		msg := fmt.Sprintf("%s is not a dataset of this pipeline", nameText(n))
		hint := "read a dataset this pipeline declares, or the files with read_files('path', format => 'json')"
		if own && !strings.EqualFold(name, nameText(n)) {
			msg = fmt.Sprintf("%s, which is %s here (names resolve against the catalog and schema of USE), is not a dataset of this pipeline", nameText(n), name)
		}
		if len(n.Parts) > 1 && own {
			msg = fmt.Sprintf("the pipeline declares no dataset %s", name)
		} else if len(n.Parts) > 1 {
			hint = "sluice has no catalog of external tables yet: read the table's files with read_files, or declare the table in this pipeline"
		}
		if own {
			names := make([]string, len(c.l.order))
			for i, ds := range c.l.order {
				names[i] = ds.name
			}
			if near := suggest.Closest(name, names); near != "" {
				hint = fmt.Sprintf("did you mean `%s`?", near)
			}
		}
		return sql.Relation{}, &syntax.Error{Code: domain.CodeUnknownDataset, File: c.file.Path, Pos: n.Pos, Message: msg + "; " + hint}
	}
	if ds.kind == syntax.Sink {
		return sql.Relation{}, &syntax.Error{Code: domain.CodeUnknownDataset, File: c.file.Path, Pos: n.Pos,
			Message: fmt.Sprintf("%s is a sink: flows write to it, and nothing reads it; read the dataset its flows read instead", ds.name)}
	}
	if ds == c.target && ds.kind != syntax.View {
		// a flow reading its own target sees what was there before it ran
		if ds.schema == nil {
			return sql.Relation{}, &syntax.Error{Code: domain.CodeCircularDependency, File: c.file.Path, Pos: n.Pos, Message: fmt.Sprintf("%s reads itself", ds.name)}
		}
	}
	if ds.kind == syntax.View {
		if ds.resolving {
			return sql.Relation{}, &syntax.Error{Code: domain.CodeCircularDependency, File: c.file.Path, Pos: n.Pos, Message: fmt.Sprintf("view %s reads itself: %s (each reads the next)", ds.name, c.l.cycle(ds.name))}
		}
		if _, ok := c.l.schemaOf(ds); !ok {
			c.reported = true
			return sql.Relation{}, &syntax.Error{Code: domain.CodeInvalidDefinition, File: c.file.Path, Pos: n.Pos, Message: fmt.Sprintf("view %s is invalid", ds.name)}
		}
		c.metadata = c.metadata || readsMetadata(ds.stmt.Query)
		c.views = append(c.views, ds)
		return sql.Relation{Name: ds.name, View: ds.stmt.Query}, nil
	}
	s, ok := c.l.schemaOf(ds)
	if !ok {
		c.reported = true
		return sql.Relation{}, &syntax.Error{Code: domain.CodeInvalidDefinition, File: c.file.Path, Pos: n.Pos, Message: fmt.Sprintf("%s is invalid", ds.name)}
	}
	return sql.Relation{Name: ds.name, Schema: *s}, nil
}

func (c *sqlCatalog) TableFunc(call *syntax.FuncCall, stream bool) (sql.Relation, error) {
	name := strings.ToLower(call.Name.Last().Name)
	switch name {
	case "read_files", "cloud_files":
		return c.l.fileRelation(c.file, call, name, c.metadata)
	case "read_kafka":
		return c.l.kafkaRelation(c.file, call)
	case "read_postgres_cdc":
		return c.l.postgresCDCRelation(c.file, call)
	case "read_nats", "read_amqp":
		return c.l.messageRelation(c.file, call, name)
	case "event_log":
		return c.eventLogRelation(call, stream)
	case "table_changes":
		return c.tableChangesRelation(call)
	}
	return sql.Relation{}, &syntax.Error{Code: domain.CodeUnresolvedRoutine, File: c.file.Path, Pos: call.Pos,
		Message: fmt.Sprintf("%s is not a table-valued function sluice knows; use read_files, read_kafka, read_postgres_cdc, read_nats, read_amqp, event_log, table_changes or range", name)}
}

// eventLogRelation plans event_log() and event_log(TABLE(t)): the
// pipeline's own event log, a row per event. As in Databricks,
// event_log(TABLE(t)) is the log of the pipeline that publishes t, which
// must be this one.
func (c *sqlCatalog) eventLogRelation(call *syntax.FuncCall, stream bool) (sql.Relation, error) {
	fail := func(p syntax.Pos, code domain.Code, format string, args ...any) (sql.Relation, error) {
		return sql.Relation{}, &syntax.Error{Code: code, File: c.file.Path, Pos: p, Message: fmt.Sprintf(format, args...)}
	}
	if stream {
		// each micro-batch's own events would be new events to read
		return fail(call.Pos, domain.CodeNotImplemented, "event_log() is read whole, by a materialized view, not as a stream: the flow's own events would feed it forever")
	}
	switch len(call.Args) {
	case 0:
	case 1:
		arg, ok := call.Args[0].(*syntax.FuncCall)
		var ref *syntax.ColumnRef
		if ok && strings.EqualFold(arg.Name.Last().Name, "table") && len(arg.Args) == 1 {
			ref, ok = arg.Args[0].(*syntax.ColumnRef)
		}
		if !ok || ref == nil {
			return fail(call.Args[0].Position(), domain.CodeInvalidDefinition, "event_log takes nothing (this pipeline's log) or TABLE(name), as in event_log(TABLE(orders))")
		}
		n := &syntax.Name{Pos: ref.Pos, Parts: ref.Parts}
		name, own := c.ns.ownName(n)
		if ds := c.l.datasets[strings.ToLower(name)]; !own || ds == nil {
			return fail(ref.Pos, domain.CodeUnknownDataset, "event_log(TABLE(%s)) reads the log of the pipeline that publishes %s, and this pipeline declares no dataset %s; read this pipeline's log with event_log()", nameText(n), nameText(n), nameText(n))
		}
	default:
		return fail(call.Pos, domain.CodeInvalidDefinition, "event_log takes nothing (this pipeline's log) or TABLE(name)")
	}
	const rel = "event_log()"
	c.l.sources[rel] = processors.EventLog{}
	return sql.Relation{Name: rel, Schema: processors.EventLogSchema}, nil
}

// tableChangesRelation plans table_changes('t'[, since]): the change feed
// of a table of the pipeline, its rows with _change_type, _commit_version
// and _commit_timestamp (what sluice table t --changes prints), from the
// batches committed after event since.
func (c *sqlCatalog) tableChangesRelation(call *syntax.FuncCall) (sql.Relation, error) {
	fail := func(p syntax.Pos, code domain.Code, format string, args ...any) (sql.Relation, error) {
		return sql.Relation{}, &syntax.Error{Code: code, File: c.file.Path, Pos: p, Message: fmt.Sprintf(format, args...)}
	}
	if len(call.Args) < 1 || len(call.Args) > 2 {
		return fail(call.Pos, domain.CodeInvalidDefinition, "table_changes takes a table's name and, optionally, the event seq after which to start: table_changes('customers'[, 120])")
	}
	text, ok := constText(call.Args[0])
	if !ok {
		return fail(call.Args[0].Position(), domain.CodeInvalidDefinition, "table_changes takes the table's name as a string, as in table_changes('customers')")
	}
	var since uint64
	if len(call.Args) == 2 {
		s, ok := constText(call.Args[1])
		n, err := strconv.ParseUint(s, 10, 64)
		if !ok || err != nil {
			return fail(call.Args[1].Position(), domain.CodeInvalidDefinition, "the start of table_changes is an event seq (a whole number), as in table_changes('customers', 120)")
		}
		since = n
	}
	n := &syntax.Name{Pos: call.Args[0].Position()}
	for _, part := range strings.Split(text, ".") {
		n.Parts = append(n.Parts, &syntax.Ident{Pos: n.Pos, Name: part})
	}
	rel, err := c.Table(n, false)
	if err != nil {
		return rel, err
	}
	if ds := c.l.datasets[strings.ToLower(rel.Name)]; ds == nil || ds.kind == syntax.View {
		return fail(n.Pos, domain.CodeUnknownDataset, "table_changes reads a table's change feed, and %s is a view: read the table it reads", text)
	}
	src := processors.TableChanges{Table: rel.Name, Since: since}
	name := fmt.Sprintf("%s (%s:%d)", src, c.file.Path, call.Pos.Line)
	c.l.sources[name] = src
	return sql.Relation{Name: name, Schema: processors.FeedSchema(rel.Schema)}, nil
}

// declareSink declares a CREATE SINK: its format's sink made from its
// options, which name secrets as ${env:NAME} (resolved for the sink, kept
// as written in the definition that events show).
func (l *sqlLoader) declareSink(ds *sqlDataset) {
	st := ds.stmt
	format := strings.ToLower(st.Using.Name)
	written := properties(st.Options)
	resolved := make(map[string]string, len(written))
	for k, v := range written {
		r, err := domain.ResolveSecrets(v)
		if err != nil {
			l.problemAt(ds.file, st.Pos, domain.CodeOf(err), "sink %s, option %s: %s", ds.name, k, errorMessage(err))
			return
		}
		resolved[k] = r
	}
	var sink domain.Sink
	var err error
	switch format {
	case "parquet":
		sink, err = parquetsink.NewSink(l.opts.Dir, resolved)
	case "kafka":
		sink, err = kafkasink.NewSink(l.p.Name, resolved)
	case "postgres", "postgresql", "jdbc":
		sink, err = postgressink.NewSink(l.p.Name, resolved)
	case "nats":
		sink, err = wmsink.NewNATS(l.p.Name, resolved)
	case "amqp", "rabbitmq":
		sink, err = wmsink.NewAMQP(l.p.Name, resolved)
	default:
		l.problemAt(ds.file, st.Using.Pos, domain.CodeNotImplemented, "sink %s is USING %s, which sluice does not write yet; USING parquet writes Parquet files, USING postgres a table, USING kafka a topic, USING nats a JetStream subject, USING amqp a queue, and a Go program can write anywhere with ForeachBatchSink", ds.name, format)
		return
	}
	if err != nil {
		l.problemAt(ds.file, st.Pos, domain.CodeOf(err), "sink %s: %s", ds.name, errorMessage(err))
		return
	}
	var opts []Option
	if c := st.Comment; c != nil {
		opts = append(opts, Comment(c.Value))
	}
	l.p.CreateSink(ds.name, format, sink, written, opts...)
	l.p.declared(ds.name, ds.file, st.Pos)
}

// declare turns the planned datasets and flows into the pipeline's
// definitions.
func (l *sqlLoader) declare() {
	for _, ds := range l.order {
		if ds.failed || ds.kind == syntax.View {
			continue
		}
		if ds.kind == syntax.Sink {
			l.declareSink(ds)
			continue
		}
		var opts []Option
		if c := ds.stmt.Comment; c != nil {
			opts = append(opts, Comment(c.Value))
		}
		if props := properties(ds.stmt.Properties); len(props) > 0 {
			opts = append(opts, Properties(props))
		}
		if ds.declared != nil {
			opts = append(opts, WithSchema(*ds.declared))
		}
		if len(ds.expectations) > 0 {
			// The dataset's checker, compiled once for the columns the
			// query gives, reporting each condition at its file and line.
			checker := expectations.Parsed(ds.name, ds.expectations, ds.expectExprs)
			for _, p := range checker.Problems(*ds.schema) {
				l.problem(ds.file, p.Err)
			}
			for _, e := range ds.expectations {
				opts = append(opts, expectAt(e))
			}
			opts = append(opts, withChecker(checker))
		}
		d := l.p.declare(map[syntax.DatasetKind]string{syntax.StreamingTable: "table", syntax.MaterializedView: "materialized view"}[ds.kind], ds.name, opts)
		typ := domain.StreamingTable
		if ds.kind == syntax.MaterializedView {
			typ = domain.MaterializedView
		}
		l.p.addDataset(d, typ)
		l.p.declared(ds.name, ds.file, ds.stmt.Pos)
	}
	for _, f := range l.flows {
		if f.failed || f.plan == nil || f.target == nil || f.target.failed || f.target.kind == syntax.View {
			continue
		}
		streaming := (f.target.kind == syntax.StreamingTable || f.target.kind == syntax.Sink) && !f.once
		if f.cdc != nil && f.target.kind != syntax.StreamingTable {
			l.problemAt(f.file, f.pos, domain.CodeInvalidFlowTarget, "AUTO CDC flow %s writes into %s, which is not a streaming table; declare it with CREATE OR REFRESH STREAMING TABLE %s", f.name, f.target.name, f.target.name)
			f.failed = true
			continue
		}
		q, err := l.query(f, streaming)
		if err != nil {
			l.problem(f.file, err)
			f.failed = true
			continue
		}
		if f.cdc != nil {
			if len(f.target.computed) > 0 {
				l.problemAt(f.target.file, f.target.stmt.Pos, domain.CodeNotImplemented, "generated and DEFAULT columns of the target of an AUTO CDC flow do not run yet; compute them in the flow's source")
				f.failed = true
				continue
			}
			q = q.with(f.cdc.transform())
		} else if len(f.target.computed) > 0 {
			t, err := computeColumns(f.target.name, f.target.computed, f.plan.Schema, f.conf)
			if err != nil {
				l.problem(f.target.file, err)
				f.failed = true
				continue
			}
			q = q.with(t)
		}
		fl := domain.Flow{Name: f.name, Target: f.target.name, Once: f.once, DependsOn: f.dependsOn, Comment: f.comment}
		if f.cdc != nil {
			fl.Type, fl.Changes = domain.FlowChange, &f.cdc.spec
		}
		for _, in := range f.plan.Inputs {
			fl.Warnings = append(fl.Warnings, l.sourceNotes[in.Name]...)
		}
		if len(f.conf) > 0 {
			fl.Conf = f.conf
		}
		l.p.addFlow(fl, q)
		if f.name != f.target.name {
			l.p.declared(f.name, f.file, f.pos)
		}
	}
}

// declared records where a dataset or flow was declared.
func (p *Pipeline) declared(name string, f *sqlFile, pos syntax.Pos) {
	if p.declaredAt == nil {
		p.declaredAt = map[string]place{}
	}
	p.declaredAt[name] = place{File: f.Path, Line: pos.Line, Column: pos.Col}
}

func properties(p *syntax.Properties) map[string]string {
	if p == nil {
		return nil
	}
	out := map[string]string{}
	for _, it := range p.Items {
		v := ""
		if it.Value != nil {
			v = syntax.Format(it.Value)
			if lit, ok := it.Value.(*syntax.Literal); ok && lit.Kind == syntax.StringLit {
				v = lit.Value
			}
		}
		out[it.Key] = v
	}
	return out
}

// query builds the engine's query of a planned flow: a streaming flow reads
// its one stream and runs the plan on each micro-batch, reading any other
// input whole beside it; a batch flow reads every input whole.
func (l *sqlLoader) query(f *sqlFlow, streaming bool) (Query, error) {
	p := f.plan
	main := -1
	for i, in := range p.Inputs {
		if in.Stream {
			if main >= 0 {
				return Query{}, &syntax.Error{Code: domain.CodeNotImplemented, File: f.file.Path, Pos: in.Pos,
					Message: "a query that reads two streams (a stream-stream join or union) does not run yet; for a union, write one flow per stream into the table (CREATE FLOW name AS INSERT INTO table BY NAME SELECT ... FROM STREAM(source))"}
			}
			main = i
		}
	}
	if !streaming && main >= 0 {
		what, code := "a materialized view", domain.CodeInvalidDefinition
		if f.once {
			what, code = "a once flow", domain.CodeOnceOverStream
		}
		return Query{}, &syntax.Error{Code: code, File: f.file.Path, Pos: p.Inputs[main].Pos,
			Message: fmt.Sprintf("%s reads its inputs whole, not as streams: remove STREAM(...) around %s (in %s or a view it reads)", what, p.Inputs[main].Name, f.name)}
	}
	if streaming && main >= 0 && !p.RowWiseIn(main) {
		return Query{}, &syntax.Error{Code: domain.CodeNotImplemented, File: f.file.Path, Pos: f.query.Pos,
			Message: "a streaming query that aggregates, sorts, limits, deduplicates or windows its stream, joins it with itself or reads it in a subquery does not run yet; make the table a materialized view, or keep the streaming query to projections, filters and joins with tables (to drop duplicates of a stream, write FROM STREAM(s) WATERMARK col DELAY OF INTERVAL ... DEDUPLICATE ON (cols))"}
	}
	if main < 0 {
		main = 0
	}
	var inputs []domain.Input
	for _, in := range p.Inputs {
		di := l.input(in)
		w, err := l.watermark(f, in)
		if err != nil {
			return Query{}, err
		}
		di.Watermark = w
		inputs = append(inputs, di)
	}
	if len(inputs) == 0 {
		// a query of constants (VALUES, range, SELECT 1) reads one empty row
		inputs = []domain.Input{{Source: constantSource{}, Streaming: streaming}}
		main = 0
	}
	order := append([]int{main}, others(len(inputs), main)...)
	q := domain.Query{Input: inputs[main], Version: queryVersion(f)}
	run := &planRun{plan: p, order: order, flow: f}
	if len(p.Inputs) <= 1 {
		q.Transforms = []domain.Transform{run}
	} else {
		for _, i := range order[1:] {
			q.Side = append(q.Side, inputs[i])
		}
		q.Combine = run
	}
	return Query{q: q}, nil
}

// queryVersion is a fingerprint of what an SQL flow computes: its query and
// the queries of the temporary views planned into it, in canonical form (so
// that spacing, comments and the case of keywords change nothing), and its
// SET configuration.
func queryVersion(f *sqlFlow) string {
	h := sha256.New()
	io.WriteString(h, syntax.Format(f.query))
	for _, v := range f.views {
		fmt.Fprintf(h, "\x00view %s\x00%s", v.name, syntax.Format(v.stmt))
	}
	keys := make([]string, 0, len(f.conf))
	for k := range f.conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "\x00set %s=%s", k, f.conf[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func others(n, skip int) []int {
	var out []int
	for i := 0; i < n; i++ {
		if i != skip {
			out = append(out, i)
		}
	}
	return out
}

func (l *sqlLoader) input(in sql.Input) domain.Input {
	if src, ok := l.sources[in.Name]; ok {
		return domain.Input{Source: src, Streaming: in.Stream}
	}
	return domain.Input{Dataset: in.Name, Streaming: in.Stream}
}

// watermark compiles the WATERMARK of a streaming read, nil without one.
func (l *sqlLoader) watermark(f *sqlFlow, in sql.Input) (*domain.Watermark, error) {
	w := in.Watermark
	if w == nil {
		return nil, nil
	}
	fail := func(code domain.Code, pos syntax.Pos, format string, args ...any) error {
		return &syntax.Error{Code: code, File: f.file.Path, Pos: pos, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case !in.Stream:
		return nil, fail(domain.CodeInvalidDefinition, w.Pos, "WATERMARK bounds the lateness of a stream: write it after STREAM(%s)", in.Name)
	case in.View != nil:
		return nil, fail(domain.CodeNotImplemented, w.Pos, "a WATERMARK on a view does not run yet: put it on the read of the table the view reads")
	}
	sess, err := sql.SessionFromConf(f.conf)
	if err != nil {
		return nil, err
	}
	col, err := sql.CompileSession(w.Column, in.Schema, sess)
	if err != nil {
		return nil, err
	}
	if k := col.Type().Kind; k != domain.KindTimestamp {
		return nil, fail(domain.CodeDatatypeMismatch, w.Pos, "the WATERMARK column %s is %s; a watermark is on a TIMESTAMP (CAST it in the source)", syntax.Format(w.Column), col.Type())
	}
	delay, err := sql.CompileSession(w.Delay, domain.Schema{}, sess)
	if err != nil {
		return nil, err
	}
	v, err := delay.Eval(domain.NoColumns(1))
	if err != nil {
		return nil, err
	}
	if v.Kind != domain.KindDayTimeInterval || v.IsNull(0) || v.Ints[0] < 0 {
		return nil, fail(domain.CodeDatatypeMismatch, w.Pos, "DELAY OF is %s; it is an interval of days to seconds, such as INTERVAL 5 MINUTES", syntax.Format(w.Delay))
	}
	out := &domain.Watermark{Column: syntax.Format(w.Column), EventTime: col, Delay: time.Duration(v.Ints[0]) * time.Microsecond}
	for _, id := range w.Deduplicate {
		if in.Schema.Index(id.Name) < 0 {
			return nil, fail(domain.CodeUnresolvedColumn, id.Pos, "DEDUPLICATE ON names %s, which %s does not have (it has %s)", id.Name, in.Name, strings.Join(in.Schema.Names(), ", "))
		}
		out.DedupOn = append(out.DedupOn, id.Name)
	}
	return out, nil
}

// planRun runs a plan over a micro-batch (as a transform) or over the
// batches of all its inputs (as a combiner); order maps the query's inputs
// (main first) to the plan's. A row-level error (a cast, an overflow, a
// division by zero) is placed in the file of the flow's query, or of the
// view it comes from.
type planRun struct {
	plan  *sql.Plan
	order []int
	flow  *sqlFlow
}

func (r *planRun) Apply(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
	if len(r.plan.Inputs) == 0 {
		out, err := r.plan.Run(nil) // the batch is the constant source's empty row
		return out, r.locate(err)
	}
	out, err := r.plan.Run([]*domain.Batch{b})
	return out, r.locate(err)
}

// KeepsSelections: a plan's operators never change a batch once built.
func (r *planRun) KeepsSelections() {}

func (r *planRun) Combine(_ context.Context, batches []*domain.Batch) (*domain.Batch, error) {
	in := make([]*domain.Batch, len(r.plan.Inputs))
	for k, i := range r.order {
		in[i] = batches[k]
	}
	out, err := r.plan.Run(in)
	return out, r.locate(err)
}

// locate places an error of an expression in its file, with the file's
// name and line, rather than the compiler's placeholder name. Positions name
// their file: the error is in the view's file when it comes from a view the
// flow reads, else in the flow's.
func (r *planRun) locate(err error) error {
	var se *syntax.Error
	if err == nil || r.flow == nil || !errors.As(err, &se) {
		return err
	}
	file := r.flow.file
	for _, v := range r.flow.views {
		if v.file != nil && v.file.Path == se.Pos.File {
			file = v.file
			break
		}
	}
	return syntax.Locate(se, file.Path, file.Text)
}

// constantSource is the input of a query that reads no table: one range,
// read once, of one row without columns.
type constantSource struct{}

func (constantSource) String() string { return "constants" }
func (constantSource) Plan(_ context.Context, start domain.Offset, _ domain.ReadLimit) (domain.Offset, bool, error) {
	if start != nil {
		return nil, false, nil
	}
	return domain.Offset(`1`), true, nil
}
func (constantSource) Read(context.Context, domain.Offset, domain.Offset) (*domain.Batch, error) {
	return domain.NoColumns(1), nil
}

// relPath makes a read_files path absolute under the pipeline directory.
func (l *sqlLoader) relPath(p string) string {
	if filepath.IsAbs(p) || l.opts.Dir == "" {
		return p
	}
	return filepath.Join(l.opts.Dir, p)
}

// webhookHook makes the hook of an event_hooks entry.
func webhookHook(h EventHook) (processors.Hook, error) {
	match, types, err := processors.HookMatcher(h.On, h.MinFailureRate)
	if err != nil {
		return processors.Hook{}, err
	}
	w, err := webhook.New(h.URL, h.Headers)
	if err != nil {
		return processors.Hook{}, err
	}
	return processors.Hook{Name: h.Name, Match: match, Types: types, Deliver: w.Deliver, Retries: h.Retries}, nil
}

// TriggerIntervalKey is the configuration key of how often continuous
// flows poll their external sources, as Databricks names it.
const TriggerIntervalKey = "pipelines.trigger.interval"

var intervalUnits = map[string]time.Duration{
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond, "ms": time.Millisecond,
	"second": time.Second, "seconds": time.Second, "s": time.Second,
	"minute": time.Minute, "minutes": time.Minute, "min": time.Minute,
	"hour": time.Hour, "hours": time.Hour, "h": time.Hour,
}

// ParseTriggerInterval reads an interval as Databricks writes
// pipelines.trigger.interval: a number and a unit ("10 seconds", "1 hour",
// "100 milliseconds").
func ParseTriggerInterval(s string) (time.Duration, error) {
	fields := strings.Fields(strings.ToLower(s))
	if len(fields) != 2 {
		return 0, fmt.Errorf("not a number and a unit")
	}
	n, err := strconv.ParseFloat(fields[0], 64)
	unit, ok := intervalUnits[fields[1]]
	if err != nil || !ok || !(n > 0) {
		return 0, fmt.Errorf("not a positive number and a unit of milliseconds, seconds, minutes or hours")
	}
	f := n * float64(unit)
	if f >= math.MaxInt64 {
		return 0, fmt.Errorf("longer than sluice counts")
	}
	d := time.Duration(f)
	if d < time.Millisecond {
		return 0, fmt.Errorf("shorter than a millisecond")
	}
	return d, nil
}

// LoadSQLProject declares the pipeline of a project: its settings from
// pipeline.yaml and its datasets and flows from the .sql files it lists. A
// Go program can add its own flows and sinks to the result before running
// it (see the cli package).
func LoadSQLProject(proj *Project) (*Pipeline, domain.Problems) {
	p := New(proj.Name)
	p.Continuous, p.Development, p.MaxConcurrentFlows = proj.Continuous, proj.Development, proj.MaxConcurrentFlows
	p.StateMemory = proj.StateMemoryMiB << 20
	var problems domain.Problems
	if v, ok := proj.Configuration[TriggerIntervalKey]; ok {
		d, err := ParseTriggerInterval(v)
		if err != nil {
			problems = append(problems, domain.Errorf(domain.CodeInvalidOptions, "%s: %s %q: %v", proj.File, TriggerIntervalKey, v, err).
				WithHint("write it as a number and a unit: '10 milliseconds', '1 second', '5 minutes'"))
		}
		p.TriggerInterval = d
	}
	for _, h := range proj.EventHooks {
		hook, err := webhookHook(h)
		if err != nil {
			problems = append(problems, domain.Errorf(domain.CodeOf(err), "%s: event hook %q: %s", proj.File, h.Name, errorMessage(err)))
			continue
		}
		p.OnEvent(hook)
	}
	var files []SQLFile
	for _, path := range proj.Libraries {
		text, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, domain.Wrap(domain.CodeLibraryNotFound, err, "reading a library of "+proj.File).At(path, 0, 0))
			continue
		}
		shown := path
		if rel, err := filepath.Rel(proj.Dir, path); err == nil {
			shown = rel
		}
		files = append(files, SQLFile{Path: shown, Text: string(text)})
	}
	problems = append(problems, p.LoadSQL(files, SQLOptions{
		Configuration: proj.Configuration, Catalog: proj.Catalog, Schema: proj.Schema, Dir: proj.Dir, Storage: proj.Storage,
	})...)
	return p, problems
}

// computeColumns is the transform that adds a table's generated and default
// columns to a flow's rows, compiled against the flow's output.
func computeColumns(table string, cols []computedColumn, in domain.Schema, conf map[string]string) (domain.Transform, error) {
	sess, err := sql.SessionFromConf(conf)
	if err != nil {
		return nil, err
	}
	type step struct {
		name string
		c    *sql.Compiled
	}
	var steps []step
	for _, col := range cols {
		if !col.always && in.Index(col.name) >= 0 {
			continue
		}
		c, err := sql.CompileSession(col.expr, in, sess)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step{name: col.name, c: c})
	}
	return domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		now := time.Now() // current_timestamp is the time of this micro-batch
		fields := append([]domain.Field{}, b.Schema.Fields...)
		cols := append([]*domain.Column{}, b.Columns...)
		for _, s := range steps {
			v, err := s.c.EvalAt(b, now)
			if err != nil {
				return nil, fmt.Errorf("column %s of %s: %w", s.name, table, err)
			}
			f := domain.Field{Name: s.name, Type: s.c.Type(), Nullable: true}
			if i := b.Schema.Index(s.name); i >= 0 {
				fields[i], cols[i] = f, v
			} else {
				fields, cols = append(fields, f), append(cols, v)
			}
		}
		return domain.BatchOf(domain.NewSchema(fields...), cols)
	}), nil
}

// withoutComputed is a flow's schema less the columns the table computes
// itself (a GENERATED column the flow also gives is replaced).
func withoutComputed(s domain.Schema, computed []computedColumn) domain.Schema {
	var fields []domain.Field
	for _, f := range s.Fields {
		keep := true
		for _, c := range computed {
			keep = keep && !(c.always && strings.EqualFold(c.name, f.Name))
		}
		if keep {
			fields = append(fields, f)
		}
	}
	return domain.NewSchema(fields...)
}

// errorMessage is an error's message without its code.
func errorMessage(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Message
	}
	return err.Error()
}
