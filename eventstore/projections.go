package eventstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// A Projector folds events into keyed state, stored beside the log under its
// own key space and written in the same transaction as the events.
//
// Apply is called for every committed event, in seq order, with ev.Seq set;
// ev is the event as it reads back from the log (with its Data), and Apply
// must not modify it. Apply must be deterministic and depend only on the
// event and on what it reads through w: dropping the projections and
// replaying the log (RebuildProjections) must give byte-equal state, which
// VerifyProjections checks. No clocks, no randomness, no map iteration order,
// no state kept outside w.
//
// An error from Apply refuses the event: the whole Append it belongs to fails
// and nothing of it is committed. Return a *domain.Error to choose the code
// the caller sees. The same error on replay (the projector changed since the
// event committed) fails RebuildProjections.
type Projector interface {
	// Name is the projector's key space; unique, non-empty, without NUL bytes.
	// Changing it orphans the stored state (rebuild the projections).
	Name() string
	Apply(w ProjectionWriter, ev *domain.Event) error
}

// ProjectionWriter is a projector's view of its own keys during Apply. Keys
// are the projector's own: the store prefixes them with the projector's name.
// Get sees the writes made earlier in the same transaction, by this event or
// by earlier events of the same commit. Slices passed to Set are copied;
// slices returned by Get belong to the caller.
type ProjectionWriter interface {
	Get(key []byte) (value []byte, found bool, err error)
	Set(key, value []byte) error
	Delete(key []byte) error
}

// checkProjectors validates the configured projectors and returns the full
// list, "state" first.
func checkProjectors(extra []Projector) ([]Projector, error) {
	all := make([]Projector, 0, 1+len(extra))
	all = append(all, stateProjector{})
	seen := map[string]bool{stateProjectorName: true}
	for i, p := range extra {
		if p == nil {
			return nil, domain.Errorf(domain.CodeInvalidDefinition, "projector %d passed to WithProjectors is nil", i+1)
		}
		name := p.Name()
		switch why := validName(name); {
		case name == "":
			return nil, domain.Errorf(domain.CodeInvalidName, "projector %d has an empty name", i+1)
		case why != "":
			return nil, domain.Errorf(domain.CodeInvalidName, "projector name %q %s", name, why).WithNames(name)
		case seen[name]:
			return nil, domain.Errorf(domain.CodeDuplicateIdentifiers, "two projectors are named %q", name).WithNames(name).
				WithHint(`give every projector its own name; "state" is the store's own`)
		}
		seen[name] = true
		all = append(all, p)
	}
	return all, nil
}

// projectorError names the projector and event in a projector's error,
// keeping a *domain.Error's code.
func projectorError(name string, ev *domain.Event, err error) error {
	ctx := fmt.Sprintf("projector %q refused a %s event", name, ev.Type)
	var de *domain.Error
	if errors.As(err, &de) {
		return &domain.Error{Code: de.Code, Message: ctx + ": " + de.Message, Hint: de.Hint, Names: de.Names, Retriable: de.Retriable, Cause: err}
	}
	return domain.Wrap(domain.CodeInvalidUpdateState, err, ctx).
		WithHint("the projector found the event inconsistent with its state; see the cause")
}

// kvStore is where applyEvent writes: a Badger transaction, or a map for
// VerifyProjections. Keys are full keys. Errors are sticky: after the first,
// failure returns it.
type kvStore interface {
	get(key []byte) ([]byte, bool, error)
	set(key, value []byte) error
	del(key []byte) error
	failure() error
}

// txnKV is a kvStore over a read-write Badger transaction.
type txnKV struct {
	txn *badger.Txn
	err error
}

func (t *txnKV) fail(err error) error {
	if t.err == nil {
		t.err = err
	}
	return err
}

func (t *txnKV) failure() error { return t.err }

func (t *txnKV) get(key []byte) ([]byte, bool, error) {
	item, err := t.txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, t.fail(err)
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return nil, false, t.fail(err)
	}
	return v, true, nil
}

func (t *txnKV) set(key, value []byte) error {
	if err := t.txn.Set(key, value); err != nil {
		return t.fail(err)
	}
	return nil
}

func (t *txnKV) del(key []byte) error {
	if err := t.txn.Delete(key); err != nil {
		return t.fail(err)
	}
	return nil
}

// memKV is a kvStore in memory.
type memKV map[string][]byte

func (m memKV) get(key []byte) ([]byte, bool, error) {
	v, ok := m[string(key)]
	return copyBytes(v), ok, nil
}
func (m memKV) set(key, value []byte) error {
	m[string(key)] = append([]byte{}, value...)
	return nil
}
func (m memKV) del(key []byte) error { delete(m, string(key)); return nil }
func (m memKV) failure() error       { return nil }

