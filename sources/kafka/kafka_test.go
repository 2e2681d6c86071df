package kafka_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sources/kafka"
)

// cluster is an in-process Kafka (kfake speaks the protocol) with topic
// "events" of 3 partitions, and a producer to it.
func cluster(t *testing.T) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("events"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl
}

// produce writes n records, numbered from first, round the partitions.
func produce(t *testing.T, cl *kgo.Client, first, n, partitions int) {
	t.Helper()
	for i := first; i < first+n; i++ {
		r := &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf(`{"n": %d}`, i)), Partition: int32(i % partitions),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// drain plans and reads batches from start until there is nothing new,
// reading each range twice to check it gives the same rows; it returns
// the keys read, in order, and the last offset.
func drain(t *testing.T, src *kafka.Source, start domain.Offset, limit domain.ReadLimit) ([]string, domain.Offset, int) {
	t.Helper()
	ctx := context.Background()
	var keys []string
	batches := 0
	for {
		end, ok, err := src.Plan(ctx, start, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return keys, start, batches
		}
		b, err := src.Read(ctx, start, end)
		if err != nil {
			t.Fatal(err)
		}
		again, err := src.Read(ctx, start, end)
		if err != nil || again.Len() != b.Len() {
			t.Fatalf("a range read twice gave %d and %d rows (%v)", b.Len(), again.Len(), err)
		}
		if limit.MaxRows > 0 && int64(b.Len()) > limit.MaxRows {
			t.Errorf("a batch of %d rows over the limit %d", b.Len(), limit.MaxRows)
		}
		for i := 0; i < b.Len(); i++ {
			keys = append(keys, string(b.Columns[0].Value(i).AsBytes()))
		}
		start = end
		batches++
	}
}

func sortedNumbers(keys []string) []int {
	out := make([]int, len(keys))
	for i, k := range keys {
		fmt.Sscan(k, &out[i])
	}
	sort.Ints(out)
	return out
}

func wantEach(t *testing.T, got []int, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("%d records read, want %d", len(got), to-from)
	}
	for i, n := range got {
		if n != from+i {
			t.Fatalf("record %d missing or doubled (read %v)", from+i, got)
		}
	}
}

// TestEveryRecordOnce: batches bounded by the row limit read every record
// once, a range twice gives the same rows, and a later plan from the last
// offset reads only what came since, new partitions included.
func TestEveryRecordOnce(t *testing.T) {
	c, cl := cluster(t)
	produce(t, cl, 0, 100, 3)
	src, err := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: "earliest", FailOnDataLoss: true, PollTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	keys, at, batches := drain(t, src, nil, domain.ReadLimit{MaxRows: 17})
	wantEach(t, sortedNumbers(keys), 0, 100)
	if batches < 6 {
		t.Errorf("100 records in %d batches of at most 17", batches)
	}
	// a new partition and more records
	adm := kadm.NewClient(cl)
	if _, err := adm.CreatePartitions(context.Background(), 1, "events"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the source's metadata may be 100 ms old
	fresh, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("events"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	produce(t, fresh, 100, 40, 4)
	keys, _, _ = drain(t, src, at, domain.ReadLimit{})
	wantEach(t, sortedNumbers(keys), 100, 140)
}

// TestHeldRecordsBounded: the records a consumer fetched past a range are
// held for the next range up to a bound; past it, the partition is let go
// and read again by a new consumer, and no record is lost or doubled.
func TestHeldRecordsBounded(t *testing.T) {
	c, cl := cluster(t)
	produce(t, cl, 0, 100, 3)
	for _, held := range []int{1, 300, 1 << 20} {
		t.Run(fmt.Sprint(held), func(t *testing.T) {
			defer kafka.SetHeldMaxBytes(held)()
			src, err := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: "earliest", PollTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			keys, _, _ := drain(t, src, nil, domain.ReadLimit{MaxRows: 7})
			wantEach(t, sortedNumbers(keys), 0, 100)
		})
	}
}

// TestColumns: a record's columns as Databricks' Kafka source has them,
// the headers only with includeHeaders.
func TestColumns(t *testing.T) {
	c, cl := cluster(t)
	produce(t, cl, 7, 1, 3)
	for _, headers := range []bool{false, true} {
		src, _ := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: "earliest", IncludeHeaders: headers})
		defer src.Close()
		end, ok, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		var positions map[string]json.RawMessage
		if err := json.Unmarshal(end, &positions); err != nil || string(positions["events"]) != `{"0":0,"1":1,"2":0}` || string(positions["$from"]) != `{"events":{"0":0,"1":0,"2":0}}` {
			t.Errorf("the offsets are %s, want Spark's {\"events\": {\"0\": 0, \"1\": 1, \"2\": 0}} and where the first batch starts", end)
		}
		b, err := src.Read(context.Background(), nil, end)
		if err != nil || b.Len() != 1 {
			t.Fatal(b, err)
		}
		want := kafka.Schema
		if headers {
			want = kafka.SchemaWithHeaders
		}
		if !b.Schema.Equal(want) || !src.Schema().Equal(want) {
			t.Errorf("includeHeaders %v: schema %s", headers, b.Schema)
		}
		row := b.Row(0)
		if string(row[0].AsBytes()) != "7" || string(row[1].AsBytes()) != `{"n": 7}` || row[2].AsString() != "events" || row[3].AsInt() != 1 || row[4].AsInt() != 0 ||
			row[5].IsNull() || row[6].AsInt() != 0 {
			t.Errorf("the row is %v", row)
		}
		if headers && (len(row[7].AsList()) != 1 || row[7].AsList()[0].Fields()[0].AsString() != "h") {
			t.Errorf("the headers are %v", row[7])
		}
	}
}

