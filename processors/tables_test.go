package processors

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/sources"
)

// TestReadTableAsOf: ReadTable and ScanTable read a table as of a log
// position: the batches of the generation current then, committed by then.
func TestReadTableAsOf(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	writeIDs(t, dir, "1.json", 0, 2)
	g := newGraph("asof", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(jsonFiles(dir))))
	mustComplete(t, store, g, Options{})
	afterFirst := store.LastSeq()
	writeIDs(t, dir, "2.json", 2, 4)
	mustComplete(t, store, g, Options{})
	afterSecond := store.LastSeq()
	mustComplete(t, store, g, Options{FullRefresh: []string{"t"}})
	afterRefresh := store.LastSeq()
	writeIDs(t, dir, "3.json", 4, 5)
	mustComplete(t, store, g, Options{})

	tests := []struct {
		name string
		asOf uint64
		want []int64
	}{
		{"the start", 1, nil},
		{"after the first update", afterFirst, span(0, 2)},
		{"after the second update", afterSecond, span(0, 4)},
		{"after the full refresh", afterRefresh, span(0, 4)},
		{"now", 0, span(0, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ReadTable(ctx, store, "t", tt.asOf)
			if err != nil {
				t.Fatal(err)
			}
			if got := sorted(column(t, b, "id")); !slices.Equal(got, tt.want) {
				t.Errorf("ReadTable: %v, want %v", got, tt.want)
			}
			var scanned []int64
			var batches int
			err = ScanTable(ctx, store, "t", tt.asOf, func(b *domain.Batch) error {
				batches++
				scanned = append(scanned, column(t, b, "id")...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := sorted(scanned); !slices.Equal(got, tt.want) {
				t.Errorf("ScanTable: %v, want %v", got, tt.want)
			}
			if len(tt.want) > 0 && batches == 0 {
				t.Error("ScanTable called fn for no batch")
			}
		})
	}

	stop := errors.New("enough")
	calls := 0
	err := ScanTable(ctx, store, "t", 0, func(*domain.Batch) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("ScanTable with fn failing: %v after %d calls, want fn's error after 1", err, calls)
	}
	if s, err := TableSchemaAt(ctx, store, "t", 1); err != nil || s != nil {
		t.Errorf("the schema before any batch: %v (%v), want none", s, err)
	}
	if s, err := TableSchemaAt(ctx, store, "t", afterFirst); err != nil || s == nil || s.Index("id") != 0 {
		t.Errorf("the schema after the first update: %v (%v)", s, err)
	}
	if b, err := ReadTable(ctx, store, "never_written", 0); err != nil || b.Len() != 0 {
		t.Errorf("a table without batches: %v rows (%v), want none", b.Len(), err)
	}
}

// TestStreamOfRefreshedTableFails: a flow streaming from a table that was
// fully refreshed without it fails with STREAMING_SOURCE_WAS_RESET rather
// than silently rereading or skipping rows; refreshing both goes on.
func TestStreamOfRefreshedTableFails(t *testing.T) {
	store := openStore(t)
	g := newGraph("reset", []*domain.Dataset{streamingTable("raw"), streamingTable("copy")},
		appendFlow("load", "raw", from(sources.Range(0, 3))),
		appendFlow("copy", "copy", streamOf("raw")))
	mustComplete(t, store, g, Options{})
	mustComplete(t, store, g, Options{FullRefresh: []string{"raw"}})
	res := mustFail(t, store, g, Options{}, domain.CodeUpstreamReset)
	if res.Flows["copy"] != domain.FlowFailed {
		t.Errorf("copy is %s", res.Flows["copy"])
	}
	if n := retries(t, store, res.UpdateID, "copy"); n != 0 {
		t.Errorf("an upstream reset was retried %d times", n)
	}
	mustComplete(t, store, g, Options{FullRefresh: []string{"raw", "copy"}})
	if got := ids(t, store, "copy"); !slices.Equal(got, span(0, 3)) {
		t.Errorf("copy holds %v after refreshing both", got)
	}
}

// TestBatchTooLargeIsPlannedAgainSmaller: a micro-batch too large for one
// commit is planned again with the same id and half the rows, and the rest
// follows in later batches; every row lands once.
func TestBatchTooLargeIsPlannedAgainSmaller(t *testing.T) {
	store := openStore(t)
	const rows = 5000
	// 4 KiB of random bytes a row (so that compression does not shrink
	// them): ~20 MB, over the store's 16 MiB limit for one event
	random := rand.NewChaCha8([32]byte{})
	wide := domain.TransformFunc(func(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
		pad := domain.NewColumn(domain.KindString, b.Len())
		for range b.Len() {
			padding := make([]byte, 4<<10)
			_, _ = random.Read(padding)
			pad.Strs = append(pad.Strs, string(padding))
		}
		schema := domain.NewSchema(append(slices.Clone(b.Schema.Fields), domain.Field{Name: "pad", Type: domain.TypeString})...)
		return domain.BatchOf(schema, append(slices.Clone(b.Columns), pad))
	})
	g := newGraph("big", []*domain.Dataset{streamingTable("t")}, appendFlow("load", "t", from(sources.Range(0, rows)), wide))
	res := mustComplete(t, store, g, Options{Limit: domain.ReadLimit{MaxRows: rows}})

	var replans []*domain.BatchInfo
	for _, ev := range events(t, store, eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventBatchPlanned}}) {
		if ev.Level == domain.LevelWarn {
			replans = append(replans, ev.Details.BatchPlanned)
		}
	}
	if len(replans) == 0 || replans[0].BatchID != 0 {
		t.Fatalf("replans %+v, want batch 0 planned again", replans)
	}
	batches := committedBatches(t, store, res.UpdateID, "load")
	if len(batches) < 2 || batches[0].NumRows > rows/2 {
		t.Errorf("committed %d batches, the first of %d rows: want it at most %d", len(batches), batches[0].NumRows, rows/2)
	}
	if got := ids(t, store, "t"); !slices.Equal(got, span(0, rows)) {
		t.Errorf("t holds %d rows, want 0..%d once each", len(got), rows-1)
	}
}
