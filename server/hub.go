package server

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// A hub reads the log once for every follower of the event stream: one
// tail, each event made into its message once, handed to each follower
// that wants it. A follower that falls behind (its buffer full) leaves the
// hub and reads the log itself from where it was.
type hub struct {
	store *eventstore.Store

	mu     sync.Mutex
	next   uint64 // the seq of the next event the tail hands out
	subs   map[*sub]bool
	cancel context.CancelFunc // of the tail; nil when no one follows
	done   chan struct{}
}

// sub is a follower in the hub.
type sub struct {
	filter eventstore.Filter
	out    chan message
	// dropped closes when the hub lets the follower go for falling behind
	dropped chan struct{}
}

// message is an event made into its server-sent event.
type message struct {
	seq uint64
	sse []byte
}

const subBuffer = 1024

func newHub(store *eventstore.Store) *hub {
	return &hub{store: store, subs: map[*sub]bool{}}
}

// join adds a follower and returns the seq from which the hub hands it
// events: the follower reads the log itself before it.
func (h *hub) join(f eventstore.Filter) (*sub, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &sub{filter: f, out: make(chan message, subBuffer), dropped: make(chan struct{})}
	if h.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.next, h.cancel, h.done = h.store.LastSeq()+1, cancel, make(chan struct{})
		go h.tail(ctx, h.next, h.done)
	}
	h.subs[s] = true
	return s, h.next
}

// leave removes a follower; the tail stops with the last.
func (h *hub) leave(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
	if len(h.subs) == 0 && h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
}

func (h *hub) tail(ctx context.Context, from uint64, done chan struct{}) {
	defer close(done)
	_ = h.store.Tail(ctx, eventstore.Filter{From: from}, func(ev *domain.Event) error {
		var msg message
		h.mu.Lock()
		defer h.mu.Unlock()
		h.next = ev.Seq + 1
		for s := range h.subs {
			if !matches(s.filter, ev) {
				continue
			}
			if msg.sse == nil {
				b, err := sseOf(ev)
				if err != nil {
					return err
				}
				msg = message{seq: ev.Seq, sse: b}
			}
			select {
			case s.out <- msg:
			default: // behind: it reads the log itself from here
				delete(h.subs, s)
				close(s.dropped)
			}
		}
		return nil
	})
}

// sseOf is an event as a server-sent event.
func sseOf(ev *domain.Event) ([]byte, error) {
	b, err := domain.EventJSON(ev)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, b), nil
}

// matches is the filter's test of an event (eventstore's own, which its
// index walks apply).
func matches(f eventstore.Filter, ev *domain.Event) bool {
	return (len(f.Types) == 0 || slices.Contains(f.Types, ev.Type)) &&
		(f.Flow == "" || ev.Origin.FlowName == f.Flow) &&
		(f.Dataset == "" || ev.Origin.DatasetName == f.Dataset) &&
		(f.Update == "" || ev.Origin.UpdateID == f.Update) &&
		(f.To == 0 || ev.Seq <= f.To)
}
