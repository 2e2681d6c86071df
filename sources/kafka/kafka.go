// Package kafka reads Kafka topics as a source, with the columns of
// Databricks' Kafka source, exactly once into sluice's tables: a
// micro-batch is a range of offsets of each partition, kept with the
// batch as its source offset, and reading a range gives the same records
// every time.
package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/domain"
)

// Options configure a Kafka source, as Databricks' options name them.
type Options struct {
	// Brokers are the bootstrap servers (bootstrapServers,
	// kafka.bootstrap.servers).
	Brokers []string
	// Topics are read (subscribe), or every topic matching Pattern
	// (subscribePattern), new ones included.
	Topics  []string
	Pattern *regexp.Regexp
	// StartingOffsets is where a flow's first batch starts: "earliest", "latest"
	// (the default, as Spark's streaming default) or JSON, {"topic":
	// {"0": 23, "1": -2}}, -2 earliest and -1 latest. A partition that
	// appears later starts at its earliest.
	StartingOffsets string
	// MaxOffsetsPerTrigger bounds the records of a batch (also bounded by
	// the pipeline's row limit).
	MaxOffsetsPerTrigger int64
	// FailOnDataLoss makes a range whose records the topic no longer has
	// (deleted by retention) an error, as Spark's default; false reads what
	// is left. Records are read committed: those of aborted or open
	// transactions are not rows.
	FailOnDataLoss bool
	// PollTimeout bounds the wait for a range's records (60 s by default).
	PollTimeout time.Duration
	// IncludeHeaders adds the records' headers as a column
	// (includeHeaders; off by default, as in Databricks).
	IncludeHeaders bool
}

// Schema is the rows' schema, Databricks' Kafka source columns: with
// includeHeaders, a headers column as well (SchemaWithHeaders).
var Schema = domain.NewSchema(
	domain.Field{Name: "key", Type: domain.TypeBytes, Nullable: true},
	domain.Field{Name: "value", Type: domain.TypeBytes, Nullable: true},
	domain.Field{Name: "topic", Type: domain.TypeString},
	domain.Field{Name: "partition", Type: domain.TypeInt32},
	domain.Field{Name: "offset", Type: domain.TypeInt64},
	domain.Field{Name: "timestamp", Type: domain.TypeTimestamp},
	domain.Field{Name: "timestampType", Type: domain.TypeInt32},
)

// SchemaWithHeaders is Schema and the records' headers.
var SchemaWithHeaders = domain.NewSchema(append(slices.Clone(Schema.Fields),
	domain.Field{Name: "headers", Type: domain.ListOf(domain.StructOf(
		domain.Field{Name: "key", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "value", Type: domain.TypeBytes, Nullable: true})), Nullable: true})...)

// Source reads Kafka.
type Source struct {
	opts Options
	mu   sync.Mutex
	cl   *kgo.Client // metadata and offsets

	readMu sync.Mutex // one Read at a time: they share the consumer
	reader *consumer
}

// partition names a partition of a topic.
type partition struct {
	topic string
	part  int32
}

// consumer is the client that reads the ranges, kept from one Read to the
// next: a batch's range starts where the one before ended, so what the
// client fetched ahead of the last range is the start of this one, and no
// record is fetched twice. Held records are bounded (heldMaxBytes), as
// are the client's own buffers (fetchMaxBytes).
type consumer struct {
	cl *kgo.Client
	// at is, for each partition the client reads, the offset the next
	// range must start at to go on reading it.
	at map[partition]int64
	// ahead holds, in offset order, the records of each partition that
	// were fetched past the end of the range being read.
	ahead map[partition][]*kgo.Record
	held  int // the heldSize of the records in ahead
}

// fetchMaxBytes bounds a fetch (Kafka's fetch.max.bytes; a record batch
// larger than it still comes, alone), and fetchPartitionMaxBytes each
// partition's part of it (max.partition.fetch.bytes, 1 MiB by default).
// Record batches are mostly compressed, four times or so: 256 KiB of
// them is about a partition's share of a micro-batch of 50,000 rows over a
// few partitions, so a batch's first fetch brings some of every partition
// instead of a whole batch's worth of the first one. (Measured with
// BenchmarkKafkaToTable: 11% less time than with 1 MiB.)
const (
	fetchMaxBytes          = 4 << 20
	fetchPartitionMaxBytes = 256 << 10
)

