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

	// badgerOptions, when set, adjusts Badger's options after the store has
	// set its own. Tests use it to shrink Badger's memory; it is not part of
	// the public API because the store's guarantees depend on its settings.
	badgerOptions func(badger.Options) badger.Options
}

const (
	defaultGCInterval = 5 * time.Minute
	defaultMaxGroup   = 256
)

func defaultConfig() config {
	return config{
		syncWrites: true,
		logger:     zerolog.Nop(),
		gcInterval: defaultGCInterval,
		maxGroup:   defaultMaxGroup,
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
	if c.busSet && (c.pub == nil) != (c.sub == nil) {
		return domain.Errorf(domain.CodeInvalidDefinition, "WithBus needs both a publisher and a subscriber, or neither").
			WithHint("pass nil for both to use the default in-process bus")
	}
	return nil
}

// WithSyncWrites sets whether every commit is synced to disk before Append
// returns (Badger's SyncWrites). The default is true: a committed Append
// survives power loss. With false, a crash of the machine (not of the process)
// can lose the last commits; the log stays consistent, it just ends earlier.
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

// withBadgerOptions adjusts Badger's options; for tests.
func withBadgerOptions(f func(badger.Options) badger.Options) Option {
	return func(c *config) { c.badgerOptions = f }
}
