package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
)

// problemJSON is one problem in `validate --format json`.
type problemJSON struct {
	Code    domain.Code `json:"code"`
	Message string      `json:"message"`
	File    string      `json:"file"`
	Line    int         `json:"line"`
	Column  int         `json:"column"`
	Hint    string      `json:"hint"`
}

func (a *app) validateCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "validate",
		Aliases: []string{"dry-run"},
		Short:   "Check the pipeline's definitions without running anything",
		Long: `Check pipeline.yaml and the pipeline's definitions: names, references,
cycles, flow types, depends_on, ... Every problem is reported at once, each
with its code (searchable), its file and line where it has one, and a hint.
Nothing is run and the storage is not touched.

--format json prints a JSON array of problems, each
{"code", "message", "file", "line", "column", "hint"} (file "" and line and
column 0 when a problem has no place in a file); an empty array when the
pipeline is valid.

Exit codes: 0 valid, 2 invalid.`,
		Example: `  sluice validate
  sluice validate --format json | jq '.[].code'
  sluice -p pipelines/sales dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usageError("--format must be text or json, not %q", format)
			}
			_, p, err := a.pipeline()
			var problems domain.Problems
			switch {
			case err == nil:
				problems = p.Validate()
			case errors.As(err, &problems):
			default:
				var ex *exitError
				if errors.As(err, &ex) {
					var e *domain.Error
					if ex.code == ExitInvalid && errors.As(ex.err, &e) {
						problems = domain.Problems{e}
					}
				}
				if problems == nil {
					return err
				}
			}
			if format == "json" {
				out := make([]problemJSON, 0, len(problems))
				for _, e := range problems {
					out = append(out, problemJSON{Code: e.Code, Message: e.Message, File: e.File, Line: e.Line, Column: e.Column, Hint: e.Hint})
				}
				text, err := json.MarshalIndent(out, "", "  ")
				if err != nil {
					return fail(ExitFailed, err)
				}
				fmt.Fprintln(a.stdout, string(text))
				if len(problems) > 0 {
					return fail(ExitInvalid, nil)
				}
				return nil
			}
			if len(problems) > 0 {
				return fail(ExitInvalid, problems)
			}
			fmt.Fprintf(a.stdout, "pipeline %q is valid\n", p.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletions("text", "json"))
	return cmd
}
