package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sinks/parquet"
)

func (a *app) tableCommand() *cobra.Command {
	var (
		format  string
		asOf    string
		limit   int
		changes bool
		since   uint64
	)
	cmd := &cobra.Command{
		Use:   "table NAME",
		Short: "Print the rows of a table or materialized view",
		Long: `Print the rows of a stored table (a streaming table or a materialized view),
now or as of a point of the event log.

--as-of SEQ reads the table as it was after event SEQ; --as-of TIMESTAMP
(RFC 3339, e.g. 2026-12-01T10:00:00Z, or a date 2026-12-01 for its midnight
UTC) as it was after the last event at or before that time.

--changes prints what each committed batch did to the table instead of its
rows: the table's columns and _change_type (insert, update_preimage,
update_postimage, delete), _commit_version (the seq of the batch's event)
and _commit_timestamp. A table AUTO CDC flows write shows its inserts,
updates (the row before, then after) and deletes; any other table its
appended rows, as inserts. --since SEQ keeps the batches committed after
event SEQ.

Formats:
  table  aligned columns for people (NULL shown as NULL)
  jsonl  one JSON object per row, every column in schema order, as Spark
         writes JSON: bigints as numbers (all 64 bits), doubles in Java's
         notation (1.0E10), NaN and infinities as the strings "NaN",
         "Infinity", "-Infinity", timestamps as RFC 3339 UTC strings
         (2026-12-01T10:00:00.123Z, microseconds when there are any), dates
         as "YYYY-MM-DD", binary as base64, intervals as their SQL literal,
         arrays as arrays, structs and maps as objects (struct fields that
         are NULL left out), NULL as null
  csv    a header, then one line per row (RFC 4180 quoting), NULL as an
         empty field, an empty string as "", values as in the table format,
         arrays, structs and maps as their JSON text
  parquet
         a Parquet file (redirect it to one; zstd), with Spark's types: INT as
         INT32, DECIMAL by its precision as INT32, INT64 or fixed-length
         bytes, TIMESTAMP as microseconds (TIMESTAMP_NTZ not adjusted to
         UTC), ARRAY, MAP and STRUCT nested, VARIANT as Parquet's VARIANT;
         intervals have no Parquet type and are refused`,
		Example: `  sluice table daily_totals
  sluice table raw_orders --format jsonl --limit 10
  sluice table raw_orders --format csv > orders.csv
  sluice table raw_orders --format parquet > orders.parquet
  sluice table daily_totals --as-of 42
  sluice table daily_totals --as-of 2026-12-01T10:00:00Z
  sluice table customers --changes --since 120 --format jsonl`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTables,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			switch format {
			case "table", "jsonl", "csv":
			case "parquet":
				if isTerminal(a.stdout) {
					return usageError("--format parquet writes a binary file: redirect it, as in sluice table %s --format parquet > %s.parquet", args[0], args[0])
				}
			default:
				return usageError("--format must be table, jsonl, csv or parquet, not %q", format)
			}
			if limit < 0 {
				return usageError("--limit must be 0 (no limit) or more, not %d", limit)
			}
			if since > 0 && !changes {
				return usageError("--since applies to --changes; add --changes to see the changes after event %d", since)
			}
			return a.printTable(name, asOf, format, limit, changes, since)
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "table", "table, jsonl, csv or parquet")
	f.StringVar(&asOf, "as-of", "", "read the table as of an event seq or a timestamp")
	f.IntVar(&limit, "limit", 0, "print at most N rows (0: all)")
	f.BoolVar(&changes, "changes", false, "print what each committed batch changed (the change feed) instead of the rows")
	f.Uint64Var(&since, "since", 0, "with --changes, only the batches committed after event SEQ")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletions("table", "jsonl", "csv", "parquet"))
	return cmd
}

