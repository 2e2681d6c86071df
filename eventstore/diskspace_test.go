package eventstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

// fakeDisk is a spaceGuard's view of a disk: its free bytes, a clock, and
// the number of measurements taken.
type fakeDisk struct {
	free     int64
	err      error
	now      time.Time
	measured int
}

func (d *fakeDisk) guard(reserve int64) *spaceGuard {
	g := newSpaceGuard("/data/store", reserve, zerolog.Nop())
	g.statfs = func(string) (int64, error) { d.measured++; return d.free, d.err }
	g.now = func() time.Time { return d.now }
	return g
}

func TestSpaceGuard(t *testing.T) {
	const mib = 1 << 20
	admit := func(t *testing.T, g *spaceGuard, want int, needs ...int64) error {
		t.Helper()
		n, err := g.admit(needs...)
		if n != want {
			t.Fatalf("admit(%v) admitted %d, want %d (error %v)", needs, n, want, err)
		}
		if (err == nil) != (n == len(needs)) {
			t.Fatalf("admit(%v) admitted %d with error %v", needs, n, err)
		}
		return err
	}

	t.Run("cached between measurements", func(t *testing.T) {
		d := &fakeDisk{free: 100 * mib}
		g := d.guard(16 * mib)
		admit(t, g, 1, mib)
		admit(t, g, 1, mib)
		if d.measured != 1 {
			t.Fatalf("measured %d times for two small admits within %s, want 1", d.measured, spaceCheckInterval)
		}
		d.now = d.now.Add(spaceCheckInterval)
		admit(t, g, 1, mib)
		if d.measured != 2 {
			t.Fatalf("measured %d times after %s, want 2", d.measured, spaceCheckInterval)
		}
		// An eighth of the reserve admitted since the last measurement
		// forces the next one.
		admit(t, g, 1, 2*mib-mib)
		admit(t, g, 1, 1)
		if d.measured != 3 {
			t.Fatalf("measured %d times after admitting an eighth of the reserve, want 3", d.measured)
		}
	})

	t.Run("refuses below the reserve, measuring first", func(t *testing.T) {
		d := &fakeDisk{free: 20 * mib}
		g := d.guard(16 * mib)
		admit(t, g, 1, 3*mib)
		// The cached figure says 17 MiB free: 2 MiB more would cross the
		// reserve, so the guard measures again before refusing.
		d.free = 100 * mib
		admit(t, g, 1, 2*mib)
		if d.measured != 2 {
			t.Fatalf("measured %d times, want 2 (a refusal is decided on a fresh figure)", d.measured)
		}
		d.free = 17 * mib
		err := admit(t, g, 0, 2*mib)
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.CodeStoreIO || !de.Retriable {
			t.Fatalf("refusal = %#v, want a retriable STORE_IO *domain.Error", err)
		}
		for _, want := range []string{"/data/store", fmt.Sprint(17 * mib), "17 MiB", fmt.Sprint(16 * mib), "16 MiB", "free disk space"} {
			if !strings.Contains(de.Message, want) {
				t.Errorf("message %q does not mention %q", de.Message, want)
			}
		}
		if want := "free disk space under /data/store (sluice keeps 16 MiB in reserve so that it never writes a partial commit); nothing was written"; de.Hint != want {
			t.Errorf("hint = %q, want %q", de.Hint, want)
		}
		// Freed space is seen at once, without waiting for the interval.
		d.free = 40 * mib
		admit(t, g, 1, 2*mib)
	})

	t.Run("admits a group in order", func(t *testing.T) {
		d := &fakeDisk{free: 68 * mib}
		g := d.guard(64 * mib)
		// 4 MiB above the reserve: the first two fit, the third does not,
		// and neither does the small fourth behind it.
		err := admit(t, g, 2, mib, 2*mib, 2*mib, 1)
		if !strings.Contains(err.Error(), fmt.Sprint(65*mib)+" bytes") {
			t.Errorf("refusal %q does not count the 65 MiB left after the admitted Appends", err)
		}
		// What was admitted counts until the next measurement: 65 MiB
		// are left by the cached figure.
		admit(t, g, 1, mib/2)
		if d.measured != 1 {
			t.Fatalf("measured %d times, want 1", d.measured)
		}
		admit(t, g, 1, mib)
		if d.measured != 2 {
			t.Fatalf("measured %d times, want 2 (the cached figure is below the reserve)", d.measured)
		}
	})

	t.Run("a failed measurement admits", func(t *testing.T) {
		d := &fakeDisk{err: fs.ErrPermission}
		g := d.guard(16 * mib)
		admit(t, g, 2, mib, mib)
		admit(t, g, 1, mib)
		if d.measured != 2 {
			t.Fatalf("measured %d times, want 2 (no figure to cache)", d.measured)
		}
	})

	t.Run("reserve 0 disables", func(t *testing.T) {
		d := &fakeDisk{free: 0}
		g := d.guard(0)
		admit(t, g, 1, 100*mib)
		if d.measured != 0 {
			t.Fatalf("a disabled guard measured %d times", d.measured)
		}
	})
}

