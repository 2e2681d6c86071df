package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql"
	"github.com/sluicehq/sluice/sql/syntax"
)

// AutoCDC declares an AUTO CDC flow, as create_auto_cdc_flow does: the
// changes Source gives are applied by key to Target, a streaming table.
// SequenceBy and the conditions are SQL expressions over the source's
// columns.
type AutoCDC struct {
	Target string
	Source Query
	// Name is the flow's name; the target's name when empty.
	Name string
	// Keys identify a row; they must be stored columns.
	Keys []string
	// SequenceBy orders the changes of a key: a column or any expression,
	// STRUCT(a, b) ordered field by field. Required.
	SequenceBy string
	// ApplyAsDeletes and ApplyAsTruncates are conditions making a change a
	// delete of its key, or a truncate of the table (SCD type 1 only).
	ApplyAsDeletes, ApplyAsTruncates string
	// IgnoreNullUpdates makes a NULL in an update keep the stored value: of
	// every column, of IgnoreNullUpdatesColumns only, or of every column
	// but IgnoreNullUpdatesExcept.
	IgnoreNullUpdates        bool
	IgnoreNullUpdatesColumns []string
	IgnoreNullUpdatesExcept  []string
	// Columns lists the columns to store; ExceptColumns, those not to.
	// Neither: every column of the source.
	Columns, ExceptColumns []string
	// StoredAsSCDType is 1 (the default) or 2.
	StoredAsSCDType int
	// TrackHistoryColumns (or every column but TrackHistoryExcept) are the
	// columns whose changes begin a new version of an SCD type 2 row.
	TrackHistoryColumns, TrackHistoryExcept []string
	// Once applies what the source holds once, read as a batch.
	Once bool
}

// CreateAutoCDCFlow declares an AUTO CDC flow (create_auto_cdc_flow).
// Problems with the clauses are reported by Resolve, or when the flow's
// first micro-batch runs if the source's columns are known only then.
func (p *Pipeline) CreateAutoCDCFlow(a AutoCDC, opts ...Option) {
	name := a.Name
	if name == "" {
		name = a.Target
	}
	c := &changeClauses{flow: name, keys: a.Keys, conf: map[string]string{}}
	c.spec = domain.ChangeSpec{Keys: a.Keys, SCDType: a.StoredAsSCDType, Truncates: a.ApplyAsTruncates != ""}
	if c.spec.SCDType == 0 {
		c.spec.SCDType = 1
	}
	c.columns = columnSet(a.Columns, a.ExceptColumns)
	c.spec.TrackHistory = columnSet(a.TrackHistoryColumns, a.TrackHistoryExcept)
	if a.IgnoreNullUpdates || a.IgnoreNullUpdatesColumns != nil || a.IgnoreNullUpdatesExcept != nil {
		c.spec.IgnoreNullUpdates = columnSet(a.IgnoreNullUpdatesColumns, a.IgnoreNullUpdatesExcept)
		if c.spec.IgnoreNullUpdates == nil {
			c.spec.IgnoreNullUpdates = &domain.ColumnSet{Except: true}
		}
	}
	var problems []error
	parse := func(what, text string) syntax.Expr {
		if text == "" {
			return nil
		}
		e, err := syntax.ParseExpr(what, text)
		if err != nil {
			problems = append(problems, err)
		}
		return e
	}
	c.seq = parse("sequence_by", a.SequenceBy)
	c.del = parse("apply_as_deletes", a.ApplyAsDeletes)
	c.trunc = parse("apply_as_truncates", a.ApplyAsTruncates)
	if a.SequenceBy == "" {
		problems = append(problems, domain.Errorf(domain.CodeCDCInvalidClause, "AUTO CDC flow %q has no sequence_by; changes need an order", name).WithNames(name))
	}
	problems = append(problems, c.checkClauses()...)
	d := p.declare("flow", name, opts)
	for _, err := range problems {
		p.problems = append(p.problems, asProblem(err))
	}
	f := d.flow
	f.Name, f.Target, f.Type, f.Changes = name, a.Target, domain.FlowChange, &c.spec
	f.Once = f.Once || a.Once
	p.addFlow(f, a.Source.with(c.transform()))
}

