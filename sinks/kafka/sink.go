// Package kafka writes micro-batches to Kafka topics, as Spark's Kafka sink
// takes rows: a value column (string or binary), and optional key, topic,
// partition and headers columns.
//
// At least once (the default), with the idempotent producer: a batch
// redelivered after a crash is written again. Exactly once: each batch is
// one Kafka transaction, under a transactional id of the pipeline, sink
// and flow, that also writes the batch's id to a ledger topic; a flow
// restarted after a crash reads the ledger (read_committed) and skips the
// batches it finds there, so a read_committed consumer sees each batch
// once.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/options"
)

// Mode is the sink's delivery guarantee.
type Mode string

const (
	AtLeastOnce Mode = "at_least_once"
	ExactlyOnce Mode = "exactly_once"
)

// DefaultLedgerTopic holds the batches exactly-once sinks wrote.
const DefaultLedgerTopic = "sluice_sink_ledger"

// Sink writes to Kafka.
type Sink struct {
	Brokers     []string
	Topic       string // for rows without a topic column
	Mode        Mode
	LedgerTopic string
	Pipeline    string

	mu       sync.Mutex
	clients  map[string]*kgo.Client // by transactional id ("" for at least once)
	written  map[string]batchRef    // the last batch in the ledger, by transactional id
	ledgered map[string]bool        // the ledger was read for the id
}

// batchRef orders batches: a later generation (a full refresh) comes after.
type batchRef struct{ generation, batch int64 }

func (a batchRef) after(b batchRef) bool {
	return a.generation > b.generation || a.generation == b.generation && a.batch > b.batch
}

var sinkOptions = map[string]string{
	"bootstrapservers": "the brokers, host:port, comma-separated (also kafka.bootstrap.servers)",
	"topic":            "the topic of rows without a topic column",
	"mode":             "at_least_once (the default) or exactly_once",
	"ledgertopic":      "exactly_once: the topic of the batches written (" + DefaultLedgerTopic + " by default; created when missing)",
}

// NewSink makes a Kafka sink from its options.
func NewSink(pipeline string, given map[string]string) (*Sink, error) {
	s := &Sink{Mode: AtLeastOnce, LedgerTopic: DefaultLedgerTopic, Pipeline: pipeline}
	for k, v := range given {
		switch strings.TrimPrefix(strings.ToLower(k), "kafka.") {
		case "bootstrapservers", "bootstrap.servers":
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); b != "" {
					s.Brokers = append(s.Brokers, b)
				}
			}
		case "topic":
			s.Topic = v
		case "mode":
			switch m := Mode(strings.ToLower(v)); m {
			case AtLeastOnce, ExactlyOnce:
				s.Mode = m
			default:
				return nil, optionErr("the mode %q is not at_least_once or exactly_once", v)
			}
		case "ledgertopic":
			s.LedgerTopic = v
		default:
			return nil, optionErr("a Kafka sink does not take the option %q; it takes %s", k, options.List(sinkOptions))
		}
	}
	if len(s.Brokers) == 0 {
		return nil, optionErr("a Kafka sink needs bootstrapServers: %s", sinkOptions["bootstrapservers"])
	}
	return s, nil
}

