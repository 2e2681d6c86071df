// Command withgo is the sluice command line over the quickstart's SQL
// pipeline plus a flow declared in Go: a foreachBatch sink that appends each
// micro-batch of purchases to a JSON lines file, keyed by batch id so that a
// batch delivered again after a crash is not written twice.
//
//	go run ./examples/withgo run -p examples/quickstart
//	go run ./examples/withgo table purchases -p examples/quickstart
//
// Every command, flag and exit code is sluice's: the program only adds to
// the pipeline before handing it to cli.Main.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sluicehq/sluice/cli"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
)

func main() {
	cli.Main(func(proj *pipeline.Project) (*pipeline.Pipeline, domain.Problems) {
		p, problems := pipeline.LoadSQLProject(proj)
		out := filepath.Join(proj.Dir, "exports")
		p.ForeachBatchSink("purchases_export", func(_ context.Context, rows *domain.Batch, batchID int64) error {
			return export(out, rows, batchID)
		})
		p.AppendFlow("purchases_export", pipeline.ReadStream("purchases"), pipeline.Name("export_purchases"))
		return p, problems
	})
}

// export writes one file per batch id, through a temporary name: a batch
// delivered again overwrites its own file with the same rows.
func export(dir string, rows *domain.Batch, batchID int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	final := filepath.Join(dir, fmt.Sprintf("purchases-%06d.jsonl", batchID))
	tmp := final + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for i := 0; i < rows.Len(); i++ {
		rec := map[string]any{}
		for j, fd := range rows.Schema.Fields {
			if v := rows.Columns[j].Value(i); !v.IsNull() {
				rec[fd.Name] = v.String()
			} else {
				rec[fd.Name] = nil
			}
		}
		if err := enc.Encode(rec); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, final)
}