// asProblem makes an error a problem Resolve reports.
func asProblem(err error) *domain.Error {
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Wrap(domain.CodeInvalidDefinition, err, "")
	}
	return de
}

func columnSet(list, except []string) *domain.ColumnSet {
	switch {
	case except != nil:
		return &domain.ColumnSet{Except: true, Columns: except}
	case list != nil:
		return &domain.ColumnSet{Columns: list}
	}
	return nil
}

// changeClauses are the clauses of an AUTO CDC flow, compiled for each
// schema of its source into the projection the flow applies: the stored
// columns, then the sequence, the delete and the truncate condition.
type changeClauses struct {
	flow       string
	keys       []string
	seq        syntax.Expr
	del, trunc syntax.Expr       // nil when absent
	columns    *domain.ColumnSet // nil: every column
	spec       domain.ChangeSpec
	conf       map[string]string
	// where the clauses were written, for messages (SQL files)
	file string
	pos  map[string]syntax.Pos

	mu       sync.Mutex
	compiled map[string]*changeProjection // by the source schema's text
}

// changeProjection is the clauses compiled for one source schema.
type changeProjection struct {
	stored          []int // the stored columns among the source's
	schema          domain.Schema
	seq, del, trunc *sql.Compiled
}

// errAt reports a problem with a clause: at its place in a SQL file when it
// has one.
func (c *changeClauses) errAt(clause string, code domain.Code, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c.file != "" {
		p, ok := c.pos[clause]
		if !ok {
			p = c.pos[""] // the statement
		}
		return &syntax.Error{Code: code, File: c.file, Pos: p, Message: msg}
	}
	return domain.Errorf(code, "AUTO CDC flow %q: %s", c.flow, msg).WithNames(c.flow)
}

// checkClauses finds the contradictions that need no schema.
func (c *changeClauses) checkClauses() []error {
	var errs []error
	if c.spec.SCDType != 1 && c.spec.SCDType != 2 {
		errs = append(errs, c.errAt("stored", domain.CodeCDCInvalidClause, "STORED AS SCD TYPE %d: the type is 1 or 2", c.spec.SCDType))
	}
	if len(c.keys) == 0 {
		errs = append(errs, c.errAt("keys", domain.CodeCDCInvalidClause, "an AUTO CDC flow needs at least one key column"))
	}
	if c.trunc != nil && c.spec.SCDType == 2 {
		errs = append(errs, c.errAt("truncate", domain.CodeCDCInvalidClause,
			"APPLY AS TRUNCATE WHEN is for SCD type 1 tables: a truncate would erase the history an SCD type 2 table keeps; remove it, or store as SCD TYPE 1"))
	}
	if c.spec.Snapshot {
		for _, cl := range []struct {
			clause, pos string
			given       bool
		}{
			{"SEQUENCE BY", "sequence", c.seq != nil}, {"APPLY AS DELETE WHEN", "delete", c.del != nil},
			{"APPLY AS TRUNCATE WHEN", "truncate", c.trunc != nil}, {"IGNORE NULL UPDATES", "ignore", c.spec.IgnoreNullUpdates != nil},
		} {
			if cl.given {
				errs = append(errs, c.errAt(cl.pos, domain.CodeCDCInvalidClause,
					"%s does not apply FROM SNAPSHOT: each snapshot is the source whole, so a key it lacks is deleted and its version sequences it", cl.clause))
			}
		}
	}
	if c.spec.TrackHistory != nil && c.spec.SCDType != 2 {
		errs = append(errs, c.errAt("track", domain.CodeCDCInvalidClause,
			"TRACK HISTORY ON is for SCD type 2 tables: an SCD type 1 table keeps no history; remove it, or store as SCD TYPE 2"))
	}
	return errs
}

