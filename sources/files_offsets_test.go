package sources

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/domain"
)

// ids returns the bigint column "id" of every batch, in order.
func ids(t testing.TB, steps []step) []int64 {
	t.Helper()
	var out []int64
	for _, s := range steps {
		if s.batch.Len() == 0 {
			continue
		}
		for _, v := range column(t, s.batch, "id") {
			out = append(out, v.AsInt())
		}
	}
	return out
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// jsonIDs is a JSON lines file of ids [from, to).
func jsonIDs(from, to int64) string {
	var sb strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&sb, `{"id": %d, "s": "row %d"}`+"\n", i, i)
	}
	return sb.String()
}

// TestEachFileReadOnce chains micro-batches (the end of one is the start of
// the next): every file is read once, and files that arrive later are read by
// the next micro-batch, alone.
func TestEachFileReadOnce(t *testing.T) {
	dir := t.TempDir()
	src := newFiles(t, dir, FileOptions{Format: "json"})
	ctx := context.Background()

	// An empty directory has nothing to read.
	if end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{}); err != nil || ok || end != nil {
		t.Fatalf("empty directory: %s %v %v", end, ok, err)
	}

	writeFile(t, dir, "a.json", jsonIDs(0, 3), baseTime)
	writeFile(t, dir, "b.json", jsonIDs(3, 5), baseTime.Add(time.Second))
	writeFile(t, dir, "sub/c.json", jsonIDs(5, 6), baseTime.Add(2*time.Second))
	steps := drain(t, src, nil, domain.ReadLimit{})
	if len(steps) != 1 {
		t.Fatalf("%d micro-batches, want 1", len(steps))
	}
	if got := ids(t, steps); !cmp.Equal(got, seq(0, 6)) {
		t.Fatalf("ids %v", got)
	}
	pos := steps[0].end
	if files := offsetOf(t, pos).Files; len(files) != 3 || files[2].Path != "sub/c.json" {
		t.Errorf("offset files %+v, want a.json, b.json, sub/c.json", files)
	}

	// Nothing new: nothing planned, and the position does not move.
	if _, ok, err := src.Plan(ctx, pos, domain.ReadLimit{}); ok || err != nil {
		t.Fatalf("Plan with nothing new: %v %v", ok, err)
	}

	// New files: the next micro-batch reads them and only them, even one
	// older than the files read (within the lookback window).
	writeFile(t, dir, "d.json", jsonIDs(6, 8), baseTime.Add(time.Hour))
	writeFile(t, dir, "sub/deeper/e.json", jsonIDs(8, 9), baseTime.Add(-time.Hour))
	steps2 := drain(t, src, pos, domain.ReadLimit{})
	if got := ids(t, steps2); !cmp.Equal(got, []int64{8, 6, 7}) {
		t.Fatalf("second round ids %v, want the new files' [8 6 7] (oldest first)", got)
	}

	// Touching or appending to a file already read does not read it again.
	last := steps2[len(steps2)-1].end
	appendTo(t, filepath.Join(dir, "a.json"), jsonIDs(100, 101))
	touch(t, filepath.Join(dir, "b.json"), baseTime.Add(2*time.Hour))
	if s, ok := planRead(t, src, last, domain.ReadLimit{}); ok {
		t.Fatalf("read again files already read:\n%s", dump(s.batch))
	}

	// A restart: a new source over the same directory continues from the
	// stored offset.
	src2 := newFiles(t, dir, FileOptions{Format: "json"})
	writeFile(t, dir, "f.json", jsonIDs(9, 10), baseTime.Add(3*time.Hour))
	if got := ids(t, drain(t, src2, last, domain.ReadLimit{})); !cmp.Equal(got, []int64{9}) {
		t.Fatalf("after a restart, ids %v, want [9]", got)
	}

	// Replaying a planned micro-batch (after a crash) reads the same rows,
	// whatever arrived since.
	again, err := src2.Read(ctx, pos, steps2[0].end)
	if err != nil {
		t.Fatal(err)
	}
	if dump(again) != dump(steps2[0].batch) {
		t.Errorf("replay differs:\n%s", cmp.Diff(dump(steps2[0].batch), dump(again)))
	}
}

