package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/server"
)

// qualityTrend is how many updates the trend of the table format covers.
const qualityTrend = 10

func (a *app) qualityCommand() *cobra.Command {
	var upd, dataset, format string
	cmd := &cobra.Command{
		Use:   "quality",
		Short: "Show how rows fared against the expectations, per update",
		Long: `Show, for each dataset and expectation, the rows that passed and failed it
in an update (the last by default) and the failure rate. A row a drop rule
failed is counted failed, and is not in the table.

--format table (the default) adds the failure rate over the last 10 updates
that checked the expectation, oldest first, as a small bar chart (· where
an update did not check it).

--format jsonl prints one object per expectation:
  {"update_id", "dataset", "expectation", "passed_records",
   "failed_records", "failure_rate"}

The figures are those of the flows' flow_progress events (data_quality),
the same that event_log() gives to SQL.`,
		Example: `  sluice quality
  sluice quality --update 3f7c --dataset orders
  sluice quality --format jsonl | jq 'select(.failure_rate > 0.01)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "jsonl" {
				return usageError("--format must be table or jsonl, not %q", format)
			}
			proj, err := a.storedProject()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, false)
			if err != nil {
				return err
			}
			defer store.Close()
			cat, err := readCatalog(a.ctx, store)
			if err != nil {
				return err
			}
			id, err := cat.findUpdate(upd)
			if err != nil {
				return err
			}
			if dataset != "" {
				if dataset, err = cat.resolveDataset(dataset); err != nil {
					return err
				}
			}
			// the update asked for, and the ones before it for the trend
			at := slices.IndexFunc(cat.updates, func(u *updateEntry) bool { return u.id == id })
			var updates []string
			for _, u := range cat.updates[max(0, at-qualityTrend+1) : at+1] {
				updates = append(updates, u.id)
			}
			history := make([]map[server.QualityKey]*server.QualityFigures, len(updates))
			for i, u := range updates {
				if history[i], err = server.UpdateQuality(a.ctx, store, u, dataset); err != nil {
					return fail(ExitFailed, err)
				}
			}
			now := history[len(history)-1]
			keys := server.SortedKeys(now)
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			if format == "jsonl" {
				enc := json.NewEncoder(out)
				for _, line := range server.QualityLines(id, now) {
					if err := enc.Encode(line); err != nil {
						return fail(ExitFailed, err)
					}
				}
				return nil
			}
			if len(keys) == 0 {
				fmt.Fprintf(out, "update %s checked no expectation\n", shortID(id))
				return nil
			}
			fmt.Fprintf(out, "update %s\n", shortID(id))
			table := newAligned(out, []string{"DATASET", "EXPECTATION", "PASSED", "FAILED", "FAILURE RATE", fmt.Sprintf("LAST %d UPDATES", len(updates))},
				[]bool{false, false, true, true, true, false})
			for _, k := range keys {
				f := now[k]
				if err := table.add([]string{k.Dataset, k.Expectation, fmt.Sprint(f.Passed), fmt.Sprint(f.Failed), formatRate(f.Rate()), trend(history, k)}); err != nil {
					return fail(ExitFailed, err)
				}
			}
			if err := table.flush(); err != nil {
				return fail(ExitFailed, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&upd, "update", "last", "the update: an id, a prefix of one, or last")
	cmd.Flags().StringVar(&dataset, "dataset", "", "only this dataset's expectations")
	cmd.Flags().StringVar(&format, "format", "table", "table or jsonl")
	return cmd
}

func formatRate(r float64) string {
	if r > 0 && r < 0.0001 {
		return "<0.01%"
	}
	return fmt.Sprintf("%.2f%%", 100*r)
}

// trend draws an expectation's failure rate over the updates, scaled to
// the highest: a bar each, · where the update did not check it.
func trend(history []map[server.QualityKey]*server.QualityFigures, k server.QualityKey) string {
	const bars = "▁▂▃▄▅▆▇█"
	top := 0.0
	for _, h := range history {
		if f := h[k]; f != nil {
			top = max(top, f.Rate())
		}
	}
	var b strings.Builder
	for _, h := range history {
		f := h[k]
		switch {
		case f == nil:
			b.WriteString("·")
		case top == 0:
			b.WriteRune([]rune(bars)[0])
		default:
			b.WriteRune([]rune(bars)[int(f.Rate()/top*7+0.5)])
		}
	}
	return b.String()
}
