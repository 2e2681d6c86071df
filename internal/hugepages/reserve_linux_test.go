package hugepages

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReserveBacksTheHeapWithHugePages touches fresh heap after Reserve and
// finds it in huge pages, where the kernel gives them on request.
func TestReserveBacksTheHeapWithHugePages(t *testing.T) {
	if !asked() {
		t.Skip("transparent huge pages are not in mode madvise here")
	}
	before := anonHuge(t)
	Reserve()
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := anonHuge(t)
	if after-before < 32<<20 {
		t.Fatalf("64 MiB touched after Reserve, %d KiB of it in huge pages; want at least 32 MiB", (after-before)>>10)
	}
	b[0] = 0 // kept until measured
}

// anonHuge is AnonHugePages of /proc/self/smaps_rollup, in bytes.
func anonHuge(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib << 10
		}
	}
	t.Fatal("no AnonHugePages in smaps_rollup")
	return 0
}
