package processors

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/domain"
)

// scheduler starts each flow of an update when its predecessors finished,
// but the flows that run beside the writers of what they read.
//
// In a triggered update a flow waits for every predecessor: the flows it
// names in depends_on and the flows that write what it reads; but a
// streaming flow runs beside the writers of the tables it reads only as
// streams (its leaders), taking their batches as they commit, woken by
// their commits, and finishes once they have and it has read all they
// wrote. In a continuous update only depends_on gates a start (those
// predecessors are once flows, which finish); readers of a table run beside
// its writers and are woken by their commits.
type scheduler struct {
	u    *update
	plan *updatePlan
	sem  chan struct{} // one token per running micro-batch

	mu     sync.Mutex
	status map[string]domain.FlowStatus
	reason map[string]string

	tableLocks map[string]*sync.Mutex  // stored dataset -> held while a batch commits to it
	changes    map[string]*changeTable // stored dataset -> its keyed state, when AUTO CDC flows write it

	readers map[string][]string      // stored dataset -> flows that stream from it
	wake    map[string]chan struct{} // flow -> its wake-up signal (continuous, and followers)

	leaders   map[string][]string // flow -> the predecessors it runs beside (triggered)
	followers map[string][]string // flow -> the flows that run beside it
}

func newScheduler(u *update, plan *updatePlan) *scheduler {
	s := &scheduler{
		u:          u,
		plan:       plan,
		sem:        make(chan struct{}, u.opts.MaxConcurrentFlows),
		status:     map[string]domain.FlowStatus{},
		reason:     map[string]string{},
		readers:    map[string][]string{},
		wake:       map[string]chan struct{}{},
		tableLocks: map[string]*sync.Mutex{},
		changes:    map[string]*changeTable{},
	}
	for name := range u.g.Datasets {
		s.tableLocks[name] = &sync.Mutex{}
		s.changes[name] = &changeTable{}
	}
	for _, name := range u.runnableFlows() {
		f := u.g.Flows[name]
		for _, in := range f.Query.Inputs() {
			if in.Dataset != "" {
				s.readers[in.Dataset] = append(s.readers[in.Dataset], name)
			}
		}
		s.wake[name] = make(chan struct{}, 1)
	}
	s.leaders, s.followers = leaders(u.g, u.runnableFlows())
	return s
}

// leaders finds, in a triggered update, the predecessors each flow runs
// beside: the writers of a table it reads, when it reads that table only as
// a stream. A flow that recomputes (a materialized view), a once flow and
// a reader of the event log wait for all their predecessors, as does any
// flow for those it names in depends_on.
func leaders(g *domain.Graph, flows []string) (leaders, followers map[string][]string) {
	leaders, followers = map[string][]string{}, map[string][]string{}
	if g.Continuous {
		return leaders, followers
	}
	for _, name := range flows {
		f := g.Flows[name]
		if f.Query == nil || f.Recomputes() || f.Once {
			continue
		}
		streamOnly := map[string]bool{} // dataset -> read only as a stream
		readsLog := false
		for _, in := range f.Query.Inputs() {
			if _, ok := in.Source.(EventLog); ok {
				readsLog = true
			}
			if in.Dataset == "" {
				continue
			}
			if only, seen := streamOnly[in.Dataset]; seen {
				streamOnly[in.Dataset] = only && in.Streaming
			} else {
				streamOnly[in.Dataset] = in.Streaming
			}
		}
		if readsLog {
			continue
		}
		for _, p := range g.Preds[name] {
			if !slices.Contains(g.DependsOn[name], p) && streamOnly[g.Flows[p].Target] {
				leaders[name] = append(leaders[name], p)
				followers[p] = append(followers[p], name)
			}
		}
	}
	return leaders, followers
}

type flowDone struct {
	flow   string
	status domain.FlowStatus
	reason string
	err    error
}

// setStatus records where a flow stands; a flow that ended wakes the flows
// that run beside it, however it ended (skipped without starting too).
func (s *scheduler) setStatus(flow string, st domain.FlowStatus, reason string) {
	s.mu.Lock()
	s.status[flow], s.reason[flow] = st, reason
	s.mu.Unlock()
	if st.Terminal() {
		for _, f := range s.followers[flow] {
			select {
			case s.wake[f] <- struct{}{}:
			default: // already signaled
			}
		}
	}
}

func (s *scheduler) finalStatuses() map[string]domain.FlowStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]domain.FlowStatus, len(s.status))
	for k, v := range s.status {
		out[k] = v
	}
	return out
}

// succeeded reports whether a finished flow lets its successors start.
func (s *scheduler) succeeded(flow string) bool {
	switch s.status[flow] {
	case domain.FlowCompleted, domain.FlowExcluded:
		return true
	case domain.FlowSkipped:
		return s.reason[flow] == domain.SkipAlreadyDrained
	}
	return false
}

func (s *scheduler) gates(flow string) []string {
	if s.u.g.Continuous {
		return s.u.g.DependsOn[flow]
	}
	var out []string
	for _, p := range s.u.g.Preds[flow] {
		if !slices.Contains(s.leaders[flow], p) {
			out = append(out, p)
		}
	}
	return out
}

type leading int

const (
	leadersRunning leading = iota // some leader has not finished
	leadersDone                   // every leader succeeded
	leadersFailed                 // a leader failed, stopped or was skipped
)

// leaderState says where the leaders of flow stand, and names a leader
// that did not succeed.
func (s *scheduler) leaderState(flow string) (leading, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := leadersDone
	for _, p := range s.leaders[flow] {
		switch st := s.status[p]; {
		case !st.Terminal():
			state = leadersRunning
		case !s.succeeded(p):
			return leadersFailed, p
		}
	}
	return state, ""
}

