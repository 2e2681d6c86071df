// Package postgres captures the changes of PostgreSQL tables through
// logical replication (the pgoutput plugin), exactly once into sluice's
// tables: a micro-batch is a range of the slot's write-ahead log, whole
// transactions, and the slot's confirmed position moves to a batch's end
// only once the batch committed in
// sluice (domain.Committer); a restart reads again from there.
//
// The changes are read with pg_logical_slot_peek_binary_changes, which
// decodes without consuming: reading a range twice gives the same rows.
package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/domain"
)

// Options configure change capture.
type Options struct {
	DSN         string
	Tables      []string // schema.table (public by default)
	Slot        string   // the replication slot, created when missing
	Publication string   // the publication of Tables, created when missing
}

// Columns every change row has beside the table's columns.
var changeFields = []domain.Field{
	{Name: "_op", Type: domain.TypeString},           // INSERT, UPDATE, DELETE, TRUNCATE
	{Name: "_lsn", Type: domain.TypeInt64},           // the change's log position: orders changes
	{Name: "_commit_ts", Type: domain.TypeTimestamp}, // the transaction's commit time
	{Name: "_table", Type: domain.TypeString},        // schema.table
}

// Source captures changes.
type Source struct {
	opts   Options
	schema domain.Schema
	mu     sync.Mutex
	pool   *pgxpool.Pool
	ready  bool
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// New checks the options and reads the tables' columns (the source's
// schema: every table's columns, then the change columns).
func New(ctx context.Context, opts Options) (*Source, error) {
	switch {
	case opts.DSN == "":
		return nil, optionErr("read_postgres_cdc needs dsn (postgres://user@host:5432/db; a password as ${env:NAME})")
	case len(opts.Tables) == 0:
		return nil, optionErr("read_postgres_cdc needs tables: schema.table, comma-separated")
	case !identifier.MatchString(opts.Slot):
		return nil, optionErr("read_postgres_cdc needs slot, a replication slot name (letters, digits, _), not %q", opts.Slot)
	case !identifier.MatchString(opts.Publication):
		return nil, optionErr("read_postgres_cdc needs publication, a publication name (letters, digits, _), not %q", opts.Publication)
	}
	tables := make([]string, len(opts.Tables))
	for i, t := range opts.Tables {
		if tables[i] = t; !strings.Contains(t, ".") {
			tables[i] = "public." + t
		}
	}
	opts.Tables = tables
	s := &Source{opts: opts}
	pool, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]domain.Type{}
	var fields []domain.Field
	for _, t := range opts.Tables {
		schema, table, _ := strings.Cut(t, ".")
		rows, err := pool.Query(ctx, `SELECT a.attname, a.atttypid::int, a.atttypmod FROM pg_attribute a
			JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, schema, table)
		if err != nil {
			return nil, unavailable(err)
		}
		n := 0
		for rows.Next() {
			var name string
			var oid uint32
			var mod int32
			if err := rows.Scan(&name, &oid, &mod); err != nil {
				rows.Close()
				return nil, unavailable(err)
			}
			n++
			t := typeOf(oid, mod)
			if prev, ok := seen[name]; ok {
				if !prev.Equal(t) {
					rows.Close()
					return nil, optionErr("column %s is %s in one table and %s in another; capture them in two sources", name, prev, t)
				}
				continue
			}
			seen[name] = t
			fields = append(fields, domain.Field{Name: name, Type: t, Nullable: true})
		}
		rows.Close()
		if n == 0 {
			return nil, optionErr("the table %s does not exist (or has no columns)", t)
		}
	}
	s.schema = domain.NewSchema(append(fields, changeFields...)...)
	return s, nil
}

func optionErr(format string, args ...any) error {
	return domain.Errorf(domain.CodeSourceOptionInvalid, format, args...)
}

func unavailable(err error) error {
	return domain.Wrap(domain.CodeSourceUnavailable, err, "PostgreSQL change capture").AsRetriable()
}

// Schema is the rows' schema.
func (s *Source) Schema() domain.Schema { return s.schema }

func (s *Source) String() string {
	return "postgres changes of " + strings.Join(s.opts.Tables, ", ") + " (slot " + s.opts.Slot + ")"
}

func (s *Source) connect(ctx context.Context) (*pgxpool.Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool != nil {
		return s.pool, nil
	}
	cfg, err := pgxpool.ParseConfig(s.opts.DSN)
	if err != nil {
		return nil, optionErr("the dsn cannot be read")
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, unavailable(err)
	}
	s.pool = pool
	return pool, nil
}

// Close releases the source's connections.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool != nil {
		s.pool.Close()
		s.pool = nil
	}
}

// setup makes the publication (once a process), and the slot when a flow
// starts (first is true: its checkpoint is empty). A slot missing under a
// flow that has read from it is an error, checked at every plan: a new
// slot would start after changes the flow never read.
func (s *Source) setup(ctx context.Context, pool *pgxpool.Pool, first bool) error {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	if !ready {
		var level string
		if err := pool.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
			return unavailable(err)
		}
		if level != "logical" {
			return domain.Errorf(domain.CodeSourceOptionInvalid, "the server's wal_level is %s; change capture needs logical", level).
				WithHint("ALTER SYSTEM SET wal_level = logical, then restart PostgreSQL")
		}
		var exists bool
		if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", s.opts.Publication).Scan(&exists); err != nil {
			return unavailable(err)
		}
		if !exists {
			tables := make([]string, len(s.opts.Tables))
			for i, t := range s.opts.Tables {
				schema, table, _ := strings.Cut(t, ".")
				tables[i] = pgx.Identifier{schema, table}.Sanitize()
			}
			if _, err := pool.Exec(ctx, "CREATE PUBLICATION "+pgx.Identifier{s.opts.Publication}.Sanitize()+" FOR TABLE "+strings.Join(tables, ", ")); err != nil {
				return unavailable(err)
			}
		}
		s.mu.Lock()
		s.ready = true
		s.mu.Unlock()
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", s.opts.Slot).Scan(&exists); err != nil {
		return unavailable(err)
	}
	switch {
	case !exists && !first:
		return domain.Errorf(domain.CodeReplicationSlotMissing, "the replication slot %s is gone: the changes after the last batch sluice committed cannot be read", s.opts.Slot).
			WithHint("run a full refresh of the flow (sluice run --full-refresh TABLE): it makes the slot again and reads from there; load the rows changed in between with a once flow")
	case !exists:
		if _, err := pool.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", s.opts.Slot); err != nil {
			return unavailable(err)
		}
	}
	return nil
}

// position is a batch's end: the log position after its last transaction.
type position struct {
	LSN string `json:"lsn"`
}

func parsePosition(raw domain.Offset) (pglogrepl.LSN, error) {
	var p position
	if err := json.Unmarshal(raw, &p); err != nil {
		return 0, err
	}
	return pglogrepl.ParseLSN(p.LSN)
}

// peekRows bounds the changes a plan looks at.
const peekRows = 100_000

// Plan returns the end of the transactions that follow start, within the
// row limit (a transaction is never split).
func (s *Source) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	pool, err := s.connect(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := s.setup(ctx, pool, start == nil); err != nil {
		return nil, false, err
	}
	var from pglogrepl.LSN
	if start != nil {
		if from, err = parsePosition(start); err != nil {
			return nil, false, domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s of the checkpoint cannot be read: %v", start, err)
		}
	}
	max := int64(peekRows)
	if limit.MaxRows > 0 && limit.MaxRows < max {
		max = limit.MaxRows
	}

	// The slot hands out its log from its confirmed position, which may be
	// before start (the batch before is committing as this one is
	// planned): decode a budget of rows, and twice as many again while the
	// budget ran out before the batch was full.
	var end pglogrepl.LSN
	for budget := 2*max + 2; ; budget *= 2 {
		changes, txn, decoded, full := int64(0), int64(0), int64(0), false
		end = 0
		err = s.peek(ctx, pool, 0, budget, func(lsn pglogrepl.LSN, m pglogrepl.Message) bool {
			decoded++
			switch m := m.(type) {
			case *pglogrepl.BeginMessage:
				txn = 0
			case *pglogrepl.CommitMessage:
				if m.TransactionEndLSN <= from {
					return true // read by a batch before
				}
				if end != 0 && changes+txn > max {
					full = true
					return false // this transaction opens the next batch
				}
				end, changes = m.TransactionEndLSN, changes+txn
			case *pglogrepl.InsertMessage, *pglogrepl.UpdateMessage, *pglogrepl.DeleteMessage, *pglogrepl.TruncateMessage:
				txn++
			}
			return true
		})
		if err != nil {
			return nil, false, err
		}
		if full || decoded < budget {
			break // the batch is full, or the log ends here
		}
	}
	if end == 0 {
		return nil, false, nil
	}
	out, err := json.Marshal(position{LSN: end.String()})
	return out, err == nil, err
}

// Committed moves the slot's confirmed position to end, every batch up to
// it committed in sluice: the server may drop the log before it.
func (s *Source) Committed(ctx context.Context, end domain.Offset) error {
	lsn, err := parsePosition(end)
	if err != nil {
		return domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s cannot be read: %v", end, err)
	}
	pool, err := s.connect(ctx)
	if err != nil {
		return err
	}
	return s.confirm(ctx, pool, lsn)
}

func (s *Source) confirm(ctx context.Context, pool *pgxpool.Pool, lsn pglogrepl.LSN) error {
	var confirmed string
	if err := pool.QueryRow(ctx, "SELECT coalesce(confirmed_flush_lsn::text, '0/0') FROM pg_replication_slots WHERE slot_name = $1", s.opts.Slot).Scan(&confirmed); err != nil {
		if err == pgx.ErrNoRows {
			return s.setup(ctx, pool, false) // REPLICATION_SLOT_NOT_FOUND
		}
		return unavailable(err)
	}
	at, _ := pglogrepl.ParseLSN(confirmed)
	if lsn <= at {
		return nil
	}
	if _, err := pool.Exec(ctx, "SELECT pg_replication_slot_advance($1, $2::pg_lsn)", s.opts.Slot, lsn.String()); err != nil {
		return unavailable(err)
	}
	return nil
}

// peek decodes the slot's log up to upto (0: all there is) or about
// nchanges rows of it, begins and commits counted (0: no bound; the server
// ends at a transaction's end), calling
// each with a message and its log position until it returns false.
func (s *Source) peek(ctx context.Context, pool *pgxpool.Pool, upto pglogrepl.LSN, nchanges int64, each func(pglogrepl.LSN, pglogrepl.Message) bool) error {
	var uptoArg, nArg any
	if upto != 0 {
		uptoArg = upto.String()
	}
	if nchanges > 0 {
		nArg = nchanges
	}
	rows, err := pool.Query(ctx, "SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes($1, $2::pg_lsn, $3::int, 'proto_version', '1', 'publication_names', $4)",
		s.opts.Slot, uptoArg, nArg, s.opts.Publication)
	if err != nil {
		return unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var lsnText string
		var data []byte
		if err := rows.Scan(&lsnText, &data); err != nil {
			return unavailable(err)
		}
		lsn, err := pglogrepl.ParseLSN(lsnText)
		if err != nil {
			return unavailable(err)
		}
		m, err := pglogrepl.Parse(data)
		if err != nil {
			return domain.Errorf(domain.CodeMalformedRecord, "a pgoutput message at %s does not decode: %v", lsnText, err)
		}
		if !each(lsn, m) {
			break
		}
	}
	return rows.Err()
}

// Read returns the changes of the transactions that end after start and
// at or before end, in log order.
func (s *Source) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	pool, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	var from pglogrepl.LSN
	if start != nil {
		if from, err = parsePosition(start); err != nil {
			return nil, domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s cannot be read: %v", start, err)
		}
	}
	to, err := parsePosition(end)
	if err != nil {
		return nil, domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s cannot be read: %v", end, err)
	}
	out := domain.NewBatch(s.schema, 0)
	relations := map[uint32]*pglogrepl.RelationMessage{}
	var pending [][]domain.Value // the current transaction's rows
	var commitTS time.Time
	var failure error
	err = s.peek(ctx, pool, to, 0, func(lsn pglogrepl.LSN, m pglogrepl.Message) bool {
		row := func(op string, rel uint32, tuple *pglogrepl.TupleData) {
			r := relations[rel]
			vals := make([]domain.Value, len(s.schema.Fields))
			if r != nil && tuple != nil {
				for i, c := range tuple.Columns {
					if i >= len(r.Columns) {
						break
					}
					j := s.schema.Index(r.Columns[i].Name)
					if j < 0 || c.DataType != 't' {
						continue // a column added after the source was planned, NULL, or an unchanged TOAST value
					}
					v, err := parseText(string(c.Data), s.schema.Fields[j].Type)
					if err != nil && failure == nil {
						failure = domain.Errorf(domain.CodeMalformedRecord, "%s.%s, column %s at %s: %v", r.Namespace, r.RelationName, r.Columns[i].Name, lsn, err)
					}
					vals[j] = v
				}
			}
			n := len(s.schema.Fields)
			vals[n-4] = domain.String(op)
			vals[n-3] = domain.Int(int64(lsn))
			vals[n-1] = domain.Null()
			if r != nil {
				vals[n-1] = domain.String(r.Namespace + "." + r.RelationName)
			}
			pending = append(pending, vals)
		}
		switch m := m.(type) {
		case *pglogrepl.RelationMessage:
			relations[m.RelationID] = m
		case *pglogrepl.BeginMessage:
			pending, commitTS = pending[:0], m.CommitTime
		case *pglogrepl.InsertMessage:
			row("INSERT", m.RelationID, m.Tuple)
		case *pglogrepl.UpdateMessage:
			row("UPDATE", m.RelationID, m.NewTuple)
		case *pglogrepl.DeleteMessage:
			row("DELETE", m.RelationID, m.OldTuple)
		case *pglogrepl.TruncateMessage:
			for _, rel := range m.RelationIDs {
				row("TRUNCATE", rel, nil)
			}
		case *pglogrepl.CommitMessage:
			if m.TransactionEndLSN > from && m.TransactionEndLSN <= to {
				for _, vals := range pending {
					vals[len(vals)-2] = domain.Timestamp(commitTS)
					if err := out.AppendRow(vals...); err != nil && failure == nil {
						failure = err
					}
				}
			}
			pending = pending[:0]
			if m.TransactionEndLSN >= to {
				return false
			}
		}
		return failure == nil
	})
	if err != nil {
		return nil, err
	}
	return out, failure
}

// typeOf is the sluice type of a PostgreSQL column type (its oid and
// modifier).
func typeOf(oid uint32, mod int32) domain.Type {
	switch oid {
	case 16:
		return domain.TypeBool
	case 21:
		return domain.TypeInt16
	case 23:
		return domain.TypeInt32
	case 20:
		return domain.TypeInt64
	case 700:
		return domain.TypeFloat32
	case 701:
		return domain.TypeFloat64
	case 1700: // numeric(p, s): the modifier holds both; numeric without them has no fixed scale
		if mod >= 4 {
			p, sc := int((mod-4)>>16), int((mod-4)&0xffff)
			if p >= 1 && p <= domain.MaxDecimalPrecision && sc <= p {
				return domain.DecimalType(p, sc)
			}
		}
		return domain.TypeString
	case 17:
		return domain.TypeBytes
	case 1082:
		return domain.TypeDate
	case 1114:
		return domain.TypeTimestampNTZ
	case 1184:
		return domain.TypeTimestamp
	case 114, 3802:
		return domain.TypeVariant
	}
	return domain.TypeString // text, varchar, char, uuid, and the rest as their text
}

// parseText reads a column's text as PostgreSQL writes it.
func parseText(s string, t domain.Type) (domain.Value, error) {
	switch {
	case t.Kind == domain.KindBool:
		return domain.Bool(s == "t"), nil
	case t.Kind == domain.KindInt64:
		n, err := strconv.ParseInt(s, 10, 64)
		return domain.Int(n), err
	case t.Kind == domain.KindFloat64:
		f, err := strconv.ParseFloat(strings.Replace(s, "Infinity", "Inf", 1), 64)
		return domain.Float(f), err
	case t.Kind == domain.KindDecimal:
		u, ok, fits := domain.ParseDecimal(s, t.Precision, t.Scale)
		if !ok || !fits {
			return domain.Null(), fmt.Errorf("%q is not a %s", s, t)
		}
		return domain.Decimal(u, t.Precision, t.Scale), nil
	case t.Kind == domain.KindBytes:
		b, err := hex.DecodeString(strings.TrimPrefix(s, `\x`))
		return domain.Bytes(b), err
	case t.Kind == domain.KindDate:
		d, err := time.Parse("2006-01-02", s)
		return domain.Date(d), err
	case t.Kind == domain.KindTimestamp && t.NTZ:
		ts, err := time.Parse("2006-01-02 15:04:05.999999", s)
		return domain.Timestamp(ts), err
	case t.Kind == domain.KindTimestamp:
		ts, err := time.Parse("2006-01-02 15:04:05.999999Z07", s)
		if err != nil {
			ts, err = time.Parse("2006-01-02 15:04:05.999999Z07:00", s)
		}
		return domain.Timestamp(ts), err
	case t.Variant:
		n, err := domain.ParseJSON(s)
		if err != nil {
			return domain.Null(), err
		}
		text, _ := domain.AppendVariant(nil, n)
		return domain.String(string(text)), nil
	}
	return domain.String(s), nil
}
