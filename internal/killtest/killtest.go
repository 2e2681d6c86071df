// Package killtest helps tests that kill a sluice process with SIGKILL at a
// chosen point and run it again: the test binary runs one of its own tests
// as the child process, and a sink wrapper kills the child after a batch.
package killtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// KillAfter is a sink that delivers through Sink, then kills its own process
// (SIGKILL) once batch At is delivered: after the external system's commit
// and before sluice's.
type KillAfter struct {
	Sink domain.Sink
	At   int64
}

// Deliver implements domain.Sink.
func (k KillAfter) Deliver(ctx context.Context, b domain.SinkBatch) error {
	if err := k.Sink.Deliver(ctx, b); err != nil {
		return err
	}
	if b.BatchID == k.At {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal comes
	}
	return nil
}

// RunChild runs the test named test of this test binary as a child process,
// with env added to the environment, and returns its error with its output.
func RunChild(test string, env ...string) error {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// Killed reports whether err is that of a child that SIGKILL ended.
func Killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// WriteJSONFiles writes files JSON lines files 0.json, 1.json, ... of
// perFile rows each into dir/in, row i of file f made by line(f*perFile+i).
func WriteJSONFiles(t testing.TB, dir string, files, perFile int, line func(id int) string) {
	t.Helper()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for f := range files {
		var b strings.Builder
		for i := range perFile {
			b.WriteString(line(f*perFile + i))
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("%d.json", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
