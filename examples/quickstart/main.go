// Command quickstart runs the depends_on pattern end to end on embedded
// defaults:
//
//   - two once backfills (events_2024, events_2025) load bundled JSON files
//     into one streaming table, in parallel;
//   - a live flow on a watched directory starts after both;
//   - a foreachBatch export runs after the live flow, and an audit after the
//     export, each receiving the table's new rows with their batch ids.
//
// It runs one update, drops a new file into the watched directory, and runs
// a second: the drained backfills are skipped and only the new file flows
// through. It prints what ran in what order and the table counts.
package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

func main() {
	storage := flag.String("storage", "", "storage directory (default: a new temporary directory, removed at the end)")
	flag.Parse()
	if err := run(*storage); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// bundled holds the sample files, so the program runs from anywhere.
//
//go:embed data
var bundled embed.FS

// sink counts what a foreachBatch sink received.
type sink struct {
	mu      sync.Mutex
	rows    int
	batches []int64
}

func (s *sink) deliver(_ context.Context, rows *domain.Batch, batchID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows += rows.Len()
	s.batches = append(s.batches, batchID)
	return nil
}

func run(storage string) error {
	work, err := os.MkdirTemp("", "sluice-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	keep := storage != ""
	if !keep {
		storage = filepath.Join(work, "storage")
	}
	// The sample files go to the work directory; the watched directory,
	// live, starts with one file.
	if err := os.CopyFS(work, bundled); err != nil {
		return err
	}
	data := filepath.Join(work, "data")
	live := filepath.Join(data, "live")
	store, err := eventstore.Open(storage)
	if err != nil {
		return err
	}
	defer store.Close()

	json := sources.FileOptions{Format: "json"}
	var export, audit sink
	p := pipeline.New("quickstart")
	p.CreateStreamingTable("events", pipeline.Comment("every event: history first, then live"))
	p.AppendFlow("events", pipeline.BatchFrom(sources.Files(filepath.Join(data, "events_2024"), json)),
		pipeline.Name("events_2024"), pipeline.Once())
	p.AppendFlow("events", pipeline.BatchFrom(sources.Files(filepath.Join(data, "events_2025"), json)),
		pipeline.Name("events_2025"), pipeline.Once())
	p.AppendFlow("events", pipeline.StreamFrom(sources.Files(live, json)),
		pipeline.Name("events_live"), pipeline.DependsOn("events_2024", "events_2025"))
	p.ForeachBatchSink("export_sink", export.deliver)
	p.AppendFlow("export_sink", pipeline.ReadStream("events"), pipeline.Name("export"), pipeline.DependsOn("events_live"))
	p.ForeachBatchSink("audit_sink", audit.deliver)
	p.AppendFlow("audit_sink", pipeline.ReadStream("events"), pipeline.Name("audit"), pipeline.DependsOn("export"))

	for i := 1; i <= 2; i++ {
		if i == 2 {
			fmt.Println("\nA new file lands in the watched directory; the next update reads only it.")
			name := fmt.Sprintf("landed-%d.json", time.Now().UnixNano()) // new on every run, even with -storage
			if err := os.WriteFile(filepath.Join(live, name), []byte(newEvents), 0o644); err != nil {
				return err
			}
		}
		res, err := p.Run(context.Background(), store, processors.Options{Cause: "quickstart"})
		if err != nil {
			return err
		}
		fmt.Printf("\nupdate %d (%s): %s in %s\n", i, res.UpdateID[:8], res.State, res.Finished.Sub(res.Started).Round(1e6))
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
		fmt.Printf("  table events: %d rows; export received %d rows (batch ids %v), audit %d rows (batch ids %v)\n",
			events.Len(), export.rows, export.batches, audit.rows, audit.batches)
	}
	fmt.Printf("\nThe log holds %d events.", store.LastSeq())
	if keep {
		fmt.Printf(" Storage: %s\n", storage)
	} else {
		fmt.Println(" Pass -storage DIR to keep the storage and run again.")
	}
	return nil
}

const newEvents = `{"event_id": 540, "user": "ana", "kind": "purchase", "amount": 42.5, "ts": "2026-12-02T09:00:00Z"}
{"event_id": 541, "user": "bo", "kind": "click", "amount": null, "ts": "2026-12-02T09:01:00Z"}
{"event_id": 542, "user": "chen", "kind": "page_view", "amount": null, "ts": "2026-12-02T09:02:00Z"}
`

// printOrder prints each flow's start and end in an update, in log order.
func printOrder(store *eventstore.Store, updateID string) error {
	fmt.Println("  seq  flow         state")
	return store.Scan(context.Background(), eventstore.Filter{Update: updateID, Types: []domain.EventType{domain.EventFlowProgress}},
		func(ev *domain.Event) error {
			fp := ev.Details.FlowProgress
			switch fp.Status {
			case domain.FlowStarting, domain.FlowCompleted, domain.FlowSkipped, domain.FlowFailed:
			default:
				return nil
			}
			var b strings.Builder
			fmt.Fprintf(&b, "  %3d  %-12s %s", ev.Seq, ev.Origin.FlowName, fp.Status)
			if fp.Reason != "" {
				fmt.Fprintf(&b, " (%s)", fp.Reason)
			}
			if fp.Metrics != nil && fp.Status == domain.FlowCompleted {
				fmt.Fprintf(&b, ", %d rows in %d batches", fp.Metrics.NumOutputRows, fp.Metrics.NumBatches)
			}
			fmt.Println(b.String())
			return nil
		})
}
