package processors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// flowRun is one flow's run within an update.
type flowRun struct {
	s      *scheduler
	u      *update
	f      *domain.Flow
	target *domain.Dataset
	in     *flowInputs

	rows, batches int64 // committed in this update
	// upserted and deleted count what an AUTO CDC flow's committed
	// batches did to its target in this update
	upserted, deleted int64
	// late and dups count the rows a watermark dropped in this update
	late, dups int64

	// stream is the state of a flow whose stream has a watermark, nil
	// until its first micro-batch (or after a failed commit); pending is
	// the change the micro-batch being committed makes to it.
	stream  *streamState
	pending *pendingState

	checker domain.Checker      // the target's expectations, nil without
	quality *domain.DataQuality // their counts over this update
	// rejected are the rows the micro-batch's drop rules failed, for the
	// target's quarantine, when it has one
	rejected *domain.Rejected

	lastWork time.Time // when the flow last ran a micro-batch (continuous)
	idle     bool      // IDLE recorded, RUNNING not since

	// next is the micro-batch after the one committing, planned and read
	// while it commits (see prefetch); nil when there is none.
	next *prefetched
}

// prefetched is a micro-batch planned and read ahead: the range after start,
// and what it read of each input. Nothing of it is recorded until it is taken: it is planned
// (batch_planned) only after the micro-batch before it committed.
type prefetched struct {
	start, end domain.Offset
	inputs     []*domain.Batch
	err        error
	done       chan struct{}
}

// prefetch plans and reads, in the background, the micro-batch that follows
// the one ending at end, so that reading and decoding it overlaps the commit
// of that one. It plans as the flow will once that one committed: from its
// end, what it read of each file taken from its offset.
func (r *flowRun) prefetch(ctx context.Context, gen int64, end domain.Offset) {
	next := &prefetched{start: end, done: make(chan struct{})}
	r.next = next
	limit := r.u.opts.Limit
	if r.f.Once {
		limit = domain.ReadLimit{MaxRows: limit.MaxRows, MaxBytes: limit.MaxBytes}
	}
	go func() {
		defer close(next.done)
		defer func() {
			if p := recover(); p != nil {
				next.err = fmt.Errorf("panic: %v", p) // the micro-batch runs again in the open, and says so
			}
		}()
		e, ok, err := r.planner(gen).plan(ctx, end, limit)
		if err != nil || !ok {
			next.err = errNothingAhead
			return
		}
		next.end = e
		next.inputs, next.err = r.in.read(ctx, end, e)
	}()
}

var errNothingAhead = errors.New("nothing planned ahead")

// takeNext returns the prefetched micro-batch when it follows the committed
// checkpoint cp, waiting for it; ok is false when there is none to take, and
// the micro-batch is planned and read as usual.
func (r *flowRun) takeNext(cp eventstore.Checkpoint) (*prefetched, bool) {
	next := r.next
	if next == nil {
		return nil, false
	}
	r.next = nil
	<-next.done
	if next.err != nil || cp.Planned != nil || !bytes.Equal(next.start, cp.Offset) {
		return nil, false
	}
	return next, true
}

// dropStream lets go of the flow's stream state (folded from the log again
// when next needed), removing what it moved to disk.
func (r *flowRun) dropStream() {
	if r.stream == nil {
		return
	}
	if err := r.stream.close(); err != nil {
		r.u.opts.Logger.Warn().Str("update", shortID(r.u.id)).Str("flow", r.f.Name).Err(err).Msg("the spill of the deduplication's state was not removed")
	}
	r.stream = nil
}

// dropPending lets go of what apply remembered for a micro-batch that does
// not commit: the stream state is folded again from the log when next
// needed.
func (r *flowRun) dropPending() {
	if r.pending != nil {
		r.pending = nil
		r.dropStream()
	}
}

// dropNext waits for a micro-batch read ahead that will not be taken. (It
// is not stopped: a source may keep what it opened under the context it
// was given, a subscription, for the micro-batches after.)
func (r *flowRun) dropNext() {
	if r.next != nil {
		<-r.next.done
		r.next = nil
	}
}