// TestStartingOffsets: latest skips what is there; JSON starts each
// partition where it says.
func TestStartingOffsets(t *testing.T) {
	c, cl := cluster(t)
	produce(t, cl, 0, 30, 3)
	latest, _ := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: "latest", PollTimeout: 10 * time.Second})
	defer latest.Close()
	// the first plan keeps where latest is now: an empty batch, then what
	// comes after it
	first, ok, err := latest.Plan(context.Background(), nil, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatalf("latest's first plan: %v %v", ok, err)
	}
	if b, err := latest.Read(context.Background(), nil, first); err != nil || b.Len() != 0 {
		t.Errorf("latest read %v rows of what was there (%v)", b.Len(), err)
	}
	produce(t, cl, 30, 3, 3)
	if keys, _, _ := drain(t, latest, first, domain.ReadLimit{}); fmt.Sprint(sortedNumbers(keys)) != "[30 31 32]" {
		t.Errorf("after latest's start, read %v", keys)
	}
	given, _ := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: `{"events": {"0": 8, "1": -2, "2": -1}}`})
	defer given.Close()
	keys, _, _ := drain(t, given, nil, domain.ReadLimit{})
	// partition 0 holds 0, 3, ..., 27, 30 (offsets 0-10): from offset 8, 24,
	// 27 and 30; partition 1 all eleven; partition 2 none (latest)
	if got := sortedNumbers(keys); fmt.Sprint(got) != "[1 4 7 10 13 16 19 22 24 25 27 28 30 31]" {
		t.Errorf("read %v", got)
	}
	if _, err := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: "middle"}); domain.CodeOf(err) != domain.CodeSourceOptionInvalid {
		t.Errorf("startingOffsets 'middle': %v", err)
	}
}

// TestTransactionsAndDataLoss: a topic with transactions (whose markers
// take offsets) reads to its end, without the records of an aborted one;
// records deleted before they were read are KAFKA_DATA_LOSS, or skipped
// with failOnDataLoss false.
func TestTransactionsAndDataLoss(t *testing.T) {
	c, cl := cluster(t)
	tx, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("events"), kgo.TransactionalID("tx"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	ctx := context.Background()
	for batch := range 4 { // the third is aborted: its records are no rows
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			n := batch*5 + i
			if batch == 3 {
				n -= 5
			}
			if batch == 2 {
				n += 1000
			}
			if err := tx.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(n)), Partition: 0}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(batch != 2)); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: "earliest", FailOnDataLoss: true, PollTimeout: 10 * time.Second})
	defer src.Close()
	keys, at, _ := drain(t, src, nil, domain.ReadLimit{MaxRows: 4})
	wantEach(t, sortedNumbers(keys), 0, 15)

	produce(t, cl, 100, 6, 3) // two to each partition
	adm := kadm.NewClient(cl)
	ends, _ := adm.ListEndOffsets(ctx, "events")
	del := kadm.Offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Partition == 1 {
			del.AddOffset("events", 1, o.Offset-1, -1) // one of the two new records of partition 1 is gone
		}
	})
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	end, ok, err := src.Plan(ctx, at, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := src.Read(ctx, at, end); domain.CodeOf(err) != domain.CodeSourceDataLoss {
		t.Errorf("a range whose records are gone: %v", err)
	}
	lenient, _ := kafka.New(kafka.Options{Brokers: c.ListenAddrs(), Topics: []string{"events"}, StartingOffsets: "earliest", PollTimeout: 10 * time.Second})
	defer lenient.Close()
	b, err := lenient.Read(ctx, at, end)
	if err != nil || b.Len() != 5 {
		t.Errorf("with failOnDataLoss false, %v rows (%v), want the 5 left", b, err)
	}
	var de *domain.Error
	if gone, _ := kafka.New(kafka.Options{Brokers: []string{"127.0.0.1:1"}, Topics: []string{"events"}}); true {
		_, _, err := gone.Plan(ctx, nil, domain.ReadLimit{})
		if !errors.As(err, &de) || de.Code != domain.CodeSourceUnavailable || !de.Retriable {
			t.Errorf("a broker that does not answer: %v", err)
		}
		gone.Close()
	}
}
