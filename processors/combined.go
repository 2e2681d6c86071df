package processors

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// sourceOf is the source behind one input of a query: a table of the
// pipeline, or an external source.
func (u *update) sourceOf(in domain.Input) domain.Source {
	if in.Dataset != "" {
		return &tableSource{store: u.store, table: in.Dataset, streaming: in.Streaming}
	}
	return in.Source
}

// combinedSource is the source of a query with side inputs. For a
// materialized view (whole) its offsets list the end of every input, so a
// recompute happens when any input changed; for a streaming flow they are
// the main input's offsets, and the side inputs are read whole at each
// micro-batch.
type combinedSource struct {
	main    domain.Source
	sides   []domain.Source
	whole   bool
	combine domain.Combiner
}

func (s *combinedSource) String() string {
	names := []string{s.main.String()}
	for _, side := range s.sides {
		names = append(names, side.String())
	}
	return strings.Join(names, " with ")
}

// Items implements domain.ItemSource for a streaming flow over an
// ItemSource: the main input's items (side inputs are read whole).
func (s *combinedSource) Items(end domain.Offset) ([]domain.ItemRead, error) {
	if is, ok := s.main.(domain.ItemSource); ok && !s.whole {
		return is.Items(end)
	}
	return nil, nil
}

// Reading implements domain.ItemSource: the main input plans against state.
func (s *combinedSource) Reading(state domain.ReadState) domain.Source {
	is, ok := s.main.(domain.ItemSource)
	if !ok || s.whole {
		return s
	}
	bound := *s
	bound.main = is.Reading(state)
	return &bound
}

func (s *combinedSource) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	if !s.whole {
		return s.main.Plan(ctx, start, limit)
	}
	ends := make([]domain.Offset, 0, 1+len(s.sides))
	any := false
	for _, src := range append([]domain.Source{s.main}, s.sides...) {
		end, ok, err := src.Plan(ctx, nil, limit)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			end = nil
		}
		any = any || ok
		ends = append(ends, end)
	}
	if !any {
		return nil, false, nil
	}
	out, err := json.Marshal(ends)
	return out, err == nil, err
}

func (s *combinedSource) Read(ctx context.Context, start, end domain.Offset) (*domain.Batch, error) {
	batches := make([]*domain.Batch, 1+len(s.sides))
	if s.whole {
		var ends []domain.Offset
		if err := json.Unmarshal(end, &ends); err != nil || len(ends) != len(batches) {
			return nil, domain.Errorf(domain.CodeProjectionMismatch, "the offset %s does not list the ends of %d inputs", end, len(batches))
		}
		for i, src := range append([]domain.Source{s.main}, s.sides...) {
			if ends[i] == nil || string(ends[i]) == "null" {
				continue
			}
			b, err := src.Read(ctx, nil, ends[i])
			if err != nil {
				return nil, err
			}
			batches[i] = b
		}
	} else {
		b, err := s.main.Read(ctx, start, end)
		if err != nil {
			return nil, err
		}
		batches[0] = b
		for i, side := range s.sides {
			sideEnd, ok, err := side.Plan(ctx, nil, domain.ReadLimit{})
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if batches[i+1], err = side.Read(ctx, nil, sideEnd); err != nil {
				return nil, err
			}
		}
	}
	return s.combine.Combine(ctx, batches)
}