func optionErr(format string, args ...any) error {
	return domain.Errorf(domain.CodeSinkOption, format, args...)
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// TransactionalID is the transactional id of a flow into a sink: the same
// after a restart, so that the restarted producer fences the old one.
func TransactionalID(pipeline, sink, flow string) string {
	return unsafeID.ReplaceAllString("sluice-"+pipeline+"-"+sink+"-"+flow, "_")
}

// Deliver writes the batch's rows.
func (s *Sink) Deliver(ctx context.Context, b domain.SinkBatch) error {
	if b.Rows == nil || b.Rows.Len() == 0 {
		return nil
	}
	records, err := s.records(b.Rows)
	if err != nil {
		return domain.Errorf(domain.CodeSinkWriteFailed, "Kafka sink %q, flow %q, batch %d: %v", b.Sink, b.Flow, b.BatchID, err).
			WithHint("select a value column (a string or binary), and key, topic, partition or headers as Spark's Kafka sink takes them")
	}
	if s.Mode == AtLeastOnce {
		cl, err := s.client(ctx, "")
		if err == nil {
			err = cl.ProduceSync(ctx, records...).FirstErr()
		}
		return s.fail(b, err)
	}
	// A transaction that fails leaves its producer in an unknown state (a
	// sequence the broker took out of order, an epoch fenced): the write
	// is tried once more with a new producer, which fences the old one and
	// reads the ledger again, so that the batch is written once whatever
	// the first try left.
	err = s.writeTransaction(ctx, b, records)
	if err != nil && ctx.Err() == nil {
		err = s.writeTransaction(ctx, b, records)
	}
	return s.fail(b, err)
}

// writeTransaction writes the records of batch b and its ledger record in
// one transaction, unless the ledger holds b already.
func (s *Sink) writeTransaction(ctx context.Context, b domain.SinkBatch, records []*kgo.Record) error {
	id := TransactionalID(s.Pipeline, b.Sink, b.Flow)
	cl, err := s.client(ctx, id)
	if err != nil {
		return err
	}
	this := batchRef{b.Generation, b.BatchID}
	last, err := s.lastWritten(ctx, cl, id)
	if err != nil {
		s.reset(id)
		return err
	}
	if !this.after(last) {
		return nil // written, committed in Kafka, before the crash that brings it again
	}
	ledger := &kgo.Record{Topic: s.LedgerTopic, Key: []byte(id), Value: []byte(fmt.Sprintf("%d:%d", b.Generation, b.BatchID))}
	if err := cl.BeginTransaction(); err != nil {
		s.reset(id)
		return err
	}
	err = cl.ProduceSync(ctx, append(records, ledger)...).FirstErr()
	commit := kgo.TransactionEndTry(err == nil)
	if endErr := cl.EndTransaction(ctx, commit); err == nil {
		err = endErr
	}
	if err != nil {
		s.reset(id) // a producer in an unknown state: a new one fences it
		return err
	}
	s.mu.Lock()
	s.written[id] = this
	s.mu.Unlock()
	return nil
}

func (s *Sink) fail(b domain.SinkBatch, err error) error {
	if err == nil {
		return nil
	}
	return domain.Wrap(domain.CodeSinkWriteFailed, err, fmt.Sprintf("Kafka sink %q, flow %q, batch %d", b.Sink, b.Flow, b.BatchID)).AsRetriable()
}

func (s *Sink) client(ctx context.Context, id string) (*kgo.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients, s.written, s.ledgered = map[string]*kgo.Client{}, map[string]batchRef{}, map[string]bool{}
	}
	if cl, ok := s.clients[id]; ok {
		return cl, nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(s.Brokers...), kgo.ProducerLinger(0), kgo.RecordPartitioner(partitioner())}
	if id != "" {
		opts = append(opts, kgo.TransactionalID(id), kgo.TransactionTimeout(time.Minute))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	s.clients[id] = cl
	return cl, nil
}

func (s *Sink) reset(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cl, ok := s.clients[id]; ok {
		cl.Close()
		delete(s.clients, id)
	}
	delete(s.ledgered, id)
}

// lastWritten is the last batch the ledger holds for id, read once per
// process (read_committed, up to the last stable offset: what is beyond is
// in open transactions, none of them id's).
func (s *Sink) lastWritten(ctx context.Context, cl *kgo.Client, id string) (batchRef, error) {
	s.mu.Lock()
	if s.ledgered[id] {
		last := s.written[id]
		s.mu.Unlock()
		return last, nil
	}
	s.mu.Unlock()
	last := batchRef{-1, -1}
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": ptr("compact")}, s.LedgerTopic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return last, fmt.Errorf("the ledger topic %s: %w", s.LedgerTopic, err)
	}
	// Fence the producer before reading: the id's previous producer (a
	// process that crashed, or a client reset) may have a commit the
	// broker took and has not finished; a new producer of the id waits for
	// it to finish, so the ledger read after holds it. An aborted
	// transaction does that, writing nothing a reader sees.
	if err := cl.BeginTransaction(); err != nil {
		return last, err
	}
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: s.LedgerTopic, Key: []byte(id), Value: []byte("fence")}).FirstErr()
	if endErr := cl.EndTransaction(ctx, kgo.TryAbort); err == nil {
		err = endErr
	}
	if err != nil {
		return last, fmt.Errorf("fencing the producer %s: %w", id, err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, s.LedgerTopic)
	if err == nil {
		err = stable.Error()
	}
	if err != nil {
		return last, err
	}
	consume := map[int32]kgo.Offset{}
	upto := map[int32]int64{}
	stable.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			consume[o.Partition] = kgo.NewOffset().AtStart()
			upto[o.Partition] = o.Offset
		}
	})
	if len(consume) > 0 {
		reader, err := kgo.NewClient(kgo.SeedBrokers(s.Brokers...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.LedgerTopic: consume}),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
		if err != nil {
			return last, err
		}
		defer reader.Close()
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		for len(upto) > 0 {
			fetches := reader.PollFetches(rctx)
			if err := rctx.Err(); err != nil {
				return last, fmt.Errorf("reading the ledger topic %s: %w", s.LedgerTopic, err)
			}
			if err := fetches.Err(); err != nil {
				return last, err
			}
			fetches.EachRecord(func(r *kgo.Record) {
				if r.Offset >= upto[r.Partition]-1 {
					delete(upto, r.Partition)
				}
				if r.Attrs.IsControl() || string(r.Key) != id {
					return
				}
				g, bid, ok := strings.Cut(string(r.Value), ":")
				gen, err1 := strconv.ParseInt(g, 10, 64)
				batch, err2 := strconv.ParseInt(bid, 10, 64)
				if ok && err1 == nil && err2 == nil && (batchRef{gen, batch}).after(last) {
					last = batchRef{gen, batch}
				}
			})
		}
	}
	s.mu.Lock()
	s.written[id], s.ledgered[id] = last, true
	s.mu.Unlock()
	return last, nil
}

