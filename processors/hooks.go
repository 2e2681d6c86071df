package processors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// A Hook is told of the events it matches once they are in the log. Hooks
// run beside the pipeline, reading the log: a slow or failing hook holds no
// flow back, and what it has not been told yet waits in the log.
type Hook struct {
	// Name identifies the hook in its hook_progress events, and in the
	// idempotency key of each delivery.
	Name string
	// Match says whether the hook is told of an event, and why (the
	// trigger: "flow_failed", or the event's type).
	Match func(*domain.Event) (trigger string, ok bool)
	// Types are the event types Match can match (every type when empty):
	// the hook then reads only those of the log, through their indexes.
	Types []domain.EventType
	// Deliver tells the hook of one event. An error is retried with
	// backoff; after the last retry the delivery goes to the poison queue:
	// a hook_progress event records it FAILED and the hook goes on with the
	// next event.
	Deliver func(ctx context.Context, d domain.HookDelivery) error
	// Retries after the first try (5 by default), from 200 ms doubling to
	// at most 10 s between tries.
	Retries int
}

// HookStatus is the outcome of a delivery in its hook_progress event.
const (
	HookDelivered = "DELIVERED"
	HookFailed    = "FAILED"
)

// HookRunner delivers the events of a store's log to hooks, each hook its
// events one at a time in log order (through a Watermill router: retry
// with backoff, then a poison queue). A hook starts after the last event a
// hook_progress records for it, or at from when none does, so a process
// that ended before telling a hook everything tells it the rest next time.
type HookRunner struct {
	store   *eventstore.Store
	log     zerolog.Logger
	router  *message.Router
	ctx     context.Context // ends when the runner closes
	cancel  context.CancelFunc
	workers []*hookWorker
	wg      sync.WaitGroup
}

type hookWorker struct {
	hook  Hook
	mu    sync.Mutex
	next  uint64 // the seq of the next event to look at
	event *domain.Event
	trig  string
}