// compile compiles the clauses for a source schema, checking that every
// column they name is there.
func (c *changeClauses) compile(in domain.Schema) (*changeProjection, error) {
	key := in.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.compiled[key]; p != nil {
		return p, nil
	}
	sess, err := sql.SessionFromConf(c.conf)
	if err != nil {
		return nil, err
	}
	p := &changeProjection{}
	names := in.Names()
	if c.columns == nil {
		for i := range names {
			p.stored = append(p.stored, i)
		}
	} else {
		for _, n := range c.columns.Columns {
			if in.Index(n) < 0 {
				return nil, c.errAt("columns", domain.CodeCDCUnknownColumn, "COLUMNS names %s, which the source does not have (it has %s)", n, strings.Join(names, ", "))
			}
		}
		if c.columns.Except {
			p.stored = c.columns.Resolve(names)
		} else {
			// a list is stored in its order
			for _, n := range c.columns.Columns {
				p.stored = append(p.stored, in.Index(n))
			}
		}
	}
	var fields []domain.Field
	for _, i := range p.stored {
		fields = append(fields, in.Fields[i])
	}
	stored := domain.NewSchema(fields...)
	check := func(clause, what string, cols []string) error {
		for _, n := range cols {
			if stored.Index(n) >= 0 {
				continue
			}
			if in.Index(n) >= 0 {
				return c.errAt(clause, domain.CodeCDCUnknownColumn, "the %s column %s is not stored: COLUMNS leaves it out", what, n)
			}
			return c.errAt(clause, domain.CodeCDCUnknownColumn, "the %s column %s is not a column of the source (it has %s)", what, n, strings.Join(names, ", "))
		}
		return nil
	}
	if err := check("keys", "key", c.keys); err != nil {
		return nil, err
	}
	if t := c.spec.TrackHistory; t != nil {
		if err := check("track", "tracked", t.Columns); err != nil {
			return nil, err
		}
	}
	if t := c.spec.IgnoreNullUpdates; t != nil {
		if err := check("ignore", "IGNORE NULL UPDATES", t.Columns); err != nil {
			return nil, err
		}
	}
	p.schema = stored
	if c.seq != nil {
		if p.seq, err = sql.CompileSession(c.seq, in, sess); err != nil {
			return nil, err
		}
		if t := p.seq.Type(); !cdc.Orderable(t) {
			return nil, c.errAt("sequence", domain.CodeCDCSequenceType, "SEQUENCE BY is of type %s, which cannot be ordered; sequence by a number, a string, a date, a timestamp or a STRUCT of those", t)
		}
	}
	for _, cond := range []struct {
		clause string
		e      syntax.Expr
		dst    **sql.Compiled
	}{{"delete", c.del, &p.del}, {"truncate", c.trunc, &p.trunc}} {
		if cond.e == nil {
			continue
		}
		if *cond.dst, err = sql.CompileSession(cond.e, in, sess); err != nil {
			return nil, err
		}
		if k := (*cond.dst).Type().Kind; k != domain.KindBool && k != domain.KindNull {
			return nil, c.errAt(cond.clause, domain.CodeDatatypeMismatch, "the condition of APPLY AS %s WHEN is of type %s, not BOOLEAN", strings.ToUpper(cond.clause), (*cond.dst).Type())
		}
	}
	if c.compiled == nil {
		c.compiled = map[string]*changeProjection{}
	}
	c.compiled[key] = p
	return p, nil
}

// tableSchema is the schema of the target for a source schema: the stored
// columns, and __START_AT and __END_AT for SCD type 2.
func (c *changeClauses) tableSchema(in domain.Schema) (domain.Schema, error) {
	p, err := c.compile(in)
	if err != nil {
		return domain.Schema{}, err
	}
	var seqType domain.Type
	switch {
	case c.spec.Snapshot:
		seqType = domain.TypeTimestamp // when each snapshot was applied
	case p.seq != nil:
		seqType = p.seq.Type()
	}
	return cdc.TableSchema(p.schema, domain.ChangeInfo{SCDType: c.spec.SCDType, SequenceType: seqType}), nil
}

