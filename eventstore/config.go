package eventstore

import (
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

// Option configures Open.
type Option func(*config)

type config struct {
	syncWrites bool
	logger     zerolog.Logger
	gcInterval time.Duration
	projectors []Projector
	maxGroup   int
	pub        message.Publisher
	sub        message.Subscriber
	busSet     bool
	readOnly   bool

	// memTableSize is Badger's memtable size; 0 leaves Badger's defaults.
	memTableSize int64
	// valueThreshold is the size from which log entries go to segment files
	// (and other values to Badger's value log).
	valueThreshold int64
	// minFree is the free-space reserve of the disk guard when minFreeSet;
	// otherwise the reserve is defaultMinFree of Badger's memtable size.
	minFree    int64
	minFreeSet bool

	// badgerOptions, when set, adjusts Badger's options after the store has
	// set its own. Tests use it to shrink Badger's memory; it is not part of
	// the public API because the store's guarantees depend on its settings.
	badgerOptions func(badger.Options) badger.Options

	// commitFault, when set, is called after each transaction commits and
	// its error is taken as the commit's: tests use it to stand for Badger
	// failing after it applied a transaction.
	commitFault func() error
}

const (
	defaultGCInterval = 5 * time.Minute
	defaultMaxGroup   = 256
)

// defaultMemTableSize is the store's memtable size unless set: Badger's own
// default (64 MiB) keeps up to five memtable arenas of that size in the heap.
// The memtable holds the log's keys and small values only (a micro-batch's
// rows go to segment files), and each arena counts in full towards the heap
// the garbage collector lets grow: 8 MiB took 12–20 MiB off the peak of a
// deduplicating pipeline, at the same speed.
const defaultMemTableSize = 8 << 20

func defaultConfig() config {
	return config{
		syncWrites:     true,
		memTableSize:   defaultMemTableSize,
		valueThreshold: defaultValueThreshold,
		logger:         zerolog.Nop(),
		gcInterval:     defaultGCInterval,
		maxGroup:       defaultMaxGroup,
	}
}

// validate reports options that make no sense, as an INVALID_DEFINITION error.
func (c *config) validate() error {
	if c.maxGroup < 1 {
		return domain.Errorf(domain.CodeInvalidDefinition, "WithMaxGroup(%d): a group holds at least one Append", c.maxGroup).
			WithHint("use WithMaxGroup(1) for one transaction per Append, or leave the default")
	}
	if c.gcInterval < 0 {
		return domain.Errorf(domain.CodeInvalidDefinition, "WithGCInterval(%s): the interval cannot be negative", c.gcInterval).
			WithHint("use 0 to disable value-log GC")
	}
	if c.memTableSize != 0 && (c.memTableSize < minMemTableSize || c.memTableSize > maxMemTableSize) {
		return domain.Errorf(domain.CodeInvalidDefinition, "WithMemTableSize(%d): the memtable size must be between %s and %s",
			c.memTableSize, fmtBytes(minMemTableSize), fmtBytes(maxMemTableSize)).
			WithHint("use a size in that range, or leave the default (8 MiB)")
	}
	if c.valueThreshold < 0 {
		return domain.Errorf(domain.CodeInvalidDefinition, "WithValueThreshold(%d): the threshold cannot be negative", c.valueThreshold).
			WithHint("use 0 for Badger's own default (1 MiB), or leave the store's (64 KiB)")
	}
	if c.minFree < 0 {
		return domain.Errorf(domain.CodeInvalidDefinition, "WithMinFreeBytes(%d): the reserve cannot be negative", c.minFree).
			WithHint("use 0 to disable the free-space guard, or leave the default")
	}
	if c.busSet && (c.pub == nil) != (c.sub == nil) {
		return domain.Errorf(domain.CodeInvalidDefinition, "WithBus needs both a publisher and a subscriber, or neither").
			WithHint("pass nil for both to use the default in-process bus")
	}
	return nil
}

// WithSyncWrites sets whether every commit is synced to disk before Append
// returns (Badger's SyncWrites, and the segment files'). The default is
// true: a committed Append survives power loss. With false, a crash of the
// machine (not of the process) can lose the last commits, and a commit kept
// may point to a segment record the crash lost, which reads as
// STORE_CORRUPT; a crash of the process loses nothing. Close syncs both.
func WithSyncWrites(on bool) Option { return func(c *config) { c.syncWrites = on } }

// WithLogger sets the logger of the store. Badger's own log lines go to it
// too: its errors and warnings at their level, its informational chatter at
// debug level. The default discards everything.
func WithLogger(l zerolog.Logger) Option { return func(c *config) { c.logger = l } }

// WithGCInterval sets how often the value log is garbage-collected: on every
// tick the store runs Badger's value-log GC until there is nothing left to
// rewrite. The default is 5 minutes; 0 disables GC. Read-only stores never run
// GC.
func WithGCInterval(d time.Duration) Option { return func(c *config) { c.gcInterval = d } }

// WithProjectors registers projectors beside the built-in "state" projector.
// They run, in the order given and after "state", inside the transaction of
// every Append and on every replay. Names must be unique, non-empty, without
// NUL bytes, and not "state". Options accumulate: several WithProjectors add
// up.
func WithProjectors(p ...Projector) Option {
	return func(c *config) { c.projectors = append(c.projectors, p...) }
}

// WithMaxGroup sets the most Append calls the committer groups into one
// transaction (group commit). The default is 256; 1 commits every Append in a
// transaction of its own, which is slower under concurrency (one sync per
// Append) and exists mostly for comparison.
func WithMaxGroup(n int) Option { return func(c *config) { c.maxGroup = n } }

// WithBus sets the watermill publisher committed events are published on and
// the subscriber Subscribe uses. The caller owns them: Close does not close
// them. The default is one in-process gochannel.GoChannel used for both,
// created and closed by the store.
func WithBus(pub message.Publisher, sub message.Subscriber) Option {
	return func(c *config) { c.pub, c.sub, c.busSet = pub, sub, true }
}

// WithReadOnly opens the store without writing to it (Badger's ReadOnly): for
// inspection while no writer runs. Append and RebuildProjections return an
// error, no GC runs. Badger takes a shared lock, so a read-only store cannot be
// opened while a writer holds the directory, and it refuses a directory that
// was not closed cleanly (open it read-write once to recover it).
func WithReadOnly() Option { return func(c *config) { c.readOnly = true } }

// WithMinFreeBytes sets the free-space reserve of the store's disk: before
// every group of Appends the committer checks the free space of the
// filesystem holding the store's directory (for unprivileged users, as df
// shows it) and refuses the Appends, with a retriable STORE_IO error saying
// how much is free and that nothing was written, when writing them would leave
// less than n bytes free. Appends work again as soon as space is freed. 0
// disables the guard.
//
// Why a reserve: Badger writes its memtable log (.mem files), its tables and
// its value log through memory-mapped files that it extends without
// allocating them. When the disk fills up, a write to such a mapping cannot
// return an error: the kernel kills the process with SIGBUS, possibly in the
// middle of a commit or of a memtable flush. Refusing to write while there is
// still room keeps the store committing whole transactions or nothing.
//
// The default is twice Badger's memtable size plus 16 MiB (32 MiB with the
// default 8 MiB memtable; see WithMemTableSize): the mapping of the current
// memtable must be able to fill up to the memtable size, flushing it then
// writes a level-0 table of up to that size again before the .mem file is
// deleted, and the 16 MiB cover the manifest, the discard file, value-log
// growth and small compactions. Free space is measured at most every 100ms,
// or sooner once the Appends admitted since the last measurement add up to an
// eighth of the reserve; between measurements the guard subtracts what it
// admitted, so it errs on the side of refusing. Caveat: a compaction of a large
// store rewrites its input before deleting it and may need more room than the
// reserve; keep the disk well clear of full, the guard is a last line of
// defence, not a capacity plan.
func WithMinFreeBytes(n int64) Option {
	return func(c *config) { c.minFree, c.minFreeSet = n, true }
}

// WithMemTableSize sets the size of Badger's memtables (Options.MemTableSize;
// the store's default is 8 MiB, Badger's own 64 MiB), for small disks,
// small machines, tests, and large transactions. It
// must be between 1 MiB and 1 GiB. Badger keeps up to five memtables in memory
// and maps a .mem file of twice the size for each, so this is the main knob on
// the store's memory and on the default free-space reserve (see
// WithMinFreeBytes).
//
// The memtable size also bounds a transaction: an Append (with its index and
// projection writes) must fit in 15% of it, so with small memtables big
// Appends fail with COMMIT_TOO_LARGE sooner. The store sizes Badger's other
// files from it: level-0 tables are memtable-sized, base-level tables are
// 1/32 of it (at least 256 KiB; 2 MiB for 64 MiB memtables, as Badger's
// default), the base level holds five of them, value-log files are
// max(4 × memtable, 16 MiB) (instead of Badger's 1 GiB), as are segment
// files, and log entries go to segment files (other values to the value
// log) from min(WithValueThreshold, 15% of the memtable) up (Badger refuses
// a larger threshold). An event must be smaller than a value-log file.
func WithMemTableSize(bytes int64) Option { return func(c *config) { c.memTableSize = bytes } }

// defaultValueThreshold is WithValueThreshold's default.
const defaultValueThreshold = 64 << 10

// WithValueThreshold sets the size from which a log entry (an event with
// its rows, as stored) is written to a segment file, Badger's tree holding a
// pointer to it, rather than kept in the tree (Badger's
// Options.ValueThreshold too; at most 15% of the memtable). The store's
// default is 64 KiB: micro-batches are written once, to a segment, and the
// tree holds keys, indexes and small events, so its flushes and compactions
// stay small however long the log grows. Badger's own default, 1 MiB, keeps
// micro-batches of small rows in the tree, whose compactions then held
// hundreds of MiB on long runs. A segment's space is given back by vacuum
// (see Reclaim) a file at a time. See segments.go for why segments rather
// than Badger's value log.
func WithValueThreshold(bytes int64) Option { return func(c *config) { c.valueThreshold = bytes } }

// withBadgerOptions adjusts Badger's options; for tests.
func withBadgerOptions(f func(badger.Options) badger.Options) Option {
	return func(c *config) { c.badgerOptions = f }
}
