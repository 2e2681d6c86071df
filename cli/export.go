package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sinks/parquet"
)

func (a *app) exportCommand() *cobra.Command {
	var (
		asOf        string
		compression string
	)
	cmd := &cobra.Command{
		Use:   "export TABLE DIR",
		Short: "Write a table as a Parquet file, now or as of a point of the log",
		Long: `Write a stored table (a streaming table or a materialized view) to
DIR/TABLE.parquet, as it is now or, with --as-of, as it was after an event
of the log (a seq, or an RFC 3339 time or a date, as for sluice table).

The file has Spark's Parquet types (see sluice table --help, format
parquet), and is written under a temporary name and renamed when whole:
DIR never holds part of it. The table streams out a committed batch at a
time, so memory stays flat however large it is. Export reads the log and
writes nothing to it.`,
		Example: `  sluice export customers exports/
  sluice export customers exports/ --as-of 2026-12-01T10:00:00Z
  sluice export ops.daily_totals /data/snapshots --compression snappy`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeTables,
		RunE: func(cmd *cobra.Command, args []string) error {
			codec := parquet.Codec(compression)
			switch codec {
			case parquet.Zstd, parquet.Snappy, parquet.Gzip, parquet.Uncompressed:
			default:
				return usageError("--compression must be zstd, snappy, gzip or none, not %q", compression)
			}
			store, name, seq, schema, err := a.tableAsOf(args[0], asOf)
			if err != nil {
				return err
			}
			defer store.Close()
			path := filepath.Join(args[1], name+".parquet")
			rows := 0
			err = parquet.WriteFile(path, schema, codec, func(w *parquet.Writer) error {
				return processors.ScanTable(a.ctx, store, name, seq, func(b *domain.Batch) error {
					part, err := domain.Concat(domain.NewBatch(schema, 0), b) // in the table's schema
					if err != nil {
						return err
					}
					rows += part.Len()
					return w.Write(part, part.Len())
				})
			})
			if err != nil {
				return fail(ExitFailed, err)
			}
			fmt.Fprintf(a.stdout, "wrote %d rows of %s to %s\n", rows, name, path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&asOf, "as-of", "", "the table as of an event seq or a timestamp")
	f.StringVar(&compression, "compression", "zstd", "zstd, snappy, gzip or none")
	_ = cmd.RegisterFlagCompletionFunc("compression", fixedCompletions("zstd", "snappy", "gzip", "none"))
	return cmd
}
