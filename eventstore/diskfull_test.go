package eventstore

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// The disk-full test fills a small tmpfs with a store until Append refuses,
// in a child process (this test binary run again with envDiskFullChild set to
// the store's directory), so that a SIGBUS from one of Badger's mmapped files
// fails the test with a clear message instead of killing the test run. The
// child prints a line per committed Append and one for the refusal; the
// parent then reopens the store and checks every reported commit.
const (
	envDiskFullChild = "SLUICE_EVENTSTORE_DISKFULL_CHILD"

	diskFullTmpfs    = 64 << 20
	diskFullFiller   = 20 << 20 // a file taking part of the tmpfs, deleted to free space
	diskFullMemTable = 4 << 20  // reserve: 2 × 4 MiB + 16 MiB = 24 MiB
	diskFullPayload  = 64 << 10
	diskFullMaxTries = 2000 // 125 MiB of payloads: far more than the tmpfs holds

	childCommitted = "diskfull-committed"
	childRefused   = "diskfull-refused"
	childClosed    = "diskfull-closed"
)

func diskFullOptions() []Option {
	// Sync writes on, the default reserve: as a user runs it.
	return []Option{WithMemTableSize(diskFullMemTable), WithSyncWrites(true)}
}

// diskFullEvent is the i-th event of the child, with a payload of random
// bytes (incompressible, so that Badger's compression does not shrink it).
func diskFullEvent(i int) *domain.Event {
	e := ev(domain.EventPlanningInformation, "fill", "", "", "fill "+strconv.Itoa(i))
	e.Data = make([]byte, diskFullPayload)
	rng := rand.NewChaCha8([32]byte{byte(i), byte(i >> 8), byte(i >> 16)})
	_, _ = rng.Read(e.Data)
	return e
}

func checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestDiskFull(t *testing.T) {
	if dir := os.Getenv(envDiskFullChild); dir != "" {
		fillDisk(t, dir)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("the disk-full test mounts a Linux tmpfs")
	}
	mnt := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", diskFullTmpfs), "tmpfs", mnt).CombinedOutput()
	if err != nil {
		msg := strings.ToLower(string(out))
		if os.Geteuid() != 0 || strings.Contains(msg, "permission denied") || strings.Contains(msg, "not permitted") {
			t.Skipf("cannot mount a tmpfs (euid %d): %v: %s", os.Geteuid(), err, bytes.TrimSpace(out))
		}
		t.Fatalf("mount tmpfs on %s: %v: %s", mnt, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, bytes.TrimSpace(out))
		}
	})
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, diskFullFiller), 0o600); err != nil {
		t.Fatalf("writing the filler: %v", err)
	}
	dir := filepath.Join(mnt, "store")

	// Fill the disk in the child.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDiskFull$", "-test.count=1")
	cmd.Env = append(os.Environ(), envDiskFullChild+"="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil {
		switch {
		case strings.Contains(stderr.String(), "SIGBUS"):
			t.Fatalf("the child filling the disk died of SIGBUS (a write to a full disk through one of Badger's mmapped files) after %d commits: %v\n%s",
				strings.Count(stdout.String(), childCommitted+"\t"), err, around(stderr.String(), "SIGBUS", 30))
		case ctx.Err() != nil:
			t.Fatalf("the child filling the disk did not finish within the timeout: %v\nstdout:\n%s\nstderr:\n%s",
				err, tail(stdout.String(), 20), tail(stderr.String(), 40))
		default:
			t.Fatalf("the child filling the disk failed: %v\nstdout:\n%s\nstderr:\n%s",
				err, tail(stdout.String(), 20), tail(stderr.String(), 40))
		}
	}

	// What the child reported.
	committed := map[uint64]string{} // seq -> payload checksum
	var last uint64
	var refusal []string // code, retriable, message, hint
	closed := false
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch f[0] {
		case childCommitted:
			seq, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil || len(f) != 3 {
				t.Fatalf("bad line from the child: %q", sc.Text())
			}
			committed[seq], last = f[2], max(last, seq)
		case childRefused:
			if len(f) != 5 {
				t.Fatalf("bad line from the child: %q", sc.Text())
			}
			refusal = f[1:]
		case childClosed:
			closed = true
		}
	}
	if refusal == nil || !closed {
		t.Fatalf("the child did not report a refusal and a close\nstdout:\n%s", tail(stdout.String(), 20))
	}
	if len(committed) < 50 {
		t.Fatalf("the child committed only %d Appends before the refusal; want the disk filled by many", len(committed))
	}
	t.Logf("the child committed %d Appends of %d KiB, then: [%s] %s (hint: %s)",
		len(committed), diskFullPayload>>10, refusal[0], refusal[2], refusal[3])
	if code, retriable := refusal[0], refusal[1]; code != string(domain.CodeStoreIO) || retriable != "true" {
		t.Errorf("refusal has code %s, retriable %s; want STORE_IO, retriable", code, retriable)
	}
	if msg := refusal[2]; !strings.Contains(msg, "free disk space") || !strings.Contains(msg, dir) {
		t.Errorf("refusal message %q does not speak of free disk space under %s", msg, dir)
	}
	if hint := refusal[3]; !strings.Contains(hint, "free disk space under "+dir) || !strings.Contains(hint, "nothing was written") {
		t.Errorf("refusal hint %q does not say to free disk space under %s and that nothing was written", hint, dir)
	}

	// Every reported commit is there, intact, and nothing else.
	s, err := Open(dir, diskFullOptions()...)
	if err != nil {
		t.Fatalf("reopening the store on the full disk: %v", err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if got := s.LastSeq(); got != last {
		t.Errorf("LastSeq after reopening = %d, want %d, the last seq the child committed", got, last)
	}
	for seq := uint64(1); seq <= last; seq++ {
		want, ok := committed[seq]
		if !ok {
			t.Errorf("the child did not report seq %d, below its last seq %d", seq, last)
			continue
		}
		e, err := s.Get(seq)
		if err != nil {
			t.Errorf("Get(%d): %v", seq, err)
			continue
		}
		if got := checksum(e.Data); got != want || len(e.Data) != diskFullPayload {
			t.Errorf("event %d: payload of %d bytes with checksum %s, want %d bytes with %s", seq, len(e.Data), got, diskFullPayload, want)
		}
	}

	// Still (nearly) full: refused soon. Badger may have freed some space
	// since the child's refusal (a flush or a compaction finishing, at Close
	// or at Open), so a few more Appends may fit first.
	for i := 0; ; i++ {
		before := s.LastSeq()
		_, err = s.Append(context.Background(), diskFullEvent(diskFullMaxTries+i))
		if err != nil {
			wantCode(t, err, domain.CodeStoreIO)
			if got := s.LastSeq(); got != before {
				t.Errorf("LastSeq after a refused Append = %d, want %d", got, before)
			}
			break
		}
		if i == 100 {
			t.Fatalf("the reopened store took 100 more Appends of %d KiB on the full disk", diskFullPayload>>10)
		}
	}
	last = s.LastSeq()

	// Freed: Appends work again.
	if err := os.Remove(filler); err != nil {
		t.Fatalf("removing the filler: %v", err)
	}
	e := diskFullEvent(-1)
	seqs, err := s.Append(context.Background(), e)
	if err != nil {
		t.Fatalf("Append after freeing %d MiB: %v", diskFullFiller>>20, err)
	}
	if seqs[0] != last+1 {
		t.Errorf("Append after freeing space got seq %d, want %d", seqs[0], last+1)
	}
	got, err := s.Get(seqs[0])
	if err != nil || checksum(got.Data) != checksum(e.Data) {
		t.Errorf("Get(%d) after freeing space: payload intact %v, error %v", seqs[0], err == nil && checksum(got.Data) == checksum(e.Data), err)
	}
}

// fillDisk is the child of TestDiskFull: it appends to a store in dir until
// Append fails, printing every committed seq with its payload's checksum, then
// the refusal, and closes the store.
func fillDisk(t *testing.T, dir string) {
	s, err := Open(dir, diskFullOptions()...)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	for i := range diskFullMaxTries {
		e := diskFullEvent(i)
		seqs, err := s.Append(context.Background(), e)
		if err != nil {
			de, _ := err.(*domain.Error)
			if de == nil {
				t.Fatalf("Append %d failed with %T, not a *domain.Error: %v", i, err, err)
			}
			fmt.Printf("%s\t%s\t%t\t%s\t%s\n", childRefused, de.Code, de.Retriable, oneLine(de.Message), oneLine(de.Hint))
			break
		}
		// Straight to stdout (unbuffered) before the next Append: a crash
		// loses no report of a commit.
		fmt.Printf("%s\t%d\t%s\n", childCommitted, seqs[0], checksum(e.Data))
		if i == diskFullMaxTries-1 {
			t.Fatalf("%d Appends of %d KiB all succeeded on a %d MiB disk", diskFullMaxTries, diskFullPayload>>10, diskFullTmpfs>>20)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	fmt.Printf("%s\n", childClosed)
}

func oneLine(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

// around returns n lines of s from the one holding mark (a crash's first
// goroutine, for SIGBUS).
func around(s, mark string, n int) string {
	if i := strings.Index(s, mark); i >= 0 {
		s = s[strings.LastIndexByte(s[:i], '\n')+1:]
	}
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
