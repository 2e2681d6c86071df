package sources

import (
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"unsafe"

	"github.com/sluicehq/sluice/domain"
)

// mapped is a slice of a file mapped into memory, read only. A micro-batch
// reads its slices mapped: the decoder reads the file's cached pages where
// they are, instead of a copy into fresh memory, which costs more than the
// decoding on machines where touching new memory is dear. Nothing decoded
// may keep the mapped bytes (see ownStrings), and reading them faults if the
// file shrinks under the mapping: Read turns that into an error (guarded).
type mapped struct {
	mem  []byte // the mapping, from a page boundary
	base int64  // the file offset mem starts at
}

// mapSlice maps bytes start to end of fh. ok is false where it cannot (an
// empty slice, a file system without mappings): the slice is read then.
func mapSlice(fh *os.File, start, end int64) (mapped, bool) {
	if end <= start {
		return mapped{}, false
	}
	base := start &^ int64(os.Getpagesize()-1)
	mem, err := syscall.Mmap(int(fh.Fd()), base, int(end-base), syscall.PROT_READ, mapFlags)
	if err != nil {
		return mapped{}, false
	}
	return mapped{mem: mem, base: base}, true
}

// bytes are the mapped bytes from file offset start on.
func (m mapped) bytes(start int64) []byte { return m.mem[start-m.base:] }

func (m mapped) unmap() { _ = syscall.Munmap(m.mem) }

// holds reports whether addr is in the mapping.
func (m mapped) holds(addr uintptr) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(m.mem)))
	return addr >= lo && addr < lo+uintptr(len(m.mem))
}

// guarded runs fn, which reads the bytes of maps, with a fault reading
// them (the file shrank under the mapping, or its disk failed) made a
// retriable FAILED_READ_FILE error. Any other panic goes on.
func (s *fileSource) guarded(maps *[]mapped, fn func() error) (err error) {
	defer s.faulted(maps, &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return fn()
}

// faulted is guarded's recovery: it must be the deferred call itself.
func (s *fileSource) faulted(maps *[]mapped, err *error) {
	p := recover()
	if p == nil {
		return
	}
	if f, ok := p.(interface{ Addr() uintptr }); ok {
		for _, m := range *maps {
			if m.holds(f.Addr()) {
				*err = domain.Errorf(domain.CodeFileUnreadable, "a file under %s could not be read while a micro-batch was decoded: it shrank, or its disk failed", s.dir).
					WithHint("files must only grow once written; restore it or reset the flow's checkpoint").WithNames(s.dir).AsRetriable()
				return
			}
		}
	}
	panic(p)
}

// copyPieces is pieces with their bytes copied out of any mapping.
func copyPieces(pieces []piece) []piece {
	out := make([]piece, len(pieces))
	for i, p := range pieces {
		p.data = strings.Clone(p.data)
		out[i] = p
	}
	return out
}
