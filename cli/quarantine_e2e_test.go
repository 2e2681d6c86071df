package cli_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

const quarantineSQL = `
CREATE OR REFRESH STREAMING TABLE orders (
  CONSTRAINT positive EXPECT (amount > %s) ON VIOLATION DROP ROW,
  CONSTRAINT has_customer EXPECT (customer IS NOT NULL) ON VIOLATION DROP ROW
) TBLPROPERTIES ('pipelines.quarantine' = 'true')
AS SELECT * FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT, customer STRING, amount BIGINT');
`

// TestQuarantineRetryAcrossKills: the rows the drop rules fail land in
// orders_quarantine; with a rule fixed, sluice quarantine retry moves the
// rows that pass into orders; retries killed (SIGKILL) at random moments
// leave every row in exactly one of the two tables, and a last retry
// finishes the move.
func TestQuarantineRetryAcrossKills(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: quarantined\n")
	writeFile(t, filepath.Join(dir, "orders.sql"), fmt.Sprintf(quarantineSQL, "0"))
	var in strings.Builder
	for id := 1; id <= 60; id++ {
		customer, amount := fmt.Sprintf("%q", fmt.Sprint("c", id)), id
		switch {
		case id%4 == 0:
			amount = -id // fails positive; passes once refunds are allowed
		case id%15 == 0:
			customer = "null" // fails has_customer, for good
		}
		fmt.Fprintf(&in, `{"id": %d, "customer": %s, "amount": %d}`+"\n", id, customer, amount)
	}
	writeFile(t, filepath.Join(dir, "in", "orders.json"), in.String())
	must(t, 0, sluice, dir, "run", "--live=false")

	// ids reads a table's ids from the storage, opened as the next run
	// opens it (recovering it from a kill)
	ids := func(table string) []int {
		t.Helper()
		store, err := eventstore.Open(filepath.Join(dir, ".sluice"))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		b, err := processors.ReadTable(context.Background(), store, table, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for i := range b.Len() {
			out = append(out, int(b.Columns[b.Schema.Index("id")].Value(i).AsInt()))
		}
		slices.Sort(out)
		return out
	}
	everyRowOnce := func(when string) (inTable, quarantined int) {
		t.Helper()
		a, q := ids("orders"), ids("orders_quarantine")
		all := slices.Sorted(slices.Values(append(append([]int{}, a...), q...)))
		for i, id := range all {
			if id != i+1 {
				t.Fatalf("%s: orders holds %d rows and the quarantine %d: not each of the 60 once (%v)", when, len(a), len(q), all)
			}
		}
		if len(all) != 60 {
			t.Fatalf("%s: %d rows in all, want 60", when, len(all))
		}
		return len(a), len(q)
	}
	if a, q := everyRowOnce("after the run"); q != 18 || a != 42 {
		t.Fatalf("orders %d, quarantine %d; want 42 and 18 (15 negative amounts, 3 without a customer)", a, q)
	}
	list := must(t, 0, sluice, dir, "quarantine", "list", "orders", "--format", "jsonl").stdout
	if !strings.Contains(list, `"_failed_expectations":["positive"]`) || !strings.Contains(list, `"_flow":"orders"`) {
		t.Errorf("quarantine list:\n%s", list)
	}

	// refunds allowed now: the negative amounts pass
	writeFile(t, filepath.Join(dir, "orders.sql"), fmt.Sprintf(quarantineSQL, "-1000"))
	r := rand.New(rand.NewPCG(7, 8))
	killed := 0
	for range 12 {
		cmd := exec.Command(sluice, "quarantine", "retry", "orders")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(r.IntN(40)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err != nil {
			killed++
		}
		everyRowOnce("after a killed retry")
	}
	out := must(t, 0, sluice, dir, "quarantine", "retry", "orders").stderr
	a, q := everyRowOnce("after the last retry")
	if a != 57 || q != 3 {
		t.Fatalf("orders %d, quarantine %d after the retries; want 57 and 3\n%s", a, q, out)
	}
	if killed == 0 {
		t.Log("no retry was killed before it ended")
	}
	rest := must(t, 0, sluice, dir, "quarantine", "list", "orders", "--format", "jsonl").stdout
	if !strings.Contains(rest, `"_failed_expectations":["has_customer"]`) || strings.Contains(rest, `"_retries":0`) {
		t.Errorf("the rows left are not counted as retried:\n%s", rest)
	}
	if r := run(t, sluice, dir, "quarantine", "retry", "nope"); r.code != 2 {
		t.Errorf("retrying a table without a quarantine: exit %d\n%s", r.code, r.stderr)
	}
	// the next update goes on from where it was; the projections replay
	must(t, 0, sluice, dir, "run", "--live=false")
	must(t, 0, sluice, dir, "replay", "--verify")
}

// TestQuarantinePatternAsWritten: the quarantine pattern of the
// expectations best practices, written by hand (an is_quarantined column
// computed from the rules, and a view of each side), runs as written.
func TestQuarantinePatternAsWritten(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: trips\n")
	sql, err := os.ReadFile("testdata/quarantine_pattern.sql")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "trips.sql"), string(sql))
	writeFile(t, filepath.Join(dir, "in", "trips.json"), `{"trip_id": 1, "pickup_zip": 10001, "dropoff_zip": 10002, "fare_amount": 5}
{"trip_id": 2, "pickup_zip": null, "dropoff_zip": 10002, "fare_amount": 7}
{"trip_id": 3, "pickup_zip": null, "dropoff_zip": null, "fare_amount": 9}
`)
	must(t, 0, sluice, dir, "run", "--live=false")
	if got := strings.TrimSpace(tableRows(t, dir, "valid_count")); got != `{"n":1}` {
		t.Errorf("valid trips: %s", got)
	}
	if got := strings.TrimSpace(tableRows(t, dir, "invalid_count")); got != `{"n":2}` {
		t.Errorf("invalid trips: %s", got)
	}
	got := qualityLines(t, dir, "last")
	want := []string{"trips_data_quarantine invalid_dropoff_zip 2 1", "trips_data_quarantine invalid_pickup_zip 1 2", "trips_data_quarantine quarantined_row 2 1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("quality:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
