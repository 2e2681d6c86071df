// Package watermill reads the messages of any Watermill subscriber into
// sluice's tables, exactly once, with NATS JetStream and AMQP (RabbitMQ)
// wired in by options (read_nats, read_amqp).
//
// A broker's queue is not a log a micro-batch can read twice: it hands out
// a message, and forgets it once acknowledged. So each message is first
// written to the source's spool (a directory of the pipeline's storage),
// synced, and only then acknowledged; micro-batches read ranges of the
// spool, and the spool lets go of a range when its micro-batch commits. A
// crash before the acknowledgement makes the broker deliver the message
// again: one the spool already holds (by the message's UUID, among the last
// 100,000) is acknowledged and not taken twice.
package watermill

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/sluicehq/sluice/domain"
)

// Schema is the rows a message source gives: one per message.
var Schema = domain.NewSchema(
	domain.Field{Name: "uuid", Type: domain.TypeString},
	domain.Field{Name: "payload", Type: domain.TypeBytes, Nullable: true},
	domain.Field{Name: "metadata", Type: domain.MapOf(domain.TypeString, domain.TypeString), Nullable: true},
	domain.Field{Name: "topic", Type: domain.TypeString},
	domain.Field{Name: "received_at", Type: domain.TypeTimestamp},
	domain.Field{Name: "offset", Type: domain.TypeInt64},
)

// Options configure a message source.
type Options struct {
	// Name names the source in events and messages, as "nats subject orders".
	Name string
	// Topic is what is subscribed to: a subject, a queue.
	Topic string
	// NewSubscriber makes the subscriber when an update first plans; it is
	// closed when the update ends.
	NewSubscriber func() (message.Subscriber, error)
	// Spool is the directory the messages are kept in until committed; it
	// belongs to this source alone.
	Spool string
	// Consumers is how many subscriptions take messages at once (1 by
	// default). Watermill hands each subscription one message at a time:
	// more consumers take more messages per sync of the spool, and give up
	// the topic's order.
	Consumers int
	// MaxMessagesPerTrigger bounds a micro-batch (10,000 by default).
	MaxMessagesPerTrigger int64
	// Quiet is how long a plan waits for a message when none is spooled
	// and one came (or the subscription started) less than Quiet ago (500
	// ms by default): a triggered update takes what the broker holds, and
	// ends when it has been quiet that long.
	Quiet time.Duration
}

// Source is a Watermill subscriber read through a spool.
type Source struct {
	opts Options

	mu       sync.Mutex
	spool    *spool
	sub      message.Subscriber
	stop     context.CancelFunc
	stopped  chan struct{} // closed when the writer ends
	err      error         // why the writer ended early
	reopen   bool          // the spool is read again from its files
	lastSeen time.Time     // the last message, or the subscription's start
}

// New makes a source; it subscribes on its first plan.
func New(opts Options) (*Source, error) {
	if opts.Topic == "" || opts.NewSubscriber == nil || opts.Spool == "" {
		return nil, domain.Errorf(domain.CodeSourceOptionInvalid, "a message source needs a topic, a subscriber and a spool directory")
	}
	if opts.Consumers <= 0 {
		opts.Consumers = 1
	}
	if opts.MaxMessagesPerTrigger <= 0 {
		opts.MaxMessagesPerTrigger = 10_000
	}
	if opts.Quiet <= 0 {
		opts.Quiet = 500 * time.Millisecond
	}
	if opts.Name == "" {
		opts.Name = "messages of " + opts.Topic
	}
	return &Source{opts: opts}, nil
}

func (s *Source) String() string { return s.opts.Name }

// Spool is the source's spool directory.
func (s *Source) Spool() string { return s.opts.Spool }

// position is a micro-batch's end: the messages [From, Next) of the spool.
type position struct {
	From int64 `json:"from"`
	Next int64 `json:"next"`
}

