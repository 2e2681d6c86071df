package cdc

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// BenchmarkApply folds a change stream shaped like the CDC workload's in
// micro-batches of 50k, into SCD 1 and SCD 2 tables: 200k keys, ten changes
// each, close together in the stream (a key's life is short against the
// stream's), a tenth of them deletes, one in ten out of sequence order.
func BenchmarkApply(b *testing.B) {
	const keys, perKey, batchRows = 200_000, 10, 50_000
	r := rand.New(rand.NewSource(1))
	type timed struct {
		at  int
		key int64
	}
	var events []timed
	for k := 0; k < keys; k++ {
		at := r.Intn(keys * perKey)
		for range perKey {
			events = append(events, timed{at, int64(k)})
			at += r.Intn(2 * batchRows / perKey)
		}
	}
	sort.Slice(events, func(i, j int) bool { return events[i].at < events[j].at })
	cs := make([]genChange, 0, len(events))
	for i, ev := range events {
		c := genChange{key: ev.key, seq: int64(i), name: fmt.Sprintf("name %d", r.Intn(1000)), city: fmt.Sprintf("city %d", r.Intn(100)), del: r.Intn(10) == 0}
		if r.Intn(10) == 0 {
			c.seq -= int64(r.Intn(batchRows))
		}
		cs = append(cs, c)
	}
	var batches []*domain.Batch
	for at := 0; at < len(cs); at += batchRows {
		batches = append(batches, batchOf(b, cs[at:min(at+batchRows, len(cs))]))
	}
	for _, scd := range []int{1, 2} {
		b.Run(fmt.Sprintf("scd%d", scd), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := New(domain.ChangeInfo{SCDType: scd, Keys: []string{"id"}, SequenceType: domain.TypeInt64}, stored)
				if err != nil {
					b.Fatal(err)
				}
				now := time.Unix(1_700_000_000, 0)
				for _, batch := range batches {
					if _, err := s.Apply(batch, nil, now); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(cs))*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
		})
	}
}
