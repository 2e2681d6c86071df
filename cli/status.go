package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/server"
)

func (a *app) statusCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the last update and its flows, also while it runs",
		Long: `Show the pipeline's last update: its state and when it started, and each of
its flows with its state, the rows and the micro-batches it committed.

While another process holds the storage (sluice run, sluice serve), the
figures come from that process, over the socket in the storage directory.

--format json prints {"pipeline", "last_seq", "update": {"id", "state",
"started"}, "flows": [{"name", "status", "rows", "batches"}]}.`,
		Example: `  sluice status
  sluice status --format json | jq '.flows[] | select(.status == "FAILED")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return usageError("--format must be table or json, not %q", format)
			}
			proj, err := a.storedProject()
			if err != nil {
				return err
			}
			var st *server.Status
			store, err := a.openStore(proj, false)
			if r, ok := remoteFor(proj, err); ok {
				resp, err := r.get(a.ctx, "/api/status", nil, nil)
				if err != nil {
					return err
				}
				err = json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				if err != nil {
					return fail(ExitFailed, err)
				}
			} else {
				if err != nil {
					return err
				}
				defer store.Close()
				if st, err = server.ReadStatus(a.ctx, store, proj.Name); err != nil {
					return fail(ExitFailed, err)
				}
			}
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			if format == "json" {
				return json.NewEncoder(out).Encode(st)
			}
			fmt.Fprintf(out, "pipeline %s, log at event %d\n", st.Pipeline, st.LastSeq)
			if st.Update == nil {
				fmt.Fprintln(out, "no update yet: sluice run starts one")
				return nil
			}
			fmt.Fprintf(out, "update %s %s, started %s\n", shortID(st.Update.ID), st.Update.State, st.Update.Started.Local().Format(time.DateTime))
			table := newAligned(out, []string{"FLOW", "STATUS", "ROWS", "BATCHES"}, []bool{false, false, true, true})
			for _, f := range st.Flows {
				if err := table.add([]string{f.Name, f.Status, fmt.Sprint(f.Rows), fmt.Sprint(f.Batches)}); err != nil {
					return fail(ExitFailed, err)
				}
			}
			return table.flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	return cmd
}