func appendTo(t testing.TB, path, content string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	touch(t, path, info.ModTime()) // keep the listing order
}

// TestHiddenFilesIgnored: names starting with "." or "_" are skipped, and so
// is everything under directories with such names.
func TestHiddenFilesIgnored(t *testing.T) {
	dir := t.TempDir()
	visible := []string{"a.json", "sub/b.json", "x_y.json", "sub/c.d.json"}
	hidden := []string{".a.json", "_a.json", "_SUCCESS", ".git/b.json", "_staging/c.json", "sub/_tmp.json", "sub/.part.json", "sub/_temporary/0/d.json", ".hidden/deep/e.json"}
	for i, name := range append(append([]string{}, visible...), hidden...) {
		writeFile(t, dir, name, fmt.Sprintf(`{"id": %d, "file": %q}`+"\n", i, name), baseTime.Add(time.Duration(i)*time.Second))
	}
	// A symbolic link to a file is no regular file of the directory.
	if err := os.Symlink(filepath.Join(dir, "a.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	src := newFiles(t, dir, FileOptions{Format: "json"})
	s, _ := planRead(t, src, nil, domain.ReadLimit{})
	var got []string
	for _, v := range column(t, s.batch, "file") {
		got = append(got, v.AsString())
	}
	if !cmp.Equal(got, visible) {
		t.Errorf("read %v, want %v", got, visible)
	}

	// Renaming a finished file to a visible name publishes it.
	if err := os.Rename(filepath.Join(dir, "_a.json"), filepath.Join(dir, "published.json")); err != nil {
		t.Fatal(err)
	}
	s2, ok := planRead(t, src, s.end, domain.ReadLimit{})
	if !ok || s2.batch.Len() != 1 || column(t, s2.batch, "file")[0].AsString() != "_a.json" {
		t.Errorf("the renamed file was not read (ok %v)", ok)
	}
}

// TestSourceDirectoryMayStartWithUnderscore: only names under the directory
// are checked.
func TestSourceDirectoryMayStartWithUnderscore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "_landing", ".in")
	writeFile(t, dir, "a.json", jsonIDs(0, 2), baseTime)
	if b := readOnce(t, newFiles(t, dir, FileOptions{Format: "json"})); b.Len() != 2 {
		t.Errorf("%d rows, want 2", b.Len())
	}
}

func TestMaxFilesPerTrigger(t *testing.T) {
	tests := []struct {
		name     string
		option   int
		limit    int64
		wantSize []int
	}{
		{"option", 2, 0, []int{2, 2, 1}},
		{"flow limit", 0, 3, []int{3, 2}},
		{"the smaller: flow", 2, 1, []int{1, 1, 1, 1, 1}},
		{"the smaller: option", 2, 4, []int{2, 2, 1}},
		{"no limit", 0, 0, []int{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i := range 5 {
				writeFile(t, dir, fmt.Sprintf("f%d.json", 4-i), jsonIDs(int64(i), int64(i+1)), baseTime.Add(time.Duration(i)*time.Second))
			}
			src := newFiles(t, dir, FileOptions{Format: "json", MaxFilesPerTrigger: tt.option})
			steps := drain(t, src, nil, domain.ReadLimit{MaxFiles: tt.limit})
			var sizes []int
			for _, s := range steps {
				sizes = append(sizes, len(offsetOf(t, s.end).Files))
			}
			if !cmp.Equal(sizes, tt.wantSize) {
				t.Errorf("files per micro-batch %v, want %v", sizes, tt.wantSize)
			}
			if got := ids(t, steps); !cmp.Equal(got, seq(0, 5)) {
				t.Errorf("ids %v, want them once each, oldest file first", got)
			}
		})
	}
}