func TestMinFreeBytesDefault(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		want int64
	}{
		{"store default", []Option{withBadgerOptions(nil)}, 2*8<<20 + 16<<20},
		{"test memtables", nil, 2*8<<20 + 16<<20}, // smallBadger: 8 MiB
		{"WithMemTableSize", []Option{withBadgerOptions(nil), WithMemTableSize(4 << 20)}, 24 << 20},
		{"WithMinFreeBytes", []Option{WithMinFreeBytes(5 << 20)}, 5 << 20},
		{"disabled", []Option{WithMinFreeBytes(0)}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTest(t, c.opts...)
			if got := s.space.reserve; got != c.want {
				t.Errorf("reserve = %d, want %d", got, c.want)
			}
		})
	}
	t.Run("read-only", func(t *testing.T) {
		dir := t.TempDir()
		s := openAt(t, dir)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		ro := openAt(t, dir, WithReadOnly())
		if got := ro.space.reserve; got != 0 {
			t.Errorf("reserve of a read-only store = %d, want 0", got)
		}
	})
}

func TestSizeOptionsInvalid(t *testing.T) {
	for _, opt := range []Option{WithMinFreeBytes(-1), WithMemTableSize(1 << 10), WithMemTableSize(2 << 30), WithMemTableSize(-1)} {
		_, err := Open(t.TempDir(), opt)
		wantCode(t, err, domain.CodeInvalidDefinition)
	}
}

func TestWithMemTableSize(t *testing.T) {
	s := openTest(t, withBadgerOptions(nil), WithMemTableSize(1<<20), WithValueThreshold(0))
	o := s.db.Opts()
	if o.MemTableSize != 1<<20 || o.BaseTableSize != 256<<10 || o.BaseLevelSize != 5*256<<10 ||
		o.ValueLogFileSize != 16<<20 || o.ValueThreshold != 15*(1<<20)/100 {
		t.Errorf("badger options: memtable %d, base table %d, base level %d, value log file %d, value threshold %d",
			o.MemTableSize, o.BaseTableSize, o.BaseLevelSize, o.ValueLogFileSize, o.ValueThreshold)
	}
	// An event above the threshold goes to a segment file; it still
	// commits and reads back.
	e := ev(domain.EventPlanningInformation, "f", "", "", "big")
	e.Data = make([]byte, 400<<10)
	for i := range e.Data {
		e.Data[i] = byte(i * 7)
	}
	seqs := mustAppend(t, s, e)
	got, err := s.Get(seqs[0])
	if err != nil || checksum(got.Data) != checksum(e.Data) {
		t.Fatalf("Get(%d): error %v, payload intact %v", seqs[0], err, err == nil && checksum(got.Data) == checksum(e.Data))
	}

	if o := sizeBadger(badger.DefaultOptions(""), 256<<20); o.BaseTableSize != 8<<20 || o.ValueLogFileSize != 1<<30-1 || o.ValueThreshold != 1<<20 {
		t.Errorf("badger options for 256 MiB memtables: base table %d, value log file %d, value threshold %d",
			o.BaseTableSize, o.ValueLogFileSize, o.ValueThreshold)
	}
}

