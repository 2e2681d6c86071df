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
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
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
	// Snapshot reads the tables' rows, in chunks of their primary key, when
	// a flow starts, before the changes after the slot's consistent point.
	Snapshot bool
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
	opts    Options
	schema  domain.Schema
	columns [][]string // each table's columns
	keys    [][]string // each table's primary key columns, for the snapshot
	keyType [][]string // their types, as SQL spells them
	mu      sync.Mutex
	pool    *pgxpool.Pool
	planned *planned // what the last plan decoded
	// slotMu takes the slot one use at a time: the next batch is planned
	// and read while one commits and advances the slot, and Postgres lets
	// one session at a time use a slot ("is active for PID")
	slotMu sync.Mutex
	ready  bool
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// New checks the options and reads the tables' columns (the source's
// schema: every table's columns, then the change columns).
func New(ctx context.Context, opts Options) (src *Source, err error) {
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
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
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
		var cols []string
		for rows.Next() {
			var name string
			var oid uint32
			var mod int32
			if err := rows.Scan(&name, &oid, &mod); err != nil {
				rows.Close()
				return nil, unavailable(err)
			}
			n++
			cols = append(cols, name)
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
		if err := rows.Err(); err != nil {
			return nil, unavailable(err)
		}
		if n == 0 {
			return nil, optionErr("the table %s does not exist (or has no columns)", t)
		}
		s.columns = append(s.columns, cols)
		keys, types, err := primaryKey(ctx, pool, schema, table)
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 && opts.Snapshot {
			return nil, optionErr("the table %s has no primary key, which the snapshot reads it in chunks of", t).
				WithHint("give the table a primary key, or read it without the snapshot (snapshot => false) and load its rows with a once flow")
		}
		s.keys, s.keyType = append(s.keys, keys), append(s.keyType, types)
	}
	s.schema = domain.NewSchema(append(fields, changeFields...)...)
	return s, nil
}

func optionErr(format string, args ...any) *domain.Error {
	return domain.Errorf(domain.CodeSourceOptionInvalid, format, args...)
}

