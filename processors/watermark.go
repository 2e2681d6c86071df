package processors

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sql"
)

// streamState is what a flow whose stream has a watermark keeps between
// micro-batches: the watermark, and (when it deduplicates) the identities
// of the rows it kept, each with when it expires. It is the fold of the
// flow's stream_state events (loadStreamState), from the latest snapshot
// on. A micro-batch adds the identities it keeps as it reads them (apply)
// and moves the watermark on when it commits (advance); if it does not
// commit, the flow drops the state and folds the log again.
type streamState struct {
	gen       int64
	watermark int64 // microseconds; noWatermark before any event time was read
	seen      *identities
	// recorded counts the identities recorded since the latest snapshot,
	// or, for those recorded as rows, the rows a fold reads to make them:
	// a commit records a snapshot too once they reach snapshotEvery times
	// the state's size (see wantsSnapshot).
	recorded int
	scratch  applyScratch
	// parts is the snapshot being folded from its parts, nil when none is
	// (see foldPart).
	parts *snapshotParts
	// get reads an event of the log, for a fold of the identities of rows
	// a stream_state event selects (domain.IdentityRows).
	get func(seq uint64) (*domain.Event, error)
}

// snapshotParts is a snapshot recorded in parts, being folded: the state
// its parts so far built, the micro-batch whose snapshot it is, the seq
// of its first part and the number of the part it takes next.
type snapshotParts struct {
	state *streamState
	batch int64
	first uint64
	next  int
}

// A snapshot is recorded once the identities recorded since the last one
// (counting, for those recorded as rows, the rows a fold reads) reach
// snapshotEvery times the state's size, and snapshotMinRows at least:
// snapshots then add at most an eighth to what the state events write,
// and a restart folds at most nine times the state, however long the
// flow's history.
const (
	snapshotEvery   = 8
	snapshotMinRows = 4096
)

// snapshotPartBytes bounds what one snapshot event holds, as the most its
// identities may take encoded (identityBytes), and half what the store
// takes in one event at most. A larger state is recorded in parts, so that
// no event outgrows the store, and a state spilled to disk is read from
// its runs part by part, never in memory whole. (A variable, so that tests
// make states of many parts.)
var snapshotPartBytes = 16 << 20

// identityBytes is the most an identity takes in a stream_state event's
// data: its bytes, their length and its expiry, each a varint.
func identityBytes(identity []byte) int { return len(identity) + 2*binary.MaxVarintLen64 }

// applyScratch is apply's room, kept from one micro-batch to the next, so
// that each does not take (and clear) megabytes of fresh memory: nothing
// holds it past the micro-batch's commit (its identities are encoded
// then), and the next micro-batch is applied after that commit.
type applyScratch struct {
	keep, keptEnds, remembered []int
	kept                       []byte
	exps                       []int64
}

const noWatermark = math.MinInt64

// pendingState is a micro-batch's change to its flow's stream state.
type pendingState struct {
	watermark  int64         // the watermark after the micro-batch
	identities *domain.Batch // identity, expires: the identities it began to remember
	// or, when those are of rows the flow read from a table, the rows
	// (see domain.IdentityRows)
	rows       *domain.Selection
	rowsOf     *domain.IdentityRows
	late, dups int64
}

// stateSchema is the schema of a stream_state event's data.
var stateSchema = domain.NewSchema(
	domain.Field{Name: "identity", Type: domain.Type{Kind: domain.KindBytes}},
	domain.Field{Name: "expires", Type: domain.Type{Kind: domain.KindTimestamp}})

