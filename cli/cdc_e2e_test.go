package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSQLAutoCDCExamples runs the examples of the AUTO CDC documentation
// through the CLI (SCD type 1, SCD type 2, SCD type 2 with history tracked
// on a subset, and, in its own pipeline, SCD type 1 with a truncate), then a
// second update bringing a late change and a new one: the tables, the
// change feed and the metrics match the golden files, and the first
// update's tables read back as of its end.
func TestSQLAutoCDCExamples(t *testing.T) {
	dir := newSQLPipeline(t, "cdc")
	must(t, 0, sluice, dir, "run")
	tables := []string{"target_scd1", "target_scd2", "target_scd2_tracked"}
	for _, table := range tables {
		golden(t, "cdc_"+table+".jsonl", tableRows(t, dir, table))
	}
	firstEnd := lastSeq(t, dir)
	// describe counts the table's rows, not the changes it recorded
	if out := must(t, 0, sluice, dir, "describe", "target_scd1").stdout; !strings.Contains(out, "rows        3\n") || !strings.Contains(out, "4 changes") {
		t.Errorf("describe target_scd1:\n%s", out)
	}

	// Each committed batch of an AUTO CDC flow records its metrics once, in
	// a flow_progress of the batch.
	for flow, want := range map[string]string{
		"users_scd1": `{"num_output_rows":3,"num_upserted_rows":3}`,
		"users_scd2": `{"num_output_rows":8,"num_upserted_rows":7,"num_deleted_rows":1}`,
	} {
		var got []string
		for _, ev := range sqlEvents(t, dir, "--flow", flow, "--type", "flow_progress") {
			if ev.Origin["batch_id"] != nil {
				var fp struct {
					Metrics json.RawMessage `json:"metrics"`
				}
				if err := json.Unmarshal(ev.Details["flow_progress"], &fp); err != nil {
					t.Fatal(err)
				}
				got = append(got, string(fp.Metrics))
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: batch metrics %v, want one %s", flow, got, want)
		}
	}

	// A late change (older than what each table holds for user 124) and a
	// new one (user 126 moves).
	writeFile(t, filepath.Join(dir, "data", "more.json"),
		`{"userId": 124, "name": "Raul", "city": "Puebla", "operation": "UPDATE", "sequenceNum": 0}`+"\n"+
			`{"userId": 126, "name": "Lily", "city": "Merida", "operation": "UPDATE", "sequenceNum": 7}`+"\n")
	must(t, 0, sluice, dir, "run")
	for _, table := range tables {
		golden(t, "cdc_"+table+"_late.jsonl", tableRows(t, dir, table))
		if got, want := tableRows(t, dir, table, "--as-of", fmt.Sprint(firstEnd)), readGolden(t, "cdc_"+table+".jsonl"); got != want {
			t.Errorf("%s as of %d:\n%s\nwant (as the first update left it):\n%s", table, firstEnd, got, want)
		}
	}
	golden(t, "cdc_target_scd2_changes.jsonl", stableFeed(tableRows(t, dir, "target_scd2", "--changes")))
	// The keyed state rebuilds from the log as the flows left it, after
	// each of their six micro-batches.
	if out := must(t, 0, sluice, dir, "replay", "--verify").stdout; !strings.Contains(out, "checked after 6 micro-batches") {
		t.Errorf("replay --verify: %s", out)
	}

	dir = newSQLPipeline(t, "cdc_truncate")
	must(t, 0, sluice, dir, "run")
	golden(t, "cdc_truncate_target.jsonl", tableRows(t, dir, "target"))
}

// TestSQLAutoCDCFromSnapshot runs the snapshot example of the AUTO CDC
// documentation through the CLI: a first snapshot, a second that changes a
// key, adds one and lacks one, and an update with the same snapshot, which
// changes nothing.
func TestSQLAutoCDCFromSnapshot(t *testing.T) {
	dir := newSQLPipeline(t, "cdc_snapshot")
	must(t, 0, sluice, dir, "run")
	writeFile(t, filepath.Join(dir, "data", "snapshot.json"), `{"key": 2, "value": "b2"}`+"\n"+`{"key": 3, "value": "a3"}`+"\n")
	must(t, 0, sluice, dir, "run")
	before := tableRows(t, dir, "target_scd2")
	must(t, 0, sluice, dir, "run")
	if after := tableRows(t, dir, "target_scd2"); after != before {
		t.Errorf("the same snapshot again changed the table:\n%s\nwas:\n%s", after, before)
	}
	golden(t, "cdc_snapshot_target_scd1.jsonl", tableRows(t, dir, "target_scd1"))
	golden(t, "cdc_snapshot_target_scd2.jsonl", stableVersions(before))
}

// TestSQLAutoCDCDebezium replicates a table from Debezium change events
// (with and without the schema envelope, a tombstone, a late update) read
// as files of Debezium events and taken apart by from_debezium.
func TestSQLAutoCDCDebezium(t *testing.T) {
	dir := newSQLPipeline(t, "cdc_debezium")
	must(t, 0, sluice, dir, "run")
	golden(t, "cdc_debezium_users.jsonl", tableRows(t, dir, "users"))
	golden(t, "cdc_debezium_users_from_text.jsonl", tableRows(t, dir, "users_from_text"))
}

var versionTimes = regexp.MustCompile(`"__(START|END)_AT":"[^"]*"`)

// stableVersions numbers the times of SCD type 2 versions v1, v2, ... in
// the order they first appear.
func stableVersions(rows string) string {
	n, seen := 0, map[string]int{}
	return versionTimes.ReplaceAllStringFunc(rows, func(m string) string {
		name, at, _ := strings.Cut(m, ":")
		if seen[at] == 0 {
			n++
			seen[at] = n
		}
		return fmt.Sprintf(`%s:"v%d"`, name, seen[at])
	})
}

var commitColumns = regexp.MustCompile(`"_commit_version":(\d+),"_commit_timestamp":"[^"]*"`)

// stableFeed numbers a change feed's commit versions 1, 2, ... in order
// (the seqs depend on how concurrent flows interleave) and blanks its
// times.
func stableFeed(feed string) string {
	n, seen := 0, map[string]int{}
	return commitColumns.ReplaceAllStringFunc(feed, func(m string) string {
		v := commitColumns.FindStringSubmatch(m)[1]
		if seen[v] == 0 {
			n++
			seen[v] = n
		}
		return fmt.Sprintf(`"_commit_version":"v%d","_commit_timestamp":"T"`, seen[v])
	})
}

// lastSeq is the seq of the last event of the pipeline's log.
func lastSeq(t *testing.T, dir string) uint64 {
	t.Helper()
	evs := sqlEvents(t, dir)
	return evs[len(evs)-1].Seq
}

// readGolden returns a golden file's text.
func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
