package eventstore

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

func TestAppendGet(t *testing.T) {
	s := openTest(t)
	if got := s.LastSeq(); got != 0 {
		t.Fatalf("LastSeq of an empty store = %d, want 0", got)
	}
	batch := int64(7)
	given := time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)
	events := []*domain.Event{
		{Type: domain.EventCreateUpdate, Level: domain.LevelInfo, Message: "start",
			Origin:  domain.Origin{PipelineName: "p", UpdateID: "u1"},
			Details: domain.Details{CreateUpdate: &domain.CreateUpdate{Cause: "API_CALL", FullRefreshSelection: []string{"a"}}}},
		{ID: "fixed-id", Timestamp: given, Type: domain.EventBatchCommitted, Level: domain.LevelMetrics,
			Origin:  domain.Origin{FlowName: "f", DatasetName: "d", UpdateID: "u1", BatchID: &batch},
			Details: domain.Details{BatchCommitted: &domain.BatchInfo{Flow: "f", Target: "d", BatchID: 0, End: []byte(`{"n":3}`)}},
			Error:   &domain.ErrorInfo{Code: domain.CodeFlowFailed, Message: "m", Names: []string{"x"}},
			Data:    []byte{1, 2, 3}},
	}
	seqs := mustAppend(t, s, events...)
	if !reflect.DeepEqual(seqs, []uint64{1, 2}) {
		t.Fatalf("seqs = %v, want [1 2]", seqs)
	}
	if s.LastSeq() != 2 {
		t.Fatalf("LastSeq = %d, want 2", s.LastSeq())
	}
	for i, e := range events {
		if e.Seq != seqs[i] {
			t.Errorf("event %d: Seq = %d, want %d", i, e.Seq, seqs[i])
		}
		if e.ID == "" || e.Timestamp.IsZero() {
			t.Errorf("event %d: ID %q / Timestamp %v not filled", i, e.ID, e.Timestamp)
		}
	}
	if events[0].Timestamp.Location() != time.UTC {
		t.Errorf("filled Timestamp is in %v, want UTC", events[0].Timestamp.Location())
	}
	if events[1].ID != "fixed-id" || !events[1].Timestamp.Equal(given) {
		t.Errorf("given ID/Timestamp were replaced: %q %v", events[1].ID, events[1].Timestamp)
	}
	for i, want := range events {
		got, err := s.Get(seqs[i])
		if err != nil {
			t.Fatalf("Get(%d): %v", seqs[i], err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%d) =\n%+v\nwant\n%+v", seqs[i], got, want)
		}
	}
	for _, seq := range []uint64{0, 3, 1 << 40} {
		_, err := s.Get(seq)
		wantCode(t, err, domain.CodeEventNotFound)
	}
}

func TestAppendRefusesBadEvents(t *testing.T) {
	s := openTest(t)
	tests := []struct {
		name   string
		events []*domain.Event
		code   domain.Code
	}{
		{"nil event", []*domain.Event{ev(domain.EventFlowProgress, "f", "", "", ""), nil}, domain.CodeInvalidDefinition},
		{"no type", []*domain.Event{{Message: "x"}}, domain.CodeInvalidDefinition},
		{"NUL in flow", []*domain.Event{ev(domain.EventFlowDefinition, "a\x00b", "", "", "")}, domain.CodeInvalidName},
		{"NUL in type", []*domain.Event{ev("x\x00", "", "", "", "")}, domain.CodeInvalidName},
		{"long dataset", []*domain.Event{ev(domain.EventFlowDefinition, "", strings.Repeat("d", maxNameLen+1), "", "")}, domain.CodeInvalidName},
		{"state projector refuses missing details", []*domain.Event{ev(domain.EventBatchCommitted, "f", "", "", "")}, domain.CodeInvalidDefinition},
		{"state projector refuses missing flow", []*domain.Event{{Type: domain.EventCheckpointReset, Details: domain.Details{CheckpointReset: &domain.CheckpointReset{Generation: 1}}}}, domain.CodeInvalidDefinition},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seqs, err := s.Append(context.Background(), tc.events...)
			wantCode(t, err, tc.code)
			if seqs != nil {
				t.Errorf("seqs = %v on error", seqs)
			}
			if s.LastSeq() != 0 {
				t.Errorf("LastSeq = %d after a refused Append", s.LastSeq())
			}
		})
	}
	if seqs, err := s.Append(context.Background()); err != nil || seqs != nil {
		t.Errorf("Append() = %v, %v; want nil, nil", seqs, err)
	}
}

