package eventstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"github.com/sluicehq/sluice/domain"
)

// appendReq is one Append waiting for the committer.
type appendReq struct {
	events []*domain.Event // the caller's events; Seq, ID, Timestamp are set on them

	// state moves once, from reqQueued to reqTaken (by the committer) or to
	// reqCanceled (by Append, when its context ends or the store closes
	// first). A taken request is always finished; a canceled one never
	// commits.
	state atomic.Int32

	// Set by prepare, once: the encoded events (the log values) and the events
	// decoded back from them, which is what projectors and the bus see, so
	// that a live fold and a replay see the very same events.
	encoded [][]byte
	decoded []*domain.Event
	// buffers are the pooled buffers encoded uses, given back once the
	// request is finished (see getBuffer).
	buffers [][]byte

	seqs []uint64
	err  error
	done chan struct{} // closed by finish
}

const (
	reqQueued int32 = iota
	reqTaken
	reqCanceled
)

func (r *appendReq) finish(seqs []uint64, err error) {
	r.seqs, r.err = seqs, err
	if err != nil {
		for _, ev := range r.events {
			ev.Seq = 0
		}
	}
	close(r.done)
}

// Append commits events atomically and returns their seqs.
//
// One Badger transaction holds the log entries, their index entries and every
// projector's writes for them: after a crash either all of it is there or none
// of it. The events get consecutive seqs, set on their Seq fields and
// returned. Empty IDs are filled with a random UUID (v4) and zero Timestamps
// with the commit time in UTC, on the caller's events. Append returns once the
// transaction committed, synced to disk when sync writes are on (the default);
// LastSeq is then at least the last returned seq.
//
// Concurrent Appends are grouped into one transaction by a single committer
// goroutine (see WithMaxGroup); each Append still succeeds or fails on its
// own. Errors, all *domain.Error:
//   - COMMIT_TOO_LARGE: the events and their projection writes do not fit in
//     one Badger transaction (about 15% of Badger's memtable, 8 MiB unless
//     set with WithMemTableSize, counting log entries under the value
//     threshold in full and larger ones, kept in segment files, by their
//     pointer). An Append is never split: append fewer or smaller events.
//   - a projector's error when a projector refused one of the events: nothing
//     of this Append is committed; other Appends of the group are. The
//     built-in "state" projector refuses, with INVALID_DEFINITION, the
//     checkpoint and table events (batch_planned, batch_committed,
//     sink_batch_delivered, once_flow_drained, checkpoint_reset,
//     checkpoint_imported, table_reset) that lack their details or their
//     flow or table name.
//   - STORE_IO (retriable) when Badger fails, with a hint about disk space
//     when the disk is full; nothing of the Append is committed. The store
//     then refuses every later Append with STORE_IO until it is closed and
//     opened again: Badger may have applied part of the failed transaction
//     in memory, and only reading the files again tells what is durable.
//   - STORE_IO (retriable) when committing the Append would leave less free
//     disk space than the store's reserve (see WithMinFreeBytes); nothing of
//     the Append is written. Appends succeed again once space is freed.
//   - STORE_CLOSED when the store is closed or closes before the Append is
//     taken by the committer.
//   - INVALID_DEFINITION / INVALID_IDENTIFIER for a nil event, an event
//     without event_type, or names that cannot be indexed (NUL bytes, over
//     4096 bytes), checked before anything is queued.
//
// If ctx ends before the committer takes the Append, Append returns ctx.Err()
// and nothing is committed; once taken, Append waits for the outcome, so a
// nil error always means committed and a non-nil one means not committed.
// On error the events' Seq fields are reset to 0 (filled IDs and Timestamps
// stay, so a retry keeps them). The events must not be modified while Append
// runs. Appending no events commits nothing and returns (nil, nil).
func (s *Store) Append(ctx context.Context, events ...*domain.Event) ([]uint64, error) {
	if s.cfg.readOnly {
		return nil, domain.Errorf(domain.CodeStoreIO, "the event store in %s is open read-only; Append is not possible", s.dir).
			WithHint("open the store without WithReadOnly to append")
	}
	if err := checkEvents(events); err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, nil
	}
	if err := s.brokenErr(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, errClosed()
	}
	r := &appendReq{events: events, done: make(chan struct{})}
	select {
	case s.reqs <- r:
	case <-s.closing:
		return nil, errClosed()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqQueued, reqCanceled) {
			return nil, ctx.Err()
		}
		<-r.done
	case <-s.committerDone:
		// The committer stopped; it may have left r in the channel.
		if r.state.CompareAndSwap(reqQueued, reqCanceled) {
			return nil, errClosed()
		}
		<-r.done
	}
	return r.seqs, r.err
}

