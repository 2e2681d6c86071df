package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// TestSQLSelections: which SQL streaming tables over another commit their
// rows as a selection of its stored rows (they keep at least half of them,
// in order, with every column as stored), and that each reads back the
// rows its query computes, from memory and from the log alike.
func TestSQLSelections(t *testing.T) {
	dir := t.TempDir()
	var lines strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&lines, `{"id": %d, "amount": %d, "ts": "2026-01-01T10:%02d:%02dZ"}`+"\n", i, i%7-1, i/60%60, i%60)
	}
	writeFile(t, filepath.Join(dir, "in"), "1.json", lines.String())
	p, probs := loadSQL(t, dir, `
CREATE OR REFRESH STREAMING TABLE raw AS SELECT id, amount, CAST(ts AS TIMESTAMP) AS ts FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT, amount BIGINT, ts STRING');
CREATE OR REFRESH STREAMING TABLE positive AS SELECT * FROM STREAM(raw) WHERE amount >= 0;
CREATE OR REFRESH STREAMING TABLE positive_odd AS SELECT * FROM STREAM(positive) WHERE id % 3 <> 0;
CREATE OR REFRESH STREAMING TABLE rare AS SELECT * FROM STREAM(raw) WHERE amount = 5;
CREATE OR REFRESH STREAMING TABLE narrow AS SELECT id, amount FROM STREAM(raw) WHERE amount >= 0;
CREATE OR REFRESH STREAMING TABLE renamed AS SELECT id, amount AS value, ts FROM STREAM(raw);
CREATE OR REFRESH STREAMING TABLE deduped AS SELECT * FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 5 MINUTES DEDUPLICATE ON (amount);
CREATE OR REFRESH STREAMING TABLE deduped_ids AS SELECT * FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 5 MINUTES DEDUPLICATE ON (id);
`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHarness(t)
	h.mustComplete(p, processors.Options{Limit: domain.ReadLimit{MaxRows: 300}})

	want := map[string]string{"raw": "", "positive": "raw", "positive_odd": "raw", "rare": "", "narrow": "", "renamed": "", "deduped": "", "deduped_ids": "raw"}
	for table, selects := range want {
		evs := h.events(eventstore.Filter{Dataset: table, Types: []domain.EventType{domain.EventBatchCommitted}})
		if len(evs) == 0 {
			t.Fatalf("%s: no batch committed", table)
		}
		for _, ev := range evs {
			if bc := ev.Details.BatchCommitted; bc.NumRows > 0 && bc.Selects != selects {
				t.Errorf("%s: a batch of %d rows selects %q, want %q", table, bc.NumRows, bc.Selects, selects)
			}
		}
	}

	ids := map[string][]int64{}
	for i := range int64(1000) {
		amount := i%7 - 1
		if amount >= 0 {
			ids["positive"] = append(ids["positive"], i)
			ids["narrow"] = append(ids["narrow"], i)
			if i%3 != 0 {
				ids["positive_odd"] = append(ids["positive_odd"], i)
			}
		}
		if amount == 5 {
			ids["rare"] = append(ids["rare"], i)
		}
		ids["raw"] = append(ids["raw"], i)
		ids["renamed"] = append(ids["renamed"], i)
		ids["deduped_ids"] = append(ids["deduped_ids"], i)
	}
	for table, rows := range ids {
		if got := h.table(table); !slices.Equal(got, rows) {
			t.Errorf("%s: %d rows, want %d", table, len(got), len(rows))
		}
	}
	// A table's rows are the same, column for column, whichever way they
	// are stored: positive holds raw's rows where amount >= 0.
	if got, want := rowsOf(t, h, "positive"), filterRows(rowsOf(t, h, "raw"), func(row string) bool { return !strings.Contains(row, ",-1,") }); !slices.Equal(got, want) {
		t.Errorf("positive's rows differ from raw's where amount >= 0:\n%v\nwant\n%v", got[:3], want[:3])
	}
}

func filterRows(rows []string, keep func(string) bool) []string {
	var out []string
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
