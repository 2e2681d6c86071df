// Package processors is the runtime: it runs updates of a resolved pipeline
// graph over an event store. An update records itself (create_update,
// definitions, resets), runs each flow when its predecessors finished (or,
// for a stream of a table, beside the table's writers), in micro-batches
// that commit atomically with their checkpoints, and records every state
// change as an event.
package processors

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// Result is how an update ended.
type Result struct {
	UpdateID string
	State    domain.UpdateState
	// Flows holds each runnable flow's final status.
	Flows map[string]domain.FlowStatus
	// Err is the first failure (nil when COMPLETED or CANCELED).
	Err error
	// Started and Finished time the update.
	Started, Finished time.Time
}

// active holds the update running on each store: one at a time, since two
// would plan the same batches. (Two processes cannot open one store at all.)
var active sync.Map // *eventstore.Store -> update id

// update is one run of a pipeline.
type update struct {
	id        string
	g         *domain.Graph
	store     *eventstore.Store
	opts      Options
	committed *updateBatches // the batches the update commits to its tables

	mu      sync.Mutex
	readers []domain.Closer // the readers the update made that hold something (see sourceOf)
}

// keep notes a reader to close when the update ends.
func (u *update) keep(c domain.Closer) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.readers = append(u.readers, c)
}

// closeReaders closes the readers kept.
func (u *update) closeReaders() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, c := range u.readers {
		c.Close()
	}
	u.readers = nil
}

func newUpdate(store *eventstore.Store, g *domain.Graph, opts Options) *update {
	return &update{id: uuid.NewString(), g: g, store: store, opts: opts.withDefaults(), committed: newUpdateBatches(store.LastSeq())}
}

func (u *update) event(typ domain.EventType, level domain.Level, msg string, d domain.Details) *domain.Event {
	return &domain.Event{
		Type:    typ,
		Level:   level,
		Message: msg,
		Origin:  domain.Origin{PipelineName: u.g.Name, UpdateID: u.id},
		Details: d,
	}
}

func (u *update) progress(state domain.UpdateState) *domain.Event {
	return u.event(domain.EventUpdateProgress, domain.LevelInfo, "Update "+shortID(u.id)+" is "+string(state)+".",
		domain.Details{UpdateProgress: &domain.UpdateProgress{State: state}})
}

// append commits events; it ignores ctx cancellation so that what an update
// decided is recorded even while it is being canceled.
func (u *update) append(ctx context.Context, evs ...*domain.Event) error {
	_, err := u.store.Append(context.WithoutCancel(ctx), evs...)
	return err
}

// commit appends the events of a micro-batch's commit and lists its
// batch_committed events for the streams that read the table. The rows of
// the event rowsOf (when not nil), encoded in its data, are handed to them.
func (u *update) commit(ctx context.Context, rowsOf *domain.Event, rows *domain.Batch, evs ...*domain.Event) error {
	if err := u.append(ctx, evs...); err != nil {
		return err
	}
	for _, ev := range evs {
		if bc := ev.Details.BatchCommitted; ev.Type == domain.EventBatchCommitted && bc != nil {
			ref := batchRef{seq: ev.Seq, gen: bc.TableGeneration, rows: bc.NumRows, empty: len(ev.Data) == 0, changes: bc.Changes != nil}
			var held *domain.Batch
			if ev == rowsOf {
				held = rows
				if bc.Selects == "" && bc.Changes == nil {
					rows.SetStored(bc.Target, ev.Seq) // its readers keep some of these stored rows
				}
			}
			u.committed.add(bc.Target, ref, held)
		}
	}
	return nil
}

func (u *update) createEvent() *domain.Event {
	o := u.opts
	return u.event(domain.EventCreateUpdate, domain.LevelInfo, "Update "+shortID(u.id)+" started by "+o.Cause+".",
		domain.Details{CreateUpdate: &domain.CreateUpdate{
			Cause:                    o.Cause,
			FullRefreshAll:           o.FullRefreshAll,
			FullRefreshSelection:     o.FullRefresh,
			RefreshSelection:         o.Refresh,
			RefreshFailed:            o.RefreshFailed,
			ResetCheckpointSelection: o.ResetCheckpoint,
			DryRun:                   o.DryRun,
			Continuous:               u.g.Continuous,
			Development:              o.Development,
		}})
}

