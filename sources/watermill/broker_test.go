package watermill_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	wmsink "github.com/sluicehq/sluice/sinks/watermill"
	"github.com/sluicehq/sluice/sources/watermill"
)

const (
	natsURL = "nats://127.0.0.1:4222"
	amqpURL = "amqp://guest:guest@127.0.0.1:5672/"
)

// broker is one of the local servers a message source reads.
type broker struct {
	name    string
	source  func(topic string, opts watermill.Options) (*watermill.Source, error)
	sink    func(topic string) (*wmsink.Sink, error)
	cleanup func(t *testing.T, topic string)
}

var brokers = []broker{
	{
		name: "nats",
		source: func(topic string, opts watermill.Options) (*watermill.Source, error) {
			return watermill.NATS(natsURL, topic, topic, opts)
		},
		sink: func(topic string) (*wmsink.Sink, error) {
			return wmsink.NewNATS("test", map[string]string{"url": natsURL, "subject": topic})
		},
		cleanup: func(t *testing.T, topic string) {
			nc, err := nats.Connect(natsURL)
			if err != nil {
				t.Fatalf("NATS at %s: %v", natsURL, err)
			}
			defer nc.Close()
			js, _ := nc.JetStream()
			_ = js.DeleteStream(topic)
		},
	},
	{
		name: "amqp",
		source: func(topic string, opts watermill.Options) (*watermill.Source, error) {
			return watermill.AMQP(amqpURL, topic, opts)
		},
		sink: func(topic string) (*wmsink.Sink, error) {
			return wmsink.NewAMQP("test", map[string]string{"url": amqpURL, "queue": topic})
		},
		cleanup: func(t *testing.T, topic string) {
			conn, err := amqp.Dial(amqpURL)
			if err != nil {
				t.Fatalf("RabbitMQ at %s: %v", amqpURL, err)
			}
			defer conn.Close()
			ch, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			_, _ = ch.QueueDelete(topic, false, false, false)
		},
	},
}

func brokerNamed(name string) broker {
	for _, b := range brokers {
		if b.name == name {
			return b
		}
	}
	panic(name)
}