// splitFormats write the same rows (ids 0..n-1 over several files) in each
// format, the CSV with quoted fields over several lines.
var splitFormats = []struct {
	format string
	header bool
	write  func(t testing.TB, dir string, files [][2]int64)
}{
	{"json", false, func(t testing.TB, dir string, files [][2]int64) {
		for i, f := range files {
			writeFile(t, dir, fmt.Sprintf("%02d.json", i), jsonIDs(f[0], f[1]), baseTime.Add(time.Duration(i)*time.Second))
		}
	}},
	{"csv", true, func(t testing.TB, dir string, files [][2]int64) {
		for i, f := range files {
			var sb strings.Builder
			sb.WriteString("id,s\n")
			for id := f[0]; id < f[1]; id++ {
				if id%2 == 0 {
					fmt.Fprintf(&sb, "%d,\"row %d,\n\"\"quoted\"\"\nover three lines\"\n", id, id)
				} else {
					fmt.Fprintf(&sb, "%d,row %d\r\n", id, id)
				}
			}
			writeFile(t, dir, fmt.Sprintf("%02d.csv", i), sb.String(), baseTime.Add(time.Duration(i)*time.Second))
		}
	}},
	{"parquet", false, func(t testing.TB, dir string, files [][2]int64) {
		type row struct {
			ID int64  `parquet:"id"`
			S  string `parquet:"s"`
		}
		for i, f := range files {
			var rows []row
			for id := f[0]; id < f[1]; id++ {
				rows = append(rows, row{id, fmt.Sprintf("row %d", id)})
			}
			// Small row groups, so that seeking crosses them.
			writeParquet(t, dir, fmt.Sprintf("%02d.parquet", i), rows, baseTime.Add(time.Duration(i)*time.Second), parquet.MaxRowsPerRowGroup(3))
		}
	}},
}

// TestMaxRowsPerTrigger splits files across micro-batches: every micro-batch
// has at most the limit of rows (exactly the limit but the last), every row
// is read once, in order.
func TestMaxRowsPerTrigger(t *testing.T) {
	files := [][2]int64{{0, 7}, {7, 10}, {10, 10}, {10, 21}, {21, 22}}
	for _, f := range splitFormats {
		dir := t.TempDir()
		f.write(t, dir, files)
		opts := FileOptions{Format: f.format, Header: f.header, InferSchema: true}
		whole := readOnce(t, newFiles(t, dir, opts))
		if whole.Len() != 22 {
			t.Fatalf("%s: %d rows, want 22", f.format, whole.Len())
		}
		for _, maxRows := range []int64{1, 2, 3, 5, 7, 10, 21, 22, 100} {
			for _, viaLimit := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/limit=%v", f.format, maxRows, viaLimit), func(t *testing.T) {
					o, limit := opts, domain.ReadLimit{}
					if viaLimit {
						limit.MaxRows = maxRows
						o.MaxRowsPerTrigger = 1000
					} else {
						o.MaxRowsPerTrigger = maxRows
					}
					steps := drain(t, newFiles(t, dir, o), nil, limit)
					var parts []*domain.Batch
					for i, s := range steps {
						n := int64(s.batch.Len())
						if n > maxRows || (i < len(steps)-1 && n != maxRows) {
							t.Errorf("micro-batch %d has %d rows, limit %d", i, n, maxRows)
						}
						parts = append(parts, s.batch)
					}
					if got := ids(t, steps); !cmp.Equal(got, seq(0, 22)) {
						t.Fatalf("ids %v, want 0..21 once each in order", got)
					}
					all, err := domain.Concat(parts...)
					if err != nil {
						t.Fatal(err)
					}
					if cmp.Diff(rowsText(whole), rowsText(all)) != "" {
						t.Errorf("rows read in micro-batches differ from one read:\n%s", cmp.Diff(rowsText(whole), rowsText(all)))
					}
					if want := (22 + maxRows - 1) / maxRows; int64(len(steps)) != want {
						t.Errorf("%d micro-batches, want %d", len(steps), want)
					}
				})
			}
		}
	}
}

