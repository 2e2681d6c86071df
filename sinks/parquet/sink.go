package parquet

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/fsync"
	"github.com/sluicehq/sluice/internal/options"
)

// Codec is the compression of a Parquet file's pages.
type Codec string

// The codecs a file may take; Zstd is the sink's default.
const (
	Zstd         Codec = "zstd"
	Snappy       Codec = "snappy"
	Gzip         Codec = "gzip"
	Uncompressed Codec = "none"
)

func (c Codec) codec() pq.WriterOption {
	switch c {
	case Snappy:
		return pq.Compression(&pq.Snappy)
	case Gzip:
		return pq.Compression(&pq.Gzip)
	case Uncompressed:
		return pq.Compression(&pq.Uncompressed)
	}
	return pq.Compression(&pq.Zstd)
}

// Sink writes each micro-batch a flow delivers to a Parquet file of its
// own under Dir, named by the flow, its generation (a full refresh starts
// the next) and the batch id: part-<flow>-g<generation>-b<batch>.parquet.
// A file is written under a temporary name, synced, then renamed: a reader
// of Dir never sees a part of one. A batch delivered again after a crash
// (same id, same rows) finds its file there and is skipped, so each batch
// is in Dir once: exactly once at the edge. A batch without rows writes no
// file.
type Sink struct {
	Dir   string
	Codec Codec
}

// sinkOptions are the options a Parquet sink takes, with what they are.
var sinkOptions = map[string]string{
	"path":        "the directory the files go to (relative paths are under the pipeline's directory)",
	"compression": "zstd (the default), snappy, gzip or none",
}

// NewSink makes a Parquet sink from its options: path (required; relative
// to base) and compression.
func NewSink(base string, given map[string]string) (*Sink, error) {
	s := &Sink{Codec: Zstd}
	for k, v := range given {
		switch strings.ToLower(k) {
		case "path":
			s.Dir = v
		case "compression":
			switch c := Codec(strings.ToLower(v)); c {
			case Zstd, Snappy, Gzip, Uncompressed:
				s.Codec = c
			case "uncompressed":
				s.Codec = Uncompressed
			default:
				return nil, domain.Errorf(domain.CodeSinkOption, "the compression %q of a Parquet sink is not one it writes: %s", v, sinkOptions["compression"])
			}
		default:
			return nil, domain.Errorf(domain.CodeSinkOption, "a Parquet sink does not take the option %q; it takes %s", k, options.List(sinkOptions))
		}
	}
	if s.Dir == "" {
		return nil, domain.Errorf(domain.CodeSinkOption, "a Parquet sink needs the option path: %s", sinkOptions["path"])
	}
	if !filepath.IsAbs(s.Dir) && base != "" {
		s.Dir = filepath.Join(base, s.Dir)
	}
	return s, nil
}

// unsafeName are the characters a flow name may have that a file name
// should not.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// FileName is the file of a batch. A flow name with characters a file
// name should not have gets a hash of the name as well, so that two flows
// whose names differ only there (a b, a_b) never share a file.
func FileName(flow string, generation, batchID int64) string {
	name := unsafeName.ReplaceAllString(flow, "_")
	if name != flow {
		name += fmt.Sprintf("-%08x", crc32.ChecksumIEEE([]byte(flow)))
	}
	return fmt.Sprintf("part-%s-g%d-b%08d.parquet", name, generation, batchID)
}

// Deliver writes the batch's file, unless it is there already.
func (s *Sink) Deliver(ctx context.Context, b domain.SinkBatch) error {
	if b.Rows == nil || b.Rows.Len() == 0 {
		return nil
	}
	final := filepath.Join(s.Dir, FileName(b.Flow, b.Generation, b.BatchID))
	if _, err := os.Stat(final); err == nil {
		return nil // delivered before the crash that brings it again
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rows := b.Rows
	if err := WriteFile(final, rows.Schema, s.Codec, func(w *Writer) error { return w.Write(rows, rows.Len()) }); err != nil {
		return domain.Wrap(domain.CodeSinkWriteFailed, err, fmt.Sprintf("Parquet sink %q, flow %q, batch %d", b.Sink, b.Flow, b.BatchID)).AsRetriable()
	}
	return nil
}

// WriteFile writes a Parquet file of schema to path, its rows written to w
// by fill (in parts, so that a table streams out): under a temporary name
// in the same directory, synced, then renamed, so that path holds the
// whole file or nothing.
func WriteFile(path string, schema domain.Schema, codec Codec, fill func(w *Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w, err := NewWriter(tmp, schema, codec)
	if err != nil {
		return err
	}
	if err := fill(w); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // as other files, not CreateTemp's 0600
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable; a file system that cannot sync a
// directory (os.ErrInvalid) has nothing to make durable.
func syncDir(dir string) error {
	if err := fsync.Dir(dir); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
