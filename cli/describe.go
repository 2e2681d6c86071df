package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// description is what describe shows of a table; its JSON is the output of
// --format json.
type description struct {
	Name        string       `json:"name"`
	DatasetType string       `json:"dataset_type"`
	Comment     string       `json:"comment,omitempty"`
	Columns     []columnInfo `json:"columns"`
	Flows       []flowInfo   `json:"flows"`
	Rows        int64        `json:"rows"`
	Generation  int64        `json:"generation"`
	Batches     int64        `json:"batches"`
	LastBatch   *lastBatch   `json:"last_batch"`
	Bytes       int64        `json:"storage_bytes"`
	OlderBytes  int64        `json:"older_generations_bytes"`
	// Selections counts the current batches stored as selections of
	// another table's rows (SelectsFrom): their bytes are a bit a row.
	Selections  int64             `json:"selection_batches,omitempty"`
	SelectsFrom []string          `json:"selects_from,omitempty"`
	Properties  map[string]string `json:"table_properties,omitempty"`
}

type columnInfo struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
	Comment  string `json:"comment,omitempty"`
}

type flowInfo struct {
	Name     string `json:"name"`
	FlowType string `json:"flow_type"`
	Once     bool   `json:"once,omitempty"`
}

type lastBatch struct {
	Flow      string    `json:"flow"`
	BatchID   int64     `json:"batch_id"`
	Seq       uint64    `json:"seq"`
	Timestamp time.Time `json:"timestamp"`
	Rows      int64     `json:"rows"`
	// Changes is set for a batch of an AUTO CDC flow: Rows counts the
	// changes it recorded, not rows it appended.
	Changes bool `json:"changes,omitempty"`
}

func (a *app) describeCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "describe TABLE",
		Short: "Show a table's schema, flows, rows, last batch and storage",
		Long: `Show what the log says of a stored table (a streaming table or a
materialized view):

  type and comment     as last defined
  flows                the flows writing it, with their types
  rows                 its row count now (the rows sluice table prints)
  last batch           the last micro-batch committed to it: flow, batch id,
                       time, rows and the seq of its batch_committed event
  storage              the bytes of its committed batches (row payloads, as
                       encoded in the log; a batch that keeps rows another
                       table stores is a bit a row, and says so), and the
                       bytes of older generations a full refresh left in
                       the log
  columns              name, type, nullable and comment of each column

It reads the storage without writing to it, like sluice table.

--format json prints one JSON object:
  {"name", "dataset_type", "comment", "columns": [{"name", "type", "nullable", "comment"}],
   "flows": [{"name", "flow_type", "once"}], "rows", "generation", "batches",
   "last_batch": {"flow", "batch_id", "seq", "timestamp", "rows", "changes"} (null before the first;
   for an AUTO CDC table, rows counts the changes the batch recorded and changes is true),
   "storage_bytes", "older_generations_bytes", "selection_batches", "selects_from",
   "table_properties"} (the selection fields only when some batch is one)
with types spelled as in SQL (bigint, array<string>).`,
		Example: `  sluice describe daily_totals
  sluice describe raw_orders --format json | jq .rows`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTables,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if format != "table" && format != "json" {
				return usageError("--format must be table or json, not %q", format)
			}
			proj, err := a.storedProject()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, false)
			if err != nil {
				return err
			}
			defer store.Close()
			cat, err := readCatalog(a.ctx, store)
			if err != nil {
				return err
			}
			if name, err = cat.resolveTable(name); err != nil {
				return err
			}
			d, err := describeTable(a, store, cat, name)
			if err != nil {
				return err
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			if format == "json" {
				b, err := json.MarshalIndent(d, "", "  ")
				if err != nil {
					return fail(ExitFailed, err)
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			}
			return d.write(out)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletions("table", "json"))
	return cmd
}

