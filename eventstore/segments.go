package eventstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/fsync"
)

// Large log entries (micro-batches of rows) are kept outside Badger, in
// segment files beside its own; Badger's log key holds a pointer to the
// entry. Badger would write them into its value log through a shared memory
// map and sync the map: every page is faulted in and copied into, and each
// sync write-protects it again with a TLB flush on every core. A write and
// an fsync of the same bytes cost about half as much (128 MiB in
// entries of 600 KiB, synced after each: 0.80 s through Badger, 0.35 to
// 0.46 s into a file with a pointer committed to Badger), and the pages
// stay out of the process's memory.
//
// An entry goes to a segment from Badger's value threshold up (see
// WithValueThreshold): what Badger would have put in its value log. A
// segment file, NNNNNN.seg, is a run of records, each a segmentHeader
// (the event's seq, the entry's length and the entry's CRC-32C, big-endian)
// followed by the entry. The pointer is the byte entrySegment, then the
// file's number, the record's offset and the entry's length, as uvarints.
//
// With sync writes on (the default), a record is written, and its file
// synced, before the transaction holding its pointer commits, so that a
// committed pointer always finds its record. A record whose transaction did
// not commit (a crash) is never pointed at: it only takes space until sluice
// vacuum reclaims it; the records of a try that failed (a transaction too
// large, a projector's refusal) are written over by the next try, or cut
// off when the store closes.
// A store open for writing starts a new file at its first large entry, so
// a file a crash left, whatever its tail holds, is never written again; a
// file takes no more records once it holds segmentSize bytes. A read checks
// the record's seq, length and checksum: a missing file, a short one or a
// record not the event's is STORE_CORRUPT, never another event's bytes. A
// read opens the file for itself: the files are many (one an open for
// writing, at least), and an entry is a micro-batch, so that the open costs
// little beside the read, and no descriptor outlives it.
const (
	entrySegment  = 0xC7 // never an event codec version, nor entryCompressed or entryBlocks
	segmentHeader = 16
	segmentExt    = ".seg"
)

// segments reads and writes a store's segment files. Writing is the
// committer's (under commitMu); reading is safe for concurrent use.
type segments struct {
	dir      string
	readOnly bool
	// size is how many bytes a file takes before the next record starts a
	// new one; threshold is the entry size from which entries go to a
	// segment.
	size, threshold int64

	// The file being written: its number, handle and end; dirty when
	// written since its last sync. next is the number of the next file.
	w     *os.File
	wID   uint64
	wEnd  int64
	dirty bool
	next  uint64
}

// openSegments lists the segment files in dir to number the next one.
func openSegments(dir string, readOnly bool, size, threshold int64) (*segments, error) {
	g := &segments{dir: dir, readOnly: readOnly, size: size, threshold: threshold, next: 1}
	ids, err := segmentFiles(dir)
	if err != nil {
		return nil, err
	}
	if n := len(ids); n > 0 {
		g.next = ids[n-1] + 1
	}
	return g, nil
}

// segmentFiles lists the numbers of the segment files in dir, in order.
func segmentFiles(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // a store not created yet, opened read-only
	}
	if err != nil {
		return nil, storeIO(err, "listing "+dir)
	}
	var ids []uint64
	for _, e := range entries {
		if id, ok := segmentID(e.Name()); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // by number: past 999999 the names are longer
	return ids, nil
}

func segmentName(id uint64) string { return fmt.Sprintf("%06d%s", id, segmentExt) }

func segmentID(name string) (uint64, bool) {
	num, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(num) < 6 {
		return 0, false
	}
	id, err := strconv.ParseUint(num, 10, 64)
	return id, err == nil && id > 0
}

// stored is what Badger's log key holds for entry, the log entry of event
// seq: the entry itself, or from the threshold up the pointer to the record
// put writes of it.
func (g *segments) stored(seq uint64, entry []byte) ([]byte, error) {
	if int64(len(entry)) < g.threshold {
		return entry, nil
	}
	return g.put(seq, entry)
}

// segmentMark is where the file being written ends, to go back to.
type segmentMark struct {
	file uint64
	end  int64
}

// mark is the end of what was written so far: with no file being written,
// the start of the next one.
func (g *segments) mark() segmentMark {
	if g.w == nil {
		return segmentMark{g.next, 0}
	}
	return segmentMark{g.wID, g.wEnd}
}

// rewind takes back the records written since m, which no transaction
// points to (a try that failed), when they are in the file m was taken in:
// the next records are written over them.
func (g *segments) rewind(m segmentMark) {
	if g.w != nil && g.wID == m.file {
		g.wEnd = m.end
	}
}

