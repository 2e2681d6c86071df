//go:build !linux

package sources

import "syscall"

// mapFlags map a slice shared (read only), its pages brought in as read.
const mapFlags = syscall.MAP_SHARED