func parsePosition(o domain.Offset) (position, error) {
	var p position
	if err := json.Unmarshal(o, &p); err != nil {
		return p, domain.Errorf(domain.CodeCheckpointInvalid, "the message source offset %s cannot be read: %v", o, err)
	}
	if p.From < 0 || p.Next < p.From {
		return p, domain.Errorf(domain.CodeCheckpointInvalid, "the message source offset %s is not a range of messages", o)
	}
	return p, nil
}

// openSpool opens the spool if it is not open.
func (s *Source) openSpool() (*spool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spool == nil {
		sp, err := openSpool(s.opts.Spool)
		if err != nil {
			return nil, err
		}
		s.spool = sp
	}
	return s.spool, nil
}

// subscribe starts taking messages, if it is not: Consumers
// subscriptions, and one writer that spools what they hand out, syncs, and
// acknowledges.
func (s *Source) subscribe() (*spool, error) {
	sp, err := s.openSpool()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sub != nil {
		if s.err != nil {
			err := s.err
			s.closeLocked() // the next plan subscribes again
			if s.reopen {
				_ = s.spool.close() // and reads the spool from its files
				s.spool, s.reopen = nil, false
			}
			return nil, err
		}
		return sp, nil
	}
	sub, err := s.opts.NewSubscriber()
	if err != nil {
		return nil, domain.Wrap(domain.CodeSourceUnavailable, err, s.opts.Name).AsRetriable()
	}
	ctx, stop := context.WithCancel(context.Background())
	in := make(chan *message.Message)
	for range s.opts.Consumers {
		ch, err := sub.Subscribe(ctx, s.opts.Topic)
		if err != nil {
			stop()
			_ = sub.Close()
			return nil, domain.Wrap(domain.CodeSourceUnavailable, err, s.opts.Name).AsRetriable()
		}
		go func() {
			for m := range ch {
				select {
				case in <- m:
				case <-ctx.Done():
					m.Nack()
					return
				}
			}
		}()
	}
	s.sub, s.stop, s.stopped, s.err, s.lastSeen = sub, stop, make(chan struct{}), nil, time.Now()
	go s.write(ctx, sp, in, s.stopped)
	return sp, nil
}

// write spools the messages as they come, up to 256 a sync, and
// acknowledges them once synced.
func (s *Source) write(ctx context.Context, sp *spool, in <-chan *message.Message, stopped chan struct{}) {
	defer close(stopped)
	for {
		var group []*message.Message
		select {
		case m := <-in:
			group = append(group, m)
		case <-ctx.Done():
			return
		}
	more:
		for len(group) < 256 {
			select {
			case m := <-in:
				group = append(group, m)
			default:
				break more
			}
		}
		now := time.Now()
		var take []spooled
		var taken, repeats []*message.Message
		inGroup := map[string]bool{}
		for _, m := range group {
			if sp.seen(m.UUID) {
				m.Ack() // spooled (and synced) before a lost acknowledgement
				continue
			}
			if m.UUID != "" && inGroup[m.UUID] {
				repeats = append(repeats, m) // acknowledged once its first is synced
				continue
			}
			inGroup[m.UUID] = true
			sm := spooled{UUID: m.UUID, Topic: s.opts.Topic, ReceivedAt: now.UnixMicro(), Payload: m.Payload}
			for k, v := range m.Metadata {
				sm.Metadata = append(sm.Metadata, [2]string{k, v})
			}
			sort.Slice(sm.Metadata, func(i, j int) bool { return sm.Metadata[i][0] < sm.Metadata[j][0] })
			take, taken = append(take, sm), append(taken, m)
		}
		if err := sp.append(take); err != nil {
			// nothing of the group is acknowledged: the broker delivers it
			// again, to a spool opened afresh from its files (this one's
			// memory may count what the failure left unwritten)
			for _, m := range append(taken, repeats...) {
				m.Nack()
			}
			s.mu.Lock()
			s.err, s.reopen = err, true
			s.mu.Unlock()
			return
		}
		for _, m := range append(taken, repeats...) {
			m.Ack()
		}
		s.mu.Lock()
		s.lastSeen = now
		s.mu.Unlock()
	}
}

