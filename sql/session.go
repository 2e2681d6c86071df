package sql

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Session is what an expression's meaning depends on besides its input: the
// session time zone (Spark's spark.sql.session.timeZone) and the current
// time. Timestamps are stored as UTC microseconds; the zone decides how they
// are rendered, how their fields are extracted and how a string without an
// offset is read. Now is the value of current_timestamp(), constant for one
// compilation as Spark keeps it constant for one query.
type Session struct {
	TimeZone *time.Location // nil is UTC
	Now      time.Time      // the zero time is the time of compilation
	// Catalog and Schema are the current namespace, for current_catalog()
	// and current_schema(); empty is Spark's spark_catalog and default.
	Catalog, Schema string
}

// TimeZoneConf is the configuration key of the session time zone.
const TimeZoneConf = "spark.sql.session.timeZone"

// SessionFromConf builds a Session from a pipeline configuration: the key
// spark.sql.session.timeZone takes a region id (America/Los_Angeles), UTC,
// Z, or an offset (+02:00, -8, GMT+1, UTC-03:30). An unknown zone is
// INVALID_CONF_VALUE.TIME_ZONE.
func SessionFromConf(conf map[string]string) (Session, error) {
	v, ok := conf[TimeZoneConf]
	if !ok {
		return Session{}, nil
	}
	loc, err := parseZone(v)
	if err != nil {
		return Session{}, domain.Errorf(domain.CodeInvalidTimeZone, "the value '%s' of %s is not a time zone", v, TimeZoneConf)
	}
	return Session{TimeZone: loc}, nil
}

var zoneOffset = regexp.MustCompile(`^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$`)

// parseZone resolves a zone id as Java's ZoneId.of does for the forms Spark
// documents.
func parseZone(s string) (*time.Location, error) {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "UTC", "Z", "GMT", "UT", "Z0":
		return time.UTC, nil
	case "":
		return nil, errBadZone
	}
	if id, ok := shortZoneIDs[s]; ok && strings.HasPrefix(id, "-") {
		s = id
	}
	if m := zoneOffset.FindStringSubmatch(s); m != nil {
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3] + "0")
		sec, _ := strconv.Atoi(m[4] + "0")
		mi, sec = mi/10, sec/10
		if h > 18 || mi > 59 || sec > 59 {
			return nil, errBadZone
		}
		off := h*3600 + mi*60 + sec
		if m[1] == "-" {
			off = -off
		}
		if off == 0 {
			return time.UTC, nil
		}
		return time.FixedZone(s, off), nil
	}
	if strings.HasPrefix(s, "-") || strings.Contains(s, "..") {
		return nil, errBadZone
	}
	if id, ok := shortZoneIDs[s]; ok {
		s = id
	}
	return time.LoadLocation(s)
}

// shortZoneIDs are Java's ZoneId.SHORT_IDS, which Spark accepts.
var shortZoneIDs = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
	"CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
	"EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
	"IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
	"PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
	"EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}

var errBadZone = domain.Errorf(domain.CodeInvalidTimeZone, "not a time zone")

// CompileSession is Compile under a session: its time zone and its now.
func CompileSession(e syntax.Expr, in domain.Schema, s Session) (*Compiled, error) {
	return compileWith(e, in, s.resolved())
}

// resolved fills in the defaults: UTC, and now the time it is called.
func (s Session) resolved() *Session {
	if s.TimeZone == nil {
		s.TimeZone = time.UTC
	}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	return &s
}

func init() {
	register(map[string]builtin{
		"current_catalog":  {minArgs: 0, maxArgs: 0, compile: compileCurrentNamespace},
		"current_schema":   {minArgs: 0, maxArgs: 0, compile: compileCurrentNamespace},
		"current_database": {minArgs: 0, maxArgs: 0, compile: compileCurrentNamespace},
	})
}

// compileCurrentNamespace: current_catalog() and current_schema() (or
// current_database()) are the catalog and schema names resolve against
// where the query is written.
func compileCurrentNamespace(c *compiler, _ *syntax.FuncCall, name string) (node, error) {
	v := c.sess.Schema
	if name == "current_catalog" {
		v = c.sess.Catalog
		if v == "" {
			v = "spark_catalog"
		}
	} else if v == "" {
		v = "default"
	}
	return &litNode{t: domain.TypeString, v: domain.String(v)}, nil
}