// runFlow runs a flow to its end in this update, with retries in production
// mode, and returns its final status and its reason (after recording them).
func (s *scheduler) runFlow(ctx context.Context, f *domain.Flow) (domain.FlowStatus, string, error) {
	st, err := s.runFlowAttempts(ctx, f)
	if domain.CodeOf(err) == domain.CodeUpstreamFailed && st != domain.FlowFailed {
		return st, domain.SkipUpstreamFailed, nil
	}
	return st, "", err
}

// runFlowAttempts is runFlow but for the reason: a flow that ended because
// a leader did not complete returns its status with that UPSTREAM_FAILED
// error.
func (s *scheduler) runFlowAttempts(ctx context.Context, f *domain.Flow) (domain.FlowStatus, error) {
	u := s.u
	r := &flowRun{s: s, u: u, f: f, target: u.g.Datasets[f.Target]}
	if r.target != nil && len(r.target.Expectations) > 0 && r.target.Type != domain.SinkDataset {
		if r.target.Checker == nil {
			err := domain.Errorf(domain.CodeInvalidDefinition, "dataset %q has expectations but no checker", r.target.Name).
				WithHint("build the graph with pipeline.Resolve, which compiles the expectations").WithNames(r.target.Name)
			if aerr := u.append(ctx, r.final(domain.FlowFailed, err)); aerr != nil {
				return domain.FlowFailed, aerr
			}
			return domain.FlowFailed, err
		}
		r.checker, r.quality = r.target.Checker, &domain.DataQuality{}
	}
	r.in = &flowInputs{main: u.sourceOf(f.Query.Input), whole: f.Recomputes()}
	for _, side := range f.Query.Side {
		r.in.sides = append(r.in.sides, u.sourceOf(side))
	}
	defer u.stopReading(f.Query)
	defer r.dropStream()
	if err := u.append(ctx, u.flowProgress(f, domain.FlowStarting, "", nil)); err != nil {
		return domain.FlowFailed, err
	}
	for attempt := 0; ; attempt++ {
		done := r.batches
		err := r.drive(ctx)
		if r.batches > done {
			// a flow that committed since its last failure starts its count
			// again: a continuous flow outlives many passing outages
			attempt = 0
		}
		switch {
		case err == nil:
			return domain.FlowCompleted, u.append(ctx, r.final(domain.FlowCompleted, nil))
		case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
			return domain.FlowStopped, u.append(ctx, r.final(domain.FlowStopped, nil))
		case domain.CodeOf(err) == domain.CodeUpstreamFailed:
			// a leader did not complete: a flow that took none of its
			// batches is skipped, as one that waited for it would be; one
			// that took some stops, with them committed
			st := domain.FlowSkipped
			if r.batches > 0 {
				st = domain.FlowStopped
			}
			ev := r.final(st, nil)
			ev.Level, ev.Details.FlowProgress.Reason = domain.LevelWarn, domain.SkipUpstreamFailed
			ev.Message = fmt.Sprintf("Flow %q is %s (%s): %v", f.Name, st, domain.SkipUpstreamFailed, err)
			if aerr := u.append(ctx, ev); aerr != nil {
				return domain.FlowFailed, aerr
			}
			return st, err
		}
		log := u.opts.Logger.With().Str("update", shortID(u.id)).Str("flow", f.Name).Logger()
		if u.opts.Development || attempt >= u.opts.Retry.Attempts || !retriable(err) {
			log.Error().Err(err).Msg("flow failed")
			if aerr := u.append(ctx, r.final(domain.FlowFailed, err)); aerr != nil {
				return domain.FlowFailed, aerr
			}
			return domain.FlowFailed, err
		}
		wait := u.opts.Retry.backoff(attempt)
		ev := u.flowProgress(f, domain.FlowStarting, "RETRY", nil)
		ev.Level, ev.Error = domain.LevelWarn, domain.ErrorInfoOf(err)
		ev.Details.FlowProgress.Attempt = attempt + 2
		ev.Message = fmt.Sprintf("Flow %q failed and starts again in %s (attempt %d of %d): %v", f.Name, wait, attempt+2, u.opts.Retry.Attempts+1, err)
		if aerr := u.append(ctx, ev); aerr != nil {
			return domain.FlowFailed, aerr
		}
		log.Warn().Err(err).Dur("backoff", wait).Int("attempt", attempt+2).Msg("flow failed; retrying")
		select {
		case <-ctx.Done():
			return domain.FlowStopped, u.append(ctx, r.final(domain.FlowStopped, nil))
		case <-time.After(wait):
		}
	}
}

