package eventstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

// Store is an open event store. Its methods are safe for concurrent use,
// except RebuildProjections, which is a maintenance operation (see there).
type Store struct {
	dir        string
	cfg        config
	log        zerolog.Logger
	db         *badger.DB
	segs       *segments    // the files of large log entries (see segments.go)
	projectors []Projector  // "state" first, then the configured ones
	space      *spaceGuard  // the free-space guard; used under commitMu
	marker     *markerFile  // the marker of a writable store; written by the committer and Close
	absDir     string       // dir, absolute, as the kernel names the store's mapped files
	unreleased int64        // bytes committed since the mapped logs were last released (see mapped.go); the committer's
	scanned    atomic.Int64 // bytes read by scans since then

	// Committing. The committer goroutine takes appendReqs from reqs and holds
	// commitMu while it commits a group; RebuildProjections holds it too, so
	// Appends wait while projections are rebuilt.
	reqs          chan *appendReq
	commitMu      sync.Mutex
	committerDone chan struct{}
	broken        atomic.Pointer[error] // the error of a failed commit: no more writes until reopened

	// maintMu keeps readers (read lock, in view) out while RebuildProjections
	// (write lock) drops and refills the indexes and projections. Lock order:
	// dbMu, commitMu, maintMu.
	maintMu sync.RWMutex

	// lastSeq is the highest committed seq. notify is closed and replaced
	// after every commit that moves lastSeq; waiters take the current channel
	// before reading lastSeq, so they cannot miss a commit.
	lastSeq  atomic.Uint64
	commits  atomic.Uint64 // transactions committed by the committer, for tests and logs
	received atomic.Uint64 // groups the committer started (first request received), for tests
	replays  atomic.Uint64 // transactions committed by RebuildProjections, for tests
	notifyMu sync.Mutex
	notify   chan struct{}

	// Publication of committed events on the bus.
	pub    message.Publisher
	sub    message.Subscriber
	ownBus *gochannel.GoChannel // the default bus, closed by Close; nil with WithBus
	queue  *pubQueue
	pubWG  sync.WaitGroup

	gcStop chan struct{}
	gcWG   sync.WaitGroup

	// dbMu keeps Badger open while a reader uses it: readers hold it shared,
	// Close takes it exclusively before closing Badger.
	dbMu sync.RWMutex

	closing   chan struct{} // closed when Close starts
	closeOnce sync.Once
	closeErr  error
}

