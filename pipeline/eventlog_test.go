package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// TestEventLogReadersRunLast: a flow reading event_log() waits for every
// flow but those that read it, however indirectly; its readers run after
// it; a stream of the log is refused.
func TestEventLogReadersRunLast(t *testing.T) {
	p, problems := loadSQL(t, t.TempDir(), `
CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;
CREATE MATERIALIZED VIEW b AS SELECT x + 1 AS y FROM a;
CREATE MATERIALIZED VIEW events_by_type AS SELECT event_type, count(*) AS n FROM event_log() GROUP BY event_type;
CREATE MATERIALIZED VIEW top_types AS SELECT * FROM events_by_type ORDER BY n DESC LIMIT 3;
`)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	g, problems := p.Resolve()
	if len(problems) > 0 {
		t.Fatalf("resolving: %v", problems)
	}
	if got := g.Preds["events_by_type"]; !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("events_by_type waits for %v, want [a b]", got)
	}
	if got := g.Preds["top_types"]; !slices.Equal(got, []string{"events_by_type"}) {
		t.Errorf("top_types waits for %v, want [events_by_type]", got)
	}
	_, problems = loadSQL(t, t.TempDir(), `CREATE STREAMING TABLE s AS SELECT * FROM STREAM event_log();`)
	if len(problems) != 1 || problems[0].Code != domain.CodeNotImplemented {
		t.Errorf("a stream of the log: %v, want %s", problems, domain.CodeNotImplemented)
	}
}

// TestEventLogViewInAContinuousUpdate: a materialized view over the log
// in a continuous update recomputes when the other tables commit, not at
// every poll (its own commits would feed it forever).
func TestEventLogViewInAContinuousUpdate(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1}`+"\n")
	p, problems := loadSQL(t, dir, `
CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('in', format => 'json');
CREATE MATERIALIZED VIEW by_type AS SELECT event_type, count(*) AS n FROM event_log() GROUP BY event_type;
`)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	p.Continuous = true
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	res, err := p.Run(ctx, h.store, fast(processors.Options{}))
	if err != nil || res.State != domain.UpdateCanceled {
		t.Fatalf("update %v: %v", res, err)
	}
	recomputes := len(h.events(eventstore.Filter{Flow: "by_type", Types: []domain.EventType{domain.EventBatchCommitted}}))
	if recomputes == 0 || recomputes > 3 {
		t.Errorf("by_type recomputed %d times in 1.5 s of polling every 10 ms; want once or twice (after raw's commits)", recomputes)
	}
}
