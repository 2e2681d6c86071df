package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/internal/pgtest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources/postgres"
)

// TestChildReplica is the process TestReplicaSurvivesKills kills: it runs
// only when that test starts it, one triggered update.
func TestChildReplica(t *testing.T) {
	dir := os.Getenv("SLUICE_CDC_CHILD_DIR")
	if dir == "" {
		t.Skip("run by TestReplicaSurvivesKills")
	}
	var opts postgres.Options
	if err := json.Unmarshal([]byte(os.Getenv("SLUICE_CDC_CHILD_OPTS")), &opts); err != nil {
		t.Fatal(err)
	}
	src, err := postgres.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	store, err := eventstore.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := pipeline.New("replica")
	p.CreateStreamingTable("replica")
	p.CreateAutoCDCFlow(pipeline.AutoCDC{Target: "replica", Name: "replicate", Source: pipeline.StreamFrom(src), Keys: []string{"id"},
		SequenceBy: "_lsn", ApplyAsDeletes: "_op = 'DELETE'", ApplyAsTruncates: "_op = 'TRUNCATE'", ExceptColumns: []string{"_op", "_lsn", "_commit_ts", "_table"}})
	res, err := p.Run(context.Background(), store, processors.Options{Limit: domain.ReadLimit{MaxRows: 50}})
	if err != nil || res.State != domain.UpdateCompleted {
		t.Fatalf("update %v: %v %v", res.State, res.Err, err)
	}
}

// TestReplicaSurvivesKills replicates a table under a concurrent writer
// (inserts, updates, deletes, a truncate) while sluice is killed with
// SIGKILL 20 times at random moments: after each kill the slot's confirmed
// position is not past the last batch sluice committed, and at the end the
// replica equals the source.
func TestReplicaSurvivesKills(t *testing.T) {
	conn, opts := fixture(t)
	ctx := context.Background()
	table := opts.Tables[0]
	dir := t.TempDir()
	optsJSON, _ := json.Marshal(opts)
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildReplica$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SLUICE_CDC_CHILD_DIR="+dir, "SLUICE_CDC_CHILD_OPTS="+string(optsJSON))
		return cmd
	}
	if out, err := child().CombinedOutput(); err != nil { // makes the slot
		t.Fatalf("the first run: %v\n%s", err, out)
	}

	pool, err := pgxpool.New(ctx, pgtest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the writer
		defer wg.Done()
		r := rand.New(rand.NewPCG(1, 2))
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			id := r.IntN(200)
			var err error
			switch k := r.IntN(100); {
			case k < 50:
				_, err = pool.Exec(ctx, "INSERT INTO "+table+" (id, name, balance) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, balance = EXCLUDED.balance", id, fmt.Sprint("n", n), n%1000)
			case k < 80:
				_, err = pool.Exec(ctx, "UPDATE "+table+" SET balance = balance + 1.25 WHERE id = $1", id)
			case k < 99:
				_, err = pool.Exec(ctx, "DELETE FROM "+table+" WHERE id = $1", id)
			default:
				if n > 200 && n < 400 {
					_, err = pool.Exec(ctx, "TRUNCATE "+table)
				}
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()

	r := rand.New(rand.NewPCG(3, 4))
	for kill := range 20 {
		cmd := child()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(30+r.IntN(300)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		// the slot confirmed nothing past what sluice committed (the store
		// opened as the next run opens it, recovering from the kill)
		store, err := eventstore.Open(filepath.Join(dir, "store"))
		if err != nil {
			t.Fatal(err)
		}
		cp, err := store.Checkpoint("replicate")
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		var confirmed string
		if err := conn.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", opts.Slot).Scan(&confirmed); err != nil {
			t.Fatal(err)
		}
		c, _ := pglogrepl.ParseLSN(confirmed)
		if cp.Offset != nil {
			var at struct{ LSN string }
			_ = json.Unmarshal(cp.Offset, &at)
			committed, _ := pglogrepl.ParseLSN(at.LSN)
			if c > committed {
				t.Fatalf("after kill %d the slot confirmed %s, past the last committed batch's end %s", kill+1, confirmed, at.LSN)
			}
		}
	}
	close(stop)
	wg.Wait()
	for range 3 { // the rest of the changes, in batches of 50
		if out, err := child().CombinedOutput(); err != nil {
			t.Fatalf("the run after the kills: %v\n%s", err, out)
		}
	}
	store, err := eventstore.Open(filepath.Join(dir, "store"), eventstore.WithReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var replica []string
	err = processors.ScanTable(ctx, store, "replica", 0, func(b *domain.Batch) error {
		for i := 0; i < b.Len(); i++ {
			row := b.Row(i)
			replica = append(replica, fmt.Sprintf("%d %s %s", row[b.Schema.Index("id")].AsInt(), row[b.Schema.Index("name")], row[b.Schema.Index("balance")]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(replica)
	rows, _ := conn.Query(ctx, "SELECT id, coalesce(name, 'NULL'), coalesce(balance::text, 'NULL') FROM "+table)
	source, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id int64
		var name, balance string
		err := r.Scan(&id, &name, &balance)
		return fmt.Sprintf("%d %s %s", id, name, balance), err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(source)
	if strings.Join(replica, "\n") != strings.Join(source, "\n") {
		t.Errorf("the replica (%d rows) differs from the source (%d rows)", len(replica), len(source))
	}
	if len(source) == 0 {
		t.Error("the source ended empty: the test checked nothing")
	}
}
