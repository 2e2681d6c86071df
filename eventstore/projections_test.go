package eventstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// history appends a varied log: batches of several flows across resets and
// imports, table resets, flow progress, a refused Append, and plain events.
func history(t *testing.T, s *Store) {
	t.Helper()
	for round := range 3 {
		for _, f := range []string{"a", "b", "c"} {
			gen := int64(round)
			if round > 0 {
				mustAppend(t, s, reset(f, gen))
			}
			for id := range int64(5) {
				start, end := fmt.Sprint(id*10), fmt.Sprint(id*10+10)
				mustAppend(t, s, planned(f, gen, id, start, end))
				if f == "c" {
					mustAppend(t, s, delivered(f, gen, id))
				} else {
					mustAppend(t, s, committed(f, gen, id, end), progress(f, "t_"+f, domain.FlowRunning))
				}
			}
			mustAppend(t, s, progress(f, "t_"+f, domain.FlowCompleted))
		}
		mustAppend(t, s, tableReset("t_a", int64(round+1)), drained("b", int64(round)), progress("c", "t_c", domain.FlowFailed))
		_, err := s.Append(context.Background(), ev(domain.EventFlowProgress, "a", "t_a", "u", "poison"))
		wantCode(t, err, domain.CodeFlowFailed)
	}
	mustAppend(t, s, imported("d", 0, `{"p":1}`), planned("d", 0, 0, `{"p":1}`, `{"p":2}`))
	for i := range 50 {
		mustAppend(t, s, ev(domain.EventHookProgress, "", "", fmt.Sprint("u", i%4), ""))
	}
}

func TestRebuildAndVerify(t *testing.T) {
	s := openTest(t, WithProjectors(countProjector{name: "count"}))
	history(t, s)
	ctx := context.Background()
	if err := s.VerifyProjections(ctx); err != nil {
		t.Fatalf("live projections: %v", err)
	}
	before, err := s.ProjectionDigest()
	if err != nil {
		t.Fatal(err)
	}
	ckBefore, _ := s.Checkpoint("a")
	if ckBefore.Generation != 2 || ckBefore.NextBatchID != 5 {
		t.Fatalf("checkpoint of a = %+v", ckBefore)
	}

	if err := s.RebuildProjections(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := s.ProjectionDigest()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("digest after rebuild %s, before %s", after, before)
	}
	if err := s.VerifyProjections(ctx); err != nil {
		t.Fatalf("rebuilt projections: %v", err)
	}
	if got := len(scanAll(t, s, Filter{Flow: "a"})); got == 0 {
		t.Fatal("flow index empty after rebuild")
	}
	// Appends go on after a rebuild.
	mustAppend(t, s, committed("d", 0, 0, `{"p":2}`))
	ck, _ := s.Checkpoint("d")
	if string(ck.Offset) != `{"p":2}` || !ck.Imported || ck.NextBatchID != 1 {
		t.Fatalf("checkpoint of d = %+v", ck)
	}
	if d, _ := s.ProjectionDigest(); d == before {
		t.Fatal("digest did not change with new events")
	}
}

