package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// The deduplication benchmark: a stream of clicks whose event time advances
// a second every 100 rows, each click sent twice, the copy up to 30 seconds
// later, deduplicated within a watermark of one minute. State must stay
// flat as the stream grows: it reports the identities remembered at the end
// and the peak heap, for 1M and 10M rows.
//
//	go test -run XXX -bench BenchmarkDedupWithinWatermark -benchtime 1x ./pipeline/
func BenchmarkDedupWithinWatermark(b *testing.B) {
	for _, n := range []int64{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) { benchDedup(b, n, time.Minute, 0) })
	}
}

// BenchmarkDedupSpilled: the same stream deduplicated within a watermark
// of a day, so that every click's identity lives to the end, with the
// state's memory budget at 16 MiB (the older identities move to disk) and
// without one: in memory the heap grows with the state; spilled it grows
// by about a byte and a half an identity.
//
//	go test -run XXX -bench BenchmarkDedupSpilled -benchtime 1x ./pipeline/
func BenchmarkDedupSpilled(b *testing.B) {
	for _, n := range []int64{2_000_000, 8_000_000} {
		for _, budget := range []int64{16 << 20, -1} {
			b.Run(fmt.Sprintf("rows=%d/budget=%d", n, budget), func(b *testing.B) { benchDedup(b, n, 24*time.Hour, budget) })
		}
	}
	// Identities forgotten as they come: a delay of two hours holds about
	// 720,000 live, turning over eleven times; spilled, forgetting reads
	// the oldest run in order.
	for _, budget := range []int64{4 << 20, -1} {
		b.Run(fmt.Sprintf("rows=8000000/delay=2h/budget=%d", budget), func(b *testing.B) { benchDedup(b, 8_000_000, 2*time.Hour, budget) })
	}
}

// benchDedup runs n clicks of clickSource through a deduplication within
// a watermark of the given delay, the state's memory budget as
// processors.Options.StateMemory says.
func benchDedup(b *testing.B, n int64, delay time.Duration, budget int64) {
	for i := 0; i < b.N; i++ {
		store, err := eventstore.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		p := New("dedup")
		p.StreamingTable("clean", StreamFrom(&clickSource{n: n}).WithWatermark("ts", delay).DropDuplicatesWithinWatermark("click"))
		var peak atomic.Uint64
		stop := make(chan struct{})
		go func() {
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		res, err := p.Run(context.Background(), store, processors.Options{Limit: domain.ReadLimit{MaxRows: 100_000}, StateMemory: budget})
		elapsed := time.Since(start)
		close(stop)
		if err != nil || res.State != domain.UpdateCompleted {
			b.Fatalf("run: %v %v", err, res.Err)
		}
		var last *domain.StreamState
		var dups int64
		if err := store.Scan(context.Background(), eventstore.Filter{Types: []domain.EventType{domain.EventStreamState}}, func(ev *domain.Event) error {
			last = ev.Details.StreamState
			dups += last.NumDuplicatesDropped
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if dups != n/2 {
			b.Fatalf("%d duplicates dropped, want %d", dups, n/2)
		}
		b.ReportMetric(float64(n)/elapsed.Seconds(), "rows/s")
		b.ReportMetric(float64(last.NumStateRows), "state-entries")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		store.Close()
	}
}

// clickSource yields n rows (click, ts): click k/2 for row k, so each click
// comes twice, and an event time that advances a second every 100 rows; the
// second copy of a click comes up to 30 seconds after the first. Offsets
// are row numbers.
type clickSource struct{ n int64 }

func (s *clickSource) String() string { return "clicks" }

func (s *clickSource) Plan(_ context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	var from int64
	if len(start) > 0 {
		if err := json.Unmarshal(start, &from); err != nil {
			return nil, false, err
		}
	}
	if from >= s.n {
		return nil, false, nil
	}
	to := min(s.n, from+limit.MaxRows)
	end, err := json.Marshal(to)
	return end, true, err
}

var clickSchema = domain.NewSchema(domain.Field{Name: "click", Type: domain.TypeInt64}, domain.Field{Name: "ts", Type: domain.Type{Kind: domain.KindTimestamp}})

func (s *clickSource) Read(_ context.Context, start, end domain.Offset) (*domain.Batch, error) {
	var from, to int64
	if len(start) > 0 {
		if err := json.Unmarshal(start, &from); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(end, &to); err != nil {
		return nil, err
	}
	clicks := domain.NewColumn(domain.KindInt64, int(to-from))
	times := domain.NewColumn(domain.KindTimestamp, int(to-from))
	for k := from; k < to; k++ {
		// pairs of rows 2j and 2j+1 hold click j, the second copy
		// shifted by up to 3,000 rows (30 s)
		j := k / 2
		row := k
		if k%2 == 1 {
			row = k + (j*7919)%3000
		}
		clicks.Ints = append(clicks.Ints, j)
		times.Ints = append(times.Ints, row/100*1_000_000)
	}
	return domain.BatchOf(clickSchema, []*domain.Column{clicks, times})
}
