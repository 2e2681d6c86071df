package eventstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// dirState is what prepareDir learned of a store's directory.
type dirState struct {
	marker    marker
	hasMarker bool
	// open is the marker of a writable store, already saying "open": it
	// is written under the directory's lock, before Badger opens and may
	// write a table (see Open)
	open *markerFile
}

// prepareDir readies a store's directory for Badger's open, holding the lock
// Badger takes (exclusive to write, shared to read), so that no other sluice
// writes the files meanwhile: it checks the files (checkFiles), writes the
// marker of a new store, and removes the empty log files a crash can leave.
// When another process holds the lock, it checks nothing and returns
// STORE_LOCKED, naming that process (see lock.go).
func prepareDir(dir string, opts badger.Options, log zerolog.Logger) (dirState, error) {
	readOnly := opts.ReadOnly
	var ds dirState
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		if readOnly {
			return ds, nil
		}
		if err := createMarker(dir, uuid.NewString()); err != nil {
			return ds, err
		}
		d, err = os.Open(dir)
	}
	if err != nil {
		return ds, storeIO(err, "opening the storage directory "+dir)
	}
	defer d.Close()
	how := syscall.LOCK_EX
	if readOnly {
		how = syscall.LOCK_SH
	}
	if err := syscall.Flock(int(d.Fd()), how|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		return ds, lockedError(dir, nil)
	} else if err != nil {
		return ds, nil // flock is not supported here: Badger's open decides
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)

	sf, err := listStore(dir)
	if err != nil {
		return ds, err
	}
	if ds.marker, ds.hasMarker, err = checkFiles(dir, sf, opts); err != nil {
		return ds, err
	}
	if !ds.hasMarker && !sf.hasData() && !readOnly {
		// A new store: the marker comes first (see createMarker).
		ds.marker = marker{id: uuid.NewString()}
		if err := createMarker(dir, ds.marker.id); err != nil {
			return ds, err
		}
		ds.hasMarker = true
	}
	if !readOnly {
		removeEmptyLogFiles(dir, sf, log)
		if ds.hasMarker {
			if ds.open, err = openMarker(dir, ds.marker); err != nil {
				return ds, err
			}
		}
	}
	return ds, nil
}

// removeEmptyLogFiles works around a Badger defect (dgraph-io/badger#2207):
// a process killed between creating a memtable (.mem) or value log (.vlog)
// file and sizing it leaves a file of zero bytes, and Badger then refuses to
// open the directory. Such a file holds nothing, so removing it loses
// nothing. The caller holds the directory's lock.
func removeEmptyLogFiles(dir string, sf storeFiles, log zerolog.Logger) {
	for _, name := range append(append([]string{}, sf.memLogs...), sf.valueLog...) {
		path := filepath.Join(dir, name)
		info, err := os.Lstat(path)
		if err != nil || info.Size() != 0 || !info.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(path); err != nil {
			log.Warn().Err(err).Str("file", path).Msg("could not remove an empty log file left by a crash")
			continue
		}
		log.Warn().Str("file", path).Msg("removed an empty log file left by a crash")
	}
}

// openBadger opens Badger, turning a panic on damaged files into an error.
func openBadger(opts badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("badger panicked opening the store (corrupt files): %v", firstLine(fmt.Sprint(r)))
		}
	}()
	return badger.Open(opts)
}
