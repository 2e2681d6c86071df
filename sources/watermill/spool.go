package watermill

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/fsync"
)

// A spool keeps the messages taken from a broker until the micro-batches
// that read them commit. A broker forgets a message once it is
// acknowledged, and Watermill's subscribers hand out one message at a time,
// each to be acknowledged before the next: so the message is written here
// (and synced) first, and acknowledged after. Its number in the spool is
// its offset, and a micro-batch's range reads the same messages however
// often it is read.
//
// The spool is segment files named by the number of their first message
// (00000000000000000042.spool), each a sequence of records: length (4
// bytes), CRC-32C of the payload (4 bytes), payload. A segment all of whose
// messages committed is deleted.
type spool struct {
	dir string
	// segmentBytes is the size past which a new segment starts
	segmentBytes int64

	mu       sync.Mutex
	segments []segment // by first message
	next     int64     // the number of the next message
	tail     *os.File  // the last segment, appended to
	size     int64     // the last segment's size
	// every indexEvery-th message's place, so that a read seeks near its
	// start instead of reading its segment from the beginning
	index []place
	// the ids of the last messages, so that a message redelivered after
	// its acknowledgement was lost (a crash between sync and ack) is
	// taken once
	recent  []string
	ids     map[string]struct{}
	changed chan struct{} // closed, and replaced, when messages are added
}

type segment struct {
	first int64
	path  string
}

type place struct {
	n      int64
	path   string
	offset int64
}

const (
	defaultSegmentBytes = 64 << 20
	indexEvery          = 1024
	recentIDs           = 100_000
	maxRecord           = 256 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// spooled is one message as kept in the spool.
type spooled struct {
	UUID       string
	Topic      string
	ReceivedAt int64 // microseconds since the epoch
	Metadata   [][2]string
	Payload    []byte
}

func (m spooled) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(len(m.UUID)))
	b = append(b, m.UUID...)
	b = binary.AppendUvarint(b, uint64(len(m.Topic)))
	b = append(b, m.Topic...)
	b = binary.AppendVarint(b, m.ReceivedAt)
	b = binary.AppendUvarint(b, uint64(len(m.Metadata)))
	for _, kv := range m.Metadata {
		b = binary.AppendUvarint(b, uint64(len(kv[0])))
		b = append(b, kv[0]...)
		b = binary.AppendUvarint(b, uint64(len(kv[1])))
		b = append(b, kv[1]...)
	}
	return append(b, m.Payload...)
}

var errShort = errors.New("the record ends early")

func decodeSpooled(b []byte) (spooled, error) {
	var m spooled
	str := func() (string, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", errShort
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, nil
	}
	var err error
	if m.UUID, err = str(); err != nil {
		return m, err
	}
	if m.Topic, err = str(); err != nil {
		return m, err
	}
	t, k := binary.Varint(b)
	if k <= 0 {
		return m, errShort
	}
	m.ReceivedAt, b = t, b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return m, errShort
	}
	b = b[k:]
	for range n {
		key, err := str()
		if err != nil {
			return m, err
		}
		val, err := str()
		if err != nil {
			return m, err
		}
		m.Metadata = append(m.Metadata, [2]string{key, val})
	}
	m.Payload = b
	return m, nil
}

// openSpool opens (or makes) the spool in dir. A record cut short at the
// end of the last segment is a write a crash interrupted, before its
// message was acknowledged: it is cut off, and the broker delivers the
// message again. Any other damage is SOURCE_SPOOL_CORRUPT.
func openSpool(dir string) (*spool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, ioErr(err, "making the spool "+dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, ioErr(err, "listing the spool "+dir)
	}
	s := &spool{dir: dir, segmentBytes: defaultSegmentBytes, ids: map[string]struct{}{}, changed: make(chan struct{})}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".spool")
		if !ok {
			continue
		}
		first, err := strconv.ParseInt(name, 10, 64)
		if err != nil || first < 0 {
			return nil, corrupt(filepath.Join(dir, e.Name()), "its name is not the number of its first message")
		}
		s.segments = append(s.segments, segment{first, filepath.Join(dir, e.Name())})
	}
	slices.SortFunc(s.segments, func(a, b segment) int { return cmp.Compare(a.first, b.first) })
	for i, seg := range s.segments {
		last := i == len(s.segments)-1
		n, size, err := s.scan(seg, last)
		if err != nil {
			return nil, err
		}
		if !last && seg.first+n != s.segments[i+1].first {
			return nil, corrupt(seg.path, fmt.Sprintf("it holds %d messages, and the next segment does not start after them", n))
		}
		if last {
			s.next, s.size = seg.first+n, size
		}
	}
	if len(s.segments) > 0 {
		last := s.segments[len(s.segments)-1]
		if s.tail, err = os.OpenFile(last.path, os.O_WRONLY|os.O_APPEND, 0); err != nil {
			return nil, ioErr(err, "opening "+last.path)
		}
	}
	return s, nil
}

