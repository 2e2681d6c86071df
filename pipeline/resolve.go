package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/expectations"
	"github.com/sluicehq/sluice/internal/suggest"
	"github.com/sluicehq/sluice/processors"
)

// AllProblems returns the problems a loader reported for p, followed by
// those resolving what it did declare finds (names, stream and batch reads
// into tables, depends_on, expectations), so that one run reports every
// problem. p is the pipeline as the loader returned it, nil when it
// returned none.
func AllProblems(p *Pipeline, loaded domain.Problems) domain.Problems {
	if p == nil || len(loaded) == 0 {
		return loaded
	}
	out := append(domain.Problems(nil), loaded...)
	for _, e := range p.Validate() {
		if e.Code != domain.CodePipelineIncomplete { // what loading said
			out = append(out, e)
		}
	}
	return out
}

// Resolve checks the pipeline and builds its graph. It reports every problem
// at once, each a *domain.Error with its code, the names involved and a hint;
// the graph is nil when there is any.
func (p *Pipeline) Resolve() (*domain.Graph, domain.Problems) {
	r := resolver{p: p, problems: append(domain.Problems(nil), p.problems...)}
	g, problems := r.resolve()
	for _, e := range problems {
		p.place(e)
	}
	return g, problems
}

// place gives a problem about a dataset or flow declared in a file (by the
// SQL loader) the place of that declaration, when it has none.
func (p *Pipeline) place(e *domain.Error) {
	if e.File != "" || len(e.Names) == 0 {
		return
	}
	if at, ok := p.declaredAt[e.Names[0]]; ok {
		e.At(at.File, at.Line, at.Column)
		e.Message = fmt.Sprintf("%s:%d:%d: %s", at.File, at.Line, at.Column, e.Message)
	}
}

type resolver struct {
	p        *Pipeline
	problems domain.Problems
	datasets map[string]*domain.Dataset
	flows    map[string]*domain.Flow
}

// add records a problem, unless it says that a dataset a loader failed to
// declare (or to fill) is missing or unfilled: that failure was reported,
// and this follows from it.
func (r *resolver) add(e *domain.Error) {
	if (e.Code == domain.CodeUnknownDataset || e.Code == domain.CodeDatasetWithoutFlow) && len(e.Names) > 0 && r.p.incomplete[e.Names[0]] {
		return
	}
	r.problems = append(r.problems, e)
}

func (r *resolver) resolve() (*domain.Graph, domain.Problems) {
	p := r.p
	if p.loadFailed {
		// Its loader's problems say what is missing; this one keeps a
		// caller that did not look at them from running the rest.
		r.problems = append(r.problems, domain.Errorf(domain.CodePipelineIncomplete, "pipeline %q did not load whole", p.Name))
	}
	if len(p.datasets) == 0 && len(p.flows) == 0 {
		if !p.loadFailed { // else what it declares failed to load, and said why
			r.add(domain.Errorf(domain.CodeEmptyPipeline, "pipeline %q declares no datasets and no flows", p.Name))
		}
		return nil, r.problems
	}
	r.collectNames()
	r.checkTargets()
	r.checkChangeTargets()
	inputs := r.resolveInputs()
	r.checkDependsOn()
	r.addQuarantines()
	r.checkDatasetsHaveFlows()
	r.checkExpectations()
	preds, dependsOn := r.edges(inputs)
	order := r.order(preds)
	if len(r.problems) > 0 {
		return nil, r.problems
	}
	r.inlineViews()
	g := &domain.Graph{
		Name:       p.Name,
		Continuous: p.Continuous,
		Datasets:   r.datasets,
		Flows:      r.flows,
		Order:      order,
		Preds:      preds,
		DependsOn:  dependsOn,
	}
	return g, nil
}

func validName(name string) bool {
	if strings.TrimSpace(name) == "" {
		return false
	}
	for _, c := range name {
		if unicode.IsControl(c) || c == 0 {
			return false
		}
	}
	return true
}

