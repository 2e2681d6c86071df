package processors

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

// Options says what one update does and how. The zero value is a default
// triggered update of every table.
type Options struct {
	// Cause is recorded in create_update: "user_action", "api_call", ...
	Cause string

	// FullRefreshAll resets every table and every flow checkpoint, then
	// reprocesses everything.
	FullRefreshAll bool
	// FullRefresh resets the named tables (and the checkpoints of the flows
	// into them) and refreshes only them; other flows are EXCLUDED.
	FullRefresh []string
	// Refresh refreshes only the named datasets; other flows are EXCLUDED.
	Refresh []string
	// RefreshFailed refreshes the datasets whose last flow failed, and
	// everything downstream of them.
	RefreshFailed bool
	// ResetCheckpoint resets the checkpoints of the named flows: they reread
	// their sources into the existing tables. Once flows among them run again.
	ResetCheckpoint []string
	// DryRun validates and records the definitions, and does nothing else.
	DryRun bool

	// Development turns off retries.
	Development bool
	// MaxConcurrentFlows bounds the micro-batches running at once (default 4).
	MaxConcurrentFlows int
	// Retry is the retry policy in production mode.
	Retry RetryPolicy
	// PollInterval is how often a continuous flow over an external source asks
	// it for new data (default 1s). Flows over the pipeline's own tables are
	// woken by commits instead.
	PollInterval time.Duration
	// IdleAfter is how long a continuous flow waits, caught up, before it
	// reports IDLE (default 1s).
	IdleAfter time.Duration
	// Limit bounds each micro-batch of a streaming read (and of a once
	// flow, but for the files), so that memory stays flat however much input
	// there is. Each bound unset is DefaultLimit's. A table stream takes at
	// least one committed batch, a file source at least one record.
	Limit domain.ReadLimit

	// StateMemory is how many bytes of keys the state of each table AUTO
	// CDC flows write keeps in memory; past it, the keys a micro-batch did
	// not touch are spilled to the system's temporary directory, and read
	// back when a change comes for them. It bounds each deduplication's
	// identities too: past it, the older half of them moves to a file
	// there (see identities.spillIfOver). 0 means DefaultStateMemory (1
	// GiB); negative keeps every key in memory.
	StateMemory int64

	// Logger receives the update's progress (start, retries, failures, end);
	// the zero Logger discards it. The event log records everything anyway.
	Logger zerolog.Logger
}

// DefaultLimit bounds a micro-batch by default: 1000 files, 50,000 rows
// and 16 MiB of input. A source's own bounds (maxFilesPerTrigger,
// maxBytesPerTrigger, maxRowsPerTrigger) can only lower them.
var DefaultLimit = domain.ReadLimit{MaxFiles: 1000, MaxRows: 50_000, MaxBytes: 16 << 20}

// RetryPolicy says how often and how soon a failing flow is retried in
// production mode: after Initial, then doubling, at most Max between tries.
type RetryPolicy struct {
	Attempts int // retries after the first failure: 0 means the default, 3; negative means none
	Initial  time.Duration
	Max      time.Duration
}

func (o Options) withDefaults() Options {
	if o.Cause == "" {
		o.Cause = "api_call"
	}
	if o.MaxConcurrentFlows <= 0 {
		o.MaxConcurrentFlows = 4
	}
	if o.Retry.Attempts == 0 {
		o.Retry.Attempts = 3
	}
	if o.Retry.Initial <= 0 {
		o.Retry.Initial = time.Second
	}
	if o.Retry.Max <= 0 {
		o.Retry.Max = 30 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	// Each bound left unset is the default's: setting MaxRows alone keeps
	// memory bounded by bytes too.
	if o.Limit.MaxFiles == 0 {
		o.Limit.MaxFiles = DefaultLimit.MaxFiles
	}
	if o.Limit.MaxRows == 0 {
		o.Limit.MaxRows = DefaultLimit.MaxRows
	}
	if o.Limit.MaxBytes == 0 {
		o.Limit.MaxBytes = DefaultLimit.MaxBytes
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = time.Second
	}
	return o
}

// backoff is the wait before retry n (0-based).
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.Initial
	for i := 0; i < n && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}
