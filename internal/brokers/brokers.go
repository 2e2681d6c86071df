// Package brokers makes what the message sources and sinks read from and
// write to when it is missing: a JetStream stream, an AMQP queue.
package brokers

import (
	"errors"
	"regexp"

	"github.com/nats-io/nats.go"
	amqp "github.com/rabbitmq/amqp091-go"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// SafeName is a name with what NATS does not take in stream and consumer
// names replaced.
func SafeName(name string) string { return unsafeName.ReplaceAllString(name, "_") }

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
	_, err = js.AddStream(&nats.StreamConfig{Name: SafeName(subject), Subjects: []string{subject}})
	if errors.Is(err, nats.ErrStreamNameAlreadyInUse) {
		return nil // made meanwhile
	}
	return err
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
