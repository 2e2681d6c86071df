package sources

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// FileOptions configure a file source.
type FileOptions struct {
	// Format is "json" (JSON lines), "csv", "parquet" or "text" (one string
	// column "value" per line).
	Format string
	// Schema declares the columns; without it they are inferred from each
	// micro-batch (the table then checks that batches agree).
	Schema *domain.Schema
	// Header says the first CSV line names the columns; without it they are
	// named _c0, _c1, ... (Spark's default).
	Header bool
	// Delimiter separates CSV fields (default ',').
	Delimiter rune
	// InferSchema reads CSV fields as bigint, double or boolean where they
	// all parse as one; otherwise CSV columns are strings (Spark's default).
	InferSchema bool
	// RescueBadRecords keeps records that do not parse or do not fit the
	// schema: their columns are NULL and _rescued_data holds the record, its
	// file and line. Without it a bad record fails the micro-batch.
	RescueBadRecords bool
	// MaxFilesPerTrigger bounds the files of one micro-batch (0: no bound
	// beyond the flow's).
	MaxFilesPerTrigger int
	// MaxRowsPerTrigger bounds the rows of one micro-batch; files are split
	// between micro-batches to keep it (0: no bound beyond the flow's).
	MaxRowsPerTrigger int64
	// Lookback, when set, bounds how long files are remembered: a file is
	// remembered by name until the newest file read is Lookback newer than
	// it, and an unseen file older than that horizon is taken as read and
	// skipped. Zero (the default) remembers every file, so a file that lands
	// with an old modification time (cp -p, rsync -a, tar) is still read; the
	// price is that every micro-batch's offset lists every file read so far.
	// Set it for directories that collect many thousands of files.
	Lookback time.Duration
	// Pattern, when set, is a glob the file's path relative to the source
	// directory must match (path.Match: * and ? stay within one directory).
	Pattern string
	// Metadata adds the column _metadata, last: a struct of the file's path,
	// name, size and modification time, for each row (Spark's file metadata
	// column).
	Metadata bool
}

// MetadataColumn is the file metadata column a file source adds when asked.
var MetadataColumn = domain.Field{Name: "_metadata", Nullable: false, Type: domain.StructOf(
	domain.Field{Name: "file_path", Type: domain.TypeString},
	domain.Field{Name: "file_name", Type: domain.TypeString},
	domain.Field{Name: "file_size", Type: domain.TypeInt64},
	domain.Field{Name: "file_modification_time", Type: domain.TypeTimestamp},
)}

// Files reads the files under dir (recursively), each exactly once across
// micro-batches, updates and restarts. Files and directories whose names
// start with "." or "_" are ignored, as Spark does: write a file under such
// a name and rename it when complete, so that no micro-batch sees half of it.
//
// A micro-batch's range is the exact list of files (and rows within them) it
// reads, recorded in its offset: after a crash the same batch reads the same
// rows, as long as the files are still there.
//
// Invalid options are reported by Validate (which pipeline validation calls)
// and by every Plan and Read.
func Files(dir string, opts FileOptions) domain.Source {
	o := opts
	s := &fileSource{opts: o}
	o.Format = strings.ToLower(o.Format)
	switch o.Format {
	case "json", "jsonl", "ndjson":
		o.Format = "json"
	case "csv", "parquet", "text":
	default:
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "file format %q is not supported", opts.Format).
			WithHint("use json, csv, parquet or text")
	}
	if o.Delimiter == 0 {
		o.Delimiter = ','
	}
	if !validCSVDelimiter(o.Delimiter) && o.Format == "csv" && s.invalid == nil {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "CSV delimiter %q cannot separate fields", o.Delimiter).
			WithHint("use a character other than a quote, a line break or U+FFFD")
	}
	if o.Lookback < 0 {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "lookback %s is negative", o.Lookback).WithHint("use 0 to remember every file, or a positive duration")
	}
	if _, err := pathpkg.Match(o.Pattern, ""); err != nil && s.invalid == nil {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "the file pattern %q is not a valid glob", o.Pattern)
	}
	if o.RescueBadRecords && o.Format == "parquet" {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "bad-record rescue applies to json and csv files, not parquet")
	}
	abs, err := filepath.Abs(dir)
	if err != nil && s.invalid == nil {
		s.invalid = domain.Wrap(domain.CodePathNotFound, err, dir)
	}
	s.dir, s.opts = abs, o
	return s
}

// Validate reports invalid options.
func (s *fileSource) Validate() error { return s.invalid }

type fileSource struct {
	dir     string
	opts    FileOptions
	invalid error // an invalid option, reported by Validate, Plan and Read
}

func (s *fileSource) String() string { return s.opts.Format + " files in " + s.dir }