// retriable says whether a failure may go away on retry: errors sluice knows
// to be deterministic (a definition, a schema, a payload) do not.
func retriable(err error) bool {
	var e *domain.Error
	if !errors.As(err, &e) {
		return true
	}
	return e.Retriable
}

func (r *flowRun) final(st domain.FlowStatus, err error) *domain.Event {
	m := &domain.FlowMetrics{NumOutputRows: r.rows, NumBatches: r.batches}
	if r.f.Type == domain.FlowChange {
		m.NumOutputRows, m.NumUpsertedRows, m.NumDeletedRows = r.upserted+r.deleted, r.upserted, r.deleted
	}
	m.NumLateRowsDropped, m.NumDuplicatesDropped = r.late, r.dups
	ev := r.u.flowProgress(r.f, st, "", m)
	ev.Details.FlowProgress.DataQuality = r.quality
	if err != nil {
		ev.Level, ev.Error = domain.LevelError, domain.ErrorInfoOf(err)
		ev.Message = fmt.Sprintf("Flow %q FAILED: %v", r.f.Name, err)
	}
	return ev
}

// drive runs the flow's micro-batches: in a triggered update until the source
// has nothing new (for a flow beside its leaders, until they finished and
// it read all they wrote); in a continuous one until ctx ends, waiting for
// new data between batches. A once flow drains what its source holds when it starts
// (in bounded micro-batches if the source bounds them), then records that it
// drained; a materialized view recomputes when its inputs changed.
func (r *flowRun) drive(ctx context.Context) error {
	if err := r.u.append(ctx, r.u.flowProgress(r.f, domain.FlowRunning, "", nil)); err != nil {
		return err
	}
	r.lastWork = time.Now()
	defer r.dropNext()
	// what the last update committed, in case it ended before telling the source
	if cp, err := r.u.store.Checkpoint(r.f.Name); err == nil && cp.Planned == nil {
		r.committed(ctx, cp.Offset)
	}
	leadersDrained := false // read once more after the leaders finished
	for {
		for {
			did, err := r.microBatch(ctx)
			if err != nil {
				return err
			}
			if !did || r.f.Recomputes() {
				break
			}
		}
		if r.f.Once {
			return r.drained(ctx)
		}
		if r.u.g.Continuous {
			if err := r.waitForData(ctx); err != nil {
				return err
			}
			continue
		}
		if len(r.s.leaders[r.f.Name]) == 0 {
			return nil
		}
		switch state, leader := r.s.leaderState(r.f.Name); {
		case state == leadersRunning:
			select { // a leader's commit or end wakes the flow
			case <-ctx.Done():
				return ctx.Err()
			case <-r.s.wake[r.f.Name]:
			}
		case !leadersDrained:
			leadersDrained = true // what they committed last is read first
		case state == leadersFailed:
			return domain.Errorf(domain.CodeUpstreamFailed, "flow %q, which writes what flow %q reads, did not complete", leader, r.f.Name).WithNames(leader)
		default:
			return nil
		}
	}
}