// loadStreamState folds a flow's stream_state events of checkpoint
// generation gen from seq from on: its latest snapshot, when it has one
// (eventstore.Checkpoint.StreamStateFrom).
// The state keeps its identities in memory up to budget bytes
// (Options.StateMemory: DefaultStateMemory when 0, every identity when
// negative), and moves the older ones to disk past it; close removes them.
func loadStreamState(ctx context.Context, store *eventstore.Store, flow string, gen int64, from uint64, budget int64) (*streamState, error) {
	s := newStreamState(gen, budget)
	s.get = store.Get
	err := store.Scan(ctx, eventstore.Filter{Flow: flow, Types: []domain.EventType{domain.EventStreamState}, From: from}, func(ev *domain.Event) error {
		if st := ev.Details.StreamState; st != nil && st.Generation == gen {
			return s.fold(ev)
		}
		return nil
	})
	if err == nil {
		// the parts of a micro-batch that did not commit, at the end of
		// the log: its retry records them anew
		err = s.dropParts()
	}
	if err != nil {
		_ = s.close()
		return nil, err
	}
	return s, nil
}

// newStreamState is the empty state of generation gen, budget bytes of
// identities in memory as Options.StateMemory says.
func newStreamState(gen int64, budget int64) *streamState {
	switch {
	case budget == 0:
		budget = DefaultStateMemory
	case budget < 0:
		budget = 0 // no end
	}
	return &streamState{gen: gen, watermark: noWatermark, seen: newIdentities(budget)}
}

// close removes the identities the state, or a snapshot being folded
// from its parts, moved to disk, if any.
func (s *streamState) close() error {
	return errors.Join(s.dropParts(), s.seen.close())
}

// dropParts lets go of the snapshot being folded from its parts, if any.
func (s *streamState) dropParts() error {
	if s.parts == nil {
		return nil
	}
	err := s.parts.state.close()
	s.parts = nil
	return err
}

// fold applies a stream_state event: the identities its micro-batch began
// to remember, then its watermark; or a snapshot, which the state starts
// again from (once its last part is folded, when it is in parts).
func (s *streamState) fold(ev *domain.Event) error {
	st := ev.Details.StreamState
	if r := st.IdentitiesRemoved; r != nil {
		return domain.Errorf(domain.CodeRowsVacuumed, "the identities of flow %q's stream state at event %d were removed by vacuum at %s (retention %s): a later snapshot holds the state",
			st.Flow, ev.Seq, r.At.Format(time.RFC3339), r.Retention).WithNames(st.Flow)
	}
	if st.SnapshotPart > 0 {
		snap, err := s.foldPart(ev)
		if err != nil || snap == nil {
			return err
		}
		if err := snap.seen.failed(); err != nil {
			_ = snap.close()
			return err
		}
		if err := s.seen.close(); err != nil {
			_ = snap.close()
			return err
		}
		s.seen, s.recorded = snap.seen, 0
		s.advance(&pendingState{watermark: snap.watermark})
		return s.seen.failed()
	}
	if s.parts != nil && st.BatchID != s.parts.batch {
		// the parts of a micro-batch that did not commit
		if err := s.dropParts(); err != nil {
			return err
		}
	}
	p := &pendingState{watermark: noWatermark}
	if st.Watermark != nil {
		p.watermark = st.Watermark.UnixMicro()
	}
	if st.Snapshot {
		// The snapshot is the whole state: folded over the state before,
		// each identity would be remembered anew, its old entry left dead
		// in the queue with an expiry the watermark has not passed, to hold
		// back the forgetting of those behind it (see identities.each).
		if err := s.seen.close(); err != nil {
			return err
		}
		s.seen, s.recorded = newIdentities(s.seen.budget), 0
	}
	n, err := s.remember(ev)
	if err != nil {
		return err
	}
	if !st.Snapshot {
		s.recorded += n
	}
	s.advance(p)
	return s.seen.failed()
}

