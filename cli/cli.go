// Package cli is the sluice command line: init, validate, run, table,
// describe, events, replay, doctor, version and shell completion over a
// pipeline directory. The sluice binary is this
// package over the SQL loader; a team's own binary is this package over its
// own Loader (SQL files plus flows and sinks declared in Go), and behaves
// exactly like sluice:
//
//	func main() {
//		cli.Main(func(proj *pipeline.Project) (*pipeline.Pipeline, domain.Problems) {
//			p, problems := pipeline.LoadSQLProject(proj)
//			if len(problems) > 0 {
//				return nil, problems
//			}
//			p.ForeachBatchSink("warehouse", upsert)
//			p.AppendFlow("warehouse", pipeline.ReadStream("orders"), pipeline.Name("export_orders"))
//			return p, nil
//		})
//	}
//
// Exit codes: 0 ok, 1 the update (or the command's work) failed, 2 the
// pipeline is invalid or the command line is wrong; 130 when a triggered
// update is interrupted (Ctrl-C), 143 when a command is stopped by SIGTERM.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
)

// Exit codes.
const (
	ExitOK          = 0   // the command did what it was asked
	ExitFailed      = 1   // the update failed, or the command could not do its work
	ExitInvalid     = 2   // the pipeline is invalid, or the command line is wrong
	ExitInterrupted = 130 // a triggered update was interrupted (Ctrl-C)
	ExitTerminated  = 143 // the command was stopped by SIGTERM (after a clean stop of the update)
)

// Version is the version sluice reports; set it with
// -ldflags "-X github.com/sluicehq/sluice/cli.Version=v1.2.3".
var Version = "dev"

// Loader builds the pipeline of a project. It reports what is wrong with the
// definitions as problems (each with a code, and a file and line where there
// is one); the CLI shows them all and exits 2.
type Loader func(proj *pipeline.Project) (*pipeline.Pipeline, domain.Problems)

// Pipeline is a Loader for a pipeline declared in Go. Its directory needs no
// pipeline.yaml; when it has one, the file's settings apply (storage, modes,
// max_concurrent_flows).
func Pipeline(p *pipeline.Pipeline) Loader {
	return func(*pipeline.Project) (*pipeline.Pipeline, domain.Problems) { return p, nil }
}

// RequireProject wraps load so that a directory without pipeline.yaml is
// refused with PIPELINE_NOT_FOUND rather than loaded as an empty project.
func RequireProject(load Loader) Loader {
	return func(proj *pipeline.Project) (*pipeline.Pipeline, domain.Problems) {
		if proj.File == "" {
			return nil, domain.Problems{domain.Errorf(domain.CodePipelineNotFound, "no %s for %s", pipeline.ProjectFiles[0], proj.Dir)}
		}
		return load(proj)
	}
}

// Main runs the command line of os.Args over load and exits with its code.
// The first Ctrl-C (or SIGTERM) stops the running update cleanly; a second one
// exits at once (what was committed stays committed). A command stopped by
// SIGTERM exits 143 (128 + 15, as a process killed by it would), so that a
// supervisor tells a stop it asked for from a Ctrl-C (130) or a success.
func Main(load Loader) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintln(os.Stderr, "\nstopping: the running micro-batches finish or are dropped (press Ctrl-C again to exit at once)")
		cancel(stopSignal{sig})
		sig = <-sigs
		fmt.Fprintln(os.Stderr, "exiting at once: committed batches are kept; a planned batch reruns on the next update")
		os.Exit(signalExit(sig))
	}()
	code := run(ctx, filepath.Base(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr, load)
	var stop stopSignal
	if errors.As(context.Cause(ctx), &stop) && stop.sig == syscall.SIGTERM && (code == ExitOK || code == ExitInterrupted) {
		code = ExitTerminated // stopped cleanly, because it was asked to
	}
	cancel(nil)
	os.Exit(code)
}

// stopSignal is the cause of the cancellation of Main's context.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return "stopped by " + s.sig.String() }

// signalExit is the exit code of a command ended at once by a signal.
func signalExit(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return ExitTerminated
	}
	return ExitInterrupted
}

// Run runs the command line args (without the program name) over load,
// writing data to stdout and messages to stderr, and returns the exit code.
// Canceling ctx is Ctrl-C: it stops a running update cleanly.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, load Loader) int {
	return run(ctx, "sluice", args, stdout, stderr, load)
}

func run(ctx context.Context, name string, args []string, stdout, stderr io.Writer, load Loader) int {
	app := &app{ctx: ctx, stdout: stdout, stderr: stderr, load: load}
	root := app.rootCommand()
	root.Use = name
	app.completionCommand(root, args)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return app.code
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.err != nil {
			app.printError(ex.err)
		}
		return ex.code
	}
	// cobra's own errors: unknown commands and flags, wrong argument counts.
	fmt.Fprintf(stderr, "error: %v\nrun `%s --help` for usage\n", err, strings.TrimSpace(name+" "+commandPath(root, args)))
	return ExitInvalid
}

