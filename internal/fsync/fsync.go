// Package fsync makes file system changes durable.
package fsync

import "os"

// Dir syncs a directory, so that the files created, renamed or removed in
// it survive a crash.
func Dir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