// closeConnections closes the graph's sources and sinks that hold
// connections (domain.Closer), when an update ends.
func closeConnections(g *domain.Graph) {
	for _, name := range g.FlowNames() {
		for _, in := range g.Flows[name].Query.Inputs() {
			if c, ok := in.Source.(domain.Closer); ok {
				c.Close()
			}
		}
	}
	for _, name := range g.DatasetNames() {
		if c, ok := g.Datasets[name].Sink.(domain.Closer); ok {
			c.Close()
		}
	}
}

// Run runs one update of g over store and returns how it ended. The returned
// error is non-nil only when the update could not be recorded at all (the
// store failed); a failed update is a Result with State FAILED and Err set.
//
// Canceling ctx stops the update cleanly: running flows finish or abandon
// their current micro-batch (nothing half-done is committed), flows end
// STOPPED and the update CANCELED.
func Run(ctx context.Context, store *eventstore.Store, g *domain.Graph, opts Options) (*Result, error) {
	u := newUpdate(store, g, opts)
	if prev, running := active.LoadOrStore(store, u.id); running {
		return nil, domain.Errorf(domain.CodeUpdateRunning, "update %s of pipeline %q is running on this storage", shortID(prev.(string)), g.Name)
	}
	defer active.Delete(store)
	defer closeConnections(g)
	defer u.closeReaders()
	if err := closeAbandoned(ctx, store, g.Name, u.opts.Logger); err != nil {
		return nil, err
	}
	res := &Result{UpdateID: u.id, Flows: map[string]domain.FlowStatus{}, Started: time.Now()}
	if err := u.append(ctx, u.createEvent(), u.progress(domain.UpdateCreated), u.progress(domain.UpdateInitializing)); err != nil {
		return nil, err
	}
	log := u.opts.Logger.With().Str("pipeline", g.Name).Str("update", shortID(u.id)).Logger()
	log.Info().Bool("continuous", g.Continuous).Bool("dry_run", u.opts.DryRun).Msg("update started")
	fail := func(err error) (*Result, error) {
		log.Error().Err(err).Msg("update failed")
		res.State, res.Err, res.Finished = domain.UpdateFailed, err, time.Now()
		ev := u.progress(domain.UpdateFailed)
		ev.Level, ev.Error = domain.LevelError, domain.ErrorInfoOf(err)
		return res, u.append(ctx, ev)
	}
	plan, err := u.plan()
	if err != nil {
		return fail(err)
	}
	if err := u.append(ctx, u.definitionEvents()...); err != nil {
		return fail(err) // recorded if the store takes it: the update must not look unfinished
	}
	if u.opts.DryRun {
		res.State, res.Finished = domain.UpdateCompleted, time.Now()
		return res, u.append(ctx, u.progress(domain.UpdateCompleted))
	}
	if err := u.reset(ctx, plan); err != nil {
		return fail(err)
	}
	if err := u.importCheckpoints(ctx, plan); err != nil {
		return fail(err)
	}
	if err := u.append(ctx, u.progress(domain.UpdateSettingUpTables), u.progress(domain.UpdateRunning)); err != nil {
		return fail(err)
	}
	s := newScheduler(u, plan)
	flowErr := s.run(ctx)
	res.Flows = s.finalStatuses()
	res.Finished = time.Now()
	switch {
	case flowErr != nil:
		return fail(flowErr)
	case ctx.Err() != nil:
		log.Info().Msg("update canceled")
		res.State = domain.UpdateCanceled
		return res, u.append(ctx, u.progress(domain.UpdateStopping), u.progress(domain.UpdateCanceled))
	}
	res.State = domain.UpdateCompleted
	log.Info().Dur("took", res.Finished.Sub(res.Started)).Msg("update completed")
	return res, u.append(ctx, u.progress(domain.UpdateCompleted))
}

