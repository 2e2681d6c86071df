package server

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
)

// QualityKey names an expectation of a dataset.
type QualityKey struct{ Dataset, Expectation string }

// QualityFigures are the rows that passed and failed an expectation.
type QualityFigures struct{ Passed, Failed int64 }

// Rate is the failure rate: failed over checked rows (0 when none).
func (f QualityFigures) Rate() float64 {
	if f.Passed+f.Failed == 0 {
		return 0
	}
	return float64(f.Failed) / float64(f.Passed+f.Failed)
}

// UpdateQuality sums the data quality of an update's flow_progress events
// by dataset and expectation (of dataset only, when given): the figures of
// sluice quality, and of event_log() read in SQL.
func UpdateQuality(ctx context.Context, store *eventstore.Store, update, dataset string) (map[QualityKey]*QualityFigures, error) {
	figures := map[QualityKey]*QualityFigures{}
	err := store.Scan(ctx, eventstore.Filter{Update: update, Types: []domain.EventType{domain.EventFlowProgress}}, func(ev *domain.Event) error {
		fp := ev.Details.FlowProgress
		if fp == nil || fp.DataQuality == nil {
			return nil
		}
		for _, e := range fp.DataQuality.Expectations {
			if dataset != "" && e.Dataset != dataset {
				continue
			}
			k := QualityKey{e.Dataset, e.Name}
			if figures[k] == nil {
				figures[k] = &QualityFigures{}
			}
			figures[k].Passed += e.PassedRecords
			figures[k].Failed += e.FailedRecords
		}
		return nil
	})
	return figures, err
}

// QualityLine is one expectation's figures in an update, as sluice
// quality --format jsonl and GET /api/quality give them.
type QualityLine struct {
	UpdateID      string  `json:"update_id"`
	Dataset       string  `json:"dataset"`
	Expectation   string  `json:"expectation"`
	PassedRecords int64   `json:"passed_records"`
	FailedRecords int64   `json:"failed_records"`
	FailureRate   float64 `json:"failure_rate"`
}

// SortedKeys lists the expectations of figures by dataset, then name.
func SortedKeys(figures map[QualityKey]*QualityFigures) []QualityKey {
	return slices.SortedFunc(maps.Keys(figures), func(a, b QualityKey) int {
		return strings.Compare(a.Dataset+"\x00"+a.Expectation, b.Dataset+"\x00"+b.Expectation)
	})
}

// QualityLines are the figures of an update, one line an expectation in
// SortedKeys' order.
func QualityLines(update string, figures map[QualityKey]*QualityFigures) []QualityLine {
	out := []QualityLine{}
	for _, k := range SortedKeys(figures) {
		f := figures[k]
		out = append(out, QualityLine{update, k.Dataset, k.Expectation, f.Passed, f.Failed, f.Rate()})
	}
	return out
}

// UpdateIDs lists the updates' ids in log order.
func UpdateIDs(ctx context.Context, store *eventstore.Store) ([]string, error) {
	var ids []string
	err := store.Scan(ctx, eventstore.Filter{Types: []domain.EventType{domain.EventCreateUpdate}}, func(ev *domain.Event) error {
		ids = append(ids, ev.Origin.UpdateID)
		return nil
	})
	return ids, err
}