// commandPath finds the subcommand args name, for the usage hint.
func commandPath(root *cobra.Command, args []string) string {
	if c, _, err := root.Find(args); err == nil && c != root {
		return c.Name()
	}
	return ""
}

// app holds what the commands share.
type app struct {
	ctx            context.Context
	stdout, stderr io.Writer
	load           Loader
	dir            string // -p/--pipeline
	logLevel       string // --log-level
	code           int    // the exit code of a command that returned no error
}

// logger is the logger of the command's packages (the store, Badger, the
// runtime): to stderr, as text on a terminal and JSON lines otherwise, at
// --log-level.
func (a *app) logger() zerolog.Logger {
	level, err := zerolog.ParseLevel(a.logLevel)
	if err != nil || a.logLevel == "" {
		level = zerolog.WarnLevel
	}
	var w io.Writer = a.stderr
	if isTerminal(a.stderr) {
		w = zerolog.ConsoleWriter{Out: a.stderr, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// exitError ends a command with a code; err, when set, is printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func fail(code int, err error) error { return &exitError{code: code, err: err} }

// usageError is a wrong command line: exit 2 with a message saying what to do.
func usageError(format string, args ...any) error {
	return fail(ExitInvalid, fmt.Errorf(format, args...))
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "sluice",
		Short: "Declarative, event-sourced stream processing",
		Long: `sluice runs a pipeline: streaming tables, materialized views and sinks
declared in .sql files (listed by pipeline.yaml) or in Go, filled by flows in
micro-batches with exactly-once results, every state change recorded in an
event log under the pipeline's storage.

The pipeline is the directory holding pipeline.yaml: the current directory or
the nearest one above it, or the one given with -p DIR.

Exit codes: 0 ok, 1 the update failed, 2 the pipeline or the command line is
invalid, 130 a triggered update was interrupted (Ctrl-C), 143 a command was
stopped by SIGTERM.`,
		Example: `  sluice init demo && cd demo
  sluice validate
  sluice run
  sluice table daily_totals --format jsonl
  sluice describe daily_totals
  sluice events --update last --type flow_progress
  source <(sluice completion bash)`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	// --version prints what `sluice version` prints. The flag is declared
	// here so that cobra does not add its -v shorthand, which reads as
	// "verbose".
	root.Version = "-"
	root.SetVersionTemplate(versionText())
	root.Flags().Bool("version", false, "print the version of sluice, as sluice version does")
	root.PersistentFlags().StringVarP(&a.dir, "pipeline", "p", "", "the pipeline directory (default: the nearest directory holding pipeline.yaml)")
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "warn", "the log lines shown on stderr: trace, debug, info, warn, error or disabled (the store's and Badger's warnings and errors show at the default)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if _, err := zerolog.ParseLevel(a.logLevel); err != nil || a.logLevel == "" {
			return usageError("--log-level %q: use trace, debug, info, warn, error or disabled", a.logLevel)
		}
		return nil
	}
	_ = root.MarkPersistentFlagDirname("pipeline")
	_ = root.RegisterFlagCompletionFunc("log-level", fixedCompletions("trace", "debug", "info", "warn", "error", "disabled"))
	root.AddCommand(a.initCommand(), a.validateCommand(), a.runCommand(), a.eventsCommand(), a.statusCommand(), a.serveCommand(), a.qualityCommand(), a.quarantineCommand(), a.tableCommand(), a.exportCommand(), a.describeCommand(),
		a.replayCommand(), a.doctorCommand(), a.vacuumCommand(), a.versionCommand())
	return root
}

// completionCommand adds cobra's completion command (which it would add
// itself, later, with its own help) under the binary's name, with help that
// says what it completes.
func (a *app) completionCommand(root *cobra.Command, args []string) {
	root.InitDefaultCompletionCmd(args...)
	c, _, err := root.Find([]string{"completion"})
	if err != nil || c.Name() != "completion" {
		return
	}
	name := root.Name()
	c.Short = "Print the shell completion script for bash, zsh, fish or powershell"
	c.Long = `Print the script that makes your shell complete ` + name + `'s commands and flags,
and the names your pipeline's log knows: tables (table, describe, run
--refresh and --full-refresh), flows (events --flow, run --reset-checkpoint),
datasets (events --dataset), update ids (events --update) and event types
(events --type). The names are read from the storage without writing to it;
outside a pipeline, or while another process holds the storage, they are
simply not offered.

See each shell's subcommand (` + name + ` completion bash --help) for where to
install the script.`
	c.Example = `  source <(` + name + ` completion bash)                 # this bash session
  ` + name + ` completion bash > /etc/bash_completion.d/` + name + `
  ` + name + ` completion zsh > "${fpath[1]}/_` + name + `"
  ` + name + ` completion fish > ~/.config/fish/completions/` + name + `.fish`
}

// project finds and reads the pipeline's settings: -p DIR, or the nearest
// directory holding pipeline.yaml. Without one, it is the settings of a
// pipeline declared in Go: the directory (-p or the current one) with its
// default storage.
func (a *app) project() (*pipeline.Project, error) {
	dir := a.dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fail(ExitFailed, err)
		}
		if found, err := pipeline.FindProject(wd); err == nil {
			dir = found
		} else {
			dir = wd
		}
	} else if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		dir = filepath.Dir(dir) // -p path/to/pipeline.yaml
	} else if err != nil {
		return nil, fail(ExitInvalid, domain.Errorf(domain.CodePipelineNotFound, "the pipeline directory %s does not exist", dir).
			WithHint("pass the directory holding pipeline.yaml to -p, or create one with sluice init NAME"))
	}
	proj, err := pipeline.LoadProject(dir)
	if domain.CodeOf(err) == domain.CodePipelineNotFound {
		abs, aerr := filepath.Abs(dir)
		if aerr != nil {
			return nil, fail(ExitFailed, aerr)
		}
		return &pipeline.Project{Dir: abs, Storage: filepath.Join(abs, pipeline.DefaultStorage)}, nil
	}
	if err != nil {
		return proj, fail(ExitInvalid, err) // proj, when not nil, holds the fields that were right
	}
	return proj, nil
}

