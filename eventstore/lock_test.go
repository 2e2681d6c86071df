package eventstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// TestStoreLocked: an open refused because another holder has the store is
// STORE_LOCKED, retriable, naming the holder (its pid, whether it writes or
// reads, its command line) in our words, not Badger's, with a hint saying
// what to do. The writer records itself in the holder file while it holds
// the store; a holder file a dead process left is not believed.
func TestStoreLocked(t *testing.T) {
	dir := t.TempDir()
	holderFile := filepath.Join(dir, holderName)
	me := "pid " + strconv.Itoa(os.Getpid()) + " (this process)"
	locked := func(t *testing.T, err error, want ...string) {
		t.Helper()
		wantCode(t, err, domain.CodeStoreLocked)
		var de *domain.Error
		if !errors.As(err, &de) || !de.Retriable || !strings.Contains(de.Hint, "kill "+strconv.Itoa(os.Getpid())) {
			t.Errorf("refusal %#v: want a retriable error with a hint naming the pid", err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v does not say %q", err, w)
			}
		}
		if strings.Contains(err.Error(), "Cannot acquire") || strings.Contains(err.Error(), "Badger") {
			t.Errorf("the refusal shows Badger's words: %v", err)
		}
	}

	w := openAt(t, dir)
	rec, ok := readHolder(dir)
	if !ok || rec.PID != os.Getpid() || len(rec.Args) == 0 || rec.Args[0] != os.Args[0] || rec.Since.IsZero() {
		t.Fatalf("holder file while writing: %+v, %v", rec, ok)
	}
	for _, opts := range [][]Option{{smallBadger()}, {smallBadger(), WithReadOnly()}} {
		_, err := Open(dir, opts...)
		locked(t, err, me+", writing it", commandLine(os.Args), "since ")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(holderFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the holder file outlives the writer: %v", err)
	}

	// A reader holds the store; the holder file a dead writer left says
	// otherwise.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true command to get a dead pid from")
	}
	stale := `{"pid":` + strconv.Itoa(dead.Process.Pid) + `,"args":["sluice","run"],"since":"2026-01-01T00:00:00Z"}`
	if err := os.WriteFile(holderFile, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	openAt(t, dir, WithReadOnly())
	_, err := Open(dir, smallBadger())
	locked(t, err, me+", reading it")
	if strings.Contains(err.Error(), "sluice run") {
		t.Errorf("the refusal believes a dead writer's holder file: %v", err)
	}
	if _, ok := readHolder(dir); !ok {
		t.Error("a reader touched the holder file")
	}
}

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sluice", "run", "--continuous"}, "sluice run --continuous"},
		{[]string{"sluice", "-p", "my pipeline", "events", ""}, `sluice -p "my pipeline" events ""`},
		{[]string{strings.Repeat("x", 300)}, strings.Repeat("x", 200) + "…"},
	} {
		if got := commandLine(c.args); got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
