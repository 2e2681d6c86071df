package syntax

import (
	"fmt"
	"strings"
	"testing"
)

// pipeline100 generates a realistic pipeline of 100 statements: ingestion
// with expectations, cleaning, joins with watermarks, aggregates with
// windows, flows and AUTO CDC.
func pipeline100() string {
	var b strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, `CREATE OR REFRESH STREAMING TABLE raw_%[1]d (
  CONSTRAINT valid_id EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT valid_amount EXPECT (amount >= 0 AND amount < 1e9)
)
COMMENT 'raw events of source %[1]d'
TBLPROPERTIES ('quality' = 'bronze')
AS SELECT *, _metadata.file_path AS source_file
FROM STREAM read_files('${landing}/source_%[1]d', format => 'json', header => true);

CREATE OR REFRESH STREAMING TABLE clean_%[1]d
AS SELECT id, CAST(amount AS DECIMAL(18, 2)) AS amount, lower(trim(email)) AS email,
  to_timestamp(ts, 'yyyy-MM-dd HH:mm:ss') AS event_time, payload:device.os::string AS os,
  CASE WHEN country IN ('FR', 'DE', 'ES') THEN 'eu' WHEN country = 'US' THEN 'us' ELSE 'other' END AS region
FROM STREAM(LIVE.raw_%[1]d)
WHERE status NOT IN ('test', 'void') AND email LIKE '%%@%%';

CREATE OR REFRESH MATERIALIZED VIEW totals_%[1]d
AS SELECT region, date_trunc('DAY', event_time) AS day, count(*) AS n, sum(amount) AS total,
  approx_count_distinct(email) AS customers, percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) AS median
FROM clean_%[1]d
GROUP BY ALL
HAVING count(*) > 0;

CREATE OR REFRESH STREAMING TABLE windowed_%[1]d
AS SELECT window(event_time, '5 minutes') AS w, region, count(*) AS cnt
FROM STREAM(clean_%[1]d) WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
GROUP BY window(event_time, '5 minutes'), region;

CREATE OR REFRESH MATERIALIZED VIEW ranked_%[1]d
AS WITH t AS (SELECT email, sum(amount) AS spent FROM clean_%[1]d GROUP BY email)
SELECT email, spent, rank() OVER (ORDER BY spent DESC) AS r,
  sum(spent) OVER (ORDER BY spent DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
FROM t
QUALIFY r <= 100;

CREATE OR REFRESH STREAMING TABLE joined_%[1]d
AS SELECT a.id, a.amount, b.email, b.region
FROM STREAM(clean_%[1]d) WATERMARK event_time DELAY OF INTERVAL 3 MINUTES AS a
JOIN STREAM(clean_%[1]d) WATERMARK event_time DELAY OF INTERVAL 3 MINUTES AS b
ON a.id = b.id AND b.event_time BETWEEN a.event_time AND a.event_time + INTERVAL 3 MINUTES;

CREATE OR REFRESH STREAMING TABLE customers_%[1]d;

CREATE FLOW cdc_%[1]d AS AUTO CDC INTO customers_%[1]d
FROM STREAM(clean_%[1]d)
KEYS (id)
APPLY AS DELETE WHEN op = 'DELETE'
SEQUENCE BY STRUCT(event_time, id)
COLUMNS * EXCEPT (op)
STORED AS SCD TYPE 2;

CREATE FLOW backfill_%[1]d AS INSERT INTO ONCE customers_%[1]d BY NAME
SELECT * FROM read_files('/archive/%[1]d', format => 'parquet');

CREATE TEMPORARY VIEW recent_%[1]d AS
SELECT * FROM clean_%[1]d WHERE event_time > current_timestamp() - INTERVAL 7 DAYS;

`, i)
	}
	return b.String()
}

func TestPipeline100Parses(t *testing.T) {
	f, err := ParseFile("bench.sql", pipeline100(), map[string]string{"landing": "/Volumes/main/raw"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Statements) != 100 {
		t.Fatalf("%d statements, want 100", len(f.Statements))
	}
}

// BenchmarkParse100 parses a 100-statement pipeline.
func BenchmarkParse100(b *testing.B) {
	src := pipeline100()
	conf := map[string]string{"landing": "/Volumes/main/raw"}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFile("bench.sql", src, conf); err != nil {
			b.Fatal(err)
		}
	}
}
