package eventstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// rowsEvent is a batch_committed event of batch i with a batch of about
// size bytes of random text, which compresses too little to fall under
// the value threshold: it is stored in a segment.
func rowsEvent(t testing.TB, i, size int) *domain.Event {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	b := domain.NewBatch(domain.NewSchema(domain.Field{Name: "s", Type: domain.TypeString}), size/64)
	row := make([]byte, 64)
	for range size / 64 {
		for j := range row {
			row[j] = alphabet[rng.IntN(len(alphabet))]
		}
		if err := b.AppendRow(domain.String(string(row))); err != nil {
			t.Fatal(err)
		}
	}
	p, err := domain.EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	e := ev(domain.EventBatchCommitted, "f", "t", "u", fmt.Sprint("batch ", i))
	e.Details.BatchCommitted = &domain.BatchInfo{Flow: "f", Target: "t", BatchID: int64(i), NumRows: int64(size / 64)}
	e.Data = p
	return e
}

// segmentsOf lists the names of the segment files in dir.
func segmentsOf(t *testing.T, dir string) []string {
	t.Helper()
	ids, err := segmentFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, id := range ids {
		names = append(names, segmentName(id))
	}
	return names
}

// TestSegmentDamage damages a segment file in each way a disk or a person
// can, and checks that reading the events it holds is STORE_CORRUPT naming
// the file, that the events of the other file still read whole, and that
// reading writes nothing.
func TestSegmentDamage(t *testing.T) {
	pristine := filepath.Join(t.TempDir(), "store")
	var want [][]byte
	for run := range 2 { // two opens: two segment files
		s, err := Open(pristine, WithSyncWrites(true), smallBadger())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			e := rowsEvent(t, run*3+i, 200<<10)
			mustAppend(t, s, e)
			want = append(want, e.Data)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := segmentsOf(t, pristine); len(got) != 2 {
		t.Fatalf("segment files %v, want two: one for each open that wrote", got)
	}
	first := "000001" + segmentExt
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"cut short", func(t *testing.T, path string) {
			if err := os.Truncate(path, 300<<10); err != nil {
				t.Fatal(err)
			}
		}},
		{"a byte of an entry changed", func(t *testing.T, path string) {
			flip(t, path, segmentHeader+100<<10)
		}},
		{"a record's seq changed", func(t *testing.T, path string) {
			flip(t, path, 7)
		}},
		{"replaced by the other file", func(t *testing.T, path string) {
			p, err := os.ReadFile(filepath.Join(filepath.Dir(path), "000002"+segmentExt))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, p)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			copyDir(t, pristine, dir)
			tc.damage(t, filepath.Join(dir, first))
			before := digestDir(t, dir)
			s, err := Open(dir, WithReadOnly(), smallBadger())
			if err != nil {
				t.Fatal(err)
			}
			var damaged int
			for seq := uint64(1); seq <= s.LastSeq(); seq++ {
				e, err := s.Get(seq)
				if err != nil {
					wantCode(t, err, domain.CodeStoreCorrupt)
					if !strings.Contains(err.Error(), first) {
						t.Errorf("event %d: %v does not name %s", seq, err, first)
					}
					damaged++
					continue
				}
				if !bytes.Equal(e.Data, want[e.Details.BatchCommitted.BatchID]) {
					t.Errorf("event %d reads other rows than were committed, and no error", seq)
				}
			}
			if damaged == 0 || damaged > 3 {
				t.Errorf("%d events unreadable, want 1 to 3: those of %s", damaged, first)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := Check(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Damage) == 0 {
				t.Error("Check finds no damage")
			}
			if digestDir(t, dir) != before {
				t.Error("reading the damaged store changed its files")
			}
		})
	}
}

func flip(t *testing.T, path string, at int) {
	t.Helper()
	p, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p[at] ^= 0x5a
	writeFile(t, path, p)
}

