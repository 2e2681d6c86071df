package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/internal/suggest"
	"github.com/sluicehq/sluice/processors"
)

func (a *app) tableCommand() *cobra.Command {
	var (
		format string
		asOf   string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "table NAME",
		Short: "Print the rows of a table or materialized view",
		Long: `Print the rows of a stored table (a streaming table or a materialized view),
now or as of a point of the event log.

--as-of SEQ reads the table as it was after event SEQ; --as-of TIMESTAMP
(RFC 3339, e.g. 2026-12-01T10:00:00Z, or a date 2026-12-01 for its midnight
UTC) as it was after the last event at or before that time.

Formats:
  table  aligned columns for people (NULL shown as NULL)
  jsonl  one JSON object per row, columns in schema order: integers as JSON
         numbers (beyond ±2^53 as strings, so no reader rounds them),
         doubles as numbers, NaN and infinities as the strings "NaN",
         "Infinity", "-Infinity", timestamps as ISO 8601 UTC strings
         (2026-12-01T10:00:00.123456Z), dates as "YYYY-MM-DD", binary as
         base64, arrays as JSON arrays, structs as JSON objects, NULL as null
  csv    a header, then one line per row (RFC 4180 quoting), NULL as an
         empty field, values as in the table format, arrays and structs as
         their JSON text`,
		Example: `  sluice table daily_totals
  sluice table raw_orders --format jsonl --limit 10
  sluice table raw_orders --format csv > orders.csv
  sluice table daily_totals --as-of 42
  sluice table daily_totals --as-of 2026-12-01T10:00:00Z`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if format != "table" && format != "jsonl" && format != "csv" {
				return usageError("--format must be table, jsonl or csv, not %q", format)
			}
			if limit < 0 {
				return usageError("--limit must be 0 (no limit) or more, not %d", limit)
			}
			proj, err := a.project()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, false)
			if err != nil {
				return err
			}
			defer store.Close()
			seq, err := resolveAsOf(a.ctx, store, asOf)
			if err != nil {
				return err
			}
			if err := checkTable(a.ctx, store, name); err != nil {
				return err
			}
			rows, err := processors.ReadTable(a.ctx, store, name, seq)
			if err != nil {
				return fail(ExitFailed, err)
			}
			schema := rows.Schema
			if len(schema.Fields) == 0 {
				if s, err := store.TableSchema(name); err == nil && s != nil {
					schema = *s
				}
			}
			n := rows.Len()
			if limit > 0 && limit < n {
				n = limit
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			switch format {
			case "jsonl":
				err = writeJSONL(out, schema, rows, n)
			case "csv":
				err = writeCSV(out, schema, rows, n)
			default:
				err = writeTable(out, schema, rows, n)
			}
			if err != nil {
				return fail(ExitFailed, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "table", "table, jsonl or csv")
	f.StringVar(&asOf, "as-of", "", "read the table as of an event seq or a timestamp")
	f.IntVar(&limit, "limit", 0, "print at most N rows (0: all)")
	return cmd
}

// checkTable refuses a name that is not a stored dataset of the log, listing
// the ones that are.
func checkTable(ctx context.Context, store *eventstore.Store, name string) error {
	tables := map[string]bool{}
	err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventDatasetDefinition}}, func(ev *domain.Event) error {
		if dd := ev.Details.DatasetDefinition; dd != nil && dd.DatasetType.Stored() {
			tables[ev.Origin.DatasetName] = true
		}
		return nil
	})
	if err != nil {
		return fail(ExitFailed, err)
	}
	if tables[name] {
		return nil
	}
	names := make([]string, 0, len(tables))
	for t := range tables {
		names = append(names, t)
	}
	sort.Strings(names)
	e := domain.Errorf(domain.CodeUnknownDataset, "%q is not a table of the pipeline", name).WithNames(name)
	if s := suggest.Closest(name, names); s != "" {
		e.Message += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(names) > 0 {
		e.WithHint("the tables are: " + strings.Join(names, ", "))
	} else {
		e.WithHint("the log defines no table yet: run an update first (sluice run)")
	}
	return fail(ExitInvalid, e)
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

// jsonValue appends v, of type t, as JSON.
func jsonValue(b []byte, v domain.Value, t domain.Type) []byte {
	if v.IsNull() {
		return append(b, "null"...)
	}
	switch v.Kind() {
	case domain.KindBool:
		return strconv.AppendBool(b, v.AsBool())
	case domain.KindInt64:
		const maxSafe = 1 << 53
		if i := v.AsInt(); i > maxSafe || i < -maxSafe {
			return strconv.AppendQuote(b, strconv.FormatInt(i, 10))
		}
		return strconv.AppendInt(b, v.AsInt(), 10)
	case domain.KindFloat64:
		f := v.AsFloat()
		switch {
		case math.IsNaN(f):
			return append(b, `"NaN"`...)
		case math.IsInf(f, 1):
			return append(b, `"Infinity"`...)
		case math.IsInf(f, -1):
			return append(b, `"-Infinity"`...)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	case domain.KindString:
		return appendJSONString(b, v.AsString())
	case domain.KindBytes:
		return strconv.AppendQuote(b, base64.StdEncoding.EncodeToString(v.AsBytes()))
	case domain.KindTimestamp, domain.KindDate:
		return strconv.AppendQuote(b, v.String())
	case domain.KindList:
		var elem domain.Type
		if t.Elem != nil {
			elem = *t.Elem
		}
		b = append(b, '[')
		for i, x := range v.AsList() {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonValue(b, x, elem)
		}
		return append(b, ']')
	case domain.KindStruct:
		b = append(b, '{')
		for i, x := range v.Fields() {
			if i > 0 {
				b = append(b, ',')
			}
			name := "col" + strconv.Itoa(i+1)
			var ft domain.Type
			if i < len(t.Fields) {
				name, ft = t.Fields[i].Name, t.Fields[i].Type
			}
			b = appendJSONString(b, name)
			b = append(b, ':')
			b = jsonValue(b, x, ft)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

// appendJSONString appends s as a JSON string (invalid UTF-8 replaced).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

func writeJSONL(w io.Writer, schema domain.Schema, rows *domain.Batch, n int) error {
	var line []byte
	for i := 0; i < n; i++ {
		line = append(line[:0], '{')
		for j, f := range schema.Fields {
			if j > 0 {
				line = append(line, ',')
			}
			line = appendJSONString(line, f.Name)
			line = append(line, ':')
			line = jsonValue(line, cell(rows, f.Name, i), f.Type)
		}
		line = append(line, '}', '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// cell is the value of the named column at row i (NULL when the batch lacks
// the column).
func cell(rows *domain.Batch, column string, i int) domain.Value {
	j := rows.Schema.Index(column)
	if j < 0 {
		return domain.Null()
	}
	return rows.Columns[j].Value(i)
}

// text renders a value for the table and CSV formats: nested values as JSON.
func text(v domain.Value, t domain.Type) string {
	switch v.Kind() {
	case domain.KindList, domain.KindStruct:
		return string(jsonValue(nil, v, t))
	}
	return v.String()
}

func writeCSV(w io.Writer, schema domain.Schema, rows *domain.Batch, n int) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(schema.Names()); err != nil {
		return err
	}
	rec := make([]string, len(schema.Fields))
	for i := 0; i < n; i++ {
		for j, f := range schema.Fields {
			v := cell(rows, f.Name, i)
			if v.IsNull() {
				rec[j] = ""
			} else {
				rec[j] = text(v, f.Type)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeTable(w io.Writer, schema domain.Schema, rows *domain.Batch, n int) error {
	cells := make([][]string, 0, n+1)
	cells = append(cells, schema.Names())
	for i := 0; i < n; i++ {
		rec := make([]string, len(schema.Fields))
		for j, f := range schema.Fields {
			rec[j] = strings.ReplaceAll(text(cell(rows, f.Name, i), f.Type), "\n", `\n`)
		}
		cells = append(cells, rec)
	}
	width := make([]int, len(schema.Fields))
	for _, rec := range cells {
		for j, c := range rec {
			width[j] = max(width[j], utf8.RuneCountInString(c))
		}
	}
	right := make([]bool, len(schema.Fields))
	for j, f := range schema.Fields {
		switch f.Type.Kind {
		case domain.KindInt64, domain.KindFloat64:
			right[j] = true
		}
	}
	for r, rec := range cells {
		var b strings.Builder
		for j, c := range rec {
			if j > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
			if right[j] && r > 0 {
				b.WriteString(pad + c)
			} else if j < len(rec)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		b.WriteString("\n")
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		if r == 0 {
			var sep strings.Builder
			for j := range rec {
				if j > 0 {
					sep.WriteString("  ")
				}
				sep.WriteString(strings.Repeat("-", width[j]))
			}
			sep.WriteString("\n")
			if _, err := io.WriteString(w, sep.String()); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(w, "(%d rows)\n", n)
	return nil
}
