package processors

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// VerifyState rebuilds, from the log alone, the keyed state of every table
// AUTO CDC flows write and of every flow with a watermark, micro-batch by
// micro-batch, and checks after each that the rebuilt state has the
// fingerprint the flow recorded when it committed it. It returns the number
// of micro-batches checked; a difference is PROJECTION_MISMATCH, naming
// the table or flow and the event.
//
// A flow whose stream state vacuum cut (the identities before a snapshot,
// see domain.StreamState) is checked from the first snapshot after the
// cut: the state is rebuilt from it, and the snapshot and every micro-batch
// after it are checked against their fingerprints.
func VerifyState(ctx context.Context, store *eventstore.Store) (int, error) {
	type key struct {
		name string
		gen  int64
	}
	tables := map[key]*cdc.State{}
	defer func() {
		for _, s := range tables {
			_ = s.Close()
		}
	}()
	streams := map[key]*streamState{}
	defer func() {
		for _, s := range streams {
			_ = s.close()
		}
	}()
	cut := map[key]bool{} // the flows whose state vacuum cut, until their next snapshot
	checked := 0
	mismatch := func(what string, ev *domain.Event, want, got string) error {
		return domain.Errorf(domain.CodeProjectionMismatch, "%s: the state rebuilt from the log after event %d has fingerprint %s; the flow recorded %s when it committed it",
			what, ev.Seq, got, want).WithHint("the log and the state it records disagree: report it, with the storage directory")
	}
	err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventBatchCommitted, domain.EventStreamState}}, func(ev *domain.Event) error {
		if st := ev.Details.StreamState; st != nil {
			k := key{st.Flow, st.Generation}
			s := streams[k]
			if s == nil {
				s = newStreamState(st.Generation, 0)
				s.get = store.Get
				streams[k] = s
			}
			if st.IdentitiesRemoved != nil {
				cut[k] = true // the state is unknown until the next snapshot
				return nil
			}
			adopted := false
			if st.Snapshot {
				// A snapshot must be the state its flow's events built; one
				// in parts is checked at its last.
				var snap *streamState
				if st.SnapshotPart > 0 {
					var err error
					if snap, err = s.foldPart(ev); err != nil || snap == nil {
						if cut[k] && errors.Is(err, errPartsMissing) {
							return nil // vacuum cut parts of it: the next snapshot is the one to start from
						}
						return err
					}
					if err := snap.seen.failed(); err != nil {
						_ = snap.close()
						return err
					}
				} else {
					snap = newStreamState(st.Generation, 0)
					snap.get = store.Get
					if err := snap.fold(ev); err != nil {
						_ = snap.close()
						return err
					}
				}
				if cut[k] {
					// no events before it to check it against: its
					// fingerprint is checked below
					_ = s.close()
					s, streams[k], cut[k], adopted = snap, snap, false, true
				} else {
					same := snap.sameAs(s)
					_ = snap.close()
					if !same {
						return domain.Errorf(domain.CodeProjectionMismatch, "flow %q: the snapshot of its stream state in event %d differs from the state its events before built", st.Flow, ev.Seq).
							WithHint("the log and the state it records disagree: report it, with the storage directory")
					}
				}
			} else if cut[k] {
				return nil
			} else if err := s.fold(ev); err != nil {
				return err
			}
			if st.StateFingerprint != "" {
				if !st.Snapshot || adopted { // its micro-batch's own event counts it, unless vacuum cut it
					checked++
				}
				if got := s.fingerprintAs(st.StateFingerprint); got != st.StateFingerprint {
					return mismatch(fmt.Sprintf("flow %q", st.Flow), ev, st.StateFingerprint, got)
				}
			}
			return nil
		}
		bc := ev.Details.BatchCommitted
		if bc == nil || bc.Changes == nil || len(ev.Data) == 0 {
			return nil
		}
		delta, err := domain.DecodeBatch(ev.Data)
		if err != nil {
			return err
		}
		k := key{bc.Target, bc.TableGeneration}
		state := tables[k]
		_, err = foldBatch(&state, ev, delta, false, 0)
		if state != nil {
			tables[k] = state
		}
		if err != nil {
			return err
		}
		if want := bc.Changes.StateFingerprint; want != "" {
			checked++
			if got := state.Fingerprint(); got != want {
				return mismatch(fmt.Sprintf("table %q", bc.Target), ev, want, got)
			}
		}
		return nil
	})
	return checked, err
}
