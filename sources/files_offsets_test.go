package sources

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

	// Touching a file already read does not read it again; appending to one
	// reads what was appended, once.
	last := steps2[len(steps2)-1].end
	touch(t, filepath.Join(dir, "b.json"), baseTime.Add(2*time.Hour))
	if s, ok := planRead(t, src, last, domain.ReadLimit{}); ok {
		t.Fatalf("read again a file touched:\n%s", dump(s.batch))
	}
	appendTo(t, filepath.Join(dir, "a.json"), jsonIDs(100, 101))
	appended := drain(t, src, last, domain.ReadLimit{})
	if got := ids(t, appended); !cmp.Equal(got, []int64{100}) {
		t.Fatalf("after an append: ids %v, want [100]", got)
	}
	last = appended[len(appended)-1].end

	// A restart: a new source over the same directory continues from what
	// the store recorded.
	src2 := newFiles(t, dir, FileOptions{Format: "json"})
	records.Store(src2, recordOf(src))
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
	// A symbolic link to a file of the tree is the same file: read once.
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
		opts := FileOptions{Format: f.format, Header: f.header, InferSchema: true, MultiLine: f.format == "csv"}
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

// TestDefaultRemembersEveryFile: files landing with old modification times
// (cp -p, rsync -a) are read.
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
// when planned, in every format that can grow, whole or split; what was
// appended is read by the next micro-batches, so every row is read once.
func TestGrowingFile(t *testing.T) {
	tests := []struct {
		format, name, first, more string
	}{
		{"json", "a.json", jsonIDs(0, 3), jsonIDs(3, 5)},
		{"csv", "a.csv", "id,s\n0,a\n1,b\n2,\"c\nc\"\n", "3,d\n4,e\n"},
		{"text", "a.txt", "0\n1\n2\n", "3\n4\n"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		for _, maxRows := range []int64{0, 2} {
			t.Run(fmt.Sprintf("%s/%d", tt.format, maxRows), func(t *testing.T) {
				dir := t.TempDir()
				path := writeFile(t, dir, tt.name, tt.first, baseTime)
				src := newFiles(t, dir, FileOptions{Format: tt.format, Header: true, MaxRowsPerTrigger: maxRows, MultiLine: tt.format == "csv"})
				first, ok := planRead(t, src, nil, domain.ReadLimit{})
				if !ok {
					t.Fatal("nothing planned")
				}
				appendTo(t, path, tt.more)
				b, err := src.Read(ctx, nil, first.end)
				if err != nil {
					t.Fatal(err)
				}
				if b.Len() != first.batch.Len() {
					t.Errorf("the planned micro-batch read %d rows after the file grew, %d before", b.Len(), first.batch.Len())
				}
				steps := append([]step{first}, drain(t, src, first.end, domain.ReadLimit{})...)
				total := 0
				for _, s := range steps {
					total += s.batch.Len()
				}
				if total != 5 {
					t.Errorf("%d rows read, want the 5 the file has", total)
				}
			})
		}
	}
}

// TestLineWrittenInTwoParts: a line whose end is not written yet waits for
// it (no half record is read, none is lost), unless the file has settled.
func TestLineWrittenInTwoParts(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "a.json", `{"id": 0, "s": "row 0"}`+"\n"+`{"id": 1, "s": "ro`, time.Now())
	src := newFiles(t, dir, FileOptions{Format: "json", SettleTime: time.Hour})
	s1, ok := planRead(t, src, nil, domain.ReadLimit{})
	if !ok || !cmp.Equal(ids(t, []step{s1}), []int64{0}) {
		t.Fatalf("first micro-batch: %v", ids(t, []step{s1}))
	}
	if _, ok := planRead(t, src, s1.end, domain.ReadLimit{}); ok {
		t.Fatal("a half-written line was planned")
	}
	appendTo(t, path, `w 1"}`+"\n"+`{"id": 2, "s": "row 2"}`)
	s2, ok := planRead(t, src, s1.end, domain.ReadLimit{})
	if !ok || !cmp.Equal(ids(t, []step{s2}), []int64{1}) {
		t.Fatalf("second micro-batch: %v", ids(t, []step{s2}))
	}
	// Settled: the last line is read without its line break.
	settled := newFiles(t, dir, FileOptions{Format: "json", SettleTime: time.Nanosecond})
	recordOf(settled).Record([]domain.ItemRead{{Item: "a.json", Upto: offsetOf(t, s2.end).Files[0].End}})
	s3, ok := planRead(t, settled, s2.end, domain.ReadLimit{})
	if !ok || !cmp.Equal(ids(t, []step{s3}), []int64{2}) {
		t.Fatalf("settled: %v", ids(t, []step{s3}))
	}
}