// fileSlice is a file, or the rows [From, To) of it, in a micro-batch.
type fileSlice struct {
	Path  string `json:"path"` // relative to the source directory
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"` // unix nanoseconds
	From  int    `json:"from,omitempty"`
	To    int    `json:"to,omitempty"` // 0: to the end
}

// fileOffset is the position after a micro-batch: the files it read, the
// newest modification time read so far, and the files read within the
// lookback window before it (so they are not read again).
type fileOffset struct {
	MaxMTime int64            `json:"max_mtime"`
	Seen     map[string]int64 `json:"seen,omitempty"`
	Partial  *fileSlice       `json:"partial,omitempty"` // a file read up to Partial.To, the rest still to read
	Files    []fileSlice      `json:"files"`
}

func parseFileOffset(o domain.Offset) (fileOffset, error) {
	var f fileOffset
	if len(o) == 0 {
		return f, nil
	}
	if err := json.Unmarshal(o, &f); err != nil {
		return f, domain.Wrap(domain.CodeInvalidUpdateState, err, "reading a file source offset")
	}
	return f, nil
}

// list returns the files under the directory that a micro-batch may read,
// oldest first.
func (s *fileSource) list() ([]fileSlice, error) {
	var out []fileSlice
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == s.dir {
				return err
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while listing
			}
			return err
		}
		name := d.Name()
		if path != s.dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(s.dir, path)
		if s.opts.Pattern != "" {
			if ok, _ := pathpkg.Match(s.opts.Pattern, filepath.ToSlash(rel)); !ok {
				return nil
			}
		}
		out = append(out, fileSlice{Path: filepath.ToSlash(rel), Size: info.Size(), MTime: info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, domain.Errorf(domain.CodePathNotFound, "source directory %s does not exist", s.dir).WithNames(s.dir)
		}
		return nil, domain.Wrap(domain.CodeSourceFailed, err, "listing "+s.dir).AsRetriable()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].MTime != out[j].MTime {
			return out[i].MTime < out[j].MTime
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// Plan picks the next files: those not read before, oldest first, as many as
// the limits allow. With a row limit, a file may be split.
func (s *fileSource) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	if s.invalid != nil {
		return nil, false, s.invalid
	}
	prev, err := parseFileOffset(start)
	if err != nil {
		return nil, false, err
	}
	maxFiles, maxRows := int64(s.opts.MaxFilesPerTrigger), s.opts.MaxRowsPerTrigger
	if limit.MaxFiles > 0 && (maxFiles == 0 || limit.MaxFiles < maxFiles) {
		maxFiles = limit.MaxFiles
	}
	if limit.MaxRows > 0 && (maxRows == 0 || limit.MaxRows < maxRows) {
		maxRows = limit.MaxRows
	}
	var queue []fileSlice
	if prev.Partial != nil {
		rest := *prev.Partial
		rest.From, rest.To = rest.To, 0
		queue = append(queue, rest)
	}
	listed, err := s.list()
	if err != nil {
		return nil, false, err
	}
	horizon := prev.MaxMTime - s.opts.Lookback.Nanoseconds()
	for _, f := range listed {
		if _, seen := prev.Seen[f.Path]; seen || (prev.Partial != nil && f.Path == prev.Partial.Path) {
			continue
		}
		if s.opts.Lookback > 0 && prev.MaxMTime > 0 && f.MTime < horizon {
			continue // older than the lookback window: taken as read
		}
		queue = append(queue, f)
	}
	next := fileOffset{MaxMTime: prev.MaxMTime, Seen: map[string]int64{}}
	var rows int64
	for _, f := range queue {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if maxFiles > 0 && int64(len(next.Files)) >= maxFiles {
			break
		}
		if maxRows > 0 {
			n, err := s.countRows(f)
			if err != nil {
				return nil, false, err
			}
			left := int64(n - f.From)
			if rows+left > maxRows {
				take := maxRows - rows
				if take <= 0 {
					break
				}
				part := f
				part.To = f.From + int(take)
				next.Files = append(next.Files, part)
				next.Partial = &part
				break
			}
			rows += left
		}
		next.Files = append(next.Files, f)
	}
	if len(next.Files) == 0 {
		return nil, false, nil
	}
	// Remember what was read in full, within the lookback window of the newest.
	for _, f := range next.Files {
		next.MaxMTime = max(next.MaxMTime, f.MTime)
	}
	horizon = next.MaxMTime - s.opts.Lookback.Nanoseconds()
	for path, mtime := range prev.Seen {
		if s.opts.Lookback == 0 || mtime >= horizon {
			next.Seen[path] = mtime
		}
	}
	for _, f := range next.Files {
		if next.Partial == nil || f.Path != next.Partial.Path {
			next.Seen[f.Path] = f.MTime
		}
	}
	end, err := json.Marshal(next)
	if err != nil {
		return nil, false, err
	}
	return end, true, nil
}

