package eventstore

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// benchEvent is a small flow_progress event, about 200 bytes encoded.
func benchEvent() *domain.Event {
	backlog := int64(1234)
	return &domain.Event{
		Type:    domain.EventFlowProgress,
		Level:   domain.LevelMetrics,
		Message: "flow is RUNNING",
		Origin:  domain.Origin{PipelineName: "shop", UpdateID: "8b0f3c1e", FlowName: "orders_clean", DatasetName: "orders_clean"},
		Details: domain.Details{FlowProgress: &domain.FlowProgress{
			Status:  domain.FlowRunning,
			Metrics: &domain.FlowMetrics{NumOutputRows: 4096, BacklogRecords: &backlog},
		}},
	}
}

// BenchmarkAppend appends one small event per Append from 16 concurrent
// goroutines with sync writes on: "group" with group commit (the default),
// "txn_per_event" with one transaction, and one disk sync, per Append.
func BenchmarkAppend(b *testing.B) {
	const writers = 16
	for _, bc := range []struct {
		name string
		opts []Option
	}{
		{"group", nil},
		{"txn_per_event", []Option{WithMaxGroup(1)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := Open(b.TempDir(), append([]Option{WithSyncWrites(true), WithGCInterval(0)}, bc.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			sample := benchEvent()
			sample.ID, sample.Timestamp = "00000000-0000-4000-8000-000000000000", time.Now()
			encoded, err := domain.EncodeEvent(sample)
			if err != nil {
				b.Fatal(err)
			}
			// RunParallel starts parallelism*GOMAXPROCS goroutines.
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism((writers + procs - 1) / procs)
			var started atomic.Int64
			commitsBefore := s.commits.Load()
			ctx := context.Background()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				started.Add(1)
				for pb.Next() {
					if _, err := s.Append(ctx, benchEvent()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(started.Load()), "goroutines")
			b.ReportMetric(float64(len(encoded)), "B/event")
			if commits := s.commits.Load() - commitsBefore; commits > 0 {
				b.ReportMetric(float64(b.N)/float64(commits), "events/txn")
			}
		})
	}
}