// foldPart folds a part of a snapshot recorded in parts into the snapshot
// it builds, and returns that snapshot, a state of its own, once its last
// part is folded. A part that goes on with no snapshot being built is
// passed over: a part of a micro-batch that did not commit, whose retry
// recorded its parts anew from the first. A last part is committed only
// after every part before it: one that ends no snapshot being built is
// STORE_CORRUPT, errPartsMissing (which replay passes over where vacuum
// cut the parts before it).
func (s *streamState) foldPart(ev *domain.Event) (*streamState, error) {
	st := ev.Details.StreamState
	if st.SnapshotPart == 1 {
		if err := s.dropParts(); err != nil {
			return nil, err
		}
		s.parts = &snapshotParts{state: &streamState{gen: s.gen, watermark: noWatermark, seen: newIdentities(s.seen.budget), get: s.get}, batch: st.BatchID, first: ev.Seq, next: 1}
	}
	p := s.parts
	if p == nil || st.BatchID != p.batch || st.SnapshotPart != p.next {
		if st.SnapshotFrom != 0 {
			return nil, domain.Wrap(domain.CodeStoreCorrupt, errPartsMissing, fmt.Sprintf("flow %q's snapshot in parts ending at event %d (part %d, the first at event %d)", st.Flow, ev.Seq, st.SnapshotPart, st.SnapshotFrom)).
				WithHint("the log and the state it records disagree: report it, with the storage directory")
		}
		return nil, nil
	}
	if _, err := p.state.remember(ev); err != nil {
		return nil, err
	}
	p.next++
	if st.SnapshotFrom == 0 { // not the last
		p.state.seen.spillIfOver()
		return nil, p.state.seen.failed()
	}
	if st.SnapshotFrom != p.first {
		return nil, domain.Errorf(domain.CodeStoreCorrupt, "the last part of flow %q's snapshot at event %d names its first part at event %d, but the parts before it begin at event %d",
			st.Flow, ev.Seq, st.SnapshotFrom, p.first).WithHint("the log and the state it records disagree: report it, with the storage directory")
	}
	s.parts = nil
	if st.Watermark != nil {
		p.state.advance(&pendingState{watermark: st.Watermark.UnixMicro()})
	}
	return p.state, nil
}

// errPartsMissing is a last part of a snapshot whose parts before it were
// not all folded, in order.
var errPartsMissing = errors.New("the parts before its last are not all in the log, in order")

// remember remembers the identities a stream_state event holds, in its
// order, and returns what they count toward the next snapshot: how many,
// or, for identities of rows, the rows a fold reads to make them.
func (s *streamState) remember(ev *domain.Event) (int, error) {
	if len(ev.Data) == 0 {
		return 0, nil
	}
	var ids []string
	var exps []int64
	counted := 0
	if of := ev.Details.StreamState.IdentitiesOf; of != nil {
		var err error
		if ids, exps, counted, err = s.identitiesOfRows(ev, of); err != nil {
			return 0, err
		}
	} else {
		b, err := domain.DecodeBatch(ev.Data)
		if err != nil {
			return 0, err
		}
		if !b.Schema.Equal(stateSchema) {
			return 0, domain.Errorf(domain.CodeBatchCodec, "the stream state of flow %q in event %d has the columns %v", ev.Details.StreamState.Flow, ev.Seq, b.Schema.Names())
		}
		ids, exps = b.Columns[0].Strs, b.Columns[1].Ints
		counted = len(ids)
	}
	size := 0
	for _, id := range ids {
		size += len(id)
	}
	s.seen.reserve(len(ids), size)
	var hashes [warmChunk]uint64
	for lo := 0; lo < len(ids); lo += warmChunk { // as apply does (see warm)
		hi := min(lo+warmChunk, len(ids))
		for i := lo; i < hi; i++ {
			hashes[i-lo] = s.seen.hash([]byte(ids[i]))
		}
		for _, h := range hashes[:hi-lo] {
			s.seen.warm(tagOf(h))
		}
		for i := lo; i < hi; i++ {
			s.seen.rememberHashed([]byte(ids[i]), hashes[i-lo], exps[i], math.MaxInt64)
		}
	}
	return counted, nil
}

