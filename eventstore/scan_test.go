package eventstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/sluicehq/sluice/domain"
)

// fixture appends a log with every combination of two flows, two datasets,
// two updates and three types (seqs 1..24), in Appends of three events, plus
// four events without origin (seqs 25..28). It returns the events by seq.
func fixture(t *testing.T, s *Store) map[uint64]*domain.Event {
	t.Helper()
	byseq := map[uint64]*domain.Event{}
	var pending []*domain.Event
	flush := func() {
		if len(pending) == 0 {
			return
		}
		for i, seq := range mustAppend(t, s, pending...) {
			byseq[seq] = pending[i]
		}
		pending = nil
	}
	for _, flow := range []string{"f1", "f2"} {
		for _, ds := range []string{"d1", "d2"} {
			for _, up := range []string{"u1", "u2"} {
				for _, typ := range []domain.EventType{domain.EventFlowProgress, domain.EventPlanningInformation, domain.EventHookProgress} {
					pending = append(pending, ev(typ, flow, ds, up, fmt.Sprintf("%s/%s/%s/%s", flow, ds, up, typ)))
					if len(pending) == 3 {
						flush()
					}
				}
			}
		}
	}
	for range 4 {
		pending = append(pending, ev(domain.EventUpdateProgress, "", "", "", "no origin"))
	}
	flush()
	return byseq
}

// expect filters the fixture the slow way.
func expect(byseq map[uint64]*domain.Event, f Filter) []uint64 {
	var out []uint64
	for seq := uint64(1); seq <= uint64(len(byseq)); seq++ {
		e := byseq[seq]
		switch {
		case f.From != 0 && seq < f.From,
			f.To != 0 && seq > f.To,
			len(f.Types) > 0 && !slices.Contains(f.Types, e.Type),
			f.Flow != "" && e.Origin.FlowName != f.Flow,
			f.Dataset != "" && e.Origin.DatasetName != f.Dataset,
			f.Update != "" && e.Origin.UpdateID != f.Update:
			continue
		}
		out = append(out, seq)
	}
	return out
}