// Open opens the store in dir, creating it when it does not exist. Only one
// Store may have a directory open at a time, in this process or any other: a
// second Open fails with STORE_IO saying another process holds the storage.
//
// On first open Open writes the keyspace format version; a directory written
// in another format is refused with STORE_FORMAT_UNSUPPORTED. If a previous
// RebuildProjections was interrupted, Open finishes it before returning (a
// read-only Open refuses such a store instead).
func Open(dir string, opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	projectors, err := checkProjectors(cfg.projectors)
	if err != nil {
		return nil, err
	}
	base := cfg.logger.With().Str("dir", dir).Logger()
	log := base.With().Str("component", "eventstore").Logger()

	bopts := badger.DefaultOptions(dir).
		WithSyncWrites(cfg.syncWrites).
		WithReadOnly(cfg.readOnly).
		WithLogger(newBadgerLogger(base)).
		// Every table block is checked when the store opens (checkTable) and
		// when it is read, every value when it is read from the value log: a
		// damaged byte is an error, never a wrong row (see integrity.go).
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true).
		// One committer writes; RebuildProjections excludes it. Conflict
		// detection would only cost memory and time.
		WithDetectConflicts(false).
		WithNumVersionsToKeep(1).
		// Reads are scans of recent events, mostly once: Badger's default
		// 256 MiB block cache filled up over long runs and held memory that
		// grew with the log; 32 MiB keeps the tables' hot blocks.
		WithBlockCacheSize(32 << 20).
		// Badger's expvar metrics are process-global; keep them off so that
		// several stores in one process do not share counters.
		WithMetricsEnabled(false)
	if cfg.valueThreshold > 0 {
		bopts = bopts.WithValueThreshold(cfg.valueThreshold)
	}
	if cfg.memTableSize > 0 {
		bopts = sizeBadger(bopts, cfg.memTableSize)
	}
	if cfg.badgerOptions != nil {
		bopts = cfg.badgerOptions(bopts)
	}
	dirState, err := prepareDir(dir, bopts, log)
	if err != nil {
		return nil, err
	}
	// A writable store's marker says "open" before Badger opens (prepareDir
	// wrote it under the directory's lock): from its open on, Badger's
	// compactors may write tables, so a process killed at any point after
	// is a crash, not a store closed cleanly whose MANIFEST lost a record.
	// If Badger refuses to open, the marker says again what it said (the
	// marker's own lock, held since prepareDir, keeps any other process
	// from having the store open meanwhile): a refused open changes no file.
	early := dirState.open
	db, err := openBadger(bopts)
	if err != nil {
		if early != nil {
			if dirState.marker.closed {
				_ = early.close(dirState.marker.lastSeq)
			} else {
				_ = early.f.Close()
			}
		}
		return nil, openError(dir, cfg.readOnly, err)
	}
	if !cfg.readOnly {
		writeHolder(dir, log) // we hold the exclusive lock: name ourselves to whoever is refused
	}

	absDir, err := filepath.Abs(dir)
	if real, rerr := filepath.EvalSymlinks(absDir); err == nil && rerr == nil {
		absDir = real // the kernel names mapped files by their real path
	}
	s := &Store{
		dir:           dir,
		absDir:        absDir,
		cfg:           cfg,
		log:           log,
		db:            db,
		projectors:    projectors,
		reqs:          make(chan *appendReq, cfg.maxGroup),
		committerDone: make(chan struct{}),
		notify:        make(chan struct{}),
		queue:         newPubQueue(),
		gcStop:        make(chan struct{}),
		closing:       make(chan struct{}),
		marker:        early,
	}
	s.space = newSpaceGuard(dir, s.reserve(), log)
	// Measure once now: a disk already below the reserve is logged at open.
	_, _ = s.space.admit(0)
	s.segs, err = openSegments(dir, cfg.readOnly, db.Opts().ValueLogFileSize, db.Opts().ValueThreshold)
	if err == nil {
		err = s.init(dirState)
	}
	if err != nil {
		if !cfg.readOnly {
			removeHolder(dir)
		}
		if s.segs != nil {
			_ = s.segs.close()
		}
		cerr := db.Close()
		if cerr != nil {
			log.Error().Err(cerr).Msg("closing badger after a failed open")
		}
		if s.marker != nil {
			if cerr == nil {
				// Badger closed: its files are synced and whole, as after
				// a clean close
				_ = s.marker.close(s.LastSeq())
			} else {
				_ = s.marker.f.Close() // left open: the store was not closed cleanly
			}
		}
		return nil, err
	}

	if cfg.busSet && cfg.pub != nil {
		s.pub, s.sub = cfg.pub, cfg.sub
	} else {
		s.ownBus = gochannel.NewGoChannel(busConfig, watermillLogger{l: base.With().Str("component", "bus").Logger()})
		s.pub, s.sub = s.ownBus, s.ownBus
	}

	go s.runCommitter()
	s.pubWG.Add(1)
	go s.runPublisher()
	if cfg.gcInterval > 0 && !cfg.readOnly {
		s.gcWG.Add(1)
		go s.runGC(cfg.gcInterval)
	}
	log.Debug().Uint64("last_seq", s.LastSeq()).Bool("read_only", cfg.readOnly).Bool("sync_writes", cfg.syncWrites).Msg("event store open")
	return s, nil
}

// reserve returns the free-space reserve of the guard (see WithMinFreeBytes):
// 0 when the store does not write or free space cannot be measured here.
func (s *Store) reserve() int64 {
	if s.cfg.readOnly {
		return 0
	}
	if _, err := freeBytes(s.dir); errors.Is(err, errors.ErrUnsupported) {
		s.log.Debug().Msg("free disk space cannot be measured on this platform; the free-space guard is off")
		return 0
	}
	if s.cfg.minFreeSet {
		return s.cfg.minFree
	}
	return defaultMinFree(s.db.Opts().MemTableSize)
}

// openError turns Badger's Open error into a STORE_IO error a user can act on.
func openError(dir string, readOnly bool, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Cannot acquire directory lock"):
		// Taken between prepareDir's look and Badger's open.
		return lockedError(dir, err)
	case isDiskFull(err):
		return domain.Wrap(domain.CodeStoreIO, err, "opening the event store in "+dir).
			WithHint("the disk holding " + dir + " is full: free disk space there and open the store again").
			AsRetriable()
	case readOnly && truncateNeeded(err):
		return domain.Wrap(domain.CodeStoreNotClosed, err, fmt.Sprintf("opening the event store in %s read-only: a process that wrote it ended without closing it", dir)).
			WithHint("run the pipeline once (sluice run), which recovers the storage; `sluice doctor` checks it without writing")
	case corruptionOf(err):
		return domain.Wrap(domain.CodeStoreCorrupt, err, "opening the event store in "+dir+": the storage is damaged").
			WithHint("nothing was changed; restore " + dir + " from a backup, or run `sluice doctor` to see every damaged file")
	}
	return domain.Wrap(domain.CodeStoreIO, err, "opening the event store in "+dir).AsRetriable()
}

