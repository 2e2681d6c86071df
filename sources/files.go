package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/domain"
)

// FileOptions configure a file source.
type FileOptions struct {
	// Format is "json" (JSON lines), "csv", "parquet", "text" (one string
	// column "value" per line) or "debezium" (Debezium change events, one
	// per line: see ParseDebezium).
	Format string
	// Schema declares the columns; without it they are inferred from each
	// micro-batch (the table then checks that batches agree).
	Schema *domain.Schema
	// Header says the first CSV line names the columns; without it they are
	// named _c0, _c1, ... (Spark's default).
	Header bool
	// Delimiter separates CSV fields (default ',').
	Delimiter rune
	// Quote encloses a CSV field that holds delimiters or quotes (default
	// '"'; NoQuote: fields are never quoted). Inside quotes, a doubled quote
	// is a quote.
	Quote rune
	// Escape, inside a quoted CSV field, makes the quote (or itself) that
	// follows literal (default '\\'; NoEscape: none).
	Escape rune
	// MultiLine lets a quoted CSV field hold line breaks. Without it a record
	// is one line, as Spark reads CSV by default, and a quote left open at
	// the end of a line makes that line a bad record, not the next ones.
	MultiLine bool
	// NullValue is the text of a NULL CSV field (besides an empty unquoted
	// one).
	NullValue string
	// InferSchema reads CSV fields as bigint, double or boolean where they
	// all parse as one; otherwise CSV columns are strings (Spark's default).
	InferSchema bool
	// RescueBadRecords keeps records that do not parse or do not fit the
	// schema: their columns are NULL and _rescued_data holds the record, its
	// file and line. Without it a bad record fails the micro-batch, unless
	// Mode says otherwise.
	RescueBadRecords bool
	// RescuedDataColumn names the rescued data column (default
	// _rescued_data).
	RescuedDataColumn string
	// Mode is what a record that does not parse or fit does, as Spark's
	// option: "PERMISSIVE" keeps it (NULL where it does not fit, its text in
	// the rescued data column when rescuing), "DROPMALFORMED" leaves it out,
	// "FAILFAST" fails the micro-batch. Unset: PERMISSIVE when rescuing,
	// FAILFAST otherwise. Records dropped, or kept with NULLs and not
	// rescued, are counted in Batch.Malformed.
	Mode string
	// FailOnNewColumns makes a field the declared schema lacks fail the
	// micro-batch (schemaEvolutionMode failOnNewColumns); otherwise it is
	// rescued when rescuing, and left out when not.
	FailOnNewColumns bool
	// Encoding is the files' character set: UTF-8 (the default) or
	// ISO-8859-1 (Latin-1, read as UTF-8).
	Encoding string
	// NameFilter, when set, is a glob each file's name must match (Spark's
	// pathGlobFilter).
	NameFilter string
	// TopLevelOnly reads only the files directly in the directory, not
	// those of its subdirectories (recursiveFileLookup false).
	TopLevelOnly bool
	// ModifiedAfter and ModifiedBefore, when set, bound the modification
	// times of the files read (exclusive).
	ModifiedAfter, ModifiedBefore time.Time
	// ParseDate and ParseTimestamp, when set, read the text of a date or a
	// timestamp column of the declared schema (dateFormat,
	// timestampFormat): days or microseconds since the epoch, and false for
	// text they do not read. Unset, ISO 8601 forms are read.
	ParseDate, ParseTimestamp func(string) (int64, bool)
	// MaxFilesPerTrigger bounds the files of one micro-batch (0: no bound
	// beyond the flow's).
	MaxFilesPerTrigger int
	// MaxRowsPerTrigger bounds the rows of one micro-batch; files are split
	// between micro-batches to keep it (0: no bound beyond the flow's).
	MaxRowsPerTrigger int64
	// MaxBytesPerTrigger bounds the bytes of one micro-batch, at a record
	// boundary (a record larger than it is read whole, alone); files are
	// split between micro-batches to keep it (0: no bound beyond the flow's).
	// Parquet files are split by rows, not bytes.
	MaxBytesPerTrigger int64
	// SettleTime is how long the last line of a file, when it has no line
	// break yet, waits for one: the rest of a line being written is read
	// with it, and a file that has not changed for SettleTime has its last
	// line read as it is. 0 means DefaultSettleTime.
	SettleTime time.Duration
	// Pattern, when set, is a glob the file's path relative to the source
	// directory must match (path.Match: * and ? stay within one directory).
	Pattern string
	// Metadata adds the column _metadata, last: a struct of the file's path,
	// name, size and modification time, for each row (Spark's file metadata
	// column).
	Metadata bool
}

// latin1ToUTF8 reads ISO-8859-1 text: each byte is the code point of its
// value.
func latin1ToUTF8(b []byte) string {
	out := make([]byte, 0, len(b)+len(b)/8)
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return string(out)
}

// utf8BOM is the byte order mark some tools write at the start of UTF-8
// files: it is skipped.
const utf8BOM = "\uFEFF"

// NoQuote and NoEscape turn off CSV quoting and escaping (FileOptions.Quote,
// FileOptions.Escape).
const (
	NoQuote  rune = -1
	NoEscape rune = -1
)

// MetadataColumn is the file metadata column a file source adds when asked.
var MetadataColumn = domain.Field{Name: "_metadata", Nullable: false, Type: domain.StructOf(
	domain.Field{Name: "file_path", Type: domain.TypeString},
	domain.Field{Name: "file_name", Type: domain.TypeString},
	domain.Field{Name: "file_size", Type: domain.TypeInt64},
	domain.Field{Name: "file_modification_time", Type: domain.TypeTimestamp},
)}

// DefaultSettleTime is how long an unfinished last line waits for its line
// break by default (see FileOptions.SettleTime).
const DefaultSettleTime = 2 * time.Second

