package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// TestExpectAll: ExpectAll, ExpectAllOrDrop and ExpectAllOrFail declare a
// rule per entry, each counted on its own; a row failing any drop rule is
// dropped; a NULL result passes.
func TestExpectAll(t *testing.T) {
	dir := t.TempDir()
	rows := `{"id": 1, "amount": 10}
{"id": 2, "amount": -5}
{"id": null, "amount": 3}
{"id": 4, "amount": null}
{"id": null, "amount": -1}
`
	if err := os.WriteFile(filepath.Join(dir, "orders.json"), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{"has_id": "id IS NOT NULL", "positive": "amount > 0"}
	tests := []struct {
		name     string
		opt      Option
		wantIDs  []int64 // NULL ids as -1
		failed   map[string]int64
		wantFail bool
	}{
		{"warn", ExpectAll(rules), []int64{-1, -1, 1, 2, 4}, map[string]int64{"has_id": 2, "positive": 2}, false},
		{"drop", ExpectAllOrDrop(rules), []int64{1, 4}, map[string]int64{"has_id": 2, "positive": 2}, false},
		{"fail", ExpectAllOrFail(rules), nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			p := New("expect_all")
			p.CreateStreamingTable("orders", tt.opt)
			p.AppendFlow("orders", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})), Name("load"))
			res := h.run(p, processors.Options{})
			if tt.wantFail {
				if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != domain.CodeExpectationViolation {
					t.Fatalf("update %s (%v), want FAILED with %s", res.State, res.Err, domain.CodeExpectationViolation)
				}
				return
			}
			if res.State != domain.UpdateCompleted {
				t.Fatalf("update %s: %v", res.State, res.Err)
			}
			var ids []int64
			err := processors.ScanTable(t.Context(), h.store, "orders", 0, func(b *domain.Batch) error {
				col := b.Columns[b.Schema.Index("id")]
				for i := range b.Len() {
					if col.IsNull(i) {
						ids = append(ids, -1)
					} else {
						ids = append(ids, col.Value(i).AsInt())
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tt.wantIDs) {
				t.Errorf("orders holds ids %v, want %v", ids, tt.wantIDs)
			}
			failed := map[string]int64{}
			for _, ev := range h.events(eventstore.Filter{Types: []domain.EventType{domain.EventFlowProgress}}) {
				if fp := ev.Details.FlowProgress; fp.Status == domain.FlowCompleted && fp.DataQuality != nil {
					for _, e := range fp.DataQuality.Expectations {
						failed[e.Name] += e.FailedRecords
						if e.PassedRecords+e.FailedRecords != 5 {
							t.Errorf("expectation %s counted %d rows, want 5", e.Name, e.PassedRecords+e.FailedRecords)
						}
					}
				}
			}
			if len(failed) != len(tt.failed) || failed["has_id"] != tt.failed["has_id"] || failed["positive"] != tt.failed["positive"] {
				t.Errorf("failed records %v, want %v (a NULL amount passes positive)", failed, tt.failed)
			}
		})
	}
}