// put writes entry, the log entry of event seq, as a record and returns
// its pointer. The record is durable once sync returns.
func (g *segments) put(seq uint64, entry []byte) ([]byte, error) {
	n := int64(segmentHeader + len(entry))
	if g.w == nil || g.wEnd > 0 && g.wEnd+n > g.size {
		if err := g.startFile(); err != nil {
			return nil, err
		}
	}
	var head [segmentHeader]byte
	binary.BigEndian.PutUint64(head[0:], seq)
	binary.BigEndian.PutUint32(head[8:], uint32(len(entry)))
	binary.BigEndian.PutUint32(head[12:], crc32.Checksum(entry, castagnoli))
	if _, err := g.w.WriteAt(head[:], g.wEnd); err != nil {
		return nil, storeIO(err, "writing "+g.w.Name())
	}
	if _, err := g.w.WriteAt(entry, g.wEnd+segmentHeader); err != nil {
		return nil, storeIO(err, "writing "+g.w.Name())
	}
	ptr := encodePointer(pointer{file: g.wID, offset: uint64(g.wEnd), length: uint64(len(entry))})
	g.wEnd += n
	g.dirty = true
	return ptr, nil
}

// startFile syncs the file being written, if any, and creates the next.
// The directory is synced too, so that the new file's name is durable
// before any pointer to it commits.
func (g *segments) startFile() error {
	if g.readOnly {
		return domain.Errorf(domain.CodeStoreIO, "the event store in %s is open read-only; it writes no segment file", g.dir)
	}
	if err := g.sync(); err != nil {
		return err
	}
	if w := g.w; w != nil {
		g.w = nil
		if err := w.Close(); err != nil {
			return storeIO(err, "closing "+w.Name())
		}
	}
	id := g.next
	g.next++ // taken, whatever happens next
	path := filepath.Join(g.dir, segmentName(id))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return storeIO(err, "creating "+path)
	}
	if err := fsync.Dir(g.dir); err != nil {
		_ = f.Close()
		return storeIO(err, "syncing "+g.dir)
	}
	g.w, g.wID, g.wEnd, g.dirty = f, id, 0, false
	return nil
}

// sync makes the records written so far durable.
func (g *segments) sync() error {
	if !g.dirty {
		return nil
	}
	if err := g.w.Sync(); err != nil {
		return storeIO(err, "syncing "+g.w.Name())
	}
	g.dirty = false
	return nil
}

// close cuts the file being written at its end (records taken back by
// rewind may lie past it), syncs it and closes it.
func (g *segments) close() error {
	if g.w != nil {
		if err := g.w.Truncate(g.wEnd); err != nil {
			return storeIO(err, "cutting "+g.w.Name()+" at its end")
		}
		g.dirty = true
	}
	err := g.sync()
	if w := g.w; w != nil {
		g.w = nil
		if cerr := w.Close(); err == nil && cerr != nil {
			err = storeIO(cerr, "closing "+w.Name())
		}
	}
	return err
}

// pointer is a decoded segment pointer.
type pointer struct {
	file, offset, length uint64
}

func decodePointer(v []byte) (pointer, bool) {
	if len(v) == 0 || v[0] != entrySegment {
		return pointer{}, false
	}
	var p pointer
	v = v[1:]
	for _, field := range []*uint64{&p.file, &p.offset, &p.length} {
		x, k := binary.Uvarint(v)
		if k <= 0 {
			return pointer{}, false
		}
		*field, v = x, v[k:]
	}
	return p, len(v) == 0 && p.file > 0
}

// entry resolves a stored value: the entry itself, or, for a pointer, the
// entry its record holds, checked.
func (g *segments) entry(seq uint64, v []byte) ([]byte, error) {
	if len(v) == 0 || v[0] != entrySegment {
		return v, nil
	}
	p, ok := decodePointer(v)
	if !ok {
		return nil, damagedEntry(seq, v, errors.New("a malformed segment pointer"))
	}
	if p.length > uint64(g.size)+1<<30 { // no record is that large: damage, not a read to try
		return nil, damagedEntry(seq, v, fmt.Errorf("a segment pointer to %d bytes", p.length))
	}
	name := segmentName(p.file)
	path := filepath.Join(g.dir, name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, corruptFile(g.dir, name, fmt.Sprintf("is missing: it holds event %d", seq))
	}
	if err != nil {
		return nil, storeIO(err, "opening "+path)
	}
	defer f.Close()
	buf := make([]byte, segmentHeader+p.length)
	if _, err := f.ReadAt(buf, int64(p.offset)); errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, corruptFile(g.dir, name, fmt.Sprintf("is cut short: event %d's record at offset %d is not all there", seq, p.offset))
	} else if err != nil {
		return nil, storeIO(err, "reading "+path)
	}
	entry := buf[segmentHeader:]
	switch {
	case binary.BigEndian.Uint64(buf[0:]) != seq || uint64(binary.BigEndian.Uint32(buf[8:])) != p.length:
		return nil, corruptFile(g.dir, name, fmt.Sprintf("holds, at offset %d, a record that is not event %d's", p.offset, seq))
	case binary.BigEndian.Uint32(buf[12:]) != crc32.Checksum(entry, castagnoli):
		return nil, corruptFile(g.dir, name, fmt.Sprintf("holds event %d's record damaged (checksum mismatch at offset %d)", seq, p.offset))
	}
	return entry, nil
}