// printTable prints a table's rows (or, with changes, its change feed) as
// of asOf, in format, at most limit rows (0: all).
func (a *app) printTable(name, asOf, format string, limit int, changes bool, since uint64) error {
	// One committed batch in memory at a time: the table streams
	// out, and --limit stops reading as soon as it is reached.
	var schema domain.Schema
	var scan func(fn func(*domain.Batch) error) error
	proj, err := a.storedProject()
	if err != nil {
		return err
	}
	store, err := a.openStore(proj, false)
	if r, ok := remoteFor(proj, err); ok {
		// the process holding the storage serves it
		if changes {
			return usageError("--changes reads the storage itself: run it once the process holding it (%s) has ended", r.socket)
		}
		if schema, scan, err = r.table(a.ctx, name, asOf); err != nil {
			return err
		}
	} else {
		if err != nil {
			return err
		}
		defer store.Close()
		var seq uint64
		if name, seq, schema, err = a.findTable(store, name, asOf); err != nil {
			return err
		}
		scan = func(fn func(*domain.Batch) error) error { return processors.ScanTable(a.ctx, store, name, seq, fn) }
		if changes {
			schema = processors.FeedSchema(schema)
			scan = func(fn func(*domain.Batch) error) error {
				return processors.ScanChanges(a.ctx, store, name, since, seq, fn)
			}
		}
	}
	out := bufio.NewWriter(a.stdout)
	defer out.Flush()
	var w rowWriter
	switch format {
	case "jsonl":
		w = &jsonlWriter{w: out, schema: schema}
	case "csv":
		w = newCSVWriter(out, schema)
	case "parquet":
		pw, err := parquet.NewWriter(out, schema, parquet.Zstd)
		if err != nil {
			return fail(ExitFailed, err)
		}
		w = parquetWriter{pw}
	default:
		w = newTableWriter(out, schema)
	}
	written, errLimit := 0, errors.New("limit reached")
	err = scan(func(b *domain.Batch) error {
		rows, err := domain.Concat(domain.NewBatch(schema, 0), b) // in the table's schema
		if err != nil {
			return err
		}
		n := rows.Len()
		if limit > 0 {
			n = min(n, limit-written)
		}
		if err := w.write(rows, n); err != nil {
			return err
		}
		if written += n; limit > 0 && written >= limit {
			return errLimit
		}
		return nil
	})
	if err != nil && err != errLimit {
		return fail(ExitFailed, err)
	}
	if err := w.close(written); err != nil {
		return fail(ExitFailed, err)
	}
	return nil
}

// tableAsOf opens the storage read-only and finds the table a name (any
// end of it) stands for, the event seq of asOf (0: now) and the table's
// schema then; the caller closes the store.
func (a *app) tableAsOf(name, asOf string) (*eventstore.Store, string, uint64, domain.Schema, error) {
	proj, err := a.storedProject()
	if err != nil {
		return nil, "", 0, domain.Schema{}, err
	}
	store, err := a.openStore(proj, false)
	if err != nil {
		return nil, "", 0, domain.Schema{}, err
	}
	table, seq, schema, err := a.findTable(store, name, asOf)
	if err != nil {
		store.Close()
		return nil, "", 0, domain.Schema{}, err
	}
	return store, table, seq, schema, nil
}

func (a *app) findTable(store *eventstore.Store, name, asOf string) (string, uint64, domain.Schema, error) {
	seq, err := resolveAsOf(a.ctx, store, asOf)
	if err != nil {
		return "", 0, domain.Schema{}, err
	}
	cat, err := readCatalog(a.ctx, store)
	if err != nil {
		return "", 0, domain.Schema{}, err
	}
	table, err := cat.resolveTable(name)
	if err != nil {
		return "", 0, domain.Schema{}, err
	}
	schema, err := tableSchema(a.ctx, store, cat, table, seq)
	return table, seq, schema, err
}

