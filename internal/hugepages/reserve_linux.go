package hugepages

import (
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"unsafe"
)

// Reserve grows the heap by up to heapReserve bytes (an eighth of the
// machine's memory at most), marks that range for huge pages
// (MADV_HUGEPAGE) and gives it back to the runtime untouched. The heap's
// next allocations come from that range first, so that they are faulted
// in 2 MiB at a time. It does nothing where the kernel already backs the
// heap with huge pages (mode always), gives none (never), or commits
// every mapping in full (vm.overcommit_memory 2), and with
// GODEBUG=disablethp=1, the runtime's own way of refusing them.
func Reserve() {
	if !asked() || strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		return
	}
	size := uint64(heapReserve)
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err == nil {
		size = min(size, uint64(info.Totalram)*uint64(info.Unit)/8)
	}
	if size < 4*hugePage {
		return
	}
	// A large allocation from memory the heap never used is not cleared,
	// so none of it is touched here.
	b := make([]byte, size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	from := (start+hugePage-1)&^(hugePage-1) - start
	to := (start+uintptr(size))&^(hugePage-1) - start
	_ = syscall.Madvise(b[from:to], syscall.MADV_HUGEPAGE) // only advice: without it, small pages
	b = nil
	// Collected and released now, the range is free heap the next
	// allocations take, rather than an object the first collections keep.
	debug.FreeOSMemory()
}

// asked reports whether huge pages are given only on request: the mode
// madvise of /sys/kernel/mm/transparent_hugepage/enabled, with mappings
// committed lazily.
func asked() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") {
		return false
	}
	overcommit, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && strings.TrimSpace(string(overcommit)) != "2"
}
