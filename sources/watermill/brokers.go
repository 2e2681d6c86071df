package watermill

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicehq/sluice/domain"
)

// NATS sets opts up to read a NATS JetStream subject with a durable
// consumer: the server keeps the consumer's place, and delivers again what
// was not acknowledged. A stream holding the subject is made when there is
// none (named after the subject).
func NATS(url, subject, durable string, opts Options) (*Source, error) {
	if url == "" || subject == "" || durable == "" {
		return nil, domain.Errorf(domain.CodeSourceOptionInvalid, "read_nats needs url, subject and durable")
	}
	opts.Topic = subject
	opts.Name = fmt.Sprintf("nats subject %s (durable %s)", subject, durable)
	opts.NewSubscriber = func() (message.Subscriber, error) {
		stream, err := ensureConsumer(url, subject, durable)
		if err != nil {
			return nil, err
		}
		return wmnats.NewSubscriber(wmnats.SubscriberConfig{
			URL:              url,
			QueueGroupPrefix: durable,
			SubscribersCount: 1,
			AckWaitTimeout:   time.Minute,
			CloseTimeout:     5 * time.Second,
			NatsOptions:      []nats.Option{nats.Name("sluice " + durable)},
			Unmarshaler:      &wmnats.NATSMarshaler{},
			JetStream: wmnats.JetStreamConfig{
				DurablePrefix: durable,
				// bound to the consumer made here: one the client made
				// itself would be deleted when the update unsubscribes
				SubscribeOptions: []nats.SubOpt{nats.Bind(stream, durable), nats.ManualAck()},
			},
		}, watermill.NopLogger{})
	}
	return New(opts)
}

// ensureConsumer makes the stream of subject and the durable consumer
// when missing, and returns the stream's name. The consumer delivers to
// the queue group of its name (so that Consumers subscriptions share it),
// from the stream's first message; one that a crash left unacknowledged
// comes again after 10 s.
func ensureConsumer(url, subject, durable string) (string, error) {
	if err := EnsureStream(url, subject); err != nil {
		return "", err
	}
	nc, err := nats.Connect(url, nats.Name("sluice"))
	if err != nil {
		return "", err
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		return "", err
	}
	stream, err := js.StreamNameBySubject(subject)
	if err != nil {
		return "", err
	}
	if _, err := js.ConsumerInfo(stream, durable); err == nil || !errors.Is(err, nats.ErrConsumerNotFound) {
		return stream, err
	}
	_, err = js.AddConsumer(stream, &nats.ConsumerConfig{
		Durable: durable, DeliverSubject: "sluice.deliver." + streamUnsafe.ReplaceAllString(durable, "_"), DeliverGroup: durable,
		AckPolicy: nats.AckExplicitPolicy, AckWait: 10 * time.Second, DeliverPolicy: nats.DeliverAllPolicy,
		FilterSubject: subject, MaxAckPending: 1024,
	})
	return stream, err
}

var streamUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// EnsureStream makes a JetStream stream for subject if no stream holds it.
func EnsureStream(url, subject string) error {
	nc, err := nats.Connect(url, nats.Name("sluice"))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		return err
	}
	if _, err := js.StreamNameBySubject(subject); err == nil || !errors.Is(err, nats.ErrNoMatchingStream) {
		return err
	}
	_, err = js.AddStream(&nats.StreamConfig{Name: streamUnsafe.ReplaceAllString(subject, "_"), Subjects: []string{subject}})
	if errors.Is(err, nats.ErrStreamNameAlreadyInUse) {
		return nil // made meanwhile
	}
	return err
}

// AMQP sets opts up to read a durable AMQP queue (RabbitMQ), declared if
// missing. The broker delivers again what was not acknowledged when the
// connection ends.
func AMQP(url, queue string, opts Options) (*Source, error) {
	if url == "" || queue == "" {
		return nil, domain.Errorf(domain.CodeSourceOptionInvalid, "read_amqp needs url and queue")
	}
	opts.Topic = queue
	opts.Name = "amqp queue " + queue
	opts.NewSubscriber = func() (message.Subscriber, error) {
		cfg := wmamqp.NewDurableQueueConfig(url)
		// the next messages on their way while one is spooled
		cfg.Consume.Qos.PrefetchCount = 16
		return wmamqp.NewSubscriber(cfg, watermill.NopLogger{})
	}
	return New(opts)
}

// EnsureQueue declares a durable AMQP queue, as a subscriber declares it:
// a message published to the default exchange before any queue of its name
// exists is dropped.
func EnsureQueue(url, queue string) error {
	conn, err := amqp.Dial(url)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	_, err = ch.QueueDeclare(queue, true, false, false, false, nil)
	return err
}