// heldMaxBytes bounds the records held between Reads: a few fetches, for
// the partitions that were done while others were still being read.
var heldMaxBytes = 16 << 20

// New makes a Kafka source; it connects on its first plan.
func New(opts Options) (*Source, error) {
	switch {
	case len(opts.Brokers) == 0:
		return nil, optionErr("a Kafka source needs bootstrapServers (host:port, ...)")
	case len(opts.Topics) == 0 && opts.Pattern == nil:
		return nil, optionErr("a Kafka source needs subscribe (topics, comma-separated) or subscribePattern (a regular expression)")
	case len(opts.Topics) > 0 && opts.Pattern != nil:
		return nil, optionErr("a Kafka source takes subscribe or subscribePattern, not both")
	}
	if opts.StartingOffsets == "" {
		opts.StartingOffsets = "latest"
	}
	if _, err := parseStarting(opts.StartingOffsets); err != nil {
		return nil, err
	}
	if opts.PollTimeout == 0 {
		opts.PollTimeout = time.Minute
	}
	return &Source{opts: opts}, nil
}

func optionErr(format string, args ...any) error {
	return domain.Errorf(domain.CodeSourceOptionInvalid, format, args...)
}

// Schema is the schema of the rows the source reads.
func (s *Source) Schema() domain.Schema {
	if s.opts.IncludeHeaders {
		return SchemaWithHeaders
	}
	return Schema
}

func (s *Source) String() string {
	what := strings.Join(s.opts.Topics, ", ")
	if s.opts.Pattern != nil {
		what = "topics matching " + s.opts.Pattern.String()
	}
	return "kafka " + what + " at " + strings.Join(s.opts.Brokers, ",")
}

// offsets are a position in each partition, as Spark writes them:
// {"topic": {"0": 23}}.
type offsets map[string]map[int32]int64

// fromKey holds, in a batch's end offset, where the batch starts in the
// partitions its start offset does not have (all of them, for a flow's
// first batch; a new partition's earliest): Read then reads the range
// Plan planned, whatever the topic's earliest and latest are by then. No
// topic is named so ('$' is not in Kafka's topic names).
const fromKey = "$from"

func (o offsets) MarshalJSON() ([]byte, error) {
	return json.Marshal(o.text())
}

func (o offsets) text() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for t, ps := range o {
		out[t] = map[string]int64{}
		for p, off := range ps {
			out[t][strconv.Itoa(int(p))] = off
		}
	}
	return out
}

// position is a batch's end: where each partition is read to, and where
// the batch started in partitions the batch before did not have.
type position struct {
	to, from offsets
}

func (p position) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	for t, ps := range p.to.text() {
		out[t] = ps
	}
	if len(p.from) > 0 {
		out[fromKey] = p.from.text()
	}
	return json.Marshal(out)
}

func parsePosition(raw []byte) (position, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return position{}, err
	}
	var p position
	var err error
	if f, ok := in[fromKey]; ok {
		if p.from, err = parseOffsets(f); err != nil {
			return position{}, err
		}
		delete(in, fromKey)
	}
	rest, _ := json.Marshal(in)
	p.to, err = parseOffsets(rest)
	return p, err
}

func parseOffsets(raw []byte) (offsets, error) {
	var in map[string]map[string]int64
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	out := offsets{}
	for t, ps := range in {
		out[t] = map[int32]int64{}
		for p, off := range ps {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("partition %q of topic %s is not a number", p, t)
			}
			out[t][int32(n)] = off
		}
	}
	return out, nil
}

