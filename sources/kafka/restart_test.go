package kafka_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	kafkasink "github.com/sluicehq/sluice/sinks/kafka"
	"github.com/sluicehq/sluice/sources/kafka"
)

// TestBrokerGoesAwayAndComesBack: a continuous pipeline reads a topic into
// a table and writes the table to another topic (exactly once) while the
// broker stops for two seconds and starts again on the same port and
// data: the flows retry, and every record is in the table once and in the
// output once for a read_committed consumer.
func TestBrokerGoesAwayAndComesBack(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	data := t.TempDir()
	start := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.DataDir(data), kfake.SeedTopics(3, "in", "out"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := start()
	addr := fmt.Sprintf("127.0.0.1:%d", port)

	const total = 3000
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("in"), kgo.RecordRetries(1000), kgo.RetryTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // 100 records every 50 ms, through the outage (the client retries)
		defer wg.Done()
		for i := 0; i < total; i += 100 {
			for j := i; j < i+100; j++ {
				if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(j))}).FirstErr(); err != nil {
					t.Errorf("producing record %d: %v", j, err)
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	src, err := kafka.New(kafka.Options{Brokers: []string{addr}, Topics: []string{"in"}, StartingOffsets: "earliest", PollTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sink, err := kafkasink.NewSink("restart", map[string]string{"bootstrapServers": addr, "topic": "out", "mode": "exactly_once"})
	if err != nil {
		t.Fatal(err)
	}
	store, err := eventstore.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := pipeline.New("restart")
	p.Continuous = true
	p.CreateStreamingTable("events")
	valueOnly := domain.NewSchema(domain.Field{Name: "value", Type: domain.TypeString})
	p.AppendFlow("events", pipeline.StreamFrom(src).Map(valueOnly, func(r pipeline.Row) ([]domain.Value, error) {
		return []domain.Value{domain.String(r.Get("value").AsString())}, nil
	}), pipeline.Name("ingest"))
	p.CreateSink("out", "kafka", sink, nil)
	p.AppendFlow("out", pipeline.ReadStream("events"), pipeline.Name("publish"))
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan *processors.Result, 1)
	go func() {
		res, err := p.Run(runCtx, store, processors.Options{PollInterval: 50 * time.Millisecond, Limit: domain.ReadLimit{MaxRows: 200},
			Retry: processors.RetryPolicy{Attempts: 20, Initial: 200 * time.Millisecond, Max: time.Second}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()

	time.Sleep(700 * time.Millisecond)
	c.Close() // the broker goes away, for longer than a read waits
	time.Sleep(5 * time.Second)
	c = start() // and comes back, with its data
	defer c.Close()
	wg.Wait()

	committed := func() (map[string]int, error) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		seen := map[string]int{}
		pollCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for {
			f := cl.PollFetches(pollCtx)
			if pollCtx.Err() != nil {
				return seen, nil
			}
			f.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
		}
	}
	var out map[string]int
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if out, err = committed(); err != nil {
			t.Fatal(err)
		}
		if len(out) >= total {
			break
		}
	}
	stop()
	res := <-done
	if res.State != domain.UpdateCanceled {
		t.Errorf("the update ended %s (%v), want CANCELED: the flows were to retry through the outage", res.State, res.Err)
	}
	if len(out) != total {
		t.Fatalf("the output topic holds %d distinct records, want %d", len(out), total)
	}
	for v, n := range out {
		if n != 1 {
			t.Errorf("record %s is in the output %d times", v, n)
		}
	}
	var rows int
	err = processors.ScanTable(context.Background(), store, "events", 0, func(b *domain.Batch) error {
		rows += b.Len()
		return nil
	})
	if err != nil || rows != total {
		t.Fatalf("the table holds %d rows (%v), want %d", rows, err, total)
	}
	retried := 0
	_ = store.Scan(context.Background(), eventstore.Filter{Types: []domain.EventType{domain.EventFlowProgress}}, func(ev *domain.Event) error {
		if ev.Level == domain.LevelWarn {
			retried++
		}
		return nil
	})
	if retried == 0 {
		t.Error("no flow retried: the broker's outage went unseen, and the test checked nothing")
	}
}
