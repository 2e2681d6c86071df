package cli

import (
	"os"
	"slices"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/eventstore"
)

// Shell completion (sluice completion bash|zsh|fish, cobra's) offers the
// names the log knows: tables, flows, datasets, update ids, event types. A
// completion runs at every Tab, so it must be quiet and harmless: it opens
// the storage read-only (which never writes), logs nothing, and offers
// nothing, without an error, when there is no pipeline, no storage yet, or a
// storage it cannot read now (held by a run, left unclosed by a killed one).

// completionCatalog reads the catalog for a completion, or nil.
func (a *app) completionCatalog() *catalog {
	proj, err := a.storedProject()
	if err != nil {
		return nil
	}
	if _, err := os.Stat(proj.Storage); err != nil {
		return nil
	}
	store, err := eventstore.Open(proj.Storage, eventstore.WithReadOnly(), eventstore.WithLogger(zerolog.Nop()))
	if err != nil {
		return nil
	}
	defer store.Close()
	cat, err := readCatalog(a.ctx, store)
	if err != nil {
		return nil
	}
	return cat
}

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// completeTables completes the first argument with the stored tables.
func (a *app) completeTables(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cat := a.completionCatalog()
	if cat == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(cat.tables(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeNames completes a flag taking one name of the log.
func (a *app) completeNames(names func(*catalog) []string) completeFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		cat := a.completionCatalog()
		if cat == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return matching(names(cat), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNameList completes a flag taking comma-separated names (--refresh
// a,b): the names not listed yet, after what is typed up to the last comma.
func (a *app) completeNameList(names func(*catalog) []string) completeFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		cat := a.completionCatalog()
		if cat == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return listCompletions(names(cat), toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// completeUpdates completes --update with last and the update ids, each
// described by its start and its state.
func (a *app) completeUpdates(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	out := matching([]string{"last\tthe latest update"}, toComplete)
	cat := a.completionCatalog()
	if cat == nil {
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	for i := len(cat.updates) - 1; i >= 0; i-- { // the latest first
		u := cat.updates[i]
		if strings.HasPrefix(u.id, toComplete) {
			out = append(out, u.id+"\tstarted "+u.started.UTC().Format("2006-01-02T15:04:05Z")+", "+string(u.state))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completeEventTypes completes --type, a comma-separated list of event types.
func completeEventTypes(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return listCompletions(eventTypeNames(), toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// fixedCompletions completes a flag with a fixed set of values.
func fixedCompletions(values ...string) completeFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return matching(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// matching keeps the candidates starting with prefix (before their
// description, after a tab).
func matching(candidates []string, prefix string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// listCompletions completes the last item of a comma-separated list: each
// name not in the list yet, after the items before it.
func listCompletions(names []string, toComplete string) []string {
	done, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	listed := strings.Split(done, ",")
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, last) && !slices.Contains(listed, n) {
			out = append(out, done+n)
		}
	}
	return out
}
