//go:build !(linux || darwin || freebsd || dragonfly)

package eventstore

import "errors"

// freeBytes cannot measure free space on this platform; Open turns the guard
// off.
func freeBytes(string) (int64, error) { return 0, errors.ErrUnsupported }
