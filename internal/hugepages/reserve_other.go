//go:build !linux

package hugepages

// Reserve does nothing here: the Linux kernel's transparent huge pages are
// what it asks for.
func Reserve() {}
