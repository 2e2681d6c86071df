package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
)

func (a *app) quarantineCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "List and retry the rows a table's drop rules sent to its quarantine",
		Long: `A streaming table with TBLPROPERTIES ('pipelines.quarantine' = 'true')
keeps the rows its drop rules (EXPECT ... ON VIOLATION DROP ROW) fail in
the streaming table <table>_quarantine: the row's columns, then
_failed_expectations, _flow, _batch_id, _update_id, _quarantined_at and
_retries.

Once the rules or the data are fixed, "sluice quarantine retry TABLE"
passes the quarantined rows through the table's expectations as the
pipeline's files declare them now: the rows that pass go into the table and
leave the quarantine, in one commit (a crash leaves them in one place or
the other, never both); the rest stay, with the rules they fail now and
their _retries counted.`,
		Example: `  sluice quarantine list orders
  sluice quarantine list orders --format jsonl
  sluice quarantine retry orders`,
	}
	var format string
	var limit int
	list := &cobra.Command{
		Use:               "list TABLE",
		Short:             "Print the rows of a table's quarantine",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTables,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "table", "jsonl", "csv":
			default:
				return usageError("--format must be table, jsonl or csv, not %q", format)
			}
			return a.printTable(domain.QuarantineTable(args[0]), "", format, limit, false, 0)
		},
	}
	list.Flags().StringVar(&format, "format", "table", "table, jsonl or csv")
	list.Flags().IntVar(&limit, "limit", 0, "print at most N rows (0: all)")
	retry := &cobra.Command{
		Use:               "retry TABLE",
		Short:             "Pass a table's quarantined rows through its expectations again",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTables,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, p, err := a.pipeline()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, true)
			if err != nil {
				return err
			}
			defer store.Close()
			res, err := p.RetryQuarantine(a.ctx, store, args[0])
			if domain.CodeOf(err) == domain.CodeInvalidDefinition {
				return fail(ExitInvalid, err) // not a table with a quarantine
			}
			if err != nil {
				return fail(ExitFailed, err)
			}
			fmt.Fprintf(a.stderr, "%d rows passed and are in %s; %d still fail and stay in %s\n", res.Moved, args[0], res.Kept, domain.QuarantineTable(args[0]))
			return nil
		},
	}
	cmd.AddCommand(list, retry)
	return cmd
}