// parseStarting reads startingOffsets: nil offsets for earliest (-2 in
// each) or latest (-1), or the JSON's.
func parseStarting(s string) (offsets, error) {
	switch strings.ToLower(s) {
	case "earliest":
		return offsets{"*": {-1: -2}}, nil
	case "latest":
		return offsets{"*": {-1: -1}}, nil
	}
	o, err := parseOffsets([]byte(s))
	if err != nil {
		return nil, optionErr("startingOffsets must be earliest, latest or JSON like {\"topic\": {\"0\": 23}}, not %q: %v", s, err)
	}
	return o, nil
}

func (s *Source) client() (*kgo.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl == nil {
		// metadata at most 100 ms old: a plan, one a micro-batch, sees new
		// partitions and topics at once
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.opts.Brokers...), kgo.MetadataMinAge(100*time.Millisecond))
		if err != nil {
			return nil, err
		}
		s.cl = cl
	}
	return s.cl, nil
}

// Close releases the connection of the source.
func (s *Source) Close() {
	s.mu.Lock()
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	s.mu.Unlock()
	s.readMu.Lock() // after a Read going on, which Close does not cut short
	defer s.readMu.Unlock()
	s.dropReader()
}

// dropReader closes the consumer; the next Read starts a new one.
func (s *Source) dropReader() {
	if s.reader != nil {
		s.reader.cl.Close()
		s.reader = nil
	}
}

// unavailable is an error of a broker that may answer later.
func unavailable(err error, what string) error {
	return domain.Wrap(domain.CodeSourceUnavailable, err, what).AsRetriable()
}

// topics are the topics read now: the subscribed ones, or those matching
// the pattern.
func (s *Source) topics(ctx context.Context, adm *kadm.Client) ([]string, error) {
	if s.opts.Pattern == nil {
		return s.opts.Topics, nil
	}
	details, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range details.Names() {
		if s.opts.Pattern.MatchString(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Plan returns the offsets the next batch reads to: each partition's end
// (its high watermark), within the limit, shared out among partitions in
// turn.
func (s *Source) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	cl, err := s.client()
	if err != nil {
		return nil, false, unavailable(err, s.String())
	}
	adm := kadm.NewClient(cl)
	topics, err := s.topics(ctx, adm)
	if err != nil {
		return nil, false, unavailable(err, s.String())
	}
	if len(topics) == 0 {
		return nil, false, nil
	}
	// read_committed: a batch ends at the last stable offset, before any
	// open transaction
	ends, err := adm.ListCommittedOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, false, unavailable(err, s.String())
	}
	earliest, err := adm.ListStartOffsets(ctx, topics...)
	if err == nil {
		err = earliest.Error()
	}
	if err != nil {
		return nil, false, unavailable(err, s.String())
	}
	from := offsets{}
	if start != nil {
		prev, err := parsePosition(start)
		if err != nil {
			return nil, false, domain.Errorf(domain.CodeCheckpointInvalid, "the Kafka offsets %s of the checkpoint cannot be read: %v", start, err)
		}
		from = prev.to
	} else {
		given, _ := parseStarting(s.opts.StartingOffsets)
		ends.Each(func(o kadm.ListedOffset) {
			pos, ok := given[o.Topic][o.Partition]
			if !ok {
				pos, ok = given["*"][-1]
			}
			if !ok {
				pos = -1 // a partition JSON leaves out: latest, as Spark
			}
			if from[o.Topic] == nil {
				from[o.Topic] = map[int32]int64{}
			}
			switch pos {
			case -2:
				e, _ := earliest.Lookup(o.Topic, o.Partition)
				pos = e.Offset
			case -1:
				pos = o.Offset
			}
			from[o.Topic][o.Partition] = pos
		})
	}
	// new partitions (and topics) start at their earliest
	type part struct {
		topic     string
		partition int32
		at, end   int64
	}
	var parts []part
	starts := offsets{} // where the batch starts in partitions start lacks
	ends.Each(func(o kadm.ListedOffset) {
		at, ok := from[o.Topic][o.Partition]
		if !ok {
			e, _ := earliest.Lookup(o.Topic, o.Partition)
			at = e.Offset
		}
		if start == nil || !ok {
			if starts[o.Topic] == nil {
				starts[o.Topic] = map[int32]int64{}
			}
			starts[o.Topic][o.Partition] = at
		}
		parts = append(parts, part{topic: o.Topic, partition: o.Partition, at: at, end: max(o.Offset, at)})
	})
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].topic != parts[j].topic {
			return parts[i].topic < parts[j].topic
		}
		return parts[i].partition < parts[j].partition
	})
	budget := limit.MaxRows
	if m := s.opts.MaxOffsetsPerTrigger; m > 0 && (budget == 0 || m < budget) {
		budget = m
	}
	to := make([]int64, len(parts))
	for i, p := range parts {
		to[i] = p.at
	}
	if budget == 0 {
		for i, p := range parts {
			to[i] = p.end
		}
	} else {
		// one offset to each partition that has more, in turn, until the
		// budget is spent: no partition starves
		for left := budget; left > 0; {
			moved := int64(0)
			share := max(1, left/int64(len(parts)))
			for i, p := range parts {
				if left == 0 {
					break
				}
				n := min(share, p.end-to[i], left)
				to[i] += n
				left -= n
				moved += n
			}
			if moved == 0 {
				break
			}
		}
	}
	out := offsets{}
	more := false
	for i, p := range parts {
		if out[p.topic] == nil {
			out[p.topic] = map[int32]int64{}
		}
		out[p.topic][p.partition] = to[i]
		more = more || to[i] > p.at
	}
	if !more && start != nil {
		return nil, false, nil
	}
	// A flow's first plan returns a position even when nothing is new, so
	// that where it starts (latest, say) is kept in its checkpoint: planned
	// again, latest would move on with the topic and nothing be read.
	end, err := json.Marshal(position{to: out, from: starts})
	return end, err == nil, err
}