// TestAppendRefusedBelowReserve drives the committer's guard with a fake
// disk: refused Appends commit nothing and consume no seqs; once space is
// freed, Appends commit again.
func TestAppendRefusedBelowReserve(t *testing.T) {
	s := openTest(t, WithMinFreeBytes(64<<20))
	mustAppend(t, s, ev(domain.EventCreateUpdate, "", "", "u1", "first"))
	d := &fakeDisk{free: 10 << 20, now: time.Now()}
	s.commitMu.Lock()
	s.space.statfs = func(string) (int64, error) { d.measured++; return d.free, nil }
	s.space.measured = false
	s.commitMu.Unlock()

	_, err := s.Append(context.Background(), ev(domain.EventCreateUpdate, "", "", "u2", "refused"))
	wantCode(t, err, domain.CodeStoreIO)
	var de *domain.Error
	if !errors.As(err, &de) || !de.Retriable || !strings.Contains(de.Message, s.Dir()) || !strings.Contains(de.Hint, "nothing was written") {
		t.Fatalf("refusal = %#v", err)
	}
	if s.LastSeq() != 1 {
		t.Fatalf("LastSeq after a refused Append = %d, want 1", s.LastSeq())
	}
	if _, err := s.Get(2); domain.CodeOf(err) != domain.CodeEventNotFound {
		t.Fatalf("Get(2) after a refused Append: %v, want EVENT_NOT_FOUND", err)
	}
	if err := s.RebuildProjections(context.Background()); domain.CodeOf(err) != domain.CodeStoreIO {
		t.Fatalf("RebuildProjections below the reserve: %v, want STORE_IO", err)
	}

	s.commitMu.Lock()
	d.free = 1 << 30
	s.commitMu.Unlock()
	if seqs := mustAppend(t, s, ev(domain.EventCreateUpdate, "", "", "u3", "after")); seqs[0] != 2 {
		t.Fatalf("Append after freeing space got seq %d, want 2", seqs[0])
	}
	if err := s.RebuildProjections(context.Background()); err != nil {
		t.Fatalf("RebuildProjections after freeing space: %v", err)
	}
}

func TestDiskFullErrors(t *testing.T) {
	enospc := &os.PathError{Op: "write", Path: "/data/000001.vlog", Err: syscall.ENOSPC}
	for _, c := range []struct {
		name string
		err  error
		full bool
	}{
		{"ENOSPC", enospc, true},
		{"wrapped ENOSPC", fmt.Errorf("while writing: %w", enospc), true},
		{"EDQUOT", &os.PathError{Op: "write", Path: "/data/MANIFEST", Err: syscall.EDQUOT}, true},
		{"ENOSPC as text", errors.New("cannot write entry: write /data/x: no space left on device"), true},
		{"EIO", &os.PathError{Op: "write", Path: "/data/x", Err: syscall.EIO}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := isDiskFull(c.err); got != c.full {
				t.Fatalf("isDiskFull = %v, want %v", got, c.full)
			}
			err := storeIO(c.err, "committing to the event store")
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != domain.CodeStoreIO || !de.Retriable {
				t.Fatalf("storeIO = %#v, want a retriable STORE_IO error", err)
			}
			if got := de.Hint == diskFullHint; got != c.full {
				t.Errorf("hint %q: disk-full hint %v, want %v", de.Hint, got, c.full)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("storeIO's error does not wrap its cause")
			}
			var oerr *domain.Error
			if !errors.As(openError("/data", false, c.err), &oerr) {
				t.Fatalf("openError is not a *domain.Error")
			}
			if got := strings.Contains(oerr.Hint, "free disk space"); got != c.full {
				t.Errorf("openError hint %q: speaks of disk space %v, want %v", oerr.Hint, got, c.full)
			}
		})
	}
}

func TestFmtBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 24 << 20: "24 MiB",
		25194496: "24.0 MiB", 144 << 20: "144 MiB", 3 << 30: "3 GiB", 5 << 40: "5 TiB", 5 << 50: "5120 TiB",
	} {
		if got := fmtBytes(n); got != want {
			t.Errorf("fmtBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// By default micro-batches of more than 64 KiB go out of Badger's tree (to
// segment files), so that the tree stays small however long the log grows.
func TestValueThreshold(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		want int64
	}{
		{[]Option{withBadgerOptions(nil)}, 64 << 10},
		{[]Option{withBadgerOptions(nil), WithValueThreshold(0)}, 1 << 20},
		{[]Option{withBadgerOptions(nil), WithValueThreshold(8 << 10)}, 8 << 10},
		{[]Option{withBadgerOptions(nil), WithValueThreshold(4 << 20), WithMemTableSize(4 << 20)}, 15 * (4 << 20) / 100},
	} {
		s := openTest(t, c.opts...)
		if got := s.db.Opts().ValueThreshold; got != c.want || s.segs.threshold != c.want {
			t.Errorf("value threshold %d, segments' %d, want %d", got, s.segs.threshold, c.want)
		}
	}
	_, err := Open(t.TempDir(), WithValueThreshold(-1))
	wantCode(t, err, domain.CodeInvalidDefinition)
}