// collectNames indexes datasets and flows, reporting invalid and duplicate
// names. The first declaration of a name wins; later ones are reported.
func (r *resolver) collectNames() {
	r.datasets = map[string]*domain.Dataset{}
	r.flows = map[string]*domain.Flow{}
	dupDatasets := map[string]bool{}
	for _, d := range r.p.datasets {
		if !validName(d.Name) {
			r.add(domain.Errorf(domain.CodeInvalidName, "%s name %q is not a valid identifier", strings.ToLower(string(d.Type)), d.Name).WithNames(d.Name))
			continue
		}
		if _, dup := r.datasets[d.Name]; dup {
			r.add(domain.Errorf(domain.CodeDuplicateIdentifiers, "dataset %q is declared more than once", d.Name).WithNames(d.Name))
			dupDatasets[d.Name] = true
			continue
		}
		dc := *d // the graph gets copies: resolving never changes the declarations
		r.datasets[d.Name] = &dc
	}
	for _, f := range r.p.flows {
		if !validName(f.Name) {
			r.add(domain.Errorf(domain.CodeInvalidName, "flow name %q (into %q) is not a valid identifier", f.Name, f.Target).WithNames(f.Name))
			continue
		}
		if prev, dup := r.flows[f.Name]; dup {
			if f.Name == f.Target && prev.Name == prev.Target && dupDatasets[f.Name] {
				continue // the flows of a dataset declared twice: said above
			}
			e := domain.Errorf(domain.CodeDuplicateIdentifiers, "flow %q is declared more than once (into %q and into %q)", f.Name, prev.Target, f.Target).WithNames(f.Name)
			if f.Name == f.Target || prev.Name == prev.Target {
				e.WithHint("give each flow into a table its own name with pipeline.Name; an unnamed flow takes its target's name")
			}
			r.add(e)
			continue
		}
		fc := *f
		f = &fc
		r.flows[f.Name] = f
		if ds, ok := r.datasets[f.Name]; ok && f.Target != f.Name {
			r.add(domain.Errorf(domain.CodeFlowNameIsTableName, "flow %q into %q has the name of %s %q", f.Name, f.Target, strings.ToLower(string(ds.Type)), ds.Name).WithNames(f.Name, ds.Name))
		}
		if f.Query == nil {
			r.add(domain.Errorf(domain.CodeInvalidDefinition, "flow %q has no query", f.Name).WithNames(f.Name))
		}
		if ic := f.ImportCheckpoint; ic != nil && (ic.Storage == "" || ic.Flow == "") {
			r.add(domain.Errorf(domain.CodeImportCheckpointInvalid, "flow %q imports a checkpoint without naming the storage and the flow", f.Name).WithNames(f.Name))
		}
	}
}

func (r *resolver) unknownDataset(what, name string) *domain.Error {
	e := domain.Errorf(domain.CodeUnknownDataset, "%s %q, which the pipeline does not declare", what, name).WithNames(name)
	if s := suggest.Closest(name, slices.Sorted(maps.Keys(r.datasets))); s != "" {
		e.WithHint(fmt.Sprintf("did you mean %q?", s))
	}
	return e
}

// checkTargets sets each flow's type from its target and checks that the
// target can take it.
func (r *resolver) checkTargets() {
	for _, f := range r.sortedFlows() {
		ds, ok := r.datasets[f.Target]
		if !ok {
			r.add(r.unknownDataset(fmt.Sprintf("flow %q writes to", f.Name), f.Target))
			continue
		}
		if f.Changes != nil && ds.Type != domain.StreamingTable {
			r.add(domain.Errorf(domain.CodeInvalidFlowTarget, "AUTO CDC flow %q writes to %s %q; AUTO CDC flows write streaming tables", f.Name, strings.ToLower(strings.ReplaceAll(string(ds.Type), "_", " ")), ds.Name).WithNames(f.Name, ds.Name))
			continue
		}
		switch ds.Type {
		case domain.StreamingTable:
			switch {
			case f.Changes == nil:
				f.Type = domain.FlowAppend
			case f.Changes.Snapshot:
				f.Type = domain.FlowSnapshotChange
			default:
				f.Type = domain.FlowChange
			}
		case domain.SinkDataset:
			f.Type = domain.FlowSink
			if f.Once {
				r.add(domain.Errorf(domain.CodeForeachBatchOnce, "flow %q into sink %q is declared once", f.Name, ds.Name).WithNames(f.Name, ds.Name))
			}
		case domain.MaterializedView, domain.TemporaryView:
			if f.Name != ds.Name {
				r.add(domain.Errorf(domain.CodeInvalidFlowTarget, "flow %q writes to %s %q; only its own query fills it", f.Name, strings.ToLower(string(ds.Type)), ds.Name).WithNames(f.Name, ds.Name))
				continue
			}
			f.Type = domain.FlowMaterializedView
			if ds.Type == domain.TemporaryView {
				f.Type = domain.FlowView
			}
		}
	}
}

