package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

func (a *app) vacuumCommand() *cobra.Command {
	var retain string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "vacuum [TABLE...]",
		Short: "Remove the rows of superseded table generations, keeping the whole audit trail",
		Long: `vacuum removes the rows of the generations of tables that were superseded
(by a full refresh, or a materialized view's later recompute) longer ago than
their retention, then compacts the storage so that the space goes back to
the disk. A table's current generation is never touched, and every event of
the log stays with its metadata (each vacuumed batch records when its rows
were removed, and under which retention): the event log, replay and every
read of the current tables are as before. A read of removed rows (table
--as-of a point of an earlier generation) says ROWS_VACUUMED. A superseded
batch whose rows another table keeps (a table that filters or deduplicates
another stores its rows as a selection of the other's batches) stays while
that table's rows live; vacuum says how many it kept.

A flow that deduplicates within a watermark records the identities it
remembers in stream_state events, and now and then a snapshot of them all;
a restart reads the latest snapshot and what follows. vacuum removes the
identities of the events before it once that snapshot is older than the
retention of the flow's table, and those of a checkpoint generation a full
refresh left behind longer ago. The events stay with their counts,
watermark and state fingerprint; replay --verify checks the state from the
first snapshot after the cut.

The retention of a table is its property delta.deletedFileRetentionDuration
(as in Delta: TBLPROPERTIES ('delta.deletedFileRetentionDuration' =
'interval 30 days')), 7 days without it; --retain overrides it for this run.
Without TABLE arguments every table is vacuumed. vacuum takes the storage for
itself: it cannot run beside sluice run.`,
		Example: `  sluice vacuum --dry-run
  sluice vacuum
  sluice vacuum daily_totals --retain 0s`,
		RunE: func(cmd *cobra.Command, tables []string) error {
			opts := processors.VacuumOptions{DryRun: dryRun}
			if len(tables) > 0 {
				opts.Tables = tables
			}
			if retain != "" {
				d, err := processors.ParseRetention(retain)
				if err != nil {
					return usageError("--retain %q: %v (write 168h, 7 days or interval 7 days)", retain, err)
				}
				opts.Retain = &d
			}
			proj, err := a.storedProject()
			if err != nil {
				return err
			}
			if _, err := os.Stat(proj.Storage); os.IsNotExist(err) {
				return errNoStore(proj)
			}
			before := dirSize(proj.Storage)
			store, err := a.openStore(proj, !dryRun) // a dry run reads only: it never writes, nor raises the store's format
			if err != nil {
				return err
			}
			done, err := processors.Vacuum(a.ctx, store, opts)
			if cerr := store.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil {
				return fail(ExitFailed, err)
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			for _, v := range done {
				if v.Batches == 0 && v.StateEvents == 0 {
					fmt.Fprintf(a.stdout, "%-24s nothing to remove (retention %s)\n", v.Table, v.Retention)
				} else if v.Batches > 0 {
					fmt.Fprintf(a.stdout, "%-24s %s %s in %d %s of generation(s) %s (%s of rows; retention %s)\n", v.Table, verb,
						plural(v.Rows, "row"), v.Batches, pluralWord(int64(v.Batches), "batch"), joinInts(v.Generations), byteSize(v.Bytes), v.Retention)
				}
				if v.StateEvents > 0 {
					fmt.Fprintf(a.stdout, "%-24s %s the identities of %d stream_state %s that no restart reads (%s; retention %s)\n", v.Table, verb,
						v.StateEvents, pluralWord(int64(v.StateEvents), "event"), byteSize(v.StateBytes), v.Retention)
				}
				if v.Kept > 0 {
					fmt.Fprintf(a.stdout, "%-24s kept %d superseded %s: another table's rows, or the identities of a deduplication's stream state, are rows of them\n", v.Table, v.Kept, pluralWord(int64(v.Kept), "batch"))
				}
			}
			if dryRun {
				return nil
			}
			// The space of what was rewritten is reclaimed by a compaction
			// of the store as reopened: Badger keeps the old versions of
			// values until the store that wrote them closes. It runs when
			// nothing was removed too: it gives back what an earlier
			// vacuum could not, and merges the small segment files.
			if err := eventstore.Reclaim(a.ctx, proj.Storage, eventstore.WithLogger(a.logger())); err != nil {
				// The rows are gone already; only their space waits.
				fmt.Fprintf(a.stderr, "the storage is not compacted yet (the rows above, if any, are removed): run sluice vacuum again to compact it\n")
				return fail(ExitFailed, err)
			}
			fmt.Fprintf(a.stdout, "storage %s: %s before, %s after\n", proj.Storage, byteSize(before), byteSize(dirSize(proj.Storage)))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&retain, "retain", "", "the retention of every table for this run (168h, 7 days), instead of each table's property")
	f.BoolVar(&dryRun, "dry-run", false, "say what would be removed, and remove nothing (it opens the storage read-only)")
	return cmd
}

// dirSize is the bytes of the files under dir (0 for what cannot be read).
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func joinInts(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
