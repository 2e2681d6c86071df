package eventstore

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/fsync"
)

// Stored data never lies: damage is found before it is read, and before
// Badger's own recovery can make it worse. Three layers do it:
//
//   - Badger's checksums: every block of every table (SST) is verified when
//     the store opens (checkTable) and when the block is read, and every
//     value read from the value log is verified.
//   - Our own: every event and row payload ends in a CRC-32C (domain's codec),
//     every segment record holds its event's seq, its length and a CRC-32C
//     (segments.go), and the log is read as a run of consecutive seqs, so an
//     entry that vanished is noticed.
//   - This file: before Badger opens a directory, the files it would rewrite
//     are checked. Badger's open truncates the memtable logs (.mem) and the
//     last value log (.vlog) at their first bad entry, which is right for a
//     write cut short by a crash and ruinous for a byte damaged in the
//     middle; and it deletes tables its MANIFEST does not list. So a store
//     whose logs hold data after their first bad entry, whose MANIFEST is
//     gone, or whose tables do not open, is STORE_CORRUPT and left as it is.
//     A marker file beside Badger's (markerName) says that the directory
//     holds a sluice store and up to which seq it has committed, so that a
//     store that lost its MANIFEST or a memtable log is not mistaken for an
//     empty or shorter one.

// markerName is the marker file in the store's directory.
const markerName = "SLUICE_STORE"

// marker is the content of the marker file: a fixed-size text, rewritten in
// place, ending in the CRC-32C of what precedes it.
type marker struct {
	id      string // the store's id, a UUID, for messages and backups
	lastSeq uint64 // a lower bound of the store's last committed seq
	// closed is true while no process has the store open for writing: after
	// a clean Close, Badger's logs end exactly at their last entry, so any
	// bad entry in them is damage, not a write a crash cut short.
	closed bool
}

const markerMagic = "sluice-store 1"

