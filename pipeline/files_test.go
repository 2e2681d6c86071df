package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// writeJSON writes rows ids [from, to) as a JSON lines file.
func writeJSON(t *testing.T, dir, name string, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"id": %d, "name": "row %d"}`+"\n", i, i)
	}
	writeFile(t, dir, name, b.String())
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ingest(dir string, opts sources.FileOptions) *Pipeline {
	if opts.Format == "" {
		opts.Format = "json"
	}
	p := New("files")
	p.StreamingTable("raw", StreamFrom(sources.Files(dir, opts)))
	p.StreamingTable("clean", ReadStream("raw").Filter(func(r Row) bool { return r.Get("id").AsInt()%2 == 0 }))
	return p
}

func TestFilesRestarts(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeJSON(t, dir, "a.json", 0, 10)
	writeJSON(t, dir, "b.json", 10, 20)
	p := ingest(dir, sources.FileOptions{MaxFilesPerTrigger: 1})
	h.mustComplete(p, processors.Options{})
	if got := h.table("raw"); len(got) != 20 {
		t.Fatalf("raw holds %d rows, want 20", len(got))
	}

	t.Run("new files are read by the next update, and only they", func(t *testing.T) {
		writeJSON(t, dir, "c.json", 20, 25)
		res := h.mustComplete(p, processors.Options{})
		if got := h.table("raw"); len(got) != 25 || got[24] != 24 {
			t.Fatalf("raw holds %v, want 0..24", got)
		}
		if got := h.table("clean"); len(got) != 13 {
			t.Errorf("clean holds %d rows, want 13", len(got))
		}
		read := h.events(eventstore.Filter{Update: res.UpdateID, Flow: "raw", Types: []domain.EventType{domain.EventBatchCommitted}})
		if len(read) != 1 || read[0].Details.BatchCommitted.NumRows != 5 {
			t.Errorf("the update committed %d batches to raw, want one of 5 rows", len(read))
		}
		// Nothing new: nothing read.
		res = h.mustComplete(p, processors.Options{})
		if n := len(h.events(eventstore.Filter{Update: res.UpdateID, Types: []domain.EventType{domain.EventBatchCommitted}})); n != 0 {
			t.Errorf("an update without new files committed %d batches", n)
		}
	})
	t.Run("full refresh rereads everything into a new generation", func(t *testing.T) {
		before := h.store.LastSeq()
		h.mustComplete(p, processors.Options{FullRefreshAll: true})
		if got := h.table("raw"); len(got) != 25 {
			t.Fatalf("raw holds %d rows after full refresh, want 25", len(got))
		}
		if got := h.table("clean"); len(got) != 13 {
			t.Errorf("clean holds %d rows after full refresh, want 13", len(got))
		}
		gen, _ := h.store.TableGeneration("raw")
		if gen != 1 {
			t.Errorf("raw is in generation %d, want 1", gen)
		}
		old, err := processors.ReadTable(context.Background(), h.store, "raw", before)
		if err != nil || old.Len() != 25 {
			t.Errorf("the table as of before the refresh has %d rows (%v), want the old generation's 25", old.Len(), err)
		}
	})
	t.Run("checkpoint reset rereads the source into the existing table", func(t *testing.T) {
		h.mustComplete(p, processors.Options{ResetCheckpoint: []string{"raw"}})
		if got := h.table("raw"); len(got) != 50 {
			t.Errorf("raw holds %d rows, want 50 (each file read again into the same table)", len(got))
		}
	})
	t.Run("as of an earlier position", func(t *testing.T) {
		var first uint64
		for _, ev := range h.events(eventstore.Filter{Dataset: "raw", Types: []domain.EventType{domain.EventBatchCommitted}}) {
			first = ev.Seq
			break
		}
		b, err := processors.ReadTable(context.Background(), h.store, "raw", first)
		if err != nil || b.Len() != 10 {
			t.Errorf("raw as of seq %d has %d rows (%v), want the first file's 10", first, b.Len(), err)
		}
	})
}

// TestBadInputKeepsCommitted: a bad record fails the flow with its file and
// line; the batches committed before it stay, and the next update, after the
// fix, goes on from there.
func TestBadInputKeepsCommitted(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeJSON(t, dir, "1.json", 0, 10)
	h.mustComplete(ingest(dir, sources.FileOptions{}), processors.Options{})
	writeFile(t, dir, "2.json", "{\"id\": 10, \"name\": \"ok\"}\n{\"id\": 11, \"name\": \n")
	res := h.run(ingest(dir, sources.FileOptions{}), processors.Options{Development: true})
	if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != domain.CodeMalformedRecord {
		t.Fatalf("update %s with %v, want FAILED with %s", res.State, res.Err, domain.CodeMalformedRecord)
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "2.json, line 2") {
		t.Errorf("error %q does not name the file and line", msg)
	}
	if got := h.table("raw"); len(got) != 10 {
		t.Errorf("raw holds %d rows, want the 10 committed before", len(got))
	}
	// With rescue, the good row goes in and the bad one lands in _rescued_data.
	h.mustComplete(ingest(dir, sources.FileOptions{RescueBadRecords: true}), processors.Options{})
	b, err := processors.ReadTable(context.Background(), h.store, "raw", 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 12 {
		t.Fatalf("raw holds %d rows, want 12", b.Len())
	}
	j := b.Schema.Index(sources.RescuedDataColumn)
	if j < 0 {
		t.Fatalf("no %s column in %s", sources.RescuedDataColumn, b.Schema)
	}
	rescued := 0
	for i := 0; i < b.Len(); i++ {
		if v := b.Columns[j].Value(i); !v.IsNull() {
			rescued++
			if !strings.Contains(v.AsString(), "2.json") || !strings.Contains(v.AsString(), `"_line":2`) {
				t.Errorf("rescued data %s does not name the file and line", v.AsString())
			}
		}
	}
	if rescued != 1 {
		t.Errorf("%d rescued rows, want 1", rescued)
	}
}

func TestSchemaEvolutionAndDrift(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeFile(t, dir, "1.json", `{"id": 1, "amount": 5}`+"\n")
	p := ingest(dir, sources.FileOptions{MaxFilesPerTrigger: 1})
	h.mustComplete(p, processors.Options{})
	// A new nullable column and bigint widened to double are allowed.
	writeFile(t, dir, "2.json", `{"id": 2, "amount": 5.5, "note": "new"}`+"\n")
	h.mustComplete(p, processors.Options{})
	schema, err := h.store.TableSchema("raw")
	if err != nil {
		t.Fatal(err)
	}
	if got := schema.String(); got != "id bigint, amount double, note string" {
		t.Errorf("schema %s, want id bigint, amount double, note string", got)
	}
	b, err := processors.ReadTable(context.Background(), h.store, "raw", 0)
	if err != nil || b.Len() != 2 || !b.Row(0)[2].IsNull() || b.Row(0)[1].AsFloat() != 5 {
		t.Errorf("raw after evolution: %v (%v)", b.Rows(), err)
	}
	// A string where a number was is drift.
	writeFile(t, dir, "3.json", `{"id": "three"}`+"\n")
	res := h.run(p, processors.Options{Development: true})
	if domain.CodeOf(res.Err) != domain.CodeSchemaDrift {
		t.Fatalf("update %s with %v, want %s", res.State, res.Err, domain.CodeSchemaDrift)
	}
	var e *domain.Error
	errors.As(res.Err, &e)
	for _, want := range []string{`"id"`, "bigint", "string"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("drift error %q does not mention %s", e.Error(), want)
		}
	}
	if !strings.Contains(e.Hint, "full refresh") {
		t.Errorf("drift hint %q does not say how to fix it", e.Hint)
	}
}

func TestDeclaredSchema(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeFile(t, dir, "1.json", `{"name": "a", "id": 1}`+"\n")
	schema := domain.NewSchema(
		domain.Field{Name: "id", Type: domain.TypeInt64},
		domain.Field{Name: "name", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "score", Type: domain.TypeFloat64, Nullable: true},
	)
	p := New("declared")
	p.CreateStreamingTable("t", WithSchema(schema))
	p.AppendFlow("t", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})), Name("load"))
	h.mustComplete(p, processors.Options{})
	b, err := processors.ReadTable(context.Background(), h.store, "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Schema.Equal(schema) || b.Len() != 1 || b.Row(0)[0].AsInt() != 1 || !b.Row(0)[2].IsNull() {
		t.Errorf("table %s %v, want the declared schema and order", b.Schema, b.Rows())
	}
	writeFile(t, dir, "2.json", `{"id": 2, "extra": true}`+"\n")
	if res := h.run(p, processors.Options{Development: true}); domain.CodeOf(res.Err) != domain.CodeSchemaDrift {
		t.Errorf("a column outside the declared schema: %v, want %s", res.Err, domain.CodeSchemaDrift)
	}
}

// TestImportCheckpoint: a flow starts from another pipeline's committed
// position, on its first update only.
func TestImportCheckpoint(t *testing.T) {
	h, p, dir := migrated(t)
	h.mustComplete(p, processors.Options{})
	if got := h.table("events"); len(got) != 5 || got[0] != 10 {
		t.Fatalf("events holds %v, want only the 5 rows after the imported position", got)
	}
	imports := func() int {
		return len(h.events(eventstore.Filter{Types: []domain.EventType{domain.EventCheckpointImported}}))
	}
	writeJSON(t, dir, "3.json", 15, 17)
	h.mustComplete(p, processors.Options{})
	if got := h.table("events"); len(got) != 7 || imports() != 1 {
		t.Errorf("second update: %d rows and %d imports, want 7 and 1", len(got), imports())
	}
	h.mustComplete(p, processors.Options{FullRefreshAll: true})
	if got := h.table("events"); len(got) != 17 || imports() != 1 {
		t.Errorf("after full refresh: %d rows and %d imports, want every file's 17 and still 1 import", len(got), imports())
	}
}

// TestForeachBatchErrorFailsFlow: an error from the function fails the flow,
// nothing is acknowledged, and the same batch id comes again on retry.
func TestForeachBatchErrorFailsFlow(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	var ids []int64
	p := New("sink")
	p.StreamingTable("t", StreamFrom(sources.Range(0, 10)))
	p.ForeachBatchSink("out", func(_ context.Context, rows *domain.Batch, batchID int64) error {
		ids = append(ids, batchID)
		if calls.Add(1) == 1 {
			return errors.New("warehouse unavailable")
		}
		return nil
	})
	p.AppendFlow("out", ReadStream("t"), Name("export"))
	res := h.run(p, processors.Options{Development: true})
	if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != domain.CodeUserFunctionFailed {
		t.Fatalf("update %s with %v, want FAILED with %s", res.State, res.Err, domain.CodeUserFunctionFailed)
	}
	if n := len(h.events(eventstore.Filter{Types: []domain.EventType{domain.EventSinkBatchDelivered}})); n != 0 {
		t.Errorf("%d deliveries acknowledged after a failure", n)
	}
	h.mustComplete(p, processors.Options{})
	if len(ids) != 2 || ids[0] != 0 || ids[1] != 0 {
		t.Errorf("batch ids delivered %v, want [0 0]: the failed batch again", ids)
	}
}

// TestContinuousPicksUpNewFiles: a continuous update reads files as they
// land, and a downstream table follows through commit wake-ups.
func TestContinuousPicksUpNewFiles(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeJSON(t, dir, "0.json", 0, 10)
	p := ingest(dir, sources.FileOptions{})
	p.Continuous = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *processors.Result, 1)
	go func() {
		res, err := p.Run(ctx, h.store, fast(processors.Options{}))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitRows := func(table string, n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for len(h.table(table)) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %d rows, want %d", table, len(h.table(table)), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitRows("clean", 5)
	for i := 1; i <= 3; i++ {
		writeJSON(t, dir, fmt.Sprintf("%d.json", i), i*10, i*10+10)
		waitRows("raw", (i+1)*10)
	}
	waitRows("clean", 20)
	cancel()
	res := <-done
	if res.State != domain.UpdateCanceled {
		t.Fatalf("update %s (%v), want CANCELED", res.State, res.Err)
	}
	if got := h.table("raw"); len(got) != 40 {
		t.Errorf("raw holds %d rows, want 40", len(got))
	}
	wantStatuses(t, h, res, map[string]string{"raw": "STOPPED", "clean": "STOPPED"})
}