// tableSchema is the schema of a stored table as of seq (0: now): the one
// its batches evolved to; before its first batch, the one its definition
// declares, so that a table a failed flow left empty still shows its columns.
// Empty when neither is known (columns taken from a first batch that never
// committed).
func tableSchema(ctx context.Context, store *eventstore.Store, cat *catalog, name string, seq uint64) (domain.Schema, error) {
	s, err := processors.TableSchemaAt(ctx, store, name, seq)
	if err != nil {
		return domain.Schema{}, fail(ExitFailed, err)
	}
	if s != nil {
		return *s, nil
	}
	if d := cat.datasets[name]; d != nil && d.def.Schema != nil {
		return *d.def.Schema, nil
	}
	return domain.Schema{}, nil
}

// resolveAsOf turns --as-of into a log position: a seq as given, a time into
// the seq of the last event at or before it. "" is now (0).
func resolveAsOf(ctx context.Context, store *eventstore.Store, asOf string) (uint64, error) {
	if asOf == "" {
		return 0, nil
	}
	last := store.LastSeq()
	if seq, err := strconv.ParseUint(asOf, 10, 64); err == nil {
		if seq == 0 || seq > last {
			return 0, usageError("--as-of %d is outside the log, whose seqs run from 1 to %d", seq, last)
		}
		return seq, nil
	}
	t, err := time.Parse(time.RFC3339Nano, asOf)
	if err != nil {
		if t, err = time.Parse("2006-01-02", asOf); err != nil {
			return 0, usageError("--as-of takes an event seq (e.g. 42) or a timestamp (e.g. 2026-12-01T10:00:00Z or 2026-12-01), not %q", asOf)
		}
	}
	// Events are appended in time order, so the last one at or before t is
	// found by bisection.
	lo, hi := uint64(1), last // find the first event after t in [lo, hi+1]
	for lo <= hi {
		mid := lo + (hi-lo)/2
		ev, err := store.Get(mid)
		if err != nil {
			return 0, fail(ExitFailed, err)
		}
		if ev.Timestamp.After(t) {
			hi = mid - 1
		} else {
			lo = mid + 1
		}
	}
	if lo == 1 {
		return 0, usageError("--as-of %s is before the first event of the log", asOf)
	}
	return lo - 1, nil
}

// rowWriter writes the rows of a table in one output format, a batch at a
// time.
type rowWriter interface {
	write(rows *domain.Batch, n int) error // the first n rows
	close(total int) error
}

type jsonlWriter struct {
	w      io.Writer
	schema domain.Schema
	line   []byte
}