// drained records that a once flow read everything. A crash before this
// event only means the next update plans again, finds nothing, and records it.
func (r *flowRun) drained(ctx context.Context) error {
	cp, err := r.u.store.Checkpoint(r.f.Name)
	if err != nil || cp.Drained {
		return err
	}
	ev := r.u.event(domain.EventOnceFlowDrained, domain.LevelInfo, fmt.Sprintf("Once flow %q drained.", r.f.Name),
		domain.Details{OnceFlowDrained: &domain.OnceFlowDrained{Flow: r.f.Name, Generation: cp.Generation}})
	ev.Origin.FlowName, ev.Origin.DatasetName = r.f.Name, r.f.Target
	return r.u.append(ctx, ev)
}

// waitForData blocks until the flow may have something new: a commit to the
// table it reads (woken through the event bus), or the poll interval. A
// materialized view over tables is only woken by commits: polling it would
// find the same inputs. IDLE is recorded once, when the flow has had nothing
// to do for IdleAfter; RUNNING again when a micro-batch runs.
func (r *flowRun) waitForData(ctx context.Context) error {
	var poll <-chan time.Time
	if !r.f.Recomputes() || readsSource(r.f.Query) {
		t := time.NewTimer(r.u.opts.PollInterval)
		defer t.Stop()
		poll = t.C
	}
	var idle <-chan time.Time
	if !r.idle {
		t := time.NewTimer(time.Until(r.lastWork.Add(r.u.opts.IdleAfter)))
		defer t.Stop()
		idle = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.s.wake[r.f.Name]:
			return nil
		case <-poll:
			return nil
		case <-idle:
			idle = nil
			r.idle = true
			if err := r.u.append(ctx, r.u.flowProgress(r.f, domain.FlowIdle, "", nil)); err != nil {
				return err
			}
		}
	}
}

// readsSource reports whether a query reads an external source, which
// only polling notices changes of.
func readsSource(q *domain.Query) bool {
	for _, in := range q.Inputs() {
		if in.Dataset == "" {
			return true
		}
	}
	return false
}

// working notes that a micro-batch runs, recording RUNNING after IDLE.
func (r *flowRun) working(ctx context.Context) error {
	r.lastWork = time.Now()
	if !r.idle {
		return nil
	}
	r.idle = false
	return r.u.append(ctx, r.u.flowProgress(r.f, domain.FlowRunning, "", nil))
}

