package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDecimalPipeline runs exact decimals through a whole pipeline: read
// from JSON by their digits as written, keyed and sequenced by decimals in
// AUTO CDC (SCD 1 and 2), summed in a materialized view, written out and
// replayed. The values pass 2^63 and
// use all 38 digits, where a double would lose them.
func TestDecimalPipeline(t *testing.T) {
	changes := `{"account": 12345678901234567890, "amount": "1234567890123456789012345678.0123456789", "seq": 1.5, "op": "UPSERT"}
{"account": 12345678901234567890, "amount": 0.1, "seq": 99999999999999999999.25, "op": "UPSERT"}
{"account": 12345678901234567890, "amount": 0.2, "seq": 3, "op": "UPSERT"}
{"account": 2, "amount": -0.30, "seq": 2, "op": "UPSERT"}
{"account": 2, "amount": 5, "seq": 2.5, "op": "DELETE"}
{"account": 3, "amount": 0.2, "seq": 1, "op": "UPSERT"}
{"account": 3, "amount": 0.1, "seq": 1.0000000001, "op": "UPSERT"}
`
	sql := `CREATE OR REFRESH STREAMING TABLE raw
  AS SELECT * FROM STREAM read_files('data/', format => 'json',
    schema => 'account DECIMAL(20,0), amount DECIMAL(38,10), seq DECIMAL(30,10), op STRING');
CREATE OR REFRESH STREAMING TABLE one;
CREATE FLOW to_one AS AUTO CDC INTO one FROM STREAM(raw) KEYS (account)
  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op) STORED AS SCD TYPE 1;
CREATE OR REFRESH STREAMING TABLE two;
CREATE FLOW to_two AS AUTO CDC INTO two FROM STREAM(raw) KEYS (account)
  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op) STORED AS SCD TYPE 2;
CREATE MATERIALIZED VIEW totals AS
  SELECT count(*) AS n, sum(amount) AS total, avg(amount) AS mean, sum(amount) = 0.3 AS small_sum_exact
  FROM raw WHERE account = 3;
`
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: money\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), sql)
	writeFile(t, filepath.Join(dir, "data", "changes.json"), changes)
	must(t, 0, sluice, dir, "run", "--live=false")
	for _, table := range []string{"one", "two", "totals"} {
		golden(t, "decimal_"+table+".jsonl", tableRows(t, dir, table))
	}
	if out := must(t, 0, sluice, dir, "table", "one", "--format", "csv").stdout; !strings.Contains(out, "1234567890123456789012345678.0123456789") && !strings.Contains(out, "12345678901234567890,0.1000000000") {
		t.Errorf("the CSV output lost digits:\n%s", out)
	}
	if out := must(t, 0, sluice, dir, "replay", "--verify").stdout; !strings.Contains(out, "checked after") {
		t.Errorf("replay --verify: %s", out)
	}
}