// identitiesOfRows is the identities, each with when it expires, of the
// rows a stream_state event selects (see domain.IdentityRows), read from
// the stored batches they are rows of, in their order; and how many rows
// those hold.
func (s *streamState) identitiesOfRows(ev *domain.Event, of *domain.IdentityRows) ([]string, []int64, int, error) {
	st := ev.Details.StreamState
	corrupt := func(why string) error {
		return domain.Errorf(domain.CodeStoreCorrupt, "the stream state of flow %q in event %d selects rows of %s %s", st.Flow, ev.Seq, of.Table, why).
			WithHint("the log and the state it records disagree: report it, with the storage directory")
	}
	if s.get == nil {
		return nil, nil, 0, corrupt("with no log to read them from") // a fold without a store: never in sluice's own
	}
	sel, err := domain.DecodeSelection(ev.Data)
	if err != nil {
		return nil, nil, 0, err
	}
	sel.Table = of.Table
	stored := make([]*domain.Batch, len(sel.Batches))
	err = sel.EachSource(ev.Seq, s.get, func(i int, src *domain.Event) error {
		b, err := domain.DecodeBatch(src.Data)
		stored[i] = b
		return err
	})
	if err != nil {
		return nil, nil, 0, domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the stream state of flow %q in event %d", st.Flow, ev.Seq))
	}
	rows, err := sel.Rows(stored)
	if err != nil {
		return nil, nil, 0, err
	}
	cols := make([]*domain.Column, len(of.Columns))
	for k, name := range of.Columns {
		j := rows.Schema.Index(name)
		if j < 0 {
			return nil, nil, 0, corrupt("with no column " + name)
		}
		cols[k] = rows.Columns[j]
	}
	j := rows.Schema.Index(of.EventTime)
	if j < 0 || rows.Columns[j].Kind != domain.KindTimestamp {
		return nil, nil, 0, corrupt("with no TIMESTAMP column " + of.EventTime)
	}
	times := rows.Columns[j]
	var all []byte
	ends := make([]int, rows.Len())
	exps := make([]int64, rows.Len())
	for i := range ends {
		if times.IsNull(i) {
			return nil, nil, 0, corrupt("with no event time in one of them")
		}
		all = sql.AppendRowKey(all, cols, i)
		ends[i], exps[i] = len(all), times.Ints[i]+of.Delay
	}
	return cutStrings(all, ends), exps, sel.Total(), nil
}

// wantsSnapshot reports whether the commit of the micro-batch being
// committed records a snapshot of the state too (see snapshotEvery).
func (s *streamState) wantsSnapshot() bool {
	return s.recorded >= snapshotEvery*max(s.seen.len(), snapshotMinRows)
}

// sameAs reports whether two states are the same: the watermark, and the
// identities in the same order, each expiring when.
func (s *streamState) sameAs(o *streamState) bool {
	if s.watermark != o.watermark || s.seen.len() != o.seen.len() || s.seen.sum != o.seen.sum {
		return false
	}
	type entry struct {
		identity string
		expires  int64
	}
	mine := make([]entry, 0, s.seen.len())
	s.seen.each(func(identity []byte, expires int64) { mine = append(mine, entry{string(identity), expires}) })
	i, same := 0, len(mine) == s.seen.len()
	o.seen.each(func(identity []byte, expires int64) {
		same = same && i < len(mine) && mine[i] == entry{string(identity), expires}
		i++
	})
	return same && i == len(mine) && s.seen.failed() == nil && o.seen.failed() == nil
}

// fingerprint identifies the state: the sum of its identities' hashes,
// with the watermark, after "2-", the version of the identities' hash.
func (s *streamState) fingerprint() string {
	return fmt.Sprintf("2-%016x", s.seen.sum^uint64(s.watermark)*1099511628211)
}

// fingerprintAs is the state's fingerprint in the form of recorded, a
// fingerprint a micro-batch recorded: the one of the stores written
// before the identities' hash changed (16 hexadecimal digits, no version)
// is the sum of their FNV-1a hashes, computed anew over the state, which
// replay alone asks for.
func (s *streamState) fingerprintAs(recorded string) string {
	if strings.HasPrefix(recorded, "2-") {
		return s.fingerprint()
	}
	var sum uint64
	s.seen.each(func(identity []byte, expires int64) { sum += legacyIdentityHash(identity, expires) })
	return fmt.Sprintf("%016x", sum^uint64(s.watermark)*1099511628211)
}