// microBatch runs one micro-batch: plan (or take the planned batch a crash
// left uncommitted), read exactly that range of every input, transform
// (the query's rows of the inputs, then its transforms, then the
// expectations), write and commit.
// It reports whether there was a batch. A panic in a source or a user
// function fails the micro-batch, not the process.
func (r *flowRun) microBatch(ctx context.Context) (did bool, err error) {
	select {
	case r.s.sem <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-r.s.sem }()
	defer func() {
		if p := recover(); p != nil {
			// What the micro-batch changed of the flow's state in memory
			// was not committed: it is folded again from the log.
			r.dropPending()
			if t := r.s.changes[r.f.Target]; t != nil && r.f.Changes != nil {
				lock := r.s.tableLocks[r.f.Target] // as a commit changes it
				lock.Lock()
				t.loaded, t.state = false, nil
				lock.Unlock()
			}
			did, err = false, domain.Errorf(domain.CodeUserFunctionFailed, "flow %q panicked: %v", r.f.Name, p).
				WithHint("fix the flow's source or functions; nothing of the micro-batch was committed").WithNames(r.f.Name).
				AsRetriable() // as the same function failing with an error is
		}
	}()

	u, f := r.u, r.f
	cp, err := u.store.Checkpoint(f.Name)
	if err != nil {
		r.dropNext()
		return false, err
	}
	info := cp.Planned
	recompute := f.Recomputes()
	var inputs []*domain.Batch
	if ahead, ok := r.takeNext(cp); ok {
		info = &domain.BatchInfo{Flow: f.Name, Target: f.Target, BatchID: cp.NextBatchID, Generation: cp.Generation, Start: ahead.start, End: ahead.end, QueryVersion: f.Query.Version}
		if info.Items, err = r.in.items(ahead.end); err != nil {
			return false, sourceError(r.in, err)
		}
		if err := r.working(ctx); err != nil {
			return false, err
		}
		ev := r.batchEvent(domain.EventBatchPlanned, *info)
		ev.Message = fmt.Sprintf("Flow %q planned batch %d.", f.Name, info.BatchID)
		ev.Details.BatchPlanned = info
		if err := u.append(ctx, ev); err != nil {
			return false, err
		}
		inputs = ahead.inputs
	} else if info == nil || recompute {
		start, limit := cp.Offset, u.opts.Limit
		if f.Once {
			// A once flow drains its source in as many micro-batches as the
			// memory bounds need; the source's own bounds still apply.
			limit = domain.ReadLimit{MaxRows: limit.MaxRows, MaxBytes: limit.MaxBytes}
		}
		planner := r.planner(cp.Generation)
		if recompute {
			// A recompute reads its inputs whole, whatever was read before.
			start, limit, planner = nil, domain.ReadLimit{}, r.in
		}
		end, ok, err := planner.plan(ctx, start, limit)
		if err != nil {
			return false, sourceError(r.in, err)
		}
		if !ok {
			return false, nil
		}
		if recompute && cp.NextBatchID > 0 && bytes.Equal(end, cp.Offset) && cp.QueryVersion == f.Query.Version {
			return false, nil // the inputs and the query are as they were at the last recompute
		}
		info = &domain.BatchInfo{Flow: f.Name, Target: f.Target, BatchID: cp.NextBatchID, Generation: cp.Generation, Start: start, End: end, QueryVersion: f.Query.Version}
		if !recompute {
			if info.Items, err = r.in.items(end); err != nil {
				return false, sourceError(r.in, err)
			}
		}
		if err := r.working(ctx); err != nil {
			return false, err
		}
		if !recompute {
			ev := r.batchEvent(domain.EventBatchPlanned, *info)
			ev.Message = fmt.Sprintf("Flow %q planned batch %d.", f.Name, info.BatchID)
			ev.Details.BatchPlanned = info
			if err := u.append(ctx, ev); err != nil {
				return false, err
			}
		}
	} else if err := r.working(ctx); err != nil {
		return false, err
	}
	if inputs == nil {
		if inputs, err = r.in.read(ctx, info.Start, info.End); err != nil {
			return false, sourceError(r.in, err)
		}
	}
	if main := inputs[0]; main != nil {
		info.NumRescued, info.NumMalformed = main.Rescued, main.Malformed
	}
	// The next micro-batch is read while this one is transformed and
	// committed. A flow whose readers have yet to take half of what is
	// held for them reads on when its commit is done, not ahead: a batch
	// read ahead would find no room to be held, and its readers would take
	// it from the log, decoded again, while they fall further behind.
	if !recompute && r.target.Type != domain.SinkDataset && !u.committed.behind(f.Target) {
		r.prefetch(ctx, info.Generation, info.End)
	}
	if w := f.Query.Input.Watermark; w != nil && inputs[0] != nil {
		if r.stream == nil || r.stream.gen != info.Generation {
			r.dropStream()
			if r.stream, err = loadStreamState(ctx, u.store, f.Name, info.Generation, cp.StreamStateFrom, u.opts.StateMemory); err != nil {
				return false, err
			}
		}
		kept, p, err := r.stream.apply(inputs[0], w)
		if err != nil {
			r.dropStream()
			return false, userError(f, err)
		}
		inputs = append([]*domain.Batch{kept}, inputs[1:]...)
		r.pending = p
	}
	rows, quality, err := r.transform(ctx, inputs)
	if err != nil {
		r.dropPending()
		return false, err
	}
	if err := r.commit(ctx, *info, rows, quality); err != nil {
		r.dropNext()
		if domain.CodeOf(err) == domain.CodeTxnTooLarge && !recompute && r.target.Type != domain.SinkDataset {
			return r.replanSmaller(ctx, info, rows.Len(), err)
		}
		return false, err
	}
	r.rows += int64(rows.Len())
	if quality != nil {
		r.quality.Add(quality)
	}
	r.batches++
	return true, nil
}

