package cli

import (
	"os"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/pipeline"
)

// openStore opens the project's event store. Readers open it read-only when
// they can; a store that a killed process left unclosed is opened read-write
// once, which recovers it. A store that does not exist yet is created only
// for writers; readers get errNoStore.
func openStore(proj *pipeline.Project, write bool) (*eventstore.Store, error) {
	if !write {
		if _, err := os.Stat(proj.Storage); os.IsNotExist(err) {
			return nil, errNoStore(proj)
		}
		if s, err := eventstore.Open(proj.Storage, eventstore.WithReadOnly()); err == nil {
			return s, nil
		}
	}
	s, err := eventstore.Open(proj.Storage)
	if err != nil {
		return nil, fail(ExitFailed, err)
	}
	return s, nil
}

func errNoStore(proj *pipeline.Project) error {
	return fail(ExitFailed, domain.Errorf(domain.CodeEventNotFound, "the pipeline has no storage yet (%s)", proj.Storage).
		WithHint("run an update first (sluice run), or point at the pipeline directory (-p DIR, or run the command in it)"))
}