func (w *hookWorker) done() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// StartHooks starts delivering to hooks the events from seq from on (for a
// hook with no hook_progress yet).
func StartHooks(ctx context.Context, store *eventstore.Store, hooks []Hook, from uint64, log zerolog.Logger) (*HookRunner, error) {
	if len(hooks) == 0 {
		return nil, nil
	}
	resume := map[string]uint64{}
	err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventHookProgress}}, func(ev *domain.Event) error {
		if hp := ev.Details.HookProgress; hp != nil {
			resume[hp.Hook] = max(resume[hp.Hook], hp.Seq+1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	wlog := watermill.NopLogger{}
	pubsub := gochannel.NewGoChannel(gochannel.Config{BlockPublishUntilSubscriberAck: true}, wlog)
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 5 * time.Second}, wlog)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// a delivery cut off by Close is no failure: the next runner makes it
	poison, err := middleware.PoisonQueueWithFilter(pubsub, "hooks.poison", func(error) bool { return runCtx.Err() == nil })
	if err != nil {
		cancel()
		return nil, err
	}
	router.AddMiddleware(poison)
	r := &HookRunner{store: store, log: log, router: router, ctx: runCtx, cancel: cancel}
	for _, h := range hooks {
		if h.Retries == 0 {
			h.Retries = 5
		}
		w := &hookWorker{hook: h, next: max(from, 1)}
		if at, ok := resume[h.Name]; ok {
			w.next = at
		}
		r.workers = append(r.workers, w)
		retry := middleware.Retry{MaxRetries: max(h.Retries, 0), InitialInterval: 200 * time.Millisecond, MaxInterval: 10 * time.Second, Multiplier: 2}
		withRetry := retry.Middleware(r.deliver(w))
		router.AddConsumerHandler("hook "+h.Name, "hook."+h.Name, pubsub, func(msg *message.Message) error {
			_, err := withRetry(msg)
			return err
		})
	}
	router.AddConsumerHandler("hooks poison queue", "hooks.poison", pubsub, r.poisoned)
	go func() { _ = router.Run(runCtx) }()
	select {
	case <-router.Running():
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	for _, w := range r.workers {
		r.wg.Add(1)
		go r.tail(runCtx, w, pubsub)
	}
	return r, nil
}

// tail reads the log from the worker's place and hands each matching event
// to the router, waiting until it is delivered or poisoned.
func (r *HookRunner) tail(ctx context.Context, w *hookWorker, pub message.Publisher) {
	defer r.wg.Done()
	err := r.store.Tail(ctx, eventstore.Filter{From: w.done(), Types: w.hook.Types}, func(ev *domain.Event) error {
		trig, ok := "", false
		if ev.Type != domain.EventHookProgress { // hooks are not told of hooks
			trig, ok = w.hook.Match(ev)
		}
		if ok {
			w.mu.Lock()
			w.event, w.trig = ev, trig
			w.mu.Unlock()
			msg := message.NewMessage(strconv.FormatUint(ev.Seq, 10), nil)
			msg.Metadata.Set("hook", w.hook.Name)
			msg.Metadata.Set("seq", strconv.FormatUint(ev.Seq, 10))
			if err := pub.Publish("hook."+w.hook.Name, msg); err != nil {
				return err
			}
		}
		w.mu.Lock()
		w.next = ev.Seq + 1
		w.mu.Unlock()
		return nil
	})
	if err != nil && ctx.Err() == nil {
		r.log.Warn().Err(err).Str("hook", w.hook.Name).Msg("the hook stopped reading the log")
	}
}

// deliver is a hook's handler: one try of the event being delivered.
func (r *HookRunner) deliver(w *hookWorker) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		w.mu.Lock()
		ev, trig := w.event, w.trig
		w.mu.Unlock()
		attempt, _ := strconv.Atoi(msg.Metadata.Get("attempt"))
		attempt++
		msg.Metadata.Set("attempt", strconv.Itoa(attempt))
		err := w.hook.Deliver(msg.Context(), domain.HookDelivery{Hook: w.hook.Name, Trigger: trig, IdempotencyKey: ev.ID + ":" + w.hook.Name, Attempt: attempt, Event: ev})
		if err != nil && r.ctx.Err() != nil {
			return nil, err // cut off by Close: neither delivered nor failed
		}
		if err != nil {
			r.log.Warn().Str("hook", w.hook.Name).Uint64("event", ev.Seq).Int("attempt", attempt).Err(err).Msg("hook delivery failed")
			return nil, err
		}
		return nil, r.record(msg.Context(), w.hook.Name, ev.Seq, HookDelivered, attempt, nil)
	}
}

// poisoned records a delivery that failed its last try.
func (r *HookRunner) poisoned(msg *message.Message) error {
	if r.ctx.Err() != nil {
		return nil // closing: the next runner tries it again
	}
	seq, _ := strconv.ParseUint(msg.Metadata.Get("seq"), 10, 64)
	attempts, _ := strconv.Atoi(msg.Metadata.Get("attempt"))
	cause := domain.Errorf(domain.CodeHookDeliveryFailed, "hook %q was not told of event %d after %d tries: %s", msg.Metadata.Get("hook"), seq, attempts, msg.Metadata.Get(middleware.ReasonForPoisonedKey)).
		WithHint("check that the hook's receiver runs and answers 2xx; the event stays in the log (sluice events --since SEQ)")
	return r.record(msg.Context(), msg.Metadata.Get("hook"), seq, HookFailed, attempts, cause)
}

func (r *HookRunner) record(ctx context.Context, hook string, seq uint64, status string, attempts int, cause error) error {
	ev := &domain.Event{Type: domain.EventHookProgress, Level: domain.LevelInfo,
		Message: fmt.Sprintf("Hook %q: event %d %s after %d tries.", hook, seq, status, attempts),
		Details: domain.Details{HookProgress: &domain.HookProgress{Hook: hook, Seq: seq, Status: status, Attempts: attempts}}}
	if cause != nil {
		ev.Level, ev.Error = domain.LevelWarn, domain.ErrorInfoOf(cause)
	}
	_, err := r.store.Append(context.WithoutCancel(ctx), ev)
	return err
}