func TestAppendContextDone(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Append(ctx, ev(domain.EventFlowProgress, "f", "", "", ""))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a done context: %v, want context.Canceled", err)
	}

	if s.LastSeq() != 0 {
		t.Fatalf("LastSeq = %d after a canceled Append", s.LastSeq())
	}
}

// TestAppendCancelWhileQueued cancels an Append the committer has not taken:
// it returns the context's error and never commits.
func TestAppendCancelWhileQueued(t *testing.T) {
	s := openTest(t)
	s.commitMu.Lock() // the committer takes the first request and waits
	first := make(chan error, 1)
	go func() {
		_, err := s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "", "", "first"))
		first <- err
	}()
	for s.received.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	e2 := ev(domain.EventFlowProgress, "f", "", "", "second")
	go func() {
		_, err := s.Append(ctx, e2)
		second <- err
	}()
	for len(s.reqs) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled queued Append: %v, want context.Canceled", err)
	}
	s.commitMu.Unlock()
	if err := <-first; err != nil {
		t.Fatalf("first Append: %v", err)
	}
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", "third"))
	var msgs []string
	_ = s.Scan(context.Background(), Filter{}, func(e *domain.Event) error { msgs = append(msgs, e.Message); return nil })
	if !reflect.DeepEqual(msgs, []string{"first", "third"}) {
		t.Fatalf("log holds %v, want [first third]", msgs)
	}
	if e2.Seq != 0 {
		t.Errorf("canceled event has Seq %d", e2.Seq)
	}
}

