package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/internal/suggest"
)

// catalog is what the log says the pipeline holds: its datasets and flows as
// last defined, and its updates. The read commands check names against it
// (with the nearest name and the list when one is wrong), describe shows it,
// and shell completion offers it. It is read from the definition and update
// events through the log's type index: a few events per update, never the
// batches with their rows.
type catalog struct {
	datasets map[string]*datasetEntry
	flows    map[string]*flowEntry
	updates  []*updateEntry // in log order
}

type datasetEntry struct {
	def    domain.DatasetDefinition // the latest
	update string                   // the update of the latest definition
}

type flowEntry struct {
	def    domain.FlowDefinition // the latest
	update string
}

type updateEntry struct {
	id      string
	started time.Time
	state   domain.UpdateState // the latest update_progress
}

func readCatalog(ctx context.Context, store *eventstore.Store) (*catalog, error) {
	c := &catalog{datasets: map[string]*datasetEntry{}, flows: map[string]*flowEntry{}}
	byID := map[string]*updateEntry{}
	scans := []struct {
		t  domain.EventType
		fn func(*domain.Event)
	}{
		{domain.EventDatasetDefinition, func(ev *domain.Event) {
			if d := ev.Details.DatasetDefinition; d != nil {
				c.datasets[ev.Origin.DatasetName] = &datasetEntry{def: *d, update: ev.Origin.UpdateID}
			}
		}},
		{domain.EventFlowDefinition, func(ev *domain.Event) {
			if f := ev.Details.FlowDefinition; f != nil {
				c.flows[ev.Origin.FlowName] = &flowEntry{def: *f, update: ev.Origin.UpdateID}
			}
		}},
		{domain.EventCreateUpdate, func(ev *domain.Event) {
			u := &updateEntry{id: ev.Origin.UpdateID, started: ev.Timestamp}
			byID[u.id] = u
			c.updates = append(c.updates, u)
		}},
		{domain.EventUpdateProgress, func(ev *domain.Event) {
			if u, p := byID[ev.Origin.UpdateID], ev.Details.UpdateProgress; u != nil && p != nil {
				u.state = p.State
			}
		}},
	}
	for _, s := range scans {
		err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{s.t}}, func(ev *domain.Event) error {
			s.fn(ev)
			return nil
		})
		if err != nil {
			return nil, fail(ExitFailed, err)
		}
	}
	return c, nil
}

// tables are the names of the stored datasets (streaming tables and
// materialized views), sorted.
func (c *catalog) tables() []string {
	var out []string
	for name, d := range c.datasets {
		if d.def.DatasetType.Stored() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// datasetNames and flowNames are every name the log defines, sorted.
func (c *catalog) datasetNames() []string { return slices.Sorted(maps.Keys(c.datasets)) }
func (c *catalog) flowNames() []string    { return slices.Sorted(maps.Keys(c.flows)) }

// writers are the flows writing dataset name in its latest definition, with
// their latest definitions, sorted by name.
func (c *catalog) writers(name string) []string {
	d := c.datasets[name]
	var out []string
	for flow, f := range c.flows {
		if f.def.OutputDataset == name && (d == nil || f.update == d.update) {
			out = append(out, flow)
		}
	}
	sort.Strings(out)
	return out
}

// resolveTable is the stored table a name given on the command line means:
// the table of that name, or the one whose qualified name ends with it
// (u for sales.u, sales.u for main.sales.u) when only one does; another
// name is refused.
func (c *catalog) resolveTable(name string) (string, error) {
	return resolveName(domain.CodeUnknownDataset, "table", name, c.tables())
}

// checkFlow and checkDataset refuse a filter naming a flow or dataset the log
// never defined: such a filter would match nothing, which reads as "nothing
// happened" rather than as the typo it is.
func (c *catalog) checkFlow(name string) error {
	return checkName(domain.CodeUnknownFlowSelection, "flow", name, c.flowNames())
}

func (c *catalog) resolveDataset(name string) (string, error) {
	return resolveName(domain.CodeUnknownDataset, "dataset", name, c.datasetNames())
}

// resolveName finds name among names: itself, or the one name that ends
// with it after a dot (case aside); several are AMBIGUOUS_REFERENCE, none
// is checkName's refusal.
func resolveName(code domain.Code, what, name string, names []string) (string, error) {
	if slices.Contains(names, name) {
		return name, nil
	}
	var match []string
	for _, n := range names {
		if strings.EqualFold(n, name) || strings.HasSuffix(strings.ToLower(n), "."+strings.ToLower(name)) {
			match = append(match, n)
		}
	}
	switch len(match) {
	case 0:
		return "", checkName(code, what, name, names)
	case 1:
		return match[0], nil
	}
	return "", fail(ExitInvalid, domain.Errorf(domain.CodeAmbiguousReference, "%q could be the %s %s", name, what, strings.Join(match, " or ")).
		WithHint("give more of the name: "+strings.Join(match, ", ")).WithNames(name))
}

// checkName is the refusal (exit 2) of a name that is not among names, with
// the nearest one and the list.
func checkName(code domain.Code, what, name string, names []string) error {
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	e := domain.Errorf(code, "%q is not a %s of the pipeline", name, what).WithNames(name)
	if s := suggest.Closest(name, names); s != "" {
		e.Message += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(names) > 0 {
		e.WithHint(fmt.Sprintf("the %ss are: %s", what, strings.Join(names, ", ")))
	} else {
		e.WithHint(fmt.Sprintf("the log defines no %s yet: run an update first (sluice run)", what))
	}
	return fail(ExitInvalid, e)
}

// findUpdate resolves "last", an update id or a unique prefix of one.
func (c *catalog) findUpdate(want string) (string, error) {
	if want == "last" {
		if len(c.updates) == 0 {
			return "", fail(ExitFailed, domain.Errorf(domain.CodeEventNotFound, "the log holds no update yet").WithHint("run an update first: sluice run"))
		}
		return c.updates[len(c.updates)-1].id, nil
	}
	var match []string
	for _, u := range c.updates {
		if strings.HasPrefix(u.id, want) {
			match = append(match, u.id)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", fail(ExitInvalid, domain.Errorf(domain.CodeEventNotFound, "no update %q in the log", want).
			WithHint("give an update id, a prefix of one, or last; `sluice events --type create_update` lists them"))
	}
	return "", fail(ExitInvalid, domain.Errorf(domain.CodeEventNotFound, "%q is the prefix of %d updates", want, len(match)).
		WithHint("give more of the id"))
}
