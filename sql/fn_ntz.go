package sql

import (
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// The functions of TIMESTAMP_NTZ, a wall-clock time of no time zone stored
// as the microseconds it would be in UTC.

func init() {
	register(map[string]builtin{
		"to_timestamp_ntz":       {minArgs: 1, maxArgs: 2, compile: compileZoneForm},
		"to_timestamp_ltz":       {minArgs: 1, maxArgs: 2, compile: compileZoneForm},
		"make_timestamp_ntz":     {minArgs: 6, maxArgs: 6, compile: compileZoneForm},
		"make_timestamp_ltz":     {minArgs: 6, maxArgs: 7, compile: compileZoneForm},
		"try_make_timestamp_ntz": {minArgs: 6, maxArgs: 6, compile: compileZoneForm},
		"try_make_timestamp_ltz": {minArgs: 6, maxArgs: 7, compile: compileZoneForm},
		"convert_timezone":       {minArgs: 2, maxArgs: 3, compile: compileConvertTimezone},
	})
}

// compileZoneForm: the _ltz forms are to_timestamp and make_timestamp (and
// try_make_timestamp). The
// _ntz forms read text and fields as they do, in UTC instead of the
// session's zone, which gives the wall-clock microseconds of the result; a
// date or a timestamp argument is cast (a timestamp to its wall clock in the
// session's zone).
func compileZoneForm(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	base := compileToDatetime
	if strings.Contains(name, "make_") {
		base = compileMakeTimestamp
	}
	plain := strings.TrimSuffix(strings.TrimSuffix(name, "_ntz"), "_ltz") // try_make_timestamp keeps its try_
	if strings.HasSuffix(name, "_ltz") {
		return base(c, e, plain)
	}
	if plain == "to_timestamp" {
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		if k := x.typ().Kind; k == domain.KindDate || k == domain.KindTimestamp {
			return c.implicit(x, domain.TypeTimestampNTZ, e.Args[0].Position()), nil
		}
	}
	sess := *c.sess
	sess.TimeZone = time.UTC
	utc := *c
	utc.sess = &sess
	n, err := base(&utc, e, plain)
	if err != nil {
		return nil, err
	}
	return &widened{x: n, t: domain.TypeTimestampNTZ}, nil
}

// compileConvertTimezone: convert_timezone([source,] target, ts) is the
// wall clock in zone target at the instant ts shows in zone source (the
// session's by default), a TIMESTAMP_NTZ.
func compileConvertTimezone(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	n := len(args)
	if args[n-1], err = c.convArg(e, n-1, domain.TypeTimestampNTZ); err != nil {
		return nil, err
	}
	for i := 0; i < n-1; i++ {
		if args[i], err = asString(args[i], e.Args[i].Position(), name); err != nil {
			return nil, err
		}
	}
	sessLoc, pos := c.sess.TimeZone, e.Pos
	var zones sync.Map // name -> *time.Location; batches may evaluate at once
	zone := func(s string) (*time.Location, error) {
		if loc, ok := zones.Load(s); ok {
			return loc.(*time.Location), nil
		}
		loc, err := parseZone(s)
		if err != nil {
			return nil, exprErr(domain.CodeInvalidTimeZone, pos, "'%s' is not a time zone", s)
		}
		zones.Store(s, loc)
		return loc, nil
	}
	return &valuesNode{args: args, t: domain.TypeTimestampNTZ, fails: true, row: func(v []domain.Value) (domain.Value, error) {
		src := sessLoc
		if n == 3 {
			loc, err := zone(v[0].AsString())
			if err != nil {
				return domain.Value{}, err
			}
			src = loc
		}
		dst, err := zone(v[n-2].AsString())
		if err != nil {
			return domain.Value{}, err
		}
		instant := fromLocalMicros(v[n-1].AsInt(), src)
		return domain.TimestampMicros(localMicros(instant, dst)), nil
	}}, nil
}