func TestScanFilters(t *testing.T) {
	s := openTest(t)
	byseq := fixture(t, s)
	if len(byseq) != 28 {
		t.Fatalf("fixture has %d events", len(byseq))
	}
	fp, pi, hp, up := domain.EventFlowProgress, domain.EventPlanningInformation, domain.EventHookProgress, domain.EventUpdateProgress
	tests := []struct {
		name string
		f    Filter
		want []uint64 // nil: as computed by expect; set for a few, written out
	}{
		{"all", Filter{}, nil},
		{"from", Filter{From: 20}, []uint64{20, 21, 22, 23, 24, 25, 26, 27, 28}},
		{"to", Filter{To: 3}, []uint64{1, 2, 3}},
		{"from to", Filter{From: 5, To: 7}, []uint64{5, 6, 7}},
		{"from past the end", Filter{From: 29}, []uint64{}},
		{"to past the end", Filter{From: 27, To: 100}, []uint64{27, 28}},
		{"one type", Filter{Types: []domain.EventType{pi}}, []uint64{2, 5, 8, 11, 14, 17, 20, 23}},
		{"two types", Filter{Types: []domain.EventType{fp, up}}, nil},
		{"type without events", Filter{Types: []domain.EventType{domain.EventTableReset}}, []uint64{}},
		{"flow", Filter{Flow: "f2"}, nil},
		{"dataset", Filter{Dataset: "d1"}, nil},
		{"update", Filter{Update: "u2"}, nil},
		{"unknown flow", Filter{Flow: "nope"}, []uint64{}},
		{"flow and dataset", Filter{Flow: "f1", Dataset: "d2"}, []uint64{7, 8, 9, 10, 11, 12}},
		{"flow dataset update type", Filter{Flow: "f2", Dataset: "d2", Update: "u1", Types: []domain.EventType{hp}}, []uint64{21}},
		{"dataset update", Filter{Dataset: "d2", Update: "u2"}, nil},
		{"update and types", Filter{Update: "u1", Types: []domain.EventType{fp, hp}}, nil},
		{"flow and range", Filter{Flow: "f1", From: 4, To: 13}, []uint64{4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"type and range", Filter{Types: []domain.EventType{up}, From: 26, To: 27}, []uint64{26, 27}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == nil {
				want = expect(byseq, tc.f)
			} else if got := expect(byseq, tc.f); !slices.Equal(got, want) && len(want) > 0 {
				t.Fatalf("test is wrong: expect gives %v", got)
			}
			got := scanAll(t, s, tc.f)
			if !slices.Equal(got, want) {
				t.Errorf("Scan(%+v) = %v, want %v", tc.f, got, want)
			}
			var tailed []uint64
			f := tc.f
			if f.To == 0 || f.To > s.LastSeq() {
				f.To = s.LastSeq() // bounded, so that Tail returns
			}
			if err := s.Tail(context.Background(), f, func(e *domain.Event) error { tailed = append(tailed, e.Seq); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tailed, want) {
				t.Errorf("Tail(%+v) = %v, want %v", f, tailed, want)
			}
		})
	}
}

// TestScanWalksIndex proves which index a filter walks: it hides one event
// from one index; a scan that walks that index misses the event, any other
// finds it.
func TestScanWalksIndex(t *testing.T) {
	s := openTest(t)
	fixture(t, s)
	const hidden = 14 // f2/d1/u1/planning_information in the fixture
	e, err := s.Get(hidden)
	if err != nil {
		t.Fatal(err)
	}
	o := e.Origin
	tests := []struct {
		name  string
		f     Filter
		walks byte // the index walked; 0 = the log
	}{
		{"flow", Filter{Flow: o.FlowName}, indexFlow},
		{"flow over dataset", Filter{Flow: o.FlowName, Dataset: o.DatasetName}, indexFlow},
		{"flow over everything", Filter{Flow: o.FlowName, Dataset: o.DatasetName, Update: o.UpdateID, Types: []domain.EventType{e.Type}}, indexFlow},
		{"dataset", Filter{Dataset: o.DatasetName}, indexDataset},
		{"dataset over update and type", Filter{Dataset: o.DatasetName, Update: o.UpdateID, Types: []domain.EventType{e.Type}}, indexDataset},
		{"update", Filter{Update: o.UpdateID}, indexUpdate},
		{"update over type", Filter{Update: o.UpdateID, Types: []domain.EventType{e.Type}}, indexUpdate},
		{"one type", Filter{Types: []domain.EventType{e.Type}}, indexType},
		{"two types walk their type indexes", Filter{Types: []domain.EventType{e.Type, domain.EventFlowProgress}}, indexType},
		{"no filter walks the log", Filter{}, 0},
		{"range only walks the log", Filter{From: hidden, To: hidden}, 0},
	}
	names := map[byte]string{indexFlow: o.FlowName, indexDataset: o.DatasetName, indexUpdate: o.UpdateID, indexType: string(e.Type)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			single := tc.walks != 0 && len(tc.f.Types) < 2 // several types: their indexes, merged
			if kind, _, ok := tc.f.index(); ok != single || (single && kind != tc.walks) {
				t.Errorf("index() = %q, %v; want %q", kind, ok, tc.walks)
			}
			for _, kind := range []byte{indexFlow, indexDataset, indexUpdate, indexType} {
				key := indexKey(kind, names[kind], hidden)
				if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(key) }); err != nil {
					t.Fatal(err)
				}
				found := slices.Contains(scanAll(t, s, tc.f), hidden)
				if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(key, nil) }); err != nil {
					t.Fatal(err)
				}
				if wantFound := kind != tc.walks; found != wantFound {
					t.Errorf("with event %d missing from index %c: found = %v, want %v", hidden, kind, found, wantFound)
				}
			}
		})
	}
	if err := s.VerifyProjections(context.Background()); err != nil {
		t.Fatalf("indexes not restored: %v", err)
	}
}