// projectionWriter is the ProjectionWriter handed to a projector.
type projectionWriter struct {
	kv     kvStore
	prefix []byte
}

func (w projectionWriter) key(k []byte) []byte {
	out := make([]byte, len(w.prefix)+len(k))
	copy(out, w.prefix)
	copy(out[len(w.prefix):], k)
	return out
}

func (w projectionWriter) Get(key []byte) ([]byte, bool, error) {
	v, ok, err := w.kv.get(w.key(key))
	if err != nil {
		return nil, false, storeIO(err, "reading projection key "+printable(key))
	}
	return v, ok, nil
}

func (w projectionWriter) Set(key, value []byte) error {
	if err := w.kv.set(w.key(key), copyBytes(nonNil(value))); err != nil {
		return storeIO(err, "writing projection key "+printable(key))
	}
	return nil
}

func (w projectionWriter) Delete(key []byte) error {
	if err := w.kv.del(w.key(key)); err != nil {
		return storeIO(err, "deleting projection key "+printable(key))
	}
	return nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Projection returns the value of one key of a projector's state, as
// committed. found is false when the key is not set.
func (s *Store) Projection(projector string, key []byte) (value []byte, found bool, err error) {
	err = s.view("reading a projection", func(txn *badger.Txn) error {
		item, err := txn.Get(projectionKey(projector, key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		value, err = item.ValueCopy(nil)
		found = err == nil
		return err
	})
	return value, found, err
}

// scanChunk bounds how many entries a scan reads in one read transaction
// before it hands them to the caller's function.
const scanChunk = 1024

// ScanProjection calls fn for every key of a projector's state that starts
// with prefix, in key order, with the projector's own key (without the
// store's prefix). key and value belong to fn. fn returning an error stops the
// scan and ScanProjection returns it. The keys are read in chunks of
// consecutive snapshots, and fn is called outside any transaction, so fn may
// use the store; keys committed during the scan may or may not be seen.
func (s *Store) ScanProjection(projector string, prefix []byte, fn func(key, value []byte) error) error {
	base := projectionPrefix(projector)
	full := append(append([]byte{}, base...), prefix...)
	seek := full
	type kv struct{ k, v []byte }
	for {
		var chunk []kv
		err := s.view("scanning a projection", func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100, Prefix: full})
			defer it.Close()
			for it.Seek(seek); it.Valid() && len(chunk) < scanChunk; it.Next() {
				item := it.Item()
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				chunk = append(chunk, kv{item.KeyCopy(nil), v})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range chunk {
			if err := fn(e.k[len(base):], e.v); err != nil {
				return err
			}
		}
		if len(chunk) < scanChunk {
			return nil
		}
		// Seek just past the last key: the smallest key greater than it.
		seek = append(chunk[len(chunk)-1].k, 0)
	}
}

// RebuildProjections drops every index ('I') and projection ('P') key and
// replays the whole log through the indexer and the projectors, in
// transactions of bounded size.
//
// It is a maintenance operation, meant to run while nothing else uses the
// store (e.g. from `sluice replay`): it takes the committer's lock, so Appends
// wait until it is done, and readers (Get, Scan chunks, Projection, ...) wait
// too. A Tail or Scan in progress resumes afterwards on the rebuilt indexes. If it is interrupted (ctx, crash), the projections are left half
// built and marked so: the next Open finishes the rebuild. Errors: a
// projector refusing an event of the log (it changed since the event
// committed) fails the rebuild with the projector's error; free disk space
// under the store's reserve (see WithMinFreeBytes) stops it with a retriable
// STORE_IO error, as if interrupted.
func (s *Store) RebuildProjections(ctx context.Context) error {
	if s.cfg.readOnly {
		return domain.Errorf(domain.CodeStoreIO, "the event store in %s is open read-only; projections cannot be rebuilt", s.dir).
			WithHint("open the store without WithReadOnly")
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.isClosed() {
		return errClosed()
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return s.rebuild(ctx)
}

// rebuild does RebuildProjections; the caller excludes the committer.
func (s *Store) rebuild(ctx context.Context) error {
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if _, err := s.space.admit(0); err != nil {
		return err
	}
	err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(metaRebuildKey, nil) })
	if err != nil {
		return storeIO(err, "marking the projections for rebuild")
	}
	if err := s.db.DropPrefix([]byte{prefixIndex}, []byte{prefixProjection}); err != nil {
		return storeIO(err, "dropping the projections")
	}
	last := s.LastSeq()
	replayed := 0
	for from := uint64(1); from <= last; {
		if err := ctx.Err(); err != nil {
			return err
		}
		var chunk []*domain.Event
		var encoded [][]byte
		err := s.db.View(func(txn *badger.Txn) error {
			var err error
			chunk, encoded, err = s.readLogChunk(txn, from, last, scanChunk, 16<<20)
			return err
		})
		if err != nil {
			return storeIO(err, "reading the log")
		}
		if len(chunk) == 0 {
			return missingEvents(from, last)
		}
		// The replay writes index entries and projections, not the events.
		if _, err := s.space.admit(int64(eventOverhead * len(chunk))); err != nil {
			return err
		}
		if err := s.replayChunk(chunk, encoded); err != nil {
			return err
		}
		replayed += len(chunk)
		from = chunk[len(chunk)-1].Seq + 1
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(metaRebuildKey) }); err != nil {
		return storeIO(err, "unmarking the rebuilt projections")
	}
	s.log.Info().Int("events", replayed).Msg("projections rebuilt from the log")
	return nil
}

// replayChunk applies events to indexes and projections in as few
// transactions as fit.
func (s *Store) replayChunk(events []*domain.Event, encoded [][]byte) error {
	for len(events) > 0 {
		txn := s.db.NewTransaction(true)
		kv := &txnKV{txn: txn}
		n := len(events)
		var err error
		for i, ev := range events {
			if err = s.applyEvent(kv, ev, encoded[i], false); err != nil {
				n = i
				break
			}
		}
		switch {
		case err == nil:
			if err = txn.Commit(); err == nil {
				s.replays.Add(1)
			}
		case errors.Is(err, badger.ErrTxnTooBig) && n > 0:
			// Replay the events before the overflow on their own; go on from
			// the one that overflowed.
			txn.Discard()
			if err := s.replayChunk(events[:n], encoded[:n]); err != nil {
				return err
			}
			events, encoded = events[n:], encoded[n:]
			continue
		case errors.Is(err, badger.ErrTxnTooBig):
			err = domain.Wrap(domain.CodeTxnTooLarge, err, fmt.Sprintf("replaying event %d: its index and projection writes do not fit in one transaction", events[0].Seq))
		case kv.err == nil:
			err = fmt.Errorf("replaying event %d: %w", events[n].Seq, err)
		}
		txn.Discard()
		if err != nil {
			return storeIO(err, "rebuilding the projections")
		}
		events, encoded = nil, nil
	}
	return nil
}

// readLogChunk reads decoded events from seq from to seq to, at most n events
// or about maxBytes bytes of encoded events.
func (s *Store) readLogChunk(txn *badger.Txn, from, to uint64, n, maxBytes int) ([]*domain.Event, [][]byte, error) {
	var (
		events  []*domain.Event
		encoded [][]byte
		size    int
	)
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: logPrefetch, Prefix: []byte{prefixLog}})
	defer it.Close()
	for it.Seek(logKey(from)); it.Valid() && len(events) < n && size < maxBytes; it.Next() {
		item := it.Item()
		seq, ok := seqOfLogKey(item.Key())
		if !ok {
			return nil, nil, domain.Errorf(domain.CodeEventCodec, "malformed log key %s", describeKey(item.KeyCopy(nil)))
		}
		if seq > to {
			break
		}
		if want := from + uint64(len(events)); seq != want {
			return nil, nil, missingEvents(want, seq-1)
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return nil, nil, err
		}
		ev, err := s.segs.decode(seq, v)
		if err != nil {
			return nil, nil, err
		}
		events = append(events, ev)
		encoded = append(encoded, v)
		size += max(len(v), len(ev.Data)) // a pointer or a compressed entry holds more than it takes
	}
	return events, encoded, nil
}

