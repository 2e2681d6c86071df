package cli_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestMessagesInAndOut: a NATS JetStream subject read with read_nats into
// a streaming table (JSON payloads parsed), and the table's rows written
// to a RabbitMQ queue through CREATE SINK ... USING amqp, each once over
// runs; the spool lives in the pipeline's storage.
func TestMessagesInAndOut(t *testing.T) {
	subject := fmt.Sprintf("sluice_e2e_%d", rand.Int64())
	queue := subject + "_out"
	nc, err := nats.Connect("nats://127.0.0.1:4222")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: subject, Subjects: []string{subject}}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = js.DeleteStream(subject) }()
	conn, err := amqp.Dial("amqp://guest:guest@127.0.0.1:5672/")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = ch.QueueDelete(queue, false, false, false) }()
	send := func(from, n int) {
		for i := from; i < from+n; i++ {
			m := nats.NewMsg(subject)
			m.Data = []byte(fmt.Sprintf(`{"id": %d, "amount": %d.25}`, i, i))
			m.Header.Set("source", "shop")
			if _, err := js.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
		}
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: messages\n")
	writeFile(t, filepath.Join(dir, "flows.sql"), fmt.Sprintf(`
CREATE OR REFRESH STREAMING TABLE orders AS
SELECT o.*, metadata['source'] AS source, offset
FROM (SELECT from_json(CAST(payload AS STRING), 'id BIGINT, amount DECIMAL(10,2)') AS o, metadata, offset
      FROM STREAM read_nats(url => 'nats://127.0.0.1:4222', subject => '%s', durable => 'orders_in', maxMessagesPerTrigger => 15));

CREATE SINK shipped USING amqp OPTIONS (url '${env:SLUICE_TEST_AMQP}', queue '%s');
CREATE FLOW ship AS INSERT INTO shipped BY NAME
SELECT to_json(named_struct('id', id, 'amount', amount)) AS payload, map('source', source) AS metadata FROM STREAM(orders);
`, subject, queue))
	t.Setenv("SLUICE_TEST_AMQP", "amqp://guest:guest@127.0.0.1:5672/")
	if out := must(t, 0, sluice, dir, "validate").stdout; strings.Contains(out, "guest:guest") {
		t.Errorf("validate shows the secret:\n%s", out)
	}
	send(0, 40)
	out := must(t, 0, sluice, dir, "run", "--live=false").stderr
	if !strings.Contains(out, "40 rows in") {
		t.Errorf("the first run did not take the 40 messages:\n%s", out)
	}
	send(40, 10)
	must(t, 0, sluice, dir, "run", "--live=false")
	must(t, 0, sluice, dir, "run", "--live=false") // nothing new

	var ids []int
	for _, line := range strings.Split(strings.TrimSpace(tableRows(t, dir, "orders")), "\n") {
		var row struct {
			ID     int
			Amount float64
			Source string
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if row.Source != "shop" || row.Amount != float64(row.ID)+0.25 {
			t.Errorf("row %s", line)
		}
		ids = append(ids, row.ID)
	}
	sort.Ints(ids)
	if len(ids) != 50 || ids[0] != 0 || ids[49] != 49 {
		t.Fatalf("the table holds ids %v, want 0 to 49 once each", ids)
	}

	var shipped []string
	deadline := time.Now().Add(10 * time.Second)
	for len(shipped) < 50 && time.Now().Before(deadline) {
		d, ok, err := ch.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if d.Headers["source"] != "shop" {
			t.Errorf("a shipped message's headers are %v", d.Headers)
		}
		shipped = append(shipped, string(d.Body))
	}
	sort.Strings(shipped)
	if len(shipped) != 50 || len(slicesCompact(shipped)) != 50 {
		t.Fatalf("the queue got %d messages (%d distinct), want 50", len(shipped), len(slicesCompact(shipped)))
	}
	if files, _ := filepath.Glob(filepath.Join(dir, ".sluice", "spool", "nats-orders_in", "*.spool")); len(files) != 1 {
		t.Errorf("the spool holds %d segments, want 1", len(files))
	}
}

func slicesCompact(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	j := 0
	for i := range out {
		if i == 0 || out[i] != out[j-1] {
			out[j] = out[i]
			j++
		}
	}
	return out[:j]
}