// describeTable gathers the description of table name: its definition from
// the catalog, its schema, and one pass over its batch_committed events (in
// the log's dataset index) for rows, bytes and the last batch.
func describeTable(a *app, store *eventstore.Store, cat *catalog, name string) (*description, error) {
	ds := cat.datasets[name]
	d := &description{Name: name, DatasetType: string(ds.def.DatasetType), Comment: ds.def.Comment, Properties: ds.def.TableProperties,
		Columns: []columnInfo{}, Flows: []flowInfo{}}
	schema, err := tableSchema(a.ctx, store, cat, name, 0)
	if err != nil {
		return nil, err
	}
	for _, f := range schema.Fields {
		d.Columns = append(d.Columns, columnInfo{Name: f.Name, Type: f.Type.String(), Nullable: f.Nullable, Comment: f.Comment})
	}
	for _, flow := range cat.writers(name) {
		f := cat.flows[flow].def
		d.Flows = append(d.Flows, flowInfo{Name: flow, FlowType: string(f.FlowType), Once: f.Once})
	}
	if d.Generation, err = store.TableGeneration(name); err != nil {
		return nil, fail(ExitFailed, err)
	}
	err = store.Scan(a.ctx, eventstore.Filter{Dataset: name, Types: []domain.EventType{domain.EventBatchCommitted}}, func(ev *domain.Event) error {
		bc := ev.Details.BatchCommitted
		if bc == nil || bc.Target != name {
			return nil
		}
		if bc.TableGeneration != d.Generation {
			d.OlderBytes += int64(len(ev.Data))
			return nil
		}
		d.Rows += bc.NumRows
		d.Bytes += int64(len(ev.Data))
		d.Batches++
		if bc.Selects != "" {
			d.Selections++
			if !slices.Contains(d.SelectsFrom, bc.Selects) {
				d.SelectsFrom = append(d.SelectsFrom, bc.Selects)
			}
		}
		d.LastBatch = &lastBatch{Flow: bc.Flow, BatchID: bc.BatchID, Seq: ev.Seq, Timestamp: ev.Timestamp.UTC(), Rows: bc.NumRows, Changes: bc.Changes != nil}
		return nil
	})
	if err != nil {
		return nil, fail(ExitFailed, err)
	}
	if d.LastBatch != nil && d.LastBatch.Changes {
		// an AUTO CDC table's rows are the fold of its changes: count them
		d.Rows = 0
		err = processors.ScanTable(a.ctx, store, name, 0, func(b *domain.Batch) error {
			d.Rows += int64(b.Len())
			return nil
		})
		if err != nil {
			return nil, fail(ExitFailed, err)
		}
	}
	return d, nil
}

// write shows the description for people: a line per fact, then the
// columns.
func (d *description) write(w io.Writer) error {
	facts := newAligned(w, nil, nil)
	add := func(k, v string) { _ = facts.add([]string{k, v}) }
	add("table", d.Name+" ("+d.DatasetType+")")
	if d.Comment != "" {
		add("comment", d.Comment)
	}
	flows := ""
	for i, f := range d.Flows {
		if i > 0 {
			flows += ", "
		}
		flows += f.Name + " (" + f.FlowType
		if f.Once {
			flows += ", once"
		}
		flows += ")"
	}
	if flows == "" {
		flows = "none in its latest definition"
	}
	add("flows", flows)
	add("rows", strconv.FormatInt(d.Rows, 10))
	if b := d.LastBatch; b != nil {
		add("last batch", fmt.Sprintf("batch %d of flow %s, committed %s, %s (seq %d)",
			b.BatchID, b.Flow, b.Timestamp.Format("2006-01-02T15:04:05.000Z"), plural(b.Rows, map[bool]string{false: "row", true: "change"}[b.Changes]), b.Seq))
	} else {
		add("last batch", "none: nothing was committed to it since it was created or last fully refreshed")
	}
	storage := fmt.Sprintf("%s in %s (generation %d)", byteSize(d.Bytes), plural(d.Batches, "batch"), d.Generation)
	if d.Selections > 0 {
		storage += fmt.Sprintf("; %d of them select rows %s stores", d.Selections, strings.Join(d.SelectsFrom, " and "))
	}
	if d.OlderBytes > 0 {
		storage += fmt.Sprintf("; %s more in the log from before its last full refresh", byteSize(d.OlderBytes))
	}
	add("storage", storage)
	for k, v := range sortedMap(d.Properties) {
		add("property", k+" = "+v)
	}
	if err := facts.flush(); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	if len(d.Columns) == 0 {
		_, err := io.WriteString(w, "(no columns yet: they come with the table's first committed batch)\n")
		return err
	}
	cols := newAligned(w, []string{"column", "type", "nullable", "comment"}, nil)
	for _, c := range d.Columns {
		nullable := "no"
		if c.Nullable {
			nullable = "yes"
		}
		if err := cols.add([]string{c.Name, c.Type, nullable, c.Comment}); err != nil {
			return err
		}
	}
	return cols.flush()
}

// byteSize is n bytes for people: "512 bytes", "1.5 KiB", "3.2 MiB".
func byteSize(n int64) string {
	if n < 1024 {
		return plural(n, "byte")
	}
	f, units := float64(n), []string{"KiB", "MiB", "GiB", "TiB"}
	for i, u := range units {
		f /= 1024
		if f < 1024 || i == len(units)-1 {
			return fmt.Sprintf("%.1f %s (%d bytes)", f, u, n)
		}
	}
	return ""
}

// sortedMap iterates m in key order.
func sortedMap(m map[string]string) func(func(string, string) bool) {
	return func(yield func(string, string) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}