func (m marker) encode() []byte {
	state := "open  "
	if m.closed {
		state = "closed"
	}
	body := fmt.Sprintf("%s\nid %-36s\nlast_seq %020d\nstate %s\n", markerMagic, m.id, m.lastSeq, state)
	return fmt.Appendf([]byte(body), "crc %08x\n", crc32.Checksum([]byte(body), castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func decodeMarker(p []byte) (marker, bool) {
	i := bytes.LastIndex(p, []byte("crc "))
	if i < 0 {
		return marker{}, false
	}
	sum, err := strconv.ParseUint(strings.TrimSpace(string(p[i+4:])), 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum(p[:i], castagnoli) {
		return marker{}, false
	}
	lines := strings.Split(string(p[:i]), "\n")
	if len(lines) != 5 || lines[0] != markerMagic || !strings.HasPrefix(lines[1], "id ") ||
		!strings.HasPrefix(lines[2], "last_seq ") || !strings.HasPrefix(lines[3], "state ") {
		return marker{}, false
	}
	last, err := strconv.ParseUint(strings.TrimPrefix(lines[2], "last_seq "), 10, 64)
	if err != nil {
		return marker{}, false
	}
	m := marker{id: strings.TrimSpace(strings.TrimPrefix(lines[1], "id ")), lastSeq: last}
	switch strings.TrimSpace(strings.TrimPrefix(lines[3], "state ")) {
	case "closed":
		m.closed = true
	case "open":
	default:
		return marker{}, false
	}
	return m, true
}

// markerFile is the open marker of a writable store.
type markerFile struct {
	f *os.File
	m marker
}

// createMarker writes the marker of a new store, synced with its directory,
// before Badger writes anything: a directory with Badger's files and no
// marker is then never a store this sluice created. The marker is written
// aside and renamed into place, so that a process killed while it writes
// leaves no marker (and nothing else: the next open starts the store
// again), never one cut short, which would be damage.
func createMarker(dir, id string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return storeIO(err, "creating the storage directory "+dir)
	}
	path := filepath.Join(dir, markerName)
	aside := path + ".new"
	if err := writeSynced(aside, marker{id: id, closed: true}.encode()); err != nil {
		return storeIO(err, "writing "+aside)
	}
	if err := os.Rename(aside, path); err != nil {
		return storeIO(err, "renaming "+aside+" to "+path)
	}
	return syncDir(dir)
}

func writeSynced(path string, p []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(p); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	if err := fsync.Dir(dir); err != nil {
		return storeIO(err, "syncing "+dir)
	}
	return nil
}

// openMarker opens the marker of a writable store for updates and marks the
// store open, synced, before Badger writes anything. The open marker holds
// an exclusive lock of its own until it is closed, after Badger's files are:
// Badger's lock on the directory ends at its Close, and another process
// must not mark the store open (nor this one mark it closed over another's
// open) in between.
func openMarker(dir string, m marker) (*markerFile, error) {
	path := filepath.Join(dir, markerName)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, storeIO(err, "opening "+path)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, lockedError(dir, nil)
	}
	mf := &markerFile{f: f, m: m}
	mf.m.closed = false
	if err := mf.write(true); err != nil {
		f.Close()
		return nil, storeIO(err, "writing "+path)
	}
	return mf, nil
}

func (mf *markerFile) write(sync bool) error {
	if _, err := mf.f.WriteAt(mf.m.encode(), 0); err != nil {
		return err
	}
	if sync {
		return mf.f.Sync()
	}
	return nil
}

// record writes last as the store's last committed seq. It is called after
// every commit, without a sync: a process killed afterwards leaves it in the
// page cache, and a machine that loses it leaves an older, smaller seq, which
// is still a true lower bound.
func (mf *markerFile) record(last uint64) error {
	if last <= mf.m.lastSeq {
		return nil
	}
	mf.m.lastSeq = last
	return mf.write(false)
}

// close marks the store closed, with its last seq, and closes the marker.
// The caller has closed Badger: its files are synced.
func (mf *markerFile) close(last uint64) error {
	mf.m.lastSeq = max(mf.m.lastSeq, last)
	mf.m.closed = true
	err := mf.write(true)
	if cerr := mf.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// storeFiles is what a store's directory holds, by kind.
type storeFiles struct {
	manifest bool
	tables   []string // *.sst
	memLogs  []string // *.mem
	valueLog []string // *.vlog, in file id order
	marker   []byte   // nil when there is none
}

func (f storeFiles) hasData() bool {
	return f.manifest || len(f.tables) > 0 || len(f.memLogs) > 0 || len(f.valueLog) > 0
}

func listStore(dir string) (storeFiles, error) {
	var sf storeFiles
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return sf, nil
	}
	if err != nil {
		return sf, storeIO(err, "listing "+dir)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "MANIFEST":
			sf.manifest = true
		case strings.HasSuffix(name, ".sst"):
			sf.tables = append(sf.tables, name)
		case strings.HasSuffix(name, ".mem"):
			sf.memLogs = append(sf.memLogs, name)
		case strings.HasSuffix(name, ".vlog"):
			sf.valueLog = append(sf.valueLog, name)
		case name == markerName:
			p, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return sf, storeIO(err, "reading "+filepath.Join(dir, name))
			}
			sf.marker = nonNil(p)
		}
	}
	slices.SortFunc(sf.valueLog, func(a, b string) int { return fileID(a) - fileID(b) })
	return sf, nil
}

// fileID is the number a Badger file is named by (000012.vlog is 12).
func fileID(name string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(name, filepath.Ext(name)))
	return n
}

// corruptFile is the STORE_CORRUPT error about one file of the store.
func corruptFile(dir, file, what string) *domain.Error {
	path := filepath.Join(dir, file)
	return domain.Errorf(domain.CodeStoreCorrupt, "the storage in %s is damaged: %s %s", dir, path, what).
		WithHint("nothing was changed; restore " + dir + " from a backup, or keep it aside and run a full refresh into a new storage directory. `sluice doctor` lists every damaged file").
		WithNames(path)
}