// Close delivers what the log holds now, waiting at most wait, and stops.
// It returns how many hooks were left with events to tell when the wait
// ran out: the next runner tells them.
func (r *HookRunner) Close(wait time.Duration) (left int, err error) {
	if r == nil {
		return 0, nil
	}
	last := r.store.LastSeq()
	deadline := time.Now().Add(wait)
	targets := make([]uint64, len(r.workers)) // each hook's last event to tell
	for i, w := range r.workers {
		_ = r.store.Scan(context.Background(), eventstore.Filter{From: w.done(), To: last, Types: w.hook.Types}, func(ev *domain.Event) error {
			if ev.Type != domain.EventHookProgress {
				if _, ok := w.hook.Match(ev); ok {
					targets[i] = ev.Seq
				}
			}
			return nil
		})
		for w.done() <= targets[i] && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	r.cancel()
	r.wg.Wait()
	err = r.router.Close()
	for i, w := range r.workers {
		if w.done() <= targets[i] {
			left++
		}
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return left, err
}

// HookTriggers are the names a hook's on list takes besides event types:
// an update or a flow ending so, and an expectation failing rows.
var HookTriggers = []string{"update_completed", "update_failed", "update_canceled", "flow_completed", "flow_failed", "flow_stopped", "expectation_failed"}

// HookMatcher makes a hook's Match from the names of its on list (the
// triggers, or event types) and, for expectation_failed, the failure rate
// (failed over checked rows of a flow's run) from which it fires (any
// failed row when 0).
func HookMatcher(on []string, minFailureRate float64) (match func(*domain.Event) (string, bool), types []domain.EventType, err error) {
	want := map[string]bool{}
	known := map[string]bool{}
	for _, t := range HookTriggers {
		known[t] = true
	}
	for _, t := range domain.EventTypes {
		known[string(t)] = true
	}
	for _, name := range on {
		if !known[name] {
			return nil, nil, domain.Errorf(domain.CodeInvalidOptions, "an event hook cannot be on %q", name).
				WithHint("on takes " + fmt.Sprint(HookTriggers) + " and the event types")
		}
		want[name] = true
		t := domain.EventType(name)
		switch {
		case strings.HasPrefix(name, "update_") && !slices.Contains(domain.EventTypes, t):
			t = domain.EventUpdateProgress
		case strings.HasPrefix(name, "flow_") && !slices.Contains(domain.EventTypes, t), name == "expectation_failed":
			t = domain.EventFlowProgress
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(want) == 0 {
		return nil, nil, domain.Errorf(domain.CodeInvalidOptions, "an event hook needs a list of what it is on").
			WithHint("on takes " + fmt.Sprint(HookTriggers) + " and the event types")
	}
	match = func(ev *domain.Event) (string, bool) {
		switch {
		case ev.Type == domain.EventUpdateProgress && ev.Details.UpdateProgress != nil:
			if t := "update_" + strings.ToLower(string(ev.Details.UpdateProgress.State)); want[t] {
				return t, true
			}
		case ev.Type == domain.EventFlowProgress && ev.Details.FlowProgress != nil:
			// one delivery an event: expectation_failed says more than
			// the flow's end
			fp := ev.Details.FlowProgress
			if want["expectation_failed"] && fp.DataQuality != nil {
				for _, e := range fp.DataQuality.Expectations {
					if n := e.PassedRecords + e.FailedRecords; e.FailedRecords > 0 && float64(e.FailedRecords)/float64(n) >= minFailureRate {
						return "expectation_failed", true
					}
				}
			}
			if t := "flow_" + strings.ToLower(string(fp.Status)); want[t] {
				return t, true
			}
		}
		if want[string(ev.Type)] {
			return string(ev.Type), true
		}
		return "", false
	}
	return match, types, nil
}