// scan reads a segment through, indexing it and remembering its ids; the
// last segment's cut-short record is cut off.
func (s *spool) scan(seg segment, last bool) (n, size int64, err error) {
	f, err := os.Open(seg.path)
	if err != nil {
		return 0, 0, ioErr(err, "opening "+seg.path)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var offset int64
	for {
		m, length, err := readRecord(r)
		if err == io.EOF {
			return n, offset, nil
		}
		if errors.Is(err, errShort) && last {
			// a write the crash cut: its message was not acknowledged
			if err := os.Truncate(seg.path, offset); err != nil {
				return 0, 0, ioErr(err, "cutting the unfinished record off "+seg.path)
			}
			return n, offset, nil
		}
		if err != nil {
			return 0, 0, corrupt(seg.path, fmt.Sprintf("the record at byte %d: %v", offset, err))
		}
		if (seg.first+n)%indexEvery == 0 {
			s.index = append(s.index, place{seg.first + n, seg.path, offset})
		}
		s.remember(m.UUID)
		offset += length
		n++
	}
}

// readRecord reads one record; errShort when the file ends inside it.
func readRecord(r *bufio.Reader) (spooled, int64, error) {
	var head [8]byte
	if k, err := io.ReadFull(r, head[:]); err != nil {
		if k == 0 && err == io.EOF {
			return spooled{}, 0, io.EOF
		}
		return spooled{}, 0, errShort
	}
	length := binary.LittleEndian.Uint32(head[:4])
	if length > maxRecord {
		return spooled{}, 0, fmt.Errorf("a length of %d bytes", length)
	}
	payload := make([]byte, length)
	if _, err := io.ReadFull(r, payload); err != nil {
		return spooled{}, 0, errShort
	}
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(head[4:]) {
		return spooled{}, 0, errors.New("its checksum does not match")
	}
	m, err := decodeSpooled(payload)
	if err != nil {
		return spooled{}, 0, err
	}
	return m, int64(8 + length), nil
}

func (s *spool) remember(id string) {
	if id == "" {
		return
	}
	if len(s.recent) == recentIDs {
		delete(s.ids, s.recent[0])
		s.recent = s.recent[1:]
	}
	s.recent = append(s.recent, id)
	s.ids[id] = struct{}{}
}

// seen reports whether a message of this id is in the spool's recent ones.
func (s *spool) seen(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok && id != ""
}

// append writes messages and syncs them: when it returns without error,
// they may be acknowledged. The spool counts them (plans see them) only
// then; after an error, the spool is to be opened again from its files.
func (s *spool) append(ms []spooled) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, size := s.next, s.size
	var index []place
	var buf []byte
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if _, err := s.tail.Write(buf); err != nil {
			return ioErr(err, "writing the spool "+s.dir)
		}
		buf = buf[:0]
		return nil
	}
	for _, m := range ms {
		if s.tail == nil || size >= s.segmentBytes {
			if err := flush(); err != nil {
				return err
			}
			if err := s.roll(next); err != nil {
				return err
			}
			size = 0
		}
		payload := m.encode()
		var head [8]byte
		binary.LittleEndian.PutUint32(head[:4], uint32(len(payload)))
		binary.LittleEndian.PutUint32(head[4:], crc32.Checksum(payload, castagnoli))
		if next%indexEvery == 0 {
			index = append(index, place{next, s.tail.Name(), size})
		}
		buf = append(append(buf, head[:]...), payload...)
		size += int64(8 + len(payload))
		next++
	}
	if err := flush(); err != nil {
		return err
	}
	if err := s.tail.Sync(); err != nil {
		return ioErr(err, "syncing the spool "+s.dir)
	}
	s.next, s.size = next, size
	s.index = append(s.index, index...)
	for _, m := range ms {
		s.remember(m.UUID)
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// roll starts a new segment at message first.
func (s *spool) roll(first int64) error {
	if s.tail != nil {
		// the group being appended is acknowledged once the new segment
		// syncs: this one's records must be on disk by then too
		if err := s.tail.Sync(); err != nil {
			return ioErr(err, "syncing a segment of "+s.dir)
		}
		if err := s.tail.Close(); err != nil {
			return ioErr(err, "closing a segment of "+s.dir)
		}
	}
	path := filepath.Join(s.dir, fmt.Sprintf("%020d.spool", first))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return ioErr(err, "making "+path)
	}
	if err := syncDir(s.dir); err != nil {
		f.Close()
		return err
	}
	s.tail = f
	s.segments = append(s.segments, segment{first, path})
	return nil
}

