// Package watermill writes micro-batches to any Watermill publisher, a
// message per row, with NATS JetStream and AMQP (RabbitMQ) wired in by
// options (CREATE SINK ... USING nats | amqp).
//
// The rows are as a message source gives them: a payload column (a string
// or binary), and optional uuid and metadata (a map of strings) columns.
// A row without a uuid gets one made of the pipeline, sink, flow, batch and
// row, the same when a crash delivers the batch again: JetStream drops such
// a repeat within its stream's duplicate window (two minutes by default),
// and any consumer can drop it by the id.
package watermill

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/brokers"
	"github.com/sluicehq/sluice/internal/options"
)

// Sink publishes rows as messages.
type Sink struct {
	// Topic is what is published to: a subject, a queue.
	Topic string
	// NewPublisher makes the publisher at the first batch.
	NewPublisher func() (message.Publisher, error)
	Pipeline     string
	// Kind names the system in messages ("NATS", "AMQP").
	Kind string

	mu  sync.Mutex
	pub message.Publisher
}

// idSpace is the namespace of the message ids the sink makes.
var idSpace = uuid.MustParse("5c1d3e0a-6a8f-4c55-9a57-3f1c2b0e9d41")

// Deliver publishes the batch's rows, in order.
func (s *Sink) Deliver(ctx context.Context, b domain.SinkBatch) error {
	if b.Rows == nil || b.Rows.Len() == 0 {
		return nil
	}
	msgs, err := s.messages(b)
	if err != nil {
		return domain.Errorf(domain.CodeSinkWriteFailed, "%s sink %q, flow %q, batch %d: %v", s.Kind, b.Sink, b.Flow, b.BatchID, err).
			WithHint("select a payload column (a string or binary), and uuid or metadata (a map of strings) if you want them")
	}
	pub, err := s.publisher()
	if err == nil {
		err = pub.Publish(s.Topic, msgs...)
	}
	if err != nil {
		s.reset()
		return domain.Wrap(domain.CodeSinkWriteFailed, err, fmt.Sprintf("%s sink %q, flow %q, batch %d", s.Kind, b.Sink, b.Flow, b.BatchID)).AsRetriable()
	}
	return ctx.Err()
}

func (s *Sink) messages(b domain.SinkBatch) ([]*message.Message, error) {
	rows := b.Rows
	col := func(name string) *domain.Column {
		if j := rows.Schema.Index(name); j >= 0 {
			return rows.Columns[j]
		}
		return nil
	}
	payload, id, meta := col("payload"), col("uuid"), col("metadata")
	if payload == nil {
		return nil, fmt.Errorf("the rows have no payload column (%s)", rows.Schema)
	}
	prefix := strings.Join([]string{s.Pipeline, b.Sink, b.Flow, strconv.FormatInt(b.Generation, 10), strconv.FormatInt(b.BatchID, 10)}, "\x00")
	out := make([]*message.Message, rows.Len())
	for i := range out {
		var body []byte
		if !payload.IsNull(i) {
			v := payload.Value(i)
			if v.Kind() != domain.KindBytes && v.Kind() != domain.KindString {
				return nil, fmt.Errorf("the payload column is %s, not a string or binary", v.Kind())
			}
			body = []byte(v.AsString())
		}
		msgID := ""
		if id != nil && !id.IsNull(i) {
			msgID = id.Value(i).AsString()
		}
		if msgID == "" {
			msgID = uuid.NewSHA1(idSpace, []byte(prefix+"\x00"+strconv.Itoa(i))).String()
		}
		m := message.NewMessage(msgID, body)
		if meta != nil && !meta.IsNull(i) {
			for _, e := range meta.Value(i).AsList() {
				kv := e.Fields()
				if kv[0].IsNull() {
					continue
				}
				val := ""
				if !kv[1].IsNull() {
					val = domain.ScalarText(kv[1])
				}
				m.Metadata.Set(domain.ScalarText(kv[0]), val)
			}
		}
		out[i] = m
	}
	return out, nil
}

func (s *Sink) publisher() (message.Publisher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub == nil {
		p, err := s.NewPublisher()
		if err != nil {
			return nil, err
		}
		s.pub = p
	}
	return s.pub, nil
}

// reset drops a publisher that failed; the retry makes a new one.
func (s *Sink) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub != nil {
		_ = s.pub.Close()
		s.pub = nil
	}
}

// Close closes the publisher; the next batch makes one again.
func (s *Sink) Close() { s.reset() }

var natsOptions = map[string]string{
	"url":     "the server, as nats://host:4222",
	"subject": "the subject published to (a JetStream stream holding it is made when there is none)",
}

// NewNATS makes a sink to a NATS JetStream subject from its options. Each
// message waits for the stream's acknowledgement, and carries its id as
// Nats-Msg-Id, so the stream drops a batch delivered again.
func NewNATS(pipeline string, given map[string]string) (*Sink, error) {
	url, subject := "", ""
	for k, v := range given {
		switch strings.ToLower(k) {
		case "url":
			url = v
		case "subject":
			subject = v
		default:
			return nil, domain.Errorf(domain.CodeSinkOption, "a NATS sink does not take the option %q; it takes %s", k, options.List(natsOptions))
		}
	}
	if url == "" || subject == "" {
		return nil, domain.Errorf(domain.CodeSinkOption, "a NATS sink needs url and subject: %s", options.List(natsOptions))
	}
	return &Sink{Topic: subject, Pipeline: pipeline, Kind: "NATS", NewPublisher: func() (message.Publisher, error) {
		if err := brokers.EnsureStream(url, subject); err != nil {
			return nil, err
		}
		return wmnats.NewPublisher(wmnats.PublisherConfig{
			URL:         url,
			NatsOptions: []nats.Option{nats.Name("sluice sink " + subject), nats.Timeout(10 * time.Second)},
			Marshaler:   &wmnats.NATSMarshaler{},
			JetStream:   wmnats.JetStreamConfig{TrackMsgId: true},
		}, watermill.NopLogger{})
	}}, nil
}

var amqpOptions = map[string]string{
	"url":   "the broker, as amqp://user:password@host:5672/",
	"queue": "the durable queue published to (declared when missing)",
}

// NewAMQP makes a sink to a durable AMQP queue from its options; messages
// are persistent, and each publish waits for the broker's confirmation.
func NewAMQP(pipeline string, given map[string]string) (*Sink, error) {
	url, queue := "", ""
	for k, v := range given {
		switch strings.ToLower(k) {
		case "url":
			url = v
		case "queue":
			queue = v
		default:
			return nil, domain.Errorf(domain.CodeSinkOption, "an AMQP sink does not take the option %q; it takes %s", k, options.List(amqpOptions))
		}
	}
	if url == "" || queue == "" {
		return nil, domain.Errorf(domain.CodeSinkOption, "an AMQP sink needs url and queue: %s", options.List(amqpOptions))
	}
	return &Sink{Topic: queue, Pipeline: pipeline, Kind: "AMQP", NewPublisher: func() (message.Publisher, error) {
		if err := brokers.EnsureQueue(url, queue); err != nil {
			return nil, err
		}
		cfg := wmamqp.NewDurableQueueConfig(url)
		cfg.Publish.ConfirmDelivery = true
		return wmamqp.NewPublisher(cfg, watermill.NopLogger{})
	}}, nil
}
