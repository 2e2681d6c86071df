package server

import "syscall"

// syscallUmask sets the process's umask and returns the one before.
func syscallUmask(mask int) int { return syscall.Umask(mask) }