// checkChangeTargets checks the tables AUTO CDC flows write: every flow
// into one applies changes by the same keys, into the same SCD type, and
// none reads it as a stream (its rows are updated and deleted, not
// appended).
func (r *resolver) checkChangeTargets() {
	first := map[string]*domain.Flow{}
	for _, f := range r.sortedFlows() {
		if f.Changes != nil {
			if first[f.Target] == nil {
				first[f.Target] = f
			}
		}
	}
	for _, f := range r.sortedFlows() {
		cf := first[f.Target]
		switch {
		case cf == nil:
		case f.Changes == nil:
			r.add(domain.Errorf(domain.CodeInvalidFlowTarget, "flow %q appends to %q, which AUTO CDC flow %q writes by key", f.Name, f.Target, cf.Name).
				WithHint("make the flow an AUTO CDC flow too, or write into another table").WithNames(f.Name, f.Target))
		case !cdc.SameKeys(f.Changes.Keys, cf.Changes.Keys):
			r.add(domain.Errorf(domain.CodeCDCKeyDrift, "AUTO CDC flows %q and %q write %q by different keys (%s and %s)", cf.Name, f.Name, f.Target,
				strings.Join(cf.Changes.Keys, ", "), strings.Join(f.Changes.Keys, ", ")).WithHint("give every flow into a table the same keys").WithNames(f.Name, f.Target))
		case f.Changes.SCDType != cf.Changes.SCDType:
			r.add(domain.Errorf(domain.CodeCDCStoredAsDrift, "AUTO CDC flows %q and %q store %q as SCD type %d and %d", cf.Name, f.Name, f.Target, cf.Changes.SCDType, f.Changes.SCDType).
				WithHint("store every flow into a table as the same SCD type").WithNames(f.Name, f.Target))
		}
		if f.Query == nil {
			continue
		}
		for _, in := range f.Query.Inputs() {
			if in.Streaming && in.Dataset != "" && first[in.Dataset] != nil {
				r.add(domain.Errorf(domain.CodeCDCTargetNotStream, "flow %q reads %q as a stream, but AUTO CDC flow %q updates and deletes its rows", f.Name, in.Dataset, first[in.Dataset].Name).WithNames(f.Name, in.Dataset))
			}
		}
	}
}

