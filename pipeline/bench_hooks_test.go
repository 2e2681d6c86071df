package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// BenchmarkHookOverhead times the update (its start to its end, as its
// result says) of the 1M-row ingest without a hook, and with a hook on
// every batch_committed that takes 1 s per event: a hook runs beside the
// update, reading the log, so the update's time is the same.
func BenchmarkHookOverhead(b *testing.B) {
	for _, tc := range []struct {
		name string
		hook bool
	}{{"no_hook", false}, {"sleeping_hook", true}} {
		b.Run(tc.name, func(b *testing.B) {
			p := benchPipeline(benchFilesDir(b), new(int))
			p.HookWait = time.Millisecond // what is left is told by the next run
			if tc.hook {
				p.OnEvent(processors.Hook{Name: "slow",
					Match: func(ev *domain.Event) (string, bool) { return string(ev.Type), true },
					Types: []domain.EventType{domain.EventBatchCommitted},
					Deliver: func(ctx context.Context, _ domain.HookDelivery) error {
						select {
						case <-time.After(time.Second):
						case <-ctx.Done():
						}
						return nil
					}})
			}
			var update time.Duration
			for b.Loop() {
				b.StopTimer()
				store, err := eventstore.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := p.Run(context.Background(), store, processors.Options{Refresh: []string{"events"}})
				b.StopTimer()
				if err != nil || res.State != domain.UpdateCompleted {
					b.Fatalf("update: %v %v", res, err)
				}
				update += res.Finished.Sub(res.Started)
				store.Close()
				b.StartTimer()
			}
			b.ReportMetric(update.Seconds()/float64(b.N), "update-s")
		})
	}
}

// BenchmarkIngestExpectations times the 1M-row ingest into a table
// without expectations and with five (warn), in the same run.
func BenchmarkIngestExpectations(b *testing.B) {
	five := ExpectAll(map[string]string{
		"id_positive":    "id >= 0",
		"has_user":       "user IS NOT NULL",
		"known_event":    "event IN ('page_view', 'click')",
		"amount_bounded": "amount BETWEEN 0 AND 100000",
		"has_time":       "ts IS NOT NULL",
	})
	for _, tc := range []struct {
		name string
		opts []Option
	}{{"none", nil}, {"five", []Option{five}}} {
		b.Run(tc.name, func(b *testing.B) {
			p := New("bench")
			p.CreateStreamingTable("events", tc.opts...)
			p.AppendFlow("events", StreamFrom(sources.Files(benchFilesDir(b), sources.FileOptions{Format: "json", MaxFilesPerTrigger: 5})), Name("ingest"))
			for b.Loop() {
				b.StopTimer()
				store, err := eventstore.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := p.Run(context.Background(), store, processors.Options{})
				b.StopTimer()
				if err != nil || res.State != domain.UpdateCompleted {
					b.Fatalf("update: %v %v", res, err)
				}
				store.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