// closeAbandoned ends the updates that the log shows started and never
// ended: no update of this store runs now (Run holds it, and no other
// process can open it for writing), so their processes ended mid-update (a
// kill, a crash, a power cut). Their unfinished flows and then the updates
// are recorded FAILED with UPDATE_PROCESS_ENDED, so that the event log, the
// failed-flow selection (--refresh-failed) and every reader see how they
// ended.
func closeAbandoned(ctx context.Context, store *eventstore.Store, pipelineName string, log zerolog.Logger) error {
	open, err := store.OpenUpdates()
	if err != nil {
		return err
	}
	for _, ou := range open {
		cause := domain.Errorf(domain.CodeProcessEnded, "the process running update %s ended before the update did (it was killed, crashed or lost power)", shortID(ou.ID))
		var evs []*domain.Event
		flows := make([]string, 0, len(ou.Flows))
		for f := range ou.Flows {
			flows = append(flows, f)
		}
		sort.Strings(flows)
		for _, f := range flows {
			evs = append(evs, &domain.Event{
				Type: domain.EventFlowProgress, Level: domain.LevelError,
				Message: "Flow '" + f + "' has FAILED: the process running it ended.",
				Origin:  domain.Origin{PipelineName: pipelineName, UpdateID: ou.ID, FlowName: f, DatasetName: ou.Flows[f]},
				Details: domain.Details{FlowProgress: &domain.FlowProgress{Status: domain.FlowFailed}},
				Error:   domain.ErrorInfoOf(cause),
			})
		}
		evs = append(evs, &domain.Event{
			Type: domain.EventUpdateProgress, Level: domain.LevelError,
			Message: "Update " + shortID(ou.ID) + " is FAILED: the process running it ended.",
			Origin:  domain.Origin{PipelineName: pipelineName, UpdateID: ou.ID},
			Details: domain.Details{UpdateProgress: &domain.UpdateProgress{State: domain.UpdateFailed}},
			Error:   domain.ErrorInfoOf(cause),
		})
		if _, err := store.Append(context.WithoutCancel(ctx), evs...); err != nil {
			return err
		}
		log.Warn().Str("update", shortID(ou.ID)).Strs("flows", flows).Msg("closed an update whose process ended before it did")
	}
	return nil
}

// RecordInvalid records an update of a pipeline that failed validation: the
// update's start, and its failure with every problem. A dry run of a broken
// pipeline ends here.
func RecordInvalid(ctx context.Context, store *eventstore.Store, pipelineName string, opts Options, problems domain.Problems) (*Result, error) {
	u := newUpdate(store, &domain.Graph{Name: pipelineName}, opts)
	ev := u.progress(domain.UpdateFailed)
	ev.Level, ev.Error = domain.LevelError, domain.ErrorInfoOf(problems)
	if err := u.append(ctx, u.createEvent(), u.progress(domain.UpdateCreated), u.progress(domain.UpdateInitializing), ev); err != nil {
		return nil, err
	}
	now := time.Now()
	return &Result{UpdateID: u.id, State: domain.UpdateFailed, Err: problems, Flows: map[string]domain.FlowStatus{}, Started: now, Finished: now}, nil
}

// updatePlan is what the options select.
type updatePlan struct {
	// resetTables get a new generation, and their writers a checkpoint reset.
	resetTables []string
	// resetFlows get a checkpoint reset (writers of reset tables included).
	resetFlows []string
	// excluded flows do not run in this update.
	excluded map[string]bool
}

