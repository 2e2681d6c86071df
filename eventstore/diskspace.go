package eventstore

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"github.com/sluicehq/sluice/domain"
)

// This file holds the free-space guard and Badger's sizing: see
// WithMinFreeBytes and WithMemTableSize.

const (
	minMemTableSize = 1 << 20
	maxMemTableSize = 1 << 30

	// reserveSlack is the part of the default reserve beyond two memtables.
	reserveSlack = 16 << 20

	// spaceCheckInterval is how long a free-space measurement is trusted.
	spaceCheckInterval = 100 * time.Millisecond

	// eventOverhead is what the guard counts per event beyond its encoded
	// size: keys, index entries, projection writes, Badger's entry headers.
	eventOverhead = 512
)

// sizeBadger sets Badger's memtable size and the sizes that go with it (see
// WithMemTableSize).
func sizeBadger(o badger.Options, memTable int64) badger.Options {
	baseTable := max(memTable/32, 256<<10)
	vlogFile := min(max(4*memTable, 16<<20), 1<<30-1)
	// Badger refuses a value threshold above its batch limit, 15% of the
	// memtable.
	threshold := min(o.ValueThreshold, 15*memTable/100)
	return o.WithMemTableSize(memTable).
		WithBaseTableSize(baseTable).
		WithBaseLevelSize(5 * baseTable).
		WithValueLogFileSize(vlogFile).
		WithValueThreshold(threshold)
}

// defaultMinFree is the default reserve for a memtable size (see
// WithMinFreeBytes).
func defaultMinFree(memTable int64) int64 { return 2*memTable + reserveSlack }

// spaceGuard refuses writes that would leave less than reserve bytes free on
// the disk holding dir. It caches the measured free space: it measures again
// when the measurement is older than spaceCheckInterval, when the bytes
// admitted since add up to an eighth of the reserve, and before refusing
// anything (so that freed space is seen at once). It is not safe for
// concurrent use: its users hold the store's commitMu.
type spaceGuard struct {
	dir     string
	reserve int64 // 0: the guard admits everything
	log     zerolog.Logger
	statfs  func(dir string) (free int64, err error)
	now     func() time.Time

	measured bool
	at       time.Time // when free was measured
	free     int64     // the bytes free then
	since    int64     // the bytes admitted since

	refusing bool // the last admit refused: log the recovery
	statErr  bool // the last measurement failed: log only the first failure
}

func newSpaceGuard(dir string, reserve int64, log zerolog.Logger) *spaceGuard {
	return &spaceGuard{dir: dir, reserve: reserve, log: log, statfs: freeBytes, now: time.Now}
}

// admit reports how many of the writes of needs bytes (in order) may be
// written and counts them; for the rest it returns a retriable STORE_IO error
// saying how much is free. A failed measurement admits everything (and is
// logged): the guard does not stop a store whose disk it cannot measure.
func (g *spaceGuard) admit(needs ...int64) (int, error) {
	if g == nil || g.reserve <= 0 {
		return len(needs), nil
	}
	var total int64
	for _, n := range needs {
		total += n
	}
	now := g.now()
	fresh := g.measured && now.Sub(g.at) < spaceCheckInterval && g.since < g.reserve/8
	if fresh && g.free-g.since-total >= g.reserve {
		g.since += total
		return len(needs), nil
	}
	free, err := g.statfs(g.dir)
	if err != nil {
		if !g.statErr {
			g.log.Warn().Err(err).Msg("cannot measure the free disk space; appending without the free-space guard until it can")
			g.statErr = true
		}
		g.measured = false
		return len(needs), nil
	}
	if g.statErr {
		g.log.Info().Msg("the free disk space can be measured again")
		g.statErr = false
	}
	g.measured, g.at, g.free = true, now, free
	var admitted int64
	for i, n := range needs {
		if free-admitted-n < g.reserve {
			g.since = admitted
			if !g.refusing {
				g.log.Error().Int64("free_bytes", free).Int64("reserve_bytes", g.reserve).
					Msg("disk space is below the event store's reserve; refusing appends until space is freed")
				g.refusing = true
			}
			return i, g.refusal(free-admitted, n)
		}
		admitted += n
	}
	g.since = admitted
	if g.refusing {
		g.log.Info().Int64("free_bytes", free).Msg("disk space is above the event store's reserve again; appending")
		g.refusing = false
	}
	return len(needs), nil
}

// refusal is admit's error.
func (g *spaceGuard) refusal(free, need int64) *domain.Error {
	return domain.Errorf(domain.CodeStoreIO,
		"not enough free disk space under %s: %d bytes (%s) free, less than the event store's reserve of %d bytes (%s) plus the %d bytes this commit would write",
		g.dir, free, fmtBytes(free), g.reserve, fmtBytes(g.reserve), need).
		WithHint(fmt.Sprintf("free disk space under %s (sluice keeps %s in reserve so that it never writes a partial commit); nothing was written",
			g.dir, fmtBytes(g.reserve))).
		AsRetriable()
}

// appendBytes is what the guard counts for an Append.
func appendBytes(r *appendReq) int64 {
	n := int64(eventOverhead * len(r.encoded))
	for _, p := range r.encoded {
		n += int64(len(p))
	}
	return n
}

// diskFullHint is the hint of a STORE_IO error caused by a full disk.
const diskFullHint = "the disk holding the event store is full: free disk space there and run again; a failed Append committed nothing"

// isDiskFull reports whether err says the disk (or the user's quota) is full.
// Badger does not always keep the cause's chain, so the message is checked
// too.
func isDiskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "no space left on device") || strings.Contains(msg, "disk quota exceeded")
}

// fmtBytes formats a byte count for people: "512 B", "3.5 KiB", "144 MiB".
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit && f > -unit || u == "TiB" {
			if f == float64(int64(f)) {
				return fmt.Sprintf("%d %s", int64(f), u)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	panic("unreachable")
}