// init checks the format version (writing it into a new store) and the
// marker, reads the last seq, and finishes an interrupted rebuild.
func (s *Store) init(ds dirState) error {
	var (
		format     []byte
		rebuilding bool
		last       uint64
		hasLog     bool
	)
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(metaFormatKey)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return err
		default:
			if format, err = item.ValueCopy(nil); err != nil {
				return err
			}
		}
		if _, err := txn.Get(metaRebuildKey); err == nil {
			rebuilding = true
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		last, hasLog, err = lastLogSeq(txn)
		return err
	})
	if err != nil {
		return storeIO(err, "reading the event store's metadata")
	}

	writeFormat := false
	switch {
	case format != nil:
		v, perr := strconv.ParseUint(string(format), 10, 64)
		if perr != nil || v < 1 || v > formatVersion {
			return domain.Errorf(domain.CodeStoreFormat, "the storage in %s has format version %q; this sluice reads versions 1 to %d", s.dir, format, formatVersion).
				WithHint("run a sluice at least as new as the one that wrote this storage")
		}
		writeFormat = v < formatVersion && !s.cfg.readOnly
	case hasLog:
		return domain.Errorf(domain.CodeStoreFormat, "the storage in %s holds events but no format version", s.dir).
			WithHint("this is not a sluice event store, or it is damaged; point the pipeline at its own storage directory")
	case !ds.hasMarker:
		return corruptFile(s.dir, markerName, "is missing, and Badger's files there hold no readable log: the store's metadata is lost")
	case s.cfg.readOnly:
		// A new, empty store opened read-only: nothing to read, nothing to write.
	default:
		writeFormat = true
	}
	if writeFormat {
		err := s.db.Update(func(txn *badger.Txn) error {
			return txn.Set(metaFormatKey, []byte(strconv.Itoa(formatVersion)))
		})
		if err != nil {
			return storeIO(err, "writing the event store's format version")
		}
	}
	if ds.hasMarker && last < ds.marker.lastSeq {
		return domain.Errorf(domain.CodeStoreCorrupt,
			"the storage in %s is damaged: its log ends at seq %d, but it had committed up to seq %d (a file is missing or was cut short)", s.dir, last, ds.marker.lastSeq).
			WithHint("nothing was read; restore " + s.dir + " from a backup, or run `sluice doctor` to see every damaged file")
	}
	s.lastSeq.Store(last)
	if !s.cfg.readOnly {
		if s.marker == nil {
			// A store from before markers: it gets one now.
			m := marker{id: uuid.NewString(), lastSeq: last}
			if err := createMarker(s.dir, m.id); err != nil {
				return err
			}
			mf, err := openMarker(s.dir, m)
			if err != nil {
				return err
			}
			s.marker = mf
		}
		if err := s.marker.record(last); err != nil {
			return storeIO(err, "writing "+markerName)
		}
	}

	if rebuilding {
		if s.cfg.readOnly {
			return domain.Errorf(domain.CodeInvalidUpdateState, "the projections in %s are half rebuilt: a rebuild was interrupted", s.dir).
				WithHint("open the store read-write once; Open finishes the rebuild")
		}
		s.log.Warn().Msg("a rebuild of the projections was interrupted; rebuilding them now")
		if err := s.rebuild(context.Background()); err != nil {
			return err
		}
	}
	return nil
}

// lastLogSeq returns the seq of the last log entry.
func lastLogSeq(txn *badger.Txn) (uint64, bool, error) {
	it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte{prefixLog}})
	defer it.Close()
	it.Seek(logKey(^uint64(0)))
	if !it.Valid() {
		return 0, false, nil
	}
	seq, ok := seqOfLogKey(it.Item().Key())
	if !ok {
		return 0, false, domain.Errorf(domain.CodeEventCodec, "malformed log key %s", describeKey(it.Item().KeyCopy(nil)))
	}
	return seq, true, nil
}

