package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/processors"
)

func (a *app) replayCommand() *cobra.Command {
	var verify bool
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild (or verify) the projections from the event log",
		Long: `The event log is the truth; checkpoints, table generations and schemas are
projections of it, kept beside it as caches.

replay --verify replays the whole log in memory and compares the result with
the stored projections, byte for byte; then it rebuilds the keyed state of
every AUTO CDC table and of every flow with a watermark, micro-batch by
micro-batch, and checks each against the fingerprint the flow recorded when
it committed that micro-batch. Exit 0 when everything matches, 1 (with
PROJECTION_MISMATCH and the first difference) when not.

replay (without --verify) drops the stored projections and rebuilds them
from the log.`,
		Example: `  sluice replay --verify
  sluice replay`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			proj, err := a.storedProject()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, !verify)
			if err != nil {
				return err
			}
			defer store.Close()
			if verify {
				if err := store.VerifyProjections(a.ctx); err != nil {
					return fail(ExitFailed, err)
				}
				batches, err := processors.VerifyState(a.ctx, store)
				if err != nil {
					return fail(ExitFailed, err)
				}
				fmt.Fprintf(a.stdout, "projections match the log (%d events); keyed state rebuilt and checked after %d micro-batches\n", store.LastSeq(), batches)
				return nil
			}
			if err := store.RebuildProjections(a.ctx); err != nil {
				return fail(ExitFailed, err)
			}
			fmt.Fprintf(a.stdout, "projections rebuilt from the log (%d events)\n", store.LastSeq())
			return nil
		},
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "compare the stored projections with the log instead of rebuilding them")
	return cmd
}