// transform is the flow's last transform: each batch of the source becomes
// its changes, in the layout domain.Flow.Changes describes.
func (c *changeClauses) transform() domain.Transform {
	return domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		p, err := c.compile(b.Schema)
		if err != nil {
			return nil, err
		}
		now := time.Now() // current_timestamp is the time of this micro-batch
		n := b.Len()
		fields := append([]domain.Field(nil), p.schema.Fields...)
		cols := make([]*domain.Column, 0, len(p.stored)+3)
		for _, i := range p.stored {
			cols = append(cols, b.Columns[i])
		}
		if c.spec.Snapshot {
			return domain.BatchOf(domain.NewSchema(fields...), cols) // the snapshot's rows
		}
		if p.seq == nil {
			return nil, c.errAt("sequence", domain.CodeCDCInvalidClause, "the flow has no SEQUENCE BY")
		}
		seq, err := p.seq.EvalAt(b, now)
		if err != nil {
			return nil, err
		}
		fields = append(fields, domain.Field{Name: domain.ChangeSequenceColumn, Type: p.seq.Type(), Nullable: true})
		cols = append(cols, seq)
		for _, cond := range []struct {
			name string
			c    *sql.Compiled
		}{{domain.ChangeDeleteColumn, p.del}, {domain.ChangeTruncateColumn, p.trunc}} {
			var col *domain.Column
			if cond.c == nil {
				col = &domain.Column{Kind: domain.KindBool, Ints: make([]int64, n)}
			} else if col, err = cond.c.EvalAt(b, now); err != nil {
				return nil, err
			}
			fields = append(fields, domain.Field{Name: cond.name, Type: domain.TypeBool, Nullable: true})
			cols = append(cols, col)
		}
		if cols[len(cols)-1].Kind == domain.KindNull || cols[len(cols)-2].Kind == domain.KindNull {
			for _, j := range []int{len(cols) - 2, len(cols) - 1} {
				if cols[j].Kind == domain.KindNull {
					cols[j] = &domain.Column{Kind: domain.KindBool, Ints: make([]int64, n)}
				}
			}
		}
		return domain.BatchOf(domain.NewSchema(fields...), cols)
	})
}

// sqlChangeClauses reads the clauses of an AUTO CDC or APPLY CHANGES
// statement of a file.
func sqlChangeClauses(a *syntax.AutoCDC, flow, file string, conf map[string]string) *changeClauses {
	c := &changeClauses{flow: flow, file: file, conf: conf, pos: map[string]syntax.Pos{"": a.Pos}}
	c.spec.SCDType = 1
	if a.Keys != nil {
		c.pos["keys"] = a.Keys.Pos
		for _, k := range a.Keys.Columns {
			c.keys = append(c.keys, k.Last().Name)
		}
	}
	c.spec.Keys = c.keys
	if a.SequenceBy != nil {
		c.pos["sequence"], c.seq = a.SequenceBy.Pos, a.SequenceBy.Expr
	}
	if a.DeleteWhen != nil {
		c.pos["delete"], c.del = a.DeleteWhen.Pos, a.DeleteWhen.Expr
	}
	c.spec.Snapshot = a.Snapshot
	if a.TruncateWhen != nil {
		c.pos["truncate"], c.trunc = a.TruncateWhen.Pos, a.TruncateWhen.Expr
		c.spec.Truncates = true
	}
	if a.Columns != nil {
		c.pos["columns"], c.columns = a.Columns.Pos, selectionSet(a.Columns)
	}
	if a.StoredAs != nil {
		c.pos["stored"], c.spec.SCDType = a.StoredAs.Pos, a.StoredAs.SCDType
	}
	if a.TrackHistory != nil {
		c.pos["track"], c.spec.TrackHistory = a.TrackHistory.Pos, selectionSet(a.TrackHistory)
	}
	if a.IgnoreNulls != nil {
		c.pos["ignore"] = a.IgnoreNulls.Pos
		if a.IgnoreNulls.On != nil {
			c.spec.IgnoreNullUpdates = selectionSet(a.IgnoreNulls.On)
		} else {
			c.spec.IgnoreNullUpdates = &domain.ColumnSet{Except: true}
		}
	}
	return c
}

func selectionSet(s *syntax.ColumnSelection) *domain.ColumnSet {
	set := &domain.ColumnSet{Except: s.Star}
	for _, n := range s.Columns {
		set.Columns = append(set.Columns, n.Last().Name)
	}
	return set
}

// SnapshotFunc returns the snapshot that follows the version latest (nil
// before the first): its rows and version, or ok false when there is none
// yet. Versions must grow. It must be deterministic: after a crash it is
// asked again for the snapshot after the same version and must return the
// same one.
type SnapshotFunc func(ctx context.Context, latest *int64) (rows *domain.Batch, version int64, ok bool, err error)