// checkFiles checks a store's files before Badger opens them (see the top of
// this file) and returns the marker (found reports whether there is one).
// The logs are checked only before a read-write open: a read-only open does
// not cut them, and damage in them is found when it is read. The caller
// holds the directory's lock, so no other process writes the files.
func checkFiles(dir string, sf storeFiles, opts badger.Options) (m marker, found bool, err error) {
	if sf.marker != nil {
		if m, found = decodeMarker(sf.marker); !found {
			return m, false, corruptFile(dir, markerName, "is not a valid marker file (it is altered or cut short)")
		}
	}
	if found && !m.closed && opts.ReadOnly {
		// We hold the lock: the process that opened the store is gone. Badger
		// would refuse its memtable logs anyway, after having removed the
		// tables a crash left unlisted.
		return m, found, domain.Errorf(domain.CodeStoreNotClosed, "the storage in %s was left open by a process that ended without closing it", dir).
			WithHint("run the pipeline once (sluice run), which recovers the storage, then read it; `sluice doctor` checks it without writing")
	}
	if !sf.manifest && (len(sf.tables) > 0 || m.lastSeq > 0) {
		return m, found, corruptFile(dir, "MANIFEST", "is missing, while the store holds data: without it the tables cannot be read")
	}
	listed := map[uint64]bool{}
	if sf.manifest {
		// A table the MANIFEST does not list is deleted by Badger's open: only
		// a crash between writing a table and listing it leaves one that
		// holds nothing the memtable logs do not hold too.
		crashed := !found || !m.closed
		if listed, err = checkManifest(dir, sf.tables, opts, crashed); err != nil {
			return m, found, err
		}
	}
	var ranges []seqRange // the event seqs of what Badger will open
	for _, name := range sf.tables {
		if !listed[uint64(fileID(name))] {
			continue // a crash left it half written or unlisted: Badger removes it
		}
		seqs, err := checkTable(filepath.Join(dir, name))
		if err != nil {
			return m, found, corruptFile(dir, name, "does not open as a table: "+err.Error())
		}
		ranges = append(ranges, seqs)
	}
	for _, name := range sf.memLogs {
		seqs, err := memLogSeqs(filepath.Join(dir, name))
		if err != nil {
			return m, found, storeIO(err, "reading "+filepath.Join(dir, name))
		}
		ranges = append(ranges, seqs)
	}
	for _, name := range append(slices.Clone(sf.memLogs), sf.valueLog...) {
		if err := checkLogHeader(filepath.Join(dir, name)); err != nil {
			return m, found, corruptFile(dir, name, err.Error())
		}
	}
	if gap := uncovered(ranges, m.lastSeq); found && gap.hi > 0 {
		return m, found, domain.Errorf(domain.CodeStoreCorrupt,
			"the storage in %s is damaged: no file holds events %d to %d, which it committed (up to seq %d): a file is missing or was cut short", dir, gap.lo, gap.hi, m.lastSeq).
			WithHint("nothing was changed; restore " + dir + " from a backup, or run `sluice doctor` to see every damaged file")
	}
	if opts.ReadOnly {
		return m, found, nil
	}
	logs := slices.Clone(sf.memLogs)
	if n := len(sf.valueLog); n > 0 {
		logs = append(logs, sf.valueLog[n-1]) // Badger's open truncates only the last one
	}
	for _, name := range logs {
		if err := checkLogTail(filepath.Join(dir, name), m, found); err != nil {
			return m, found, corruptFile(dir, name, err.Error())
		}
	}
	return m, found, nil
}

// checkManifest reads the MANIFEST as Badger's open does and checks that it
// is whole, that every table it lists is there, and (unless a crash may have
// left some) that it lists every table there is. It returns the ids of the
// tables it lists.
func checkManifest(dir string, tables []string, opts badger.Options, crashed bool) (map[uint64]bool, error) {
	f, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		return nil, storeIO(err, "reading the MANIFEST of "+dir)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, storeIO(err, "reading the MANIFEST of "+dir)
	}
	mf, end, err := badger.ReplayManifestFile(f, opts.ExternalMagicVersion, opts)
	if err != nil {
		return nil, corruptFile(dir, "MANIFEST", "cannot be read: "+err.Error())
	}
	if end != info.Size() {
		return nil, corruptFile(dir, "MANIFEST", fmt.Sprintf("is damaged at byte %d of %d", end, info.Size()))
	}
	present := map[uint64]bool{}
	for _, name := range tables {
		present[uint64(fileID(name))] = true
	}
	listed := map[uint64]bool{}
	for id := range mf.Tables {
		if !present[id] {
			return nil, corruptFile(dir, table.IDToFilename(id), "is missing: the MANIFEST lists it")
		}
		listed[id] = true
	}
	if !crashed {
		for _, name := range tables {
			if !listed[uint64(fileID(name))] {
				return nil, corruptFile(dir, "MANIFEST", "does not list "+name+", in a store that was closed cleanly (it lost a record)")
			}
		}
	}
	return listed, nil
}