// brokenErr is the error of every Append after a commit failed (see
// commitGroup), nil while commits succeed.
func (s *Store) brokenErr() error {
	cause := s.broken.Load()
	if cause == nil {
		return nil
	}
	return domain.Wrap(domain.CodeStoreIO, *cause, "a commit to the event store in "+s.dir+" failed earlier, so it takes no more writes").
		WithHint("close the store and open it again (run the pipeline again): opening reads what was committed from the files").
		AsRetriable()
}

// checkEvents refuses events that cannot be stored, before they are queued.
func checkEvents(events []*domain.Event) error {
	for i, ev := range events {
		if ev == nil {
			return domain.Errorf(domain.CodeInvalidDefinition, "event %d of %d is nil", i+1, len(events)).
				WithHint("pass only non-nil events to Append")
		}
		if ev.Type == "" {
			return domain.Errorf(domain.CodeInvalidDefinition, "event %d of %d has no event_type", i+1, len(events)).
				WithHint("set Type on every event; see domain.EventTypes")
		}
		for _, f := range [...]struct{ what, v string }{
			{"event_type", string(ev.Type)},
			{"origin.flow_name", ev.Origin.FlowName},
			{"origin.dataset_name", ev.Origin.DatasetName},
			{"origin.update_id", ev.Origin.UpdateID},
		} {
			if why := validName(f.v); why != "" {
				return domain.Errorf(domain.CodeInvalidName, "event %d of %d: %s %s", i+1, len(events), f.what, why).
					WithNames(f.v)
			}
		}
	}
	return nil
}

// Get returns the committed event with the given seq. A seq outside 1..LastSeq
// is an EVENT_NOT_FOUND error; a missing entry inside that range means the
// store is damaged (EVENT_CODEC_INVALID).
func (s *Store) Get(seq uint64) (*domain.Event, error) {
	if last := s.LastSeq(); seq == 0 || seq > last {
		return nil, errNotFound(seq, last)
	}
	var ev *domain.Event
	err := s.view("reading an event", func(txn *badger.Txn) error {
		var err error
		ev, err = s.readEvent(txn, seq)
		return err
	})
	return ev, err
}

// readEvent reads the committed event seq in txn; a missing one means the
// store is damaged.
func (s *Store) readEvent(txn *badger.Txn, seq uint64) (*domain.Event, error) {
	item, err := txn.Get(logKey(seq))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, missingEvents(seq, seq)
	}
	if err != nil {
		return nil, err
	}
	var ev *domain.Event
	err = item.Value(func(v []byte) error {
		var derr error
		ev, derr = s.segs.decode(seq, copyBytes(v))
		return derr
	})
	return ev, err
}

func errNotFound(seq, last uint64) error {
	e := domain.Errorf(domain.CodeEventNotFound, "there is no event %d: the log holds seqs 1 to %d", seq, last)
	if last == 0 {
		e.Message = fmt.Sprintf("there is no event %d: the log is empty", seq)
	}
	return e.WithHint("seqs start at 1 and end at the store's last seq")
}