// TestSegmentsOfEachOpen checks that a store open for writing never writes
// into a file an earlier open wrote (whatever a crash left at its end), that
// it starts a file only when it has a large entry to store, and that a file
// takes no more records once full.
func TestSegmentsOfEachOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s := openAt(t, dir)
	mustAppend(t, s, rowsEvent(t, 0, 200<<10))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A crash cut the first file's last record short: the next open leaves
	// it as it is.
	path := filepath.Join(dir, "000001"+segmentExt)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("a record cut short")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	torn, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	s = openAt(t, dir, WithMemTableSize(4<<20)) // files of 16 MiB
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "t", "u", "small"))
	if got := segmentsOf(t, dir); len(got) != 1 {
		t.Errorf("segment files %v after a small event, want the first alone", got)
	}
	var bigs []*domain.Event
	for i := range 3 {
		bigs = append(bigs, rowsEvent(t, 1+i, int(s.segs.size/3)))
	}
	seqs := mustAppend(t, s, bigs...)
	if got := segmentsOf(t, dir); len(got) != 3 {
		t.Errorf("segment files %v, want three: the first, one with two entries of a third of a file, one with the third", got)
	}
	if p, _ := os.ReadFile(path); !bytes.Equal(p, torn) || int64(len(p)) <= info.Size() {
		t.Error("the first segment file changed after its store closed")
	}
	seqs = append([]uint64{1}, seqs...)
	for i, e := range append([]*domain.Event{rowsEvent(t, 0, 200<<10)}, bigs...) {
		back, err := s.Get(seqs[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.Data, e.Data) {
			t.Errorf("batch %d reads back other rows", i)
		}
	}
}

// TestReclaimSegments removes the rows of some events and reclaims their
// space: a segment file less than three quarters in use has its records
// moved to a new file, one more in use stays as it is, and every event
// reads as before.
func TestReclaimSegments(t *testing.T) {
	cases := []struct {
		name   string
		remove func(i int) bool
		// the segment bytes left, in eighths of those before
		atMost int64
	}{
		{"seven in eight removed: rewritten", func(i int) bool { return i%8 != 7 }, 1},
		{"one in three removed: rewritten (less than three quarters in use)", func(i int) bool { return i%3 == 0 }, 6},
		{"one in five removed: kept as it is", func(i int) bool { return i%5 == 0 }, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { testReclaimSegments(t, c.remove, c.atMost) })
	}
}

func testReclaimSegments(t *testing.T, remove func(i int) bool, atMost int64) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for i := range 40 {
		seqs = append(seqs, mustAppend(t, s, rowsEvent(t, i, 300<<10))...)
	}
	removed := domain.RowsRemoved{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Retention: "1h0m0s"}
	var gone []uint64
	for i, seq := range seqs {
		if remove(i) {
			gone = append(gone, seq)
		}
	}
	if _, err := s.RemoveRows(context.Background(), gone, removed); err != nil {
		t.Fatal(err)
	}
	before := map[uint64][]byte{}
	for seq := uint64(1); seq <= s.LastSeq(); seq++ {
		e, err := s.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		p, err := domain.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		before[seq] = p
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	segmentBytes := func() (n int64) {
		for _, name := range segmentsOf(t, dir) {
			info, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			n += info.Size()
		}
		return n
	}
	full := segmentBytes()
	if err := Reclaim(context.Background(), dir, smallBadger()); err != nil {
		t.Fatal(err)
	}
	if got, want := segmentBytes(), full*atMost/8+full/16; got > want || (atMost == 8 && got != full) {
		t.Errorf("segment files of %d bytes after reclaim, %d before: want at most %d", got, full, want)
	}
	r, err := Check(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Errorf("Check after reclaim: %v", r.Damage)
	}
	s, err = Open(dir, WithReadOnly(), smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seq, p := range before {
		e, err := s.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		q, err := domain.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, q) {
			t.Errorf("event %d reads otherwise after reclaim", seq)
		}
	}
}

