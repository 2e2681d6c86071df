package cli_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// qualityPipeline is the orders example of the expectations best
// practices: a warn rule on the raw table, two drop rules on the cleaned
// one, a fail rule on the final one.
const qualityPipeline = `
CREATE OR REFRESH STREAMING TABLE orders_raw (
  CONSTRAINT valid_order_date EXPECT (order_date <= DATE'2026-01-01')
) AS SELECT * FROM STREAM read_files('orders', format => 'json',
  schema => 'order_id BIGINT, customer_id BIGINT, amount DECIMAL(10,2), status STRING, order_date DATE');

CREATE OR REFRESH STREAMING TABLE orders_clean (
  CONSTRAINT has_customer EXPECT (customer_id IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT positive_amount EXPECT (amount > 0) ON VIOLATION DROP ROW
) AS SELECT * FROM STREAM(orders_raw);

CREATE OR REFRESH STREAMING TABLE orders_final (
  CONSTRAINT known_status EXPECT (status IN ('NEW', 'SHIPPED', 'DELIVERED')) ON VIOLATION FAIL UPDATE
) AS SELECT * FROM STREAM(orders_clean);

-- the data quality dashboard: a materialized view over the event log
CREATE OR REFRESH MATERIALIZED VIEW data_quality AS
SELECT update_id, e.dataset, e.name AS expectation, sum(e.passed_records) AS passed, sum(e.failed_records) AS failed
FROM (
  SELECT origin.update_id AS update_id,
         explode(from_json(details:flow_progress.data_quality.expectations,
           'array<struct<name: string, dataset: string, passed_records: bigint, failed_records: bigint>>')) AS e
  FROM event_log(TABLE(orders_raw))
  WHERE event_type = 'flow_progress')
GROUP BY ALL;
`

func orderLine(id int, customer string, amount string, status, date string) string {
	return fmt.Sprintf(`{"order_id": %d, "customer_id": %s, "amount": %s, "status": %q, "order_date": %q}`+"\n", id, customer, amount, status, date)
}

// TestQualityWorkflow runs the orders example through the command line:
// every table's rows and every data_quality figure are as the rules say;
// sluice quality gives them per update (jsonl, and a table with the trend);
// a row violating the fail rule later fails the update with exit 1, and the
// failing table keeps exactly what it had.
func TestQualityWorkflow(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: orders_quality\n")
	writeFile(t, filepath.Join(dir, "orders.sql"), qualityPipeline)
	var first strings.Builder
	for i := 1; i <= 10; i++ {
		customer, amount, date := fmt.Sprint(100+i), "12.50", "2025-06-01"
		switch i {
		case 2, 5:
			customer = "null" // dropped by has_customer
		case 7:
			amount = "-3.00" // dropped by positive_amount
		case 9:
			date = "2027-02-01" // kept, counted by valid_order_date
		}
		first.WriteString(orderLine(i, customer, amount, "NEW", date))
	}
	writeFile(t, filepath.Join(dir, "orders", "1.json"), first.String())
	must(t, 0, sluice, dir, "run", "--live=false")

	counts := map[string]int{}
	for _, table := range []string{"orders_raw", "orders_clean", "orders_final"} {
		counts[table] = lines(tableRows(t, dir, table))
	}
	if counts["orders_raw"] != 10 || counts["orders_clean"] != 7 || counts["orders_final"] != 7 {
		t.Fatalf("rows: %v, want orders_raw 10, orders_clean 7, orders_final 7", counts)
	}
	got := qualityLines(t, dir, "last")
	want := []string{
		"orders_clean has_customer 8 2",
		"orders_clean positive_amount 9 1",
		"orders_final known_status 7 0",
		"orders_raw valid_order_date 9 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sluice quality:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// the same figures in the materialized view over event_log()
	var dashboard []string
	for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, "data_quality")), "\n") {
		var row struct {
			Dataset, Expectation string
			Passed, Failed       int64
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		dashboard = append(dashboard, fmt.Sprintf("%s %s %d %d", row.Dataset, row.Expectation, row.Passed, row.Failed))
	}
	sort.Strings(dashboard)
	if strings.Join(dashboard, "\n") != strings.Join(want, "\n") {
		t.Errorf("the materialized view over event_log():\n%s\nwant what sluice quality says:\n%s", strings.Join(dashboard, "\n"), strings.Join(want, "\n"))
	}
	// the same figures in the flows' data_quality
	dropped := map[string]int64{}
	for flow, ps := range flowProgresses(t, dir, "last") {
		for _, p := range ps {
			if p.DataQuality != nil {
				dropped[flow] += p.DataQuality.DroppedRecords
			}
		}
	}
	if dropped["orders_clean"] != 3 || dropped["orders_raw"] != 0 || dropped["orders_final"] != 0 {
		t.Errorf("dropped records %v, want 3 in orders_clean only", dropped)
	}

	// a second update, then a row of an unknown status
	writeFile(t, filepath.Join(dir, "orders", "2.json"), orderLine(11, "111", "5.00", "SHIPPED", "2025-07-01"))
	must(t, 0, sluice, dir, "run", "--live=false")
	writeFile(t, filepath.Join(dir, "orders", "3.json"), orderLine(12, "112", "5.00", "LOST", "2025-07-02"))
	r := must(t, 1, sluice, dir, "run", "--live=false")
	if !strings.Contains(r.stderr, "EXPECTATION_VIOLATION") || !strings.Contains(r.stderr, "known_status") {
		t.Errorf("the failed update does not say which rule failed:\n%s", r.stderr)
	}
	if n := lines(tableRows(t, dir, "orders_final")); n != 8 {
		t.Errorf("orders_final holds %d rows after the failed update, want the 8 it had", n)
	}
	table := must(t, 0, sluice, dir, "quality", "--dataset", "orders_clean").stdout
	if !strings.Contains(table, "FAILURE RATE") || !strings.Contains(table, "LAST 3 UPDATES") {
		t.Errorf("quality's table:\n%s", table)
	}
	first3 := must(t, 0, sluice, dir, "quality", "--format", "jsonl", "--update", "last").stdout
	if strings.Contains(first3, "orders_final") && !strings.Contains(first3, `"failed_records":0`) {
		t.Errorf("the failed update's quality counts the batch it did not commit:\n%s", first3)
	}
	if r := run(t, sluice, dir, "quality", "--dataset", "order_clean"); r.code != 2 || !strings.Contains(r.stderr, "orders_clean") {
		t.Errorf("a misspelt dataset: exit %d\n%s", r.code, r.stderr)
	}
}

// qualityLines is `sluice quality --format jsonl` as "dataset expectation
// passed failed" lines, sorted, each checked for its rate.
func qualityLines(t *testing.T, dir, update string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(must(t, 0, sluice, dir, "quality", "--format", "jsonl", "--update", update).stdout), "\n") {
		var q struct {
			Dataset     string  `json:"dataset"`
			Expectation string  `json:"expectation"`
			Passed      int64   `json:"passed_records"`
			Failed      int64   `json:"failed_records"`
			FailureRate float64 `json:"failure_rate"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if want := float64(q.Failed) / float64(q.Passed+q.Failed); q.FailureRate != want {
			t.Errorf("%s: failure_rate %v, want %v", line, q.FailureRate, want)
		}
		out = append(out, fmt.Sprintf("%s %s %d %d", q.Dataset, q.Expectation, q.Passed, q.Failed))
	}
	sort.Strings(out)
	return out
}