func ptr[T any](v T) *T { return &v }

// partitioner puts a record in the partition its row names, or else as
// Kafka's default does: by a hash of its key.
func partitioner() kgo.Partitioner {
	byKey := kgo.StickyKeyPartitioner(nil)
	return kgo.BasicConsistentPartitioner(func(topic string) func(*kgo.Record, int) int {
		other := byKey.ForTopic(topic)
		return func(r *kgo.Record, n int) int {
			if r.Partition >= 0 {
				return int(r.Partition)
			}
			return other.Partition(r, n)
		}
	})
}

// records turns rows into Kafka records, as Spark's Kafka sink does.
func (s *Sink) records(rows *domain.Batch) ([]*kgo.Record, error) {
	col := func(name string) *domain.Column {
		if j := rows.Schema.Index(name); j >= 0 {
			return rows.Columns[j]
		}
		return nil
	}
	value, key, topic, partition, headers := col("value"), col("key"), col("topic"), col("partition"), col("headers")
	if value == nil {
		return nil, fmt.Errorf("the rows have no value column (%s)", rows.Schema)
	}
	if topic == nil && s.Topic == "" {
		return nil, fmt.Errorf("the rows have no topic column, and the sink no topic option")
	}
	bytesOf := func(c *domain.Column, i int) []byte {
		if c == nil || c.IsNull(i) {
			return nil
		}
		v := c.Value(i)
		if v.Kind() == domain.KindBytes || v.Kind() == domain.KindString {
			return []byte(v.AsString())
		}
		return []byte(v.String())
	}
	out := make([]*kgo.Record, rows.Len())
	for i := range out {
		r := &kgo.Record{Key: bytesOf(key, i), Value: bytesOf(value, i), Topic: s.Topic}
		if topic != nil && !topic.IsNull(i) {
			r.Topic = topic.Value(i).AsString()
		}
		if r.Topic == "" {
			return nil, fmt.Errorf("row %d has no topic", i+1)
		}
		if partition != nil && !partition.IsNull(i) {
			r.Partition = int32(partition.Value(i).AsInt())
		} else {
			r.Partition = -1
		}
		if headers != nil && !headers.IsNull(i) {
			for _, h := range headers.Value(i).AsList() {
				f := h.Fields()
				if len(f) == 2 {
					var v []byte
					if !f[1].IsNull() {
						v = []byte(f[1].AsString())
					}
					r.Headers = append(r.Headers, kgo.RecordHeader{Key: f[0].AsString(), Value: v})
				}
			}
		}
		out[i] = r
	}
	return out, nil
}
