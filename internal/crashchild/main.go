// Command crashchild runs one triggered update of a pipeline over JSON files,
// for the crash test beside it, which kills it with SIGKILL at random moments
// and restarts it until an update completes.
//
// The pipeline: files -> events (append flow, a few files per micro-batch);
// events -> copy (a stream of the table); events -> a foreachBatch sink that
// appends every delivery (batch id and row ids) to a file, synced before the
// function returns; events -> scd1 and scd2, AUTO CDC flows keyed by user,
// sequenced by a permutation of the ids (so changes arrive out of order),
// with deletes; events -> timed (each row's pair, id / 2, and a time that
// grows with it) -> dedup, deduplicated by pair within a watermark of ten
// minutes, which keeps the even ids.
//
// The test computes the CDC tables from the input with the sequence and
// delete rule below.
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

func main() {
	input := flag.String("input", "", "directory of JSON lines files")
	storage := flag.String("storage", "", "storage directory")
	deliveries := flag.String("deliveries", "", "file that records foreachBatch deliveries")
	check := flag.Bool("check", false, "instead of running, verify the projections and print each table's ids")
	flag.Parse()
	var err error
	if *check {
		err = printTables(*storage)
	} else {
		err = run(*input, *storage, *deliveries)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashchild:", err)
		os.Exit(1)
	}
}

func run(input, storage, deliveries string) error {
	store, err := eventstore.Open(storage)
	if err != nil {
		return err
	}
	defer store.Close()
	log, err := os.OpenFile(deliveries, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	// A line torn by a kill stays on its own line, so the test can drop it.
	if info, err := log.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if f, err := os.Open(deliveries); err == nil {
			_, _ = f.ReadAt(last, info.Size()-1)
			f.Close()
		}
		if last[0] != '\n' {
			if _, err := log.WriteString("\n"); err != nil {
				return err
			}
		}
	}

	p := pipeline.New("crash")
	p.CreateStreamingTable("events")
	p.AppendFlow("events", pipeline.StreamFrom(sources.Files(input, sources.FileOptions{Format: "json", MaxFilesPerTrigger: 7})), pipeline.Name("ingest"))
	p.StreamingTable("copy", pipeline.ReadStream("events"))
	p.ForeachBatchSink("export", func(_ context.Context, rows *domain.Batch, batchID int64) error {
		ids := make([]string, rows.Len())
		col := rows.Columns[rows.Schema.Index("id")]
		for i := range ids {
			ids[i] = strconv.FormatInt(col.Value(i).AsInt(), 10)
		}
		list := strings.Join(ids, ",")
		line := fmt.Sprintf("%d %08x %s\n", batchID, crc32.ChecksumIEEE([]byte(list)), list)
		if _, err := log.WriteString(line); err != nil {
			return err
		}
		return log.Sync()
	})
	p.AppendFlow("export", pipeline.ReadStream("events"), pipeline.Name("export_events"))
	timed := domain.NewSchema(
		domain.Field{Name: "id", Type: domain.TypeInt64},
		domain.Field{Name: "pair", Type: domain.TypeInt64},
		domain.Field{Name: "at", Type: domain.TypeTimestamp})
	start := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	p.StreamingTable("timed", pipeline.ReadStream("events").Map(timed, func(r pipeline.Row) ([]domain.Value, error) {
		id := r.Get("id").AsInt()
		return []domain.Value{domain.Int(id), domain.Int(id / 2), domain.Timestamp(start.Add(time.Duration(id/2) * time.Second))}, nil
	}))
	p.StreamingTable("dedup", pipeline.ReadStream("timed").WithWatermark("at", 10*time.Minute).DropDuplicatesWithinWatermark("pair"))
	for scd, columns := range map[int][]string{1: {"user", "id"}, 2: {"user", "amount"}} {
		table := fmt.Sprintf("scd%d", scd)
		p.CreateStreamingTable(table)
		p.CreateAutoCDCFlow(pipeline.AutoCDC{Target: table, Name: "cdc_" + table, Source: pipeline.ReadStream("events"),
			Keys: []string{"user"}, SequenceBy: "(id * 7919) % 104000", ApplyAsDeletes: "NOT ok AND id % 5 = 0",
			Columns: columns, StoredAsSCDType: scd})
	}

	res, err := p.Run(context.Background(), store, processors.Options{Limit: domain.ReadLimit{MaxRows: 9000}})
	if err != nil {
		return err
	}
	if res.State != domain.UpdateCompleted {
		return fmt.Errorf("update %s: %v", res.State, res.Err)
	}
	return nil
}

// printTables verifies the store's projections and keyed state against its
// log, then prints
// "table id,id,..." for each table. The test reads it: the check runs here,
// in a binary without the race detector, so that 50 trials stay fast.
func printTables(storage string) error {
	store, err := eventstore.Open(storage)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.VerifyProjections(context.Background()); err != nil {
		return err
	}
	if _, err := processors.VerifyState(context.Background(), store); err != nil {
		return err
	}
	for _, table := range []string{"events", "copy", "dedup"} {
		b, err := processors.ReadTable(context.Background(), store, table, 0)
		if err != nil {
			return err
		}
		ids := make([]string, b.Len())
		if b.Len() > 0 {
			col := b.Columns[b.Schema.Index("id")]
			for i := range ids {
				ids[i] = strconv.FormatInt(col.Value(i).AsInt(), 10)
			}
		}
		fmt.Printf("%s %s\n", table, strings.Join(ids, ","))
	}
	// The CDC tables: scd1 as user=id, scd2 as user@start-end=amount (end
	// empty while current), in the tables' order.
	for _, table := range []string{"scd1", "scd2"} {
		b, err := processors.ReadTable(context.Background(), store, table, 0)
		if err != nil {
			return err
		}
		var rows []string
		for _, r := range b.Rows() {
			if table == "scd1" {
				rows = append(rows, fmt.Sprintf("%s=%d", r[0].AsString(), r[1].AsInt()))
				continue
			}
			end := ""
			if !r[3].IsNull() {
				end = strconv.FormatInt(r[3].AsInt(), 10)
			}
			rows = append(rows, fmt.Sprintf("%s@%d-%s=%s", r[0].AsString(), r[2].AsInt(), end, strconv.FormatFloat(r[1].AsFloat(), 'f', 2, 64)))
		}
		fmt.Printf("cdc %s %s\n", table, strings.Join(rows, ";"))
	}
	return nil
}
