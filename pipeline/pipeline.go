// Package pipeline declares pipelines: the datasets (streaming tables,
// materialized views, temporary views, sinks) and the flows that fill them. Its
// Go API mirrors pyspark.pipelines:
//
//	p := pipeline.New("events")
//	p.CreateStreamingTable("events")
//	p.AppendFlow("events", pipeline.BatchFrom(history), pipeline.Name("backfill"), pipeline.Once())
//	p.AppendFlow("events", pipeline.StreamFrom(live), pipeline.Name("live"), pipeline.DependsOn("backfill"))
//
// Declaring records; nothing is checked until Resolve, which reports every
// problem of the pipeline at once, each with a code, the names involved and a
// hint. Run resolves and runs an update.
package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/processors"
)

// Pipeline is a set of declared datasets and flows, plus the settings that
// apply to every update.
type Pipeline struct {
	// Name identifies the pipeline in its events.
	Name string
	// Continuous keeps flows running after they drain; triggered otherwise.
	Continuous bool
	// Development turns off retries: a failing flow fails the update at once.
	Development bool
	// MaxConcurrentFlows bounds the micro-batches running at the same time;
	// 0 means the default (4).
	MaxConcurrentFlows int
	// StateMemory bounds, in bytes, the keys of each AUTO CDC table's state
	// kept in memory (see processors.Options.StateMemory); 0 means the
	// default.
	StateMemory int64
	// TriggerInterval is how often a continuous flow over an external source
	// asks it for new data (pipelines.trigger.interval); 0 means the
	// default (processors.Options.PollInterval).
	TriggerInterval time.Duration
	// HookWait is how long Run waits, once the update ended, for the hooks
	// to be told of its events (30 s when 0); what is left is told by the
	// next Run.
	HookWait time.Duration

	hooks    []processors.Hook
	datasets []*domain.Dataset
	flows    []*domain.Flow
	problems domain.Problems // found while declaring, reported by Resolve
	// declaredAt places the datasets and flows declared in files (by
	// LoadSQL), for the problems Resolve finds about them
	declaredAt map[string]place
	// loadFailed says a loader reported problems: what it declared is not
	// the whole pipeline, and Resolve refuses to make a graph of it.
	// incomplete names the datasets that loader could not declare, or whose
	// every flow failed: Resolve does not report them missing or unfilled.
	loadFailed bool
	incomplete map[string]bool
}

// place is a position in a definition file.
type place struct {
	File         string
	Line, Column int
}

// New starts a pipeline declaration.
func New(name string) *Pipeline { return &Pipeline{Name: name} }

// Option sets a property of a dataset or a flow. Each option says what it
// applies to; given to anything else it is reported by Resolve.
type Option func(*decl)

// decl gathers the options given to one declaration.
type decl struct {
	what  string // "table", "flow", "view", "sink": for messages
	name  string
	table domain.Dataset
	flow  domain.Flow
	bad   []string // options that do not apply to what
}

func (d *decl) only(option string, kinds ...string) bool {
	for _, k := range kinds {
		if d.what == k {
			return true
		}
	}
	d.bad = append(d.bad, option)
	return false
}

// Name names a flow. A flow without a name takes its target's name, as a
// table's default flow does; two unnamed flows into one table then clash.
func Name(name string) Option {
	return func(d *decl) {
		if d.only("Name", "flow") {
			d.flow.Name = name
		}
	}
}

// Comment describes a dataset or a flow.
func Comment(text string) Option {
	return func(d *decl) {
		d.table.Comment = text
		d.flow.Comment = text
	}
}

// Quarantine sends the rows the table's drop rules fail to its quarantine
// table, <table>_quarantine (the property pipelines.quarantine = 'true'),
// from which Pipeline.RetryQuarantine lets them in once the rules or the
// data are fixed.
func Quarantine() Option { return Properties(map[string]string{domain.PropQuarantine: "true"}) }

// Properties sets table properties, such as pipelines.reset.allowed.
func Properties(props map[string]string) Option {
	return func(d *decl) {
		if !d.only("Properties", "table", "materialized view") {
			return
		}
		if d.table.Properties == nil {
			d.table.Properties = map[string]string{}
		}
		for k, v := range props {
			d.table.Properties[k] = v
		}
	}
}

