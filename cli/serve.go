package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/server"
)

func (a *app) serveCommand() *cobra.Command {
	var httpAddr, token string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Hold the storage and serve its API, running updates on request",
		Long: `Hold the pipeline's storage and serve its API until Ctrl-C, on the Unix
socket in the storage directory and, with --http, on HTTP: sluice status,
events, events --follow and table read through it, and POST /api/updates
starts an update (with the refresh options of sluice run), POST
/api/updates/cancel cancels it. One update runs at a time.

Over HTTP, requests that change something need the bearer token (--token,
or the one printed at start), and every request does when the address is
not loopback only. The README lists the API with curl examples;
GET /api/openapi.json describes it.`,
		Example: `  sluice serve
  sluice serve --http 127.0.0.1:8080
  curl -X POST --unix-socket .sluice/sluice.sock http://sluice/api/updates -d '{"full_refresh": ["orders"]}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			proj, p, err := a.pipeline()
			if err != nil {
				return err
			}
			store, err := a.openStore(proj, true)
			if err != nil {
				return err
			}
			defer store.Close()
			u := &serveUpdater{ctx: a.ctx, p: p, store: store, logger: a}
			stop, err := a.serveAPI(store, proj, u, httpAddr, token)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "serving %s until Ctrl-C\n", server.SocketPath(proj.Storage))
			<-a.ctx.Done()
			u.wait()
			stop()
			return nil
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "also serve the API on HTTP at this address (127.0.0.1:8080; loopback unless an interface is named)")
	cmd.Flags().StringVar(&token, "token", "", "the bearer token of the HTTP API (default: made and printed at start)")
	return cmd
}

// serveUpdater runs the updates the API asks sluice serve for, one at a
// time.
type serveUpdater struct {
	ctx    context.Context
	p      *pipeline.Pipeline
	store  *eventstore.Store
	logger *app

	mu      sync.Mutex
	cancel  context.CancelFunc // of the running update
	running sync.WaitGroup
}

func (u *serveUpdater) Start(req server.UpdateRequest) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cancel != nil {
		return server.ErrUpdateRunning
	}
	opts := processors.Options{FullRefreshAll: req.FullRefreshAll, FullRefresh: req.FullRefresh, Refresh: req.Refresh,
		RefreshFailed: req.RefreshFailed, ResetCheckpoint: req.ResetCheckpoint, Cause: "api_call", Logger: u.logger.logger()}
	kinds := 0
	for _, set := range []bool{req.FullRefreshAll, len(req.FullRefresh) > 0, len(req.Refresh) > 0, req.RefreshFailed, len(req.ResetCheckpoint) > 0} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return domain.Errorf(domain.CodeInvalidParameterValue, "an update takes one kind of selection").
			WithHint("give one of full_refresh_all, full_refresh, refresh, refresh_failed, reset_checkpoint")
	}
	ctx, cancel := context.WithCancel(u.ctx)
	u.cancel = cancel
	u.running.Add(1)
	go func() {
		defer u.running.Done()
		res, err := u.p.Run(ctx, u.store, opts)
		log := u.logger.logger()
		if err != nil {
			log.Error().Err(err).Msg("the update could not be recorded")
		} else {
			log.Info().Str("update", res.UpdateID).Str("state", string(res.State)).Msg("update ended")
		}
		u.mu.Lock()
		u.cancel = nil
		u.mu.Unlock()
		cancel()
	}()
	return nil
}

func (u *serveUpdater) Cancel() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cancel == nil {
		return false
	}
	u.cancel()
	return true
}

// wait waits for the running update, if any, to end.
func (u *serveUpdater) wait() { u.running.Wait() }
