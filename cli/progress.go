package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/processors"
)

// progress follows an update through its events and shows it on stderr: a
// table redrawn in place on a terminal, one line per flow state change
// otherwise.
type progress struct {
	w    io.Writer
	live bool

	mu      sync.Mutex
	start   time.Time
	update  string
	state   domain.UpdateState
	flows   map[string]*flowView
	order   []string         // flows in the order they appeared
	tables  map[string]int64 // rows written per dataset in this update
	dropped map[string]int64 // records dropped by expectations, per dataset
	rescued map[string]int64 // records kept in _rescued_data, per dataset
	// malformed records not rescued (dropped, or kept with NULLs), per dataset
	malformed map[string]int64
	lastSeq   uint64
	drawn     int // lines of the last live draw
}

type flowView struct {
	name          string
	status        domain.FlowStatus
	reason        string
	batches, rows int64
	dropped       int64 // records dropped by expectations
	rescued       int64 // records kept in _rescued_data
	malformed     int64 // malformed records not rescued
	shown         int64 // rows when the last line about it was printed
	started       time.Time
	ended         time.Time
	err           *domain.ErrorInfo
}

func newProgress(w io.Writer, live bool) *progress {
	return &progress{w: w, live: live, start: time.Now(), flows: map[string]*flowView{},
		tables: map[string]int64{}, dropped: map[string]int64{}, rescued: map[string]int64{}, malformed: map[string]int64{}}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// startAt makes seq the first event the view expects.
func (p *progress) startAt(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastSeq = seq - 1
}

// seen is the seq of the last event the view took.
func (p *progress) seen() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastSeq
}

func (p *progress) flow(name string) *flowView {
	f := p.flows[name]
	if f == nil {
		f = &flowView{name: name, status: domain.FlowQueued}
		p.flows[name] = f
		p.order = append(p.order, name)
	}
	return f
}

// observe takes one event of the update.
func (p *progress) observe(ev *domain.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Seq <= p.lastSeq {
		return // seen: from the bus, and again from the log
	}
	p.lastSeq = ev.Seq
	d := ev.Details
	switch {
	case d.CreateUpdate != nil:
		p.update = ev.Origin.UpdateID
	case d.UpdateProgress != nil:
		p.state = d.UpdateProgress.State
		if !p.live && (p.state == domain.UpdateRunning || p.state == domain.UpdateResetting) {
			p.line("update %s %s", shortID(p.update), p.state)
		}
	case d.FlowDefinition != nil:
		p.flow(ev.Origin.FlowName)
	case d.FlowProgress != nil:
		f := p.flow(ev.Origin.FlowName)
		fp := d.FlowProgress
		changed := f.status != fp.Status
		f.status, f.reason = fp.Status, fp.Reason
		if (fp.Status == domain.FlowStarting || fp.Status == domain.FlowRunning) && f.started.IsZero() {
			f.started = ev.Timestamp
		}
		if fp.Status.Terminal() {
			f.ended = ev.Timestamp
			if f.started.IsZero() {
				f.started = ev.Timestamp
			}
		}
		if ev.Error != nil {
			f.err = ev.Error
		}
		if !p.live && changed {
			p.line("%s", f.describe(true))
		}
	case d.BatchCommitted != nil:
		bc := d.BatchCommitted
		f := p.flow(ev.Origin.FlowName)
		f.batches++
		n := bc.NumRows
		if c := bc.Changes; c != nil {
			n = c.NumUpserted + c.NumDeleted // an AUTO CDC batch: the rows it upserted and deleted
		}
		f.rows += n
		f.rescued += bc.NumRescued
		p.tables[bc.Target] += n
		p.rescued[bc.Target] += bc.NumRescued
		f.malformed += bc.NumMalformed
		p.malformed[bc.Target] += bc.NumMalformed
		if bc.DataQuality != nil {
			f.dropped += bc.DataQuality.DroppedRecords
			p.dropped[bc.Target] += bc.DataQuality.DroppedRecords
		}
	case d.SinkBatchDelivered != nil:
		f := p.flow(ev.Origin.FlowName)
		f.batches++
		f.rows += d.SinkBatchDelivered.NumRows
		p.tables[d.SinkBatchDelivered.Sink] += d.SinkBatchDelivered.NumRows
	}
}

// line prints one progress line, prefixed by the time since the start.
func (p *progress) line(format string, args ...any) {
	fmt.Fprintf(p.w, "%8s  %s\n", formatDuration(time.Since(p.start)), fmt.Sprintf(format, args...))
}

// describe is one flow's state for a progress line.
func (f *flowView) describe(padded bool) string {
	name := f.name
	if padded {
		name = fmt.Sprintf("%-20s", f.name)
	}
	s := fmt.Sprintf("%s %s", name, f.status)
	switch {
	case f.status == domain.FlowSkipped && f.reason != "":
		s += " (" + f.reason + ")"
	case f.status == domain.FlowFailed && f.err != nil:
		s += fmt.Sprintf(": [%s] %s", f.err.Code, firstLine(strings.TrimPrefix(f.err.Message, "["+string(f.err.Code)+"] ")))
	case f.status.Terminal() && f.status != domain.FlowExcluded, f.status == domain.FlowRunning && f.rows > 0:
		s += fmt.Sprintf(", %s in %d %s, %s rows/s", plural(f.rows, "row"), f.batches, pluralWord(f.batches, "batch"), rate(f.rows, f.elapsed()))
		if f.dropped > 0 {
			s += fmt.Sprintf(", %s dropped", plural(f.dropped, "record"))
		}
		if f.rescued > 0 {
			s += fmt.Sprintf(", %s rescued", plural(f.rescued, "record"))
		}
		if f.malformed > 0 {
			s += fmt.Sprintf(", %s malformed", plural(f.malformed, "record"))
		}
	}
	return s
}