// resolveInputs finds the stored datasets each flow reads, looking through
// temporary views, and checks the kind of read against the kind of flow.
func (r *resolver) resolveInputs() map[string][]string {
	inputs := map[string][]string{}
	for _, f := range r.sortedFlows() {
		if f.Query == nil {
			continue
		}
		in := f.Query.Input
		if in.Dataset == "" && in.Source == nil {
			r.add(domain.Errorf(domain.CodeInvalidDefinition, "flow %q reads neither a dataset nor a source", f.Name).WithNames(f.Name))
			continue
		}
		if v, ok := in.Source.(domain.Validator); ok {
			if err := v.Validate(); err != nil {
				e, ok := err.(*domain.Error)
				if !ok {
					e = domain.Wrap(domain.CodeSourceOptionInvalid, err, "")
				}
				r.add(domain.Errorf(e.Code, "flow %q: %s", f.Name, e.Message).WithHint(e.Hint).WithNames(f.Name))
			}
		}
		for i, in := range f.Query.Inputs() {
			if i > 0 {
				if in.Streaming {
					r.add(domain.Errorf(domain.CodeInvalidDefinition, "flow %q makes a %s beside its main input; only the main input may be a stream", f.Name, in.Describe()).WithNames(f.Name))
				}
				if v, ok := in.Source.(domain.Validator); ok {
					if err := v.Validate(); err != nil {
						r.add(domain.Wrap(domain.CodeSourceOptionInvalid, err, fmt.Sprintf("flow %q", f.Name)).WithNames(f.Name))
					}
				}
				if ds := r.datasets[in.Dataset]; ds != nil && ds.Type == domain.TemporaryView {
					r.add(domain.Errorf(domain.CodeInvalidDefinition, "flow %q reads temporary view %q beside its main input", f.Name, in.Dataset).
						WithHint("read the tables the view reads, or make the view the main input").WithNames(f.Name, in.Dataset))
					continue
				}
			}
			if in.Dataset == "" {
				continue
			}
			stored, ok := r.storedInputs(f.Name, in.Dataset, []string{})
			if !ok {
				continue
			}
			inputs[f.Name] = append(inputs[f.Name], stored...)
			for _, ds := range stored {
				if in.Streaming && r.datasets[ds].Type == domain.MaterializedView {
					r.add(domain.Errorf(domain.CodeStreamOfMaterializedView, "flow %q reads materialized view %q as a stream; a view is recomputed, not appended to", f.Name, ds).WithNames(f.Name, ds))
				}
			}
		}
		if w := in.Watermark; w != nil {
			switch {
			case w.EventTime == nil:
				r.add(domain.Errorf(domain.CodeInvalidDefinition, "flow %q drops duplicates within a watermark but has none", f.Name).
					WithHint("call WithWatermark(column, delay) on the stream first").WithNames(f.Name))
			case !in.Streaming:
				r.add(domain.Errorf(domain.CodeInvalidDefinition, "flow %q puts a watermark on a %s; a watermark bounds the lateness of a stream", f.Name, in.Describe()).WithNames(f.Name))
			case w.Delay < 0:
				r.add(domain.Errorf(domain.CodeInvalidDefinition, "flow %q has a watermark delay of %s; it must not be negative", f.Name, w.Delay).WithNames(f.Name))
			}
		}
		ds := r.datasets[f.Target]
		if ds == nil {
			continue
		}
		if f.Changes != nil && f.Changes.Snapshot {
			if in.Streaming && in.Dataset != "" { // a snapshot source is read as a stream of snapshots
				r.add(domain.Errorf(domain.CodeCDCInvalidClause, "AUTO CDC flow %q takes snapshots of its source but makes a %s", f.Name, in.Describe()).
					WithHint("read the source whole: FROM SNAPSHOT name, without STREAM").WithNames(f.Name))
			}
			continue
		}
		switch {
		case f.Once && in.Streaming:
			r.add(domain.Errorf(domain.CodeOnceOverStream, "once flow %q makes a %s", f.Name, in.Describe()).WithNames(f.Name))
		case !f.Once && !in.Streaming && (ds.Type == domain.StreamingTable || ds.Type == domain.SinkDataset):
			r.add(domain.Errorf(domain.CodeStreamingTableBatchRead, "flow %q into %s %q makes a %s", f.Name, strings.ToLower(strings.ReplaceAll(string(ds.Type), "_", " ")), ds.Name, in.Describe()).WithNames(f.Name, ds.Name))
		case ds.Type == domain.MaterializedView && in.Streaming:
			r.add(domain.Errorf(domain.CodeInvalidDefinition, "materialized view %q makes a %s; materialized views read batches", ds.Name, in.Describe()).WithHint("use Read instead of ReadStream in a materialized view").WithNames(ds.Name))
		}
	}
	return inputs
}

// storedInputs returns the stored datasets behind a read of name: name itself
// when it is a table, or what its view reads, recursively.
func (r *resolver) storedInputs(flow, name string, seen []string) ([]string, bool) {
	ds, ok := r.datasets[name]
	if !ok {
		r.add(r.unknownDataset(fmt.Sprintf("flow %q reads", flow), name))
		return nil, false
	}
	switch ds.Type {
	case domain.SinkDataset:
		r.add(domain.Errorf(domain.CodeUnknownDataset, "flow %q reads sink %q; sinks are external and cannot be read", flow, name).
			WithHint("read the table the sink's flow reads instead").WithNames(flow, name))
		return nil, false
	case domain.TemporaryView:
		for i, s := range seen {
			if s == name {
				cycle := append(append([]string(nil), seen[i:]...), name)
				r.add(domain.Errorf(domain.CodeCircularDependency, "views read each other in a cycle: %s", strings.Join(cycle, " -> ")).WithNames(cycle...))
				return nil, false
			}
		}
		vf, ok := r.flows[name]
		if !ok || vf.Query == nil || vf.Query.Input.Dataset == "" {
			return nil, true // a view over an external source reads nothing stored
		}
		return r.storedInputs(flow, vf.Query.Input.Dataset, append(seen, name))
	}
	return []string{name}, true
}

