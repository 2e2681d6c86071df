package hugepages

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Reserve releases the heap's free memory, grows the heap by up to
// heapReserve bytes (an eighth of the machine's memory at most), marks
// that range for huge pages (MADV_HUGEPAGE) and gives it back to the
// runtime untouched. Once the heap outgrows the memory it already had, it
// allocates from that range, which is faulted in 2 MiB at a time. Only the
// first call does anything.
//
// It does nothing where the kernel already backs the heap with huge pages
// (mode always) or gives none (never), where its huge pages are not 2 MiB,
// where every mapping is committed in full (vm.overcommit_memory 2) or the
// address space is limited (ulimit -v: a refused heap growth is fatal), on
// 32-bit platforms, and where the runtime is told to refuse huge pages
// (GODEBUG disablethp) or to release memory in ways that drop the advice
// or clear it again (harddecommit, madvdontneed=0).
func Reserve() { once.Do(reserve) }

var once sync.Once

func reserve() {
	if unsafe.Sizeof(uintptr(0)) < 8 || !asked() || limitedAddressSpace() ||
		godebug("disablethp") || godebug("harddecommit") || godebugIs("madvdontneed", "0") {
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
	// Memory the heap freed but still holds would be cleared when
	// allocated again, touching it: released first, none of the range
	// is, as the runtime does not clear what it takes from the system.
	debug.FreeOSMemory()
	b := make([]byte, size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	from := (start+hugePage-1)&^(hugePage-1) - start
	to := (start+uintptr(size))&^(hugePage-1) - start
	_ = syscall.Madvise(b[from:to], syscall.MADV_HUGEPAGE) // only advice: without it, small pages
	b = nil
	// Collected and released now, the range is free heap rather than an
	// object the first collections keep.
	debug.FreeOSMemory()
}

// asked reports whether huge pages of 2 MiB are given only on request: the
// mode madvise of /sys/kernel/mm/transparent_hugepage/enabled, with
// mappings committed lazily.
func asked() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") {
		return false
	}
	size, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil || strings.TrimSpace(string(size)) != strconv.Itoa(hugePage) {
		return false
	}
	overcommit, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && strings.TrimSpace(string(overcommit)) != "2"
}

// limitedAddressSpace reports whether the process's address space is
// limited (RLIMIT_AS).
func limitedAddressSpace() bool {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return true
	}
	return lim.Cur != ^uint64(0) // RLIM_INFINITY
}

// godebug reports whether the runtime setting name is on (any value but
// 0), as the runtime reads it.
func godebug(name string) bool {
	v := godebugValue(name)
	return v != "" && v != "0"
}

func godebugIs(name, value string) bool { return godebugValue(name) == value }

// godebugValue is the value of the GODEBUG setting name: the binary's
// defaults (//go:debug lines, go.mod's godebug block), then the GODEBUG
// environment variable, the last one naming it winning.
func godebugValue(name string) string {
	var all []string
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "DefaultGODEBUG" {
				all = append(all, s.Value)
			}
		}
	}
	all = append(all, os.Getenv("GODEBUG"))
	value := ""
	for _, list := range all {
		for _, kv := range strings.Split(list, ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == name {
				value = v
			}
		}
	}
	return value
}
