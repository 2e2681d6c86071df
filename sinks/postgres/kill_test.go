package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/internal/killtest"
	"github.com/sluicehq/sluice/internal/pgtest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sinks/postgres"
	"github.com/sluicehq/sluice/sources"
)

// TestChildPipeline is the process TestKillBetweenSinkAndCommit kills: it
// runs only when that test starts it.
func TestChildPipeline(t *testing.T) {
	dir := os.Getenv("SLUICE_PG_CHILD_DIR")
	if dir == "" {
		t.Skip("run by TestKillBetweenSinkAndCommit")
	}
	killAt, _ := strconv.ParseInt(os.Getenv("SLUICE_PG_CHILD_KILL_AT"), 10, 64)
	inner, err := postgres.NewSink("kill", map[string]string{"dsn": pgtest.DSN(), "table": os.Getenv("SLUICE_PG_CHILD_TABLE")})
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
	p.CreateSink("pg", "postgres", killtest.KillAfter{Sink: inner, At: killAt}, nil)
	p.AppendFlow("pg", pipeline.ReadStream("events"), pipeline.Name("to_pg"))
	res, err := p.Run(context.Background(), store, processors.Options{Limit: domain.ReadLimit{MaxRows: 25}}) // a batch a file, into the sink too
	if err != nil || res.State != domain.UpdateCompleted {
		t.Fatalf("update %v: %v %v", res.State, res.Err, err)
	}
}

// TestKillBetweenSinkAndCommit kills sluice (SIGKILL) right after the
// Postgres sink committed a batch and before sluice committed it, then
// runs it again: the batch comes again, the ledger skips it, and the table
// holds every row once.
func TestKillBetweenSinkAndCommit(t *testing.T) {
	schema, conn := testSchema(t)
	dir := t.TempDir()
	const files, perFile = 4, 25
	killtest.WriteJSONFiles(t, dir, files, perFile, func(id int) string { return fmt.Sprintf(`{"id": %d, "name": "n%d"}`, id, id%perFile) })
	child := func(killAt int) error {
		return killtest.RunChild("TestChildPipeline", "SLUICE_PG_CHILD_DIR="+dir, "SLUICE_PG_CHILD_KILL_AT="+strconv.Itoa(killAt), "SLUICE_PG_CHILD_TABLE="+schema+".events")
	}
	count := func() (rows, distinct int) {
		_ = conn.QueryRow(context.Background(), "SELECT count(*), count(DISTINCT id) FROM "+schema+".events").Scan(&rows, &distinct)
		return rows, distinct
	}
	if err := child(1); !killtest.Killed(err) {
		t.Fatalf("the child was to be killed after batch 1: %v", err)
	}
	if rows, _ := count(); rows != 2*perFile {
		t.Fatalf("after the kill Postgres holds %d rows, want batches 0 and 1 (%d)", rows, 2*perFile)
	}
	if err := child(-1); err != nil {
		t.Fatalf("the run after the kill: %v", err)
	}
	if rows, distinct := count(); rows != files*perFile || distinct != rows {
		t.Errorf("Postgres holds %d rows (%d distinct), want each of the %d once", rows, distinct, files*perFile)
	}
}