// advance moves the watermark on as a committed micro-batch left it,
// forgetting the identities that expired before it, and moves the older
// identities to disk once they take more memory than their budget. A
// failure of the spill is s.seen.failed().
func (s *streamState) advance(p *pendingState) {
	if p.watermark > s.watermark {
		s.watermark = p.watermark
	}
	s.seen.forgetBefore(s.watermark)
	s.seen.spillIfOver()
}

// apply drops the rows of a micro-batch that are late (an event time before
// the watermark) and, when the watermark deduplicates, those whose identity
// is remembered (or was kept earlier in the batch), remembering the
// identities of the rows it keeps. It returns the rows kept and what the
// micro-batch records: the identities and the watermark its commit sets.
func (s *streamState) apply(b *domain.Batch, w *domain.Watermark) (*domain.Batch, *pendingState, error) {
	times, err := w.EventTime.Eval(b)
	if err != nil {
		return nil, nil, err
	}
	if times.Kind != domain.KindTimestamp && times.Kind != domain.KindNull {
		return nil, nil, domain.Errorf(domain.CodeDatatypeMismatch, "the watermark's event time %s is %s, not a TIMESTAMP", w.Column, times.Kind).
			WithHint("watermark a TIMESTAMP column, or CAST the column to TIMESTAMP in the source")
	}
	var idCols []*domain.Column
	for _, name := range w.DedupOn {
		j := b.Schema.Index(name)
		if j < 0 {
			return nil, nil, domain.Errorf(domain.CodeUnresolvedColumn, "DEDUPLICATE ON names %s, which the stream does not have (it has %v)", name, b.Schema.Names()).WithNames(name)
		}
		idCols = append(idCols, b.Columns[j])
	}
	p := &pendingState{watermark: s.watermark}
	delay := w.Delay.Microseconds()
	sc := &s.scratch
	keep := slices.Grow(sc.keep[:0], b.Len())
	// The identities remembered are recorded as the rows they are of, when
	// the rows are a table's stored rows, the event time one of their
	// columns: a few bits a row rather than each identity and its expiry.
	var byRows *domain.IdentityRows
	remembered := sc.remembered[:0]
	defer func() { sc.remembered = remembered }()
	if sel, ok := b.Selection(); ok && len(idCols) > 0 {
		if j := b.Schema.Index(w.Column); j >= 0 && b.Columns[j] == times {
			byRows = &domain.IdentityRows{Table: sel.Table, Columns: w.DedupOn, EventTime: w.Column, Delay: delay}
		}
	}
	var ids, exps *domain.Column
	if len(idCols) > 0 {
		ids = domain.NewColumn(domain.KindBytes, 0)
		exps = &domain.Column{Kind: domain.KindTimestamp, Ints: slices.Grow(sc.exps[:0], b.Len())}
	}
	// The identities kept, end to end, made into strings at the end in
	// one allocation rather than one a row.
	kept := sc.kept[:0]
	keptEnds := slices.Grow(sc.keptEnds[:0], b.Len())
	defer func() { sc.keep, sc.kept, sc.keptEnds = keep, kept, keptEnds }()
	if exps != nil {
		defer func() { sc.exps = exps.Ints }()
	}
	// Rows go through the state warmChunk at a time: first their
	// identities, each with its index hash, warming the index where it
	// will be looked up; then the lookups.
	var chunk []byte
	var chunkEnds []int
	var hashes []uint64
	for lo := 0; lo < b.Len(); lo += warmChunk {
		hi := min(lo+warmChunk, b.Len())
		if idCols != nil {
			chunk, chunkEnds, hashes = chunk[:0], chunkEnds[:0], hashes[:0]
			for i := lo; i < hi; i++ {
				start := len(chunk)
				chunk = sql.AppendRowKey(chunk, idCols, i)
				chunkEnds, hashes = append(chunkEnds, len(chunk)), append(hashes, s.seen.hash(chunk[start:]))
			}
			for _, h := range hashes { // a tight loop, so that many reads are in flight
				s.seen.warm(tagOf(h))
			}
		}
		for i := lo; i < hi; i++ {
			if times.IsNull(i) {
				keep = append(keep, i) // no event time: neither late nor remembered
				continue
			}
			t := times.Ints[i]
			if s.watermark != noWatermark && t < s.watermark {
				p.late++
				continue
			}
			if t-delay > p.watermark {
				p.watermark = t - delay
			}
			if idCols != nil {
				j, start := i-lo, 0
				if j > 0 {
					start = chunkEnds[j-1]
				}
				key := chunk[start:chunkEnds[j]]
				// An identity whose state expired but is not forgotten yet
				// (it waits behind a later one) is remembered anew.
				if !s.seen.rememberHashed(key, hashes[j], t+delay, s.watermark) {
					p.dups++
					continue
				}
				if byRows != nil {
					remembered = append(remembered, i)
				} else {
					kept = append(kept, key...)
					keptEnds = append(keptEnds, len(kept))
					exps.Ints = append(exps.Ints, t+delay)
				}
			}
			keep = append(keep, i)
		}
	}
	if err := s.seen.failed(); err != nil {
		return nil, nil, err
	}
	if len(remembered) > 0 {
		sel, ok := b.SelectionOf(remembered)
		if !ok {
			return nil, nil, fmt.Errorf("the %d rows remembered are no selection of the stored rows read", len(remembered))
		}
		if 2*sel.Len() >= sel.Total() {
			p.rows, p.rowsOf = &sel, byRows
		} else {
			// A few identities of many rows (most of them duplicates, or
			// late) are written out: a fold would read all the rows for
			// them, and the bitmap take more than they do.
			kept, keptEnds, exps.Ints = kept[:0], keptEnds[:0], exps.Ints[:0]
			for _, i := range remembered {
				kept = sql.AppendRowKey(kept, idCols, i)
				keptEnds = append(keptEnds, len(kept))
				exps.Ints = append(exps.Ints, times.Ints[i]+delay)
			}
		}
	}
	if len(keptEnds) > 0 {
		ids.Strs = cutStrings(kept, keptEnds)
		p.identities, err = domain.BatchOf(stateSchema, []*domain.Column{ids, exps})
		if err != nil {
			return nil, nil, err
		}
	}
	if len(keep) == b.Len() {
		return b, p, nil
	}
	out := b.Select(keep)
	out.Rescued, out.Malformed = b.Rescued, b.Malformed
	return out, p, nil
}