// Close stops the committer (Appends not yet taken fail with STORE_CLOSED),
// the GC timer and the publisher, waits for them, and closes Badger. Events
// committed but not yet published are dropped from the bus (they are in the
// log). Close is idempotent: later calls return the first call's result.
//
// With WithBus, Close waits at most 10 seconds for a Publish in flight on the
// caller's publisher and then goes on without it.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		<-s.committerDone

		close(s.gcStop)
		s.gcWG.Wait()

		s.queue.close()
		if s.ownBus != nil {
			// Unblocks a Publish waiting for a subscriber's Ack.
			if err := s.ownBus.Close(); err != nil {
				s.log.Error().Err(err).Msg("closing the event bus")
			}
		}
		published := make(chan struct{})
		go func() { s.pubWG.Wait(); close(published) }()
		select {
		case <-published:
		case <-time.After(10 * time.Second):
			s.log.Warn().Msg("the bus's publisher did not return within 10s; closing without it")
		}

		s.dbMu.Lock()
		if !s.cfg.readOnly {
			removeHolder(s.dir) // before the lock goes with Badger's close
		}
		// The segments are synced before Badger's files, which point to them.
		s.closeErr = s.segs.close()
		if err := s.db.Close(); err != nil && s.closeErr == nil {
			s.closeErr = storeIO(err, "closing the event store")
		}
		switch {
		case s.marker != nil && s.closeErr == nil:
			// Badger's files are synced and whole: the marker may say so.
			if err := s.marker.close(s.LastSeq()); err != nil {
				s.closeErr = storeIO(err, "closing "+markerName)
			}
		case s.marker != nil:
			_ = s.marker.f.Close() // it still says open: the next open checks the logs as after a crash
		}
		s.dbMu.Unlock()
		s.log.Debug().Uint64("last_seq", s.LastSeq()).Msg("event store closed")
	})
	return s.closeErr
}

// Dir returns the directory the store was opened in.
func (s *Store) Dir() string { return s.dir }

// LastSeq returns the highest committed seq; 0 when the log is empty. Every
// seq from 1 to LastSeq is readable.
func (s *Store) LastSeq() uint64 { return s.lastSeq.Load() }

// isClosed reports whether Close has started.
func (s *Store) isClosed() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// changed returns a channel closed at the next commit.
func (s *Store) changed() <-chan struct{} {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	return s.notify
}

// advance publishes a new last seq to readers and wakes every waiter.
func (s *Store) advance(last uint64) {
	s.lastSeq.Store(last)
	s.notifyMu.Lock()
	close(s.notify)
	s.notify = make(chan struct{})
	s.notifyMu.Unlock()
}

// runGC runs Badger's value-log GC on every tick until it has nothing to
// rewrite.
func (s *Store) runGC(every time.Duration) {
	defer s.gcWG.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.gcStop:
			return
		case <-t.C:
		}
		rewrites := 0
		for {
			select {
			case <-s.gcStop:
				return
			default:
			}
			err := s.db.RunValueLogGC(0.5)
			if err == nil {
				rewrites++
				continue
			}
			if !errors.Is(err, badger.ErrNoRewrite) && !errors.Is(err, badger.ErrRejected) {
				s.log.Warn().Err(err).Msg("value-log GC failed")
			}
			break
		}
		if rewrites > 0 {
			s.log.Debug().Int("rewrites", rewrites).Msg("value-log GC")
		}
	}
}

// errClosed is the error of every operation on a closed store.
func errClosed() error {
	return domain.Errorf(domain.CodeStoreClosed, "the event store is closed")
}

// storeIO wraps a Badger error as a retriable STORE_IO error, with a hint
// about disk space when the disk is full; a Badger error that means the
// database is closed becomes STORE_CLOSED.
func storeIO(err error, context string) error {
	var de *domain.Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, badger.ErrDBClosed) {
		return domain.Wrap(domain.CodeStoreClosed, err, context)
	}
	if corruptionOf(err) {
		return domain.Wrap(domain.CodeStoreCorrupt, err, context+": the storage is damaged").
			WithHint("nothing was changed; restore the storage directory from a backup, or run `sluice doctor` to see every damaged file")
	}
	e := domain.Wrap(domain.CodeStoreIO, err, context).AsRetriable()
	if isDiskFull(err) {
		e = e.WithHint(diskFullHint)
	}
	return e
}

// view runs fn in a read transaction, mapping errors; it refuses a closed
// store. fn must not call back into the store's Close.
func (s *Store) view(context string, fn func(txn *badger.Txn) error) error {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.isClosed() {
		return errClosed()
	}
	s.maintMu.RLock()
	defer s.maintMu.RUnlock()
	if err := s.db.View(fn); err != nil {
		return storeIO(err, context)
	}
	return nil
}