// TestScanChunks scans more events than one read transaction takes, by the
// log and by an index, with a filter that skips most of them.
func TestScanChunks(t *testing.T) {
	s := openTest(t)
	const n = 3*scanMaxExamined + 17
	events := make([]*domain.Event, 0, 500)
	for i := range n {
		flow := "rare"
		if i%100 != 0 {
			flow = "common"
		}
		events = append(events, ev(domain.EventFlowProgress, flow, "", "", ""))
		if len(events) == cap(events) || i == n-1 {
			mustAppend(t, s, events...)
			events = events[:0]
		}
	}
	if got := len(scanAll(t, s, Filter{})); got != n {
		t.Errorf("Scan of everything found %d, want %d", got, n)
	}
	if got := len(scanAll(t, s, Filter{Flow: "common"})); got != n-(n+99)/100 {
		t.Errorf("Scan by flow found %d, want %d", got, n-(n+99)/100)
	}
	rare := scanAll(t, s, Filter{Types: []domain.EventType{domain.EventFlowProgress, domain.EventHookProgress}, Flow: ""})
	if len(rare) != n {
		t.Errorf("Scan by two types found %d, want %d", len(rare), n)
	}
	var got []uint64
	err := s.Scan(context.Background(), Filter{Types: []domain.EventType{domain.EventFlowProgress, domain.EventHookProgress}}, func(e *domain.Event) error {
		if e.Origin.FlowName == "rare" {
			got = append(got, e.Seq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, seq := range got {
		if seq != uint64(100*i+1) {
			t.Fatalf("rare events at %v", got)
		}
	}
}

func TestScanStops(t *testing.T) {
	s := openTest(t)
	fixture(t, s)
	stop := errors.New("stop")
	n := 0
	err := s.Scan(context.Background(), Filter{}, func(*domain.Event) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("Scan returned %v after %d events, want stop after 5", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = s.Scan(ctx, Filter{}, func(*domain.Event) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Errorf("Scan returned %v after %d events, want context.Canceled after 3", err, n)
	}
}

// TestScanSnapshot: a Scan reads up to the last seq when it starts, even
// when fn appends.
func TestScanSnapshot(t *testing.T) {
	s := openTest(t)
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""), ev(domain.EventFlowProgress, "f", "", "", ""))
	var seen []uint64
	err := s.Scan(context.Background(), Filter{}, func(e *domain.Event) error {
		seen = append(seen, e.Seq)
		_, err := s.Append(context.Background(), ev(domain.EventFlowProgress, "f", "", "", ""))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []uint64{1, 2}) || s.LastSeq() != 4 {
		t.Fatalf("saw %v, LastSeq %d; want [1 2], 4", seen, s.LastSeq())
	}
}

func TestTail(t *testing.T) {
	s := openTest(t)
	mustAppend(t, s, ev(domain.EventFlowProgress, "a", "", "", ""), ev(domain.EventFlowProgress, "b", "", "", ""))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan uint64, 100)
	done := make(chan error, 1)
	go func() {
		done <- s.Tail(ctx, Filter{Flow: "a"}, func(e *domain.Event) error {
			got <- e.Seq
			return nil
		})
	}()
	next := func() uint64 {
		t.Helper()
		select {
		case seq := <-got:
			return seq
		case <-time.After(10 * time.Second):
			t.Fatal("Tail delivered nothing within 10s")
			return 0
		}
	}
	if seq := next(); seq != 1 {
		t.Fatalf("first tailed event %d, want 1", seq)
	}
	var want []uint64
	for i := range 20 {
		flow := "a"
		if i%2 == 1 {
			flow = "b"
		}
		seqs := mustAppend(t, s, ev(domain.EventFlowProgress, flow, "", "", ""))
		if flow == "a" {
			want = append(want, seqs[0])
		}
		if i%5 == 0 {
			time.Sleep(2 * time.Millisecond) // let Tail catch up and wait
		}
	}
	var tailed []uint64
	for range want {
		tailed = append(tailed, next())
	}
	if !slices.Equal(tailed, want) {
		t.Fatalf("Tail delivered %v, want %v", tailed, want)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Tail returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Tail did not stop on cancel")
	}
	if len(got) != 0 {
		t.Fatalf("Tail delivered extra events: %d", len(got))
	}
}

func TestTailEnds(t *testing.T) {
	t.Run("at To", func(t *testing.T) {
		s := openTest(t)
		done := make(chan error, 1)
		var seen []uint64
		go func() {
			done <- s.Tail(context.Background(), Filter{From: 2, To: 3}, func(e *domain.Event) error {
				seen = append(seen, e.Seq)
				return nil
			})
		}()
		for range 5 {
			mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""))
		}
		select {
		case err := <-done:
			if err != nil || !slices.Equal(seen, []uint64{2, 3}) {
				t.Fatalf("Tail = %v, saw %v; want nil, [2 3]", err, seen)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Tail did not end at To")
		}
	})
	t.Run("fn error", func(t *testing.T) {
		s := openTest(t)
		boom := errors.New("boom")
		done := make(chan error, 1)
		go func() {
			done <- s.Tail(context.Background(), Filter{}, func(*domain.Event) error { return boom })
		}()
		mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""))
		if err := <-done; !errors.Is(err, boom) {
			t.Fatalf("Tail = %v, want boom", err)
		}
	})
	t.Run("store closed", func(t *testing.T) {
		s, err := Open(t.TempDir(), WithSyncWrites(false), smallBadger())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Tail(context.Background(), Filter{}, func(*domain.Event) error { return nil }) }()
		time.Sleep(10 * time.Millisecond)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			wantCode(t, err, domain.CodeStoreClosed)
		case <-time.After(10 * time.Second):
			t.Fatal("Tail did not end when the store closed")
		}
	})
}

func TestWaitFor(t *testing.T) {
	s := openTest(t)
	if err := s.WaitFor(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.WaitFor(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFor on an empty log = %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.WaitFor(context.Background(), 3) }()
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""), ev(domain.EventFlowProgress, "f", "", "", ""))
	select {
	case err := <-done:
		t.Fatalf("WaitFor(3) returned %v at LastSeq 2", err)
	case <-time.After(20 * time.Millisecond):
	}
	mustAppend(t, s, ev(domain.EventFlowProgress, "f", "", "", ""))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitFor(3) did not return at LastSeq 3")
	}
	if !reflect.DeepEqual(s.LastSeq(), uint64(3)) {
		t.Fatal(s.LastSeq())
	}
}
