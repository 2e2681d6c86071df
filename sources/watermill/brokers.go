package watermill

import (
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/brokers"
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
	if err := brokers.EnsureStream(url, subject); err != nil {
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
		Durable: durable, DeliverSubject: "sluice.deliver." + brokers.SafeName(durable), DeliverGroup: durable,
		AckPolicy: nats.AckExplicitPolicy, AckWait: 10 * time.Second, DeliverPolicy: nats.DeliverAllPolicy,
		FilterSubject: subject, MaxAckPending: 1024,
	})
	return stream, err
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
