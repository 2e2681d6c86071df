package hugepages

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestReserveBacksTheHeapWithHugePages frees some heap, reserves, and
// finds that Reserve touched (almost) none of its range, and that fresh
// heap touched after it is in huge pages, where the kernel gives them on
// request.
func TestReserveBacksTheHeapWithHugePages(t *testing.T) {
	if !asked() || limitedAddressSpace() || godebug("disablethp") || godebug("harddecommit") || godebugIs("madvdontneed", "0") {
		t.Skip("Reserve does nothing here")
	}
	garbage := make([]byte, 32<<20) // freed heap memory not yet released
	for i := 0; i < len(garbage); i += 4096 {
		garbage[i] = 1
	}
	garbage = nil
	runtime.GC()

	// the peak of the resident set, reset, tells whether Reserve touched
	// its range, even where the release after let go of it
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skip(err)
	}
	rss := field(t, "/proc/self/status", "VmRSS:")
	reserve() // not once: each run of the test reserves
	if grown := field(t, "/proc/self/status", "VmHWM:") - rss; grown > 16<<20 {
		t.Fatalf("Reserve touched %d MiB of its range; want it untouched", grown>>20)
	}
	before := field(t, "/proc/self/smaps_rollup", "AnonHugePages:") // after Reserve, which releases the heap's free memory
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := field(t, "/proc/self/smaps_rollup", "AnonHugePages:")
	if after-before < 32<<20 {
		t.Fatalf("64 MiB touched after Reserve, %d KiB of it in huge pages; want at least 32 MiB", (after-before)>>10)
	}
	runtime.KeepAlive(b)
}

func TestGodebugReadsAsTheRuntime(t *testing.T) {
	for _, c := range []struct {
		env  string
		want bool
	}{
		{"", false},
		{"disablethp=1", true},
		{"disablethp=2", true},
		{"disablethp=0", false},
		{"xdisablethp=1", false},
		{"gctrace=1, disablethp=1", true},
		{"disablethp=1,disablethp=0", false},
	} {
		t.Setenv("GODEBUG", c.env)
		if got := godebug("disablethp"); got != c.want {
			t.Errorf("GODEBUG=%q: disablethp %v, want %v", c.env, got, c.want)
		}
	}
}

// field is a size line of a /proc file such as smaps_rollup, in bytes.
func field(t *testing.T, path, key string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib << 10
		}
	}
	t.Fatalf("no %s in %s", key, path)
	return 0
}
