package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreFormat2ReadsBack opens a storage directory written by the first
// release of storage format 2 (testdata/stores/format2: streaming tables,
// expectations, a materialized view, AUTO CDC SCD 1 and 2, deduplication
// within a watermark, compressed and plain log entries) and reads it back:
// every table, the whole event log and the state rebuilt by replay must be
// what that release wrote, byte for byte. A change of the codecs or the
// storage layout must keep this test passing unchanged; its goldens are
// never updated.
func TestStoreFormat2ReadsBack(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "stores", "format2"))); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"orders", "by_country", "users_raw", "target_scd1", "target_scd2", "target_scd2_tracked", "clicks_raw", "clicks"} {
		golden(t, "format2_"+table+".jsonl", tableRows(t, dir, table))
	}
	golden(t, "format2_events.jsonl", must(t, 0, sluice, dir, "events", "--format", "jsonl").stdout)
	golden(t, "format2_changes.jsonl", tableRows(t, dir, "target_scd2", "--changes"))
	if out := must(t, 0, sluice, dir, "replay", "--verify").stdout; !strings.Contains(out, "checked after") {
		t.Errorf("replay --verify: %s", out)
	}
	if out := must(t, 0, sluice, dir, "doctor").stdout; !strings.Contains(out, "is sound") {
		t.Errorf("doctor: %s", out)
	}
}
