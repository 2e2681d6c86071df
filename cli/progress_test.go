package cli

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// progressEvents is an update in which one flow completes, one is skipped and
// one fails.
func progressEvents() []*domain.Event {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var evs []*domain.Event
	add := func(flow string, ms int, d domain.Details, e *domain.ErrorInfo) {
		evs = append(evs, &domain.Event{Seq: uint64(len(evs) + 1), Timestamp: t0.Add(time.Duration(ms) * time.Millisecond),
			Origin: domain.Origin{UpdateID: "0123456789abcdef", FlowName: flow}, Details: d, Error: e})
	}
	status := func(s domain.FlowStatus, reason string) domain.Details {
		return domain.Details{FlowProgress: &domain.FlowProgress{Status: s, Reason: reason}}
	}
	add("", 0, domain.Details{CreateUpdate: &domain.CreateUpdate{}}, nil)
	add("", 0, domain.Details{UpdateProgress: &domain.UpdateProgress{State: domain.UpdateRunning}}, nil)
	add("load", 0, status(domain.FlowStarting, ""), nil)
	add("load", 1, status(domain.FlowRunning, ""), nil)
	add("load", 100, domain.Details{BatchCommitted: &domain.BatchInfo{Target: "t", NumRows: 600}}, nil)
	add("load", 200, domain.Details{BatchCommitted: &domain.BatchInfo{Target: "t", NumRows: 400}}, nil)
	add("load", 500, status(domain.FlowCompleted, ""), nil)
	add("backfill", 500, status(domain.FlowSkipped, domain.SkipAlreadyDrained), nil)
	add("calc", 600, status(domain.FlowStarting, ""), nil)
	add("calc", 700, status(domain.FlowFailed, ""), &domain.ErrorInfo{Code: domain.CodeDivideByZero, Message: "[DIVIDE_BY_ZERO] calc.sql:2:9: 1 / 0: division by zero", Hint: "use try_divide"})
	return evs
}

func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	for _, ev := range progressEvents() {
		p.observe(ev)
	}
	if p.seen() != uint64(len(progressEvents())) {
		t.Errorf("seen %d", p.seen())
	}
	res := &processors.Result{UpdateID: "0123456789abcdef", State: domain.UpdateFailed,
		Flows:   map[string]domain.FlowStatus{"load": domain.FlowCompleted, "backfill": domain.FlowSkipped, "calc": domain.FlowFailed},
		Started: time.Unix(0, 0), Finished: time.Unix(1, 500_000_000)}
	p.summary(res)
	p.failures(res)
	// Drop the elapsed-time column, which depends on the clock.
	got := regexp.MustCompile(`(?m)^ *[0-9.]+[µnm]?s  `).ReplaceAllString(out.String(), "")
	want := `update 01234567 RUNNING
load                 STARTING
load                 RUNNING
load                 COMPLETED, 1000 rows in 2 batches, 2000 rows/s
backfill             SKIPPED (ONCE_FLOW_ALREADY_DRAINED)
calc                 STARTING
calc                 FAILED: [DIVIDE_BY_ZERO] calc.sql:2:9: 1 / 0: division by zero
update 01234567 FAILED in 1.5s
  flows: 1 COMPLETED, 1 FAILED, 1 SKIPPED
  rows written: t 1000
error: [DIVIDE_BY_ZERO] flow "calc" failed: calc.sql:2:9: 1 / 0: division by zero
  hint: use try_divide
  nothing of the failed micro-batch was committed; fix the cause and run again (sluice run --refresh-failed)
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestProgressLiveTable(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true)
	stop := p.redraw()
	for _, ev := range progressEvents() {
		p.observe(ev)
	}
	stop()
	s := out.String()
	last := s[strings.LastIndex(s, "\x1b[J")+len("\x1b[J"):]
	for _, want := range []string{"update 01234567  RUNNING", "flow", "rows/s", "load                     COMPLETED         2         1000         2000", "calc                     FAILED"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last draw does not show %q:\n%s", want, last)
		}
	}
	if strings.Count(last, "\n") != 5 {
		t.Errorf("the last draw has %d lines:\n%s", strings.Count(last, "\n"), last)
	}
}

// TestProgressWhileRunning: without a terminal, a running flow that wrote
// rows since its last line gets one (every two seconds), with the records
// dropped and rescued, which the summary counts too.
func TestProgressWhileRunning(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	t0 := time.Now()
	for i, d := range []domain.Details{
		{FlowProgress: &domain.FlowProgress{Status: domain.FlowRunning}},
		{BatchCommitted: &domain.BatchInfo{Target: "t", NumRows: 1, NumRescued: 1, DataQuality: &domain.DataQuality{DroppedRecords: 2}}},
	} {
		p.observe(&domain.Event{Seq: uint64(i + 1), Timestamp: t0, Origin: domain.Origin{FlowName: "load"}, Details: d})
	}
	p.running()
	p.running() // nothing new: no line
	p.summary(&processors.Result{UpdateID: "0123456789abcdef", State: domain.UpdateCompleted, Flows: map[string]domain.FlowStatus{"load": domain.FlowCompleted}})
	got := regexp.MustCompile(`(?m)^ *[0-9.]+[µnm]?s  `).ReplaceAllString(out.String(), "")
	got = regexp.MustCompile(`, [0-9]+ rows/s`).ReplaceAllString(got, ", R rows/s")
	want := `load                 RUNNING