// checkTable opens a table file the way Badger does, without writing to it,
// checks every block against its checksum, and returns the range of event
// seqs the table holds (an empty range when it holds none). Badger panics on
// some damage (a table cut short); the panic is caught here, before Badger
// opens the table in a goroutine of its own where it would end the process.
func checkTable(path string) (seqs seqRange, err error) {
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return seqs, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a part of it cannot be decoded (%v)", firstLine(fmt.Sprint(r)))
		}
		_ = mf.Close(-1)
	}()
	// The index is checked against its checksum on open; VerifyChecksum
	// checks every block. Badger's own open does not verify the blocks
	// (OnBlockRead): it would do it in a goroutine, where a block too damaged
	// to decode panics and ends the process.
	t, err := table.OpenTable(mf, table.Options{ChkMode: options.NoVerification, BlockSize: 4 << 10, Compression: options.Snappy})
	if err != nil {
		return seqs, err
	}
	if err := t.VerifyChecksum(); err != nil {
		return seqs, err
	}
	for _, reversed := range []bool{false, true} {
		opt, seek := 0, y.KeyWithTs(logKey(0), ^uint64(0))
		if reversed {
			opt, seek = table.REVERSED, y.KeyWithTs(logKey(^uint64(0)), 0)
		}
		it := t.NewIterator(opt)
		it.Seek(seek)
		if it.Valid() {
			if seq, ok := seqOfLogKey(y.ParseKey(it.Key())); ok {
				seqs.add(seq)
			}
		}
		it.Close()
	}
	return seqs, nil
}

// seqRange is a range of event seqs, [lo, hi]; empty when hi is 0.
type seqRange struct{ lo, hi uint64 }

func (r *seqRange) add(seq uint64) {
	if r.hi == 0 || seq < r.lo {
		r.lo = seq
	}
	r.hi = max(r.hi, seq)
}

// uncovered returns the first seqs of 1..last that none of the ranges holds,
// as a range (empty when they cover it all). The log's keys are written once
// and Badger keeps each in one table or memtable, and a table (or memtable)
// holds every seq between its lowest and its highest, so the ranges of what
// Badger will open must together cover every committed seq.
func uncovered(ranges []seqRange, last uint64) seqRange {
	slices.SortFunc(ranges, func(a, b seqRange) int { return cmp.Compare(a.lo, b.lo) })
	next := uint64(1)
	for _, r := range ranges {
		if r.hi == 0 {
			continue
		}
		if r.lo > next && next <= last {
			return seqRange{next, min(r.lo-1, last)}
		}
		next = max(next, r.hi+1)
	}
	if next <= last {
		return seqRange{next, last}
	}
	return seqRange{}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// corruptionOf tells Badger's errors that mean damaged files from others.
func corruptionOf(err error) bool {
	if errors.Is(err, y.ErrChecksumMismatch) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	msg := err.Error()
	if isDiskFull(err) {
		return false
	}
	for _, s := range []string{"checksum", "does not exist for table", "bad magic", "corrupt", "Unable to find log file", "file with ID", "failed to initialize table", "value log truncate required", "Invalid value pointer", "Encryption key mismatch", "Invalid datakey id", "KEYREGISTRY", "key registry", "sanity text"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// truncateNeeded reports Badger's refusal to open read-only a store whose
// memtable logs a killed process left unclosed.
func truncateNeeded(err error) bool {
	return errors.Is(err, badger.ErrTruncateNeeded) || strings.Contains(err.Error(), "truncate required")
}