// TestDecodePointer checks that a pointer decodes to what was encoded, and
// that anything else is not taken for one.
func TestDecodePointer(t *testing.T) {
	p := pointer{file: 3, offset: 1 << 40, length: 5 << 20}
	if got, ok := decodePointer(encodePointer(p)); !ok || got != p {
		t.Errorf("decodePointer(encodePointer(%v)) = %v, %v", p, got, ok)
	}
	for _, v := range [][]byte{
		nil, {entrySegment}, {entryCompressed, 1, 2, 3},
		append(encodePointer(p), 0),                                 // trailing byte
		encodePointer(pointer{offset: 1, length: 2}),                // file 0
		binary.AppendUvarint([]byte{entrySegment, 1, 2}, 1<<63)[:5], // cut short
	} {
		if got, ok := decodePointer(v); ok {
			t.Errorf("decodePointer(%x) = %v, true", v, got)
		}
	}
}

// TestSegmentFilesInOrder checks that segment files are listed by number,
// not by name, past the six digits of their names.
func TestSegmentFilesInOrder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"1000000.seg", "999999.seg", "000002.seg", "000010.seg", "note.txt", "0001.seg"} {
		writeFile(t, filepath.Join(dir, name), nil)
	}
	ids, err := segmentFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{2, 10, 999999, 1000000}; !slices.Equal(ids, want) {
		t.Errorf("segment files %v, want %v", ids, want)
	}
}

// TestFailedTryTakesBackItsRecords commits a group of Appends, half of
// which a projector refuses, so that the group is tried again without
// each: the records of the tries that failed are written over, and the
// segment file holds the records of the committed events alone.
func TestFailedTryTakesBackItsRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s := openAt(t, dir)
	release := holdCommitter(t, s)
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		e := rowsEvent(t, i, 256<<10)
		e.Origin.FlowName = fmt.Sprint("f", i) // each flow its first batch, in any order
		e.Details.BatchCommitted.Flow, e.Details.BatchCommitted.BatchID = e.Origin.FlowName, 0
		evs := []*domain.Event{e}
		if i%2 == 1 { // refused: a batch_committed event without its details
			evs = append(evs, ev(domain.EventBatchCommitted, "f", "t", "u", "no details"))
		}
		wg.Go(func() { _, errs[i] = s.Append(context.Background(), evs...) })
	}
	release(n)
	wg.Wait()
	var want int64
	for i, err := range errs {
		if (err != nil) != (i%2 == 1) {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
	err := s.db.View(func(txn *badger.Txn) error {
		for seq := uint64(1); seq <= s.LastSeq(); seq++ {
			item, err := txn.Get(logKey(seq))
			if err != nil {
				return err
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if p, ok := decodePointer(v); ok {
				want += segmentHeader + int64(p.length)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "000001"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != want || want == 0 {
		t.Errorf("the segment file holds %d bytes, the committed records %d", info.Size(), want)
	}
}

// TestReclaimMergesSmallFiles runs three short writers, each leaving a
// small segment file, and checks that a reclaim merges them into one whose
// events read as before.
func TestReclaimMergesSmallFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	var want [][]byte
	for i := range 3 {
		s, err := Open(dir, smallBadger())
		if err != nil {
			t.Fatal(err)
		}
		e := rowsEvent(t, i, 200<<10)
		mustAppend(t, s, e)
		want = append(want, e.Data)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := segmentsOf(t, dir); len(got) != 3 {
		t.Fatalf("segment files %v, want three", got)
	}
	if err := Reclaim(context.Background(), dir, smallBadger()); err != nil {
		t.Fatal(err)
	}
	if got := segmentsOf(t, dir); len(got) != 1 {
		t.Errorf("segment files %v after reclaim, want one", got)
	}
	s, err := Open(dir, WithReadOnly(), smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, data := range want {
		e, err := s.Get(uint64(i + 1))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Data, data) {
			t.Errorf("event %d reads otherwise after the merge", i+1)
		}
	}
}