// replanSmaller plans a batch too large to commit again, with the same batch
// id and half its rows: nothing of it is visible yet, so its range may still
// change. The next micro-batch runs the new plan; what is left goes to the
// batches after it. A batch that cannot shrink keeps its error.
func (r *flowRun) replanSmaller(ctx context.Context, info *domain.BatchInfo, rows int, tooLarge error) (bool, error) {
	if rows < 2 {
		return false, tooLarge
	}
	end, ok, err := r.planner(info.Generation).plan(ctx, info.Start, domain.ReadLimit{MaxRows: int64(rows / 2)})
	if err != nil {
		return false, sourceError(r.in, err)
	}
	if !ok || bytes.Equal(end, info.End) {
		return false, tooLarge
	}
	smaller := *info
	smaller.End = end
	if smaller.Items, err = r.in.items(end); err != nil {
		return false, sourceError(r.in, err)
	}
	ev := r.batchEvent(domain.EventBatchPlanned, smaller)
	ev.Level = domain.LevelWarn
	ev.Message = fmt.Sprintf("Flow %q planned batch %d again with at most %d rows: %d rows did not fit in one commit.", r.f.Name, smaller.BatchID, rows/2, rows)
	ev.Details.BatchPlanned = &smaller
	if err := r.u.append(ctx, ev); err != nil {
		return false, err
	}
	return true, nil
}

// planner is the flow's inputs, planning against what the flow's committed
// micro-batches of checkpoint generation gen read.
func (r *flowRun) planner(gen int64) *flowInputs {
	return r.in.reading(flowReadState{store: r.u.store, flow: r.f.Name, gen: gen})
}

// transform is the transform step of a micro-batch: the query's rows of the
// batches of its inputs (its combiner, with side inputs), its transforms in
// order, then the target's expectations.
func (r *flowRun) transform(ctx context.Context, inputs []*domain.Batch) (*domain.Batch, *domain.DataQuality, error) {
	f := r.f
	r.rejected = nil
	rows := inputs[0]
	if len(inputs) > 1 {
		var err error
		if rows, err = f.Query.Combine.Combine(ctx, inputs); err != nil {
			return nil, nil, userError(f, err)
		}
		if _, ok := f.Query.Combine.(domain.KeepsSelections); !ok {
			rows = rows.Unstored()
		}
	}
	if rows == nil {
		rows = &domain.Batch{}
	}
	for _, t := range f.Query.Transforms {
		var err error
		if rows, err = t.Apply(ctx, rows); err != nil {
			return nil, nil, userError(f, err)
		}
		if rows == nil {
			rows = &domain.Batch{}
		}
		if _, ok := t.(domain.KeepsSelections); !ok {
			rows = rows.Unstored() // a user's function may have written into them
		}
	}
	if r.checker == nil {
		return rows, nil, nil
	}
	if q, ok := r.checker.(domain.Quarantiner); ok && r.target.Properties[domain.PropQuarantine] == "true" {
		kept, rejected, quality, err := q.CheckRejected(rows)
		if err != nil {
			return nil, nil, userError(f, err)
		}
		r.rejected = rejected
		return kept, quality, nil
	}
	rows, quality, err := r.checker.Check(rows)
	if err != nil {
		return nil, nil, userError(f, err)
	}
	return rows, quality, nil
}

// flowReadState is the store's record of how far a flow read its source's
// items.
type flowReadState struct {
	store *eventstore.Store
	flow  string
	gen   int64
}

func (s flowReadState) ItemRead(item string) (domain.ItemRead, bool, error) {
	return s.store.ItemRead(s.flow, s.gen, item)
}

// userError names the flow in an error from a user function; errors that
// already carry a code keep it.
func userError(f *domain.Flow, err error) error {
	var e *domain.Error
	if errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return domain.Wrap(domain.CodeUserFunctionFailed, err, fmt.Sprintf("flow %q", f.Name)).WithNames(f.Name).AsRetriable()
}