// cutStrings is the strings of all that end at ends, end to end, made in
// one allocation rather than one a string.
func cutStrings(all []byte, ends []int) []string {
	text, start := string(all), 0
	out := make([]string, len(ends))
	for j, end := range ends {
		out[j] = text[start:end]
		start = end
	}
	return out
}

// warmChunk is how many rows' identities are warmed in the dedup state's
// index before they are looked up: enough reads to overlap, few enough
// that the slots they bring stay in the cache.
const warmChunk = 64

// stateEvent records a committed micro-batch's change to the flow's
// stream state.
func (r *flowRun) stateEvent(info domain.BatchInfo, p *pendingState, rowsAfter int) (*domain.Event, error) {
	if err := r.stream.seen.failed(); err != nil { // advance's
		return nil, err
	}
	st := &domain.StreamState{Flow: r.f.Name, BatchID: info.BatchID, Generation: info.Generation,
		NumLateRowsDropped: p.late, NumDuplicatesDropped: p.dups, NumStateRows: int64(rowsAfter), StateFingerprint: r.stream.fingerprint()}
	if p.watermark != noWatermark {
		t := time.UnixMicro(p.watermark).UTC()
		st.Watermark = &t
	}
	ev := r.batchEvent(domain.EventStreamState, info)
	ev.Message = fmt.Sprintf("Flow %q batch %d: %d late rows and %d duplicates dropped; %d identities remembered.", r.f.Name, info.BatchID, p.late, p.dups, rowsAfter)
	if n := r.stream.seen.onDisk; n > 0 {
		ev.Message += fmt.Sprintf(" Past the state's memory budget (state_memory_mib), %d of them are on disk.", n)
	}
	ev.Details.StreamState = st
	switch {
	case p.rows != nil:
		st.IdentitiesOf = p.rowsOf
		ev.Data = domain.EncodeSelection(*p.rows)
		r.stream.recorded += p.rows.Total() // the rows a fold reads
	case p.identities != nil:
		data, err := domain.EncodeBatch(p.identities)
		if err != nil {
			return nil, err
		}
		ev.Data = data
		r.stream.recorded += p.identities.Len()
	}
	return ev, nil
}

