package pipeline

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// Run resolves the pipeline and runs one update over store. The pipeline's
// settings (Development, MaxConcurrentFlows, StateMemory, TriggerInterval)
// fill what opts leaves unset.
//
// A pipeline that fails validation is recorded as a failed update and
// returned as a Result whose Err is the domain.Problems; the error return is
// for a store that cannot record anything.
func (p *Pipeline) Run(ctx context.Context, store *eventstore.Store, opts processors.Options) (*processors.Result, error) {
	opts.Development = opts.Development || p.Development
	if opts.MaxConcurrentFlows == 0 {
		opts.MaxConcurrentFlows = p.MaxConcurrentFlows
	}
	if opts.StateMemory == 0 {
		opts.StateMemory = p.StateMemory
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = p.TriggerInterval
	}
	hooks, err := processors.StartHooks(ctx, store, p.hooks, store.LastSeq()+1, opts.Logger)
	if err != nil {
		return nil, err
	}
	defer func() {
		wait := p.HookWait
		if wait == 0 {
			wait = 30 * time.Second
		}
		if left, err := hooks.Close(wait); left > 0 || err != nil {
			opts.Logger.Warn().Int("hooks_behind", left).Err(err).Msg("the hooks were not told of every event in time; the next run tells them the rest")
		}
	}()
	g, problems := p.Resolve()
	if len(problems) > 0 {
		return processors.RecordInvalid(ctx, store, p.Name, opts, problems)
	}
	return processors.Run(ctx, store, g, opts)
}

// Validate resolves the pipeline and reports its problems, touching nothing.
func (p *Pipeline) Validate() domain.Problems {
	_, problems := p.Resolve()
	return problems
}

// RetryQuarantine passes the rows of table's quarantine through the
// table's expectations as the pipeline declares them now: those that pass
// go into the table and leave the quarantine, in one commit; the rest
// stay, their retries counted (see processors.RetryQuarantine).
func (p *Pipeline) RetryQuarantine(ctx context.Context, store *eventstore.Store, table string) (processors.QuarantineResult, error) {
	g, problems := p.Resolve()
	if len(problems) > 0 {
		return processors.QuarantineResult{}, problems
	}
	return processors.RetryQuarantine(ctx, store, g, table)
}
