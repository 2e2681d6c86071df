// Package postgres writes micro-batches into a PostgreSQL table exactly
// once: each batch in one database transaction that also records its
// (pipeline, sink, flow, generation, batch id) in a ledger table, so that a
// batch delivered again after a crash (between the database's commit and
// sluice's) finds itself there and is skipped.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/options"
)

// Mode is how a batch's rows go into the table.
type Mode string

const (
	// Append adds every row (COPY).
	Append Mode = "append"
	// Upsert inserts a row whose key is new and updates the row of a key
	// that is there; of several rows of one key in a batch, the last wins.
	Upsert Mode = "upsert"
	// Changes applies a change feed (rows with _change_type, as
	// table_changes('t') reads them): the last change of each key in a
	// batch decides, a delete deleting the key's row and an insert or
	// update upserting it.
	Changes Mode = "changes"
)

// The change feed's columns, which the Changes mode reads and does not
// write.
const (
	changeTypeColumn      = "_change_type"
	commitVersionColumn   = "_commit_version"
	commitTimestampColumn = "_commit_timestamp"
)

// LedgerTable records the batches written, in the target's schema.
const LedgerTable = "sluice_sink_batches"

// setupLock is the advisory lock sinks take to create their tables.
const setupLock int64 = 0x736c75696365 // "sluice"

// Sink writes into Table of the database at DSN.
type Sink struct {
	DSN      string
	Schema   string // the table's schema; "" for the connection's search path
	Table    string
	Mode     Mode
	Keys     []string // upsert: the key columns
	Pipeline string   // names the pipeline in the ledger

	mu    sync.Mutex
	pool  *pgxpool.Pool
	ready bool // the ledger and target tables exist
}

// sinkOptions are the options a Postgres sink takes.
var sinkOptions = map[string]string{
	"dsn":   "the database, as a URL (postgres://user@host:5432/db) or key=value pairs; name a password as ${env:NAME}",
	"table": "the table, [schema.]name; created, with the batch's columns, when it does not exist",
	"mode":  "append (the default: COPY), upsert, or changes (a change feed: table_changes('t'))",
	"keys":  "upsert and changes: the key columns, comma-separated",
}

// NewSink makes a Postgres sink from its options.
func NewSink(pipeline string, given map[string]string) (*Sink, error) {
	s := &Sink{Mode: Append, Pipeline: pipeline}
	for k, v := range given {
		switch strings.ToLower(k) {
		case "dsn":
			s.DSN = v
		case "table":
			parts := strings.Split(v, ".")
			switch len(parts) {
			case 1:
				s.Table = parts[0]
			case 2:
				s.Schema, s.Table = parts[0], parts[1]
			default:
				return nil, optionErr("the table %q is not [schema.]name", v)
			}
		case "mode":
			switch m := Mode(strings.ToLower(v)); m {
			case Append, Upsert, Changes:
				s.Mode = m
			default:
				return nil, optionErr("the mode %q is not append, upsert or changes", v)
			}
		case "keys":
			for _, key := range strings.Split(v, ",") {
				if key = strings.TrimSpace(key); key != "" {
					s.Keys = append(s.Keys, key)
				}
			}
		default:
			return nil, optionErr("a Postgres sink does not take the option %q; it takes %s", k, options.List(sinkOptions))
		}
	}
	switch {
	case s.DSN == "":
		return nil, optionErr("a Postgres sink needs the option dsn: %s", sinkOptions["dsn"])
	case s.Table == "":
		return nil, optionErr("a Postgres sink needs the option table: %s", sinkOptions["table"])
	case s.Mode != Append && len(s.Keys) == 0:
		return nil, optionErr("a Postgres sink in %s mode needs the option keys: %s", s.Mode, sinkOptions["keys"])
	case s.Mode == Append && len(s.Keys) > 0:
		return nil, optionErr("keys are for modes upsert and changes; an append sink adds every row")
	}
	if _, err := pgxpool.ParseConfig(s.DSN); err != nil {
		return nil, optionErr("the dsn cannot be read: %v", redactErr(err))
	}
	return s, nil
}

func optionErr(format string, args ...any) error {
	return domain.Errorf(domain.CodeSinkOption, format, args...)
}

// redactErr is an error of pgx without the DSN it may quote.
func redactErr(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "cannot parse `"); i >= 0 {
		if j := strings.Index(msg[i+14:], "`"); j >= 0 {
			msg = msg[:i] + "cannot parse the dsn" + msg[i+14+j+1:]
		}
	}
	return msg
}