// TestRebuildInSmallTransactions rebuilds with a transaction limit so small
// that the replay must split its chunks.
func TestRebuildInSmallTransactions(t *testing.T) {
	tiny := withBadgerOptions(func(o badger.Options) badger.Options {
		return o.WithMemTableSize(1 << 20).WithBlockCacheSize(1 << 20).WithValueThreshold(1 << 10).WithNumMemtables(2)
	})
	s := openTest(t, tiny, WithProjectors(countProjector{name: "count"}))
	for i := range 60 {
		events := make([]*domain.Event, 40)
		for j := range events {
			events[j] = ev(domain.EventFlowProgress, fmt.Sprint("flow-", i, "-", j), "d", "u", strings.Repeat("x", 100))
		}
		mustAppend(t, s, events...)
	}
	before, _ := s.ProjectionDigest()
	if err := s.RebuildProjections(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 2400 events make 3 chunks; more transactions mean chunks were split.
	if n := s.replays.Load(); n <= 3 {
		t.Errorf("the replay took %d transactions; the test wants it to split chunks", n)
	}
	if after, _ := s.ProjectionDigest(); after != before {
		t.Fatal("digest changed")
	}
	if err := s.VerifyProjections(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFindsCorruption(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(txn *badger.Txn) error
		names   []string // Names of the error, in order
	}{
		{"changed checkpoint", func(txn *badger.Txn) error {
			return txn.Set(projectionKey("state", []byte("ckpt/a")), []byte(`{"flow":"a","generation":9}`))
		}, []string{"P state ckpt/a (values differ)"}},
		{"deleted table generation", func(txn *badger.Txn) error {
			return txn.Delete(projectionKey("state", []byte("tgen/t_a")))
		}, []string{"P state tgen/t_a (in the replay, not stored)"}},
		{"extra projection key", func(txn *badger.Txn) error {
			return txn.Set(projectionKey("count", []byte("n/ghost")), binary.BigEndian.AppendUint64(nil, 1))
		}, []string{"P count n/ghost (stored, not in the replay)"}},
		{"deleted index entry", func(txn *badger.Txn) error {
			return txn.Delete(indexKey(indexFlow, "b", 20))
		}, []string{"I F b 20 (in the replay, not stored)"}},
		{"many", func(txn *badger.Txn) error {
			for i := range 12 {
				if err := txn.Set(projectionKey("count", fmt.Appendf(nil, "n/x%02d", i)), nil); err != nil {
					return err
				}
			}
			return nil
		}, []string{
			"P count n/x00 (stored, not in the replay)", "P count n/x01 (stored, not in the replay)",
			"P count n/x02 (stored, not in the replay)", "P count n/x03 (stored, not in the replay)",
			"P count n/x04 (stored, not in the replay)", "P count n/x05 (stored, not in the replay)",
			"P count n/x06 (stored, not in the replay)", "P count n/x07 (stored, not in the replay)",
			"P count n/x08 (stored, not in the replay)", "P count n/x09 (stored, not in the replay)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, WithProjectors(countProjector{name: "count"}))
			history(t, s)
			ctx := context.Background()
			before, _ := s.ProjectionDigest()
			if err := s.db.Update(tc.corrupt); err != nil {
				t.Fatal(err)
			}
			if d, _ := s.ProjectionDigest(); d == before {
				t.Error("digest did not see the corruption")
			}
			err := s.VerifyProjections(ctx)
			wantCode(t, err, domain.CodeProjectionMismatch)
			de := err.(*domain.Error)
			if strings.Join(de.Names, "|") != strings.Join(tc.names, "|") {
				t.Errorf("Names = %q, want %q", de.Names, tc.names)
			}
			for _, n := range tc.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("message does not name %q: %v", n, err)
				}
			}
			// A rebuild repairs it.
			if err := s.RebuildProjections(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.VerifyProjections(ctx); err != nil {
				t.Fatalf("after rebuild: %v", err)
			}
			if d, _ := s.ProjectionDigest(); d != before {
				t.Error("rebuild did not restore the digest")
			}
		})
	}
}

// TestInterruptedRebuild: a store left with the rebuild mark (a rebuild that
// did not finish) is rebuilt by the next Open.
func TestInterruptedRebuild(t *testing.T) {
	dir := t.TempDir()
	count := WithProjectors(countProjector{name: "count"})
	s, err := Open(dir, WithSyncWrites(false), smallBadger(), count)
	if err != nil {
		t.Fatal(err)
	}
	history(t, s)
	before, _ := s.ProjectionDigest()
	// What a crash halfway through leaves: the mark, and projections half gone.
	err = s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(metaRebuildKey, nil); err != nil {
			return err
		}
		return txn.Delete(projectionKey("state", []byte("ckpt/a")))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, smallBadger(), WithReadOnly(), count)
	wantCode(t, err, domain.CodeInvalidUpdateState)

	s = openAt(t, dir, count)
	if after, _ := s.ProjectionDigest(); after != before {
		t.Fatal("Open did not finish the rebuild")
	}
	if err := s.VerifyProjections(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.view("", func(txn *badger.Txn) error {
		_, err := txn.Get(metaRebuildKey)
		if err != badger.ErrKeyNotFound {
			return fmt.Errorf("rebuild mark left: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildWaitsForAppends: Appends issued during a rebuild wait and then
// commit with the next seqs.
func TestRebuildWithAppends(t *testing.T) {
	s := openTest(t, WithProjectors(countProjector{name: "count"}))
	history(t, s)
	last := s.LastSeq()
	done := make(chan error, 1)
	go func() { done <- s.RebuildProjections(context.Background()) }()
	for range 20 {
		mustAppend(t, s, ev(domain.EventFlowProgress, "z", "", "", ""))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.LastSeq() != last+20 || countOf(t, s, "count", "z") != 20 {
		t.Fatalf("LastSeq %d (want %d), count %d", s.LastSeq(), last+20, countOf(t, s, "count", "z"))
	}
	if err := s.VerifyProjections(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestScanProjection(t *testing.T) {
	s := openTest(t, WithProjectors(countProjector{name: "count"}))
	const flows = scanChunk + 300
	events := make([]*domain.Event, 0, 200)
	for i := range flows {
		events = append(events, ev(domain.EventFlowProgress, fmt.Sprintf("f%05d", i), "", "", ""))
		if len(events) == cap(events) || i == flows-1 {
			mustAppend(t, s, events...)
			events = events[:0]
		}
	}
	var keys []string
	err := s.ScanProjection("count", []byte("n/f"), func(k, v []byte) error {
		if binary.BigEndian.Uint64(v) != 1 {
			t.Fatalf("%s = %x", k, v)
		}
		keys = append(keys, string(k))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != flows || keys[0] != "n/f00000" || keys[flows-1] != fmt.Sprintf("n/f%05d", flows-1) {
		t.Fatalf("%d keys, first %q", len(keys), keys[0])
	}
	for i := 1; i < len(keys); i++ {
		if keys[i] <= keys[i-1] {
			t.Fatalf("keys out of order at %d: %q, %q", i, keys[i-1], keys[i])
		}
	}
	n := 0
	err = s.ScanProjection("count", []byte("n/f000"), func(k, v []byte) error { n++; return nil })
	if err != nil || n != 100 {
		t.Fatalf("prefix scan found %d, %v", n, err)
	}
	if v, found, err := s.Projection("count", []byte("n/f00042")); err != nil || !found || binary.BigEndian.Uint64(v) != 1 {
		t.Fatalf("Projection = %x, %v, %v", v, found, err)
	}
	if _, found, err := s.Projection("count", []byte("n/none")); err != nil || found {
		t.Fatalf("Projection of a missing key = %v, %v", found, err)
	}
	if _, found, _ := s.Projection("other", []byte("n/f00042")); found {
		t.Fatal("projector key spaces overlap")
	}
}
