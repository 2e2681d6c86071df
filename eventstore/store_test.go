package eventstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	first := mustAppend(t, s,
		ev(domain.EventFlowProgress, "f", "", "", "one"),
		&domain.Event{Type: domain.EventCheckpointReset, Details: domain.Details{CheckpointReset: &domain.CheckpointReset{Flow: "f", Generation: 3}}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, dir)
	if s.LastSeq() != 2 {
		t.Fatalf("reopened LastSeq = %d, want 2", s.LastSeq())
	}
	e, err := s.Get(first[0])
	if err != nil || e.Message != "one" {
		t.Fatalf("Get after reopen = %+v, %v", e, err)
	}
	ck, err := s.Checkpoint("f")
	if err != nil || ck.Generation != 3 {
		t.Fatalf("checkpoint after reopen = %+v, %v", ck, err)
	}
	if seqs := mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", "three")); seqs[0] != 3 {
		t.Fatalf("seqs go on at %d, want 3", seqs[0])
	}
	if got := scanAll(t, s, Filter{Flow: "f"}); len(got) != 2 {
		t.Fatalf("flow index after reopen: %v", got)
	}
}

func TestFormatVersion(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(txn *badger.Txn) error
		code   domain.Code
	}{
		{"same version", func(*badger.Txn) error { return nil }, ""},
		{"version 1", func(txn *badger.Txn) error { return txn.Set(metaFormatKey, []byte("1")) }, ""},
		{"version 2", func(txn *badger.Txn) error { return txn.Set(metaFormatKey, []byte("2")) }, ""},
		{"newer version", func(txn *badger.Txn) error { return txn.Set(metaFormatKey, []byte(strconv.Itoa(formatVersion+1))) }, domain.CodeStoreFormat},
		{"version zero", func(txn *badger.Txn) error { return txn.Set(metaFormatKey, []byte("0")) }, domain.CodeStoreFormat},
		{"garbage version", func(txn *badger.Txn) error { return txn.Set(metaFormatKey, []byte{0xff}) }, domain.CodeStoreFormat},
		{"events without version", func(txn *badger.Txn) error { return txn.Delete(metaFormatKey) }, domain.CodeStoreFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, WithSyncWrites(false), smallBadger())
			if err != nil {
				t.Fatal(err)
			}
			mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""))
			if err := s.db.Update(tc.mutate); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open(dir, WithSyncWrites(false), smallBadger())
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				// a store this sluice may write to is marked with its version
				var got []byte
				err := s.db.View(func(txn *badger.Txn) error {
					item, err := txn.Get(metaFormatKey)
					if err == nil {
						got, err = item.ValueCopy(nil)
					}
					return err
				})
				if err != nil || string(got) != strconv.Itoa(formatVersion) {
					t.Errorf("the store is marked version %q (%v), want %d", got, err, formatVersion)
				}
				_ = s.Close()
				return
			}
			wantCode(t, err, tc.code)
			if s != nil {
				t.Fatal("Open returned a store with an error")
			}
			// The directory is not left locked: a reader gets the same
			// refusal, not STORE_LOCKED.
			_, err = Open(dir, WithSyncWrites(false), smallBadger(), WithReadOnly())
			wantCode(t, err, tc.code)
		})
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", "x"), ev(domain.EventFlowProgress, "g", "", "", "y"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro := openAt(t, dir, WithReadOnly())
	if ro.LastSeq() != 2 {
		t.Fatalf("LastSeq = %d", ro.LastSeq())
	}
	if got := scanAll(t, ro, Filter{Flow: "g"}); len(got) != 1 || got[0] != 2 {
		t.Fatalf("Scan = %v", got)
	}
	_, err = ro.Append(context.Background(), ev(domain.EventFlowProgress, "f", "", "", ""))
	wantCode(t, err, domain.CodeStoreIO)
	wantCode(t, ro.RebuildProjections(context.Background()), domain.CodeStoreIO)
	if err := ro.VerifyProjections(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A second reader may share the directory.
	ro2 := openAt(t, dir, WithReadOnly())
	if ro2.LastSeq() != 2 {
		t.Fatal(ro2.LastSeq())
	}
}

func TestOpenOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		code domain.Code
	}{
		{"max group 0", []Option{WithMaxGroup(0)}, domain.CodeInvalidDefinition},
		{"negative gc", []Option{WithGCInterval(-time.Second)}, domain.CodeInvalidDefinition},
		{"nil bus is the default bus", []Option{WithBus(nil, nil)}, ""},
		{"nil projector", []Option{WithProjectors(nil)}, domain.CodeInvalidDefinition},
		{"projector named state", []Option{WithProjectors(countProjector{name: "state"})}, domain.CodeDuplicateIdentifiers},
		{"two projectors one name", []Option{WithProjectors(countProjector{name: "c"}), WithProjectors(countProjector{name: "c"})}, domain.CodeDuplicateIdentifiers},
		{"empty projector name", []Option{WithProjectors(countProjector{name: ""})}, domain.CodeInvalidName},
		{"NUL in projector name", []Option{WithProjectors(countProjector{name: "a\x00"})}, domain.CodeInvalidName},
		{"fine", []Option{WithProjectors(countProjector{name: "c"}, countProjector{name: "d"}), WithMaxGroup(1), WithGCInterval(0)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.TempDir(), append([]Option{smallBadger()}, tc.opts...)...)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tc.code)
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestLoggerAndGC routes Badger's lines to the logger at debug level and runs
// value-log GC on a short timer, which must not get in the way.
func TestLoggerAndGC(t *testing.T) {
	var buf syncBuffer
	logger := zerolog.New(&buf).Level(zerolog.DebugLevel)
	dir := t.TempDir()
	s, err := Open(dir, smallBadger(), WithSyncWrites(false), WithLogger(logger), WithGCInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		mustAppend(t, s, bigEvent("f", 64<<10))
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `"component":"badger"`) {
		t.Errorf("no Badger lines in the log:\n%s", out)
	}
	if strings.Contains(out, `"level":"info","component":"badger"`) {
		t.Errorf("Badger info lines are logged at info level:\n%s", out)
	}
	if strings.Contains(out, "value-log GC failed") {
		t.Errorf("GC failed:\n%s", out)
	}

	buf = syncBuffer{}
	s = openAt(t, dir, WithLogger(zerolog.New(&buf).Level(zerolog.InfoLevel)))
	if s.LastSeq() != 20 {
		t.Fatal(s.LastSeq())
	}
	if out := buf.String(); strings.Contains(out, `"component":"badger"`) {
		t.Errorf("Badger's chatter shows at info level:\n%s", out)
	}
}

// TestOpenAfterKillLeftEmptyLogFiles: a kill between creating a memtable or
// value log file and sizing it leaves a file of zero bytes; the store opens
// anyway, with everything committed before.
func TestOpenAfterKillLeftEmptyLogFiles(t *testing.T) {
	for _, name := range []string{"00009.mem", "000009.vlog"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(context.Background(), &domain.Event{Type: domain.EventUpdateProgress, Details: domain.Details{UpdateProgress: &domain.UpdateProgress{State: domain.UpdateRunning}}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err = Open(dir)
			if err != nil {
				t.Fatalf("open with an empty %s: %v", name, err)
			}
			defer s.Close()
			if s.LastSeq() != 1 {
				t.Errorf("last seq %d, want 1", s.LastSeq())
			}
		})
	}
}

// TestMarkerCreationKilled: a process killed while it created a store's
// marker leaves the marker written aside, whole or cut short, and no
// marker: the next open starts the store anew and it works. (Written in
// place, a cut marker would make the store STORE_CORRUPT for good.)
func TestMarkerCreationKilled(t *testing.T) {
	whole := marker{id: "c0ffee00-0000-4000-8000-000000000000", closed: true}.encode()
	for _, aside := range [][]byte{nil, whole[:len(whole)/2], whole} {
		dir := filepath.Join(t.TempDir(), "store")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, markerName+".new"), aside, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir, WithSyncWrites(false))
		if err != nil {
			t.Fatalf("open after a marker of %d bytes written aside: %v", len(aside), err)
		}
		mustAppend(t, s, ev(domain.EventFlowProgress, "f", "t", "u", "one"))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = Open(dir, WithReadOnly())
		if err != nil || s.LastSeq() != 1 {
			t.Fatalf("reopened: %v", err)
		}
		s.Close()
	}
}
