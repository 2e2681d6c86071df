package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) replayCommand() *cobra.Command {
	var verify bool
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild (or verify) the projections from the event log",
		Long: `The event log is the truth; checkpoints, table generations and schemas are
projections of it, kept beside it as caches.

replay --verify replays the whole log in memory and compares the result with
the stored projections, byte for byte: exit 0 when they match, 1 (with
PROJECTION_MISMATCH and the first difference) when they do not.

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
				fmt.Fprintf(a.stdout, "projections match the log (%d events)\n", store.LastSeq())
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