// runCommitter is the committer goroutine: it takes queued Appends, groups up
// to maxGroup of them and commits them, until the store closes.
func (s *Store) runCommitter() {
	defer close(s.committerDone)
	group := make([]*appendReq, 0, s.cfg.maxGroup)
	for {
		var first *appendReq
		select {
		case first = <-s.reqs:
		case <-s.closing:
			s.failQueued()
			return
		}
		s.received.Add(1)
		s.commitMu.Lock()
		group = group[:0]
		if s.take(first) {
			group = append(group, first)
		}
	fill:
		for len(group) < s.cfg.maxGroup {
			select {
			case r := <-s.reqs:
				if s.take(r) {
					group = append(group, r)
				}
			default:
				break fill
			}
		}
		if n := s.admit(group); n > 0 {
			s.commitGroup(group[:n])
		}
		s.commitMu.Unlock()
		for _, r := range group { // every one finished: nothing reads its buffers again
			for _, b := range r.buffers {
				putBuffer(b)
			}
			r.buffers = nil
		}
		clear(group)
	}
}

// admit asks the free-space guard for the Appends of a group, in order, and
// returns how many of them it admitted; it fails the rest with the guard's
// error (see WithMinFreeBytes).
func (s *Store) admit(group []*appendReq) int {
	needs := make([]int64, len(group))
	for i, r := range group {
		needs[i] = appendBytes(r)
	}
	n, err := s.space.admit(needs...)
	if err == nil {
		return n
	}
	var de *domain.Error
	for _, r := range group[n:] {
		if errors.As(err, &de) {
			cp := *de // one error per Append: callers may adjust theirs
			r.finish(nil, &cp)
		} else {
			r.finish(nil, err)
		}
	}
	return n
}

// failQueued fails the Appends still queued when the store closes.
func (s *Store) failQueued() {
	for {
		select {
		case r := <-s.reqs:
			if r.state.CompareAndSwap(reqQueued, reqTaken) {
				r.finish(nil, errClosed())
			}
		default:
			return
		}
	}
}

// take claims r for the committer and prepares it; it reports whether r is to
// be committed (false when its Append gave up, or preparing failed, in which
// case r is finished).
func (s *Store) take(r *appendReq) bool {
	if !r.state.CompareAndSwap(reqQueued, reqTaken) {
		return false
	}
	if err := s.brokenErr(); err != nil {
		r.finish(nil, err)
		return false
	}
	if err := s.prepare(r); err != nil {
		r.finish(nil, err)
		return false
	}
	return true
}

// MaxEventBytes is the most bytes an event may take as stored (encoded,
// and compressed when that is smaller): an Append of a larger one is
// COMMIT_TOO_LARGE.
func (s *Store) MaxEventBytes() int64 { return s.db.Opts().ValueLogFileSize - 1 }

// prepare fills IDs and timestamps, encodes the events and decodes them back.
func (s *Store) prepare(r *appendReq) error {
	now := time.Now().UTC()
	maxValue := s.MaxEventBytes() + 1
	r.encoded = make([][]byte, len(r.events))
	r.decoded = make([]*domain.Event, len(r.events))
	for i, ev := range r.events {
		if ev.ID == "" {
			ev.ID = uuid.NewString()
		}
		if ev.Timestamp.IsZero() {
			ev.Timestamp = now
		}
		p, err := domain.EncodeEventInto(getBuffer(), ev)
		if err != nil {
			return err
		}
		c := getBuffer()
		entry := entryOf(c, p)
		if compressed(entry) { // in c's space (grown, maybe), not p
			c = entry
		}
		r.buffers = append(r.buffers, p, c)
		if int64(len(entry)) >= maxValue {
			return domain.Errorf(domain.CodeTxnTooLarge, "event %d of %d (%s) is %d bytes encoded; the store takes at most %d bytes per event",
				i+1, len(r.events), ev.Type, len(entry), maxValue-1)
		}
		d, err := domain.DecodeEventShared(0, p)
		if err != nil {
			return err
		}
		// p goes back to the pool when the request is finished; the rows
		// the projectors see are the caller's own, the same bytes.
		d.Data = ev.Data
		r.encoded[i], r.decoded[i] = entry, d
	}
	return nil
}