// Plan returns the messages spooled after start, at most
// MaxMessagesPerTrigger and limit's rows. With none spooled, it waits while
// messages are coming (see Options.Quiet).
func (s *Source) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	sp, err := s.subscribe()
	if err != nil {
		return nil, false, err
	}
	first, next, changed := sp.bounds()
	from := first
	if start != nil {
		p, err := parsePosition(start)
		if err != nil {
			return nil, false, err
		}
		if p.Next > next {
			return nil, false, domain.Errorf(domain.CodeCheckpointInvalid, "the flow read up to message %d of the spool %s, which holds messages up to %d", p.Next, s.opts.Spool, next).
				WithHint("the spool was deleted or replaced: run a full refresh of the flow")
		}
		if p.Next < first {
			return nil, false, domain.Errorf(domain.CodeCheckpointInvalid, "the flow read up to message %d of the spool %s, which now starts at %d", p.Next, s.opts.Spool, first).
				WithHint("the spool belongs to one source: give each read its own durable name or queue")
		}
		from = p.Next
	}
	for next <= from {
		s.mu.Lock()
		wait, stopped := time.Until(s.lastSeen.Add(s.opts.Quiet)), s.stopped
		s.mu.Unlock()
		if wait <= 0 {
			return nil, false, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-changed:
		case <-t.C:
		case <-stopped:
		case <-ctx.Done():
			t.Stop()
			return nil, false, ctx.Err()
		}
		t.Stop()
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return nil, false, err
		}
		_, next, changed = sp.bounds()
	}
	n := min(next-from, s.opts.MaxMessagesPerTrigger)
	if limit.MaxRows > 0 {
		n = min(n, limit.MaxRows)
	}
	end, err := json.Marshal(position{From: from, Next: from + n})
	return end, err == nil, err
}

// Read returns the messages of the range, from the spool.
func (s *Source) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	sp, err := s.openSpool()
	if err != nil {
		return nil, err
	}
	to, err := parsePosition(end)
	if err != nil {
		return nil, err
	}
	from := to.From
	if start != nil {
		p, err := parsePosition(start)
		if err != nil {
			return nil, err
		}
		from = p.Next
	}
	b := domain.NewBatch(Schema, int(to.Next-from))
	err = sp.read(from, to.Next, func(n int64, m spooled) error {
		var meta domain.Value
		if len(m.Metadata) > 0 {
			entries := make([]domain.Value, len(m.Metadata))
			for i, kv := range m.Metadata {
				entries[i] = domain.MapEntry(domain.String(kv[0]), domain.String(kv[1]))
			}
			meta = domain.Map(entries...)
		}
		return b.AppendRow(domain.String(m.UUID), domain.Bytes(m.Payload), meta, domain.String(m.Topic), domain.TimestampMicros(m.ReceivedAt), domain.Int(n))
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b, nil
}

// Committed lets the spool delete what the committed micro-batches read.
func (s *Source) Committed(_ context.Context, end domain.Offset) error {
	sp, err := s.openSpool()
	if err != nil {
		return err
	}
	p, err := parsePosition(end)
	if err != nil {
		return err
	}
	return sp.release(p.Next)
}

// Close stops taking messages (those handed out and not spooled go back to
// the broker) and closes the spool; the next plan opens both again.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
	if s.spool != nil {
		_ = s.spool.close()
		s.spool = nil
	}
}

func (s *Source) closeLocked() {
	if s.sub == nil {
		return
	}
	sub, stopped := s.sub, s.stopped
	s.sub = nil
	s.stop()
	s.mu.Unlock()
	<-stopped // the writer acknowledges what it synced
	s.mu.Lock()
	_ = sub.Close()
}