// decode decodes the stored value v of event seq, resolving a pointer.
func (g *segments) decode(seq uint64, v []byte) (*domain.Event, error) {
	entry, err := g.entry(seq, v)
	if err != nil {
		return nil, err
	}
	return decodeStored(seq, entry)
}

// maxPointer is more than any segment pointer takes.
const maxPointer = 1 + 3*binary.MaxVarintLen64

// reclaimSegments gives back the space of the records no log entry points
// to any more (events whose rows were removed, records of transactions that
// did not commit): a file no entry points to is removed; a file whose
// records in use take less than three quarters of it has them copied to a
// new file, the pointers moved there, and is then removed. (Three
// quarters, not half: the identities of a deduplicating flow's state,
// which vacuum removes once a snapshot holds them, take about a third of
// each file they share with the rows the flow read.) Small files (less than
// half a file's size, one or more an open for writing) are merged the same
// way when there are two or more of them. The store is open for Reclaim
// alone. A crash at any point leaves every pointer on a whole record: the
// copies are synced before the pointers move, and the pointers are synced
// before the old file goes.
func (s *Store) reclaimSegments(ctx context.Context) error {
	type use struct {
		seq uint64
		ptr pointer
	}
	uses := map[uint64][]use{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{prefixLog}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			if item.ValueSize() > maxPointer {
				continue // an entry itself, not a pointer
			}
			seq, ok := seqOfLogKey(item.Key())
			if !ok {
				continue
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if p, ok := decodePointer(v); ok {
				uses[p.file] = append(uses[p.file], use{seq, p})
			}
		}
		return nil
	})
	if err != nil {
		return storeIO(err, "listing the segment pointers")
	}
	ids, err := segmentFiles(s.dir)
	if err != nil {
		return err
	}
	sizes := make([]int64, len(ids))
	small := 0
	for i, id := range ids {
		path := filepath.Join(s.dir, segmentName(id))
		info, err := os.Stat(path)
		if err != nil {
			return storeIO(err, "reading "+path)
		}
		if sizes[i] = info.Size(); sizes[i] < s.segs.size/2 {
			small++
		}
	}
	for i, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(s.dir, segmentName(id))
		var used int64
		for _, u := range uses[id] {
			used += segmentHeader + int64(u.ptr.length)
		}
		wasteful := used == 0 || used*4 < sizes[i]*3
		if !wasteful && (small < 2 || sizes[i] >= s.segs.size/2) {
			continue
		}
		moved := make(map[uint64][]byte, len(uses[id]))
		for _, u := range uses[id] {
			entry, err := s.segs.entry(u.seq, encodePointer(u.ptr))
			if err != nil {
				return err
			}
			if moved[u.seq], err = s.segs.put(u.seq, entry); err != nil {
				return err
			}
		}
		if err := s.segs.sync(); err != nil {
			return err
		}
		if err := s.movePointers(moved); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil {
			return storeIO(err, "removing "+path)
		}
		if err := fsync.Dir(s.dir); err != nil {
			return storeIO(err, "syncing "+s.dir)
		}
	}
	return nil
}

// movePointers sets the log entries of the events in moved to their new
// pointers, in transactions of at most a thousand, and syncs them.
func (s *Store) movePointers(moved map[uint64][]byte) error {
	seqs := slices.Sorted(maps.Keys(moved))
	for len(seqs) > 0 {
		n := min(len(seqs), 1000)
		err := s.db.Update(func(txn *badger.Txn) error {
			for _, seq := range seqs[:n] {
				if err := txn.Set(logKey(seq), moved[seq]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return storeIO(err, "moving segment pointers")
		}
		seqs = seqs[n:]
	}
	if err := s.db.Sync(); err != nil {
		return storeIO(err, "syncing the moved segment pointers")
	}
	return nil
}

func encodePointer(p pointer) []byte {
	v := make([]byte, 0, maxPointer)
	v = append(v, entrySegment)
	v = binary.AppendUvarint(v, p.file)
	v = binary.AppendUvarint(v, p.offset)
	return binary.AppendUvarint(v, p.length)
}
