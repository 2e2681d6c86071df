package kafka_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/internal/killtest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sinks/kafka"
	"github.com/sluicehq/sluice/sources"
)

// TestChildPipeline is the process TestKillBetweenKafkaAndCommit kills: it
// runs only when that test starts it.
func TestChildPipeline(t *testing.T) {
	dir := os.Getenv("SLUICE_KAFKA_CHILD_DIR")
	if dir == "" {
		t.Skip("run by TestKillBetweenKafkaAndCommit")
	}
	killAt, _ := strconv.ParseInt(os.Getenv("SLUICE_KAFKA_CHILD_KILL_AT"), 10, 64)
	inner, err := kafka.NewSink("kill", map[string]string{"bootstrapServers": os.Getenv("SLUICE_KAFKA_CHILD_BROKERS"), "topic": "out", "mode": "exactly_once"})
	if err != nil {
		t.Fatal(err)
	}
	store, err := eventstore.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := pipeline.New("kill")
	p.CreateStreamingTable("events")
	p.AppendFlow("events", pipeline.StreamFrom(sources.Files(filepath.Join(dir, "in"), sources.FileOptions{Format: "json", MaxFilesPerTrigger: 1})), pipeline.Name("ingest"))
	p.CreateSink("out", "kafka", killtest.KillAfter{Sink: inner, At: killAt}, nil)
	p.AppendFlow("out", pipeline.ReadStream("events").Map(domain.NewSchema(
		domain.Field{Name: "key", Type: domain.TypeString}, domain.Field{Name: "value", Type: domain.TypeString}),
		func(r pipeline.Row) ([]domain.Value, error) {
			id := r.Get("id").AsInt()
			return []domain.Value{domain.String(fmt.Sprint(id)), domain.String(fmt.Sprintf(`{"id":%d}`, id))}, nil
		}), pipeline.Name("to_kafka"))
	res, err := p.Run(context.Background(), store, processors.Options{Limit: domain.ReadLimit{MaxRows: 25}}) // a batch a file, into the sink too
	if err != nil || res.State != domain.UpdateCompleted {
		t.Fatalf("update %v: %v %v", res.State, res.Err, err)
	}
}

// TestKillBetweenKafkaAndCommit kills sluice (SIGKILL) right after the
// Kafka sink committed a batch's transaction and before sluice committed
// the batch, then runs it again: a read_committed consumer sees every
// record once.
func TestKillBetweenKafkaAndCommit(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "out"), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := t.TempDir()
	const files, perFile = 4, 25
	killtest.WriteJSONFiles(t, dir, files, perFile, func(id int) string { return fmt.Sprintf(`{"id": %d}`, id) })
	child := func(killAt int) error {
		return killtest.RunChild("TestChildPipeline", "SLUICE_KAFKA_CHILD_DIR="+dir, "SLUICE_KAFKA_CHILD_KILL_AT="+strconv.Itoa(killAt),
			"SLUICE_KAFKA_CHILD_BROKERS="+strings.Join(c.ListenAddrs(), ","))
	}
	if err := child(1); !killtest.Killed(err) {
		t.Fatalf("the child was to be killed after batch 1: %v", err)
	}
	if keys := committed(t, c.ListenAddrs(), "out", 2*perFile, false); len(keys) != 2*perFile {
		t.Fatalf("after the kill Kafka holds %d committed records, want batches 0 and 1 (%d)", len(keys), 2*perFile)
	}
	if err := child(-1); err != nil {
		t.Fatalf("the run after the kill: %v", err)
	}
	keys := committed(t, c.ListenAddrs(), "out", files*perFile, false)
	if len(keys) != files*perFile {
		t.Fatalf("a read_committed consumer sees %d records, want each of %d once", len(keys), files*perFile)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			t.Fatalf("record %s twice", keys[i])
		}
	}
}