// run runs every flow of the update and returns the first flow failure.
func (s *scheduler) run(ctx context.Context) error {
	u := s.u
	defer func() {
		for _, t := range s.changes {
			_ = t.close() // a spill is scratch: failing to remove it loses nothing
		}
	}()
	flows := u.g.Order
	var initial []*domain.Event
	var pending []string
	for _, name := range flows {
		f := u.g.Flows[name]
		if f.Type == domain.FlowView {
			continue
		}
		switch {
		case s.plan.excluded[name]:
			s.setStatus(name, domain.FlowExcluded, "")
			initial = append(initial, u.flowProgress(f, domain.FlowExcluded, "", nil))
		case f.Once:
			cp, err := u.store.Checkpoint(name)
			if err != nil {
				return err
			}
			if cp.Drained {
				s.setStatus(name, domain.FlowSkipped, domain.SkipAlreadyDrained)
				initial = append(initial, u.flowProgress(f, domain.FlowSkipped, domain.SkipAlreadyDrained, nil))
				continue
			}
			fallthrough
		default:
			s.setStatus(name, domain.FlowQueued, "")
			initial = append(initial, u.flowProgress(f, domain.FlowQueued, "", nil))
			pending = append(pending, name)
		}
	}
	if err := u.append(ctx, initial...); err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if u.g.Continuous || len(s.leaders) > 0 {
		if err := s.listen(runCtx); err != nil {
			return err
		}
	}
	done := make(chan flowDone, len(pending)) // a flow can always report, even after run returned
	running := 0
	var firstErr error
	for {
		// Start, or skip, every pending flow whose gates are all finished.
		for progress := true; progress; {
			progress = false
			var still []string
			for _, name := range pending {
				switch s.gateState(name) {
				case gatesPending, gatesStopped:
					still = append(still, name) // a stopped gate: the update is canceled, this flow ends STOPPED
				case gatesFailed:
					s.setStatus(name, domain.FlowSkipped, domain.SkipUpstreamFailed)
					ev := u.flowProgress(u.g.Flows[name], domain.FlowSkipped, domain.SkipUpstreamFailed, nil)
					ev.Level = domain.LevelWarn
					if err := u.append(ctx, ev); err != nil {
						return err
					}
					progress = true
				case gatesPassed:
					if runCtx.Err() != nil {
						still = append(still, name) // canceled: it ends STOPPED
						continue
					}
					s.setStatus(name, domain.FlowStarting, "")
					running++
					go func(name string) {
						st, reason, err := s.runFlow(runCtx, u.g.Flows[name])
						done <- flowDone{flow: name, status: st, reason: reason, err: err}
					}(name)
					progress = true
				}
			}
			pending = still
		}
		if running == 0 {
			break
		}
		d := <-done
		running--
		s.setStatus(d.flow, d.status, d.reason)
		if d.status == domain.FlowFailed {
			if firstErr == nil {
				firstErr = d.err
			}
			if u.g.Continuous {
				cancel() // a continuous update stops as a whole when a flow fails
			}
		}
	}
	// Flows that never started: the update was canceled.
	var stopped []*domain.Event
	for _, name := range pending {
		s.setStatus(name, domain.FlowStopped, "")
		stopped = append(stopped, u.flowProgress(u.g.Flows[name], domain.FlowStopped, "", nil))
	}
	if len(stopped) > 0 {
		if err := u.append(ctx, stopped...); err != nil {
			return err
		}
	}
	return firstErr
}

type gates int

const (
	gatesPending gates = iota // some gate has not finished
	gatesPassed               // every gate succeeded: the flow may start
	gatesFailed               // a gate failed, or was skipped because its own gate failed
	gatesStopped              // a gate was stopped by a cancel
)

// gateState says where the gates of flow stand.
func (s *scheduler) gateState(flow string) gates {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := gatesPassed
	for _, p := range s.gates(flow) {
		switch st := s.status[p]; {
		case !st.Terminal():
			return gatesPending
		case s.succeeded(p):
		case st == domain.FlowStopped && s.reason[p] != domain.SkipUpstreamFailed: // canceled
			if state == gatesPassed {
				state = gatesStopped
			}
		default:
			state = gatesFailed
		}
	}
	return state
}

// listen wakes the readers of a table whenever a batch commits to it, from
// the store's event bus.
func (s *scheduler) listen(ctx context.Context) error {
	msgs, err := s.u.store.Subscribe(ctx)
	if err != nil {
		return err
	}
	go func() {
		for msg := range msgs {
			switch domain.EventType(msg.Metadata.Get("event_type")) {
			case domain.EventBatchCommitted, domain.EventTableReset:
				s.wakeReaders(msg.Metadata.Get("dataset"))
			}
			msg.Ack()
		}
	}()
	return nil
}

// wakeReaders wakes the flows that read table.
func (s *scheduler) wakeReaders(table string) {
	for _, f := range s.readers[table] {
		select {
		case s.wake[f] <- struct{}{}:
		default: // already signaled
		}
	}
}

func (u *update) flowProgress(f *domain.Flow, st domain.FlowStatus, reason string, m *domain.FlowMetrics) *domain.Event {
	msg := fmt.Sprintf("Flow %q is %s.", f.Name, st)
	if reason != "" {
		msg = fmt.Sprintf("Flow %q is %s (%s).", f.Name, st, reason)
	}
	ev := u.event(domain.EventFlowProgress, domain.LevelInfo, msg,
		domain.Details{FlowProgress: &domain.FlowProgress{Status: st, Reason: reason, Metrics: m}})
	ev.Origin.FlowName, ev.Origin.DatasetName = f.Name, f.Target
	if m != nil {
		ev.Level = domain.LevelMetrics
	}
	return ev
}
