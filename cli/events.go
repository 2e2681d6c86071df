package cli

import (
	"bufio"
	"errors"
	"io"
	"net/url"
	"strconv"
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
flow_progress has error.code). Column types in details (the schema of
dataset_definition and batch_committed) are named as in SQL: "bigint",
"array<string>", "struct<a: bigint, b: string>".

--format table prints one line per event, in columns as wide as their widest
cell among the first 1,000 events.

--flow, --dataset and --update must name what the log knows: a typo is
refused (exit 2) with the nearest name, not answered with nothing.

While another process holds the storage (sluice run, sluice serve), the
events come from that process, over the socket in the storage directory;
--follow then follows its stream, taking it up again after the last event
it printed if the connection drops.

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
			proj, err := a.storedProject()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, false)
			if r, ok := remoteFor(proj, err); ok {
				// the process holding the storage serves it
				q := url.Values{}
				for k, v := range map[string]string{"type": strings.Join(splitList(types), ","), "flow": flow, "dataset": dataset, "update": upd} {
					if v != "" {
						q.Set(k, v)
					}
				}
				if since > 0 {
					q.Set("since", strconv.FormatUint(since-1, 10))
				}
				out := bufio.NewWriter(a.stdout)
				defer out.Flush()
				var w eventWriter = &jsonlEvents{w: out}
				if format == "table" {
					w = newTableEvents(out)
				}
				return r.events(a.ctx, q, follow, w, out.Flush)
			}
			if err != nil {
				return err
			}
			defer store.Close()
			if flow != "" || dataset != "" || upd != "" {
				cat, err := readCatalog(a.ctx, store)
				if err != nil {
					return err
				}
				if flow != "" {
					if err := cat.checkFlow(flow); err != nil {
						return err
					}
				}
				if dataset != "" {
					if dataset, err = cat.resolveDataset(dataset); err != nil {
						return err
					}
				}
				if upd != "" {
					if f.Update, err = cat.findUpdate(upd); err != nil {
						return err
					}
				}
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			var w eventWriter = &jsonlEvents{w: out}
			if format == "table" {
				w = newTableEvents(out)
			}
			// The log as it is now, then (--follow) what comes after it.
			last := store.LastSeq()
			if f.To = last; last >= f.From {
				if err := store.Scan(a.ctx, f, w.write); err != nil {
					return fail(ExitFailed, err)
				}
			}
			if err := w.flush(); err != nil {
				return fail(ExitFailed, err)
			}
			if !follow {
				return nil
			}
			if err := out.Flush(); err != nil {
				return fail(ExitFailed, err)
			}
			f.From, f.To = max(f.From, last+1), 0
			err = store.Tail(a.ctx, f, func(ev *domain.Event) error {
				if err := w.write(ev); err != nil {
					return err
				}
				return out.Flush()
			})
			if a.ctx.Err() != nil && errors.Is(err, a.ctx.Err()) {
				err = nil // Ctrl-C ends a follow
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
	_ = cmd.RegisterFlagCompletionFunc("type", completeEventTypes)
	_ = cmd.RegisterFlagCompletionFunc("flow", a.completeNames((*catalog).flowNames))
	_ = cmd.RegisterFlagCompletionFunc("dataset", a.completeNames((*catalog).datasetNames))
	_ = cmd.RegisterFlagCompletionFunc("update", a.completeUpdates)
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletions("table", "jsonl"))
	return cmd
}

func eventTypeNames() []string {
	out := make([]string, len(domain.EventTypes))
	for i, t := range domain.EventTypes {
		out[i] = string(t)
	}
	return out
}

// eventWriter writes events in one output format.
type eventWriter interface {
	write(ev *domain.Event) error
	flush() error // the events held, if any
}

// jsonlEvents writes one event per line, as the envelope of the Databricks
// event log.
type jsonlEvents struct {
	w io.Writer
}

func (j *jsonlEvents) write(ev *domain.Event) error {
	b, err := domain.EventJSON(ev)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = j.w.Write(b)
	return err
}

func (j *jsonlEvents) flush() error { return nil }

// tableEvents writes events as aligned columns for people.
type tableEvents struct {
	out *aligned
}

func newTableEvents(w io.Writer) *tableEvents {
	out := newAligned(w, []string{"seq", "timestamp", "event_type", "level", "flow/dataset", "message"}, []bool{true})
	out.rule = false // a rule as long as the longest message is no help
	return &tableEvents{out: out}
}

func (t *tableEvents) write(ev *domain.Event) error {
	where := ev.Origin.FlowName
	if where == "" {
		where = ev.Origin.DatasetName
	}
	msg := ev.Message
	if ev.Error != nil && !strings.Contains(msg, string(ev.Error.Code)) {
		msg += " [" + string(ev.Error.Code) + "]"
	}
	return t.out.add([]string{strconv.FormatUint(ev.Seq, 10), ev.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"),
		string(ev.Type), string(ev.Level), where, firstLine(msg)})
}

func (t *tableEvents) flush() error { return t.out.flush() }
