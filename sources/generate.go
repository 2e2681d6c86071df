package sources

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sluicehq/sluice/domain"
)

// rangeOffset is the next id a range source yields.
type rangeOffset struct {
	Next int64 `json:"next"`
}

// Range yields the ids start, start+1, ..., end-1 in one bigint column "id",
// like spark.range. As a stream it is a bounded backlog that micro-batches
// drain in order; as a batch, all of it at once.
func Range(start, end int64) domain.Source { return &rangeSource{start: start, end: end} }

type rangeSource struct{ start, end int64 }

func (s *rangeSource) String() string { return fmt.Sprintf("range(%d, %d)", s.start, s.end) }

func (s *rangeSource) offset(o domain.Offset) (int64, error) {
	if len(o) == 0 {
		return s.start, nil
	}
	var r rangeOffset
	if err := json.Unmarshal(o, &r); err != nil {
		return 0, domain.Wrap(domain.CodeSourceFailed, err, "reading a range offset")
	}
	if r.Next < s.start || r.Next > s.end {
		return 0, domain.Errorf(domain.CodeSourceFailed, "offset %d is outside %s", r.Next, s)
	}
	return r.Next, nil
}

// Plan returns the end of the next slice of at most limit.MaxRows ids.
func (s *rangeSource) Plan(_ context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	from, err := s.offset(start)
	if err != nil {
		return nil, false, err
	}
	if from >= s.end {
		return nil, false, nil
	}
	to := s.end
	if limit.MaxRows > 0 && to-from > limit.MaxRows {
		to = from + limit.MaxRows
	}
	end, _ := json.Marshal(rangeOffset{Next: to})
	return end, true, nil
}

var rangeSchema = domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64})

// Read returns the ids in [start, end).
func (s *rangeSource) Read(_ context.Context, start, end domain.Offset) (*domain.Batch, error) {
	from, err := s.offset(start)
	if err != nil {
		return nil, err
	}
	to, err := s.offset(end)
	if err != nil {
		return nil, err
	}
	col := domain.NewColumn(domain.KindInt64, int(max(to-from, 0)))
	for i := from; i < to; i++ {
		col.Ints = append(col.Ints, i)
	}
	return domain.BatchOf(rangeSchema, []*domain.Column{col})
}