func sourceError(src fmt.Stringer, err error) error {
	var e *domain.Error
	if errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return domain.Wrap(domain.CodeSourceFailed, err, src.String()).AsRetriable()
}

func (r *flowRun) batchEvent(typ domain.EventType, info domain.BatchInfo) *domain.Event {
	ev := r.u.event(typ, domain.LevelInfo, "", domain.Details{})
	id := info.BatchID
	ev.Origin.FlowName, ev.Origin.DatasetName, ev.Origin.BatchID = r.f.Name, r.f.Target, &id
	return ev
}

// commit makes a batch's result visible: for a table, one commit holding the
// rows and the new checkpoint; for a sink,
// delivery first, then the acknowledgement.
func (r *flowRun) commit(ctx context.Context, info domain.BatchInfo, rows *domain.Batch, quality *domain.DataQuality) (err error) {
	u, f := r.u, r.f
	defer func() {
		if err == nil {
			// The flows that read the table are woken now, not when the
			// event bus delivers the commit: it waits for every
			// subscriber to take each event before the next.
			r.s.wakeReaders(f.Target)
			r.committed(ctx, info.End)
		}
	}()
	info.NumRows = int64(rows.Len())
	info.DataQuality = quality
	var evs []*domain.Event
	var batchEv *domain.Event // the batch_committed event of rows
	if p := r.pending; p != nil {
		// The stream state moves on with the commit; if the commit fails,
		// it is folded again from the log.
		r.pending = nil
		r.stream.advance(p)
		defer func() {
			if err != nil {
				r.dropStream()
				return
			}
			r.late += p.late
			r.dups += p.dups
		}()
		ev, err := r.stateEvent(info, p, r.stream.seen.len())
		if err != nil {
			return err
		}
		evs = append(evs, ev)
		if r.stream.wantsSnapshot() {
			snap, err := r.snapshotEvent(ctx, info, ev)
			if err != nil {
				return err
			}
			evs = append(evs, snap)
		}
	}
	if r.target.Type == domain.SinkDataset {
		err := r.target.Sink.Deliver(ctx, domain.SinkBatch{Flow: f.Name, Sink: f.Target, BatchID: info.BatchID, Generation: info.Generation, Rows: rows})
		if err != nil {
			return userError(f, err)
		}
		ev := r.batchEvent(domain.EventSinkBatchDelivered, info)
		ev.Message = fmt.Sprintf("Sink %q took batch %d of flow %q (%d rows).", f.Target, info.BatchID, f.Name, info.NumRows)
		ev.Details.SinkBatchDelivered = &domain.SinkBatchDelivered{Flow: f.Name, Sink: f.Target, BatchID: info.BatchID, Generation: info.Generation, NumRows: info.NumRows}
		evs = append(evs, ev)
	} else {
		// Flows into one table commit one at a time, so that each sees the
		// schema the previous one left.
		lock := r.s.tableLocks[f.Target]
		lock.Lock()
		defer lock.Unlock()
		gen, err := u.store.TableGeneration(f.Target)
		if err != nil {
			return err
		}
		if f.Type == domain.FlowMaterializedView {
			// A recompute replaces the view: a new generation holding only this batch, in the same commit.
			gen++
			ev := u.event(domain.EventTableReset, domain.LevelInfo, fmt.Sprintf("Materialized view %q is recomputed as generation %d.", f.Target, gen),
				domain.Details{TableReset: &domain.TableReset{Table: f.Target, Generation: gen, Cause: "recompute"}})
			ev.Origin.FlowName, ev.Origin.DatasetName = f.Name, f.Target
			evs = append(evs, ev)
		}
		info.TableGeneration = gen
		if f.Changes != nil {
			changed, err := r.commitChanges(ctx, &info, gen, rows)
			if err != nil {
				return err
			}
			if changed != nil {
				if err := u.commit(ctx, nil, nil, append(evs, changed...)...); err != nil {
					r.s.changes[f.Target].loaded = false // folded again from the log
					return err
				}
				r.upserted += info.Changes.NumUpserted
				r.deleted += info.Changes.NumDeleted
				return nil
			}
			rows = &domain.Batch{} // no change yet, nor a sequence type: the checkpoint moves on
		}
		if rows, err = r.fitSchema(&info, rows); err != nil {
			return err
		}
		ev := r.batchEvent(domain.EventBatchCommitted, info)
		batchEv = ev
		ev.Message = fmt.Sprintf("Flow %q committed batch %d to %q (%d rows).", f.Name, info.BatchID, f.Target, info.NumRows)
		ev.Details.BatchCommitted = &info
		if sel, ok := rows.Selection(); ok && rows.Len() > 0 && 2*sel.Len() >= sel.Total() {
			// Rows of another table's stored rows, at least half of
			// those they select from: a few bytes a row say which,
			// and a reader reads them from there.
			info.Selects = sel.Table
			ev.Data = domain.EncodeSelection(sel)
		} else if rows.Len() > 0 || len(rows.Columns) > 0 {
			data, err := domain.EncodeBatch(rows)
			if err != nil {
				return err
			}
			ev.Data = data
		}
		evs = append(evs, ev)
		if rej := r.rejected; rej != nil && rej.Rows.Len() > 0 {
			// the dropped rows go to the quarantine in the same commit
			from := make([]quarantined, rej.Rows.Len())
			now := time.Now().UnixMicro()
			for i := range from {
				from[i] = quarantined{flow: f.Name, batch: info.BatchID, update: u.id, at: now}
			}
			qrows, err := quarantineRows(rej.Rows, rej.Failed, from)
			if err != nil {
				return err
			}
			qev, err := quarantineEvent(u.store, u.event(domain.EventBatchCommitted, domain.LevelInfo, "", domain.Details{}), f.Target, qrows, 0, false)
			if err != nil {
				return err
			}
			evs = append(evs, qev)
		}
	}
	return u.commit(ctx, batchEv, rows, evs...)
}