func syncDir(dir string) error {
	if err := fsync.Dir(dir); err != nil {
		return ioErr(err, "syncing "+dir)
	}
	return nil
}

// bounds returns the first message kept and the number of the next one, and
// a channel closed when messages are added.
func (s *spool) bounds() (first, next int64, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first = s.next
	if len(s.segments) > 0 {
		first = s.segments[0].first
	}
	return first, s.next, s.changed
}

// read calls each for the messages numbered [from, to), in order.
func (s *spool) read(from, to int64, each func(n int64, m spooled) error) error {
	s.mu.Lock()
	if from < to && (len(s.segments) == 0 || from < s.segments[0].first || to > s.next) {
		first, next := s.next, s.next
		if len(s.segments) > 0 {
			first = s.segments[0].first
		}
		s.mu.Unlock()
		return domain.Errorf(domain.CodeCheckpointInvalid, "the messages %d to %d are not in the spool %s, which holds %d to %d", from, to-1, s.dir, first, next-1).
			WithHint("the spool was deleted or replaced; run a full refresh of the flow")
	}
	// the indexed place nearest before from
	at := place{n: -1}
	for _, p := range s.index {
		if p.n <= from && p.n > at.n {
			at = p
		}
	}
	if at.n < 0 { // the start of from's segment
		i, _ := slices.BinarySearchFunc(s.segments, from, func(g segment, n int64) int {
			if g.first <= n {
				return -1
			}
			return 1
		})
		g := s.segments[i-1]
		at = place{g.first, g.path, 0}
	}
	segments := slices.Clone(s.segments)
	s.mu.Unlock()

	k := slices.IndexFunc(segments, func(g segment) bool { return g.path == at.path })
	for ; k < len(segments) && segments[k].first < to; k++ {
		g := segments[k]
		start := place{g.first, g.path, 0}
		if g.path == at.path {
			start = at
		}
		limit := int64(-1)
		if k+1 < len(segments) {
			limit = segments[k+1].first
		}
		if err := s.readSegment(start, limit, from, to, each); err != nil {
			return err
		}
	}
	return nil
}

func (s *spool) readSegment(at place, limit, from, to int64, each func(int64, spooled) error) error {
	f, err := os.Open(at.path)
	if err != nil {
		return ioErr(err, "opening "+at.path)
	}
	defer f.Close()
	if _, err := f.Seek(at.offset, io.SeekStart); err != nil {
		return ioErr(err, "reading "+at.path)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	for n := at.n; n < to && (limit < 0 || n < limit); n++ {
		m, _, err := readRecord(r)
		if err != nil {
			return corrupt(at.path, fmt.Sprintf("message %d: %v", n, err))
		}
		if n >= from {
			if err := each(n, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// release deletes the segments every message of which is before upto.
func (s *spool) release(upto int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.segments) > 1 && s.segments[1].first <= upto {
		g := s.segments[0]
		if err := os.Remove(g.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return ioErr(err, "deleting "+g.path)
		}
		s.segments = s.segments[1:]
		s.index = slices.DeleteFunc(s.index, func(p place) bool { return p.path == g.path })
	}
	return nil
}

func (s *spool) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tail == nil {
		return nil
	}
	err := s.tail.Close()
	s.tail = nil
	return err
}

func ioErr(err error, what string) error {
	return domain.Wrap(domain.CodeStoreIO, err, what).AsRetriable()
}

func corrupt(path, why string) error {
	return domain.Errorf(domain.CodeSpoolCorrupt, "the spool file %s is damaged: %s", path, why)
}