// WithSchema declares a table's schema; without it the schema is inferred
// from the first batch.
func WithSchema(s domain.Schema) Option {
	return func(d *decl) {
		if d.only("WithSchema", "table", "materialized view") {
			d.table.Schema = &s
		}
	}
}

// Expect checks condition, a SQL boolean expression over the dataset's
// columns, on every row written to it, and counts the rows that fail it in
// the flow's data_quality metrics (@dp.expect). A NULL result passes, as a
// SQL CHECK constraint's does: write `x IS NOT NULL AND x > 0` to fail
// NULLs too.
func Expect(name, condition string) Option { return expect(name, condition, domain.ExpectWarn) }

// ExpectOrDrop is Expect that also drops the rows that fail
// (@dp.expect_or_drop).
func ExpectOrDrop(name, condition string) Option { return expect(name, condition, domain.ExpectDrop) }

// ExpectOrFail is Expect that fails the flow on a row that fails, before
// anything of its micro-batch is written (@dp.expect_or_fail).
func ExpectOrFail(name, condition string) Option { return expect(name, condition, domain.ExpectFail) }

// ExpectAll is Expect for each name and condition of rules
// (@dp.expect_all); each is counted on its own. The rules are checked in
// the order of their names.
func ExpectAll(rules map[string]string) Option { return expectAll(rules, domain.ExpectWarn) }

// ExpectAllOrDrop is ExpectOrDrop for each rule (@dp.expect_all_or_drop): a
// row that fails any of them is dropped.
func ExpectAllOrDrop(rules map[string]string) Option { return expectAll(rules, domain.ExpectDrop) }

// ExpectAllOrFail is ExpectOrFail for each rule (@dp.expect_all_or_fail).
func ExpectAllOrFail(rules map[string]string) Option { return expectAll(rules, domain.ExpectFail) }

func expectAll(rules map[string]string, action domain.ExpectAction) Option {
	return func(d *decl) {
		for _, name := range slices.Sorted(maps.Keys(rules)) {
			expect(name, rules[name], action)(d)
		}
	}
}

func expect(name, condition string, action domain.ExpectAction) Option {
	return expectAt(domain.Expectation{Name: name, Condition: condition, Action: action})
}

// expectAt adds an expectation as declared, with its place in a file.
func expectAt(e domain.Expectation) Option {
	return func(d *decl) {
		if d.only("Expect", "table", "materialized view") {
			d.table.Expectations = append(d.table.Expectations, e)
		}
	}
}

// withChecker sets the checker of a dataset's expectations, built by the
// loader that parsed them.
func withChecker(c domain.Checker) Option {
	return func(d *decl) {
		if d.only("Expect", "table", "materialized view") {
			d.table.Checker = c
		}
	}
}

// OnEvent subscribes a hook to the pipeline's events: each Run tells it,
// beside the update, of the events it matches (retried with backoff, in
// log order, never holding a flow back), and records each delivery in a
// hook_progress event.
func (p *Pipeline) OnEvent(h processors.Hook) { p.hooks = append(p.hooks, h) }

// Once makes a flow run one time, reading its source as a batch (a backfill).
// Its completion is durable: later updates skip it until a full refresh.
func Once() Option {
	return func(d *decl) {
		if d.only("Once", "flow") {
			d.flow.Once = true
		}
	}
}

// DependsOn makes a flow start only after every named flow finished
// successfully, whether or not it reads what they write.
func DependsOn(flows ...string) Option {
	return func(d *decl) {
		if d.only("DependsOn", "flow") {
			d.flow.DependsOn = append(d.flow.DependsOn, flows...)
		}
	}
}

// ImportCheckpoint starts a flow, on its first update only, from the
// committed position of flow in another sluice pipeline's storage directory.
// Later updates and full refreshes do not import it again; to import another,
// declare the flow under another name.
func ImportCheckpoint(storage, flow string) Option {
	return func(d *decl) {
		if d.only("ImportCheckpoint", "flow") {
			d.flow.ImportCheckpoint = &domain.CheckpointRef{Storage: storage, Flow: flow}
		}
	}
}

// Conf sets a flow configuration value (spark_conf in pyspark).
func Conf(key, value string) Option {
	return func(d *decl) {
		if !d.only("Conf", "flow") {
			return
		}
		if d.flow.Conf == nil {
			d.flow.Conf = map[string]string{}
		}
		d.flow.Conf[key] = value
	}
}