func (s *Sink) table() pgx.Identifier {
	if s.Schema == "" {
		return pgx.Identifier{s.Table}
	}
	return pgx.Identifier{s.Schema, s.Table}
}

func (s *Sink) ledger() pgx.Identifier {
	if s.Schema == "" {
		return pgx.Identifier{LedgerTable}
	}
	return pgx.Identifier{s.Schema, LedgerTable}
}

// Deliver writes the batch in one transaction with its ledger row, unless
// the ledger has it already.
func (s *Sink) Deliver(ctx context.Context, b domain.SinkBatch) error {
	if b.Rows == nil || b.Rows.Len() == 0 {
		return nil
	}
	rows := b.Rows
	var deletes *domain.Batch
	if s.Mode == Changes {
		var err error
		if rows, deletes, err = s.applied(b.Rows); err != nil {
			return domain.Errorf(domain.CodeSinkWriteFailed, "Postgres sink %q, flow %q, batch %d: %v", b.Sink, b.Flow, b.BatchID, err).
				WithHint("read the table's change feed, as in INSERT INTO sink BY NAME SELECT * FROM STREAM table_changes('customers')")
		}
	}
	pool, err := s.connect(ctx, rows.Schema)
	if err != nil {
		return s.fail(b, err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "INSERT INTO "+s.ledger().Sanitize()+" (pipeline, sink, flow, generation, batch_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
			s.Pipeline, b.Sink, b.Flow, b.Generation, b.BatchID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errDelivered // written before the crash that brings it again
		}
		switch s.Mode {
		case Upsert:
			return s.upsert(ctx, tx, rows)
		case Changes:
			if err := s.delete(ctx, tx, deletes); err != nil {
				return err
			}
			return s.upsert(ctx, tx, rows)
		}
		return s.append(ctx, tx, rows)
	})
	if err != nil && !errors.Is(err, errDelivered) {
		return s.fail(b, err)
	}
	return nil
}

var errDelivered = errors.New("the batch is in the ledger")

// fail wraps a database error: retriable when the database may take the
// batch later (a lost connection, a conflict, no resources), not when the
// batch itself is wrong for the table.
func (s *Sink) fail(b domain.SinkBatch, err error) error {
	e := domain.Wrap(domain.CodeSinkWriteFailed, errors.New(redactErr(err)), fmt.Sprintf("Postgres sink %q (table %s), flow %q, batch %d", b.Sink, s.table().Sanitize(), b.Flow, b.BatchID))
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &pe):
		if strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "40") || strings.HasPrefix(pe.Code, "53") || strings.HasPrefix(pe.Code, "57") {
			return e.AsRetriable()
		}
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.Timeout(err), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return e.AsRetriable() // the connection, not the batch
	}
	return e.WithHint("make the table's columns fit the flow's rows (the message names what does not), or drop the table for the sink to create it")
}

