package eventstore

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

// Topic is the watermill topic committed events are published on.
//
// Every committed event is published once, after its commit, as a message
// whose UUID is the event's ID, whose payload is the event as JSON (the
// domain.Event JSON form; Data, the bulk payload, is not included), and whose
// metadata holds "seq" (decimal), "event_type", "flow", "dataset" and
// "update" (the origin's flow_name, dataset_name and update_id; empty when
// unset). Events are published in seq order by one publisher goroutine, fed by
// an unbounded in-memory queue: the bus never slows down or blocks Append.
//
// Publication is best effort: publishing errors are logged and the event is
// skipped, events still queued at Close are dropped, and a crash loses the
// queue. The log is the truth; a consumer that must see every event reads it
// with Tail.
const Topic = "sluice.events"

// busConfig configures the default in-process bus.
//
// BlockPublishUntilSubscriberAck is true: gochannel hands every message to
// every subscriber in a goroutine of its own, so without waiting for the Ack
// of message n before sending n+1, subscribers get messages out of order.
// Waiting keeps seq order; the cost is that a subscriber that does not Ack
// holds up the bus (for every subscriber) while the store's queue grows. The
// committer is never held up.
var busConfig = gochannel.Config{
	OutputChannelBuffer:            1024,
	Persistent:                     false,
	BlockPublishUntilSubscriberAck: true,
}

// Subscribe subscribes to Topic on the store's subscriber and returns the
// channel of messages, which closes when ctx ends or the store closes.
//
// Subscribers must Ack every message (or Nack it to get it again): on the
// default bus the next event is not published until every subscriber has
// acknowledged the current one, so a subscriber that neither reads nor Acks
// stops delivery to all subscribers (never Append; the store queues events in
// memory meanwhile, without bound). A subscriber sees the events published
// after it subscribed; for history, or for a guarantee of seeing every event,
// use Tail.
func (s *Store) Subscribe(ctx context.Context) (<-chan *message.Message, error) {
	if s.isClosed() {
		return nil, errClosed()
	}
	ch, err := s.sub.Subscribe(ctx, Topic)
	if err != nil {
		return nil, domain.Wrap(domain.CodeStoreIO, err, "subscribing to "+Topic).
			WithHint("check the bus given with WithBus; the events are in the log either way (use Tail)")
	}
	return ch, nil
}

// pubQueue is the unbounded queue between the committer and the publisher.
type pubQueue struct {
	mu     sync.Mutex
	items  []*domain.Event
	closed bool
	wake   chan struct{} // capacity 1: "there is something to do"
}

func newPubQueue() *pubQueue { return &pubQueue{wake: make(chan struct{}, 1)} }

// push queues committed events; it never blocks.
func (q *pubQueue) push(evs []*domain.Event) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, evs...)
	q.mu.Unlock()
	q.signal()
}

func (q *pubQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close makes pop return false and drops what is queued.
func (q *pubQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *pubQueue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// pop waits for queued events and takes them all; ok is false once the queue
// is closed. dropped counts the events left behind then.
func (q *pubQueue) pop() (evs []*domain.Event, dropped int, ok bool) {
	for {
		q.mu.Lock()
		if q.closed {
			dropped = len(q.items)
			q.items = nil
			q.mu.Unlock()
			return nil, dropped, false
		}
		if len(q.items) > 0 {
			evs, q.items = q.items, nil
			q.mu.Unlock()
			return evs, 0, true
		}
		q.mu.Unlock()
		<-q.wake
	}
}

// runPublisher publishes queued events in order until the queue closes.
func (s *Store) runPublisher() {
	defer s.pubWG.Done()
	for {
		evs, dropped, ok := s.queue.pop()
		if !ok {
			if dropped > 0 {
				s.log.Warn().Int("events", dropped).Msg("store closed before these committed events were published on the bus; they are in the log")
			}
			return
		}
		for i, ev := range evs {
			if s.queue.isClosed() {
				s.log.Warn().Int("events", len(evs)-i).Msg("store closed before these committed events were published on the bus; they are in the log")
				break
			}
			msg, err := eventMessage(ev)
			if err == nil {
				err = s.pub.Publish(Topic, msg)
			}
			if err != nil {
				s.log.Error().Err(err).Uint64("seq", ev.Seq).Str("event_type", string(ev.Type)).Msg("publishing a committed event on the bus")
			}
		}
	}
}

// eventMessage builds the bus message of a committed event.
func eventMessage(ev *domain.Event) (*message.Message, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	msg := message.NewMessage(ev.ID, payload)
	msg.Metadata.Set("seq", strconv.FormatUint(ev.Seq, 10))
	msg.Metadata.Set("event_type", string(ev.Type))
	msg.Metadata.Set("flow", ev.Origin.FlowName)
	msg.Metadata.Set("dataset", ev.Origin.DatasetName)
	msg.Metadata.Set("update", ev.Origin.UpdateID)
	return msg, nil
}

// watermillLogger routes the default bus's log lines to zerolog, one level
// down: gochannel logs every message published without subscribers at info.
type watermillLogger struct {
	l zerolog.Logger
}

var _ watermill.LoggerAdapter = watermillLogger{}

func (w watermillLogger) Error(msg string, err error, fields watermill.LogFields) {
	w.l.Error().Err(err).Fields(map[string]any(fields)).Msg(msg)
}
func (w watermillLogger) Info(msg string, fields watermill.LogFields) {
	w.l.Debug().Fields(map[string]any(fields)).Msg(msg)
}
func (w watermillLogger) Debug(msg string, fields watermill.LogFields) {
	w.l.Trace().Fields(map[string]any(fields)).Msg(msg)
}
func (w watermillLogger) Trace(msg string, fields watermill.LogFields) {
	w.l.Trace().Fields(map[string]any(fields)).Msg(msg)
}
func (w watermillLogger) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return watermillLogger{l: w.l.With().Fields(map[string]any(fields)).Logger()}
}
