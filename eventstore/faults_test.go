package eventstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

var faultTrials = flag.Int("faults", 0, "fault-injection trials per store kind (default: 30, or 8 with -short)")

// TestFaultInjection damages the files of a closed and of a killed store,
// one change at a time (a byte changed, the file cut short, the file
// removed), and checks that every read either gives the exact events that
// were committed or fails with STORE_CORRUPT (or, read-only on a killed
// store, STORE_NOT_CLOSED), that reading never writes, and that an open for
// writing that refuses the store leaves it as it was.
//
// The long form: go test ./eventstore -run TestFaultInjection -faults 2000
func TestFaultInjection(t *testing.T) {
	trials := *faultTrials
	if trials == 0 {
		trials = 30
		if testing.Short() {
			trials = 8
		}
	}
	for _, kind := range []string{"closed", "killed"} {
		t.Run(kind, func(t *testing.T) {
			pristine, want := buildDamageable(t, kind == "killed")
			files := storeFileNames(t, pristine)
			t.Logf("%s store: %d events, files %v", kind, len(want), files)
			rng := rand.New(rand.NewSource(int64(len(kind))))
			for trial := range trials {
				file := files[trial%len(files)]
				dir := filepath.Join(t.TempDir(), "store")
				copyDir(t, pristine, dir)
				what := damage(t, rng, filepath.Join(dir, file))
				name := fmt.Sprintf("trial %d: %s %s", trial, file, what)

				before := digestDir(t, dir)
				checkRead(t, name+" (read-only)", dir, want, true, kind == "killed")
				if after := digestDir(t, dir); after != before {
					t.Fatalf("%s: a read-only open changed the files", name)
				}
				r, err := Check(context.Background(), dir)
				if err != nil {
					t.Fatalf("%s: Check: %v", name, err)
				}
				for _, d := range r.Damage {
					if c := d.Code; c != domain.CodeStoreCorrupt && c != domain.CodeProjectionMismatch && c != domain.CodeStoreFormat {
						t.Errorf("%s: Check reports %v", name, d)
					}
				}
				if after := digestDir(t, dir); after != before {
					t.Fatalf("%s: Check changed the files", name)
				}
				checkRead(t, name+" (read-write)", dir, want, false, false)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// buildDamageable writes a store with tables, memtable logs, value logs and
// segment files (events with row payloads from 1 KiB to 400 KiB, so that
// some go to a segment), and returns its directory and every committed event encoded.
// A killed store is a copy of the directory taken while the store is open, as
// a SIGKILL leaves it.
func buildDamageable(t *testing.T, killed bool) (string, map[uint64][]byte) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, WithSyncWrites(true), WithMemTableSize(1<<20), WithGCInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	for i := range 60 {
		rows := 1 + rng.Intn(4000)
		if i%10 == 9 {
			rows = 40000
		}
		b := intBatch(t, rows)
		p, err := domain.EncodeBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		e := ev(domain.EventBatchCommitted, "f", "t", "u", fmt.Sprint("batch ", i))
		e.Details.BatchCommitted = &domain.BatchInfo{Flow: "f", Target: "t", BatchID: int64(i), NumRows: int64(rows)}
		e.Data = p
		mustAppend(t, s, e, ev(domain.EventFlowProgress, "f", "t", "u", "progress"))
	}
	// Small events fill the memtable, so that tables are flushed.
	for i := range 3000 {
		e := ev(domain.EventFlowProgress, "f", "t", "u", fmt.Sprintf("progress %d %s", i, strings.Repeat("p", i%300)))
		mustAppend(t, s, e)
	}
	want := map[uint64][]byte{}
	err = s.Scan(context.Background(), Filter{}, func(e *domain.Event) error {
		p, err := domain.EncodeEvent(e)
		want[e.Seq] = p
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if killed {
		snap := filepath.Join(t.TempDir(), "store")
		copyDir(t, dir, snap)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if m, _ := os.ReadFile(filepath.Join(snap, markerName)); !bytes.Contains(m, []byte("state open")) {
			t.Fatalf("the killed store's marker does not say open:\n%s", m)
		}
		return snap, want
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, want
}

func intBatch(t *testing.T, rows int) *domain.Batch {
	schema := domain.NewSchema(domain.Field{Name: "n", Type: domain.TypeInt64}, domain.Field{Name: "s", Type: domain.TypeString})
	b := domain.NewBatch(schema, rows)
	for i := range rows {
		if err := b.AppendRow(domain.Int(int64(i)), domain.String(strings.Repeat("x", i%7))); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// checkRead opens the store and reads every event and payload, and checks
// the projections: exact, or STORE_CORRUPT.
func checkRead(t *testing.T, name, dir string, want map[uint64][]byte, readOnly, killed bool) {
	t.Helper()
	opts := []Option{WithGCInterval(0), WithMemTableSize(1 << 20)}
	if readOnly {
		opts = append(opts, WithReadOnly())
	}
	before := digestDir(t, dir)
	s, err := Open(dir, opts...)
	if err != nil {
		code := domain.CodeOf(err)
		if code != domain.CodeStoreCorrupt && !(killed && code == domain.CodeStoreNotClosed) {
			t.Errorf("%s: Open: %v (code %q), want STORE_CORRUPT", name, err, code)
		}
		if after := digestDir(t, dir); after != before {
			t.Errorf("%s: a refused Open changed the files", name)
		}
		return
	}
	defer s.Close()
	got := map[uint64][]byte{}
	err = s.Scan(context.Background(), Filter{}, func(e *domain.Event) error {
		if len(e.Data) > 0 {
			if _, err := domain.DecodeBatch(e.Data); err != nil {
				return err
			}
		}
		p, err := domain.EncodeEvent(e)
		got[e.Seq] = p
		return err
	})
	if err == nil {
		err = s.VerifyProjections(context.Background())
	}
	if err != nil {
		if domain.CodeOf(err) != domain.CodeStoreCorrupt {
			t.Errorf("%s: reading: %v (code %q), want STORE_CORRUPT", name, err, domain.CodeOf(err))
		}
		return
	}
	if len(got) != len(want) {
		t.Errorf("%s: read %d events, want %d, and no error", name, len(got), len(want))
		return
	}
	for seq, p := range want {
		if !bytes.Equal(got[seq], p) {
			t.Errorf("%s: event %d differs from what was committed, and no error", name, seq)
			return
		}
	}
}

// storeFileNames lists the non-empty files of a store, but the lock file
// every open takes: the files to damage.
func storeFileNames(t *testing.T, dir string) []string {
	var out []string
	for _, name := range storeFileNamesAll(t, dir) {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Size() > 0 {
			out = append(out, name)
		}
	}
	return out
}

// damage changes one byte of the file (to another value), cuts it short, or
// removes it, and says which.
func damage(t *testing.T, rng *rand.Rand, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch r := rng.Intn(10); {
	case r < 6:
		// Mostly where data is: zeros past the end of a log change nothing
		// that was committed.
		end := len(data)
		for end > 1 && data[end-1] == 0 {
			end--
		}
		i := rng.Intn(end)
		data[i] ^= byte(1 + rng.Intn(255))
		writeFile(t, path, data)
		return fmt.Sprintf("byte %d of %d changed", i, len(data))
	case r < 9:
		n := rng.Intn(len(data))
		writeFile(t, path, data[:n])
		return fmt.Sprintf("cut to %d of %d bytes", n, len(data))
	default:
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		return "removed"
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "LOCK" {
			continue
		}
		src, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// digestDir hashes the names and contents of the files of dir (but the lock
// file, which every open takes).
func digestDir(t *testing.T, dir string) string {
	h := sha256.New()
	for _, name := range storeFileNamesAll(t, dir) {
		p, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(p))
		h.Write(p)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func storeFileNamesAll(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != "LOCK" {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
