package sources

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/domain"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// baseTime is the modification time of the first file a test writes; later
// files are a second apart, so that listing order is the writing order.
var baseTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// tfile is a file a test writes: its name under the source directory and its
// content.
type tfile struct{ name, content string }

// writeFile writes content to dir/name (creating directories) and sets its
// modification time.
func writeFile(t testing.TB, dir, name, content string, mtime time.Time) string {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	touch(t, path, mtime)
	return path
}

func touch(t testing.TB, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// writeFiles writes files one second apart, from baseTime on.
func writeFiles(t testing.TB, dir string, files []tfile) {
	t.Helper()
	for i, f := range files {
		writeFile(t, dir, f.name, f.content, baseTime.Add(time.Duration(i)*time.Second))
	}
}

func newFiles(t testing.TB, dir string, opts FileOptions) domain.Source {
	t.Helper()
	src := Files(dir, opts)
	if err := src.(domain.Validator).Validate(); err != nil {
		t.Fatalf("Files(%s, %+v): %v", dir, opts, err)
	}
	return src
}

// step is one planned and read micro-batch.
type step struct {
	start, end domain.Offset
	batch      *domain.Batch
}

// planRead plans the next micro-batch from start and reads it twice, checking
// that both reads agree. ok is false when the source has nothing new.
func planRead(t testing.TB, src domain.Source, start domain.Offset, limit domain.ReadLimit) (step, bool) {
	t.Helper()
	ctx := context.Background()
	planner := src
	if is, ok := src.(domain.ItemSource); ok {
		planner = is.Reading(recordOf(src))
	}
	end, ok, err := planner.Plan(ctx, start, limit)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if !ok {
		return step{}, false
	}
	b, err := src.Read(ctx, start, end)
	if err != nil {
		t.Fatalf("Read(%s): %v", end, err)
	}
	again, err := src.Read(ctx, start, end)
	if err != nil {
		t.Fatalf("second Read(%s): %v", end, err)
	}
	if d, d2 := dump(b), dump(again); d != d2 {
		t.Fatalf("Read(%s) twice gave different batches:\n%s", end, cmp.Diff(d, d2))
	}
	if is, ok := src.(domain.ItemSource); ok {
		items, err := is.Items(end)
		if err != nil {
			t.Fatal(err)
		}
		recordOf(src).Record(items) // as the store records a committed batch
	}
	return step{start: start, end: end, batch: b}, true
}

// records holds, per source, what its micro-batches read, as the store holds
// it for a flow.
var records sync.Map

func recordOf(src domain.Source) *ReadRecord {
	r, _ := records.LoadOrStore(src, &ReadRecord{})
	return r.(*ReadRecord)
}

// drain plans and reads micro-batches from start until the source has nothing
// new, chaining offsets.
func drain(t testing.TB, src domain.Source, start domain.Offset, limit domain.ReadLimit) []step {
	t.Helper()
	var steps []step
	for pos := start; ; {
		s, ok := planRead(t, src, pos, limit)
		if !ok {
			return steps
		}
		steps = append(steps, s)
		pos = s.end
		if len(steps) > 10000 {
			t.Fatal("the source never runs dry")
		}
	}
}

// readOnce plans one micro-batch with no limit and reads it.
func readOnce(t testing.TB, src domain.Source) *domain.Batch {
	t.Helper()
	s, ok := planRead(t, src, nil, domain.ReadLimit{})
	if !ok {
		t.Fatal("Plan found nothing to read")
	}
	return s.batch
}

// readErr plans one micro-batch and returns the error of planning or reading.
func readErr(t testing.TB, src domain.Source) error {
	t.Helper()
	ctx := context.Background()
	end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
	if err != nil {
		return err
	}
	if !ok {
		t.Fatal("Plan found nothing to read")
	}
	_, err = src.Read(ctx, nil, end)
	return err
}

func offsetOf(t testing.TB, o domain.Offset) fileOffset {
	t.Helper()
	f, err := parseFileOffset(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// dump renders a batch as text: its schema, then one line per row. Strings are
// quoted, so that the exact content (newlines, quotes) shows.
func dump(b *domain.Batch) string {
	var sb strings.Builder
	sb.WriteString("schema: ")
	sb.WriteString(b.Schema.String())
	sb.WriteByte('\n')
	for i := 0; i < b.Len(); i++ {
		for j, c := range b.Columns {
			if j > 0 {
				sb.WriteString(" | ")
			}
			sb.WriteString(render(c.Value(i)))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func render(v domain.Value) string {
	switch v.Kind() {
	case domain.KindString:
		return strconv.Quote(v.AsString())
	case domain.KindFloat64:
		s := strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eIN") {
			s += ".0" // so that a double never reads as a bigint
		}
		return s
	}
	return v.String()
}

// golden compares got with testdata/golden/name.txt, or rewrites the file
// with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", path, diff)
	}
}

// column returns the values of the named column.
func column(t testing.TB, b *domain.Batch, name string) []domain.Value {
	t.Helper()
	i := b.Schema.Index(name)
	if i < 0 {
		t.Fatalf("no column %q in %s", name, b.Schema)
	}
	out := make([]domain.Value, b.Len())
	for r := range out {
		out[r] = b.Columns[i].Value(r)
	}
	return out
}

// rescued decodes the _rescued_data of each row (nil where it is NULL).
func rescued(t testing.TB, b *domain.Batch) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, v := range column(t, b, RescuedDataColumn) {
		if v.IsNull() {
			out = append(out, nil)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(v.AsString()), &m); err != nil {
			t.Fatalf("_rescued_data %q is not a JSON object: %v", v.AsString(), err)
		}
		out = append(out, m)
	}
	return out
}

// wantError checks err's code and that its message holds every fragment.
func wantError(t testing.TB, err error, code domain.Code, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := domain.CodeOf(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}
