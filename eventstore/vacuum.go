package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// RemoveRows removes the row payloads of the batch_committed events at seqs,
// or the identities of stream_state events (sluice vacuum): each event
// stays, with its metadata, and says in its details when and why its data
// was removed; a read of those rows is then ROWS_VACUUMED. It returns the
// bytes of payload removed. Each event is
// rewritten in a transaction of its own, so a crash leaves every event
// either whole or vacuumed. Appends wait while it runs.
func (s *Store) RemoveRows(ctx context.Context, seqs []uint64, removed domain.RowsRemoved) (int64, error) {
	if s.cfg.readOnly {
		return 0, domain.Errorf(domain.CodeStoreIO, "the event store in %s is open read-only; vacuum is not possible", s.dir)
	}
	if err := s.brokenErr(); err != nil {
		return 0, err
	}
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.isClosed() {
		return 0, errClosed()
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	var freed int64
	for _, seq := range seqs {
		if err := ctx.Err(); err != nil {
			return freed, err
		}
		var ev *domain.Event
		err := s.db.View(func(txn *badger.Txn) error { // not Get: dbMu is held
			var err error
			ev, err = s.readEvent(txn, seq)
			return err
		})
		if err != nil {
			return freed, err
		}
		if len(ev.Data) == 0 {
			continue // no rows, or removed already
		}
		r := removed
		switch d := &ev.Details; {
		case ev.Type == domain.EventBatchCommitted && d.BatchCommitted != nil:
			info := *d.BatchCommitted
			info.RowsRemoved = &r
			d.BatchCommitted = &info
		case ev.Type == domain.EventStreamState && d.StreamState != nil:
			st := *d.StreamState
			st.IdentitiesRemoved = &r
			d.StreamState = &st
		default:
			return freed, domain.Errorf(domain.CodeInvalidDefinition, "event %d is %s, neither a batch_committed nor a stream_state event: it has no rows to remove", seq, ev.Type)
		}
		n := int64(len(ev.Data))
		ev.Data = nil
		p, err := domain.EncodeEvent(ev)
		if err != nil {
			return freed, err
		}
		stored, err := s.segs.stored(seq, entryOf(nil, p))
		if err == nil {
			err = s.segs.sync()
		}
		if err != nil {
			return freed, err
		}
		if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(logKey(seq), stored) }); err != nil {
			return freed, storeIO(err, fmt.Sprintf("removing the rows of event %d", seq))
		}
		freed += n
	}
	return freed, nil
}

// Reclaim gives the space of the rows RemoveRows removed back to the disk.
// It opens the store in dir (no one else may hold it) twice: first to write
// a mark, whose flush at close leaves level 0 with more than one table (the
// only condition on which Badger compacts it), then to compact every table
// into one level, which drops the old versions of the rewritten events and
// counts what they held in the value logs, to rewrite the value logs that
// are mostly stale, and to do the same for the segment files (see
// reclaimSegments).
func Reclaim(ctx context.Context, dir string, opts ...Option) error {
	s, err := Open(dir, opts...)
	if err != nil {
		return err
	}
	stamp := []byte(time.Now().UTC().Format(time.RFC3339))
	err = s.db.Update(func(txn *badger.Txn) error { return txn.Set(metaReclaimKey, stamp) })
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return storeIO(err, "marking the reclaim")
	}
	compactAll := func(c *config) {
		adjust := c.badgerOptions
		c.badgerOptions = func(o badger.Options) badger.Options {
			if adjust != nil {
				o = adjust(o)
			}
			// Two tables at level 0 are too many: Flatten then compacts
			// level 0 away, whatever its size.
			return o.WithNumLevelZeroTables(1).WithNumLevelZeroTablesStall(2)
		}
		c.gcInterval = 0 // this is the collection
	}
	if s, err = Open(dir, append(opts, compactAll)...); err != nil {
		return err
	}
	err = s.reclaim(ctx)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) reclaim(ctx context.Context) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.db.Flatten(1); err != nil {
		return storeIO(err, "compacting the store")
	}
	for ctx.Err() == nil {
		err := s.db.RunValueLogGC(0.5)
		if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrRejected) {
			return s.reclaimSegments(ctx)
		}
		if err != nil {
			return storeIO(err, "rewriting the value logs")
		}
	}
	return ctx.Err()
}
