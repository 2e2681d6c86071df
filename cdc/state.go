package cdc

import (
	"container/heap"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql"
)

// State is the keyed state of a table an AUTO CDC flow writes: for SCD type
// 1, every key's current row (or, for a deleted key, a tombstone) with the
// sequence of the change that made it; for SCD type 2, every key's changes in
// sequence order, from which its versions follow. It is a fold of the
// table's recorded changes (Replay) and is kept in memory by whoever folds
// them: the flow writing the table, and readers of the table.
//
// A State is not safe for concurrent use.
type State struct {
	info     domain.ChangeInfo
	stored   domain.Schema // the columns the flow stores, in table order
	keyIdx   []int         // the keys among stored
	keyTypes []domain.Type // their types
	trackIdx []int         // SCD 2: the tracked columns among stored

	one map[string]*entry   // SCD 1
	two map[string]*history // SCD 2

	floor  domain.Value // the sequence of the newest truncate; NULL when none
	maxSeq domain.Value // the greatest recorded sequence (for time-based GC)
	tombs  tombHeap     // SCD 1 tombstones by when they may be collected

	budget   int64           // bytes of keys kept in memory; 0: no limit (see keys.go)
	spillDir string          // where the spill goes
	cold     *spill          // the keys beyond the budget; nil until needed
	spilled  int             // the keys in cold
	thawed   map[string]bool // the order keys brought back from cold in this micro-batch

	stamp     uint64 // counts the batches folded; marks what a batch touched
	sum       uint64 // the keys' hashes (see Fingerprint)
	keyBuf    []byte
	rowBuf    []byte
	touched   []touched1       // what apply1 touches, reused from batch to batch
	hs        []*history       // apply2's histories of a batch's changes, reused from batch to batch
	putters   [2]putter        // apply2's, one per goroutine putting changes
	delta     []*domain.Column // the columns of the delta Apply is making
	va, vb    []domain.Value   // two decoded rows, for comparing
	keyRowBuf []domain.Value   // keyRow's
}

// entry is an SCD 1 key's state.
type entry struct {
	id    string // the encoded key: its key in the state's map (see keyOf)
	hash  uint64 // its part of the fingerprint
	seq   domain.Value
	row   row    // empty: the key was deleted (a tombstone)
	gcAt  int64  // a tombstone's collection measure (see gcMeasure)
	stamp uint64 // the batch that last touched it
	gone  bool   // removed by a truncate in the batch that touched it
	pend  int    // 1 + the row of the batch's change that leads, not yet settled; 0 for none
}

// New returns the empty state of a table whose changes info describes and
// whose flow stores the columns stored (the table's columns, without
// __START_AT and __END_AT).
func New(info domain.ChangeInfo, stored domain.Schema) (*State, error) {
	if info.SCDType != 1 && info.SCDType != 2 {
		return nil, domain.Errorf(domain.CodeCDCInvalidClause, "STORED AS SCD TYPE %d: the type is 1 or 2", info.SCDType)
	}
	if len(info.Keys) == 0 {
		return nil, domain.Errorf(domain.CodeCDCInvalidClause, "an AUTO CDC flow needs at least one key column (KEYS (...))")
	}
	if !Orderable(info.SequenceType) {
		return nil, domain.Errorf(domain.CodeCDCSequenceType, "the sequence is of type %s, which cannot be ordered", info.SequenceType)
	}
	s := &State{info: info, one: map[string]*entry{}, two: map[string]*history{}}
	if err := s.setStored(stored); err != nil {
		return nil, err
	}
	return s, nil
}

// Orderable reports whether values of t can sequence changes: scalars, and
// structs and arrays of orderable values (compared field by field, element
// by element). Maps cannot.
func Orderable(t domain.Type) bool {
	switch t.Kind {
	case domain.KindMap, domain.KindNull:
		return false
	case domain.KindStruct:
		for _, f := range t.Fields {
			if !Orderable(f.Type) {
				return false
			}
		}
	case domain.KindList:
		return t.Elem != nil && Orderable(*t.Elem)
	}
	return true
}