// rowsText renders the rows of a batch without its schema.
func rowsText(b *domain.Batch) string {
	d := dump(b)
	return d[strings.IndexByte(d, '\n')+1:]
}

// TestMaxRowsAndFilesTogether: both bounds hold.
func TestMaxRowsAndFilesTogether(t *testing.T) {
	dir := t.TempDir()
	splitFormats[0].write(t, dir, [][2]int64{{0, 2}, {2, 3}, {3, 4}, {4, 9}})
	src := newFiles(t, dir, FileOptions{Format: "json", MaxFilesPerTrigger: 2, MaxRowsPerTrigger: 3})
	steps := drain(t, src, nil, domain.ReadLimit{})
	var got [][]int64
	for _, s := range steps {
		got = append(got, ids(t, []step{s}))
	}
	want := [][]int64{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}
	if !cmp.Equal(got, want) {
		t.Errorf("micro-batches %v, want %v", got, want)
	}
}

// TestPartialOffset checks what the offset of a split file says, and that a
// file split in two is not "seen" until its last part is read.
func TestPartialOffset(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.json", jsonIDs(0, 5), baseTime)
	src := newFiles(t, dir, FileOptions{Format: "json", MaxRowsPerTrigger: 2})
	steps := drain(t, src, nil, domain.ReadLimit{})
	if len(steps) != 3 {
		t.Fatalf("%d micro-batches, want 3", len(steps))
	}
	for i, want := range [][2]int{{0, 2}, {2, 4}, {4, 0}} {
		off := offsetOf(t, steps[i].end)
		if len(off.Files) != 1 || off.Files[0].From != want[0] || off.Files[0].To != want[1] {
			t.Errorf("micro-batch %d reads %+v, want rows [%d, %d)", i, off.Files, want[0], want[1])
		}
		_, seen := off.Seen["a.json"]
		if last := i == 2; seen != last || (off.Partial == nil) != last {
			t.Errorf("micro-batch %d: seen %v, partial %+v", i, seen, off.Partial)
		}
	}
}

// TestLookback: a new file older than the newest file read minus the lookback
// is ignored; one inside the window is read; the Seen set keeps only the files
// inside the window.
func TestLookback(t *testing.T) {
	dir := t.TempDir()
	src := newFiles(t, dir, FileOptions{Format: "json", Lookback: time.Hour})
	t0 := baseTime

	writeFile(t, dir, "a.json", jsonIDs(0, 1), t0)
	s1, _ := planRead(t, src, nil, domain.ReadLimit{})
	pos := s1.end

	// Older than t0 - 1h: taken as read long ago.
	writeFile(t, dir, "old.json", jsonIDs(100, 101), t0.Add(-2*time.Hour))
	if s, ok := planRead(t, src, pos, domain.ReadLimit{}); ok {
		t.Fatalf("read a file older than the window:\n%s", dump(s.batch))
	}
	// Inside the window, though older than a.json.
	writeFile(t, dir, "b.json", jsonIDs(1, 2), t0.Add(-30*time.Minute))
	s2, ok := planRead(t, src, pos, domain.ReadLimit{})
	if !ok || !cmp.Equal(ids(t, []step{s2}), []int64{1}) {
		t.Fatalf("b.json not read (ok %v)", ok)
	}
	pos = s2.end
	if got := seenNames(offsetOf(t, pos)); !cmp.Equal(got, []string{"a.json", "b.json"}) {
		t.Errorf("seen %v, want a.json b.json", got)
	}
	if m := offsetOf(t, pos).MaxMTime; m != t0.UnixNano() {
		t.Errorf("max mtime %d, want a.json's %d", m, t0.UnixNano())
	}

	// A newer file moves the window: a.json and b.json leave Seen, and are
	// still not read again (they are behind the window now).
	writeFile(t, dir, "c.json", jsonIDs(2, 3), t0.Add(90*time.Minute))
	s3, _ := planRead(t, src, pos, domain.ReadLimit{})
	pos = s3.end
	if got := seenNames(offsetOf(t, pos)); !cmp.Equal(got, []string{"c.json"}) {
		t.Errorf("seen %v, want only c.json", got)
	}
	if s, ok := planRead(t, src, pos, domain.ReadLimit{}); ok {
		t.Fatalf("read again:\n%s", dump(s.batch))
	}
	// Exactly at the edge of the window is inside it.
	writeFile(t, dir, "edge.json", jsonIDs(3, 4), t0.Add(30*time.Minute))
	writeFile(t, dir, "behind.json", jsonIDs(200, 201), t0.Add(30*time.Minute-time.Nanosecond))
	s4, _ := planRead(t, src, pos, domain.ReadLimit{})
	if got := ids(t, []step{s4}); !cmp.Equal(got, []int64{3}) {
		t.Errorf("ids %v, want [3]", got)
	}
	if got := seenNames(offsetOf(t, s4.end)); !cmp.Equal(got, []string{"c.json", "edge.json"}) {
		t.Errorf("seen %v", got)
	}
}