// plural is "1 row", "2 rows".
func plural(n int64, word string) string { return fmt.Sprintf("%d %s", n, pluralWord(n, word)) }

func pluralWord(n int64, word string) string {
	switch {
	case n == 1:
		return word
	case strings.HasSuffix(word, "ch"):
		return word + "es"
	}
	return word + "s"
}

func (f *flowView) elapsed() time.Duration {
	if f.started.IsZero() {
		return 0
	}
	end := f.ended
	if end.IsZero() {
		end = time.Now()
	}
	return end.Sub(f.started)
}

// progressEvery is how often, without a terminal, a running flow whose rows
// grew gets a line.
const progressEvery = 2 * time.Second

// redraw begins redrawing the live table, or, without a terminal, printing
// every progressEvery a line for each running flow that wrote rows since its
// last line; the returned function stops it after a last draw.
func (p *progress) redraw() (stop func()) {
	if !p.live {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(progressEvery)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					p.running()
				}
			}
		}()
		return func() { close(done); wg.Wait() }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			p.draw()
			select {
			case <-done:
				p.draw()
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// running prints a line for each running flow that wrote rows since its
// last line.
func (p *progress) running() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, name := range p.order {
		if f := p.flows[name]; f.status == domain.FlowRunning && f.rows > f.shown {
			f.shown = f.rows
			p.line("%s", f.describe(true))
		}
	}
}

// draw redraws the live table over the previous one.
func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", p.drawn)
	}
	lines := []string{fmt.Sprintf("update %s  %-10s %s", shortID(p.update), p.state, formatDuration(time.Since(p.start)))}
	if len(p.order) > 0 {
		lines = append(lines, fmt.Sprintf("  %-24s %-10s %8s %12s %12s %9s %9s", "flow", "state", "batches", "rows", "rows/s", "dropped", "rescued"))
	}
	for _, name := range p.order {
		f := p.flows[name]
		lines = append(lines, fmt.Sprintf("  %-24s %-10s %8d %12d %12s %9d %9d", name, f.status, f.batches, f.rows, rate(f.rows, f.elapsed()), f.dropped, f.rescued))
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\n")
	}
	p.drawn = len(lines)
	fmt.Fprint(p.w, b.String())
}

// summary ends the progress: the update's end, flows by final state, rows
// written per table.
func (p *progress) summary(res *processors.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "update %s %s in %s\n", shortID(res.UpdateID), res.State, formatDuration(res.Finished.Sub(res.Started)))
	byState := map[domain.FlowStatus]int{}
	for _, st := range res.Flows {
		byState[st]++
	}
	var states []string
	for st, n := range byState {
		states = append(states, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(states)
	if len(states) > 0 {
		fmt.Fprintf(p.w, "  flows: %s\n", strings.Join(states, ", "))
	}
	var tables []string
	for t := range p.tables {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	if len(tables) > 0 {
		var parts []string
		for _, t := range tables {
			parts = append(parts, fmt.Sprintf("%s %d", t, p.tables[t]))
		}
		fmt.Fprintf(p.w, "  rows written: %s\n", strings.Join(parts, ", "))
	}
	for _, c := range []struct {
		what   string
		counts map[string]int64
	}{{"records dropped by expectations", p.dropped}, {"records rescued into _rescued_data", p.rescued},
		{"malformed records not rescued (dropped, or kept with NULLs)", p.malformed}} {
		var parts []string
		for _, t := range tables {
			if n := c.counts[t]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", t, n))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(p.w, "  %s: %s\n", c.what, strings.Join(parts, ", "))
		}
	}
}

// failures shows each failed flow's error: the code, the flow, the message
// (for an expression, its file and line and the offending values) and the
// hint. Nothing of a failed micro-batch was committed.
func (p *progress) failures(res *processors.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	shown := false
	for _, name := range p.order {
		f := p.flows[name]
		if f.status != domain.FlowFailed || f.err == nil {
			continue
		}
		shown = true
		fmt.Fprintf(p.w, "error: [%s] flow %q failed: %s\n", f.err.Code, name, strings.TrimPrefix(f.err.Message, "["+string(f.err.Code)+"] "))
		if f.err.Hint != "" {
			fmt.Fprintf(p.w, "  hint: %s\n", f.err.Hint)
		}
		fmt.Fprintf(p.w, "  nothing of the failed micro-batch was committed; fix the cause and run again (sluice run --refresh-failed)\n")
	}
	if !shown && res.Err != nil {
		info := domain.ErrorInfoOf(res.Err)
		fmt.Fprintf(p.w, "error: %s\n", info.Message)
		if info.Hint != "" {
			fmt.Fprintf(p.w, "  hint: %s\n", info.Hint)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
