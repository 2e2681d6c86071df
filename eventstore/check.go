package eventstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// Report is what Check found in a store.
type Report struct {
	Dir      string
	Files    int             // the store's files: Badger's tables and logs, checked as files, and the segment files, checked record by record as the events are read
	Events   uint64          // events read and decoded
	Payloads int             // row payloads decoded
	Damage   []*domain.Error // every problem found: STORE_CORRUPT, or PROJECTION_MISMATCH
	// NotClosed is set when a process that wrote the store ended without
	// closing it: its files were checked, its events cannot be read without
	// the recovery a read-write open does.
	NotClosed bool
}

// OK reports whether the store is sound.
func (r *Report) OK() bool { return len(r.Damage) == 0 }

// maxDamage bounds the problems a report lists: past it the store is known
// to be badly damaged and a longer list helps nobody.
const maxDamage = 50

func (r *Report) add(err error) {
	if len(r.Damage) >= maxDamage {
		return
	}
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Wrap(domain.CodeStoreCorrupt, err, "checking the store")
	}
	r.Damage = append(r.Damage, de)
}

// Check examines the store in dir end to end without writing to it: the
// marker, every table (every block against its checksum), the memtable and
// value logs a reopen would cut, then, when the store opens, every event of
// the log (in seq order, none missing, each against its checksum), every row
// payload, and the projections against a replay of the log. It lists every
// problem it finds in the report; the error is for what kept it from
// checking (the directory is missing, another process holds the store).
func Check(ctx context.Context, dir string) (*Report, error) {
	r := &Report{Dir: dir}
	if _, err := os.Stat(dir); err != nil {
		return nil, storeIO(err, "checking the store in "+dir)
	}
	sf, err := listStore(dir)
	if err != nil {
		return nil, err
	}
	segs, err := segmentFiles(dir)
	if err != nil {
		return nil, err
	}
	r.Files = len(sf.tables) + len(sf.memLogs) + len(sf.valueLog) + len(segs)
	var m marker
	hasMarker := false
	if sf.marker != nil {
		if m, hasMarker = decodeMarker(sf.marker); !hasMarker {
			r.add(corruptFile(dir, markerName, "is not a valid marker file (it is altered or cut short)"))
		}
	}
	crashed := !hasMarker || !m.closed
	listed := map[uint64]bool{}
	if !sf.manifest && len(sf.tables) > 0 {
		r.add(corruptFile(dir, "MANIFEST", "is missing, while the store holds tables"))
	}
	if sf.manifest {
		var err error
		if listed, err = checkManifest(dir, sf.tables, badger.DefaultOptions(dir), crashed); err != nil {
			r.add(err)
		}
	}
	for _, name := range sf.tables {
		if crashed && !listed[uint64(fileID(name))] {
			continue // a crash left it half written or unlisted: a reopen removes it
		}
		if _, err := checkTable(filepath.Join(dir, name)); err != nil {
			r.add(corruptFile(dir, name, "does not open as a table: "+err.Error()))
		}
	}
	logs := append(append([]string{}, sf.memLogs...), sf.valueLog...)
	for _, name := range logs {
		if err := checkLogTail(filepath.Join(dir, name), m, hasMarker); err != nil {
			r.add(corruptFile(dir, name, err.Error()))
		}
	}
	if !r.OK() {
		return r, nil // Badger would refuse these files, or worse
	}

	s, err := Open(dir, WithReadOnly(), WithGCInterval(0))
	switch domain.CodeOf(err) {
	case "":
	case domain.CodeStoreNotClosed:
		r.NotClosed = true
		return r, nil
	case domain.CodeStoreCorrupt, domain.CodeStoreFormat:
		r.add(err)
		return r, nil
	default:
		return nil, err
	}
	defer s.Close()
	if err := s.checkLog(ctx, r); err != nil {
		return nil, err
	}
	if len(r.Damage) == 0 {
		if err := s.VerifyProjections(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.add(err)
		}
	}
	return r, nil
}

// checkLog reads every log entry, in chunks, and decodes it and its row
// payload; damage is added to r, and the walk goes on past it.
func (s *Store) checkLog(ctx context.Context, r *Report) error {
	last := s.LastSeq()
	want := uint64(1)
	for want <= last {
		if err := ctx.Err(); err != nil {
			return err
		}
		var chunk []uint64
		var selections []selectionAt
		err := s.view("checking the log", func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: logPrefetch, Prefix: []byte{prefixLog}})
			defer it.Close()
			for it.Seek(logKey(want)); it.Valid() && len(chunk) < scanChunk; it.Next() {
				item := it.Item()
				seq, ok := seqOfLogKey(item.Key())
				if !ok {
					r.add(domain.Errorf(domain.CodeStoreCorrupt, "malformed log key %s", describeKey(item.KeyCopy(nil))))
					continue
				}
				if seq > last {
					break
				}
				chunk = append(chunk, seq)
				v, err := item.ValueCopy(nil)
				if err != nil {
					r.add(domain.Wrap(domain.CodeStoreCorrupt, err, fmt.Sprintf("reading event %d", seq)))
					continue
				}
				r.Events++
				ev, err := s.segs.decode(seq, v)
				if err != nil {
					r.add(err)
					continue
				}
				if len(ev.Data) == 0 {
					continue
				}
				r.Payloads++
				selects := "" // the table whose rows the payload selects, if it is a selection
				if bc := ev.Details.BatchCommitted; bc != nil {
					selects = bc.Selects
				} else if st := ev.Details.StreamState; st != nil && st.IdentitiesOf != nil {
					selects = st.IdentitiesOf.Table
				}
				if selects != "" {
					sel, err := domain.DecodeSelection(ev.Data)
					if err != nil {
						r.add(domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the row payload of event %d", seq)))
						continue
					}
					sel.Table = selects
					selections = append(selections, selectionAt{seq, sel})
				} else if _, err := domain.DecodeBatch(ev.Data); err != nil {
					r.add(domain.Wrap(domain.CodeOf(err), err, fmt.Sprintf("the row payload of event %d", seq)))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, at := range selections {
			if err := s.checkSelection(at); err != nil {
				r.add(err)
			}
		}
		for _, seq := range chunk {
			if seq != want {
				r.add(missingEvents(want, seq-1))
			}
			want = seq + 1
		}
		if len(chunk) < scanChunk {
			break
		}
	}
	if want <= last {
		r.add(missingEvents(want, last))
	}
	return nil
}

// selectionAt is a batch stored as a selection of another table's rows,
// at event seq.
type selectionAt struct {
	seq uint64
	sel domain.Selection
}

// checkSelection checks that the batches a selection keeps rows of are
// there before it (domain.Selection.EachSource). Vacuum never removes one
// a selection keeps rows of: a removed one is damage too.
func (s *Store) checkSelection(at selectionAt) error {
	err := at.sel.EachSource(at.seq, s.Get, nil)
	if c := domain.CodeOf(err); c != "" && c != domain.CodeStoreCorrupt {
		err = domain.Wrap(domain.CodeStoreCorrupt, err, "a selection of rows")
	}
	return err
}
