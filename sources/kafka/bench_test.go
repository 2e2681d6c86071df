package kafka_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources/kafka"
)

// benchRecords is the topic size of the benchmarks: 200k records of about
// 100 bytes over 4 partitions.
const benchRecords = 200_000

func benchCluster(b *testing.B) *kfake.Cluster {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for i := 0; i < benchRecords; i++ {
		cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf(`{"id": %d, "user": "user-%06d", "amount": %d.25, "ok": true}`, i, i%5000, i))}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkSourceRead plans and reads the whole topic as one micro-batch:
// sluice's Kafka source, records to a columnar batch.
func BenchmarkSourceRead(b *testing.B) {
	c := benchCluster(b)
	defer c.Close()
	src, err := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"bench"}, StartingOffsets: "earliest"})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	end, _, err := src.Plan(ctx, nil, domain.ReadLimit{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		batch, err := src.Read(ctx, nil, end)
		if err != nil || batch.Len() != benchRecords {
			b.Fatalf("%v rows, %v", batch.Len(), err)
		}
	}
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkFranzConsume is the floor: franz-go consuming the same topic
// alone, every record polled and dropped.
func BenchmarkFranzConsume(b *testing.B) {
	c := benchCluster(b)
	defer c.Close()
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for n < benchRecords {
			f := cl.PollFetches(ctx)
			n += f.NumRecords()
		}
		cl.Close()
	}
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkKafkaToTable: the whole topic into a streaming table by one
// triggered update (micro-batches of the default 50,000 rows, each
// committed with sync writes): the end-to-end figure against
// BenchmarkFranzConsume.
func BenchmarkKafkaToTable(b *testing.B) {
	c := benchCluster(b)
	defer c.Close()
	for b.Loop() {
		b.StopTimer()
		store, err := eventstore.Open(filepath.Join(b.TempDir(), "store"))
		if err != nil {
			b.Fatal(err)
		}
		src, err := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"bench"}, StartingOffsets: "earliest"})
		if err != nil {
			b.Fatal(err)
		}
		p := pipeline.New("bench")
		p.CreateStreamingTable("records")
		p.AppendFlow("records", pipeline.StreamFrom(src), pipeline.Name("ingest"))
		b.StartTimer()
		res, err := p.Run(context.Background(), store, processors.Options{})
		b.StopTimer()
		if err != nil || res.State != domain.UpdateCompleted {
			b.Fatalf("update %v: %v %v", res.State, res.Err, err)
		}
		store.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
