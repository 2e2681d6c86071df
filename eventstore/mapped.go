package eventstore

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sluicehq/sluice/domain"
)

// Badger writes its value log and memtable logs through shared memory maps of
// the files, and keeps them mapped. Every page written or read stays resident
// in the process (it counts in its RSS) for as long as the store is open, so
// the memory of a long ingest would grow with the bytes it wrote, though the
// pages hold nothing the files do not. After commits and reads, the store
// asks the kernel to reclaim the pages of those maps (MADV_PAGEOUT): a hint
// that never loses data, which matters because Badger may unmap a file, and
// the address range be reused, between the listing of the maps and the
// advice (a MADV_DONTNEED landing on reused anonymous memory would zero it).
// Pages written but not yet synced are written back first. On kernels
// without MADV_PAGEOUT (before Linux 5.4) the advice fails and nothing
// changes.

// madvPageout is MADV_PAGEOUT, which package syscall does not name.
const madvPageout = 21

// releaseEvery is how many bytes are committed, or read by scans, between
// two releases.
const releaseEvery = 16 << 20

// released counts the bytes of events a scan read, and releases the mapped
// logs once they add up to releaseEvery: reading a value maps its page too.
func (s *Store) released(events []*domain.Event) {
	n := int64(0)
	for _, ev := range events {
		n += int64(len(ev.Data))
	}
	if s.scanned.Add(n) >= releaseEvery {
		s.scanned.Store(0)
		releaseMappedLogs(s.absDir)
	}
}

// releaseMappedLogs drops the resident pages of the shared maps of the
// store's value and memtable logs.
func releaseMappedLogs(dir string) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return // not Linux, or no procfs: nothing to release
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || len(fields[1]) < 4 || fields[1][3] != 's' {
			continue
		}
		path := fields[5]
		if filepath.Dir(path) != dir || (filepath.Ext(path) != ".vlog" && filepath.Ext(path) != ".mem") {
			continue
		}
		span := strings.SplitN(fields[0], "-", 2)
		if len(span) != 2 {
			continue
		}
		start, err1 := strconv.ParseUint(span[0], 16, 64)
		end, err2 := strconv.ParseUint(span[1], 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), madvPageout)
	}
}