// Read returns the records of [start, end) of each partition, in order of
// topic, partition and offset.
func (s *Source) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	from := offsets{}
	if start != nil {
		prev, err := parsePosition(start)
		if err != nil {
			return nil, domain.Errorf(domain.CodeCheckpointInvalid, "the Kafka offsets %s cannot be read: %v", start, err)
		}
		from = prev.to
	}
	pos, err := parsePosition(end)
	if err != nil {
		return nil, domain.Errorf(domain.CodeCheckpointInvalid, "the Kafka offsets %s cannot be read: %v", end, err)
	}
	for t, ps := range pos.from { // where Plan started the partitions start lacked
		if from[t] == nil {
			from[t] = map[int32]int64{}
		}
		for p, at := range ps {
			from[t][p] = at
		}
	}
	want := map[partition][2]int64{} // [from, to) of each partition read
	for t, ps := range pos.to {
		for p, upto := range ps {
			at, ok := from[t][p]
			if !ok {
				return nil, domain.Errorf(domain.CodeCheckpointInvalid, "the Kafka offsets %s say nowhere where partition %d of %s starts", end, p, t)
			}
			if upto > at {
				want[partition{t, p}] = [2]int64{at, upto}
			}
		}
	}
	if len(want) == 0 {
		return domain.NewBatch(s.Schema(), 0), nil
	}
	if err := s.checkDataLoss(ctx, want); err != nil {
		return nil, err
	}
	if len(want) == 0 { // all gone, and failOnDataLoss is false
		return domain.NewBatch(s.Schema(), 0), nil
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	rows, err := s.readRanges(ctx, want, end)
	if err != nil {
		// where the consumer is is no longer known
		s.dropReader()
	}
	return rows, err
}