// VerifyProjections replays the log and compares every index ('I') and
// projection ('P') key and value with what is stored, byte for byte. It reads
// one snapshot, so it may run while Appends go on. A difference is a
// PROJECTION_MISMATCH error naming up to 10 differing keys (Names holds them,
// rendered like "P state ckpt/orders" or "I F orders 42").
//
// The indexes are checked as the log is read, an event at a time (each
// event's entries must be stored, and there must be no others), so their
// size does not matter; the projections' replayed state is held in memory:
// fine for checkpoints, generations and what each flow read of its files,
// costly for projectors that keep large state.
func (s *Store) VerifyProjections(ctx context.Context) error {
	return s.view("verifying the projections", func(txn *badger.Txn) error {
		want := memKV{}
		projections := projectionsOnly{want}
		last, _, err := lastLogSeq(txn)
		if err != nil {
			return err
		}
		var diffs []string
		ndiff := 0
		note := func(k []byte, what string) {
			ndiff++
			if len(diffs) < 10 {
				diffs = append(diffs, describeKey(k)+" ("+what+")")
			}
		}
		indexed, missing := 0, 0
		for from := uint64(1); from <= last; {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk, encoded, err := s.readLogChunk(txn, from, last, scanChunk, 16<<20)
			if err != nil {
				return err
			}
			if len(chunk) == 0 {
				return missingEvents(from, last)
			}
			for i, ev := range chunk {
				if err := s.applyEvent(projections, ev, encoded[i], false); err != nil {
					return fmt.Errorf("replaying event %d: %w", ev.Seq, err)
				}
				for _, ix := range indexEntries(ev) {
					k := indexKey(ix.kind, ix.name, ev.Seq)
					indexed++
					if _, err := txn.Get(k); errors.Is(err, badger.ErrKeyNotFound) {
						missing++
						note(k, "in the replay, not stored")
					} else if err != nil {
						return err
					}
				}
			}
			from = chunk[len(chunk)-1].Seq + 1
		}

		// Every stored index entry was expected: there are as many as were
		// found. Only when there are more are they looked for, one by one.
		stored := 0
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{prefixIndex}}) // keys only
		for it.Rewind(); it.Valid(); it.Next() {
			stored++
		}
		it.Close()
		if stored > indexed-missing {
			if err := s.noteExtraIndexEntries(txn, note); err != nil {
				return err
			}
		}

		seen := 0
		it = txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100, Prefix: []byte{prefixProjection}})
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			w, ok := want[string(k)]
			if !ok {
				note(item.KeyCopy(nil), "stored, not in the replay")
				continue
			}
			seen++
			err := item.Value(func(v []byte) error {
				if !bytes.Equal(v, w) {
					note(item.KeyCopy(nil), "values differ")
				}
				return nil
			})
			if err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
		if seen < len(want) {
			var missing []string
			for k := range want {
				if _, err := txn.Get([]byte(k)); errors.Is(err, badger.ErrKeyNotFound) {
					missing = append(missing, k)
				} else if err != nil {
					return err
				}
			}
			sort.Strings(missing)
			for _, k := range missing {
				note([]byte(k), "in the replay, not stored")
			}
		}
		if ndiff == 0 {
			return nil
		}
		return domain.Errorf(domain.CodeProjectionMismatch, "%d index or projection keys differ from a replay of the log's %d events: %s",
			ndiff, last, strings.Join(diffs, ", ")).WithNames(diffs...)
	})
}

