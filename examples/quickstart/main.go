// Command quickstart runs the depends_on pattern end to end on embedded
// defaults: two once backfills into one streaming table, in parallel; a live
// flow that starts after both; a foreachBatch export after the live flow,
// and an audit after the export. It prints what ran in what order, the table
// counts, and then runs the update again to show that drained backfills are
// skipped.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

func main() {
	storage := flag.String("storage", "", "storage directory (default: a new temporary directory)")
	flag.Parse()
	if err := run(*storage); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(storage string) error {
	if storage == "" {
		dir, err := os.MkdirTemp("", "sluice-quickstart-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		storage = dir
	}
	store, err := eventstore.Open(storage)
	if err != nil {
		return err
	}
	defer store.Close()

	var exported, audited atomic.Int64
	p := pipeline.New("quickstart")
	p.CreateStreamingTable("events", pipeline.Comment("every event, history first, then live"))
	p.AppendFlow("events", pipeline.BatchFrom(sources.Range(0, 2024)), pipeline.Name("events_2024"), pipeline.Once())
	p.AppendFlow("events", pipeline.BatchFrom(sources.Range(2024, 4049)), pipeline.Name("events_2025"), pipeline.Once())
	p.AppendFlow("events", pipeline.StreamFrom(sources.Range(4049, 5000)), pipeline.Name("events_live"),
		pipeline.DependsOn("events_2024", "events_2025"))
	p.ForeachBatchSink("export", func(_ context.Context, rows *domain.Batch, batchID int64) error {
		exported.Add(int64(rows.Len()))
		return nil
	})
	p.AppendFlow("export", pipeline.ReadStream("events"), pipeline.Name("export_events"), pipeline.DependsOn("events_live"))
	p.ForeachBatchSink("audit", func(_ context.Context, rows *domain.Batch, batchID int64) error {
		audited.Add(int64(rows.Len()))
		return nil
	})
	p.AppendFlow("audit", pipeline.ReadStream("events"), pipeline.Name("audit_events"), pipeline.DependsOn("export_events"))

	for i := 1; i <= 2; i++ {
		res, err := p.Run(context.Background(), store, processors.Options{Cause: "quickstart"})
		if err != nil {
			return err
		}
		fmt.Printf("update %d (%s): %s\n", i, res.UpdateID[:8], res.State)
		if res.Err != nil {
			return res.Err
		}
		if err := printOrder(store, res.UpdateID); err != nil {
			return err
		}
		events, err := processors.ReadTable(context.Background(), store, "events", 0)
		if err != nil {
			return err
		}
		fmt.Printf("  table events: %d rows; export received %d rows, audit %d\n", events.Len(), exported.Load(), audited.Load())
	}
	return nil
}

// printOrder prints each flow's state changes of an update, in log order.
func printOrder(store *eventstore.Store, updateID string) error {
	return store.Scan(context.Background(), eventstore.Filter{Update: updateID, Types: []domain.EventType{domain.EventFlowProgress}},
		func(ev *domain.Event) error {
			fp := ev.Details.FlowProgress
			switch fp.Status {
			case domain.FlowStarting, domain.FlowCompleted, domain.FlowSkipped, domain.FlowFailed:
				line := fmt.Sprintf("  %6d  %-14s %s", ev.Seq, ev.Origin.FlowName, fp.Status)
				if fp.Reason != "" {
					line += " (" + fp.Reason + ")"
				}
				if fp.Metrics != nil {
					line += fmt.Sprintf(", %d rows", fp.Metrics.NumOutputRows)
				}
				fmt.Println(line)
			}
			return nil
		})
}