// inlineViews replaces each read of a temporary view by the view's own query
// followed by the reader's transforms; the reader's kind of read (stream or
// batch) applies to what the view reads.
func (r *resolver) inlineViews() {
	for _, f := range r.flows {
		q := *f.Query
		for q.Input.Dataset != "" && r.datasets[q.Input.Dataset].Type == domain.TemporaryView {
			view := r.flows[q.Input.Dataset].Query
			streaming := q.Input.Streaming
			q.Transforms = append(append([]domain.Transform(nil), view.Transforms...), q.Transforms...)
			q.Input = view.Input
			q.Input.Streaming = streaming
		}
		f.Query = &q
	}
}

func (r *resolver) checkDependsOn() {
	for _, f := range r.sortedFlows() {
		for _, pred := range f.DependsOn {
			pf, ok := r.flows[pred]
			if !ok {
				e := domain.Errorf(domain.CodeUnknownDependsOn, "flow %q depends on %q, which is not a flow of the pipeline", f.Name, pred).WithNames(f.Name, pred)
				if s := suggest.Closest(pred, slices.Sorted(maps.Keys(r.flows))); s != "" {
					e.WithHint(fmt.Sprintf("did you mean %q?", s))
				}
				r.add(e)
				continue
			}
			if pf.Type == domain.FlowView {
				r.add(domain.Errorf(domain.CodePredecessorWritesView, "flow %q depends on %q, which writes to a view", f.Name, pred).WithNames(f.Name, pred))
				continue
			}
			if r.p.Continuous && !pf.Once {
				r.add(domain.Errorf(domain.CodePredecessorMustBeOnce, "flow %q depends on %q, which is not a once flow, in a continuous pipeline", f.Name, pred).WithNames(f.Name, pred))
			}
		}
	}
}

func (r *resolver) checkDatasetsHaveFlows() {
	written := map[string]bool{}
	for _, f := range r.p.flows { // a flow refused for its name still writes: that problem is said
		written[f.Target] = true
	}
	for _, name := range slices.Sorted(maps.Keys(r.datasets)) {
		ds := r.datasets[name]
		if ds.Type == domain.SinkDataset {
			if ds.Sink == nil {
				r.add(domain.Errorf(domain.CodeInvalidDefinition, "sink %q has no implementation", name).WithNames(name))
			}
			continue // a sink without a flow is allowed: it simply receives nothing
		}
		if !written[name] && ds.Properties[quarantineOf] == "" {
			r.add(domain.Errorf(domain.CodeDatasetWithoutFlow, "%s %q has no flow that writes it", strings.ToLower(strings.ReplaceAll(string(ds.Type), "_", " ")), name).WithNames(name))
		}
	}
}

// quarantineOf is the property of a quarantine table naming its table.
const quarantineOf = "pipelines.quarantineOf"

// addQuarantines declares the quarantine table of each streaming table
// with pipelines.quarantine = 'true': the rows its drop rules fail go there
// (see processors.RetryQuarantine).
func (r *resolver) addQuarantines() {
	for _, name := range slices.Sorted(maps.Keys(r.datasets)) {
		ds := r.datasets[name]
		switch v := ds.Properties[domain.PropQuarantine]; {
		case v == "" || v == "false":
			continue
		case v != "true":
			r.add(domain.Errorf(domain.CodeInvalidDefinition, "%s = %q on %q: write 'true' or 'false'", domain.PropQuarantine, v, name).WithNames(name))
			continue
		case ds.Type != domain.StreamingTable:
			r.add(domain.Errorf(domain.CodeInvalidDefinition, "%q is a %s: a quarantine keeps the rows a streaming table's drop rules fail", name, strings.ToLower(strings.ReplaceAll(string(ds.Type), "_", " "))).
				WithHint("compute an is_quarantined column in the view and filter on it, or set the property on a streaming table").WithNames(name))
			continue
		}
		for _, f := range r.sortedFlows() {
			if f.Target == name && f.Changes != nil {
				r.add(domain.Errorf(domain.CodeNotImplemented, "%q is written by the AUTO CDC flow %q: a quarantine takes the rows of append flows", name, f.Name).
					WithHint("put the expectations and the quarantine on the table the changes come from").WithNames(name, f.Name))
			}
		}
		qt := domain.QuarantineTable(name)
		if _, taken := r.datasets[qt]; taken {
			r.add(domain.Errorf(domain.CodeDuplicateIdentifiers, "%q is the quarantine of %q, and the pipeline declares a dataset of that name", qt, name).
				WithHint("rename the dataset, or turn the quarantine off").WithNames(qt))
			continue
		}
		r.datasets[qt] = &domain.Dataset{Name: qt, Type: domain.StreamingTable,
			Comment:    fmt.Sprintf("The rows of %s its drop rules failed (sluice quarantine retry %s).", name, name),
			Properties: map[string]string{quarantineOf: name}}
	}
}