// checkDataLoss looks for records retention deleted before they were
// read: an error, or, with failOnDataLoss false, a range that starts
// later (or is gone).
func (s *Source) checkDataLoss(ctx context.Context, want map[partition][2]int64) error {
	meta, err := s.client()
	if err != nil {
		return unavailable(err, s.String())
	}
	var topics []string
	for tp := range want {
		if !slices.Contains(topics, tp.topic) {
			topics = append(topics, tp.topic)
		}
	}
	logStart, err := kadm.NewClient(meta).ListStartOffsets(ctx, topics...)
	if err == nil {
		err = logStart.Error()
	}
	if err != nil {
		return unavailable(err, s.String())
	}
	for tp, w := range want {
		ls, ok := logStart.Lookup(tp.topic, tp.part)
		if !ok || ls.Offset <= w[0] {
			continue
		}
		if s.opts.FailOnDataLoss {
			return domain.Errorf(domain.CodeSourceDataLoss, "topic %s, partition %d: offsets %d to %d are gone from Kafka (deleted by retention, or the topic was recreated) before sluice read them", tp.topic, tp.part, w[0], min(ls.Offset, w[1])-1).
				WithHint("set failOnDataLoss => 'false' to read what is left, or run a full refresh of the flow")
		}
		if ls.Offset >= w[1] {
			delete(want, tp)
		} else {
			want[tp] = [2]int64{ls.Offset, w[1]}
		}
	}
	return nil
}

// readRanges reads the records of each partition's range, going on with
// the consumer of the Read before when the ranges start where it stopped.
func (s *Source) readRanges(ctx context.Context, want map[partition][2]int64, end domain.Offset) (*domain.Batch, error) {
	r := s.reader
	for tp, w := range want {
		if r == nil {
			break
		}
		if at, ok := r.at[tp]; !ok || at != w[0] {
			s.dropReader()
			r = nil
		}
	}
	if r == nil {
		consume := map[string]map[int32]kgo.Offset{}
		r = &consumer{at: map[partition]int64{}, ahead: map[partition][]*kgo.Record{}}
		for tp, w := range want {
			if consume[tp.topic] == nil {
				consume[tp.topic] = map[int32]kgo.Offset{}
			}
			consume[tp.topic][tp.part] = kgo.NewOffset().At(w[0])
			r.at[tp] = w[0]
		}
		// read_committed, markers kept: every offset up to the range's end
		// is a record, a marker, or a record of an aborted transaction
		// before its marker, so a record or a marker at or past the end's
		// last offset comes. An offset retention deleted meanwhile is an
		// error, never a silent jump to the log's start.
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.opts.Brokers...), kgo.ConsumePartitions(consume), kgo.KeepControlRecords(),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxBytes(fetchMaxBytes), kgo.FetchMaxPartitionBytes(fetchPartitionMaxBytes),
			kgo.ConsumeResetOffset(kgo.NoResetOffset()))
		if err != nil {
			return nil, unavailable(err, s.String())
		}
		r.cl = cl
		s.reader = r
	}
	// Each partition's records go into its own columns as they come, in
	// offset order; the partitions are put in order at the end. No record
	// is kept past its fetch but those past a range's end, held for the
	// next Read.
	reads := map[partition]*rangeRead{}
	for tp, w := range want {
		reads[tp] = &rangeRead{from: w[0], to: w[1], rows: newColumns(s.Schema(), int(min(w[1]-w[0], 1<<20)))}
	}
	pending := len(want)
	take := func(tp partition, recs []*kgo.Record) {
		rr := reads[tp]
		if rr == nil || rr.done {
			r.hold(tp, recs)
			return
		}
		for i, rec := range recs {
			if rec.Offset < rr.from {
				continue
			}
			if rec.Offset >= rr.to {
				r.hold(tp, recs[i:])
				rr.done = true
				pending--
				return
			}
			if !rec.Attrs.IsControl() { // a transaction's marker is no record
				rr.rows.add(rec)
			}
			if rec.Offset == rr.to-1 {
				rr.done = true
				pending--
				r.hold(tp, recs[i+1:])
				return
			}
		}
	}
	for tp := range want {
		take(tp, r.release(tp))
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.PollTimeout)
	defer cancel()
	for pending > 0 {
		fetches := r.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, unavailable(fmt.Errorf("the records up to %s did not all come within %s", end, s.opts.PollTimeout), s.String())
		}
		var fetchErr error
		fetches.EachError(func(t string, p int32, err error) { fetchErr = fmt.Errorf("topic %s, partition %d: %w", t, p, err) })
		if fetchErr != nil {
			return nil, unavailable(fetchErr, s.String())
		}
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			take(partition{p.Topic, p.Partition}, p.Records)
		})
	}
	order := make([]partition, 0, len(reads))
	for tp := range reads {
		order = append(order, tp)
	}
	slices.SortFunc(order, func(a, b partition) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.part) - int(b.part)
	})
	parts := make([]*domain.Batch, len(order))
	for i, tp := range order {
		b, err := domain.BatchOf(s.Schema(), reads[tp].rows.cols)
		if err != nil {
			return nil, err
		}
		parts[i] = b
	}
	for tp, w := range want {
		if _, ok := r.at[tp]; ok { // not let go by hold
			r.at[tp] = w[1]
		}
	}
	if len(parts) == 0 {
		return domain.NewBatch(s.Schema(), 0), nil
	}
	return domain.Concat(parts...)
}