// Files reads the files under dir (recursively, following symbolic links to
// files and directories), each byte once across micro-batches, updates and
// restarts. Files and directories whose names start with "." or "_" are
// ignored, as Spark does.
//
// Files may be written in place: a file is tracked by how far it was read,
// and what is appended to it later is read as new input, up to the last
// whole line (record); the rest of a line being written waits for its line
// break, or until the file has not changed for SettleTime. Files must only
// grow: a file rewritten with other content is not read again. Parquet files
// are read once they are complete (their footer written).
//
// A micro-batch's range is the exact list of file slices (byte ranges; row
// ranges for Parquet) it reads, recorded in its offset: after a crash the
// same batch reads the same rows, as long as the files are still there. How
// far each file was read is kept by the store (the source is a
// domain.ItemSource), so a micro-batch's offset names only its own files.
//
// Invalid options are reported by Validate (which pipeline validation calls)
// and by every Plan and Read.
func Files(dir string, opts FileOptions) domain.Source {
	o := opts
	s := &fileSource{opts: o, spare: make(chan []byte, 1)}
	o.Format = strings.ToLower(o.Format)
	switch o.Format {
	case "json", "jsonl", "ndjson":
		o.Format = "json"
	case "csv", "parquet", "text", "debezium":
	default:
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "file format %q is not supported", opts.Format).
			WithHint("use json, csv, parquet, text or debezium")
	}
	if o.Delimiter == 0 {
		o.Delimiter = ','
	}
	if d := o.dialect(); o.Format == "csv" && s.invalid == nil &&
		(!validCSVDelimiter(d.delim) || d.delim == d.quote || d.delim == d.escape || !csvMark(d.quote) || !csvMark(d.escape)) {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "CSV delimiter %q, quote %q and escape %q cannot separate fields", d.delim, d.quote, d.escape).
			WithHint("use a delimiter that is not a line break, and a quote and an escape that are ASCII characters other than the delimiter and a line break")
	}
	if o.MaxBytesPerTrigger < 0 || o.MaxRowsPerTrigger < 0 || o.MaxFilesPerTrigger < 0 || o.SettleTime < 0 {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "a file source bound is negative").
			WithHint("use 0 for no bound of the source's own, or a positive number")
	}
	if o.SettleTime == 0 {
		o.SettleTime = DefaultSettleTime
	}
	if _, err := pathpkg.Match(o.Pattern, ""); err != nil && s.invalid == nil {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "the file pattern %q is not a valid glob", o.Pattern)
	}
	switch strings.ToUpper(o.Mode) {
	case "", "PERMISSIVE", "DROPMALFORMED", "FAILFAST":
	default:
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "mode %q is not one of PERMISSIVE, DROPMALFORMED and FAILFAST", o.Mode)
	}
	switch strings.ToUpper(strings.ReplaceAll(o.Encoding, "_", "-")) {
	case "", "UTF-8", "UTF8", "US-ASCII", "ASCII":
		o.Encoding = ""
	case "ISO-8859-1", "LATIN1", "LATIN-1":
		o.Encoding = "latin1"
	default:
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "encoding %q is not supported", o.Encoding).
			WithHint("use UTF-8 or ISO-8859-1 (convert other encodings to UTF-8 first, e.g. with iconv)")
	}
	if o.RescuedDataColumn == "" {
		o.RescuedDataColumn = RescuedDataColumn
	}
	if _, err := pathpkg.Match(o.NameFilter, ""); err != nil && s.invalid == nil {
		s.invalid = domain.Errorf(domain.CodeSourceOptionInvalid, "the file name filter %q is not a valid glob", o.NameFilter)
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
	invalid error       // an invalid option, reported by Validate, Plan and Read
	spare   chan []byte // the read buffer kept for the next micro-batch (see takeBuffer)
}

func (s *fileSource) String() string { return s.opts.Format + " files in " + s.dir }

// fileSlice is the part of a file a micro-batch reads: the bytes [Start,
// End) of a line-based file (JSON lines, CSV, text), at record boundaries, or
// the rows [Start, End) of a Parquet file. Line is the number of lines before
// Start, for the line numbers of messages.
type fileSlice struct {
	Path  string `json:"path"` // relative to the source directory
	Size  int64  `json:"size"` // the file's size when planned
	MTime int64  `json:"mtime"`
	Start int64  `json:"start,omitempty"`
	End   int64  `json:"end"`
	Line  int64  `json:"line,omitempty"`  // lines before Start
	Lines int64  `json:"lines,omitempty"` // line breaks in [Start, End)
	ID    string `json:"id,omitempty"`    // the file's identity (fileIdentity)
}

// fileOffset is the position after a micro-batch: the slices it read.
type fileOffset struct {
	Files []fileSlice `json:"files"`
	// Migrated lists, once, the files an offset of an earlier sluice
	// remembered as read (its "seen"), so that the store records them.
	Migrated []domain.ItemRead `json:"migrated,omitempty"`

	// An offset of an earlier sluice: every file read so far, and a file
	// split by rows. Read only to carry it over.
	LegacySeen    map[string]int64 `json:"seen,omitempty"`
	LegacyPartial json.RawMessage  `json:"partial,omitempty"`
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

// Items implements domain.ItemSource: each slice's file, read up to its end.
func (s *fileSource) Items(end domain.Offset) ([]domain.ItemRead, error) {
	off, err := parseFileOffset(end)
	if err != nil {
		return nil, err
	}
	items := append([]domain.ItemRead{}, off.Migrated...)
	for _, f := range off.Files {
		items = append(items, domain.ItemRead{Item: f.Path, Upto: f.End, Lines: f.Line + f.Lines, ID: f.ID})
	}
	return items, nil
}

// Reading implements domain.ItemSource.
func (s *fileSource) Reading(state domain.ReadState) domain.Source {
	return &boundFiles{fileSource: s, state: state}
}

// boundFiles is a file source planning against what the store says was read.
type boundFiles struct {
	*fileSource
	state domain.ReadState
}

func (b *boundFiles) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	return b.plan(ctx, start, limit, b.state)
}

