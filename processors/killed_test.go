package processors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// envKilledChild, set to a directory, makes the test binary the process
// TestKilledProcessLeavesAnUpdateToClose kills: it runs killedGraph over a
// store in the directory and hangs in the middle.
const envKilledChild = "SLUICE_PROCESSORS_KILLED_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envKilledChild); dir != "" {
		runKilledChild(dir)
	}
	os.Exit(m.Run())
}

// killedGraph copies the ids 0..5 into t two at a time; hang, when set, is
// called on each batch before it is written.
func killedGraph(hang func(*domain.Batch)) *domain.Graph {
	var transforms []domain.Transform
	if hang != nil {
		transforms = append(transforms, domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
			hang(b)
			return b, nil
		}))
	}
	return newGraph("killed", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(sources.Range(0, 6)), transforms...))
}

var killedOptions = Options{Limit: domain.ReadLimit{MaxRows: 2}}

// runKilledChild commits the first batch of killedGraph, plans the second,
// says so by creating the file "hanging", and waits to be killed. It exits
// on its own only if nobody kills it within a minute.
func runKilledChild(dir string) {
	store, err := eventstore.Open(filepath.Join(dir, "store"), eventstore.WithSyncWrites(false))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	g := killedGraph(func(b *domain.Batch) {
		if b.Len() > 0 && b.Columns[0].Value(0).AsInt() == 2 {
			if err := os.WriteFile(filepath.Join(dir, "hanging"), nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			time.Sleep(time.Minute)
			os.Exit(3)
		}
	})
	res, err := Run(context.Background(), store, g, killedOptions)
	fmt.Fprintf(os.Stderr, "the child's update ended: %+v %v\n", res, err)
	os.Exit(4)
}

// TestKilledProcessLeavesAnUpdateToClose kills a process with SIGKILL in the
// middle of an update, after it planned a micro-batch and before it
// committed it. The next update closes the dead one (FAILED,
// UPDATE_PROCESS_ENDED), runs the planned batch again with the same id and
// range, and the table holds every row once.
func TestKilledProcessLeavesAnUpdateToClose(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envKilledChild+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for hanging := false; !hanging; {
		select {
		case err := <-exited:
			t.Fatalf("the child ended before it was killed: %v\n%s", err, stderr.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("the child did not reach the second batch\n%s", stderr.String())
		case <-time.After(5 * time.Millisecond):
			_, err := os.Stat(filepath.Join(dir, "hanging"))
			hanging = err == nil
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exitErr *exec.ExitError
	if err := <-exited; !errors.As(err, &exitErr) || !exitErr.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("the child was not killed: %v\n%s", err, stderr.String())
	}

	store := openStoreAt(t, filepath.Join(dir, "store"))
	open, err := store.OpenUpdates()
	if err != nil || len(open) != 1 || open[0].Flows["load"] != "t" {
		t.Fatalf("open updates %+v (%v), want the killed one, running load", open, err)
	}
	dead := open[0].ID
	cp, err := store.Checkpoint("load")
	if err != nil || cp.Planned == nil || cp.Planned.BatchID != 1 {
		t.Fatalf("checkpoint %+v (%v), want batch 1 planned", cp, err)
	}
	planned := *cp.Planned

	res := mustComplete(t, store, killedGraph(nil), killedOptions)
	assertClosedAsEnded(t, store, dead, []string{"load"})
	batches := committedBatches(t, store, res.UpdateID, "load")
	if len(batches) == 0 || batches[0].BatchID != 1 || !bytes.Equal(batches[0].Start, planned.Start) || !bytes.Equal(batches[0].End, planned.End) {
		t.Errorf("the next update's first batch %+v, want batch 1 over [%s, %s) as planned", batches[0], planned.Start, planned.End)
	}
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, 6)) {
		t.Errorf("t holds %v, want 0..5 once each", got)
	}
}