// commitGroup commits a group of prepared Appends, finishing every one.
//
// It tries the whole group in one transaction. When the transaction grows
// past Badger's limit while writing Append i, it commits Appends 0..i-1 in a
// transaction of their own and goes on with the rest; an Append that
// overflows an empty transaction is refused with COMMIT_TOO_LARGE. When a
// projector refuses an event of Append i, Append i fails and the group is
// tried again without it. Every try starts from a fresh transaction, reruns
// the projectors from scratch (they read state) and assigns seqs anew.
func (s *Store) commitGroup(reqs []*appendReq) {
	for len(reqs) > 0 {
		o := s.tryCommit(reqs)
		switch o.kind {
		case outcomeCommitted:
			return
		case outcomeTooBig:
			if o.idx == 0 {
				reqs[0].finish(nil, s.tooLarge(reqs[0], o.err))
				reqs = reqs[1:]
				continue
			}
			s.commitGroup(reqs[:o.idx])
			reqs = reqs[o.idx:]
		case outcomeReqFailed:
			reqs[o.idx].finish(nil, o.err)
			rest := make([]*appendReq, 0, len(reqs)-1)
			rest = append(rest, reqs[:o.idx]...)
			reqs = append(rest, reqs[o.idx+1:]...)
		case outcomeGroupFailed:
			for _, r := range reqs {
				r.finish(nil, o.err)
			}
			// Badger may have applied part of the transaction in memory before
			// failing: what is durable is known only by reading the files
			// again. Until the store is reopened, nothing more is written
			// over a state that may not be what LastSeq says.
			s.broken.Store(&o.err)
			s.log.Error().Err(o.err).Int("appends", len(reqs)).Msg("commit failed; the store takes no more writes until it is reopened")
			return
		}
	}
}

type outcomeKind int

const (
	outcomeCommitted   outcomeKind = iota
	outcomeTooBig                  // the transaction overflowed while writing Append idx
	outcomeReqFailed               // Append idx failed on its own (a projector refused it)
	outcomeGroupFailed             // Badger failed; nothing committed
)

type outcome struct {
	kind outcomeKind
	idx  int
	err  error
}

// tryCommit writes reqs into one transaction and commits it; on success it
// finishes every request, advances LastSeq and queues the events for the bus.
func (s *Store) tryCommit(reqs []*appendReq) outcome {
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	kv := &txnKV{txn: txn}
	first := s.LastSeq() + 1
	seq := first
	// A try that does not commit takes back the segment records it wrote.
	mark := s.segs.mark()
	for i, r := range reqs {
		for j, ev := range r.decoded {
			ev.Seq = seq
			stored, err := s.segs.stored(seq, r.encoded[j])
			if err != nil {
				return outcome{kind: outcomeGroupFailed, err: err}
			}
			if err := s.applyEvent(kv, ev, stored, true); err != nil {
				switch {
				case errors.Is(err, badger.ErrTxnTooBig):
					s.segs.rewind(mark)
					return outcome{kind: outcomeTooBig, idx: i, err: err}
				case kv.err != nil:
					return outcome{kind: outcomeGroupFailed, err: storeIO(err, "writing to the event store in "+s.dir)}
				default:
					s.segs.rewind(mark)
					return outcome{kind: outcomeReqFailed, idx: i, err: describeProjectorError(err, j, len(r.decoded))}
				}
			}
			seq++
		}
	}
	if s.cfg.syncWrites {
		// The records the transaction points to are durable before it is.
		if err := s.segs.sync(); err != nil {
			return outcome{kind: outcomeGroupFailed, err: err}
		}
	}
	err := txn.Commit()
	if err == nil && s.cfg.commitFault != nil {
		err = s.cfg.commitFault() // tests: the transaction committed, yet the commit reports a failure
	}
	if err != nil {
		if errors.Is(err, badger.ErrTxnTooBig) && len(reqs) > 0 {
			s.segs.rewind(mark)
			return outcome{kind: outcomeTooBig, idx: len(reqs) - 1, err: err}
		}
		return outcome{kind: outcomeGroupFailed, err: storeIO(err, "committing to the event store in "+s.dir)}
	}

	s.commits.Add(1)
	committed := make([]*domain.Event, 0, seq-first)
	seq = first
	for _, r := range reqs {
		r.seqs = make([]uint64, len(r.events))
		for j, ev := range r.events {
			ev.Seq = seq
			r.seqs[j] = seq
			d := r.decoded[j]
			d.Data = nil // the bus does not carry bulk data
			committed = append(committed, d)
			seq++
		}
	}
	// Readers see the new last seq before the bus delivers its events: a
	// subscriber may Get what it was told of.
	s.advance(seq - 1)
	s.queue.push(committed)
	if s.cfg.syncWrites {
		// With sync writes off, a machine crash can lose these commits, so
		// the marker takes the last seq only at Close.
		if err := s.marker.record(seq - 1); err != nil {
			s.log.Warn().Err(err).Msg("recording the last seq in " + markerName)
		}
	}
	for _, r := range reqs {
		for _, p := range r.encoded {
			s.unreleased += int64(len(p))
		}
	}
	if s.unreleased >= releaseEvery {
		releaseMappedLogs(s.absDir)
		s.unreleased = 0
	}
	for _, r := range reqs {
		r.finish(r.seqs, nil)
	}
	return outcome{kind: outcomeCommitted}
}

