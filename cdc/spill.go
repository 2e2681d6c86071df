package cdc

import (
	"errors"
	"os"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// A State holds its keys in memory up to a budget (SpillBeyond); past it,
// it moves keys it did not touch in the last micro-batch to a spill: a
// scratch Badger database in a directory of its own, removed on Close. A
// key is in memory or in the spill, never both: a lookup that misses in
// memory reads the spill and brings the key back. The spill is keyed by the
// key's order key (orderKey), so reading it in order gives the keys in
// order, and a lookup needs no index in memory. The spill is a cache like
// the state itself: the log is the truth, and a process that dies leaves
// nothing to recover from it.
type spill struct {
	dir string
	db  *badger.DB
}

// openSpill opens a fresh spill in a new directory under parent (the
// system's temporary directory when empty).
func openSpill(parent string) (*spill, error) {
	dir, err := os.MkdirTemp(parent, "sluice-state-spill-")
	if err != nil {
		return nil, spillErr(err, "making the spill directory")
	}
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(false).
		WithMemTableSize(16 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(16 << 20).
		WithIndexCacheSize(8 << 20).
		WithValueLogFileSize(256 << 20).
		WithNumCompactors(2)
	db, err := badger.Open(opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, spillErr(err, "opening the spill in "+dir)
	}
	return &spill{dir: dir, db: db}, nil
}

// spillErr is a failure of the spill: of the disk under it, which may pass
// (space freed), so retriable; the retry folds the state again from the
// log.
func spillErr(err error, what string) error {
	return domain.Wrap(domain.CodeCDCStateSpill, err, what).AsRetriable()
}

// get reads the value spilled under order, if any.
func (sp *spill) get(order []byte) ([]byte, bool, error) {
	var out []byte
	err := sp.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(order)
		if err != nil {
			return err
		}
		out, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, spillErr(err, "reading a key from the spill in "+sp.dir)
	}
	return out, true, nil
}

// write sets the values of puts and removes the keys of dels, in one
// write (a key is in one of them at most).
func (sp *spill) write(puts map[string][]byte, dels []string) error {
	wb := sp.db.NewWriteBatch()
	defer wb.Cancel()
	for k, v := range puts {
		if err := wb.Set([]byte(k), v); err != nil {
			return spillErr(err, "writing keys to the spill in "+sp.dir)
		}
	}
	for _, k := range dels {
		if err := wb.Delete([]byte(k)); err != nil {
			return spillErr(err, "removing keys from the spill in "+sp.dir)
		}
	}
	if err := wb.Flush(); err != nil {
		return spillErr(err, "writing to the spill in "+sp.dir)
	}
	return nil
}

// each calls fn with the spilled keys and values in key order; the slices
// are valid during the call only.
func (sp *spill) each(fn func(order, value []byte) error) error {
	err := sp.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			err := item.Value(func(v []byte) error { return fn(item.Key(), v) })
			if err != nil {
				return err
			}
		}
		return nil
	})
	var coded *domain.Error
	if err != nil && !errors.As(err, &coded) {
		return spillErr(err, "reading the spill in "+sp.dir)
	}
	return err
}

// close closes the spill and removes its directory.
func (sp *spill) close() error {
	err := sp.db.Close()
	if rerr := os.RemoveAll(sp.dir); err == nil {
		err = rerr
	}
	if err != nil {
		return spillErr(err, "closing the spill in "+sp.dir)
	}
	return nil
}