// Plan plans without the store's record: it knows only what start read (a
// source used outside a flow; a flow's runner plans through Reading).
func (s *fileSource) Plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit) (domain.Offset, bool, error) {
	return s.plan(ctx, start, limit, nil)
}

// plan picks the next slices: of the files not read to their end, oldest
// first, as much as the bounds allow.
func (s *fileSource) plan(ctx context.Context, start domain.Offset, limit domain.ReadLimit, state domain.ReadState) (domain.Offset, bool, error) {
	if s.invalid != nil {
		return nil, false, s.invalid
	}
	prev, err := parseFileOffset(start)
	if err != nil {
		return nil, false, err
	}
	if len(prev.LegacyPartial) > 0 && string(prev.LegacyPartial) != "null" {
		return nil, false, domain.Errorf(domain.CodeInvalidUpdateState, "the flow's checkpoint, written by an earlier sluice, ends inside a file split by rows").
			WithHint("reset the flow's checkpoint (sluice run --reset-checkpoint FLOW), or run its target's full refresh")
	}
	b := s.bounds(limit)
	listed, err := s.list()
	if err != nil {
		return nil, false, err
	}
	known := map[string]domain.ItemRead{}
	for _, f := range prev.Files {
		known[f.Path] = domain.ItemRead{Item: f.Path, Upto: f.End, Lines: f.Line + f.Lines, ID: f.ID}
	}
	for _, it := range prev.Migrated {
		known[it.Item] = it // not yet in the store when planning ahead of its commit
	}
	var next fileOffset
	for path := range prev.LegacySeen {
		_, found, err := readState(state, path)
		if err != nil {
			return nil, false, err
		}
		if found {
			continue
		}
		// Read in full by an earlier sluice: as far as the file goes now.
		if info, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(path))); err == nil {
			st := domain.ItemRead{Item: path, Upto: info.Size()}
			known[path] = st
			next.Migrated = append(next.Migrated, st)
		}
	}
	sort.Slice(next.Migrated, func(i, j int) bool { return next.Migrated[i].Item < next.Migrated[j].Item })
	now := time.Now()
	for _, f := range listed {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if b.done() {
			break
		}
		st, found := known[f.path]
		if !found {
			if st, _, err = readState(state, f.path); err != nil {
				return nil, false, err
			}
		}
		if st.ID != "" && f.id != "" && st.ID != f.id {
			// Another file is at the path now (a log rotated by rename and
			// create, a link pointed elsewhere): it is read from its start.
			st = domain.ItemRead{Item: f.path}
		}
		slice, ok, err := s.next(f, st.Upto, st.Lines, b, now)
		if err != nil {
			return nil, false, err
		}
		if ok {
			next.Files = append(next.Files, slice)
		}
	}
	if len(next.Files) == 0 && len(next.Migrated) == 0 {
		return nil, false, nil
	}
	end, err := json.Marshal(next)
	if err != nil {
		return nil, false, err
	}
	return end, true, nil
}

func readState(state domain.ReadState, path string) (domain.ItemRead, bool, error) {
	if state == nil {
		return domain.ItemRead{}, false, nil
	}
	return state.ItemRead(path)
}

// budget is what is left of a micro-batch's bounds (0: no bound).
type budget struct {
	files, rows, bytes int64
	taken              int64 // files taken
	rowsLeft           int64
	bytesLeft          int64
}

func (s *fileSource) bounds(limit domain.ReadLimit) *budget {
	pick := func(own, flow int64) int64 {
		if flow > 0 && (own == 0 || flow < own) {
			return flow
		}
		return own
	}
	b := &budget{
		files: pick(int64(s.opts.MaxFilesPerTrigger), limit.MaxFiles),
		rows:  pick(s.opts.MaxRowsPerTrigger, limit.MaxRows),
		bytes: pick(s.opts.MaxBytesPerTrigger, limit.MaxBytes),
	}
	b.rowsLeft, b.bytesLeft = b.rows, b.bytes
	return b
}

func (b *budget) done() bool {
	return (b.files > 0 && b.taken >= b.files) || (b.rows > 0 && b.rowsLeft <= 0) || (b.bytes > 0 && b.bytesLeft <= 0)
}

// take counts a slice of rows and bytes against the budget.
func (b *budget) take(rows, bytes int64) {
	b.taken++
	b.rowsLeft -= rows
	b.bytesLeft -= bytes
}

// next plans the slice of f after what was read of it (upto: bytes, or rows
// for Parquet; lines: the lines before upto). ok is false when there is
// nothing to read of f now.
func (s *fileSource) next(f fileInfo, upto, lines int64, b *budget, now time.Time) (fileSlice, bool, error) {
	slice := fileSlice{Path: f.path, Size: f.size, MTime: f.mtime.UnixNano(), Start: upto, Line: lines, ID: f.id}
	if s.opts.Format == "parquet" {
		if upto > 0 && upto >= f.size {
			return slice, false, nil
		}
		rows, complete, err := s.parquetRows(f)
		switch {
		case err != nil:
			return slice, false, err
		case !complete && now.Sub(f.mtime) < s.opts.SettleTime:
			return slice, false, nil // still being written
		case !complete:
			full := filepath.Join(s.dir, filepath.FromSlash(f.path))
			return slice, false, domain.Errorf(domain.CodeFileUnreadable, "file %s is not a readable Parquet file: it has no footer, and has not changed for %s", full, s.opts.SettleTime).
				WithHint("check that the file was written completely (a Parquet file ends with its footer)").WithNames(full)
		}
		if upto >= rows {
			return slice, false, nil
		}
		take := rows - upto
		if b.rows > 0 {
			take = min(take, b.rowsLeft)
		}
		slice.End = upto + take
		b.take(take, 0)
		return slice, true, nil
	}
	if f.size <= upto {
		return slice, false, nil // read to its end; a file that shrank is not read again
	}
	settled := now.Sub(f.mtime) >= s.opts.SettleTime
	if s.opts.Format == "json" && s.opts.MultiLine {
		// A multi-line JSON document has no record boundary to cut at: it
		// is read whole (what was added to it since, when it grows), once
		// it has settled.
		if !settled {
			return slice, false, nil
		}
		slice.End = f.size
		b.take(1, f.size-upto)
		return slice, true, nil
	}
	end, rows, nl, err := s.cut(f, upto, b, settled)
	if err != nil || end == upto {
		return slice, false, err
	}
	slice.End, slice.Lines = end, nl
	b.take(rows, end-upto)
	return slice, true, nil
}

