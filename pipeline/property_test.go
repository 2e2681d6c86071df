package pipeline

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// TestRandomDAGs is a property test over random pipelines with depends_on
// and data edges: no flow starts before all its predecessors finished, and
// flows with no predecessors, which are independent, overlap in time.
func TestRandomDAGs(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(seed)))
			n := 4 + rng.Intn(6)
			p := New("dag")
			p.MaxConcurrentFlows = 4
			preds := map[string][]string{}
			var roots []string
			for i := 0; i < n; i++ {
				table := fmt.Sprintf("t%d", i)
				flow := fmt.Sprintf("f%d", i)
				p.CreateStreamingTable(table)
				var opts []Option
				opts = append(opts, Name(flow))
				query := StreamFrom(sources.Range(0, 5))
				// Edges only go from lower to higher numbers: no cycle.
				if i > 0 && rng.Intn(3) == 0 {
					up := rng.Intn(i)
					query = ReadStream(fmt.Sprintf("t%d", up))
					preds[flow] = append(preds[flow], fmt.Sprintf("f%d", up))
				}
				for j := 0; j < i; j++ {
					if rng.Intn(4) == 0 {
						opts = append(opts, DependsOn(fmt.Sprintf("f%d", j)))
						preds[flow] = append(preds[flow], fmt.Sprintf("f%d", j))
					}
				}
				if len(preds[flow]) == 0 {
					roots = append(roots, flow)
				}
				p.AppendFlow(table, query.Transform(slow(pause)), opts...)
			}
			h := newHarness(t)
			res := h.mustComplete(p, processors.Options{})
			tl := h.timeline(res.UpdateID)
			for f, ps := range preds {
				for _, pr := range ps {
					after(t, tl, pr, f)
				}
			}
			if len(roots) >= 2 {
				overlap(t, tl, roots[0], roots[1])
			}
		})
	}
}