// countRows counts the rows of a file: lines for JSON and text, records for
// CSV, rows for Parquet.
func (s *fileSource) countRows(f fileSlice) (int, error) {
	if s.opts.Format == "parquet" {
		return s.countParquetRows(f)
	}
	data, err := s.readFile(f)
	if err != nil {
		return 0, err
	}
	if s.opts.Format == "csv" {
		n, err := s.opts.countCSVRecords(data)
		if err != nil {
			return 0, domain.Wrap(domain.CodeFileUnreadable, err, f.Path)
		}
		return n, nil
	}
	n := strings.Count(data, "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n, nil
}

// readFile reads the first Size bytes of a file: what was there when the
// micro-batch was planned, even if the file grew since.
func (s *fileSource) readFile(f fileSlice) (string, error) {
	path := filepath.Join(s.dir, filepath.FromSlash(f.Path))
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", domain.Errorf(domain.CodeFileNotExist, "file %s was planned for a micro-batch and no longer exists", path).WithNames(path)
		}
		return "", domain.Wrap(domain.CodeFileUnreadable, err, path).AsRetriable()
	}
	defer fh.Close()
	buf := make([]byte, f.Size)
	if _, err := io.ReadFull(fh, buf); err != nil {
		return "", domain.Errorf(domain.CodeFileUnreadable, "file %s has fewer bytes (%v) than the %d it had when the micro-batch was planned", path, err, f.Size).
			WithHint("files must not be truncated or rewritten once written; restore it or reset the flow's checkpoint").WithNames(path)
	}
	return string(buf), nil
}

// Read decodes exactly the files (and rows) of the micro-batch ending at end.
func (s *fileSource) Read(ctx context.Context, _, end domain.Offset) (*domain.Batch, error) {
	if s.invalid != nil {
		return nil, s.invalid
	}
	off, err := parseFileOffset(end)
	if err != nil {
		return nil, err
	}
	schema := s.opts.Schema
	if schema == nil && s.opts.Format == "text" {
		schema = &textSchema // even when no file has a line
	}
	b := newBuilder(schema, s.opts.RescueBadRecords)
	var meta []domain.Value // with Metadata: one per row
	for _, f := range off.Files {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := s.readSlice(b, f); err != nil {
			return nil, err
		}
		if s.opts.Metadata {
			full := filepath.Join(s.dir, filepath.FromSlash(f.Path))
			v := domain.Struct(domain.String(full), domain.String(filepath.Base(full)), domain.Int(f.Size), domain.TimestampMicros(f.MTime/1000))
			for len(meta) < b.rows {
				meta = append(meta, v)
			}
		}
	}
	out, err := b.batch()
	if err != nil || !s.opts.Metadata {
		return out, err
	}
	fields := append(append([]domain.Field{}, out.Schema.Fields...), MetadataColumn)
	cols := append(append([]*domain.Column{}, out.Columns...), &domain.Column{Kind: domain.KindStruct, Values: meta})
	return domain.BatchOf(domain.NewSchema(fields...), cols)
}

// readSlice adds the rows of one file slice to b.
func (s *fileSource) readSlice(b *builder, f fileSlice) error {
	b.currentFile = filepath.Join(s.dir, filepath.FromSlash(f.Path))
	to := f.To
	if to == 0 {
		to = -1
	}
	if s.opts.Format == "parquet" {
		return s.decodeParquet(b, f, to)
	}
	data, err := s.readFile(f)
	if err != nil {
		return err
	}
	switch s.opts.Format {
	case "json":
		return decodeJSONLines(b, data, f.From, to)
	case "csv":
		return s.opts.decodeCSV(b, data, f.From, to)
	}
	return decodeText(b, data, f.From, to)
}

var textSchema = domain.NewSchema(domain.Field{Name: "value", Type: domain.TypeString, Nullable: true})

// decodeText adds lines [from, to) as rows of one column "value".
func decodeText(b *builder, data string, from, to int) error {
	b.reserve(linesIn(data, from, to))
	return eachLine(data, from, to, func(line int, text string) error {
		b.currentLine = line
		b.set("value", domain.String(strings.TrimRight(text, "\r")))
		return b.endRow()
	})
}

// eachLine calls fn with the 1-based number and the text (without its
// newline) of each line in [from, to) of data, 0-based (to < 0: to the end).
func eachLine(data string, from, to int, fn func(line int, text string) error) error {
	line := 0
	for pos := 0; pos < len(data) && (to < 0 || line < to); line++ {
		end := strings.IndexByte(data[pos:], '\n')
		var text string
		if end < 0 {
			text, pos = data[pos:], len(data)
		} else {
			text, pos = data[pos:pos+end], pos+end+1
		}
		if line < from {
			continue
		}
		if err := fn(line+1, text); err != nil {
			return err
		}
	}
	return nil
}