// rangeRead is the reading of one partition's range.
type rangeRead struct {
	from, to int64 // [from, to)
	done     bool
	rows     *columns
}

// hold keeps records of a partition fetched past its range, in offset
// order, for the next Read. Past heldMaxBytes held, the partition is let
// go: the next Read of it starts a new consumer.
func (c *consumer) hold(tp partition, recs []*kgo.Record) {
	if _, ok := c.at[tp]; !ok || len(recs) == 0 {
		return
	}
	size := 0
	for _, rec := range recs {
		size += heldSize(rec)
	}
	if c.held+size > heldMaxBytes {
		c.release(tp)
		delete(c.at, tp)
		return
	}
	c.ahead[tp] = append(c.ahead[tp], recs...)
	c.held += size
}

// release gives back the records held of a partition.
func (c *consumer) release(tp partition) []*kgo.Record {
	held := c.ahead[tp]
	delete(c.ahead, tp)
	for _, rec := range held {
		c.held -= heldSize(rec)
	}
	return held
}

// heldSize is what a held record counts for: its key, value and headers,
// and the record itself, so that records without values count too.
func heldSize(rec *kgo.Record) int {
	n := 128 + len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// columns are the rows read, built column by column: a record costs no
// boxed value but its headers.
type columns struct {
	cols []*domain.Column
}

func newColumns(schema domain.Schema, n int) *columns {
	c := columns{cols: make([]*domain.Column, len(schema.Fields))}
	for j, f := range schema.Fields {
		c.cols[j] = domain.NewColumn(f.Type.Kind, n)
	}
	return &c
}

func (c *columns) add(r *kgo.Record) {
	bytesOrNull := func(col *domain.Column, b []byte) {
		if b == nil {
			if col.Nulls == nil {
				col.Nulls = make([]bool, len(col.Strs), cap(col.Strs))
			}
			col.Strs, col.Nulls = append(col.Strs, ""), append(col.Nulls, true)
			return
		}
		col.Strs = append(col.Strs, string(b))
		if col.Nulls != nil {
			col.Nulls = append(col.Nulls, false)
		}
	}
	bytesOrNull(c.cols[0], r.Key)
	bytesOrNull(c.cols[1], r.Value)
	c.cols[2].Strs = append(c.cols[2].Strs, r.Topic)
	c.cols[3].Ints = append(c.cols[3].Ints, int64(r.Partition))
	c.cols[4].Ints = append(c.cols[4].Ints, r.Offset)
	c.cols[5].Ints = append(c.cols[5].Ints, r.Timestamp.UnixMicro())
	c.cols[6].Ints = append(c.cols[6].Ints, int64(r.Attrs.TimestampType()))
	if len(c.cols) == len(Schema.Fields) {
		return
	}
	headers := make([]domain.Value, len(r.Headers))
	for i, h := range r.Headers {
		v := domain.Null()
		if h.Value != nil {
			v = domain.Bytes(h.Value)
		}
		headers[i] = domain.Struct(domain.String(h.Key), v)
	}
	c.cols[7].Values = append(c.cols[7].Values, domain.List(headers...))
}
