package sql

import "time"

// DatetimeParser returns a reader of text written in the Spark datetime
// pattern p, as to_timestamp(text, p) reads it (in UTC unless the text
// carries an offset): microseconds since the epoch, and false for text the
// pattern does not read. File sources use it for dateFormat and
// timestampFormat.
func DatetimeParser(p string) (func(string) (int64, bool), error) {
	pat, err := compilePattern(p)
	if err != nil {
		return nil, err
	}
	return func(s string) (int64, bool) { return pat.parse(s, time.UTC) }, nil
}

// DateParser is DatetimeParser for dates: days since the epoch.
func DateParser(p string) (func(string) (int64, bool), error) {
	parse, err := DatetimeParser(p)
	if err != nil {
		return nil, err
	}
	return func(s string) (int64, bool) {
		us, ok := parse(s)
		return floorDiv(us, 86_400_000_000), ok
	}, nil
}
