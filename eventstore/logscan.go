package eventstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"syscall"
)

// Reading Badger's logs (memtable logs and value logs) as Badger's open reads
// them, to find what its open would cut (see checkLogTail). The files are
// read through a bounded buffer, never whole: a value log is mapped by Badger
// at twice its size of up to 1 GiB, mostly holes, and one of its values can
// be a whole micro-batch.
//
// The format: a 20-byte file header, then entries of meta(1) userMeta(1)
// uvarint klen, uvarint vlen, uvarint expiresAt, key, value, CRC-32C of all
// that (4, big-endian). A transaction's entries carry bitTxn and end with an
// entry carrying bitFinTxn whose value is the transaction's commit timestamp.
const (
	logHeaderSize  = 20
	bitTxn         = 1 << 6
	bitFinTxn      = 1 << 7
	maxKeyLen      = 1 << 16
	maxEntryHeader = 2 + 3*binary.MaxVarintLen64
	keptValueLen   = 64      // values up to this long are kept (a fin entry's timestamp)
	logReadChunk   = 1 << 20 // the buffer a value is checksummed through
)

// logFile is a Badger log opened for checking.
type logFile struct {
	f    *os.File
	size int64 // just past its last byte of data
}

func openLogFile(path string) (*logFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	end, err := dataExtentEnd(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &logFile{f: f, size: end}, nil
}

func (l *logFile) close() { l.f.Close() }

// dataExtentEnd returns the end of the file's last data extent, skipping the
// holes Badger's mapped files are made of past their written part; the size
// where the file system cannot tell.
func dataExtentEnd(f *os.File) (int64, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	const seekData, seekHole = 3, 4 // SEEK_DATA, SEEK_HOLE
	fd := int(f.Fd())
	var end, off int64
	for off < info.Size() {
		d, err := syscall.Seek(fd, off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			break // no data after off
		}
		if err != nil {
			return info.Size(), nil
		}
		h, err := syscall.Seek(fd, d, seekHole)
		if err != nil {
			return info.Size(), nil
		}
		end, off = h, h
	}
	return end, nil
}

// lastData returns the offset just past the last non-zero byte at or after
// from (from itself when there is none).
func (l *logFile) lastData(from int64) (int64, error) {
	buf := make([]byte, 64<<10)
	end := l.size
	for end > from {
		n := int64(len(buf))
		if end-from < n {
			n = end - from
		}
		p := buf[:n]
		if _, err := l.f.ReadAt(p, end-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for j := len(p) - 1; j >= 0; j-- {
			if p[j] != 0 {
				return end - n + int64(j) + 1, nil
			}
		}
		end -= n
	}
	return from, nil
}

// logEntry is one entry of a log: its length on disk, meta byte, key and,
// when short, value.
type logEntry struct {
	n     int64
	meta  byte
	key   []byte
	value []byte // nil for values longer than keptValueLen
}

// header reads the header and key of the entry at off, whatever the state
// of its value and checksum; n is the header's length.
func (l *logFile) header(off, limit int64) (hdr []byte, klen, vlen uint64, n int, ok bool) {
	buf := make([]byte, maxEntryHeader)
	if limit-off < int64(len(buf)) {
		buf = buf[:max(limit-off, 0)]
	}
	if _, err := l.f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) || len(buf) < 2 {
		return nil, 0, 0, 0, false
	}
	n = 2
	var lens [3]uint64
	for i := range lens {
		v, k := binary.Uvarint(buf[n:])
		if k <= 0 {
			return nil, 0, 0, 0, false
		}
		lens[i], n = v, n+k
	}
	return buf[:n], lens[0], lens[1], n, true
}

// entry reads and checksums the entry at off, which must end by limit.
func (l *logFile) entry(off, limit int64) (logEntry, bool) {
	hdr, klen, vlen, n, ok := l.header(off, limit)
	if !ok || klen > maxKeyLen || uint64(off)+uint64(n)+klen+vlen+4 > uint64(limit) {
		return logEntry{}, false
	}
	if hdr[0] == 0 && klen == 0 && vlen == 0 {
		return logEntry{}, false // zeros: the end of what was written
	}
	h := crc32.New(castagnoli)
	h.Write(hdr)
	key := make([]byte, klen)
	if _, err := l.f.ReadAt(key, off+int64(n)); err != nil {
		return logEntry{}, false
	}
	h.Write(key)
	var value []byte
	valueAt := off + int64(n) + int64(klen)
	if vlen <= keptValueLen {
		value = make([]byte, vlen)
		if _, err := l.f.ReadAt(value, valueAt); err != nil {
			return logEntry{}, false
		}
		h.Write(value)
	} else if _, err := io.CopyBuffer(h, io.NewSectionReader(l.f, valueAt, int64(vlen)), make([]byte, logReadChunk)); err != nil {
		return logEntry{}, false
	}
	var sum [4]byte
	if _, err := l.f.ReadAt(sum[:], valueAt+int64(vlen)); err != nil || h.Sum32() != binary.BigEndian.Uint32(sum[:]) {
		return logEntry{}, false
	}
	return logEntry{n: int64(n) + int64(klen) + int64(vlen) + 4, meta: hdr[0], key: key, value: value}, true
}

// validEnd returns the offset just past the last complete transaction of the
// log (or of the last entry outside a transaction), as Badger's open finds
// it, and adds to seqs, when not nil, the event seqs of the complete
// transactions.
func (l *logFile) validEnd(seqs *seqRange) int64 {
	if l.size <= logHeaderSize {
		return l.size
	}
	off, valid := int64(logHeaderSize), int64(logHeaderSize)
	var txnTs uint64
	var txnSeqs seqRange
	for off < l.size {
		e, ok := l.entry(off, l.size)
		if !ok {
			break
		}
		off += e.n
		if seq, ok := seqOfLogKey(userKey(e.key)); ok {
			txnSeqs.add(seq)
		}
		switch {
		case e.meta&bitTxn != 0:
			if len(e.key) < 8 {
				return valid
			}
			ts := ^binary.BigEndian.Uint64(e.key[len(e.key)-8:]) // Badger stores MaxUint64-ts
			if txnTs == 0 {
				txnTs = ts
			}
			if ts != txnTs {
				return valid
			}
		case e.meta&bitFinTxn != 0:
			ts, err := strconv.ParseUint(string(e.value), 10, 64)
			if err != nil || ts != txnTs {
				return valid
			}
			txnTs, valid = 0, off
			if seqs != nil && txnSeqs.hi > 0 {
				seqs.add(txnSeqs.lo)
				seqs.add(txnSeqs.hi)
			}
			txnSeqs = seqRange{}
		default:
			if txnTs != 0 {
				return valid
			}
			valid = off
		}
	}
	return valid
}

// memLogSeqs returns the range of event seqs of the complete transactions of
// a memtable log.
func memLogSeqs(path string) (seqRange, error) {
	l, err := openLogFile(path)
	if err != nil {
		return seqRange{}, err
	}
	defer l.close()
	var seqs seqRange
	l.validEnd(&seqs)
	return seqs, nil
}

// checkLogTail reads a Badger log as Badger's open does and finds where its
// last complete transaction ends. What follows must be what a crash leaves,
// and only after a crash (the marker of a store closed cleanly says there was
// none): entries of one transaction cut short, at most one entry cut short
// in its middle, then zeros. It is damage, where Badger's open would cut off
// committed data, when
//   - the store was closed cleanly (Badger's Close leaves whole entries only);
//   - a whole, valid entry follows a damaged one: the damage is in the middle;
//   - the transaction cut short holds an event the marker says was committed
//     (a log key whose seq is at most the marker's last seq).
func checkLogTail(path string, m marker, hasMarker bool) error {
	l, err := openLogFile(path)
	if err != nil {
		return err
	}
	defer l.close()
	if l.size <= logHeaderSize {
		return nil // empty or new: nothing to cut
	}
	end := l.validEnd(nil)
	last, err := l.lastData(end)
	if err != nil {
		return err
	}
	if end >= last {
		return nil
	}
	if hasMarker && m.closed {
		return fmt.Errorf("has a damaged entry at byte %d of %d, in a store that was closed cleanly", end, last)
	}
	committed := func(key []byte) bool {
		seq, ok := seqOfLogKey(userKey(key))
		return ok && hasMarker && seq <= m.lastSeq
	}
	// The whole entries of the transaction a crash cut short.
	for end < last {
		e, ok := l.entry(end, last)
		if !ok || e.meta&bitTxn == 0 {
			break
		}
		if committed(e.key) {
			return fmt.Errorf("lacks the end of a committed transaction at byte %d (an entry of it is damaged)", end)
		}
		end += e.n
	}
	if end < last {
		if _, klen, _, n, ok := l.header(end, last); ok && klen <= maxKeyLen && end+int64(n)+int64(klen) <= last {
			key := make([]byte, klen)
			if _, err := l.f.ReadAt(key, end+int64(n)); err == nil && committed(key) {
				return fmt.Errorf("has a damaged entry at byte %d, holding a committed event", end)
			}
		}
	}
	if off, found := l.findEntry(end+1, last); found {
		return fmt.Errorf("has a damaged entry at byte %d, followed by a valid entry at byte %d", end, off)
	}
	return nil
}

// findEntry looks for a whole, valid entry starting anywhere in [from, to),
// reading through a bounded window.
func (l *logFile) findEntry(from, to int64) (int64, bool) {
	window := make([]byte, logReadChunk+maxEntryHeader)
	for base := from; base < to; base += logReadChunk {
		n := min(int64(len(window)), to-base)
		p := window[:n]
		if _, err := l.f.ReadAt(p, base); err != nil && !errors.Is(err, io.EOF) {
			return 0, false
		}
		for i := 0; i < int(min(n, logReadChunk)); i++ {
			if plausibleEntry(p[i:]) {
				if _, ok := l.entry(base+int64(i), to); ok {
					return base + int64(i), true
				}
			}
		}
	}
	return 0, false
}

// userKey is a Badger key without its 8-byte timestamp.
func userKey(k []byte) []byte {
	if len(k) < 8 {
		return nil
	}
	return k[:len(k)-8]
}

// plausibleEntry is a cheap test of whether an entry of this store can start
// at p, so that the search for valid entries after a damaged one does not
// checksum every byte's worth of candidates: no user meta (sluice sets none),
// no meta bits Badger does not use, a key holding at least its timestamp.
func plausibleEntry(p []byte) bool {
	const knownMeta = 1<<0 | 1<<1 | 1<<2 | 1<<3 | bitTxn | bitFinTxn
	return len(p) > 6 && p[0]&^knownMeta == 0 && p[1] == 0 && p[2] >= 8
}

// checkLogHeader checks the header of a memtable or value log: its first
// eight bytes name the file's encryption key, and the store never
// encrypts, so anything but zero there is damage. Badger would refuse the
// file only after its open had begun to write.
func checkLogHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // Badger's open reports it
	}
	defer f.Close()
	var key [8]byte
	if _, err := io.ReadFull(f, key[:]); err != nil {
		return nil // too short to hold a header: Badger's open decides
	}
	if id := binary.BigEndian.Uint64(key[:]); id != 0 {
		return fmt.Errorf("has a damaged header (it names encryption key %d, and the store is not encrypted)", id)
	}
	return nil
}