// TestSymlinks: links to files and to directories are followed; a loop of
// links is read once; a link to nothing is skipped.
func TestSymlinks(t *testing.T) {
	root := t.TempDir()
	dir, other := filepath.Join(root, "in"), filepath.Join(root, "elsewhere")
	for _, d := range []string{dir, filepath.Join(other, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, dir, "a.json", jsonIDs(0, 1), baseTime)
	target := writeFile(t, other, "b.json", jsonIDs(1, 2), baseTime.Add(time.Second))
	writeFile(t, filepath.Join(other, "sub"), "c.json", jsonIDs(2, 3), baseTime.Add(2*time.Second))
	for link, to := range map[string]string{
		"b-link.json": target,
		"sub-link":    filepath.Join(other, "sub"),
		"loop":        dir,
		"dangling":    filepath.Join(root, "nothing.json"),
	} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	got := ids(t, drain(t, newFiles(t, dir, FileOptions{Format: "json"}), nil, domain.ReadLimit{}))
	slices.Sort(got)
	if !cmp.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("ids %v, want [0 1 2]", got)
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
	for _, key := range []string{"files"} {
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
				src := newFiles(t, dir, FileOptions{Format: f.format, Header: f.header, InferSchema: true, MultiLine: f.format == "csv"})
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
						again, err := newFiles(t, dir, FileOptions{Format: f.format, Header: f.header, InferSchema: true, MultiLine: f.format == "csv"}).Read(context.Background(), pos, s.end)
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

// TestSingleFileSource: a source may name one file instead of a directory;
// it is read, and what is appended to it later, once.
func TestSingleFileSource(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "one.json", jsonIDs(0, 3), baseTime)
	src := newFiles(t, path, FileOptions{Format: "json", MaxRowsPerTrigger: 2})
	steps := drain(t, src, nil, domain.ReadLimit{})
	appendTo(t, path, jsonIDs(3, 4))
	steps = append(steps, drain(t, src, steps[len(steps)-1].end, domain.ReadLimit{})...)
	if got := ids(t, steps); !cmp.Equal(got, seq(0, 4)) {
		t.Errorf("ids %v, want 0..3", got)
	}
}

// TestOffsetOfAnEarlierVersion: an offset whose "seen" lists every file read
// (as earlier versions wrote them) is carried over: those files are not read
// again, and the next micro-batch hands them to the store once.
func TestOffsetOfAnEarlierVersion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.json", jsonIDs(0, 2), baseTime)
	writeFile(t, dir, "b.json", jsonIDs(2, 3), baseTime.Add(time.Second))
	legacy := domain.Offset(fmt.Sprintf(`{"max_mtime":%d,"seen":{"a.json":%d},"files":[{"path":"a.json","size":40,"mtime":%d}]}`,
		baseTime.UnixNano(), baseTime.UnixNano(), baseTime.UnixNano()))
	src := newFiles(t, dir, FileOptions{Format: "json"})
	steps := drain(t, src, legacy, domain.ReadLimit{})
	if got := ids(t, steps); !cmp.Equal(got, []int64{2}) {
		t.Fatalf("ids %v, want only b.json's [2]", got)
	}
	if m := offsetOf(t, steps[0].end).Migrated; len(m) != 1 || m[0].Item != "a.json" || m[0].Upto != int64(len(jsonIDs(0, 2))) {
		t.Errorf("migrated %+v, want a.json read to its end", m)
	}
}

// TestReplacedFile: another file put at a path that was read (renamed over
// it, or a link pointed at it) is read from its start, not from where the
// old one was left; a micro-batch planned on the old file refuses the new
// one.
func TestReplacedFile(t *testing.T) {
	for _, how := range []string{"rename", "link"} {
		t.Run(how, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "in")
			var path string
			switch how {
			case "rename":
				path = writeFile(t, dir, "a.json", jsonIDs(0, 3), baseTime)
			case "link":
				old := writeFile(t, root, "old.json", jsonIDs(0, 3), baseTime)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				path = filepath.Join(dir, "a.json")
				if err := os.Symlink(old, path); err != nil {
					t.Fatal(err)
				}
			}
			src := newFiles(t, dir, FileOptions{Format: "json"})
			steps := drain(t, src, nil, domain.ReadLimit{})
			if got := ids(t, steps); !cmp.Equal(got, seq(0, 3)) {
				t.Fatalf("first read %v", got)
			}
			last := steps[len(steps)-1].end
			planned, ok, err := src.(domain.ItemSource).Reading(recordOf(src)).Plan(context.Background(), nil, domain.ReadLimit{})
			if err != nil || ok {
				t.Fatalf("planned %s, %v after reading everything", planned, err)
			}
			// The new file is longer than what was read of the old one.
			next := writeFile(t, root, "new.json", jsonIDs(10, 15), baseTime.Add(time.Second))
			switch how {
			case "rename":
				if err := os.Rename(next, path); err != nil {
					t.Fatal(err)
				}
			case "link":
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(next, path); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := src.Read(context.Background(), nil, steps[0].end); domain.CodeOf(err) != domain.CodeFileUnreadable {
				t.Errorf("rereading a micro-batch planned on the old file: %v, want FILE_UNREADABLE", err)
			}
			if got := ids(t, drain(t, src, last, domain.ReadLimit{})); !cmp.Equal(got, seq(10, 15)) {
				t.Fatalf("after the file was replaced: %v, want %v", got, seq(10, 15))
			}
		})
	}
}