// publish sends messages first to first+n-1 through the broker's sink, as
// a pipeline's sink would: payload and uuid columns.
func publish(t testing.TB, b broker, topic string, first, n int) {
	sink, err := b.sink(topic)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	schema := domain.NewSchema(domain.Field{Name: "payload", Type: domain.TypeString}, domain.Field{Name: "uuid", Type: domain.TypeString})
	rows := domain.NewBatch(schema, n)
	for i := first; i < first+n; i++ {
		if err := rows.AppendRow(domain.String(fmt.Sprintf(`{"n": %d}`, i)), domain.String("m-"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Deliver(context.Background(), domain.SinkBatch{Flow: "f", Sink: "s", BatchID: int64(first), Rows: rows}); err != nil {
		t.Fatal(err)
	}
}

// messagesPipeline reads the broker into the table messages.
func messagesPipeline(src *watermill.Source) *pipeline.Pipeline {
	p := pipeline.New("messages")
	p.CreateStreamingTable("messages")
	p.AppendFlow("messages", pipeline.StreamFrom(src), pipeline.Name("ingest"))
	return p
}

// tableUUIDs lists the uuid column of the table messages, sorted.
func tableUUIDs(t *testing.T, dir string) []string {
	store, err := eventstore.Open(dir, eventstore.WithReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var ids []string
	err = processors.ScanTable(context.Background(), store, "messages", 0, func(b *domain.Batch) error {
		col := b.Columns[b.Schema.Index("uuid")]
		for i := range b.Len() {
			ids = append(ids, col.Value(i).AsString())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

func wantIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "m-" + strconv.Itoa(i)
	}
	sort.Strings(ids)
	return ids
}

func sameIDs(got, want []string) error {
	if len(got) != len(want) {
		seen := map[string]int{}
		for _, id := range got {
			seen[id]++
		}
		dups, missing := 0, 0
		for _, id := range want {
			if seen[id] == 0 {
				missing++
			}
			if seen[id] > 1 {
				dups++
			}
		}
		return fmt.Errorf("%d rows, want %d: %d messages missing, %d taken more than once", len(got), len(want), missing, dups)
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("row %d is %s, want %s", i, got[i], want[i])
		}
	}
	return nil
}

// TestBrokerToTable: messages published through the sink land in a table
// once each, over updates, with payload and metadata; what committed
// leaves the spool.
func TestBrokerToTable(t *testing.T) {
	for _, b := range brokers {
		t.Run(b.name, func(t *testing.T) {
			topic := fmt.Sprintf("sluice_test_%d", rand.Int64())
			b.cleanup(t, topic)
			defer b.cleanup(t, topic)
			dir := t.TempDir()
			store, err := eventstore.Open(filepath.Join(dir, "store"))
			if err != nil {
				t.Fatal(err)
			}
			src, err := b.source(topic, watermill.Options{Spool: filepath.Join(dir, "spool"), MaxMessagesPerTrigger: 70, Consumers: 4})
			if err != nil {
				t.Fatal(err)
			}
			p := messagesPipeline(src)
			run := func() {
				t.Helper()
				res, err := p.Run(context.Background(), store, processors.Options{})
				if err != nil || res.State != domain.UpdateCompleted {
					t.Fatalf("update %v: %v %v", res.State, res.Err, err)
				}
			}
			publish(t, b, topic, 0, 300)
			run()
			publish(t, b, topic, 300, 100)
			run()
			run() // nothing new
			store.Close()
			if err := sameIDs(tableUUIDs(t, filepath.Join(dir, "store")), wantIDs(400)); err != nil {
				t.Fatal(err)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "spool", "*.spool")); len(files) != 1 {
				t.Errorf("the spool keeps %d segments after every batch committed, want 1", len(files))
			}
		})
	}
}

// TestChildConsumer is the process TestBrokerSurvivesKills kills: a
// continuous update reading the broker (triggered with
// SLUICE_MSG_CHILD_TRIGGERED).
func TestChildConsumer(t *testing.T) {
	dir := os.Getenv("SLUICE_MSG_CHILD_DIR")
	if dir == "" {
		t.Skip("run by TestBrokerSurvivesKills")
	}
	b := brokerNamed(os.Getenv("SLUICE_MSG_CHILD_BROKER"))
	src, err := b.source(os.Getenv("SLUICE_MSG_CHILD_TOPIC"), watermill.Options{Spool: filepath.Join(dir, "spool"), MaxMessagesPerTrigger: 40, Consumers: 3})
	if err != nil {
		t.Fatal(err)
	}
	store, err := eventstore.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := messagesPipeline(src)
	p.Continuous = os.Getenv("SLUICE_MSG_CHILD_TRIGGERED") == ""
	res, err := p.Run(context.Background(), store, processors.Options{PollInterval: 20 * time.Millisecond})
	if err != nil || res.State != domain.UpdateCompleted {
		t.Fatalf("update %v: %v %v", res.State, res.Err, err)
	}
}

// TestBrokerSurvivesKills publishes 1500 messages while the consumer is
// killed (SIGKILL) 12 times at random moments: at the end the table holds
// every message once.
func TestBrokerSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a while")
	}
	for _, b := range brokers {
		t.Run(b.name, func(t *testing.T) {
			topic := fmt.Sprintf("sluice_kill_%d", rand.Int64())
			b.cleanup(t, topic)
			defer b.cleanup(t, topic)
			dir := t.TempDir()
			child := func(triggered bool) *exec.Cmd {
				cmd := exec.Command(os.Args[0], "-test.run=^TestChildConsumer$", "-test.count=1")
				cmd.Env = append(os.Environ(), "SLUICE_MSG_CHILD_DIR="+dir, "SLUICE_MSG_CHILD_BROKER="+b.name, "SLUICE_MSG_CHILD_TOPIC="+topic)
				if triggered {
					cmd.Env = append(cmd.Env, "SLUICE_MSG_CHILD_TRIGGERED=1")
				}
				return cmd
			}
			const total = 1500
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // the publisher, 50 messages every 150 ms, while the kills go on
				defer wg.Done()
				for first := 0; first < total; first += 50 {
					publish(t, b, topic, first, 50)
					time.Sleep(150 * time.Millisecond)
				}
			}()
			r := rand.New(rand.NewPCG(5, 6))
			for range 12 {
				cmd := child(false)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(150+r.IntN(400)) * time.Millisecond)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
			}
			wg.Wait()
			// what the kills left unacknowledged comes again (NATS: after
			// the consumer's 10 s ack wait)
			deadline := time.Now().Add(45 * time.Second)
			var err error
			for time.Now().Before(deadline) {
				if out, runErr := child(true).CombinedOutput(); runErr != nil {
					t.Fatalf("the run after the kills: %v\n%s", runErr, out)
				}
				if err = sameIDs(tableUUIDs(t, filepath.Join(dir, "store")), wantIDs(total)); err == nil {
					break
				}
				time.Sleep(time.Second)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