// TestGroupAtomicity puts a poisoned Append in a group with good ones: it
// fails alone, leaving nothing (no log entry, no index entry, no projection
// write); the others commit together in one transaction.
func TestGroupAtomicity(t *testing.T) {
	s := openTest(t, WithProjectors(countProjector{name: "count"}))
	release := holdCommitter(t, s)
	const n = 8
	type result struct {
		i    int
		seqs []uint64
		err  error
	}
	results := make(chan result, n)
	for i := range n {
		msg := "ok"
		if i == 3 {
			msg = "poison"
		}
		go func() {
			seqs, err := s.Append(context.Background(),
				ev(domain.EventFlowProgress, "f", "d", "u", msg),
				ev(domain.EventFlowProgress, "f", "d", "u", "ok"))
			results <- result{i, seqs, err}
		}()
	}
	commitsBefore := s.commits.Load()
	release(n)
	var all []uint64
	for range n {
		r := <-results
		if r.i == 3 {
			wantCode(t, r.err, domain.CodeFlowFailed)
			if !errors.Is(r.err, errPoison) {
				t.Errorf("the projector's error is not in the chain: %v", r.err)
			}
			if !strings.Contains(r.err.Error(), `projector "count"`) {
				t.Errorf("error does not name the projector: %v", r.err)
			}
			continue
		}
		if r.err != nil {
			t.Fatalf("Append %d: %v", r.i, r.err)
		}
		all = append(all, r.seqs...)
	}
	if got := s.commits.Load() - commitsBefore; got != 1 {
		t.Errorf("the group took %d transactions, want 1", got)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	for i, seq := range all {
		if seq != uint64(i+1) {
			t.Fatalf("seqs %v are not 1..%d", all, len(all))
		}
	}
	if s.LastSeq() != uint64(2*(n-1)) {
		t.Fatalf("LastSeq = %d, want %d", s.LastSeq(), 2*(n-1))
	}
	if got := countOf(t, s, "count", "f"); got != uint64(2*(n-1)) {
		t.Errorf("count projection = %d, want %d (the poisoned Append's writes must vanish)", got, 2*(n-1))
	}
	for _, f := range []Filter{{}, {Flow: "f"}, {Dataset: "d"}, {Update: "u"}, {Types: []domain.EventType{domain.EventFlowProgress}}} {
		if got := len(scanAll(t, s, f)); got != 2*(n-1) {
			t.Errorf("Scan(%+v) finds %d events, want %d", f, got, 2*(n-1))
		}
	}
	if err := s.VerifyProjections(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestGroupCommitConcurrency appends from many goroutines: every seq is
// unique, they are consecutive, every event reads back, Appends were grouped,
// and a projector reading its own state saw every event once.
func TestGroupCommitConcurrency(t *testing.T) {
	s := openTest(t, WithProjectors(countProjector{name: "count"}), WithSyncWrites(true))
	const (
		writers   = 32
		perWriter = 40
	)
	var (
		mu   sync.Mutex
		seen = map[uint64]string{}
		wg   sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				n := 1 + i%3
				events := make([]*domain.Event, n)
				for j := range events {
					events[j] = ev(domain.EventFlowProgress, "f", "", "", "")
				}
				seqs, err := s.Append(context.Background(), events...)
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				for j := 1; j < len(seqs); j++ {
					if seqs[j] != seqs[j-1]+1 {
						t.Errorf("seqs of one Append are not consecutive: %v", seqs)
					}
				}
				mu.Lock()
				for j, seq := range seqs {
					if other, dup := seen[seq]; dup {
						t.Errorf("seq %d given twice (%s and %s)", seq, other, events[j].ID)
					}
					seen[seq] = events[j].ID
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := uint64(len(seen))
	if s.LastSeq() != total {
		t.Fatalf("LastSeq = %d, %d events appended", s.LastSeq(), total)
	}
	for seq := uint64(1); seq <= total; seq++ {
		id, ok := seen[seq]
		if !ok {
			t.Fatalf("seq %d missing: seqs are not consecutive", seq)
		}
		e, err := s.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		if e.ID != id {
			t.Fatalf("Get(%d).ID = %s, want %s", seq, e.ID, id)
		}
	}
	if got := countOf(t, s, "count", "f"); got != total {
		t.Errorf("count projection = %d, want %d", got, total)
	}
	commits := s.commits.Load()
	t.Logf("%d events in %d Appends took %d transactions", total, writers*perWriter, commits)
	if commits >= writers*perWriter {
		t.Errorf("%d Appends took %d transactions: no grouping", writers*perWriter, commits)
	}
}

// bigEvent is about size bytes of Data, below Badger's 1 MiB value threshold
// so that it counts in full against the transaction limit; the bytes are
// the same random ones in every call, so that compressing the log entry
// does not shrink them.
func bigEvent(flow string, size int) *domain.Event {
	// A delivery without a plan moves no checkpoint, so any number of these
	// commit in any order.
	e := ev(domain.EventSinkBatchDelivered, flow, "", "", "")
	e.Details.SinkBatchDelivered = &domain.SinkBatchDelivered{Flow: flow}
	e.Data = make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{}).Read(e.Data)
	return e
}

// TestTxnTooBig runs with Badger's default transaction limit (about 9.6 MB)
// and value threshold (1 MiB), so that events of 900 KiB count in full.
func TestTxnTooBig(t *testing.T) {
	const chunk = 900 << 10 // 11 of them overflow a transaction
	big := func(n int) []*domain.Event {
		out := make([]*domain.Event, n)
		for i := range out {
			out[i] = bigEvent("big", chunk)
		}
		return out
	}

	t.Run("alone", func(t *testing.T) {
		s := openTest(t, withBadgerOptions(nil), WithValueThreshold(0))
		_, err := s.Append(context.Background(), big(12)...)
		wantCode(t, err, domain.CodeTxnTooLarge)
		if s.LastSeq() != 0 {
			t.Fatalf("LastSeq = %d after a refused Append", s.LastSeq())
		}
		seqs := mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""))
		if seqs[0] != 1 {
			t.Fatalf("next Append got seq %d, want 1", seqs[0])
		}
	})

	t.Run("in a group", func(t *testing.T) {
		s := openTest(t, withBadgerOptions(nil), WithValueThreshold(0))
		release := holdCommitter(t, s)
		type result struct {
			big  bool
			seqs []uint64
			err  error
		}
		const small = 6
		results := make(chan result, small+1)
		for i := range small + 1 {
			go func() {
				if i == small/2 {
					seqs, err := s.Append(context.Background(), big(12)...)
					results <- result{true, seqs, err}
					return
				}
				seqs, err := s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "", "", ""), ev(domain.EventFlowProgress, "f", "", "", ""))
				results <- result{false, seqs, err}
			}()
		}
		release(small + 1)
		var all []uint64
		for range small + 1 {
			r := <-results
			if r.big {
				wantCode(t, r.err, domain.CodeTxnTooLarge)
				continue
			}
			if r.err != nil {
				t.Fatalf("small Append: %v", r.err)
			}
			all = append(all, r.seqs...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		for i, seq := range all {
			if seq != uint64(i+1) {
				t.Fatalf("seqs %v are not 1..%d", all, 2*small)
			}
		}
		if s.LastSeq() != 2*small {
			t.Fatalf("LastSeq = %d, want %d", s.LastSeq(), 2*small)
		}
	})

	t.Run("split group", func(t *testing.T) {
		// Two Appends that fit alone but not together commit, in two
		// transactions, with consecutive seqs.
		s := openTest(t, withBadgerOptions(nil), WithMemTableSize(64<<20), WithValueThreshold(0))
		release := holdCommitter(t, s)
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := s.Append(context.Background(), big(6)...)
				errs <- err
			}()
		}
		before := s.commits.Load()
		release(2)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if got := s.commits.Load() - before; got != 2 {
			t.Errorf("took %d transactions, want 2", got)
		}
		if s.LastSeq() != 12 || len(scanAll(t, s, Filter{Flow: "big"})) != 12 {
			t.Fatalf("LastSeq = %d, want 12 events readable", s.LastSeq())
		}
		e, err := s.Get(12)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Data, bigEvent("big", chunk).Data) {
			t.Fatalf("event 12's data does not read back")
		}
	})
}

