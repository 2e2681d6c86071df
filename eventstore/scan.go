package eventstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// Filter selects events for Scan and Tail. Zero fields select everything;
// set fields must all match.
type Filter struct {
	From    uint64             // first seq, inclusive (0 = from the start)
	To      uint64             // last seq, inclusive (0 = no bound)
	Types   []domain.EventType // any of these; empty = all
	Flow    string             // origin.flow_name
	Dataset string             // origin.dataset_name
	Update  string             // origin.update_id
}

func (f *Filter) matches(ev *domain.Event) bool {
	return (len(f.Types) == 0 || slices.Contains(f.Types, ev.Type)) &&
		(f.Flow == "" || ev.Origin.FlowName == f.Flow) &&
		(f.Dataset == "" || ev.Origin.DatasetName == f.Dataset) &&
		(f.Update == "" || ev.Origin.UpdateID == f.Update)
}

// index chooses the index to walk, the most selective first: flow, dataset,
// update, then the type when exactly one is asked for. ok is false when the
// whole log must be walked.
func (f *Filter) index() (kind byte, name string, ok bool) {
	switch {
	case f.Flow != "":
		return indexFlow, f.Flow, true
	case f.Dataset != "":
		return indexDataset, f.Dataset, true
	case f.Update != "":
		return indexUpdate, f.Update, true
	case len(f.Types) == 1:
		return indexType, string(f.Types[0]), true
	}
	return 0, "", false
}

// Limits of one read transaction of a scan: the events handed to fn, their
// encoded bytes, and the entries examined (matching or not).
const (
	scanMaxEvents   = 256
	scanMaxBytes    = 4 << 20
	scanMaxExamined = 4096
)

// Scan calls fn for each committed event that matches f, in seq order, and
// returns nil at the end. fn returning an error stops the scan and Scan
// returns that error; so does ctx ending (ctx.Err()).
//
// Scan reads the events committed when it starts (up to LastSeq then), not
// the ones committed while it runs: use Tail to go on. When Flow, Dataset,
// Update or a single Type is set, Scan walks the matching index (the first
// set of flow, dataset, update, type) and reads only the events it lists;
// otherwise it walks the whole log from From.
//
// Events are read in chunks, each in its own read transaction, and fn is
// called outside any transaction: fn may use the store (Append included). The
// events passed to fn are fn's own.
func (s *Store) Scan(ctx context.Context, f Filter, fn func(*domain.Event) error) error {
	hi := s.LastSeq()
	if f.To != 0 && f.To < hi {
		hi = f.To
	}
	return s.scanRange(ctx, &f, max(f.From, 1), hi, fn)
}

// Tail is Scan that does not stop at the end of the log: it then waits for
// new commits and goes on with them, in seq order, without gaps or repeats.
// It returns ctx.Err() when ctx ends, fn's error when fn fails, STORE_CLOSED
// when the store closes, and nil once it has passed f.To when f.To is set.
//
// Waiting is a wake-up on every commit (no polling). A slow fn delays nothing
// but this Tail: events wait in the log, not in memory.
func (s *Store) Tail(ctx context.Context, f Filter, fn func(*domain.Event) error) error {
	lo := max(f.From, 1)
	for {
		// Take the wake-up channel before reading LastSeq, so that a commit
		// after the read closes this very channel.
		changed := s.changed()
		hi := s.LastSeq()
		if f.To != 0 && f.To < hi {
			hi = f.To
		}
		if lo <= hi {
			if err := s.scanRange(ctx, &f, lo, hi, fn); err != nil {
				return err
			}
			lo = hi + 1
		}
		if f.To != 0 && lo > f.To {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return errClosed()
		}
	}
}

// WaitFor blocks until LastSeq() >= seq, and returns nil then; ctx.Err()
// when ctx ends first; STORE_CLOSED when the store closes first.
func (s *Store) WaitFor(ctx context.Context, seq uint64) error {
	for {
		changed := s.changed()
		if s.LastSeq() >= seq {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return errClosed()
		}
	}
}

// scanRange calls fn for the events of [lo, hi] that match f.
func (s *Store) scanRange(ctx context.Context, f *Filter, lo, hi uint64, fn func(*domain.Event) error) error {
	kind, name, byIndex := f.index()
	for lo <= hi {
		if err := ctx.Err(); err != nil {
			return err
		}
		var (
			chunk []*domain.Event
			next  uint64
		)
		err := s.view("scanning the log", func(txn *badger.Txn) error {
			var err error
			switch {
			case byIndex:
				chunk, next, err = s.readIndexChunk(txn, f, kind, name, lo, hi)
			case len(f.Types) > 1:
				chunk, next, err = s.readTypesChunk(txn, f, lo, hi)
			default:
				chunk, next, err = s.readFilteredLog(txn, f, lo, hi)
			}
			return err
		})
		if err != nil {
			return err
		}
		s.released(chunk)
		for _, ev := range chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(ev); err != nil {
				return err
			}
		}
		lo = next
	}
	return nil
}

// logPrefetch is how many events a walk of the log reads ahead. Events
// holding rows are megabytes each: reading 64 ahead held 160 MiB for a scan
// that needs one.
const logPrefetch = 8

