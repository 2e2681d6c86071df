package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sources/postgres"
	"github.com/sluicehq/sluice/sql"
	"github.com/sluicehq/sluice/sql/syntax"
)

// postgresCDCRelation plans read_postgres_cdc(dsn => ..., tables => 'public.a,
// public.b', slot => ..., publication => ..., snapshot => true): the tables'
// rows (with snapshot, the default), then their changes,
// each a row of the tables' columns and _op, _lsn, _commit_ts, _table. It
// reads the tables' columns from the server when the pipeline loads.
func (l *sqlLoader) postgresCDCRelation(f *sqlFile, call *syntax.FuncCall) (sql.Relation, error) {
	fail := func(p syntax.Pos, code domain.Code, format string, args ...any) (sql.Relation, error) {
		return sql.Relation{}, &syntax.Error{Code: code, File: f.Path, Pos: p, Message: fmt.Sprintf(format, args...)}
	}
	opts := postgres.Options{Snapshot: true}
	for _, a := range call.Args {
		na, ok := a.(*syntax.NamedArg)
		if !ok {
			return fail(a.Position(), domain.CodeSourceOptionInvalid, "read_postgres_cdc takes its options by name, as in read_postgres_cdc(dsn => '...', tables => 'public.users', slot => 'sluice', publication => 'sluice')")
		}
		v, ok := constText(na.Value)
		if !ok {
			return fail(na.Value.Position(), domain.CodeSourceOptionInvalid, "the option %s of read_postgres_cdc needs a constant value", na.Name.Name)
		}
		resolved, err := domain.ResolveSecrets(v)
		if err != nil {
			return fail(na.Value.Position(), domain.CodeOf(err), "%s", errorMessage(err))
		}
		switch strings.ToLower(na.Name.Name) {
		case "dsn":
			opts.DSN = resolved
		case "tables":
			for _, t := range strings.Split(resolved, ",") {
				if t = strings.TrimSpace(t); t != "" {
					opts.Tables = append(opts.Tables, t)
				}
			}
		case "slot":
			opts.Slot = resolved
		case "publication":
			opts.Publication = resolved
		case "snapshot":
			b, err := strconv.ParseBool(resolved)
			if err != nil {
				return fail(na.Value.Position(), domain.CodeSourceOptionInvalid, "snapshot must be true or false, not %q", resolved)
			}
			opts.Snapshot = b
		default:
			return fail(na.Pos, domain.CodeSourceOptionInvalid, "read_postgres_cdc does not take the option %s; it takes dsn, tables, slot, publication and snapshot", na.Name.Name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := postgres.New(ctx, opts)
	if err != nil {
		return fail(call.Pos, domain.CodeOf(err), "%s", errorMessage(err))
	}
	name := fmt.Sprintf("%s (%s:%d)", src, f.Path, call.Pos.Line)
	l.sources[name] = src
	return sql.Relation{Name: name, Schema: src.Schema()}, nil
}