func TestAppendAfterClose(t *testing.T) {
	s, err := Open(t.TempDir(), WithSyncWrites(false), smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "", "", ""))
	wantCode(t, err, domain.CodeStoreClosed)
	_, err = s.Get(1)
	wantCode(t, err, domain.CodeStoreClosed)
	err = s.Scan(context.Background(), Filter{}, func(*domain.Event) error { return nil })
	wantCode(t, err, domain.CodeStoreClosed)
	_, _, err = s.Projection("state", []byte("x"))
	wantCode(t, err, domain.CodeStoreClosed)
	_, err = s.Subscribe(context.Background())
	wantCode(t, err, domain.CodeStoreClosed)
}

// TestCloseDuringAppends closes the store while writers append: every Append
// either commits (and reads back after reopening) or fails with STORE_CLOSED.
func TestCloseDuringAppends(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, WithSyncWrites(false), smallBadger())
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		committed []uint64
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seqs, err := s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "", "", ""))
				if err != nil {
					if domain.CodeOf(err) != domain.CodeStoreClosed {
						t.Errorf("Append during Close: %v", err)
					}
					return
				}
				mu.Lock()
				committed = append(committed, seqs...)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s2 := openAt(t, dir)
	if s2.LastSeq() != uint64(len(committed)) {
		t.Fatalf("reopened LastSeq = %d, %d Appends reported committed", s2.LastSeq(), len(committed))
	}
}

// TestFailedCommitStopsWrites checks that after a commit fails (here, after
// Badger applied the transaction, the worst case), the store takes no more
// writes, and that reopening it reconciles LastSeq with what is on disk: the
// seqs are not reused.
func TestFailedCommitStopsWrites(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	fault := func(c *config) {
		c.commitFault = func() error {
			if fail.Load() {
				return errors.New("injected: the disk went away")
			}
			return nil
		}
	}
	s, err := Open(dir, WithSyncWrites(false), smallBadger(), fault)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "t", "u", "one"))
	fail.Store(true)
	_, err = s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "t", "u", "two"))
	wantCode(t, err, domain.CodeStoreIO)
	fail.Store(false)
	_, err = s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "t", "u", "three"))
	wantCode(t, err, domain.CodeStoreIO)
	if !strings.Contains(err.Error(), "takes no more writes") {
		t.Errorf("the Append after a failed commit: %v", err)
	}
	if got := s.LastSeq(); got != 1 {
		t.Errorf("LastSeq %d after the failed commit, want 1 (what the store knew to be committed)", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, dir)
	if got := s.LastSeq(); got != 2 {
		t.Fatalf("reopened: LastSeq %d, want 2 (the failed commit was applied)", got)
	}
	seqs := mustAppend(t, s, ev(domain.EventFlowProgress, "f", "t", "u", "four"))
	if seqs[0] != 3 {
		t.Errorf("the next Append got seq %d, want 3: a seq was reused", seqs[0])
	}
	e, err := s.Get(2)
	if err != nil || e.Message != "two" {
		t.Errorf("event 2: %v, %v", e, err)
	}
}
