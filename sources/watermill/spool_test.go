package watermill

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/domain"
)

func testMessage(n int) spooled {
	m := spooled{UUID: fmt.Sprintf("id-%d", n), Topic: "t", ReceivedAt: int64(n), Payload: []byte(fmt.Sprintf(`{"n": %d}`, n))}
	if n%3 == 0 {
		m.Metadata = [][2]string{{"k", fmt.Sprint(n)}, {"z", ""}}
	}
	return m
}

func fill(t *testing.T, sp *spool, from, to int) {
	t.Helper()
	for n := from; n < to; n += 7 {
		var group []spooled
		for i := n; i < min(n+7, to); i++ {
			group = append(group, testMessage(i))
		}
		if err := sp.append(group); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, sp *spool, from, to int64) []spooled {
	t.Helper()
	var got []spooled
	err := sp.read(from, to, func(n int64, m spooled) error {
		if n != from+int64(len(got)) {
			t.Fatalf("message %d came as %d", from+int64(len(got)), n)
		}
		got = append(got, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSpoolReadsRanges: ranges across segments and index points read
// back the messages written, after a reopen too; released segments go.
func TestSpoolReadsRanges(t *testing.T) {
	dir := t.TempDir()
	sp, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp.segmentBytes = 16 << 10
	fill(t, sp, 0, 5000)
	check := func(sp *spool) {
		for _, r := range [][2]int64{{0, 1}, {0, 5000}, {1023, 1025}, {2047, 4100}, {4999, 5000}, {3000, 3000}} {
			got := readAll(t, sp, r[0], r[1])
			var want []spooled
			for n := r[0]; n < r[1]; n++ {
				want = append(want, testMessage(int(n)))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("messages %d to %d (-want +got):\n%s", r[0], r[1], diff)
			}
		}
	}
	check(sp)
	if err := sp.close(); err != nil {
		t.Fatal(err)
	}
	if sp, err = openSpool(dir); err != nil {
		t.Fatal(err)
	}
	sp.segmentBytes = 16 << 10
	check(sp)
	if _, next, _ := sp.bounds(); next != 5000 {
		t.Fatalf("the reopened spool's next message is %d, want 5000", next)
	}
	if !sp.seen("id-4999") || sp.seen("id-5000") || sp.seen("") {
		t.Fatal("the reopened spool does not know its recent ids")
	}
	before := len(sp.segments)
	if err := sp.release(3000); err != nil {
		t.Fatal(err)
	}
	first, _, _ := sp.bounds()
	files, _ := filepath.Glob(filepath.Join(dir, "*.spool"))
	if first > 3000 || first == 0 || len(files) != len(sp.segments) || len(sp.segments) >= before {
		t.Fatalf("after releasing up to 3000 the spool starts at %d with %d of %d segments (%d files)", first, len(sp.segments), before, len(files))
	}
	readAll(t, sp, 3000, 5000)
	if err := sp.read(0, 10, func(int64, spooled) error { return nil }); domain.CodeOf(err) != domain.CodeCheckpointInvalid {
		t.Fatalf("reading released messages: %v, want %s", err, domain.CodeCheckpointInvalid)
	}
	fill(t, sp, 5000, 5100)
	if got := readAll(t, sp, 4990, 5100); len(got) != 110 || got[109].UUID != "id-5099" {
		t.Fatalf("appending after a reopen: %d messages", len(got))
	}
}

// TestSpoolCutsAnUnfinishedRecord: a record a crash cut short at the end
// of the last segment was never acknowledged; opening cuts it off.
func TestSpoolCutsAnUnfinishedRecord(t *testing.T) {
	for _, cut := range []int{1, 7, 8, 20} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			dir := t.TempDir()
			sp, err := openSpool(dir)
			if err != nil {
				t.Fatal(err)
			}
			fill(t, sp, 0, 10)
			path := sp.tail.Name()
			_ = sp.close()
			whole, _ := os.ReadFile(path)
			record := testMessage(10).encode()
			torn := append([]byte{byte(len(record)), 0, 0, 0, 1, 2, 3, 4}, record...)[:cut]
			if err := os.WriteFile(path, append(whole, torn...), 0o644); err != nil {
				t.Fatal(err)
			}
			if sp, err = openSpool(dir); err != nil {
				t.Fatal(err)
			}
			if _, next, _ := sp.bounds(); next != 10 {
				t.Fatalf("next is %d, want 10", next)
			}
			if now, _ := os.ReadFile(path); len(now) != len(whole) {
				t.Fatalf("the segment is %d bytes, want %d", len(now), len(whole))
			}
			fill(t, sp, 10, 12)
			if got := readAll(t, sp, 0, 12); len(got) != 12 || got[11].UUID != "id-11" {
				t.Fatalf("read %d messages", len(got))
			}
		})
	}
}

// TestSpoolDamageIsAnError: a damaged record, a gap between segments or a
// stray name is SOURCE_SPOOL_CORRUPT, and the files are left as they are.
func TestSpoolDamageIsAnError(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string, segments []string)
	}{
		{"flipped byte", func(t *testing.T, _ string, segs []string) {
			b, _ := os.ReadFile(segs[0])
			b[20] ^= 0xff
			if err := os.WriteFile(segs[0], b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing segment", func(t *testing.T, _ string, segs []string) {
			if err := os.Remove(segs[1]); err != nil {
				t.Fatal(err)
			}
		}},
		{"stray name", func(t *testing.T, dir string, _ []string) {
			if err := os.WriteFile(filepath.Join(dir, "x.spool"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"huge length", func(t *testing.T, _ string, segs []string) {
			b, _ := os.ReadFile(segs[0])
			b[3] = 0x7f
			if err := os.WriteFile(segs[0], b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sp, err := openSpool(dir)
			if err != nil {
				t.Fatal(err)
			}
			sp.segmentBytes = 512
			fill(t, sp, 0, 100)
			var segs []string
			for _, g := range sp.segments {
				segs = append(segs, g.path)
			}
			_ = sp.close()
			c.damage(t, dir, segs)
			before := snapshot(t, dir)
			if _, err := openSpool(dir); domain.CodeOf(err) != domain.CodeSpoolCorrupt {
				t.Fatalf("opening a damaged spool: %v, want %s", err, domain.CodeSpoolCorrupt)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Fatalf("opening changed the damaged spool:\n%s", diff)
			}
		})
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		files[e.Name()] = string(b)
	}
	return files
}

func FuzzDecodeSpooled(f *testing.F) {
	for n := range 4 {
		f.Add(testMessage(n).encode())
	}
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeSpooled(b)
		if err != nil {
			return
		}
		again, err := decodeSpooled(m.encode())
		if err != nil {
			t.Fatalf("a decoded message does not decode again: %v", err)
		}
		if diff := cmp.Diff(m, again); diff != "" {
			t.Fatalf("decode, encode, decode changed the message:\n%s", diff)
		}
	})
}

// TestSpoolFailedAppendCountsNothing: an append that fails (here, a
// write to a closed file) leaves the spool's count and ids as they were,
// so nothing unwritten is planned or taken for a redelivery; opened again,
// the spool holds what it held.
func TestSpoolFailedAppendCountsNothing(t *testing.T) {
	dir := t.TempDir()
	sp, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, sp, 0, 3)
	_ = sp.tail.Close() // the next write fails
	if err := sp.append([]spooled{testMessage(3), testMessage(4)}); domain.CodeOf(err) != domain.CodeStoreIO {
		t.Fatalf("append to a closed segment: %v, want %s", err, domain.CodeStoreIO)
	}
	if _, next, _ := sp.bounds(); next != 3 || sp.seen("id-3") {
		t.Fatalf("after the failed append next is %d and id-3 seen %v; want 3 and false", next, sp.seen("id-3"))
	}
	again, err := openSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, next, _ := again.bounds(); next != 3 {
		t.Fatalf("reopened, next is %d, want 3", next)
	}
	fill(t, again, 3, 5)
	if got := readAll(t, again, 0, 5); len(got) != 5 || got[4].UUID != "id-4" {
		t.Fatalf("read %d messages after the retry", len(got))
	}
}