// snapshotEvent records a snapshot of the flow's stream state after the
// micro-batch being committed (see domain.StreamState), and returns the
// event its commit holds: the snapshot, or the last of its parts when the
// state takes more than snapshotPartBytes, each part before it committed
// on its own here, as it is read from the state (from disk first, when
// the state spilled).
func (r *flowRun) snapshotEvent(ctx context.Context, info domain.BatchInfo, prev *domain.Event) (*domain.Event, error) {
	var (
		all   []byte // the part's identities end to end
		ends  []int
		exps  []int64
		size  int    // the most they take encoded
		part  int    // the parts committed
		first uint64 // the seq of the first
		err   error
	)
	limit := min(snapshotPartBytes, int(r.u.store.MaxEventBytes()/2))
	event := func(n int) (*domain.Event, error) {
		ids := &domain.Column{Kind: domain.KindBytes, Strs: cutStrings(all, ends)}
		b, err := domain.BatchOf(stateSchema, []*domain.Column{ids, {Kind: domain.KindTimestamp, Ints: exps}})
		if err != nil {
			return nil, err
		}
		data, err := domain.EncodeBatch(b)
		if err != nil {
			return nil, err
		}
		st := *prev.Details.StreamState
		st.NumLateRowsDropped, st.NumDuplicatesDropped, st.Snapshot, st.IdentitiesOf = 0, 0, true, nil
		ev := r.batchEvent(domain.EventStreamState, info)
		ev.Message = fmt.Sprintf("Flow %q batch %d: a snapshot of the stream state, %d identities remembered.", r.f.Name, info.BatchID, b.Len())
		if n > 0 {
			st.SnapshotPart = n
			ev.Message = fmt.Sprintf("Flow %q batch %d: part %d of a snapshot of the stream state, %d identities.", r.f.Name, info.BatchID, st.SnapshotPart, b.Len())
		}
		ev.Details.StreamState = &st
		ev.Data = data
		all, ends, exps, size = all[:0], ends[:0], exps[:0], 0
		return ev, nil
	}
	r.stream.seen.each(func(identity []byte, expires int64) {
		if err != nil {
			return
		}
		if n := identityBytes(identity); size+n > limit && len(ends) > 0 {
			var ev *domain.Event
			if ev, err = event(part + 1); err != nil {
				return
			}
			ev.Details.StreamState.StateFingerprint = "" // the state's, checked at the last part
			if err = r.u.append(ctx, ev); err != nil {
				return
			}
			if part++; part == 1 {
				first = ev.Seq
			}
		}
		all = append(all, identity...)
		ends = append(ends, len(all))
		exps = append(exps, expires)
		size += identityBytes(identity)
	})
	if err == nil {
		err = r.stream.seen.failed()
	}
	if err != nil {
		return nil, err
	}
	if part > 0 {
		part++
	}
	last, err := event(part)
	if err != nil {
		return nil, err
	}
	if part > 0 {
		st := last.Details.StreamState
		st.SnapshotFrom = first
		last.Message = fmt.Sprintf("Flow %q batch %d: the last part (%d) of a snapshot of the stream state, %d identities remembered.", r.f.Name, info.BatchID, st.SnapshotPart, r.stream.seen.len())
	}
	r.stream.recorded = 0
	return last, nil
}