// describeProjectorError says which event of the Append a projector refused.
func describeProjectorError(err error, i, n int) error {
	var de *domain.Error
	if errors.As(err, &de) {
		return &domain.Error{
			Code: de.Code, Message: fmt.Sprintf("event %d of %d: %s", i+1, n, de.Message),
			Hint: de.Hint, Names: de.Names, Retriable: de.Retriable, Cause: de.Cause,
		}
	}
	return fmt.Errorf("event %d of %d: %w", i+1, n, err)
}

func (s *Store) tooLarge(r *appendReq, cause error) error {
	size := 0
	for _, p := range r.encoded {
		size += len(p)
	}
	return domain.Wrap(domain.CodeTxnTooLarge, cause, fmt.Sprintf(
		"an Append of %d events (%d bytes encoded, with its index and projection writes) does not fit in one store transaction (at most about %d bytes or %d entries)",
		len(r.events), size, s.db.MaxBatchSize(), s.db.MaxBatchCount()))
}

// applyEvent writes one event into kv: its log entry, stored (when writeLog), its
// index entries, and every projector's writes. A Badger failure is returned
// as is and recorded in the kv; a projector's failure is returned as a
// *domain.Error naming the projector.
func (s *Store) applyEvent(kv kvStore, ev *domain.Event, stored []byte, writeLog bool) error {
	if writeLog {
		if err := kv.set(logKey(ev.Seq), stored); err != nil {
			return err
		}
	}
	for _, ix := range indexEntries(ev) {
		if err := kv.set(indexKey(ix.kind, ix.name, ev.Seq), nil); err != nil {
			return err
		}
	}
	for _, p := range s.projectors {
		w := projectionWriter{kv: kv, prefix: projectionPrefix(p.Name())}
		err := p.Apply(w, ev)
		if kerr := kv.failure(); kerr != nil {
			return kerr
		}
		if err != nil {
			return projectorError(p.Name(), ev, err)
		}
	}
	return nil
}

type indexEntry struct {
	kind byte
	name string
}

// indexEntries lists the index entries of ev: always its type, and its flow,
// dataset and update when set.
func indexEntries(ev *domain.Event) []indexEntry {
	out := make([]indexEntry, 0, 4)
	out = append(out, indexEntry{indexType, string(ev.Type)})
	if o := ev.Origin; o.FlowName != "" {
		out = append(out, indexEntry{indexFlow, o.FlowName})
	}
	if o := ev.Origin; o.DatasetName != "" {
		out = append(out, indexEntry{indexDataset, o.DatasetName})
	}
	if o := ev.Origin; o.UpdateID != "" {
		out = append(out, indexEntry{indexUpdate, o.UpdateID})
	}
	return out
}

func copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out
}
