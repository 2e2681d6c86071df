package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReadKafka: STREAM read_kafka(...) into a streaming table takes every
// record once over runs, in batches of maxOffsetsPerTrigger, with the
// Kafka columns; Debezium change events on the topic feed AUTO CDC.
func TestReadKafka(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders", "changes"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	produce := func(topic string, from, n int) {
		for i := from; i < from+n; i++ {
			r := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf(`{"id": %d, "amount": %d.5}`, i, i)),
				Headers: []kgo.RecordHeader{{Key: "src", Value: []byte("shop")}}}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	changes := 0 // the log position of the next change
	change := func(op string, id int, name string) {
		after := "null"
		if op != "d" {
			after = fmt.Sprintf(`{"id": %d, "name": %q}`, id, name)
		}
		v := fmt.Sprintf(`{"op": %q, "before": {"id": %d}, "after": %s, "source": {"lsn": %d, "ts_ms": 1700000000000}, "ts_ms": 1700000000000}`, op, id, after, 1000+changes)
		changes++
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "changes", Key: []byte(fmt.Sprint(id)), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce("orders", 0, 25)
	change("c", 1, "ann")
	change("c", 2, "bob")
	change("u", 1, "anne")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: kafka\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), fmt.Sprintf(`
CREATE OR REFRESH STREAMING TABLE orders AS
SELECT CAST(key AS STRING) AS k, from_json(CAST(value AS STRING), 'id BIGINT, amount DECIMAL(10,1)') AS o, topic, partition, offset,
  headers[0].key AS header, CAST(headers[0].value AS STRING) AS header_value
FROM STREAM read_kafka(bootstrapServers => '%s', subscribe => 'orders', startingOffsets => 'earliest', maxOffsetsPerTrigger => 10, includeHeaders => true);

CREATE OR REFRESH STREAMING TABLE customers;
CREATE FLOW replicate AS AUTO CDC INTO customers
FROM (SELECT d.* FROM (SELECT from_debezium(CAST(value AS STRING), 'id BIGINT, name STRING') AS d FROM STREAM read_kafka(bootstrapServers => '%s', subscribe => 'changes', startingOffsets => 'earliest')))
KEYS (id) APPLY AS DELETE WHEN _op = 'DELETE' SEQUENCE BY _sequence COLUMNS * EXCEPT (_op, _source_ts, _sequence);
`, strings.Join(c.ListenAddrs(), ","), strings.Join(c.ListenAddrs(), ",")))
	out := must(t, 0, sluice, dir, "run", "--live=false").stderr
	if !strings.Contains(out, "25 rows in 3 batches") {
		t.Errorf("the first run did not take 25 records in batches of 10:\n%s", out)
	}
	produce("orders", 25, 12)
	change("d", 2, "")
	change("c", 3, "cy")
	must(t, 0, sluice, dir, "run", "--live=false")
	must(t, 0, sluice, dir, "run", "--live=false") // nothing new

	ids := map[float64]int{}
	for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, "orders")), "\n") {
		var row struct {
			K           string
			O           struct{ ID float64 }
			Topic       string
			Header      string
			HeaderValue string `json:"header_value"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.K != fmt.Sprint(row.O.ID) || row.Topic != "orders" || row.Header != "src" || row.HeaderValue != "shop" {
			t.Errorf("row %s", line)
		}
		ids[row.O.ID]++
	}
	if len(ids) != 37 {
		t.Errorf("%d distinct orders, want 37", len(ids))
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("order %v read %d times", id, n)
		}
	}
	if got := tableRows(t, dir, "customers"); got != `{"id":1,"name":"anne"}`+"\n"+`{"id":3,"name":"cy"}`+"\n" {
		t.Errorf("the replicated customers are\n%s", got)
	}
}