// fileInfo is a file found under the source directory.
type fileInfo struct {
	path  string // relative, with forward slashes
	size  int64
	mtime time.Time
	id    string // fileIdentity
}

// fileIdentity names the file behind info (a link's target): its device
// and inode, or "" where the system has none.
func fileIdentity(info fs.FileInfo) string {
	id, ok := fileID(info)
	if !ok {
		return ""
	}
	return strconv.FormatUint(id[0], 16) + ":" + strconv.FormatUint(id[1], 16)
}

// list returns the files under the directory that a micro-batch may read,
// oldest first. Symbolic links are followed, to files and to directories (a
// directory reached twice, through a loop of links, is read once).
func (s *fileSource) list() ([]fileInfo, error) {
	var out []fileInfo
	visited := map[[2]uint64]bool{}
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				continue
			}
			full, relPath := filepath.Join(dir, name), pathpkg.Join(rel, name)
			info, err := os.Stat(full) // follows links
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed while listing, or a link to nothing
				}
				return err
			}
			if info.IsDir() {
				if s.opts.TopLevelOnly {
					continue
				}
				if id, ok := fileID(info); ok {
					if visited[id] {
						continue
					}
					visited[id] = true
				}
				if err := walk(full, relPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				continue
			}
			if !info.Mode().IsRegular() {
				continue
			}
			// A file reached twice (a link to a file of the tree) is read once.
			if id, ok := fileID(info); ok {
				if visited[id] {
					continue
				}
				visited[id] = true
			}
			if s.opts.Pattern != "" {
				if ok, _ := pathpkg.Match(s.opts.Pattern, relPath); !ok {
					continue
				}
			}
			if s.opts.NameFilter != "" {
				if ok, _ := pathpkg.Match(s.opts.NameFilter, name); !ok {
					continue
				}
			}
			if mt := info.ModTime(); (!s.opts.ModifiedAfter.IsZero() && !mt.After(s.opts.ModifiedAfter)) ||
				(!s.opts.ModifiedBefore.IsZero() && !mt.Before(s.opts.ModifiedBefore)) {
				continue
			}
			out = append(out, fileInfo{path: relPath, size: info.Size(), mtime: info.ModTime(), id: fileIdentity(info)})
		}
		return nil
	}
	info, err := os.Stat(s.dir)
	switch {
	case err == nil && info.Mode().IsRegular():
		// The source is one file: its path is "." (the source itself).
		return []fileInfo{{path: ".", size: info.Size(), mtime: info.ModTime(), id: fileIdentity(info)}}, nil
	case err == nil:
		if id, ok := fileID(info); ok {
			visited[id] = true
		}
	}
	if err := walk(s.dir, ""); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, domain.Errorf(domain.CodePathNotFound, "source directory %s does not exist", s.dir).WithNames(s.dir)
		}
		return nil, domain.Wrap(domain.CodeSourceFailed, err, "listing "+s.dir).AsRetriable()
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].mtime.Equal(out[j].mtime) {
			return out[i].mtime.Before(out[j].mtime)
		}
		return out[i].path < out[j].path
	})
	return out, nil
}

// fileID identifies a directory by device and inode, to see loops of links.
func fileID(info fs.FileInfo) ([2]uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, true
}

func (s *fileSource) open(path string) (*os.File, error) {
	full := filepath.Join(s.dir, filepath.FromSlash(path))
	fh, err := os.Open(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, domain.Errorf(domain.CodeFileNotExist, "file %s was planned for a micro-batch and no longer exists", full).WithNames(full)
		}
		return nil, domain.Wrap(domain.CodeFileUnreadable, err, full).AsRetriable()
	}
	return fh, nil
}

// scanChunk is how much of a file planning reads at a time.
const scanChunk = 1 << 20

// scanBuffers are the buffers planning reads into, a chunk each: planning
// reads every byte of a micro-batch, and a fresh MiB to clear for each one
// costs more than the scan.
var scanBuffers = sync.Pool{New: func() any { b := make([]byte, scanChunk); return &b }}

