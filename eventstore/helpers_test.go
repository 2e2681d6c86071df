package eventstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// smallBadger shrinks Badger's memory for tests that do not depend on its
// transaction limit (every open store otherwise reserves 64 MiB memtables).
func smallBadger() Option {
	return withBadgerOptions(func(o badger.Options) badger.Options {
		return o.WithMemTableSize(8 << 20).WithBlockCacheSize(8 << 20).WithNumMemtables(2).WithNumLevelZeroTables(2).WithNumLevelZeroTablesStall(4)
	})
}

// openTest opens a store in a fresh directory, closed at the end of the test.
// Sync writes are off unless opts turn them on: tests do not cut the power.
func openTest(t testing.TB, opts ...Option) *Store {
	t.Helper()
	return openAt(t, t.TempDir(), opts...)
}

func openAt(t testing.TB, dir string, opts ...Option) *Store {
	t.Helper()
	all := append([]Option{WithSyncWrites(false), smallBadger()}, opts...)
	s, err := Open(dir, all...)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// ev builds a small event.
func ev(typ domain.EventType, flow, dataset, update, msg string) *domain.Event {
	return &domain.Event{
		Type:    typ,
		Level:   domain.LevelInfo,
		Message: msg,
		Origin:  domain.Origin{PipelineName: "p", FlowName: flow, DatasetName: dataset, UpdateID: update},
	}
}

func mustAppend(t testing.TB, s *Store, events ...*domain.Event) []uint64 {
	t.Helper()
	seqs, err := s.Append(context.Background(), events...)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return seqs
}

// wantCode fails the test unless err carries code.
func wantCode(t testing.TB, err error, code domain.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := domain.CodeOf(err); got != code {
		t.Fatalf("got error %v (code %q), want code %s", err, got, code)
	}
}

// scanAll returns the seqs Scan yields for f.
func scanAll(t testing.TB, s *Store, f Filter) []uint64 {
	t.Helper()
	var seqs []uint64
	err := s.Scan(context.Background(), f, func(e *domain.Event) error {
		seqs = append(seqs, e.Seq)
		return nil
	})
	if err != nil {
		t.Fatalf("Scan(%+v): %v", f, err)
	}
	return seqs
}

// countProjector counts events per flow under key flow (8-byte big-endian),
// reading its previous count, and refuses events whose message is "poison".
type countProjector struct{ name string }

var errPoison = errors.New("poisoned event")

func (c countProjector) Name() string { return c.name }

func (c countProjector) Apply(w ProjectionWriter, e *domain.Event) error {
	key := []byte("n/" + e.Origin.FlowName)
	v, found, err := w.Get(key)
	if err != nil {
		return err
	}
	var n uint64
	if found {
		n = binary.BigEndian.Uint64(v)
	}
	if err := w.Set(key, binary.BigEndian.AppendUint64(nil, n+1)); err != nil {
		return err
	}
	if e.Message == "poison" {
		// Written first, refused after: the write must vanish with the Append.
		return domain.Wrap(domain.CodeFlowFailed, errPoison, fmt.Sprintf("event of flow %s", e.Origin.FlowName))
	}
	return nil
}

func countOf(t testing.TB, s *Store, projector, flow string) uint64 {
	t.Helper()
	v, found, err := s.Projection(projector, []byte("n/"+flow))
	if err != nil {
		t.Fatalf("Projection: %v", err)
	}
	if !found {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// holdCommitter stops the committer before its next group and returns a
// function that waits until n Appends are queued (the committer holding the
// first, blocked) and then lets it go, so that the n Appends form one group.
func holdCommitter(t testing.TB, s *Store) (release func(n int)) {
	t.Helper()
	s.commitMu.Lock()
	base := s.received.Load()
	return func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s.received.Load() != base+1 || len(s.reqs) != n-1 {
			if time.Now().After(deadline) {
				s.commitMu.Unlock()
				t.Fatalf("only %d of %d Appends queued", int(s.received.Load()-base)+len(s.reqs), n)
			}
			time.Sleep(time.Millisecond)
		}
		s.commitMu.Unlock()
	}
}