// noteExtraIndexEntries notes the stored index entries that their event does
// not have.
func (s *Store) noteExtraIndexEntries(txn *badger.Txn, note func(k []byte, what string)) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{prefixIndex}}) // keys only
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().KeyCopy(nil)
		if len(k) < 2+1+8 || k[len(k)-9] != 0 {
			note(k, "malformed")
			continue
		}
		kind, name, seq := k[1], string(k[2:len(k)-9]), binary.BigEndian.Uint64(k[len(k)-8:])
		item, err := txn.Get(logKey(seq))
		if errors.Is(err, badger.ErrKeyNotFound) {
			note(k, "stored, names no event")
			continue
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		ev, err := s.segs.decode(seq, v)
		if err != nil {
			return err
		}
		if !slices.Contains(indexEntries(ev), indexEntry{kind, name}) {
			note(k, "stored, not in the replay")
		}
	}
	return nil
}

// projectionsOnly is a kvStore that keeps the projections' writes and drops
// the index entries, which VerifyProjections checks as it goes.
type projectionsOnly struct{ memKV }

func (p projectionsOnly) set(key, value []byte) error {
	if len(key) > 0 && key[0] == prefixIndex {
		return nil
	}
	return p.memKV.set(key, value)
}

// ProjectionDigest returns the SHA-256, in hex, of every index ('I') and
// projection ('P') key and value, in key order (each as a uvarint length and
// the bytes). Equal digests mean equal derived state; for tests and for
// `sluice replay --verify` output.
func (s *Store) ProjectionDigest() (string, error) {
	h := sha256.New()
	var lenbuf [binary.MaxVarintLen64]byte
	write := func(b []byte) {
		h.Write(lenbuf[:binary.PutUvarint(lenbuf[:], uint64(len(b)))])
		h.Write(b)
	}
	err := s.view("digesting the projections", func(txn *badger.Txn) error {
		for _, p := range [...]byte{prefixIndex, prefixProjection} {
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100, Prefix: []byte{p}})
			for it.Rewind(); it.Valid(); it.Next() {
				item := it.Item()
				write(item.Key())
				if err := item.Value(func(v []byte) error { write(v); return nil }); err != nil {
					it.Close()
					return err
				}
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
