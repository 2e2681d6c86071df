package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// openStore opens an event store in a new temporary directory; close
// removes it.
func openStore() (store *eventstore.Store, close func()) {
	dir, err := os.MkdirTemp("", "sluice-example")
	if err != nil {
		log.Fatal(err)
	}
	store, err = eventstore.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	return store, func() {
		store.Close()
		os.RemoveAll(dir)
	}
}

// A pipeline declared in Go: a streaming table from a source, a second one
// filtering it, run as one update, then read.
func Example() {
	store, closeStore := openStore()
	defer closeStore()
	ctx := context.Background()

	p := pipeline.New("numbers")
	p.StreamingTable("numbers", pipeline.StreamFrom(sources.Range(0, 10)))
	p.StreamingTable("even", pipeline.ReadStream("numbers").Filter(func(r pipeline.Row) bool {
		return r.Get("id").AsInt()%2 == 0
	}))
	res, err := p.Run(ctx, store, processors.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State)
	even, err := processors.ReadTable(ctx, store, "even", 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, row := range even.Rows() {
		fmt.Print(row[0], " ")
	}
	fmt.Println()
	// Output:
	// COMPLETED
	// 0 2 4 6 8
}

// A foreachBatch sink receives each micro-batch with its id: an external
// write keyed by the id is idempotent, since a micro-batch that runs again
// after a crash has the same id and the same rows.
func ExamplePipeline_ForeachBatchSink() {
	store, closeStore := openStore()
	defer closeStore()

	p := pipeline.New("export")
	p.StreamingTable("numbers", pipeline.StreamFrom(sources.Range(0, 5)))
	p.ForeachBatchSink("printer", func(_ context.Context, rows *domain.Batch, batchID int64) error {
		fmt.Printf("batch %d: %d rows\n", batchID, rows.Len())
		return nil
	})
	p.AppendFlow("printer", pipeline.ReadStream("numbers"), pipeline.Name("print_numbers"))
	if _, err := p.Run(context.Background(), store, processors.Options{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// batch 0: 5 rows
}

// SQL and Go declarations in one pipeline: a dataset declared in Go reads
// one of the SQL files.
func ExamplePipeline_LoadSQL() {
	store, closeStore := openStore()
	defer closeStore()
	ctx := context.Background()

	p := pipeline.New("mixed")
	problems := p.LoadSQL([]pipeline.SQLFile{{Path: "totals.sql", Text: `
CREATE OR REFRESH MATERIALIZED VIEW totals AS
SELECT count(*) AS n, sum(id) AS total FROM range(1, 5);`}}, pipeline.SQLOptions{})
	if len(problems) > 0 {
		log.Fatal(problems)
	}
	p.MaterializedView("large_totals", pipeline.Read("totals").Filter(func(r pipeline.Row) bool {
		return r.Get("total").AsInt() > 5
	}))
	if _, err := p.Run(ctx, store, processors.Options{}); err != nil {
		log.Fatal(err)
	}
	large, err := processors.ReadTable(ctx, store, "large_totals", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(large.Rows())
	// Output:
	// [[4 10]]
}

// Validation reports every problem of a pipeline at once, each with a code.
func ExamplePipeline_Validate() {
	p := pipeline.New("broken")
	p.StreamingTable("orders", pipeline.ReadStream("raw_orders"))
	p.MaterializedView("orders", pipeline.Read("orders"))
	for _, problem := range p.Validate() {
		fmt.Println(problem.Code)
	}
	// Output:
	// PIPELINE_DUPLICATE_IDENTIFIERS
	// TABLE_OR_VIEW_NOT_FOUND
}
