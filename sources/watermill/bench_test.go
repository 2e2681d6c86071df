package watermill_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	wm "github.com/sluicehq/sluice/sources/watermill"
)

const benchMessages = 20_000

// fillSubject makes a stream of benchMessages 200-byte messages.
func fillSubject(b *testing.B) string {
	b.Helper()
	subject := fmt.Sprintf("sluice_bench_%d", rand.Int64())
	nc, err := nats.Connect(natsURL)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := nc.JetStream(nats.PublishAsyncMaxPending(4096))
	if _, err := js.AddStream(&nats.StreamConfig{Name: subject, Subjects: []string{subject}}); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 200)
	for i := range benchMessages {
		if _, err := js.PublishAsync(subject, fmt.Appendf(payload[:0], `{"id": %d, "body": "%0180d"}`, i, i)); err != nil {
			b.Fatal(err)
		}
	}
	<-js.PublishAsyncComplete()
	return subject
}

func dropSubject(subject string) {
	if nc, err := nats.Connect(natsURL); err == nil {
		js, _ := nc.JetStream()
		_ = js.DeleteStream(subject)
		nc.Close()
	}
}

// BenchmarkNATSToTable: a JetStream subject of 20,000 messages into a
// streaming table by one triggered update, with 1 and 16 consumers.
func BenchmarkNATSToTable(b *testing.B) {
	for _, consumers := range []int{1, 16} {
		b.Run(fmt.Sprintf("consumers=%d", consumers), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				subject := fillSubject(b)
				dir := b.TempDir()
				store, err := eventstore.Open(filepath.Join(dir, "store"))
				if err != nil {
					b.Fatal(err)
				}
				src, err := wm.NATS(natsURL, subject, subject, wm.Options{Spool: filepath.Join(dir, "spool"), Consumers: consumers, Quiet: 100 * time.Millisecond})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := messagesPipeline(src).Run(context.Background(), store, processors.Options{})
				b.StopTimer()
				if err != nil || res.State != domain.UpdateCompleted || res.Flows["ingest"] != domain.FlowCompleted {
					b.Fatalf("update %v: %v %v", res.State, res.Err, err)
				}
				store.Close()
				dropSubject(subject)
				b.StartTimer()
			}
			b.ReportMetric(float64(benchMessages*b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkNATSSubscriberFloor: the same subject taken by Watermill's
// JetStream subscriber alone, each message acknowledged as it comes: the
// floor of any Watermill consumer.
func BenchmarkNATSSubscriberFloor(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		subject := fillSubject(b)
		sub, err := wmnats.NewSubscriber(wmnats.SubscriberConfig{URL: natsURL, QueueGroupPrefix: "floor", SubscribersCount: 1,
			JetStream: wmnats.JetStreamConfig{DurablePrefix: "floor", SubscribeOptions: []nats.SubOpt{nats.DeliverAll(), nats.AckExplicit()}}}, watermill.NopLogger{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ch, err := sub.Subscribe(context.Background(), subject)
		if err != nil {
			b.Fatal(err)
		}
		for range benchMessages {
			(<-ch).Ack()
		}
		b.StopTimer()
		_ = sub.Close()
		dropSubject(subject)
		b.StartTimer()
	}
	b.ReportMetric(float64(benchMessages*b.N)/b.Elapsed().Seconds(), "msgs/s")
}
