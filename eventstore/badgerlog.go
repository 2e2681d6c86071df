package eventstore

import (
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
)

// badgerLogger routes Badger's log lines to zerolog. Badger is chatty at info
// level (compactions, flushes, replays), so its info lines go out at debug
// level and its debug lines at trace level.
type badgerLogger struct{ l zerolog.Logger }

var _ badger.Logger = badgerLogger{}

func newBadgerLogger(l zerolog.Logger) badgerLogger {
	return badgerLogger{l: l.With().Str("component", "badger").Logger()}
}

func (b badgerLogger) Errorf(f string, args ...any)   { b.log(b.l.Error(), f, args) }
func (b badgerLogger) Warningf(f string, args ...any) { b.log(b.l.Warn(), f, args) }
func (b badgerLogger) Infof(f string, args ...any)    { b.log(b.l.Debug(), f, args) }
func (b badgerLogger) Debugf(f string, args ...any)   { b.log(b.l.Trace(), f, args) }

// log formats only when the level is enabled (e is nil otherwise) and trims
// the newline Badger ends most lines with.
func (badgerLogger) log(e *zerolog.Event, f string, args []any) {
	if e == nil {
		return
	}
	e.Msg(strings.TrimRight(fmt.Sprintf(f, args...), "\n"))
}
