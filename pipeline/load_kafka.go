package pipeline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sources/kafka"
	"github.com/sluicehq/sluice/sql"
	"github.com/sluicehq/sluice/sql/syntax"
)

// kafkaRelation plans read_kafka(bootstrapServers => ..., subscribe => ...
// | subscribePattern => ..., startingOffsets => ..., maxOffsetsPerTrigger
// => N, failOnDataLoss => true, includeHeaders => false): Databricks' read_kafka, its options by
// name (any case; a kafka. prefix is taken, as in kafka.bootstrap.servers).
// Option values may name secrets as ${env:NAME}.
func (l *sqlLoader) kafkaRelation(f *sqlFile, call *syntax.FuncCall) (sql.Relation, error) {
	fail := func(p syntax.Pos, format string, args ...any) (sql.Relation, error) {
		return sql.Relation{}, &syntax.Error{Code: domain.CodeSourceOptionInvalid, File: f.Path, Pos: p, Message: fmt.Sprintf(format, args...)}
	}
	opts := kafka.Options{FailOnDataLoss: true}
	for _, a := range call.Args {
		na, ok := a.(*syntax.NamedArg)
		if !ok {
			return fail(a.Position(), "read_kafka takes its options by name, as in read_kafka(bootstrapServers => 'host:9092', subscribe => 'topic')")
		}
		v, ok := constText(na.Value)
		if !ok {
			return fail(na.Value.Position(), "the option %s of read_kafka needs a constant value", na.Name.Name)
		}
		resolved, err := domain.ResolveSecrets(v)
		if err != nil {
			return sql.Relation{}, &syntax.Error{Code: domain.CodeOf(err), File: f.Path, Pos: na.Value.Position(), Message: errorMessage(err)}
		}
		switch key := strings.ToLower(strings.TrimPrefix(strings.ToLower(na.Name.Name), "kafka.")); key {
		case "bootstrapservers", "bootstrap.servers":
			for _, b := range strings.Split(resolved, ",") {
				if b = strings.TrimSpace(b); b != "" {
					opts.Brokers = append(opts.Brokers, b)
				}
			}
		case "subscribe":
			for _, t := range strings.Split(resolved, ",") {
				if t = strings.TrimSpace(t); t != "" {
					opts.Topics = append(opts.Topics, t)
				}
			}
		case "subscribepattern":
			re, err := regexp.Compile("^(?:" + resolved + ")$")
			if err != nil {
				return fail(na.Value.Position(), "subscribePattern %q is not a regular expression: %v", resolved, err)
			}
			opts.Pattern = re
		case "startingoffsets":
			opts.StartingOffsets = resolved
		case "maxoffsetspertrigger":
			n, err := strconv.ParseInt(resolved, 10, 64)
			if err != nil || n <= 0 {
				return fail(na.Value.Position(), "maxOffsetsPerTrigger must be a positive number, not %q", resolved)
			}
			opts.MaxOffsetsPerTrigger = n
		case "includeheaders":
			b, err := strconv.ParseBool(resolved)
			if err != nil {
				return fail(na.Value.Position(), "includeHeaders must be true or false, not %q", resolved)
			}
			opts.IncludeHeaders = b
		case "failondataloss":
			b, err := strconv.ParseBool(resolved)
			if err != nil {
				return fail(na.Value.Position(), "failOnDataLoss must be true or false, not %q", resolved)
			}
			opts.FailOnDataLoss = b
		default:
			return fail(na.Pos, "read_kafka does not take the option %s; it takes bootstrapServers, subscribe, subscribePattern, startingOffsets, maxOffsetsPerTrigger, failOnDataLoss and includeHeaders", na.Name.Name)
		}
	}
	src, err := kafka.New(opts)
	if err != nil {
		return sql.Relation{}, &syntax.Error{Code: domain.CodeOf(err), File: f.Path, Pos: call.Pos, Message: errorMessage(err)}
	}
	// one source per read: two reads of a topic are two inputs
	name := fmt.Sprintf("%s (%s:%d)", src, f.Path, call.Pos.Line)
	l.sources[name] = src
	return sql.Relation{Name: name, Schema: src.Schema()}, nil
}