// committed tells the flow's source (a domain.Committer) that every
// micro-batch up to end committed. A source that fails to hear it keeps
// its data longer, which loses nothing: it is logged, and the next commit
// tells it again.
func (r *flowRun) committed(ctx context.Context, end domain.Offset) {
	c, ok := r.in.main.(domain.Committer)
	if !ok || r.in.listsEnds() || end == nil {
		return
	}
	if err := c.Committed(ctx, end); err != nil {
		r.u.opts.Logger.Warn().Str("update", shortID(r.u.id)).Str("flow", r.f.Name).Err(err).Msg("the source did not take the commit; it keeps its data until the next one")
	}
}

// fitSchema checks a batch against the target table's schema (declared, or
// the one its batches evolved to), evolves the schema where the rules allow,
// and returns the batch in the table's column order. When the schema changes
// (or the table gets its first), info carries the new one.
func (r *flowRun) fitSchema(info *domain.BatchInfo, rows *domain.Batch) (*domain.Batch, error) {
	table := r.f.Target
	declared := r.target.Schema
	var cur *domain.Schema
	if r.f.Type != domain.FlowMaterializedView { // a recompute starts the table afresh
		var err error
		if cur, err = r.u.store.TableSchema(table); err != nil {
			return nil, err
		}
	}
	if rows.Len() == 0 && len(rows.Columns) == 0 {
		if cur == nil && declared != nil {
			info.Schema = declared
		}
		return rows, nil // nothing to write, nothing to check
	}
	base := cur
	if base == nil {
		base = declared
	}
	if base == nil {
		info.Schema = &rows.Schema
		return rows, nil
	}
	next, err := domain.EvolveSchema(table, *base, rows.Schema, declared != nil)
	if err != nil {
		return nil, err
	}
	if cur == nil || !next.Equal(*cur) {
		info.Schema = &next
	}
	return domain.Conform(table, rows, next)
}
