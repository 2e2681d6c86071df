package processors

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// stateEvent makes a stream_state event as a commit records it: the
// micro-batch's identities, or a snapshot of the state after it.
func stateEventOf(seq uint64, s *streamState, p *pendingState, snapshot bool) *domain.Event {
	st := &domain.StreamState{Flow: "f", StateFingerprint: s.fingerprint(), NumStateRows: int64(s.seen.len()), Snapshot: snapshot}
	if p.watermark != noWatermark {
		t := time.UnixMicro(p.watermark).UTC()
		st.Watermark = &t
	}
	ev := &domain.Event{Seq: seq, Type: domain.EventStreamState, Details: domain.Details{StreamState: st}}
	var b *domain.Batch
	if snapshot {
		var err error
		if b, err = snapshotOf(s); err != nil {
			panic(err)
		}
	} else {
		b = p.identities
	}
	if b != nil {
		data, err := domain.EncodeBatch(b)
		if err != nil {
			panic(err)
		}
		ev.Data = data
	}
	return ev
}

// snapshotOf is the data of a snapshot of s in one event.
func snapshotOf(s *streamState) (*domain.Batch, error) {
	ids := &domain.Column{Kind: domain.KindBytes}
	exps := &domain.Column{Kind: domain.KindTimestamp}
	s.seen.each(func(identity []byte, expires int64) {
		ids.Strs = append(ids.Strs, string(identity))
		exps.Ints = append(exps.Ints, expires)
	})
	if err := s.seen.failed(); err != nil {
		return nil, err
	}
	return domain.BatchOf(stateSchema, []*domain.Column{ids, exps})
}

// foldAll folds events as a load of the state does.
func foldAll(t *testing.T, evs []*domain.Event) *streamState {
	t.Helper()
	s := newStreamState(0, 0)
	for _, ev := range evs {
		if err := s.fold(ev); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestSnapshotDifferential applies random micro-batches (event times out of
// order, keys coming back, duplicates) to the continuous state and to the
// states folded from the log: from the first event, and from the latest
// snapshot. Every answer, count and fingerprint must agree.
func TestSnapshotDifferential(t *testing.T) {
	schema := domain.NewSchema(domain.Field{Name: "k", Type: domain.Type{Kind: domain.KindInt64}}, domain.Field{Name: "at", Type: domain.Type{Kind: domain.KindInt64}})
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		delay := time.Duration(rng.IntN(30)) * time.Microsecond
		w := &domain.Watermark{Column: "at", EventTime: eventTimeOf{"at", time.Microsecond}, Delay: delay, DedupOn: []string{"k"}}
		cont := newStreamState(0, 0)
		var evs []*domain.Event
		lastSnap := 0
		now := int64(1000)
		keys := 5 + rng.IntN(60)
		for step := 0; step < 150; step++ {
			n := 1 + rng.IntN(20)
			ks, ats := make([]int64, n), make([]int64, n)
			for i := range ks {
				ks[i] = int64(rng.IntN(keys))
				now += int64(rng.IntN(4))
				ats[i] = now - int64(rng.IntN(40)) // out of order
			}
			b, err := domain.BatchOf(schema, []*domain.Column{{Kind: domain.KindInt64, Ints: ks}, {Kind: domain.KindInt64, Ints: ats}})
			if err != nil {
				t.Fatal(err)
			}
			states := []*streamState{cont}
			if step%5 == 0 { // a load before this micro-batch: from the latest snapshot, and from the start
				states = append(states, foldAll(t, evs[lastSnap:]), foldAll(t, evs))
			}
			var answers []string
			for j, s := range states {
				out, p, err := s.apply(b, w)
				if err != nil {
					t.Fatal(err)
				}
				s.advance(p)
				ans := fmt.Sprintf("rows=%v late=%d dups=%d n=%d fp=%s", out.Columns[1].Ints, p.late, p.dups, s.seen.len(), s.fingerprint())
				answers = append(answers, ans)
				if j == 0 {
					snap := rng.IntN(5) == 0
					evs = append(evs, stateEventOf(uint64(len(evs)+1), s, p, false))
					if snap {
						evs = append(evs, stateEventOf(uint64(len(evs)+1), s, p, true))
						lastSnap = len(evs) - 1
					}
				}
			}
			if len(answers) > 1 && (answers[0] != answers[1] || answers[0] != answers[2]) {
				t.Fatalf("seed %d step %d:\n continuous    %s\n from snapshot %s\n whole fold    %s", seed, step, answers[0], answers[1], answers[2])
			}
		}
	}
}