func (j *jsonlWriter) write(rows *domain.Batch, n int) error {
	cols := columnsOf(rows, j.schema)
	for i := 0; i < n; i++ {
		line := append(j.line[:0], '{')
		for k, f := range j.schema.Fields {
			if k > 0 {
				line = append(line, ',')
			}
			line = domain.AppendJSONString(line, f.Name)
			line = append(line, ':')
			line = domain.AppendJSON(line, cell(cols[k], i), f.Type)
		}
		line = append(line, '}', '\n')
		j.line = line
		if _, err := j.w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonlWriter) close(int) error { return nil }

// columnsOf finds a batch's column of each field of schema, looked up once
// per batch: nil where the batch lacks the column.
func columnsOf(rows *domain.Batch, schema domain.Schema) []*domain.Column {
	out := make([]*domain.Column, len(schema.Fields))
	for k, f := range schema.Fields {
		if j := rows.Schema.Index(f.Name); j >= 0 {
			out[k] = rows.Columns[j]
		}
	}
	return out
}

// cell is the value of a column at row i (NULL for a column the batch
// lacks).
func cell(c *domain.Column, i int) domain.Value {
	if c == nil {
		return domain.Null()
	}
	return c.Value(i)
}

// text renders a value for the table and CSV formats: nested values as JSON.
func text(v domain.Value, t domain.Type) string {
	switch {
	case v.Kind().IsNested():
		return string(domain.AppendJSON(nil, v, t))
	case v.Kind() == domain.KindFloat64 && t.Bits == 32:
		return domain.FormatFloat(v.AsFloat()) // 1.1, not the double nearest the float
	case v.Kind() == domain.KindTimestamp && t.NTZ:
		return strings.TrimSuffix(v.String(), "Z") // a wall-clock time: no zone
	}
	return v.String()
}

// csvWriter writes RFC 4180 CSV as Spark's writer does: a NULL is an empty
// field and an empty string a quoted one (""), so that reading the file
// back tells them apart; a field with the delimiter, a quote, a line break
// or a space at either end is quoted.
type csvWriter struct {
	w      *bufio.Writer
	schema domain.Schema
	line   []byte
}

// newCSVWriter writes the header at once: a table without rows still has
// its columns. A table whose columns are not known yet has no header (an
// empty line would be a record of one empty field).
func newCSVWriter(w io.Writer, schema domain.Schema) *csvWriter {
	c := &csvWriter{w: bufio.NewWriter(w), schema: schema}
	if len(schema.Fields) > 0 {
		for j, name := range schema.Names() {
			c.field(j, name, false)
		}
		c.end()
	}
	return c
}

func (c *csvWriter) write(rows *domain.Batch, n int) error {
	cols := columnsOf(rows, c.schema)
	for i := 0; i < n; i++ {
		for j, f := range c.schema.Fields {
			if v := cell(cols[j], i); v.IsNull() {
				c.field(j, "", false)
			} else {
				c.field(j, text(v, f.Type), true)
			}
		}
		if err := c.end(); err != nil {
			return err
		}
	}
	return nil
}

// field appends the j-th field of the line; notNull marks an empty value
// that is an empty string.
func (c *csvWriter) field(j int, s string, notNull bool) {
	if j > 0 {
		c.line = append(c.line, ',')
	}
	quote := s == "" && notNull || strings.ContainsAny(s, ",\"\r\n") ||
		s != "" && (s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t')
	if !quote {
		c.line = append(c.line, s...)
		return
	}
	c.line = append(c.line, '"')
	for k := 0; k < len(s); k++ {
		if s[k] == '"' {
			c.line = append(c.line, '"')
		}
		c.line = append(c.line, s[k])
	}
	c.line = append(c.line, '"')
}

func (c *csvWriter) end() error {
	c.line = append(c.line, '\n')
	_, err := c.w.Write(c.line)
	c.line = c.line[:0]
	return err
}

func (c *csvWriter) close(int) error { return c.w.Flush() }

// parquetWriter is a rowWriter of a Parquet file.
type parquetWriter struct{ *parquet.Writer }

func (p parquetWriter) write(rows *domain.Batch, n int) error { return p.Write(rows, n) }
func (p parquetWriter) close(int) error                       { return p.Close() }

// tableWriter aligns columns for people, numbers on the right (see
// aligned: the widths come from the header and the first page of rows).
type tableWriter struct {
	out    *aligned
	schema domain.Schema
}

func newTableWriter(w io.Writer, schema domain.Schema) *tableWriter {
	right := make([]bool, len(schema.Fields))
	for j, f := range schema.Fields {
		right[j] = f.Type.Kind == domain.KindInt64 || f.Type.Kind == domain.KindFloat64 || f.Type.Kind == domain.KindDecimal
	}
	return &tableWriter{out: newAligned(w, schema.Names(), right), schema: schema}
}

func (t *tableWriter) write(rows *domain.Batch, n int) error {
	cols := columnsOf(rows, t.schema)
	for i := 0; i < n; i++ {
		rec := make([]string, len(t.schema.Fields))
		for j, f := range t.schema.Fields {
			rec[j] = strings.ReplaceAll(text(cell(cols[j], i), f.Type), "\n", `\n`)
		}
		if err := t.out.add(rec); err != nil {
			return err
		}
	}
	return nil
}

func (t *tableWriter) close(total int) error {
	if err := t.out.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(t.out.w, "(%d %s)\n", total, pluralWord(int64(total), "row"))
	return err
}
