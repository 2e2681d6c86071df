package eventstore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
)

// removeEmptyLogFiles works around a Badger defect (dgraph-io/badger#2207):
// a process killed between creating a memtable (.mem) or value log (.vlog)
// file and sizing it leaves a file of zero bytes, and Badger then refuses to
// open the directory. Such a file holds nothing, so removing it loses
// nothing. It is done only while holding the directory's lock, the one Badger
// takes, so that a file a live process just created is never touched; when
// another process holds the lock, nothing is done and Badger's own open
// reports the lock. Read-only opens leave the directory as it is.
func removeEmptyLogFiles(dir string, log zerolog.Logger) {
	d, err := os.Open(dir)
	if err != nil {
		return // a new store: Badger creates the directory
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	entries, err := d.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".mem") && !strings.HasSuffix(name, ".vlog") {
			continue
		}
		info, err := e.Info()
		if err != nil || info.Size() != 0 || !info.Mode().IsRegular() {
			continue
		}
		path := filepath.Join(dir, name)
		if err := os.Remove(path); err != nil {
			log.Warn().Err(err).Str("file", path).Msg("could not remove an empty log file left by a crash")
			continue
		}
		log.Warn().Str("file", path).Msg("removed an empty log file left by a crash")
	}
}