// connect opens the pool, and makes the ledger and the target table when
// they do not exist.
func (s *Sink) connect(ctx context.Context, schema domain.Schema) (*pgxpool.Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool == nil {
		cfg, err := pgxpool.ParseConfig(s.DSN)
		if err != nil {
			return nil, err
		}
		cfg.MaxConns = 2
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		s.pool = pool
	}
	if !s.ready {
		// Sinks starting together would race to create the same tables
		// (CREATE TABLE IF NOT EXISTS is not safe against itself): one at
		// a time, under a transaction-scoped advisory lock.
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", setupLock); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+s.ledger().Sanitize()+` (
				pipeline text NOT NULL, sink text NOT NULL, flow text NOT NULL, generation bigint NOT NULL, batch_id bigint NOT NULL,
				written_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (pipeline, sink, flow, generation, batch_id))`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, s.createTable(schema))
			return err
		})
		if err != nil {
			return nil, err
		}
		s.ready = true
	}
	return s.pool, nil
}

// createTable is CREATE TABLE IF NOT EXISTS of the target, with the
// batch's columns and, for upsert, the keys as primary key.
func (s *Sink) createTable(schema domain.Schema) string {
	var cols []string
	for _, f := range schema.Fields {
		col := pgx.Identifier{f.Name}.Sanitize() + " " + PostgresType(f.Type)
		if !f.Nullable {
			col += " NOT NULL"
		}
		cols = append(cols, col)
	}
	if s.Mode != Append {
		keys := make([]string, len(s.Keys))
		for i, k := range s.Keys {
			keys[i] = pgx.Identifier{k}.Sanitize()
		}
		cols = append(cols, "PRIMARY KEY ("+strings.Join(keys, ", ")+")")
	}
	return "CREATE TABLE IF NOT EXISTS " + s.table().Sanitize() + " (" + strings.Join(cols, ", ") + ")"
}

// PostgresType is the column type a sluice type is written to.
func PostgresType(t domain.Type) string {
	switch t.Kind {
	case domain.KindBool:
		return "boolean"
	case domain.KindInt64:
		switch t.Bits {
		case 8, 16:
			return "smallint"
		case 32:
			return "integer"
		}
		return "bigint"
	case domain.KindFloat64:
		if t.Bits == 32 {
			return "real"
		}
		return "double precision"
	case domain.KindDecimal:
		return fmt.Sprintf("numeric(%d, %d)", t.Precision, t.Scale)
	case domain.KindString:
		if t.Variant {
			return "jsonb"
		}
		return "text"
	case domain.KindBytes:
		return "bytea"
	case domain.KindDate:
		return "date"
	case domain.KindTimestamp:
		if t.NTZ {
			return "timestamp"
		}
		return "timestamptz"
	case domain.KindYearMonthInterval, domain.KindDayTimeInterval:
		return "interval"
	case domain.KindList, domain.KindMap, domain.KindStruct:
		return "jsonb"
	}
	return "text"
}

// pgValue is a value as pgx writes it to the column of type t.
func pgValue(v domain.Value, t domain.Type) any {
	if v.IsNull() {
		return nil
	}
	switch v.Kind() {
	case domain.KindBool:
		return v.AsBool()
	case domain.KindInt64:
		return v.AsInt()
	case domain.KindFloat64:
		if t.Bits == 32 {
			return float32(v.AsFloat())
		}
		return v.AsFloat()
	case domain.KindDecimal:
		return pgtype.Numeric{Int: v.AsDecimal().Big(), Exp: -int32(v.Scale()), Valid: true}
	case domain.KindString:
		return v.AsString()
	case domain.KindBytes:
		return v.AsBytes()
	case domain.KindDate:
		return time.Unix(v.AsInt()*86400, 0).UTC()
	case domain.KindTimestamp:
		return time.UnixMicro(v.AsInt()).UTC()
	case domain.KindYearMonthInterval:
		return pgtype.Interval{Months: int32(v.AsInt()), Valid: true}
	case domain.KindDayTimeInterval:
		const day = 86400_000_000 // whole days as days, as Spark shows them
		return pgtype.Interval{Days: int32(v.AsInt() / day), Microseconds: v.AsInt() % day, Valid: true}
	}
	return string(domain.AppendJSON(nil, v, t)) // arrays, maps, structs: jsonb
}

func (s *Sink) append(ctx context.Context, tx pgx.Tx, rows *domain.Batch) error {
	names := rows.Schema.Names()
	_, err := tx.CopyFrom(ctx, s.table(), names, pgx.CopyFromSlice(rows.Len(), func(i int) ([]any, error) {
		out := make([]any, len(rows.Columns))
		for j, c := range rows.Columns {
			out[j] = pgValue(c.Value(i), rows.Schema.Fields[j].Type)
		}
		return out, nil
	}))
	return err
}

// upsertRows bounds the rows of one INSERT ... ON CONFLICT statement
// (Postgres takes at most 65535 parameters).
const upsertParams = 60000

func (s *Sink) upsert(ctx context.Context, tx pgx.Tx, rows *domain.Batch) error {
	keyCols := make([]int, len(s.Keys))
	for i, k := range s.Keys {
		if keyCols[i] = rows.Schema.Index(k); keyCols[i] < 0 {
			return fmt.Errorf("the key column %s is not a column of the flow's rows (%s)", k, rows.Schema)
		}
	}
	// the last row of each key: one statement may not update a row twice
	last := map[string]int{}
	var order []string
	var buf []byte
	for i := 0; i < rows.Len(); i++ {
		buf = buf[:0]
		for _, j := range keyCols {
			buf = append(buf, domain.AppendJSON(nil, rows.Columns[j].Value(i), rows.Schema.Fields[j].Type)...)
			buf = append(buf, 0)
		}
		if _, seen := last[string(buf)]; !seen {
			order = append(order, string(buf))
		}
		last[string(buf)] = i
	}
	names := rows.Schema.Names()
	quoted := make([]string, len(names))
	var set []string
	for j, n := range names {
		quoted[j] = pgx.Identifier{n}.Sanitize()
		if !slices.ContainsFunc(s.Keys, func(k string) bool { return strings.EqualFold(k, n) }) {
			set = append(set, quoted[j]+" = EXCLUDED."+quoted[j])
		}
	}
	keyList := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		keyList[i] = pgx.Identifier{k}.Sanitize()
	}
	conflict := " ON CONFLICT (" + strings.Join(keyList, ", ") + ") DO NOTHING"
	if len(set) > 0 {
		conflict = " ON CONFLICT (" + strings.Join(keyList, ", ") + ") DO UPDATE SET " + strings.Join(set, ", ")
	}
	perStatement := max(1, upsertParams/len(names))
	for start := 0; start < len(order); start += perStatement {
		chunk := order[start:min(len(order), start+perStatement)]
		var sb strings.Builder
		sb.WriteString("INSERT INTO " + s.table().Sanitize() + " (" + strings.Join(quoted, ", ") + ") VALUES ")
		args := make([]any, 0, len(chunk)*len(names))
		for r, key := range chunk {
			if r > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('(')
			i := last[key]
			for j, c := range rows.Columns {
				if j > 0 {
					sb.WriteString(", ")
				}
				args = append(args, pgValue(c.Value(i), rows.Schema.Fields[j].Type))
				fmt.Fprintf(&sb, "$%d", len(args))
			}
			sb.WriteByte(')')
		}
		sb.WriteString(conflict)
		if _, err := tx.Exec(ctx, sb.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// applied splits a change feed batch into the rows to upsert and the keys
// to delete (each a batch of the table's columns, without the feed's):
// the last change of each key decides; the row before an update is not a
// change of its own.
func (s *Sink) applied(feed *domain.Batch) (upserts, deletes *domain.Batch, err error) {
	kind := feed.Schema.Index(changeTypeColumn)
	if kind < 0 {
		return nil, nil, fmt.Errorf("the rows have no %s column (%s)", changeTypeColumn, feed.Schema)
	}
	var data []int
	for j, f := range feed.Schema.Fields {
		if f.Name != changeTypeColumn && f.Name != commitVersionColumn && f.Name != commitTimestampColumn {
			data = append(data, j)
		}
	}
	keyCols := make([]int, len(s.Keys))
	for i, k := range s.Keys {
		if keyCols[i] = feed.Schema.Index(k); keyCols[i] < 0 {
			return nil, nil, fmt.Errorf("the key column %s is not a column of the flow's rows (%s)", k, feed.Schema)
		}
	}
	last := map[string]int{}
	var order []string
	var buf []byte
	for i := range feed.Len() {
		op := feed.Columns[kind].Value(i).AsString()
		switch op {
		case "update_preimage":
			continue
		case "insert", "update_postimage", "delete":
		default:
			return nil, nil, fmt.Errorf("row %d has the change type %q, not insert, update_preimage, update_postimage or delete", i+1, op)
		}
		buf = buf[:0]
		for _, j := range keyCols {
			buf = append(domain.AppendJSON(buf, feed.Columns[j].Value(i), feed.Schema.Fields[j].Type), 0)
		}
		if _, seen := last[string(buf)]; !seen {
			order = append(order, string(buf))
		}
		last[string(buf)] = i
	}
	var up, del []int
	for _, k := range order {
		i := last[k]
		if feed.Columns[kind].Value(i).AsString() == "delete" {
			del = append(del, i)
		} else {
			up = append(up, i)
		}
	}
	return feed.Select(up).SelectColumns(data), feed.Select(del).SelectColumns(data), nil
}

// delete deletes the rows of the keys of rows.
func (s *Sink) delete(ctx context.Context, tx pgx.Tx, rows *domain.Batch) error {
	if rows.Len() == 0 {
		return nil
	}
	keyCols := make([]int, len(s.Keys))
	keyList := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		keyCols[i] = rows.Schema.Index(k)
		keyList[i] = pgx.Identifier{k}.Sanitize()
	}
	perStatement := max(1, upsertParams/len(s.Keys))
	for start := 0; start < rows.Len(); start += perStatement {
		var sb strings.Builder
		sb.WriteString("DELETE FROM " + s.table().Sanitize() + " WHERE (" + strings.Join(keyList, ", ") + ") IN (")
		var args []any
		for i := start; i < min(rows.Len(), start+perStatement); i++ {
			if i > start {
				sb.WriteString(", ")
			}
			sb.WriteByte('(')
			for n, j := range keyCols {
				if n > 0 {
					sb.WriteString(", ")
				}
				args = append(args, pgValue(rows.Columns[j].Value(i), rows.Schema.Fields[j].Type))
				fmt.Fprintf(&sb, "$%d", len(args))
			}
			sb.WriteByte(')')
		}
		sb.WriteByte(')')
		if _, err := tx.Exec(ctx, sb.String(), args...); err != nil {
			return err
		}
	}
	return nil
}
