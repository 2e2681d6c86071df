package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/server"
)

func (a *app) runCommand() *cobra.Command {
	var (
		opts                              processors.Options
		fullRefresh, refresh, resetCkpt   []string
		continuous, development, progress bool
		httpAddr, token                   string
		ui                                bool
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run an update of the pipeline",
		Long: `Run one update: every flow runs when the flows it reads or depends on have
finished, in micro-batches that commit exactly once. A triggered update drains
what the sources hold and stops; a continuous one (--continuous, or
continuous: true in pipeline.yaml) keeps running until Ctrl-C.

While it runs, each flow's state, batches, rows and rows/s are shown on stderr
(a live table on a terminal, one line per change otherwise); it ends with a
summary: flows by final state, rows written per table, time.

Ctrl-C stops the update cleanly: running micro-batches finish or are dropped,
nothing half-done is committed, the update ends CANCELED (exit 0 for a
continuous update, 130 for a triggered one). SIGTERM (a supervisor's stop)
stops it the same way and exits 143. A second Ctrl-C or SIGTERM exits at
once; what was committed stays committed.

Selections (one kind per update; conflicting options are refused, exit 2):
  --full-refresh-all         reset every table and checkpoint, rerun everything
  --full-refresh a,b         reset the named tables (and their flows' checkpoints), refresh them only
  --refresh a,b              refresh only the named datasets; other flows are EXCLUDED
  --refresh-failed           refresh the datasets whose last flow failed, and what is downstream
  --reset-checkpoint f,g     reread the named flows' sources into the existing tables

Exit codes: 0 COMPLETED (or a continuous update CANCELED by Ctrl-C), 1 FAILED,
2 invalid pipeline or options, 130 a triggered update interrupted by Ctrl-C,
143 an update stopped by SIGTERM.`,
		Example: `  sluice run
  sluice run --full-refresh-all
  sluice run --refresh daily_totals
  sluice run --full-refresh raw_orders,daily_totals
  sluice run --reset-checkpoint ingest_orders
  sluice run --continuous          # until Ctrl-C (or SIGTERM)
  sluice run --max-concurrent-flows 8
  sluice -p pipelines/sales run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// 0 would mean "not given" below; pipeline.yaml refuses it too.
			if cmd.Flags().Changed("max-concurrent-flows") && opts.MaxConcurrentFlows < 1 {
				return fail(ExitInvalid, domain.Errorf(domain.CodeInvalidParameterValue, "--max-concurrent-flows must be a whole number of at least 1, not %d", opts.MaxConcurrentFlows).
					WithHint("give the number of micro-batches that may run at once, e.g. --max-concurrent-flows 4, or leave the flag out for pipeline.yaml's max_concurrent_flows (default 4)"))
			}
			proj, p, err := a.pipeline()
			if err != nil {
				return err
			}
			opts.FullRefresh, opts.Refresh, opts.ResetCheckpoint = splitList(fullRefresh), splitList(refresh), splitList(resetCkpt)
			if continuous {
				p.Continuous = true
			}
			opts.Development = development
			opts.Cause = "user_action"
			opts.Logger = a.logger()
			store, err := a.openStore(proj, true)
			if err != nil {
				return err
			}
			defer store.Close()
			if ui && httpAddr == "" {
				httpAddr = "127.0.0.1:8080"
			}
			runCtx, cancelRun := context.WithCancel(a.ctx)
			defer cancelRun()
			stopServing, err := a.serveAPI(store, proj, runUpdater{cancel: cancelRun}, httpAddr, token)
			if err != nil {
				return err
			}
			defer stopServing()

			view := newProgress(a.stderr, isTerminal(a.stderr) && progress)
			watchCtx, stopWatch := context.WithCancel(context.Background())
			from := store.LastSeq() + 1
			if err := watchBus(watchCtx, store, from, view); err != nil {
				stopWatch()
				return err
			}
			stopDrawing := view.redraw()

			res, runErr := p.Run(runCtx, store, opts)
			// Show every event of the update before the summary.
			if err := catchUp(watchCtx, store, view); err != nil {
				runErr = errors.Join(runErr, err)
			}
			stopWatch()
			stopDrawing()
			if runErr != nil {
				return fail(ExitFailed, runErr)
			}
			view.summary(res)
			switch res.State {
			case domain.UpdateCompleted:
				return nil
			case domain.UpdateCanceled:
				if p.Continuous {
					return nil
				}
				return fail(ExitInterrupted, nil)
			}
			var problems domain.Problems
			if errors.As(res.Err, &problems) {
				return fail(ExitInvalid, res.Err)
			}
			view.failures(res)
			return fail(ExitFailed, nil)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.FullRefreshAll, "full-refresh-all", false, "reset every table and checkpoint and reprocess everything")
	f.StringSliceVar(&fullRefresh, "full-refresh", nil, "reset and refresh only these tables (comma-separated)")
	f.StringSliceVar(&refresh, "refresh", nil, "refresh only these datasets (comma-separated); other flows are EXCLUDED")
	f.BoolVar(&opts.RefreshFailed, "refresh-failed", false, "refresh the datasets whose last flow failed, and what is downstream of them")
	f.StringSliceVar(&resetCkpt, "reset-checkpoint", nil, "reset the checkpoints of these flows (comma-separated): they reread their sources")
	f.BoolVar(&continuous, "continuous", false, "keep flows running for new data until Ctrl-C")
	f.BoolVar(&development, "development", false, "development mode: no retries, a failing flow fails the update at once")
	f.StringVar(&httpAddr, "http", "", "also serve the API on HTTP at this address (127.0.0.1:8080; loopback unless an interface is named)")
	f.BoolVar(&ui, "ui", false, "serve the web UI (and the API) on HTTP, at --http or 127.0.0.1:8080")
	f.StringVar(&token, "token", "", "the bearer token of the HTTP API (default: made and printed at start)")
	f.BoolVar(&progress, "live", true, "draw a live table on a terminal (--live=false: one line per change)")
	_ = cmd.RegisterFlagCompletionFunc("full-refresh", a.completeNameList((*catalog).tables))
	_ = cmd.RegisterFlagCompletionFunc("refresh", a.completeNameList((*catalog).tables))
	_ = cmd.RegisterFlagCompletionFunc("reset-checkpoint", a.completeNameList((*catalog).flowNames))
	f.IntVar(&opts.MaxConcurrentFlows, "max-concurrent-flows", 0, "bound on the micro-batches running at once, at least 1 (default: pipeline.yaml's max_concurrent_flows, else 4)")
	return cmd
}

// formatDuration rounds a duration for people.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func rate(rows int64, d time.Duration) string {
	if d <= 0 || rows == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(rows)/d.Seconds())
}

// serveAPI serves the store's API while the command holds it: on the
// socket of its storage directory (so that sluice events, table and status
// read it meanwhile) and, with httpAddr, on HTTP (loopback only unless the
// address names another interface; requests that change something need
// the token, and every request does beyond loopback). The returned
// function stops serving. A socket that cannot be made is logged: the
// command runs without it.
func (a *app) serveAPI(store *eventstore.Store, proj *pipeline.Project, updater server.Updater, httpAddr, token string) (func(), error) {
	log := a.logger()
	srv := server.New(store, proj.Name, log).WithUpdater(updater)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	serve := func(l net.Listener, h http.Handler) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.ServeHandler(ctx, l, h); err != nil {
				log.Warn().Err(err).Msg("serving the storage's API")
			}
		}()
	}
	if l, err := server.ListenSocket(proj.Storage); err != nil {
		log.Warn().Err(err).Msg("the storage is not served to other commands while this one holds it")
	} else {
		serve(l, srv.Handler())
	}
	if httpAddr != "" {
		if host, port, err := net.SplitHostPort(httpAddr); err == nil && host == "" {
			httpAddr = net.JoinHostPort("127.0.0.1", port) // loopback unless an interface is named
		}
		l, err := net.Listen("tcp", httpAddr)
		if err != nil {
			stop()
			wg.Wait()
			return nil, fail(ExitInvalid, domain.Wrap(domain.CodeInvalidParameterValue, err, "--http "+httpAddr).
				WithHint("give a free host:port, as 127.0.0.1:8080"))
		}
		loopback := server.Loopback(l.Addr().String())
		if token == "" {
			token = server.NewToken()
		}
		fmt.Fprintf(a.stderr, "serving http://%s (token for changes%s: %s); the web UI is at http://%s/\n", l.Addr(), map[bool]string{false: " and reads", true: ""}[loopback], token, l.Addr())
		serve(l, server.Guard(srv.Handler(), token, loopback))
	}
	return func() {
		stop()
		wg.Wait()
	}, nil
}

// runUpdater lets the API cancel the update sluice run runs; it starts no
// other.
type runUpdater struct{ cancel context.CancelFunc }

func (runUpdater) Start(server.UpdateRequest) error {
	return domain.Errorf(domain.CodeUpdateRunning, "this process runs one update, and starts no other").
		WithHint("sluice serve holds the storage and starts updates on request")
}

func (u runUpdater) Cancel() bool {
	u.cancel()
	return true
}

// watchBus shows the update's events as the store's bus publishes them,
// from seq from on. The bus carries events without their rows: following
// the log instead (Tail) read back and decoded every batch the update
// wrote, a tenth of a run's work when a flow reads a file.
//
// The bus waits for every subscriber to take each event, so this one takes
// them at once into a bounded queue and shows them from there; an event
// the queue had no room for, or the bus did not publish, is read from the
// log before the next one is shown.
func watchBus(ctx context.Context, store *eventstore.Store, from uint64, view *progress) error {
	view.startAt(from)
	msgs, err := store.Subscribe(ctx)
	if err != nil {
		return err
	}
	queue := make(chan *domain.Event, 1024)
	go func() {
		defer close(queue)
		for msg := range msgs {
			var ev domain.Event
			seq, err := strconv.ParseUint(msg.Metadata.Get("seq"), 10, 64)
			if err == nil && seq >= from && json.Unmarshal(msg.Payload, &ev) == nil {
				ev.Seq = seq
				select {
				case queue <- &ev:
				default: // the log has it
				}
			}
			msg.Ack()
		}
	}()
	go func() {
		for ev := range queue {
			show(ctx, store, view, ev)
		}
	}()
	return nil
}

// show shows an event, after the events before it that the view has not
// seen, read from the log.
func show(ctx context.Context, store *eventstore.Store, view *progress, ev *domain.Event) {
	if showLog(ctx, store, view, ev.Seq-1) == nil {
		view.observe(ev)
	}
}

// showLog shows from the log the events after the view's last, up to seq.
func showLog(ctx context.Context, store *eventstore.Store, view *progress, seq uint64) error {
	if view.seen() >= seq {
		return nil
	}
	return store.Scan(ctx, eventstore.Filter{From: view.seen() + 1, To: seq}, func(ev *domain.Event) error {
		view.observe(ev)
		return nil
	})
}

// catchUp waits for the view to have seen every committed event. The bus
// publishes each soon after its commit; what it has not brought within a
// second is read from the log.
func catchUp(ctx context.Context, store *eventstore.Store, view *progress) error {
	last := store.LastSeq()
	deadline := time.After(time.Second)
	for view.seen() < last {
		select {
		case <-deadline:
			return showLog(ctx, store, view, last)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}