// Info returns what the state was built with (and its current tombstone
// threshold).
func (s *State) Info() domain.ChangeInfo { return s.info }

// SetTombstoneGC sets how long, in seconds, deleted keys are remembered
// from now on: a table property that may change between updates, which
// each recorded batch carries (ChangeInfo.TombstoneGCSeconds) for Replay's
// caller to set before folding it.
func (s *State) SetTombstoneGC(seconds int64) { s.info.TombstoneGCSeconds = seconds }

// Stored returns the stored columns.
func (s *State) Stored() domain.Schema { return s.stored }

// setStored sets the stored columns, carrying the rows held to a new schema
// (columns added at the end read NULL, a bigint widened to double is
// converted).
func (s *State) setStored(stored domain.Schema) error {
	keyIdx, err := indexes(stored, s.info.Keys, "key")
	if err != nil {
		return err
	}
	var trackIdx []int
	if s.info.SCDType == 2 {
		if t := s.info.TrackHistory; t == nil {
			for i := range stored.Fields {
				trackIdx = append(trackIdx, i)
			}
		} else if _, err = indexes(stored, t.Columns, "tracked"); err != nil {
			return err
		} else {
			trackIdx = t.Resolve(stored.Names())
		}
	}
	keyTypes := make([]domain.Type, len(keyIdx))
	for k, j := range keyIdx {
		keyTypes[k] = stored.Fields[j].Type
	}
	old := s.stored
	if len(old.Fields) > 0 {
		for k, t := range s.keyTypes {
			if keyDrifts(t, keyTypes[k]) {
				// the keys held are encoded as values of the old type
				return domain.Errorf(domain.CodeCDCKeyDrift, "key column %s is of type %s in this batch and %s in the table", s.info.Keys[k], keyTypes[k], t).
					WithHint("a key's type cannot change: run a full refresh of the table (sluice run --full-refresh TABLE), or cast the key to its type in the flow's query").WithNames(s.info.Keys[k])
			}
		}
	}
	s.stored, s.keyIdx, s.keyTypes, s.trackIdx = stored, keyIdx, keyTypes, trackIdx
	if len(old.Fields) == 0 || old.Equal(stored) {
		return nil
	}
	from := make([]int, len(stored.Fields)) // new column -> old column, -1 when new
	for i, f := range stored.Fields {
		from[i] = old.Index(f.Name)
	}
	carry := func(r row) row {
		if r == "" {
			return ""
		}
		vals := r.values(nil)
		out := make([]domain.Value, len(from))
		for i, j := range from {
			if j < 0 {
				continue
			}
			v := vals[j]
			if stored.Fields[i].Type.Kind == domain.KindFloat64 && v.Kind() == domain.KindInt64 {
				v = domain.Float(float64(v.AsInt()))
			}
			out[i] = v
		}
		return s.encode(out)
	}
	for _, e := range s.one {
		e.row = carry(e.row)
	}
	for _, h := range s.two {
		for i, c := range h.changes {
			h.changes[i] = s.makeChange(c.seqKey(), carry(c.row()), c.del)
		}
	}
	s.rehashAll()
	if s.spilled == 0 {
		return nil
	}
	// the spilled keys, rewritten in place a few MiB at a time
	puts, size := map[string][]byte{}, 0
	err = s.cold.each(func(order, v []byte) error {
		if s.thawed[string(order)] {
			return nil
		}
		var out []byte
		if s.info.SCDType == 2 {
			h := decodeHistory(v)
			for i, c := range h.changes {
				h.changes[i] = s.makeChange(c.seqKey(), carry(c.row()), c.del)
				s.sum += s.hashChange(h.id, h.changes[i])
			}
			out = encodeHistory(h)
		} else {
			e := decodeEntry(v)
			e.row, e.hash = carry(e.row), 0
			s.rehashEntry(e)
			out = encodeEntry(e)
		}
		puts[string(order)] = out
		if size += len(out); size >= 4<<20 {
			if err := s.cold.write(puts, nil); err != nil {
				return err
			}
			puts, size = map[string][]byte{}, 0
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.cold.write(puts, nil)
}

// keyDrifts reports whether the keys of a column of type b would be
// encoded otherwise than those of type a (see sql.AppendRowKey): another
// kind (a bigint widened to a double), another decimal scale, nested
// values of other items. An int widened to a bigint, or a decimal to more
// digits at its scale, keeps its keys.
func keyDrifts(a, b domain.Type) bool {
	if a.Kind != b.Kind {
		return true
	}
	switch a.Kind {
	case domain.KindDecimal:
		return a.Scale != b.Scale
	case domain.KindList:
		return a.Elem == nil || b.Elem == nil || keyDrifts(*a.Elem, *b.Elem)
	case domain.KindMap:
		return a.Key == nil || b.Key == nil || a.Elem == nil || b.Elem == nil || keyDrifts(*a.Key, *b.Key) || keyDrifts(*a.Elem, *b.Elem)
	case domain.KindStruct:
		if len(a.Fields) != len(b.Fields) {
			return true
		}
		for i := range a.Fields {
			if keyDrifts(a.Fields[i].Type, b.Fields[i].Type) {
				return true
			}
		}
	}
	return false
}

func indexes(stored domain.Schema, names []string, what string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		j := stored.Index(n)
		if j < 0 {
			return nil, domain.Errorf(domain.CodeCDCUnknownColumn, "the %s column %s is not among the stored columns (%s)", what, n, strings.Join(stored.Names(), ", ")).WithNames(n)
		}
		out[i] = j
	}
	return out, nil
}

// Evolve takes the stored columns a new batch has: the schema the table's
// columns evolved to.
func (s *State) Evolve(stored domain.Schema) error {
	if s.stored.Equal(stored) {
		return nil
	}
	return s.setStored(stored)
}

// TableSchema is the table's schema: the stored columns, and for SCD type 2
// __START_AT and __END_AT of the sequence's type.
func (s *State) TableSchema() domain.Schema {
	if s.info.SCDType == 1 {
		return s.stored
	}
	return TableSchema(s.stored, s.info)
}

// TableSchema is the schema of a table storing the columns stored.
func TableSchema(stored domain.Schema, info domain.ChangeInfo) domain.Schema {
	if info.SCDType != 2 {
		return stored
	}
	fields := append([]domain.Field(nil), stored.Fields...)
	fields = append(fields,
		domain.Field{Name: domain.SCDStartColumn, Type: info.SequenceType, Nullable: true},
		domain.Field{Name: domain.SCDEndColumn, Type: info.SequenceType, Nullable: true})
	return domain.NewSchema(fields...)
}

// DeltaSchema is the schema of the changes a batch records: the stored
// columns, the sequence and the operation.
func (s *State) DeltaSchema() domain.Schema {
	fields := append([]domain.Field(nil), s.stored.Fields...)
	fields = append(fields,
		domain.Field{Name: domain.ChangeSequenceColumn, Type: s.info.SequenceType, Nullable: true},
		domain.Field{Name: domain.ChangeOpColumn, Type: domain.TypeInt64})
	return domain.NewSchema(fields...)
}

// StoredColumns is a table's schema less __START_AT and __END_AT: the
// columns its AUTO CDC flows store.
func StoredColumns(s domain.Schema) domain.Schema {
	var fields []domain.Field
	for _, f := range s.Fields {
		if !strings.EqualFold(f.Name, domain.SCDStartColumn) && !strings.EqualFold(f.Name, domain.SCDEndColumn) {
			fields = append(fields, f)
		}
	}
	return domain.NewSchema(fields...)
}

// SameKeys reports whether two key lists name the same columns in the same
// order (column names are not case-sensitive).
func SameKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// StoredOf returns the stored part of a delta schema.
func StoredOf(delta domain.Schema) domain.Schema {
	var fields []domain.Field
	for _, f := range delta.Fields {
		if f.Name != domain.ChangeSequenceColumn && f.Name != domain.ChangeOpColumn {
			fields = append(fields, f)
		}
	}
	return domain.NewSchema(fields...)
}

// describeKey renders a key for messages: "userId=5, region='eu'".
func (s *State) describeKey(key []domain.Value) string {
	parts := make([]string, len(key))
	for i, v := range key {
		parts[i] = s.info.Keys[i] + "=" + v.String()
	}
	return strings.Join(parts, ", ")
}

// keyAt encodes row i's key (key holds the key columns), or reports the
// first NULL key column. The bytes are valid until the next call.
func (s *State) keyAt(key []*domain.Column, i int) ([]byte, int) {
	if n := firstNull(key, i); n >= 0 {
		return nil, n
	}
	s.keyBuf = sql.AppendRowKey(s.keyBuf[:0], key, i)
	return s.keyBuf, -1
}

// firstNull is the first of the key columns key that is NULL in row i, or
// -1.
func firstNull(key []*domain.Column, i int) int {
	for n, c := range key {
		if c.IsNull(i) {
			return n
		}
	}
	return -1
}

// keyColumns picks the key columns of a batch's stored columns.
func (s *State) keyColumns(stored []*domain.Column) []*domain.Column {
	out := make([]*domain.Column, len(s.keyIdx))
	for n, j := range s.keyIdx {
		out[n] = stored[j]
	}
	return out
}

// keyValues returns row i's key values.
func keyValues(key []*domain.Column, i int) []domain.Value {
	out := make([]domain.Value, len(key))
	for n, c := range key {
		out[n] = own(c.Value(i))
	}
	return out
}

// own returns v with its text copied: the strings of a decoded batch share
// the batch's payload, which the state must not keep alive (it would grow
// with every batch folded, not with the keys).
func own(v domain.Value) domain.Value {
	switch v.Kind() {
	case domain.KindString:
		return domain.String(strings.Clone(v.AsString()))
	case domain.KindBytes:
		return domain.Bytes(v.AsBytes())
	case domain.KindDecimal:
		return domain.Decimal(v.AsDecimal(), v.Precision(), v.Scale()) // its high bits, if any, anew
	case domain.KindList, domain.KindStruct, domain.KindMap:
		items := make([]domain.Value, len(v.AsList()))
		for i, x := range v.AsList() {
			items[i] = own(x)
		}
		switch v.Kind() {
		case domain.KindList:
			return domain.List(items...)
		case domain.KindStruct:
			return domain.Struct(items...)
		}
		return domain.Map(items...)
	}
	return v
}

func rowsEqual(a, b []domain.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// gcMeasure is where a tombstone stands for collection: its sequence in
// microseconds when the sequence is a time, else its commit time.
func (s *State) gcMeasure(seq domain.Value, now time.Time) int64 {
	switch seq.Kind() {
	case domain.KindTimestamp:
		return seq.AsInt()
	case domain.KindDate:
		return seq.AsInt() * 86_400_000_000
	}
	return now.UnixMicro()
}

// collect forgets the tombstones past the threshold: by the greatest
// sequence recorded when the sequence is a time, else by now.
func (s *State) collect(now time.Time) error {
	if len(s.tombs) == 0 {
		return nil
	}
	limit := s.gcMeasure(s.maxSeq, now) - s.info.TombstoneGCSeconds*1_000_000
	for len(s.tombs) > 0 && s.tombs[0].at < limit {
		t := heap.Pop(&s.tombs).(tomb)
		e := s.one[t.id]
		if e == nil && s.spilled > 0 {
			var err error
			if e, err = s.thawEntry(orderKey(s.keyOf(t.id))); err != nil {
				return err
			}
		}
		if e != nil && e.row == "" && e.gcAt == t.at {
			s.sum -= e.hash
			delete(s.one, t.id)
		}
	}
	return nil
}

type tomb struct {
	at int64
	id string
}

type tombHeap []tomb

func (h tombHeap) Len() int           { return len(h) }
func (h tombHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h tombHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *tombHeap) Push(x any)        { *h = append(*h, x.(tomb)) }
func (h *tombHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// noteSeq keeps the greatest recorded sequence.
func (s *State) noteSeq(seq domain.Value) {
	if s.maxSeq.IsNull() || domain.Compare(seq, s.maxSeq) > 0 {
		s.maxSeq = own(seq) // it may be a batch's
	}
}
