package pipeline

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// TestRandomDAGs is a property test over random pipelines with depends_on
// and data edges: no flow starts before the flows it names in depends_on
// finished; a flow that reads a table as a stream finishes after the
// table's writer, with every row of it; and flows with no predecessors,
// which are independent, overlap in time.
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
			dependsOn := map[string][]string{}
			leader := map[string]string{} // flow -> the writer of the table it streams
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
					leader[flow] = fmt.Sprintf("f%d", up)
				}
				for j := 0; j < i; j++ {
					if rng.Intn(4) == 0 {
						opts = append(opts, DependsOn(fmt.Sprintf("f%d", j)))
						dependsOn[flow] = append(dependsOn[flow], fmt.Sprintf("f%d", j))
					}
				}
				if len(dependsOn[flow]) == 0 && leader[flow] == "" {
					roots = append(roots, flow)
				}
				p.AppendFlow(table, query.Transform(slow(pause)), opts...)
			}
			h := newHarness(t)
			res := h.mustComplete(p, processors.Options{})
			tl := h.timeline(res.UpdateID)
			for f, ps := range dependsOn {
				for _, pr := range ps {
					after(t, tl, pr, f)
				}
			}
			for f, l := range leader {
				if tl[f].end < tl[l].end {
					t.Errorf("%s finished (seq %d) before %s, whose table it streams (seq %d)", f, tl[f].end, l, tl[l].end)
				}
				up, down := len(h.table("t"+l[1:])), len(h.table("t"+f[1:]))
				if up != down {
					t.Errorf("%s holds %d rows of the %d of %s", f, down, up, l)
				}
			}
			if len(roots) >= 2 {
				overlap(t, tl, roots[0], roots[1])
			}
		})
	}
}