// checkExpectations parses every expectation and reports duplicate names.
func (r *resolver) checkExpectations() {
	for _, name := range slices.Sorted(maps.Keys(r.datasets)) {
		ds := r.datasets[name]
		seen := map[string]bool{}
		for _, e := range ds.Expectations {
			switch {
			case e.Name == "":
				r.add(domain.Errorf(domain.CodeInvalidDefinition, "an expectation of %q has no name", name).WithNames(name))
			case seen[e.Name]:
				r.add(domain.Errorf(domain.CodeDuplicateIdentifiers, "%q has two expectations named %q", name, e.Name).WithNames(name))
			}
			seen[e.Name] = true
			switch e.Action {
			case domain.ExpectWarn, domain.ExpectDrop, domain.ExpectFail:
			default:
				r.add(domain.Errorf(domain.CodeInvalidDefinition, "expectation %q of %q has action %q", e.Name, name, e.Action).
					WithHint("use warn, drop or fail").WithNames(name))
			}
		}
		if len(ds.Expectations) == 0 || ds.Checker != nil {
			continue
		}
		// The checker every flow into the dataset uses, built once here;
		// with a declared schema its conditions are compiled now.
		c, err := expectations.New(name, ds.Expectations)
		if err != nil {
			r.add(expectationProblem(name, "", err))
			continue
		}
		if ds.Schema != nil {
			for _, p := range c.Problems(*ds.Schema) {
				r.add(expectationProblem(name, p.Expectation.Name, p.Err))
			}
		}
		ds.Checker = c
	}
}

// expectationProblem is a coded problem of an expectation of a dataset.
func expectationProblem(dataset, expectation string, err error) *domain.Error {
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Wrap(domain.CodeInvalidDefinition, err, "")
	}
	if expectation != "" {
		de.Message = fmt.Sprintf("expectation %s of %q: %s", expectation, dataset, de.Message)
	}
	return de.WithNames(dataset)
}

// edges computes each runnable flow's predecessors: its depends_on flows and
// the writers of the stored datasets it reads. View flows are not run (they
// are inlined), so they have no edges.
func (r *resolver) edges(inputs map[string][]string) (preds, dependsOn map[string][]string) {
	preds = map[string][]string{}
	dependsOn = map[string][]string{}
	writers := map[string][]string{}
	for _, f := range r.sortedFlows() {
		if f.Type != domain.FlowView {
			writers[f.Target] = append(writers[f.Target], f.Name)
		}
	}
	for _, f := range r.sortedFlows() {
		if f.Type == domain.FlowView {
			continue
		}
		set := map[string]bool{}
		for _, d := range f.DependsOn {
			if pf, ok := r.flows[d]; ok && pf.Type != domain.FlowView {
				set[d] = true
				dependsOn[f.Name] = appendUnique(dependsOn[f.Name], d)
			}
		}
		for _, ds := range inputs[f.Name] {
			for _, w := range writers[ds] {
				set[w] = true
			}
		}
		for _, in := range queryInputs(f) {
			if tc, ok := in.Source.(processors.TableChanges); ok {
				for _, w := range writers[tc.Table] {
					set[w] = true // the change feed after the table's writers
				}
			}
		}
		preds[f.Name] = slices.Sorted(maps.Keys(set))
	}
	// A flow reading the log sees the whole update: every flow finishes
	// before it, but the flows that read it, however indirectly.
	downstream := map[string]bool{} // the log readers and what reads them
	for changed := true; changed; {
		changed = false
		for _, f := range r.sortedFlows() {
			if f.Type == domain.FlowView || downstream[f.Name] {
				continue
			}
			reads := readsEventLog(f)
			for _, p := range preds[f.Name] {
				reads = reads || downstream[p]
			}
			if reads {
				downstream[f.Name], changed = true, true
			}
		}
	}
	for _, f := range r.sortedFlows() {
		if f.Type == domain.FlowView || !readsEventLog(f) {
			continue
		}
		set := map[string]bool{}
		for _, p := range preds[f.Name] {
			set[p] = true
		}
		for _, o := range r.sortedFlows() {
			if o.Type != domain.FlowView && !downstream[o.Name] {
				set[o.Name] = true
			}
		}
		preds[f.Name] = slices.Sorted(maps.Keys(set))
	}
	return preds, dependsOn
}