// storedProject is the project of a command that reads the storage (table,
// events, describe, replay, doctor, shell completion). Outside a pipeline (no
// pipeline.yaml here or above, and no storage in the directory) it is
// PIPELINE_NOT_FOUND, exit 2, as for run: "no storage yet" would send the
// user to run an update in a directory that is no pipeline. A directory with
// a storage but no pipeline.yaml is a pipeline declared in Go.
func (a *app) storedProject() (*pipeline.Project, error) {
	proj, err := a.project()
	if err != nil {
		return nil, err
	}
	if proj.File == "" {
		if _, err := os.Stat(proj.Storage); errors.Is(err, os.ErrNotExist) {
			return nil, fail(ExitInvalid, domain.Errorf(domain.CodePipelineNotFound, "no %s for %s (nor above it), and no storage in it", pipeline.ProjectFiles[0], proj.Dir).
				WithHint("run the command in a pipeline directory (or below one), pass -p DIR, or create a pipeline with sluice init NAME; a pipeline declared in Go has its storage once it has run"))
		}
	}
	return proj, nil
}

// pipeline loads the project and its pipeline, with the project's settings
// applied.
func (a *app) pipeline() (*pipeline.Project, *pipeline.Pipeline, error) {
	proj, err := a.project()
	var problems domain.Problems
	if err != nil {
		// Problems of pipeline.yaml's fields come with what was right in
		// it: the pipeline's files are checked too, so that one run
		// reports every problem.
		if proj == nil || !errors.As(err, &problems) {
			return nil, nil, err
		}
	}
	p, more := a.load(proj)
	if problems = append(problems, pipeline.AllProblems(p, more)...); len(problems) > 0 {
		return proj, nil, fail(ExitInvalid, problems)
	}
	if p == nil {
		return proj, nil, fail(ExitInvalid, domain.Errorf(domain.CodeEmptyPipeline, "the loader returned no pipeline"))
	}
	if proj.File != "" {
		if proj.Name != "" {
			p.Name = proj.Name
		}
		p.Continuous = p.Continuous || proj.Continuous
		p.Development = p.Development || proj.Development
		if proj.MaxConcurrentFlows > 0 {
			p.MaxConcurrentFlows = proj.MaxConcurrentFlows
		}
	}
	if proj.Name == "" {
		proj.Name = p.Name
	}
	return proj, p, nil
}

// printError shows an error for people: its code, message and hint; every
// problem of a Problems.
func (a *app) printError(err error) {
	var problems domain.Problems
	if errors.As(err, &problems) {
		fmt.Fprintf(a.stderr, "%d problem(s):\n", len(problems))
		for _, p := range problems {
			a.printOne("  ", p)
		}
		return
	}
	var e *domain.Error
	if errors.As(err, &e) {
		a.printOne("", e)
		return
	}
	fmt.Fprintf(a.stderr, "error: %v\n", err)
}

func (a *app) printOne(indent string, e *domain.Error) {
	fmt.Fprintf(a.stderr, "%serror: %s\n", indent, e.Error())
	if e.Hint != "" {
		fmt.Fprintf(a.stderr, "%s  hint: %s\n", indent, e.Hint)
	}
}

// splitList splits comma-separated flag values: --refresh a,b --refresh c.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
