package sql

import (
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// textOptions are the options of the JSON and CSV functions (from_json,
// to_json, from_csv, to_csv, schema_of_csv), given as Spark takes them:
// map('key', 'value', ...) of string literals, keys in any case. The ones
// that mean something for one value are read; any other is
// NOT_IMPLEMENTED, naming it and the ones read.
type textOptions struct {
	failFast       bool           // mode FAILFAST: a record that does not parse or fit fails the query
	date, ts       pattern        // dateFormat, timestampFormat; nil: ISO 8601
	sep            byte           // sep or delimiter (CSV): ',' by default
	nullValue      string         // nullValue (CSV): the text of NULL
	keepNullFields bool           // ignoreNullFields false (to_json): NULL fields written as null
	loc            *time.Location // the session's time zone, for timestamps
}

// textOption keys, lower case, and what they are.
var textOptionKeys = map[string]string{
	"mode":             "PERMISSIVE or FAILFAST",
	"dateformat":       "a datetime pattern for dates",
	"timestampformat":  "a datetime pattern for timestamps",
	"sep":              "the field separator, one character",
	"delimiter":        "the field separator, one character",
	"nullvalue":        "the text of NULL",
	"ignorenullfields": "true or false",
}

// textOptionsOf reads argument at of e, if there is one, taking only the
// keys known (lower case).
func (c *compiler) textOptionsOf(e *syntax.FuncCall, at int, name string, known ...string) (textOptions, error) {
	o := textOptions{sep: ',', loc: c.sess.TimeZone}
	if o.loc == nil {
		o.loc = time.UTC
	}
	if len(e.Args) <= at {
		return o, nil
	}
	arg := e.Args[at]
	m, ok := arg.(*syntax.FuncCall)
	if !ok || len(m.Name.Parts) != 1 || !strings.EqualFold(m.Name.Last().Name, "map") || len(m.Args)%2 != 0 {
		return o, exprErr(domain.CodeInvalidOptions, arg.Position(), "the options of %s must be map('key', 'value', ...)", name)
	}
	for i := 0; i < len(m.Args); i += 2 {
		key, ok1 := stringConst(m.Args[i])
		value, ok2 := stringConst(m.Args[i+1])
		if !ok1 || !ok2 {
			return o, exprErr(domain.CodeInvalidOptions, m.Args[i].Position(), "the options of %s must be string literals", name)
		}
		k := strings.ToLower(key)
		if !slices.Contains(known, k) {
			var read []string
			for _, kk := range known {
				read = append(read, kk+" ("+textOptionKeys[kk]+")")
			}
			return o, exprErr(domain.CodeNotImplemented, m.Args[i].Position(), "%s does not take the option %q; it takes %s", name, key, strings.Join(read, ", "))
		}
		bad := func(why string) error {
			return exprErr(domain.CodeInvalidOptions, m.Args[i+1].Position(), "the option %s of %s must be %s, not %q", key, name, why, value)
		}
		switch k {
		case "mode":
			switch strings.ToUpper(value) {
			case "PERMISSIVE":
			case "FAILFAST":
				o.failFast = true
			default:
				return o, bad("PERMISSIVE or FAILFAST")
			}
		case "dateformat", "timestampformat":
			p, err := compilePattern(value)
			if err != nil {
				return o, exprErr(domain.CodeInvalidDatetimePattern, m.Args[i+1].Position(), "the datetime pattern '%s' is not valid: %v", value, err)
			}
			if k == "dateformat" {
				o.date = p
			} else {
				o.ts = p
			}
		case "sep", "delimiter":
			if value == `\t` {
				value = "\t"
			}
			if len(value) != 1 || value == `"` || value == "\n" || value == "\r" {
				return o, bad("one character other than a quote or a line break")
			}
			o.sep = value[0]
		case "nullvalue":
			o.nullValue = value
		case "ignorenullfields":
			switch strings.ToLower(value) {
			case "true":
			case "false":
				o.keepNullFields = true
			default:
				return o, bad("true or false")
			}
		}
	}
	return o, nil
}

// parseDateText reads a date as the options say: by dateFormat, else ISO.
func (o *textOptions) parseDateText(s string) (int64, bool) {
	if o.date == nil {
		return parseDate(s)
	}
	us, ok := o.date.parse(s, time.UTC)
	return floorDiv(us, microsPerDay), ok
}

// parseTimestampText reads a timestamp as the options say: by
// timestampFormat in the session's zone, else ISO.
func (o *textOptions) parseTimestampText(s string, ntz bool) (int64, bool) {
	loc := o.loc
	if ntz {
		loc = time.UTC
	}
	if o.ts == nil {
		return parseTimestampIn(s, loc)
	}
	return o.ts.parse(s, loc)
}

// jsonStyle is how to_json writes dates and timestamps, and NULL fields.
func (o *textOptions) jsonStyle() *domain.JSONStyle {
	s := &domain.JSONStyle{NullFields: o.keepNullFields}
	if o.date != nil {
		p := o.date
		s.Date = func(b []byte, days int64) []byte { return p.format(b, days*microsPerDay, time.UTC) }
	}
	if o.ts != nil {
		p, loc := o.ts, o.loc
		s.Timestamp = func(b []byte, us int64, ntz bool) []byte {
			if ntz {
				return p.format(b, us, time.UTC)
			}
			return p.format(b, us, loc)
		}
	}
	return s
}