// readFilteredLog walks the log from lo and returns the matching events of
// one chunk, and the seq to go on from (hi+1 when done).
func (s *Store) readFilteredLog(txn *badger.Txn, f *Filter, lo, hi uint64) ([]*domain.Event, uint64, error) {
	var (
		out            []*domain.Event
		size, examined int
		next           = hi + 1
	)
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: logPrefetch, Prefix: []byte{prefixLog}})
	defer it.Close()
	// The log holds every seq up to the last: one that is skipped was lost.
	want := lo
	for it.Seek(logKey(lo)); it.Valid(); it.Next() {
		item := it.Item()
		seq, ok := seqOfLogKey(item.Key())
		if !ok {
			return nil, 0, domain.Errorf(domain.CodeEventCodec, "malformed log key %s", describeKey(item.KeyCopy(nil)))
		}
		if seq > hi {
			break
		}
		if seq != want {
			return nil, 0, missingEvents(want, seq-1)
		}
		if len(out) >= scanMaxEvents || size >= scanMaxBytes || examined >= scanMaxExamined {
			next = seq
			break
		}
		want++
		examined++
		n, err := s.appendMatch(&out, f, seq, item)
		if err != nil {
			return nil, 0, err
		}
		size += n
	}
	if next == hi+1 && want <= hi {
		return nil, 0, missingEvents(want, hi)
	}
	return out, next, nil
}

// missingEvents is the error of a log that lacks the seqs from lo to hi,
// which it committed.
func missingEvents(lo, hi uint64) error {
	what := fmt.Sprintf("event %d is", lo)
	if hi > lo {
		what = fmt.Sprintf("events %d to %d are", lo, hi)
	}
	return domain.Errorf(domain.CodeStoreCorrupt, "%s missing from the log, which committed them: the storage is damaged", what).
		WithHint("nothing was changed; restore the storage directory from a backup, or run `sluice doctor` to see what is damaged")
}

// readIndexChunk walks one index from lo and returns the matching events of
// one chunk, and the seq to go on from (hi+1 when done).
func (s *Store) readIndexChunk(txn *badger.Txn, f *Filter, kind byte, name string, lo, hi uint64) ([]*domain.Event, uint64, error) {
	var (
		out            []*domain.Event
		size, examined int
		next           = hi + 1
	)
	prefix := indexPrefix(kind, name)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix}) // keys only
	defer it.Close()
	for it.Seek(binary.BigEndian.AppendUint64(slices.Clip(prefix), lo)); it.Valid(); it.Next() {
		k := it.Item().Key()
		if len(k) != len(prefix)+8 {
			return nil, 0, domain.Errorf(domain.CodeEventCodec, "malformed index key %s", describeKey(it.Item().KeyCopy(nil))).
				WithHint("rebuild the projections from the log")
		}
		seq := binary.BigEndian.Uint64(k[len(prefix):])
		if seq > hi {
			break
		}
		if len(out) >= scanMaxEvents || size >= scanMaxBytes || examined >= scanMaxExamined {
			next = seq
			break
		}
		examined++
		n, err := s.appendIndexed(&out, txn, f, seq, describeKey(it.Item().KeyCopy(nil)))
		if err != nil {
			return nil, 0, err
		}
		size += n
	}
	return out, next, nil
}

// appendIndexed appends the event seq an index entry names (entry, for the
// error of a log that lacks it) when it matches f.
func (s *Store) appendIndexed(out *[]*domain.Event, txn *badger.Txn, f *Filter, seq uint64, entry string) (int, error) {
	item, err := txn.Get(logKey(seq))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, domain.Errorf(domain.CodeProjectionMismatch, "index entry %s names an event the log does not hold", entry)
	}
	if err != nil {
		return 0, err
	}
	return s.appendMatch(out, f, seq, item)
}

// readTypesChunk walks the type index of each of f's types from lo, and
// returns the matching events of one chunk in seq order, and the seq to go
// on from: the events of a few types are read without reading the log's
// other events (rows among them).
func (s *Store) readTypesChunk(txn *badger.Txn, f *Filter, lo, hi uint64) ([]*domain.Event, uint64, error) {
	var seqs []uint64
	upto := hi // every index is read up to here
	types := slices.Compact(slices.Sorted(slices.Values(f.Types)))
	for _, t := range types {
		prefix := indexPrefix(indexType, string(t))
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix}) // keys only
		n := 0
		for it.Seek(binary.BigEndian.AppendUint64(slices.Clip(prefix), lo)); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != len(prefix)+8 {
				it.Close()
				return nil, 0, domain.Errorf(domain.CodeEventCodec, "malformed index key %s", describeKey(it.Item().KeyCopy(nil))).
					WithHint("rebuild the projections from the log")
			}
			seq := binary.BigEndian.Uint64(k[len(prefix):])
			if seq > upto {
				break
			}
			if n == scanMaxEvents {
				upto = seq - 1 // this index is read no further in this chunk
				break
			}
			seqs = append(seqs, seq)
			n++
		}
		it.Close()
	}
	slices.Sort(seqs)
	var out []*domain.Event
	size := 0
	for _, seq := range seqs {
		if seq > upto {
			break
		}
		if size >= scanMaxBytes {
			return out, seq, nil
		}
		n, err := s.appendIndexed(&out, txn, f, seq, fmt.Sprintf("of event %d in a type index", seq))
		if err != nil {
			return nil, 0, err
		}
		size += n
	}
	return out, upto + 1, nil
}

// appendMatch decodes the log entry item, of event seq, and appends it to out
// when it matches f; it returns the bytes it added.
func (s *Store) appendMatch(out *[]*domain.Event, f *Filter, seq uint64, item *badger.Item) (int, error) {
	v, err := item.ValueCopy(nil)
	if err != nil {
		return 0, err
	}
	ev, err := s.segs.decode(seq, v)
	if err != nil {
		return 0, err
	}
	if !f.matches(ev) {
		return 0, nil
	}
	*out = append(*out, ev)
	return max(len(v), len(ev.Data)), nil // a pointer or a compressed entry holds more than it takes
}