func seenNames(o fileOffset) []string {
	var out []string
	for name := range o.Seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// TestLookbackWithSplitFiles: a file split across micro-batches keeps its
// place even when newer files enter the window.
func TestLookbackWithSplitFiles(t *testing.T) {
	dir := t.TempDir()
	src := newFiles(t, dir, FileOptions{Format: "json", Lookback: time.Minute, MaxRowsPerTrigger: 2})
	writeFile(t, dir, "a.json", jsonIDs(0, 5), baseTime)
	s1, _ := planRead(t, src, nil, domain.ReadLimit{})
	writeFile(t, dir, "b.json", jsonIDs(5, 6), baseTime.Add(time.Hour))
	rest := drain(t, src, s1.end, domain.ReadLimit{})
	if got := ids(t, append([]step{s1}, rest...)); !cmp.Equal(got, seq(0, 6)) {
		t.Errorf("ids %v, want 0..5", got)
	}
}

func TestDefaultRemembersEveryFile(t *testing.T) {
	dir := t.TempDir()
	src := newFiles(t, dir, FileOptions{Format: "json"})
	writeFile(t, dir, "a.json", jsonIDs(0, 1), baseTime)
	s, _ := planRead(t, src, nil, domain.ReadLimit{})
	// Files landing with old modification times (cp -p, rsync -a) are read.
	writeFile(t, dir, "old.json", jsonIDs(1, 2), baseTime.Add(-23*time.Hour))
	writeFile(t, dir, "older.json", jsonIDs(2, 3), baseTime.Add(-25*24*time.Hour))
	got := ids(t, drain(t, src, s.end, domain.ReadLimit{}))
	slices.Sort(got)
	if !cmp.Equal(got, []int64{1, 2}) {
		t.Errorf("ids %v, want [1 2]", got)
	}
}

// TestGrowingFile: a file that grows after planning is read up to its size
// when planned, in every format that can grow, whole or split.
func TestGrowingFile(t *testing.T) {
	tests := []struct {
		format, name, first, more string
	}{
		{"json", "a.json", jsonIDs(0, 3), jsonIDs(3, 5)},
		{"json", "a.json", strings.TrimSuffix(jsonIDs(0, 3), "\n"), "\n" + jsonIDs(3, 5)},
		{"csv", "a.csv", "id,s\n0,a\n1,b\n2,\"c\nc\"\n", "3,d\n4,e\n"},
		{"text", "a.txt", "0\n1\n2\n", "3\n4\n"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		for _, maxRows := range []int64{0, 2} {
			t.Run(fmt.Sprintf("%s/%d", tt.format, maxRows), func(t *testing.T) {
				dir := t.TempDir()
				path := writeFile(t, dir, tt.name, tt.first, baseTime)
				src := newFiles(t, dir, FileOptions{Format: tt.format, Header: true, MaxRowsPerTrigger: maxRows})
				end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
				if err != nil || !ok {
					t.Fatal(ok, err)
				}
				appendTo(t, path, tt.more)
				b, err := src.Read(ctx, nil, end)
				if err != nil {
					t.Fatal(err)
				}
				steps := append([]step{{end: end, batch: b}}, drain(t, src, end, domain.ReadLimit{})...)
				total := 0
				for _, s := range steps {
					total += s.batch.Len()
				}
				if total != 3 {
					t.Errorf("%d rows read, want the 3 there were when planned", total)
				}
			})
		}
	}
}

// TestOffsetIsJSON: offsets are stored in events; they must be plain JSON
// that a later version can read.
func TestOffsetIsJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.json", jsonIDs(0, 3), baseTime)
	src := newFiles(t, dir, FileOptions{Format: "json", MaxRowsPerTrigger: 2})
	end, _, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(end, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"max_mtime", "files", "partial"} {
		if _, ok := m[key]; !ok {
			t.Errorf("offset %s has no %q", end, key)
		}
	}
}

// TestRandomizedExactlyOnce adds files at random while micro-batches with
// random limits chain offsets, replaying some of them as after a crash, and
// checks that every row is read once, each file's rows in order.
func TestRandomizedExactlyOnce(t *testing.T) {
	for _, f := range splitFormats {
		for seed := uint64(1); seed <= 8; seed++ {
			t.Run(fmt.Sprintf("%s/%d", f.format, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				dir := t.TempDir()
				src := newFiles(t, dir, FileOptions{Format: f.format, Header: f.header, InferSchema: true})
				var pos domain.Offset
				var got []int64
				next, nfiles := int64(0), 0
				fileOf := map[int64]int{}
				for round := range 40 {
					for range rng.IntN(3) {
						rows := int64(rng.IntN(6))
						sub := t.TempDir() // write elsewhere, then move in: files appear whole
						f.write(t, sub, [][2]int64{{next, next + rows}})
						name := fmt.Sprintf("f%03d.%s", nfiles, f.format)
						from := filepath.Join(sub, "00."+f.format)
						if err := os.Rename(from, filepath.Join(dir, name)); err != nil {
							t.Fatal(err)
						}
						mtime := baseTime.Add(time.Duration(round)*time.Minute + time.Duration(rng.IntN(3600)-1800)*time.Second)
						touch(t, filepath.Join(dir, name), mtime)
						for id := next; id < next+rows; id++ {
							fileOf[id] = nfiles
						}
						next += rows
						nfiles++
					}
					limit := domain.ReadLimit{MaxFiles: int64(rng.IntN(3)), MaxRows: int64(rng.IntN(5))}
					s, ok := planRead(t, src, pos, limit)
					if !ok {
						continue
					}
					if limit.MaxRows > 0 && int64(s.batch.Len()) > limit.MaxRows {
						t.Fatalf("%d rows, limit %d", s.batch.Len(), limit.MaxRows)
					}
					if limit.MaxFiles > 0 && int64(len(offsetOf(t, s.end).Files)) > limit.MaxFiles {
						t.Fatalf("%d files, limit %d", len(offsetOf(t, s.end).Files), limit.MaxFiles)
					}
					if rng.IntN(4) == 0 { // a crash: the batch is read again, after a restart
						again, err := newFiles(t, dir, FileOptions{Format: f.format, Header: f.header, InferSchema: true}).Read(context.Background(), pos, s.end)
						if err != nil || dump(again) != dump(s.batch) {
							t.Fatalf("replay differs (%v)", err)
						}
					}
					got = append(got, ids(t, []step{s})...)
					pos = s.end
				}
				got = append(got, ids(t, drain(t, src, pos, domain.ReadLimit{}))...)
				seen := map[int64]bool{}
				last := map[int]int64{}
				for _, id := range got {
					if seen[id] {
						t.Fatalf("row %d read twice", id)
					}
					seen[id] = true
					if prev, ok := last[fileOf[id]]; ok && prev > id {
						t.Fatalf("file %d: row %d after row %d", fileOf[id], id, prev)
					}
					last[fileOf[id]] = id
				}
				if int64(len(got)) != next {
					t.Fatalf("%d rows read of %d", len(got), next)
				}
			})
		}
	}
}