// AutoCDCFromSnapshot declares an AUTO CDC flow from snapshots, as
// create_auto_cdc_from_snapshot_flow does: each snapshot is the source
// whole; keys it adds are inserted, rows it changes updated, keys it lacks
// deleted. The snapshots come from Source, a dataset read whole at each
// update (versioned by when the update applies it), or from Snapshots, in
// the order of their versions (SCD type 2 versions then start at them).
type AutoCDCFromSnapshot struct {
	Target string
	Name   string // the flow's name; the target's name when empty
	// Source is read whole (Read("dataset")); or Snapshots is set.
	Source    Query
	Snapshots SnapshotFunc
	Keys      []string
	// StoredAsSCDType is 1 (the default) or 2.
	StoredAsSCDType                         int
	TrackHistoryColumns, TrackHistoryExcept []string
}

// CreateAutoCDCFromSnapshotFlow declares an AUTO CDC flow from snapshots
// (create_auto_cdc_from_snapshot_flow).
func (p *Pipeline) CreateAutoCDCFromSnapshotFlow(a AutoCDCFromSnapshot, opts ...Option) {
	name := a.Name
	if name == "" {
		name = a.Target
	}
	c := &changeClauses{flow: name, keys: a.Keys, conf: map[string]string{}}
	c.spec = domain.ChangeSpec{Keys: a.Keys, SCDType: a.StoredAsSCDType, Snapshot: true}
	if c.spec.SCDType == 0 {
		c.spec.SCDType = 1
	}
	c.spec.TrackHistory = columnSet(a.TrackHistoryColumns, a.TrackHistoryExcept)
	source := a.Source
	if a.Snapshots != nil {
		source = StreamFrom(&snapshotSource{fn: a.Snapshots, name: name})
	}
	d := p.declare("flow", name, opts)
	for _, err := range c.checkClauses() {
		p.problems = append(p.problems, asProblem(err))
	}
	f := d.flow
	f.Name, f.Target, f.Type, f.Changes = name, a.Target, domain.FlowSnapshotChange, &c.spec
	p.addFlow(f, source.with(c.transform()))
}

// snapshotSource reads the snapshots a SnapshotFunc returns, one per
// micro-batch; its offset is the version of the last one read.
type snapshotSource struct {
	fn   SnapshotFunc
	name string
}

func (s *snapshotSource) String() string { return "the snapshots of flow " + s.name }

func latestOf(o domain.Offset) (*int64, error) {
	if len(o) == 0 {
		return nil, nil
	}
	var so domain.SnapshotOffset
	if err := json.Unmarshal(o, &so); err != nil {
		return nil, domain.Wrap(domain.CodeInvalidUpdateState, err, "reading a snapshot offset")
	}
	return &so.Version, nil
}

// Plan asks for the snapshot after start's version; its end is that
// snapshot's version.
func (s *snapshotSource) Plan(ctx context.Context, start domain.Offset, _ domain.ReadLimit) (domain.Offset, bool, error) {
	latest, err := latestOf(start)
	if err != nil {
		return nil, false, err
	}
	_, version, ok, err := s.fn(ctx, latest)
	if err != nil || !ok {
		return nil, false, err
	}
	if latest != nil && version <= *latest {
		return nil, false, domain.Errorf(domain.CodeCDCSnapshotVersion, "the snapshot function of flow %q returned version %d after version %d", s.name, version, *latest).WithNames(s.name)
	}
	end, err := json.Marshal(domain.SnapshotOffset{Version: version})
	return end, err == nil, err
}

// Read returns the snapshot after start's version, which must be end's.
func (s *snapshotSource) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	latest, err := latestOf(start)
	if err != nil {
		return nil, err
	}
	want, err := latestOf(end)
	if err != nil || want == nil {
		return nil, domain.Errorf(domain.CodeInvalidUpdateState, "a snapshot micro-batch of flow %q has no version", s.name)
	}
	rows, version, ok, err := s.fn(ctx, latest)
	if err != nil {
		return nil, err
	}
	if !ok || version != *want {
		return nil, domain.Errorf(domain.CodeSourceFailed, "the snapshot function of flow %q returned version %d after %v, where it returned %d before", s.name, version, latest, *want).
			WithHint("a snapshot function must be deterministic: the same snapshot for the same latest version").WithNames(s.name)
	}
	if rows == nil {
		rows = &domain.Batch{}
	}
	return rows, nil
}