func (p *Pipeline) declare(what, name string, opts []Option) *decl {
	d := &decl{what: what, name: name}
	for _, o := range opts {
		o(d)
	}
	for _, b := range d.bad {
		p.problems = append(p.problems, domain.Errorf(domain.CodeInvalidDefinition,
			"option %s does not apply to %s %q", b, what, name).WithNames(name))
	}
	return d
}

func (p *Pipeline) addDataset(d *decl, typ domain.DatasetType) *domain.Dataset {
	ds := d.table
	ds.Name = d.name
	ds.Type = typ
	p.datasets = append(p.datasets, &ds)
	return &ds
}

func (p *Pipeline) addFlow(f domain.Flow, q Query) {
	qq := q.q
	f.Query = &qq
	p.flows = append(p.flows, &f)
}

// CreateStreamingTable declares a streaming table without a query; append
// flows fill it (dp.create_streaming_table).
func (p *Pipeline) CreateStreamingTable(name string, opts ...Option) {
	p.addDataset(p.declare("table", name, opts), domain.StreamingTable)
}

// StreamingTable declares a streaming table and its default flow, named as the
// table, that fills it from query (@dp.table over a streaming read).
func (p *Pipeline) StreamingTable(name string, query Query, opts ...Option) {
	d := p.declare("table", name, opts)
	p.addDataset(d, domain.StreamingTable)
	p.addFlow(domain.Flow{Name: name, Target: name, Comment: d.table.Comment}, query)
}

// MaterializedView declares a materialized view: the result of query over
// batch reads, recomputed at each update (@dp.materialized_view).
func (p *Pipeline) MaterializedView(name string, query Query, opts ...Option) {
	d := p.declare("materialized view", name, opts)
	p.addDataset(d, domain.MaterializedView)
	p.addFlow(domain.Flow{Name: name, Target: name, Comment: d.table.Comment}, query)
}

// TemporaryView declares a view: a named query, not stored, inlined into the
// flows that read it (@dp.temporary_view).
func (p *Pipeline) TemporaryView(name string, query Query, opts ...Option) {
	d := p.declare("view", name, opts)
	p.addDataset(d, domain.TemporaryView)
	p.addFlow(domain.Flow{Name: name, Target: name, Comment: d.table.Comment}, query)
}

// AppendFlow declares a flow that appends the rows of query to target, a
// streaming table or a sink (@dp.append_flow).
func (p *Pipeline) AppendFlow(target string, query Query, opts ...Option) {
	d := p.declare("flow", "", opts)
	f := d.flow
	f.Target = target
	if f.Name == "" {
		f.Name = target
	}
	p.addFlow(f, query)
}

// CreateSink declares an external sink that append flows write to
// (dp.create_sink). Delivery is at least once, with batch ids for idempotence.
func (p *Pipeline) CreateSink(name, format string, sink domain.Sink, options map[string]string, opts ...Option) {
	ds := p.addDataset(p.declare("sink", name, opts), domain.SinkDataset)
	ds.Sink = sink
	ds.SinkFormat = format
	ds.SinkOptions = options
}

// BatchFunc receives each micro-batch of a foreachBatch sink with its batch
// id. After a crash a batch may come again with the same id and the same
// rows: write idempotently, keyed by the batch id. A flow's batch ids into a
// sink never repeat with other rows, not even after a full refresh or a
// checkpoint reset (the reread comes under new ids). An error fails the flow
// and nothing is acknowledged; the batch comes again on retry.
type BatchFunc func(ctx context.Context, rows *domain.Batch, batchID int64) error

// ForeachBatchSink declares a sink that hands each micro-batch to fn
// (@dp.foreach_batch_sink). Flows into it are streaming, never once.
func (p *Pipeline) ForeachBatchSink(name string, fn BatchFunc) {
	p.CreateSink(name, "foreach_batch", foreachBatch(fn), nil)
}

type foreachBatch BatchFunc

func (f foreachBatch) Deliver(ctx context.Context, b domain.SinkBatch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = domain.Errorf(domain.CodeUserFunctionFailed, "foreachBatch sink %q panicked on batch %d: %v", b.Sink, b.BatchID, r)
		}
	}()
	if err := f(ctx, b.Rows, b.BatchID); err != nil {
		return domain.Wrap(domain.CodeUserFunctionFailed, err, fmt.Sprintf("foreachBatch sink %q, batch %d", b.Sink, b.BatchID)).AsRetriable()
	}
	return nil
}
