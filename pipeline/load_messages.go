package pipeline

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/options"
	"github.com/sluicehq/sluice/sources/watermill"
	"github.com/sluicehq/sluice/sql"
	"github.com/sluicehq/sluice/sql/syntax"
)

var messageOptions = map[string]map[string]string{
	"read_nats": {
		"url":                   "the server, as nats://host:4222",
		"subject":               "the JetStream subject to read (a stream holding it is made when there is none)",
		"durable":               "the durable consumer's name: the server keeps its place (and names the spool)",
		"consumers":             "how many messages are taken at once (1, the default, keeps the subject's order)",
		"maxmessagespertrigger": "the most messages in a micro-batch (10000 by default)",
	},
	"read_amqp": {
		"url":                   "the broker, as amqp://user:password@host:5672/",
		"queue":                 "the durable queue to read (declared when missing; names the spool)",
		"consumers":             "how many messages are taken at once (1, the default, keeps the queue's order)",
		"maxmessagespertrigger": "the most messages in a micro-batch (10000 by default)",
	},
}

var spoolUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// messageRelation plans read_nats(url => ..., subject => ..., durable =>
// ...) and read_amqp(url => ..., queue => ...): a broker's messages, one
// row each (uuid, payload, metadata, topic, received_at, offset), taken
// through a spool in the pipeline's storage (see sources/watermill).
func (l *sqlLoader) messageRelation(f *sqlFile, call *syntax.FuncCall, name string) (sql.Relation, error) {
	fail := func(p syntax.Pos, format string, args ...any) (sql.Relation, error) {
		return sql.Relation{}, &syntax.Error{Code: domain.CodeSourceOptionInvalid, File: f.Path, Pos: p, Message: fmt.Sprintf(format, args...)}
	}
	given := map[string]string{}
	for _, a := range call.Args {
		na, ok := a.(*syntax.NamedArg)
		if !ok {
			return fail(a.Position(), "%s takes its options by name: %s", name, options.List(messageOptions[name]))
		}
		v, ok := constText(na.Value)
		if !ok {
			return fail(na.Value.Position(), "the option %s of %s needs a constant value", na.Name.Name, name)
		}
		resolved, err := domain.ResolveSecrets(v)
		if err != nil {
			return sql.Relation{}, &syntax.Error{Code: domain.CodeOf(err), File: f.Path, Pos: na.Value.Position(), Message: errorMessage(err)}
		}
		key := strings.ToLower(na.Name.Name)
		if _, ok := messageOptions[name][key]; !ok {
			return fail(na.Pos, "%s does not take the option %s; it takes %s", name, na.Name.Name, options.List(messageOptions[name]))
		}
		given[key] = resolved
	}
	var opts watermill.Options
	for key, v := range map[string]*int64{"maxmessagespertrigger": &opts.MaxMessagesPerTrigger} {
		if s, ok := given[key]; ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= 0 {
				return fail(call.Pos, "%s: %s must be a positive number, not %q", name, key, s)
			}
			*v = n
		}
	}
	if s, ok := given["consumers"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > 256 {
			return fail(call.Pos, "%s: consumers must be a number from 1 to 256, not %q", name, s)
		}
		opts.Consumers = n
	}
	if l.opts.Storage == "" {
		return fail(call.Pos, "%s keeps the messages it takes in the pipeline's storage, and this pipeline is loaded without one", name)
	}
	var src *watermill.Source
	var err error
	switch name {
	case "read_nats":
		opts.Spool = filepath.Join(l.opts.Storage, "spool", "nats-"+spoolUnsafe.ReplaceAllString(given["durable"], "_"))
		src, err = watermill.NATS(given["url"], given["subject"], given["durable"], opts)
	default:
		opts.Spool = filepath.Join(l.opts.Storage, "spool", "amqp-"+spoolUnsafe.ReplaceAllString(given["queue"], "_"))
		src, err = watermill.AMQP(given["url"], given["queue"], opts)
	}
	if err != nil {
		return fail(call.Pos, "%s: %s", name, errorMessage(err))
	}
	for other, s := range l.sources {
		if ws, ok := s.(*watermill.Source); ok && ws.Spool() == opts.Spool {
			return fail(call.Pos, "%s reads what %s reads: two reads would split the messages between them; read it once, into a table the others read", src, other)
		}
	}
	rel := fmt.Sprintf("%s (%s:%d)", src, f.Path, call.Pos.Line)
	l.sources[rel] = src
	return sql.Relation{Name: rel, Schema: watermill.Schema}, nil
}