load                 RUNNING, 1 row in 1 batch, R rows/s, 2 records dropped, 1 record rescued
update 01234567 COMPLETED in 0s
  flows: 1 COMPLETED
  rows written: t 1
  records dropped by expectations: t 2
  records rescued into _rescued_data: t 1
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestProgressSeesEveryEvent: the run's view follows the bus; an event
// after a gap brings the events of the gap from the log first; what the
// bus has not brought when the update ends is read from the log; and an
// event seen twice counts once.
func TestProgressSeesEveryEvent(t *testing.T) {
	store, err := eventstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	batch := int64(0)
	committed := func(rows int64) *domain.Event {
		batch++
		return &domain.Event{Type: domain.EventBatchCommitted, Level: domain.LevelInfo, Timestamp: time.Now(),
			Origin:  domain.Origin{FlowName: "f", DatasetName: "t"},
			Details: domain.Details{BatchCommitted: &domain.BatchInfo{Flow: "f", Target: "t", BatchID: batch - 1, NumRows: rows}}}
	}
	appendRows := func(rows ...int64) {
		t.Helper()
		for _, n := range rows {
			if _, err := store.Append(ctx, committed(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	v := newProgress(io.Discard, false)
	wantRows := func(want int64) {
		t.Helper()
		v.mu.Lock()
		got := v.tables["t"]
		v.mu.Unlock()
		if got != want {
			t.Errorf("the view counts %d rows written to t, want %d", got, want)
		}
	}

	// From the bus alone.
	from := store.LastSeq() + 1
	watchCtx, stop := context.WithCancel(ctx)
	if err := watchBus(watchCtx, store, from, v); err != nil {
		t.Fatal(err)
	}
	appendRows(2, 3)
	for deadline := time.Now().Add(5 * time.Second); v.seen() < store.LastSeq(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the view saw up to seq %d of %d from the bus", v.seen(), store.LastSeq())
		}
	}
	wantRows(5)
	stop()

	// A gap: the bus stopped, then brings a later event.
	appendRows(5, 7)
	var last *domain.Event
	if err := store.Scan(ctx, eventstore.Filter{From: store.LastSeq()}, func(ev *domain.Event) error {
		last = ev
		return nil
	}); err != nil || last == nil {
		t.Fatalf("reading the last event: %v", err)
	}
	show(ctx, store, v, last)
	wantRows(17)

	// The end of the update, with events the bus never brought.
	appendRows(11)
	if err := catchUp(ctx, store, v); err != nil {
		t.Fatal(err)
	}
	wantRows(28)

	// Seen again, from the log: counted once.
	if err := store.Scan(ctx, eventstore.Filter{From: from}, func(ev *domain.Event) error {
		v.observe(ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantRows(28)
}
