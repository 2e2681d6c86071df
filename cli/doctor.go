package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/eventstore"
)

func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the pipeline's storage end to end, without writing to it",
		Long: `doctor reads every file of the pipeline's storage and says what is damaged:
the marker file, every table of the store (each block against its checksum),
the logs a reopen would cut short, then every event of the log (in order, none
missing, each against its own checksum), every row payload, and the stored
projections against a replay of the log.

It writes nothing, so it is safe on a store a crash left behind: there it
checks the files, and says whether the recovery of the next run would lose
anything committed (it then reports the damage instead). Exit 0 when the
storage is sound, 1 when it is damaged (each problem is listed with the file,
key or seq it concerns) or cannot be checked.`,
		Example: `  sluice doctor
  sluice doctor -p pipelines/orders`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			proj, err := a.storedProject()
			if err != nil {
				return err
			}
			if _, err := os.Stat(proj.Storage); os.IsNotExist(err) {
				return errNoStore(proj)
			}
			r, err := eventstore.Check(a.ctx, proj.Storage)
			if err != nil {
				return fail(ExitFailed, err)
			}
			for _, d := range r.Damage {
				a.printOne("", d)
			}
			what := fmt.Sprintf("%d files, %d events, %d row payloads", r.Files, r.Events, r.Payloads)
			switch {
			case r.OK() && r.NotClosed:
				fmt.Fprintf(a.stdout, "storage %s was left open by a process that ended without closing it: its %d files are sound, and what a reopen recovers is only what the crash left unfinished.\n"+
					"Run the pipeline once (sluice run) to recover it, then `sluice doctor` again to check every event.\n", r.Dir, r.Files)
				return nil
			case r.OK():
				fmt.Fprintf(a.stdout, "storage %s is sound: checked %s\n", r.Dir, what)
				return nil
			}
			fmt.Fprintf(a.stdout, "storage %s is damaged: %d problem(s) found, after checking %s\n", r.Dir, len(r.Damage), what)
			return fail(ExitFailed, nil)
		},
	}
}