// cut finds where the micro-batch's slice of f from off ends: after as many
// whole records as the budget allows (at least one), and, when the file has
// settled, after its last line even without a line break. It returns the
// end, the rows (records) and the line breaks before it.
func (s *fileSource) cut(f fileInfo, off int64, b *budget, settled bool) (end, rows, lines int64, err error) {
	fh, err := s.open(f.path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer fh.Close()
	sc := s.csvScanner(s.opts.Format == "csv" && s.opts.Header && off == 0) // the first record names the columns
	end = off
	bp := scanBuffers.Get().(*[]byte)
	defer scanBuffers.Put(bp)
	buf := *bp
	for pos := off; pos < f.size; {
		n := min(int64(len(buf)), f.size-pos)
		m, err := fh.ReadAt(buf[:n], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, 0, domain.Wrap(domain.CodeFileUnreadable, err, f.path).AsRetriable()
		}
		if int64(m) < n { // the rest of the buffer is another chunk's: never scanned
			full := filepath.Join(s.dir, filepath.FromSlash(f.path))
			return 0, 0, 0, domain.Errorf(domain.CodeFileUnreadable, "file %s has %d bytes, fewer than the %d it had when listed", full, pos+int64(m), f.size).
				WithHint("files must only grow once written; restore it or reset the flow's checkpoint").WithNames(full).AsRetriable() // listed again, it is planned by its size then
		}
		for p := buf[:n]; len(p) > 0; {
			i, isRow, ok := sc.next(p)
			if !ok {
				break
			}
			recEnd := pos + n - int64(len(p)) + int64(i) + 1
			p = p[i+1:]
			if b.bytes > 0 && recEnd-off > b.bytesLeft && end > off {
				return end, rows, lines, nil // the budget ends before this record
			}
			end, lines = recEnd, lines+sc.lines
			sc.lines = 0
			if isRow {
				rows++
				if b.rows > 0 && rows >= b.rowsLeft {
					return end, rows, lines, nil
				}
			}
		}
		pos += n
		if b.bytes > 0 && pos-off > b.bytesLeft && end > off {
			return end, rows, lines, nil
		}
	}
	// The file ends inside a record: a line still being written, read once
	// the file has settled.
	if end < f.size && settled && (b.bytes == 0 || f.size-off <= b.bytesLeft || end == off) {
		if sc.nonBlank || !sc.blank {
			rows++
		}
		end, lines = f.size, lines+sc.lines
	}
	return end, rows, lines, nil
}

// csvScanner is a record scanner for the source's files; header says the
// first record that is not blank names the columns.
func (s *fileSource) csvScanner(header bool) recordScanner {
	sc := recordScanner{header: header, blank: s.opts.Format != "text", csv: s.opts.Format == "csv", fieldStart: true}
	if d := s.opts.dialect(); sc.csv && d.multiLine && d.quote > 0 {
		sc.quote = byte(d.quote)
		if d.escape > 0 {
			sc.escape = byte(d.escape)
		}
		sc.delim = []byte(string(d.delim))
	}
	return sc
}

// recordScanner finds the ends of records: line breaks, but in multi-line
// CSV those inside quoted fields, read by the rules of csvParser: a quote
// opens a field only at its start, "" inside quotes is a quote, and after a
// closing quote anything but the delimiter or the line break spoils the
// rest of the line. Its state carries over from one chunk of a file to the
// next.
type recordScanner struct {
	header, blank bool
	csv           bool // blank lines are empty (or a CR): spaces make a record
	// quote, escape and delim are multi-line CSV's (quote 0: records are lines)
	quote, escape byte
	delim         []byte
	matched       int // bytes of a delimiter of several matched so far

	fieldStart bool  // the next byte starts a field
	inQuote    bool  // inside a quoted field
	quoteSeen  bool  // inside quotes, a quote that may be the first of ""
	escaped    bool  // inside quotes, the previous byte was the escape
	afterQuote bool  // a quoted field closed: the delimiter or a line break must follow
	crSeen     bool  // after a closing quote, a CR: a line break must follow
	spoiled    bool  // the rest of the line is a bad record's
	nonBlank   bool  // the record so far has a non-blank byte
	lines      int64 // line breaks of the record so far
}

// step reads one byte of multi-line CSV other than a line break.
func (sc *recordScanner) step(c byte) {
	// the delimiter, of one byte or of several (a UTF-8 rune, whose first
	// byte is never inside another rune)
	isDelim, partial := len(sc.delim) == 1 && c == sc.delim[0], false
	if len(sc.delim) > 1 {
		switch {
		case c == sc.delim[sc.matched]:
			sc.matched++
		case c == sc.delim[0]:
			sc.matched = 1
		default:
			sc.matched = 0
		}
		isDelim, partial = sc.matched == len(sc.delim), sc.matched > 0 && sc.matched < len(sc.delim)
		if isDelim {
			sc.matched = 0
		}
	}
	if sc.quoteSeen {
		sc.quoteSeen = false
		if c == sc.quote {
			return // "" is a quote
		}
		sc.inQuote, sc.afterQuote = false, true // the field closed
	}
	switch {
	case sc.spoiled:
	case sc.escaped:
		sc.escaped = false
	case sc.inQuote:
		if c == sc.escape && sc.escape != sc.quote {
			sc.escaped = true
		} else if c == sc.quote {
			sc.quoteSeen, sc.matched = true, 0
		}
	case sc.crSeen:
		sc.spoiled = true
	case sc.afterQuote:
		switch {
		case isDelim:
			sc.afterQuote, sc.fieldStart = false, true
		case partial:
		case c == '\r':
			sc.crSeen = true
		default:
			sc.spoiled = true
		}
	case sc.fieldStart && c == sc.quote:
		sc.inQuote, sc.fieldStart = true, false
	default:
		sc.fieldStart = isDelim
	}
}

// lineBreak reads a line break of multi-line CSV; it reports whether the
// record goes on past it (inside a quoted field).
func (sc *recordScanner) lineBreak() (goesOn bool) {
	if sc.quoteSeen { // the quote before the line break closed the field
		sc.quoteSeen, sc.inQuote = false, false
	}
	if sc.inQuote {
		sc.escaped = false
		return true
	}
	sc.fieldStart, sc.afterQuote, sc.crSeen, sc.spoiled, sc.matched = true, false, false, false, 0
	return false
}

// next finds the end of the record that p continues: the index of its line
// break, and whether it is a row (not blank, not the header). ok is false
// when p ends inside the record.
func (sc *recordScanner) next(p []byte) (i int, isRow, ok bool) {
	start := 0
	for {
		j := bytes.IndexByte(p[start:], '\n')
		end := len(p)
		if j >= 0 {
			end = start + j
		}
		if sc.quote != 0 {
			for _, c := range p[start:end] {
				sc.step(c)
			}
		}
		sc.nonBlank = sc.nonBlank || !sc.blankText(p[start:end])
		if j < 0 {
			return 0, false, false
		}
		sc.lines++
		if sc.quote != 0 && sc.lineBreak() {
			start = end + 1
			continue
		}
		isRow = sc.nonBlank || !sc.blank
		if sc.header && isRow { // the header is the first record that is not blank
			sc.header, isRow = false, false
		}
		sc.nonBlank = false
		return end, isRow, true
	}
}

// blankText reports whether p, part of a line, is blank: for CSV empty but
// for a CR (as csvParser skips lines), for JSON whitespace.
func (sc *recordScanner) blankText(p []byte) bool {
	if sc.csv {
		return len(bytes.Trim(p, "\r")) == 0
	}
	return blankBytes(p)
}

// blankBytes reports whether p holds spaces, tabs and carriage returns only.
// A record's first byte almost always decides it.
func blankBytes(p []byte) bool {
	for _, c := range p {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// parquetRows reads the row count of a Parquet file from its footer;
// complete is false while the file has no footer yet (still being written).
func (s *fileSource) parquetRows(f fileInfo) (rows int64, complete bool, err error) {
	full := filepath.Join(s.dir, filepath.FromSlash(f.path))
	defer recoverParquet(full, &err)
	fh, err := s.open(f.path)
	if err != nil {
		return 0, false, err
	}
	defer fh.Close()
	var magic [4]byte
	if f.size < 8 {
		return 0, false, nil
	}
	if _, err := fh.ReadAt(magic[:], f.size-4); err != nil || string(magic[:]) != "PAR1" {
		return 0, false, nil
	}
	pf, err := parquet.OpenFile(fh, f.size)
	if err != nil {
		return 0, true, domain.Errorf(domain.CodeFileUnreadable, "file %s is not a readable Parquet file: %v", full, err).
			WithHint("check that the file was written completely and is not damaged").WithNames(full)
	}
	return pf.NumRows(), true, nil
}

// Read decodes exactly the slices of the micro-batch ending at end.
//
// The slices are read, cut into pieces of whole lines, and the pieces decoded
// on every processor, each run of pieces into a batch of its own; the batches
// are then joined in order. Should they disagree on a column's type, which
// one decoding settles (a column of numbers in one run and of text in the
// next), or a run fail, the micro-batch is decoded again in one run, so that
// the result (or the error) is always the one of a single decoding.
//
// The slices are read into the source's read buffer, which the next
// micro-batch reads into again (see takeBuffer): the batch owns all it
// holds (see ownStrings).
func (s *fileSource) Read(ctx context.Context, _, end domain.Offset) (*domain.Batch, error) {
	if s.invalid != nil {
		return nil, s.invalid
	}
	off, err := parseFileOffset(end)
	if err != nil {
		return nil, err
	}
	buf := s.takeBuffer(s.bytesOf(off.Files))
	defer s.keepBuffer(buf)
	return s.readSlices(ctx, off.Files, buf)
}

// readSlices reads slices into buf, as far as it holds them, and decodes
// them.
func (s *fileSource) readSlices(ctx context.Context, files []fileSlice, buf []byte) (*domain.Batch, error) {
	var pieces []piece
	for _, f := range files {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ps, err := s.readPieces(f, &buf)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, ps...)
	}
	out, err := s.decodeRuns(pieces)
	if err != nil {
		// An error may quote the bytes it failed on: it is made again from
		// a copy, as the read buffer is read into again.
		return s.decode(copyPieces(pieces), linesOf(pieces))
	}
	return out, nil
}

// bytesOf is how many bytes the slices of a line-based file hold, as
// planned (readPieces checks them against the files).
func (s *fileSource) bytesOf(files []fileSlice) int64 {
	if s.opts.Format == "parquet" {
		return 0
	}
	var n int64
	for _, f := range files {
		if f.Start <= f.End && f.End <= f.Size {
			n += f.End - f.Start
		}
	}
	return n
}

// copyPieces is pieces with their bytes copied out of the read buffer.
func copyPieces(pieces []piece) []piece {
	out := make([]piece, len(pieces))
	for i, p := range pieces {
		p.data = strings.Clone(p.data)
		out[i] = p
	}
	return out
}

// maxReadBuffer is the largest read buffer a source keeps for its next
// micro-batch; a micro-batch of more bytes reads into fresh memory.
const maxReadBuffer = 64 << 20

// takeBuffer is a buffer of size bytes to read a micro-batch's slices
// into: the one the last micro-batch read into when it is large enough.
// Reading into memory already in use costs less than reading into fresh
// memory, whose pages the process faults in one by one, and than reading
// the file mapped, its pages missed in the translation cache one by one:
// on a virtual machine, where faults and misses are dear, either cost more
// than the decoding.
func (s *fileSource) takeBuffer(size int64) []byte {
	if size <= 0 || size > maxReadBuffer {
		return nil
	}
	select {
	case buf := <-s.spare:
		if int64(cap(buf)) >= size {
			return buf[:size]
		}
	default:
	}
	return make([]byte, size)
}

// keepBuffer keeps a read buffer for the next micro-batch, once nothing
// of the one read into it shares it.
func (s *fileSource) keepBuffer(buf []byte) {
	if buf == nil {
		return
	}
	select {
	case s.spare <- buf[:0]:
	default:
	}
}

// decodeRuns decodes the pieces on every processor (see Read).
func (s *fileSource) decodeRuns(pieces []piece) (*domain.Batch, error) {
	runs := splitRuns(pieces, runtime.GOMAXPROCS(0))
	if len(runs) > 1 {
		parts := make([]*domain.Batch, len(runs))
		errs := make([]error, len(runs))
		var wg sync.WaitGroup
		total := linesOf(pieces)
		for i, run := range runs {
			// The first part makes room for every part's rows, which it
			// takes in its own columns when the parts agree on their
			// schema: no third copy of the rows.
			rows := linesOf(run)
			if i == 0 {
				rows = total
			}
			wg.Go(func() { parts[i], errs[i] = s.decode(run, rows) })
		}
		wg.Wait()
		if errors.Join(errs...) == nil {
			var rescued, malformed int64
			for _, p := range parts {
				rescued, malformed = rescued+p.Rescued, malformed+p.Malformed
			}
			out := parts[0]
			if !out.Extend(parts[1:]...) {
				var err error
				if out, err = domain.Concat(parts...); err != nil {
					return s.decode(pieces, linesOf(pieces)) // decoded in one builder, the types widen as they must
				}
			}
			out.Rescued, out.Malformed = rescued, malformed
			return out, nil
		}
	}
	return s.decode(pieces, linesOf(pieces))
}

// linesOf is how many lines pieces hold: what a line-based decoder makes
// room for.
func linesOf(pieces []piece) int {
	lines := 0
	for _, p := range pieces {
		lines += p.breaks + 1
	}
	return lines
}

// piece is a run of whole lines (records) of a slice, read, to decode.
type piece struct {
	f        fileSlice
	data     string
	lineBase int // lines of the file before data
	breaks   int // the line breaks data holds, counted when the piece is cut
}

// pieceSize is the size above which a slice of JSON lines or text is cut
// into pieces decoded in parallel.
const pieceSize = 1 << 20

// readPieces reads the bytes of a slice (of a line-based file) and cuts them
// into pieces at line breaks; a CSV slice stays whole (a line break may be
// inside a quoted field), and a Parquet slice is read when decoded. The
// bytes are read into the front of *buf, which is cut past them, when it
// holds them, else into fresh memory.
func (s *fileSource) readPieces(f fileSlice, buf *[]byte) ([]piece, error) {
	if s.opts.Format == "parquet" {
		return []piece{{f: f}}, nil
	}
	full := filepath.Join(s.dir, filepath.FromSlash(f.Path))
	fh, err := s.open(f.Path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if f.End > f.Size || f.Start > f.End {
		return nil, domain.Errorf(domain.CodeInvalidUpdateState, "a micro-batch of %s reads bytes %d to %d of a file of %d", full, f.Start, f.End, f.Size)
	}
	if info, err := fh.Stat(); err == nil {
		if info.Size() < f.Size {
			return nil, domain.Errorf(domain.CodeFileUnreadable, "file %s has %d bytes, fewer than the %d it had when the micro-batch was planned", full, info.Size(), f.Size).
				WithHint("files must only grow once written; restore it or reset the flow's checkpoint").WithNames(full)
		}
		if id := fileIdentity(info); f.ID != "" && id != "" && id != f.ID {
			return nil, domain.Errorf(domain.CodeFileUnreadable, "file %s is another file than the one the micro-batch was planned on (it was replaced)", full).
				WithHint("put the file that was there back, or reset the flow's checkpoint (sluice run --reset-checkpoint FLOW) to read what is there now").WithNames(full)
		}
	}
	n := f.End - f.Start
	var into []byte
	if buf != nil && int64(len(*buf)) >= n {
		into, *buf = (*buf)[:n:n], (*buf)[n:]
	} else {
		into = make([]byte, n)
	}
	if _, err := fh.ReadAt(into, f.Start); err != nil {
		return nil, domain.Errorf(domain.CodeFileUnreadable, "file %s has fewer bytes (%v) than the %d it had when the micro-batch was planned", full, err, f.End).
			WithHint("files must only grow once written; restore it or reset the flow's checkpoint").WithNames(full)
	}
	// The bytes are not written again while the micro-batch is decoded:
	// the rows' strings may share them until the builder owns them.
	data := unsafe.String(unsafe.SliceData(into), len(into))
	if s.opts.Encoding == "latin1" {
		data = latin1ToUTF8(into)
	}
	if f.Start == 0 {
		data = strings.TrimPrefix(data, utf8BOM) // a mark of the encoding, not text
	}
	if s.opts.Format == "json" && s.opts.MultiLine {
		return []piece{{f: f, data: data, lineBase: int(f.Line), breaks: strings.Count(data, "\n")}}, nil
	}
	if s.opts.Format == "csv" {
		p := piece{f: f, data: data, lineBase: int(f.Line)}
		if s.opts.Header && f.Start > 0 {
			// The columns are named by the file's first record.
			head, lines, err := s.csvHeaderText(fh)
			if err != nil {
				return nil, err
			}
			p.data, p.lineBase = head+data, p.lineBase-lines
		}
		p.breaks = strings.Count(p.data, "\n")
		return []piece{p}, nil
	}
	var out []piece
	line := int(f.Line)
	for len(data) > 0 {
		n := len(data)
		if n > pieceSize {
			if i := strings.IndexByte(data[pieceSize:], '\n'); i >= 0 {
				n = pieceSize + i + 1
			}
		}
		breaks := strings.Count(data[:n], "\n")
		out = append(out, piece{f: f, data: data[:n], lineBase: line, breaks: breaks})
		line += breaks
		data = data[n:]
	}
	return out, nil
}

// splitRuns cuts the pieces into at most n runs of about equal bytes, in
// order.
func splitRuns(pieces []piece, n int) [][]piece {
	total := 0
	for _, p := range pieces {
		total += len(p.data)
	}
	if n < 2 || len(pieces) < 2 || total < 2*pieceSize {
		return [][]piece{pieces}
	}
	var runs [][]piece
	target, size, from := total/n, 0, 0
	for i, p := range pieces {
		size += len(p.data)
		if size >= target && len(runs) < n-1 && i+1 < len(pieces) {
			runs = append(runs, pieces[from:i+1])
			from, size = i+1, 0
		}
	}
	return append(runs, pieces[from:])
}

// decode decodes pieces in order into one batch, its columns with room for
// rows rows.
func (s *fileSource) decode(pieces []piece, rows int) (*domain.Batch, error) {
	schema := s.opts.Schema
	if schema == nil && s.opts.Format == "text" {
		schema = &textSchema // even when no file has a line
	}
	b := newBuilderFor(schema, s.opts.badPolicy(), s.opts.RescuedDataColumn)
	b.failOnNewColumns = s.opts.FailOnNewColumns
	b.parseDate, b.parseTimestamp = s.opts.ParseDate, s.opts.ParseTimestamp
	b.reserve(rows)         // once: growing the columns piece by piece copies them over and over
	var meta []domain.Value // with Metadata: one per row
	for _, p := range pieces {
		b.currentFile = filepath.Join(s.dir, filepath.FromSlash(p.f.Path))
		b.lineBase = p.lineBase
		var err error
		switch s.opts.Format {
		case "parquet":
			err = s.decodeParquet(b, p.f)
		case "json":
			if s.opts.MultiLine {
				err = decodeJSONDocument(b, p.data)
			} else {
				err = decodeJSONLines(b, p.data)
			}
		case "debezium":
			err = decodeDebeziumLines(b, p.data)
		case "csv":
			err = s.opts.decodeCSV(b, p.data)
		default:
			err = decodeText(b, p.data)
		}
		if err != nil {
			return nil, err
		}
		if s.opts.Metadata {
			v := domain.Struct(domain.String(b.currentFile), domain.String(filepath.Base(b.currentFile)), domain.Int(p.f.Size), domain.TimestampMicros(p.f.MTime/1000))
			for len(meta) < b.rows {
				meta = append(meta, v)
			}
		}
	}
	out, err := b.batch()
	if err == nil && s.opts.Metadata {
		fields := append(append([]domain.Field{}, out.Schema.Fields...), MetadataColumn)
		cols := append(append([]*domain.Column{}, out.Columns...), &domain.Column{Kind: domain.KindStruct, Values: meta})
		out, err = domain.BatchOf(domain.NewSchema(fields...), cols)
	}
	if err != nil {
		return nil, err
	}
	out.Rescued, out.Malformed = b.rescuedRows, b.notRescued
	return out, nil
}

// badPolicy is what the source's bad records do (Mode).
func (o *FileOptions) badPolicy() badPolicy {
	switch strings.ToUpper(o.Mode) {
	case "FAILFAST":
		return badFail
	case "DROPMALFORMED":
		return badDrop
	case "PERMISSIVE":
		if o.RescueBadRecords {
			return badRescue
		}
		return badNull
	}
	if o.RescueBadRecords {
		return badRescue
	}
	return badFail
}

// csvHeaderText returns the first record of a CSV file, with its line
// break, and the line breaks in it.
func (s *fileSource) csvHeaderText(fh *os.File) (string, int, error) {
	sc := s.csvScanner(false)
	buf := make([]byte, 64<<10)
	for pos := int64(0); ; {
		n, err := fh.ReadAt(buf, pos)
		for p := buf[:n]; len(p) > 0; {
			i, isRow, ok := sc.next(p)
			if !ok {
				break
			}
			end := pos + int64(n-len(p)+i+1)
			p = p[i+1:]
			if isRow { // the header is the first record that is not blank
				head := make([]byte, end)
				if _, err := fh.ReadAt(head, 0); err != nil {
					return "", 0, domain.Wrap(domain.CodeFileUnreadable, err, fh.Name()).AsRetriable()
				}
				text := string(head)
				if s.opts.Encoding == "latin1" {
					text = latin1ToUTF8(head)
				}
				return strings.TrimPrefix(text, utf8BOM), strings.Count(text, "\n"), nil
			}
		}
		if err != nil {
			return "", 0, nil // no header line: the slice being read holds it
		}
		pos += int64(n)
	}
}

var textSchema = domain.NewSchema(domain.Field{Name: "value", Type: domain.TypeString, Nullable: true})

// decodeText adds each line of data as a row of one column "value".
func decodeText(b *builder, data string) error {
	return eachLine(data, func(line int, text string) error {
		b.currentLine = b.lineBase + line
		b.set("value", domain.String(strings.TrimRight(text, "\r")))
		return b.endRow()
	})
}

// eachLine calls fn with the 1-based number and the text (without its
// newline) of each line of data.
func eachLine(data string, fn func(line int, text string) error) error {
	line := 0
	for pos := 0; pos < len(data); line++ {
		end := strings.IndexByte(data[pos:], '\n')
		var text string
		if end < 0 {
			text, pos = data[pos:], len(data)
		} else {
			text, pos = data[pos:pos+end], pos+end+1
		}
		if err := fn(line+1, text); err != nil {
			return err
		}
	}
	return nil
}

// ReadRecord is a domain.ReadState kept in memory: how far the micro-batches
// it was told of read each item. For driving an ItemSource outside a flow
// (a flow's record is kept by the store).
type ReadRecord struct {
	items map[string]domain.ItemRead
}

// ItemRead implements domain.ReadState.
func (r *ReadRecord) ItemRead(item string) (domain.ItemRead, bool, error) {
	it, ok := r.items[item]
	return it, ok, nil
}

// Record takes the items of a micro-batch that was read (committed).
func (r *ReadRecord) Record(items []domain.ItemRead) {
	if r.items == nil {
		r.items = map[string]domain.ItemRead{}
	}
	for _, it := range items {
		r.items[it.Item] = it
	}
}

// SampleSchemas reads the oldest files under dir, at most maxFiles of them
// and about maxRows rows in all, and returns the columns each file holds, in
// order: what a schema is inferred from when a stream starts. The directory
// is listed once.
func SampleSchemas(ctx context.Context, dir string, opts FileOptions, maxFiles int, maxRows int64) ([]domain.Schema, error) {
	s := Files(dir, opts).(*fileSource)
	if s.invalid != nil {
		return nil, s.invalid
	}
	listed, err := s.list()
	if err != nil {
		return nil, err
	}
	var out []domain.Schema
	rows := int64(0)
	now := time.Now().Add(s.opts.SettleTime) // inference reads what is there, written to the end or not
	for _, f := range listed {
		if len(out) >= maxFiles || rows >= maxRows {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b := &budget{rows: maxRows - rows, rowsLeft: maxRows - rows, bytes: 16 << 20, bytesLeft: 16 << 20}
		slice, ok, err := s.next(f, 0, 0, b, now)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		pieces, err := s.readPieces(slice, nil)
		if err != nil {
			return nil, err
		}
		batch, err := s.decode(pieces, linesOf(pieces))
		if err != nil {
			return nil, err
		}
		out = append(out, batch.Schema)
		rows += int64(batch.Len())
	}
	return out, nil
}