func (u *update) plan() (*updatePlan, error) {
	o, g := u.opts, u.g
	var problems domain.Problems
	if o.FullRefreshAll && (len(o.FullRefresh) > 0 || len(o.Refresh) > 0 || o.RefreshFailed) {
		problems = append(problems, domain.Errorf(domain.CodeConflictingUpdateOptions, "a full refresh of all tables cannot be combined with a selection of tables"))
	}
	if o.RefreshFailed && (len(o.FullRefresh) > 0 || len(o.Refresh) > 0) {
		problems = append(problems, domain.Errorf(domain.CodeConflictingUpdateOptions, "a refresh of failed tables cannot be combined with a selection of tables"))
	}
	for _, t := range o.FullRefresh {
		if contains(o.Refresh, t) {
			problems = append(problems, domain.Errorf(domain.CodeConflictingUpdateOptions, "table %q is selected both for a refresh and for a full refresh", t).WithNames(t))
		}
	}
	var tables, selectable []string // stored tables, and every dataset a flow writes
	for _, name := range g.DatasetNames() {
		ds := g.Datasets[name]
		if ds.Type.Stored() {
			tables = append(tables, name)
		}
		if ds.Type != domain.TemporaryView {
			selectable = append(selectable, name)
		}
	}
	for _, sel := range [][]string{o.FullRefresh, o.Refresh} {
		for _, t := range sel {
			if !contains(selectable, t) {
				problems = append(problems, domain.Errorf(domain.CodeUnknownTableSelection, "the update selects %q, which is not a table of the pipeline", t).
					WithHint("choose among: "+strings.Join(selectable, ", ")).WithNames(t))
			}
		}
	}
	runnable := u.runnableFlows()
	for _, f := range o.ResetCheckpoint {
		if !contains(runnable, f) {
			problems = append(problems, domain.Errorf(domain.CodeUnknownFlowSelection, "the update resets the checkpoint of %q, which is not a flow of the pipeline", f).
				WithHint("choose among: "+strings.Join(runnable, ", ")).WithNames(f))
		}
	}
	p := &updatePlan{excluded: map[string]bool{}}
	if o.FullRefreshAll {
		p.resetTables = tables
	} else {
		for _, t := range o.FullRefresh {
			if contains(tables, t) {
				p.resetTables = append(p.resetTables, t)
			}
		}
	}
	for _, t := range p.resetTables {
		if !g.Datasets[t].ResetAllowed() {
			problems = append(problems, domain.Errorf(domain.CodeTableNotResettable, "table %q has %s = false and cannot be fully refreshed", t, domain.PropResetAllowed).WithNames(t))
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	// A full refresh starts the flows into the refreshed datasets from the
	// beginning: tables' writers, and the flows into sinks named in it (all
	// of them in a full refresh of everything).
	resetFlows := map[string]bool{}
	refreshed := o.FullRefresh
	if o.FullRefreshAll {
		refreshed = selectable
	}
	for _, t := range refreshed {
		for _, f := range g.Writers(t) {
			resetFlows[f] = true
		}
	}
	for _, f := range o.ResetCheckpoint {
		resetFlows[f] = true
	}
	p.resetFlows = slices.Sorted(maps.Keys(resetFlows))

	var selected map[string]bool
	switch {
	case len(o.Refresh) > 0 || len(o.FullRefresh) > 0:
		selected = map[string]bool{}
		for _, t := range append(append([]string(nil), o.Refresh...), o.FullRefresh...) {
			for _, f := range g.Writers(t) {
				selected[f] = true
			}
		}
	case o.RefreshFailed:
		failed, err := u.store.FailedFlows()
		if err != nil {
			return nil, err
		}
		selected = map[string]bool{}
		for f, ds := range failed {
			for _, w := range g.Writers(ds) {
				selected[w] = true
			}
			if _, ok := g.Flows[f]; ok {
				selected[f] = true
			}
		}
		var roots []string
		for f := range selected {
			roots = append(roots, f)
		}
		for f := range g.Downstream(roots) {
			selected[f] = true
		}
	}
	if selected != nil {
		for _, f := range runnable {
			if !selected[f] {
				p.excluded[f] = true
			}
		}
	}
	return p, nil
}

// runnableFlows lists the flows an update runs: every flow but the views'.
func (u *update) runnableFlows() []string {
	var out []string
	for _, name := range u.g.Order {
		if u.g.Flows[name].Type != domain.FlowView {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (u *update) definitionEvents() []*domain.Event {
	var evs []*domain.Event
	numFlows := map[string]int{}
	for _, f := range u.g.Flows {
		numFlows[f.Target]++
	}
	for _, name := range u.g.DatasetNames() {
		ds := u.g.Datasets[name]
		if ds.Type == domain.SinkDataset {
			ev := u.event(domain.EventSinkDefinition, domain.LevelInfo, fmt.Sprintf("Sink %q is defined as %s.", name, ds.SinkFormat),
				domain.Details{SinkDefinition: &domain.SinkDefinition{Format: ds.SinkFormat, Options: redact(ds.SinkOptions)}})
			ev.Origin.DatasetName = name
			evs = append(evs, ev)
			continue
		}
		var exps []string
		for _, e := range ds.Expectations {
			exps = append(exps, fmt.Sprintf("%s: %s (%s)", e.Name, e.Condition, e.Action))
		}
		ev := u.event(domain.EventDatasetDefinition, domain.LevelInfo, fmt.Sprintf("Dataset %q is defined as %s.", name, ds.Type),
			domain.Details{DatasetDefinition: &domain.DatasetDefinition{
				DatasetType: ds.Type, Schema: ds.Schema, NumFlows: numFlows[name], Expectations: exps, TableProperties: ds.Properties, Comment: ds.Comment,
			}})
		ev.Origin.DatasetName = name
		evs = append(evs, ev)
	}
	for _, name := range u.g.FlowNames() {
		f := u.g.Flows[name]
		var inputs []string
		if f.Query != nil {
			for _, in := range f.Query.Inputs() {
				if in.Dataset != "" {
					inputs = append(inputs, in.Dataset)
				}
			}
		}
		var version string
		if f.Query != nil {
			version = f.Query.Version
		}
		ev := u.event(domain.EventFlowDefinition, domain.LevelInfo, fmt.Sprintf("Flow %q is defined as %s into %q.", name, f.Type, f.Target),
			domain.Details{FlowDefinition: &domain.FlowDefinition{
				OutputDataset: f.Target, InputDatasets: inputs, FlowType: f.Type, Once: f.Once, DependsOn: f.DependsOn, Comment: f.Comment, QueryVersion: version,
			}})
		ev.Origin.FlowName, ev.Origin.DatasetName = name, f.Target
		evs = append(evs, ev)
		if f.Type != domain.FlowMaterializedView && version != "" {
			if cp, err := u.store.Checkpoint(name); err == nil && cp.NextBatchID > 0 && cp.QueryVersion != "" && cp.QueryVersion != version {
				ev := u.event(domain.EventPlanningInformation, domain.LevelWarn,
					fmt.Sprintf("The query of flow %q changed since its last micro-batch; it goes on from its checkpoint, so the rows it wrote before keep the old query's results.", name),
					domain.Details{PlanningInformation: &domain.PlanningInformation{
						Dataset: f.Target, Technique: "INCREMENTAL",
						Reason: fmt.Sprintf("query version %s follows %s; run a full refresh of %q to compute every row with the new query", version, cp.QueryVersion, f.Target),
					}})
				ev.Origin.FlowName, ev.Origin.DatasetName = name, f.Target
				evs = append(evs, ev)
			}
		}
		for _, w := range f.Warnings {
			ev := u.event(domain.EventPlanningInformation, domain.LevelWarn, fmt.Sprintf("Flow %q: %s.", name, w),
				domain.Details{PlanningInformation: &domain.PlanningInformation{Dataset: f.Target, Technique: "INCREMENTAL", Reason: w}})
			ev.Origin.FlowName, ev.Origin.DatasetName = name, f.Target
			evs = append(evs, ev)
		}
		if f.Type == domain.FlowMaterializedView {
			ev := u.event(domain.EventPlanningInformation, domain.LevelInfo, fmt.Sprintf("Materialized view %q is recomputed in full when its inputs changed.", f.Target),
				domain.Details{PlanningInformation: &domain.PlanningInformation{
					Dataset: f.Target, Technique: "COMPLETE_RECOMPUTE", Reason: "incremental refresh of materialized views is not implemented; an update whose inputs changed since the last recompute recomputes the view from them, and one whose inputs did not leaves it as it is",
				}})
			ev.Origin.FlowName, ev.Origin.DatasetName = name, f.Target
			evs = append(evs, ev)
		}
	}
	return evs
}

// redact hides option values that look like secrets.
func redact(opts map[string]string) map[string]string {
	if opts == nil {
		return nil
	}
	out := make(map[string]string, len(opts))
	for k, v := range opts {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "password") || strings.Contains(lk, "secret") || strings.Contains(lk, "token") || strings.Contains(lk, "sasl") {
			v = "*****"
		}
		out[k] = redactPasswords(v)
	}
	return out
}

// passwordPair is password=... in a key=value connection string.
var passwordPair = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

// redactPasswords hides a password written into an option's value: a URL's
// (postgres://user:pass@host) or a key=value pair's (password=pass). A
// secret named as ${env:NAME} is shown as that reference.
func redactPasswords(v string) string {
	if u, err := url.Parse(v); err == nil && u.User != nil {
		if _, has := u.User.Password(); has && !strings.Contains(v, "${env:") {
			user := url.User(u.User.Username()).String()
			u.User = nil
			rest := strings.TrimPrefix(u.String(), u.Scheme+"://")
			return u.Scheme + "://" + user + ":*****@" + rest
		}
	}
	return passwordPair.ReplaceAllStringFunc(v, func(m string) string {
		if strings.Contains(m, "${env:") {
			return m
		}
		return passwordPair.ReplaceAllString(m, "${1}*****")
	})
}

// reset records the table and checkpoint resets of the plan in one commit.
func (u *update) reset(ctx context.Context, p *updatePlan) error {
	if len(p.resetTables) == 0 && len(p.resetFlows) == 0 {
		return nil
	}
	evs := []*domain.Event{u.progress(domain.UpdateResetting)}
	tables := p.resetTables
	for _, t := range p.resetTables {
		// the rows a table's rules dropped are its rows' too: its
		// quarantine starts afresh with it
		if ds := u.g.Datasets[t]; ds != nil && ds.Properties[domain.PropQuarantine] == "true" {
			tables = append(tables, domain.QuarantineTable(t))
		}
	}
	for _, t := range tables {
		gen, err := u.store.TableGeneration(t)
		if err != nil {
			return err
		}
		ev := u.event(domain.EventTableReset, domain.LevelInfo, fmt.Sprintf("Table %q starts generation %d (full refresh).", t, gen+1),
			domain.Details{TableReset: &domain.TableReset{Table: t, Generation: gen + 1, Cause: "full_refresh"}})
		ev.Origin.DatasetName = t
		evs = append(evs, ev)
	}
	for _, f := range p.resetFlows {
		cp, err := u.store.Checkpoint(f)
		if err != nil {
			return err
		}
		cause := "reset_checkpoint"
		if target := u.g.Flows[f].Target; contains(p.resetTables, target) || u.opts.FullRefreshAll || contains(u.opts.FullRefresh, target) {
			cause = "full_refresh" // a sink's too: it has no table to reset
		}
		// A sink may key its writes by batch id: its flow's ids never repeat,
		// not even the id of a batch planned and perhaps delivered but not
		// acknowledged.
		var next int64
		if u.g.Datasets[u.g.Flows[f].Target].Type == domain.SinkDataset {
			next = cp.NextBatchID
			if cp.Planned != nil {
				next = cp.Planned.BatchID + 1
			}
		}
		ev := u.event(domain.EventCheckpointReset, domain.LevelInfo, fmt.Sprintf("Flow %q starts checkpoint generation %d (%s).", f, cp.Generation+1, cause),
			domain.Details{CheckpointReset: &domain.CheckpointReset{Flow: f, Generation: cp.Generation + 1, Cause: cause, NextBatchID: next}})
		ev.Origin.FlowName, ev.Origin.DatasetName = f, u.g.Flows[f].Target
		evs = append(evs, ev)
	}
	return u.append(ctx, evs...)
}

// importCheckpoints takes import_checkpoint positions, once per flow: only on
// a flow's first update (nothing committed yet, nothing imported before).
func (u *update) importCheckpoints(ctx context.Context, p *updatePlan) error {
	for _, name := range u.runnableFlows() {
		f := u.g.Flows[name]
		if f.ImportCheckpoint == nil || p.excluded[name] {
			continue
		}
		cp, err := u.store.Checkpoint(name)
		if err != nil {
			return err
		}
		if cp.Imported || cp.NextBatchID > 0 || cp.Offset != nil {
			continue // imported before, or the flow already read on its own
		}
		other, items, err := importSource(f.ImportCheckpoint)
		if err != nil {
			return err
		}
		ev := u.event(domain.EventCheckpointImported, domain.LevelInfo,
			fmt.Sprintf("Flow %q starts from the checkpoint of flow %q in %s.", name, f.ImportCheckpoint.Flow, f.ImportCheckpoint.Storage),
			domain.Details{CheckpointImported: &domain.CheckpointImported{
				Flow: name, Generation: cp.Generation, Storage: f.ImportCheckpoint.Storage, SourceFlow: f.ImportCheckpoint.Flow, Offset: other.Offset, Items: items,
			}})
		ev.Origin.FlowName, ev.Origin.DatasetName = name, f.Target
		if err := u.append(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// importSource reads the committed checkpoint of a flow in another pipeline's
// storage, opened read-only, and how far it read each item of its source.
func importSource(ref *domain.CheckpointRef) (eventstore.Checkpoint, []domain.ItemRead, error) {
	other, err := eventstore.Open(ref.Storage, eventstore.WithReadOnly())
	if err != nil {
		return eventstore.Checkpoint{}, nil, domain.Wrap(domain.CodeCheckpointStoreUnavailable, err, "import_checkpoint from "+ref.Storage).WithNames(ref.Flow)
	}
	defer other.Close()
	cp, err := other.Checkpoint(ref.Flow)
	if err != nil {
		return cp, nil, domain.Wrap(domain.CodeCheckpointStoreUnavailable, err, "import_checkpoint from "+ref.Storage).WithNames(ref.Flow)
	}
	if cp.NextBatchID == 0 && cp.Offset == nil {
		return cp, nil, domain.Errorf(domain.CodeImportCheckpointInvalid, "flow %q in %s has no committed position to import", ref.Flow, ref.Storage).
			WithHint("run that pipeline first, or check the flow name (flow names are listed by its events)").WithNames(ref.Flow)
	}
	items, err := other.ItemsRead(ref.Flow, cp.Generation)
	if err != nil {
		return cp, nil, domain.Wrap(domain.CodeCheckpointStoreUnavailable, err, "import_checkpoint from "+ref.Storage).WithNames(ref.Flow)
	}
	return cp, items, nil
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
