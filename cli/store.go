package cli

import (
	"os"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
)

// openStore opens the project's event store. Readers open it read-only and
// never write to it: a store a killed process left unclosed is refused
// (STORE_NOT_CLOSED, with the fix) rather than recovered behind the reader's
// back. A store that does not exist yet is created only for writers; readers
// get errNoStore.
func (a *app) openStore(proj *pipeline.Project, write bool) (*eventstore.Store, error) {
	opts := []eventstore.Option{eventstore.WithLogger(a.logger())}
	if !write {
		if _, err := os.Stat(proj.Storage); os.IsNotExist(err) {
			return nil, errNoStore(proj)
		}
		opts = append(opts, eventstore.WithReadOnly())
	}
	s, err := eventstore.Open(proj.Storage, opts...)
	if err != nil {
		return nil, fail(ExitFailed, err)
	}
	return s, nil
}

func errNoStore(proj *pipeline.Project) error {
	return fail(ExitFailed, domain.Errorf(domain.CodeEventNotFound, "the pipeline has no storage yet (%s)", proj.Storage).
		WithHint("run an update first (sluice run), or point at the pipeline directory (-p DIR, or run the command in it)"))
}
