package sources

import "syscall"

// mapFlags map a slice with its pages in place at once: one call, rather
// than a fault for each page the decoder reaches.
const mapFlags = syscall.MAP_SHARED | syscall.MAP_POPULATE