// primaryKey is a table's primary key columns and their types.
func primaryKey(ctx context.Context, pool *pgxpool.Pool, schema, table string) (keys, types []string, err error) {
	rows, err := pool.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_index i
		JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		WHERE i.indisprimary AND n.nspname = $1 AND c.relname = $2 ORDER BY k.ord`, schema, table)
	if err != nil {
		return nil, nil, unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, t string
		if err := rows.Scan(&k, &t); err != nil {
			return nil, nil, unavailable(err)
		}
		keys, types = append(keys, k), append(types, t)
	}
	return keys, types, rows.Err()
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

// position is a batch's end. Streaming: the log position after its last
// transaction. In the snapshot: the slot's consistent point, and the last
// chunk read: its table and the last key read (none: the table is done).
type position struct {
	LSN      string     `json:"lsn"`
	Snapshot *snapChunk `json:"snapshot,omitempty"`
}

type snapChunk struct {
	Table int      `json:"table"`
	After []string `json:"after,omitempty"`
}

func parsePosition(raw domain.Offset) (position, pglogrepl.LSN, error) {
	var p position
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, 0, err
	}
	lsn, err := pglogrepl.ParseLSN(p.LSN)
	return p, lsn, err
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
	max := int64(peekRows)
	if limit.MaxRows > 0 && limit.MaxRows < max {
		max = limit.MaxRows
	}
	var pos position
	var from pglogrepl.LSN
	switch {
	case start != nil:
		if pos, from, err = parsePosition(start); err != nil {
			return nil, false, domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s of the checkpoint cannot be read: %v", start, err)
		}
	case s.opts.Snapshot:
		// the slot was just made: its consistent point is where the
		// changes start, and the snapshot comes first
		var point string
		if err := pool.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", s.opts.Slot).Scan(&point); err != nil {
			return nil, false, unavailable(err)
		}
		pos = position{LSN: point, Snapshot: &snapChunk{Table: -1}}
		from, _ = pglogrepl.ParseLSN(point)
	}
	if pos.Snapshot != nil {
		t, after := pos.Snapshot.Table, pos.Snapshot.After
		if after == nil {
			t++ // the table is done: the next one
		}
		if t < len(s.opts.Tables) {
			upto, err := s.chunkEnd(ctx, pool, t, after, max)
			if err != nil {
				return nil, false, err
			}
			out, err := json.Marshal(position{LSN: pos.LSN, Snapshot: &snapChunk{Table: t, After: upto}})
			return out, err == nil, err
		}
		// every table read: the changes after the snapshot's point
	}

	// The slot hands out its log from its confirmed position, which may be
	// before start (the batch before is committing as this one is
	// planned): decode a budget of rows, and twice as many again while the
	// budget ran out before the batch was full.
	var end pglogrepl.LSN
	var d *decoder
	for budget := 2*max + 2; ; budget = min(2*budget, math.MaxInt32) {
		changes, txn, decoded, full := int64(0), int64(0), int64(0), false
		end, d = 0, s.newDecoder()
		err = s.peek(ctx, pool, 0, budget, func(lsn pglogrepl.LSN, m pglogrepl.Message) bool {
			decoded++
			switch m := m.(type) {
			case *pglogrepl.BeginMessage:
				txn = 0
			case *pglogrepl.CommitMessage:
				if m.TransactionEndLSN <= from {
					d.commit(false)
					return true // read by a batch before
				}
				if end != 0 && changes+txn > max {
					full = true
					return false // this transaction opens the next batch
				}
				end, changes = m.TransactionEndLSN, changes+txn
				d.commit(true)
				return true
			case *pglogrepl.InsertMessage, *pglogrepl.UpdateMessage, *pglogrepl.DeleteMessage, *pglogrepl.TruncateMessage:
				txn++
			}
			d.message(lsn, m) // a change that cannot be a row is the read's to report
			return true
		})
		if err != nil {
			return nil, false, err
		}
		if full || decoded < budget || budget == math.MaxInt32 {
			break // the batch is full, or the log ends here
		}
	}
	if end == 0 {
		return nil, false, nil
	}
	out, err := json.Marshal(position{LSN: end.String()})
	if err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	s.planned = nil
	if d.failure == nil {
		s.planned = &planned{start: start, end: out, rows: d.out}
	}
	s.mu.Unlock()
	return out, true, nil
}

// Committed moves the slot's confirmed position to end, every batch up to
// it committed in sluice: the server may drop the log before it.
func (s *Source) Committed(ctx context.Context, end domain.Offset) error {
	pos, lsn, err := parsePosition(end)
	if err != nil {
		return domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s cannot be read: %v", end, err)
	}
	if pos.Snapshot != nil {
		return nil // the slot is at the snapshot's point, where it was made
	}
	pool, err := s.connect(ctx)
	if err != nil {
		return err
	}
	return s.confirm(ctx, pool, lsn)
}

func (s *Source) confirm(ctx context.Context, pool *pgxpool.Pool, lsn pglogrepl.LSN) error {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
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
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
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
	var startPos position
	var from pglogrepl.LSN
	if start != nil {
		if startPos, from, err = parsePosition(start); err != nil {
			return nil, domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s cannot be read: %v", start, err)
		}
	}
	endPos, to, err := parsePosition(end)
	if err != nil {
		return nil, domain.Errorf(domain.CodeCheckpointInvalid, "the PostgreSQL position %s cannot be read: %v", end, err)
	}
	if endPos.Snapshot != nil {
		var after []string // the chunk starts after this key of its table
		if sp := startPos.Snapshot; sp != nil && sp.Table == endPos.Snapshot.Table {
			after = sp.After
		}
		return s.readChunk(ctx, pool, endPos.Snapshot.Table, after, endPos.Snapshot.After, int64(to))
	}
	if rows, ok := s.takePlanned(start, end); ok {
		return rows, nil
	}
	d := s.newDecoder()
	err = s.peek(ctx, pool, to, 0, func(lsn pglogrepl.LSN, m pglogrepl.Message) bool {
		c, ok := m.(*pglogrepl.CommitMessage)
		if !ok {
			return d.message(lsn, m)
		}
		d.commit(c.TransactionEndLSN > from && c.TransactionEndLSN <= to)
		return c.TransactionEndLSN < to && d.failure == nil
	})
	if err != nil {
		return nil, err
	}
	return d.out, d.failure
}

// A decoder turns pgoutput messages into rows of the source's schema,
// a transaction at a time: commit keeps the transaction's rows, or drops
// them.
type decoder struct {
	s         *Source
	relations map[uint32]*pglogrepl.RelationMessage
	pending   [][]domain.Value // the current transaction's rows
	commitTS  time.Time
	out       *domain.Batch
	failure   error // the first change that could not be a row
}

func (s *Source) newDecoder() *decoder {
	return &decoder{s: s, relations: map[uint32]*pglogrepl.RelationMessage{}, out: domain.NewBatch(s.schema, 0)}
}

// message takes a message other than a commit; false when a change could
// not be a row (see failure).
func (d *decoder) message(lsn pglogrepl.LSN, m pglogrepl.Message) bool {
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		d.relations[m.RelationID] = m
	case *pglogrepl.BeginMessage:
		d.pending, d.commitTS = d.pending[:0], m.CommitTime
	case *pglogrepl.InsertMessage:
		d.row(lsn, "INSERT", m.RelationID, m.Tuple, nil)
	case *pglogrepl.UpdateMessage:
		d.row(lsn, "UPDATE", m.RelationID, m.NewTuple, m.OldTuple)
	case *pglogrepl.DeleteMessage:
		d.row(lsn, "DELETE", m.RelationID, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		for _, rel := range m.RelationIDs {
			d.row(lsn, "TRUNCATE", rel, nil, nil)
		}
	}
	return d.failure == nil
}

// commit ends the current transaction: its rows go into the batch when
// keep is true.
func (d *decoder) commit(keep bool) {
	if keep {
		for _, vals := range d.pending {
			vals[len(vals)-2] = domain.Timestamp(d.commitTS)
			if err := d.out.AppendRow(vals...); err != nil && d.failure == nil {
				d.failure = err
			}
		}
	}
	d.pending = d.pending[:0]
}

// row adds a change of relation rel: the values of tuple, and of old (the
// row before an update, with REPLICA IDENTITY FULL) for a large value the
// update left as it was, which Postgres does not send again.
func (d *decoder) row(lsn pglogrepl.LSN, op string, rel uint32, tuple, old *pglogrepl.TupleData) {
	schema := d.s.schema
	r := d.relations[rel]
	if r == nil {
		if d.failure == nil {
			d.failure = domain.Errorf(domain.CodeMalformedRecord, "a change at %s is of a relation the log did not describe first", lsn)
		}
		return
	}
	vals := make([]domain.Value, len(schema.Fields))
	if tuple != nil {
		for i, c := range tuple.Columns {
			if i >= len(r.Columns) {
				break
			}
			j := schema.Index(r.Columns[i].Name)
			data := c.Data
			switch {
			case j < 0 || c.DataType == 'n':
				continue // a column added after the source was planned, or NULL
			case c.DataType == 'u' && old != nil && i < len(old.Columns) && old.Columns[i].DataType == 't':
				data = old.Columns[i].Data
			case c.DataType == 'u':
				if d.failure == nil {
					d.failure = domain.Errorf(domain.CodeCDCUnchangedToast, "%s.%s, column %s at %s: an update left its large value as it was, and Postgres sent no value for it", r.Namespace, r.RelationName, r.Columns[i].Name, lsn).
						WithHint(fmt.Sprintf("ALTER TABLE %s.%s REPLICA IDENTITY FULL: the update then carries the row before it, whose value sluice takes", r.Namespace, r.RelationName))
				}
				continue
			}
			v, err := parseText(string(data), schema.Fields[j].Type)
			if err != nil && d.failure == nil {
				d.failure = domain.Errorf(domain.CodeMalformedRecord, "%s.%s, column %s at %s: %v", r.Namespace, r.RelationName, r.Columns[i].Name, lsn, err)
			}
			vals[j] = v
		}
	}
	n := len(schema.Fields)
	vals[n-4] = domain.String(op)
	vals[n-3] = domain.Int(int64(lsn))
	vals[n-1] = domain.String(r.Namespace + "." + r.RelationName)
	d.pending = append(d.pending, vals)
}

// planned is the batch a plan decoded on its way, for the read of its
// range that follows: the log is decoded once a micro-batch.
type planned struct {
	start, end domain.Offset
	rows       *domain.Batch
}

// takePlanned returns (and forgets) the rows the last plan decoded, when
// it planned this range.
func (s *Source) takePlanned(start, end domain.Offset) (*domain.Batch, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.planned
	if p == nil || !bytes.Equal(p.start, start) || !bytes.Equal(p.end, end) {
		return nil, false
	}
	s.planned = nil
	return p.rows, true
}

// keyComparison is (k1, k2) op ($n::text::t1, ...), the key's columns
// against the text of a key, with the arguments it adds to args.
func (s *Source) keyComparison(t int, op string, key []string, args []any) (string, []any) {
	cols := make([]string, len(s.keys[t]))
	vals := make([]string, len(s.keys[t]))
	for i, k := range s.keys[t] {
		cols[i] = pgx.Identifier{k}.Sanitize()
		args = append(args, key[i])
		vals[i] = fmt.Sprintf("$%d::text::%s", len(args), s.keyType[t][i])
	}
	return "(" + strings.Join(cols, ", ") + ") " + op + " (" + strings.Join(vals, ", ") + ")", args
}

func (s *Source) tableName(t int) string {
	schema, table, _ := strings.Cut(s.opts.Tables[t], ".")
	return pgx.Identifier{schema, table}.Sanitize()
}

// keyList is the key's columns of alias (ORDER BY must name them so: a
// bare name would be the selected text of the column, ordered as text).
func (s *Source) keyList(t int, alias string) string {
	cols := make([]string, len(s.keys[t]))
	for i, k := range s.keys[t] {
		cols[i] = alias + "." + pgx.Identifier{k}.Sanitize()
	}
	return strings.Join(cols, ", ")
}

// chunkEnd is the last key of the chunk of table t after the key after
// (nil: from the table's start) of n rows; nil when the rest of the table
// has n rows or fewer.
func (s *Source) chunkEnd(ctx context.Context, pool *pgxpool.Pool, t int, after []string, n int64) ([]string, error) {
	where, args := "", []any{}
	if after != nil {
		var cond string
		cond, args = s.keyComparison(t, ">", after, args)
		where = " WHERE " + cond
	}
	texts := make([]string, len(s.keys[t]))
	for i, k := range s.keys[t] {
		texts[i] = pgx.Identifier{k}.Sanitize() + "::text"
	}
	args = append(args, n)
	// the n-th key, and whether a row follows it
	q := fmt.Sprintf("SELECT %s, EXISTS (SELECT 1 FROM %s x WHERE (%s) > (%s)) FROM %s q%s ORDER BY %s LIMIT 1 OFFSET $%d - 1",
		strings.Join(texts, ", "), s.tableName(t), s.keyList(t, "x"), s.keyList(t, "q"), s.tableName(t), where, s.keyList(t, "q"), len(args))
	rows, err := pool.Query(ctx, q, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err() // the rest of the table is the chunk
	}
	vals := make([]any, len(s.keys[t])+1)
	key := make([]string, len(s.keys[t]))
	for i := range key {
		vals[i] = &key[i]
	}
	var more bool
	vals[len(key)] = &more
	if err := rows.Scan(vals...); err != nil {
		return nil, unavailable(err)
	}
	if !more {
		return nil, nil
	}
	return key, nil
}

// readChunk reads the rows of table t with keys after after (nil: from
// the start) up to upto (nil: to the end), as changes of op READ at the
// snapshot's point lsn. A chunk read again after a crash reads the rows
// as they are then; the changes after the point, which follow, bring the
// replica to the same state either way.
func (s *Source) readChunk(ctx context.Context, pool *pgxpool.Pool, t int, after, upto []string, lsn int64) (*domain.Batch, error) {
	var conds []string
	var args []any
	if after != nil {
		var c string
		c, args = s.keyComparison(t, ">", after, args)
		conds = append(conds, c)
	}
	if upto != nil {
		var c string
		c, args = s.keyComparison(t, "<=", upto, args)
		conds = append(conds, c)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	cols := s.columns[t]
	texts := make([]string, len(cols))
	for i, c := range cols {
		texts[i] = pgx.Identifier{c}.Sanitize() + "::text"
	}
	rows, err := pool.Query(ctx, "SELECT "+strings.Join(texts, ", ")+" FROM "+s.tableName(t)+" r"+where+" ORDER BY "+s.keyList(t, "r"), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	out := domain.NewBatch(s.schema, 0)
	now := domain.Timestamp(time.Now())
	n := len(s.schema.Fields)
	texts2 := make([]*string, len(cols))
	scan := make([]any, len(cols))
	for i := range scan {
		scan[i] = &texts2[i]
	}
	for rows.Next() {
		if err := rows.Scan(scan...); err != nil {
			return nil, unavailable(err)
		}
		vals := make([]domain.Value, n)
		for i, c := range cols {
			j := s.schema.Index(c)
			if texts2[i] == nil || j < 0 {
				continue
			}
			v, err := parseText(*texts2[i], s.schema.Fields[j].Type)
			if err != nil {
				return nil, domain.Errorf(domain.CodeMalformedRecord, "%s, column %s: %v", s.opts.Tables[t], c, err)
			}
			vals[j] = v
		}
		vals[n-4], vals[n-3], vals[n-2], vals[n-1] = domain.String("READ"), domain.Int(lsn), now, domain.String(s.opts.Tables[t])
		if err := out.AppendRow(vals...); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
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
