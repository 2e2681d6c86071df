// Package hugepages asks the operating system to back the Go heap with
// transparent huge pages where it gives them only to those who ask.
//
// The first touch of each 4 KiB page of fresh memory is a page fault. A
// stream processor's heap is mostly fresh memory: a micro-batch's columns,
// the read buffers, a deduplication's identities, each growing to its peak
// once. Under virtualization a fault is dear (about 10 µs on a small cloud
// machine, 2.6 ms per MiB touched): W2 of the benchmarks, peaking at 250
// MiB, spent about 0.6 s of its 2.1 s there. A 2 MiB page is one fault for
// 512 of them.
package hugepages

// heapReserve is the most of the heap's address range marked for huge
// pages. It costs address space and the runtime's bookkeeping for it
// (about 1.5 MiB), not memory, until the heap grows into it.
const heapReserve = 1 << 30

// hugePage is the size of the transparent huge pages asked for: the
// x86-64 and 4 KiB-page arm64 size. Where the kernel's are larger (arm64
// with 64 KiB pages: 512 MiB), one touch would take too much.
const hugePage = 2 << 20
