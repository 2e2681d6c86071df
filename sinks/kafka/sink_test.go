package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sinks/kafka"
)

func rows(t *testing.T, from, n int) *domain.Batch {
	t.Helper()
	b := domain.NewBatch(domain.NewSchema(
		domain.Field{Name: "key", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "value", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "headers", Type: domain.ListOf(domain.StructOf(domain.Field{Name: "key", Type: domain.TypeString}, domain.Field{Name: "value", Type: domain.TypeBytes, Nullable: true})), Nullable: true},
	), 0)
	for i := from; i < from+n; i++ {
		if err := b.AppendRow(domain.String(fmt.Sprint(i)), domain.String(fmt.Sprintf(`{"n":%d}`, i)), domain.List(domain.Struct(domain.String("src"), domain.Bytes([]byte("sluice"))))); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// committed reads every record of topic a read_committed consumer sees.
func committed(t *testing.T, brokers []string, topic string, want int, headers bool) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var keys []string
	for len(keys) < want {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		f.EachRecord(func(r *kgo.Record) {
			if headers && (len(r.Headers) != 1 || r.Headers[0].Key != "src") {
				t.Errorf("record %s has headers %v", r.Key, r.Headers)
			}
			keys = append(keys, string(r.Key))
		})
	}
	// and nothing more comes
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	cl.PollFetches(ctx2).EachRecord(func(r *kgo.Record) { keys = append(keys, string(r.Key)) })
	sort.Strings(keys)
	return keys
}

// TestExactlyOnceAcrossRestarts: batches written in transactions with their
// ledger record; a sink made anew (as a process restarted after a crash
// between Kafka's commit and sluice's) skips the batch it finds in the
// ledger, so a read_committed consumer sees each batch once.
func TestExactlyOnceAcrossRestarts(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "out"), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts := map[string]string{"bootstrapServers": fmt.Sprint(c.ListenAddrs()[0]), "topic": "out", "mode": "exactly_once"}
	ctx := context.Background()
	first, err := kafka.NewSink("p", opts)
	if err != nil {
		t.Fatal(err)
	}
	for id := range 2 {
		if err := first.Deliver(ctx, domain.SinkBatch{Sink: "s", Flow: "f", BatchID: int64(id), Rows: rows(t, id*10, 10)}); err != nil {
			t.Fatal(err)
		}
	}
	restarted, _ := kafka.NewSink("p", opts)
	for id := 1; id < 3; id++ { // batch 1 again, then batch 2
		if err := restarted.Deliver(ctx, domain.SinkBatch{Sink: "s", Flow: "f", BatchID: int64(id), Rows: rows(t, id*10, 10)}); err != nil {
			t.Fatal(err)
		}
	}
	keys := committed(t, c.ListenAddrs(), "out", 30, true)
	if len(keys) != 30 {
		t.Fatalf("a read_committed consumer sees %d records, want each of 30 once: %v", len(keys), keys)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			t.Fatalf("record %s twice", keys[i])
		}
	}
	// a full refresh's next generation starts its batch ids again
	if err := restarted.Deliver(ctx, domain.SinkBatch{Sink: "s", Flow: "f", Generation: 1, BatchID: 0, Rows: rows(t, 100, 1)}); err != nil {
		t.Fatal(err)
	}
	if keys := committed(t, c.ListenAddrs(), "out", 31, true); len(keys) != 31 {
		t.Errorf("after the next generation's first batch %d records, want 31", len(keys))
	}
}

// TestAtLeastOnceAndErrors: the default mode writes every batch it is
// given; rows without a value column fail the flow (not retried); the
// options are checked.
func TestAtLeastOnceAndErrors(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := kafka.NewSink("p", map[string]string{"kafka.bootstrap.servers": c.ListenAddrs()[0], "topic": "out"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Deliver(ctx, domain.SinkBatch{Sink: "s", Flow: "f", BatchID: 0, Rows: rows(t, 0, 5)}); err != nil {
		t.Fatal(err)
	}
	if keys := committed(t, c.ListenAddrs(), "out", 5, true); len(keys) != 5 {
		t.Errorf("%d records, want 5", len(keys))
	}
	noValue := domain.NewBatch(domain.NewSchema(domain.Field{Name: "key", Type: domain.TypeString}), 0)
	_ = noValue.AppendRow(domain.String("k"))
	err = s.Deliver(ctx, domain.SinkBatch{Sink: "s", Flow: "f", BatchID: 1, Rows: noValue})
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != domain.CodeSinkWriteFailed || de.Retriable {
		t.Errorf("rows without a value: %v", err)
	}
	for _, o := range []map[string]string{{"topic": "out"}, {"bootstrapServers": "b:9092", "mode": "twice"}, {"bootstrapServers": "b:9092", "acks": "all"}} {
		if _, err := kafka.NewSink("p", o); !errors.As(err, &de) || de.Code != domain.CodeSinkOption {
			t.Errorf("%v: %v", o, err)
		}
	}
}

// TestExactlyOnceTriesAFailedTransactionAgain: a transaction the broker
// fails (here: its records refused as out of sequence, once) is tried
// again with a new producer, which fences the old one and reads the
// ledger: the batch is delivered, and a read_committed consumer sees each
// record once.
func TestExactlyOnceTriesAFailedTransactionAgain(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "out"), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	produces, refused := 0, 0
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		pr := req.(*kmsg.ProduceRequest)
		// The first produce is the ledger's fence (see lastWritten), the
		// second the batch's transaction: that one is refused.
		if produces++; produces != 2 {
			return nil, nil, false
		}
		refused++
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, tp := range pr.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic, rt.TopicID = tp.Topic, tp.TopicID
			for _, p := range tp.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.OutOfOrderSequenceNumber.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
	opts := map[string]string{"bootstrapServers": fmt.Sprint(c.ListenAddrs()[0]), "topic": "out", "mode": "exactly_once"}
	sink, err := kafka.NewSink("p", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Deliver(context.Background(), domain.SinkBatch{Sink: "s", Flow: "f", BatchID: 0, Rows: rows(t, 0, 10)}); err != nil {
		t.Fatalf("a transaction failed once: %v", err)
	}
	if refused != 1 {
		t.Fatalf("the broker refused %d produce requests, want the batch's first", refused)
	}
	if keys := committed(t, c.ListenAddrs(), "out", 10, true); len(keys) != 10 {
		t.Fatalf("a read_committed consumer sees %d records, want each of 10 once: %v", len(keys), keys)
	}
}