// queryInputs lists a flow's query's inputs (none without a query).
func queryInputs(f *domain.Flow) []domain.Input {
	if f.Query == nil {
		return nil
	}
	return f.Query.Inputs()
}

// readsEventLog reports whether a flow's query reads event_log().
func readsEventLog(f *domain.Flow) bool {
	for _, in := range queryInputs(f) {
		if _, ok := in.Source.(processors.EventLog); ok {
			return true
		}
	}
	return false
}

// order sorts the runnable flows topologically (ties by name) and reports
// every cycle, naming its flows in order.
func (r *resolver) order(preds map[string][]string) []string {
	names := slices.Sorted(maps.Keys(preds))
	indeg := map[string]int{}
	succ := map[string][]string{}
	for _, f := range names {
		for _, p := range preds[f] {
			indeg[f]++
			succ[p] = append(succ[p], f)
		}
	}
	var ready, order []string
	for _, f := range names {
		if indeg[f] == 0 {
			ready = append(ready, f)
		}
	}
	for len(ready) > 0 {
		sort.Strings(ready)
		f := ready[0]
		ready = ready[1:]
		order = append(order, f)
		for _, s := range succ[f] {
			if indeg[s]--; indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	if len(order) < len(names) {
		r.reportCycles(preds, indeg)
	}
	return order
}

// reportCycles finds the cycles among the flows left unordered and reports
// each once, as "a -> b -> a", with the kind of each edge.
func (r *resolver) reportCycles(preds map[string][]string, indeg map[string]int) {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(f string) {
		color[f] = grey
		stack = append(stack, f)
		for _, p := range preds[f] {
			switch color[p] {
			case white:
				visit(p)
			case grey:
				// stack holds f's chain back to p: p ... f, and f waits on p.
				i := len(stack) - 1
				for stack[i] != p {
					i--
				}
				cyc := append([]string(nil), stack[i:]...)
				// Edges run from predecessor to successor: reverse for reading order.
				for a, b := 0, len(cyc)-1; a < b; a, b = a+1, b-1 {
					cyc[a], cyc[b] = cyc[b], cyc[a]
				}
				cyc = rotateToSmallest(cyc)
				key := strings.Join(cyc, "\x00")
				if !seen[key] {
					seen[key] = true
					r.add(r.cycleError(cyc))
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[f] = black
	}
	for _, f := range slices.Sorted(maps.Keys(indeg)) {
		if indeg[f] > 0 && color[f] == white {
			visit(f)
		}
	}
}

func (r *resolver) cycleError(cyc []string) *domain.Error {
	var b strings.Builder
	for i, f := range cyc {
		next := cyc[(i+1)%len(cyc)]
		b.WriteString(f)
		if contains(r.flows[next].DependsOn, f) {
			b.WriteString(" -[depends_on]-> ")
		} else {
			b.WriteString(" -[writes " + r.flows[f].Target + ", read by]-> ")
		}
	}
	b.WriteString(cyc[0])
	return domain.Errorf(domain.CodeCircularDependency, "flows wait on each other in a cycle: %s", b.String()).WithNames(cyc...)
}

// rotateToSmallest rotates a cycle to start at its smallest name, so the same
// cycle found from two places reads the same and is reported once.
func rotateToSmallest(cyc []string) []string {
	first := 0
	for i := range cyc {
		if cyc[i] < cyc[first] {
			first = i
		}
	}
	return append(append([]string(nil), cyc[first:]...), cyc[:first]...)
}

func (r *resolver) sortedFlows() []*domain.Flow {
	out := make([]*domain.Flow, 0, len(r.flows))
	for _, n := range slices.Sorted(maps.Keys(r.flows)) {
		out = append(out, r.flows[n])
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func appendUnique(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}
