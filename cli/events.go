package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

func (a *app) eventsCommand() *cobra.Command {
	var (
		types                []string
		flow, dataset, upd   string
		since                uint64
		follow               bool
		format               string
		filterHelp           = strings.Join(eventTypeNames(), ", ")
		errUnknownEventTypes = func(t string) error {
			return usageError("unknown event type %q: the types are %s", t, filterHelp)
		}
	)
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the pipeline's event log",
		Long: `Show the event log: every update, flow state change, micro-batch, reset
and definition, in log order. Filters combine (all must match).

--format jsonl prints one event per line, the envelope of the Databricks
event log:
  {"seq", "id", "timestamp", "event_type", "level", "message",
   "origin": {"pipeline_name", "update_id", "flow_name", "dataset_name", "batch_id"},
   "details": {EVENT_TYPE: {...}}, "error": {"code", "message", "hint"}}
details is keyed by the event type, e.g.
  {"flow_progress": {"status": "COMPLETED", "metrics": {"num_output_rows": 8}}}
and error is there only when the event carries one (a failed flow's
flow_progress has error.code).

The storage is held by one process at a time: while "sluice run" runs, read
its progress on its stderr, and the events once it has finished.

Event types: ` + filterHelp + `.`,
		Example: `  sluice events --update last
  sluice events --type flow_progress --flow ingest_orders --format jsonl
  sluice events --since 120 --follow
  sluice events --format jsonl | jq 'select(.error) | .error.code'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "jsonl" {
				return usageError("--format must be table or jsonl, not %q", format)
			}
			f := eventstore.Filter{From: since, Flow: flow, Dataset: dataset}
			known := map[string]bool{}
			for _, t := range eventTypeNames() {
				known[t] = true
			}
			for _, t := range splitList(types) {
				if !known[t] {
					return errUnknownEventTypes(t)
				}
				f.Types = append(f.Types, domain.EventType(t))
			}
			proj, err := a.project()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, false)
			if err != nil {
				return err
			}
			defer store.Close()
			if upd != "" {
				id, err := findUpdate(a.ctx, store, upd)
				if err != nil {
					return err
				}
				f.Update = id
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			print := func(ev *domain.Event) error {
				if err := writeEvent(out, ev, format); err != nil {
					return err
				}
				if follow {
					return out.Flush()
				}
				return nil
			}
			if format == "table" {
				fmt.Fprintf(out, "%6s  %-23s  %-20s  %-7s  %-20s  %s\n", "seq", "timestamp", "event_type", "level", "flow/dataset", "message")
			}
			if follow {
				err = store.Tail(a.ctx, f, print)
				if a.ctx.Err() != nil && errors.Is(err, a.ctx.Err()) {
					err = nil // Ctrl-C ends a follow
				}
			} else {
				err = store.Scan(a.ctx, f, print)
			}
			if err != nil {
				return fail(ExitFailed, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&types, "type", nil, "only events of these types (comma-separated)")
	fl.StringVar(&flow, "flow", "", "only events of this flow")
	fl.StringVar(&dataset, "dataset", "", "only events of this dataset")
	fl.StringVar(&upd, "update", "", "only events of this update: its id, a prefix of it, or last")
	fl.Uint64Var(&since, "since", 0, "only events from this seq on")
	fl.BoolVar(&follow, "follow", false, "after the last event, wait for new ones until Ctrl-C")
	fl.StringVar(&format, "format", "table", "table or jsonl")
	return cmd
}

func eventTypeNames() []string {
	out := make([]string, len(domain.EventTypes))
	for i, t := range domain.EventTypes {
		out[i] = string(t)
	}
	return out
}

// findUpdate resolves "last", an update id or a unique prefix of one.
func findUpdate(ctx context.Context, store *eventstore.Store, want string) (string, error) {
	var ids []string
	err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventCreateUpdate}}, func(ev *domain.Event) error {
		ids = append(ids, ev.Origin.UpdateID)
		return nil
	})
	if err != nil {
		return "", fail(ExitFailed, err)
	}
	if want == "last" {
		if len(ids) == 0 {
			return "", fail(ExitFailed, domain.Errorf(domain.CodeEventNotFound, "the log holds no update yet").WithHint("run an update first: sluice run"))
		}
		return ids[len(ids)-1], nil
	}
	var match []string
	for _, id := range ids {
		if strings.HasPrefix(id, want) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", usageError("no update %q in the log: `sluice events --type create_update` lists them", want)
	}
	return "", usageError("%q is the prefix of %d updates: give more of the id", want, len(match))
}

// writeEvent writes one event as a JSON line or a table row.
func writeEvent(w io.Writer, ev *domain.Event, format string) error {
	if format == "jsonl" {
		ev.Timestamp = ev.Timestamp.UTC()
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	where := ev.Origin.FlowName
	if where == "" {
		where = ev.Origin.DatasetName
	}
	msg := ev.Message
	if ev.Error != nil && !strings.Contains(msg, string(ev.Error.Code)) {
		msg += " [" + string(ev.Error.Code) + "]"
	}
	_, err := fmt.Fprintf(w, "%6d  %-23s  %-20s  %-7s  %-20s  %s\n", ev.Seq, ev.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"), ev.Type, ev.Level, where, firstLine(msg))
	return err
}
