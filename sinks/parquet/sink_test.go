package parquet_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sinks/parquet"
)

func batchOf(t *testing.T, ids ...int64) *domain.Batch {
	t.Helper()
	b := domain.NewBatch(domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64, Nullable: true}, domain.Field{Name: "name", Type: domain.TypeString, Nullable: true}), 0)
	for _, id := range ids {
		if err := b.AppendRow(domain.Int(id), domain.String("n")); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func rowsIn(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf.NumRows()
}

// TestSinkWritesEachBatchOnce: a batch's file is written once; delivered
// again (as after a crash between the sink's write and the commit), it is
// left as it is; an empty batch writes nothing; nothing temporary stays.
func TestSinkWritesEachBatchOnce(t *testing.T) {
	dir := t.TempDir()
	s, err := parquet.NewSink(dir, map[string]string{"path": "out", "compression": "snappy"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first := domain.SinkBatch{Flow: "to out/x", Sink: "out", BatchID: 7, Generation: 1, Rows: batchOf(t, 1, 2, 3)}
	if err := s.Deliver(ctx, first); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out", parquet.FileName("to out/x", 1, 7))
	if got := filepath.Base(path); !strings.HasPrefix(got, "part-to_out_x-") || !strings.HasSuffix(got, "-g1-b00000007.parquet") || got == parquet.FileName("to_out_x", 1, 7) {
		t.Errorf("the file is named %s", filepath.Base(path))
	}
	if n := rowsIn(t, path); n != 3 {
		t.Errorf("the file has %d rows, want 3", n)
	}
	st, _ := os.Stat(path)
	again := first
	again.Rows = batchOf(t, 9) // not what a redelivery carries: shows the file is not rewritten
	if err := s.Deliver(ctx, again); err != nil {
		t.Fatal(err)
	}
	if n := rowsIn(t, path); n != 3 {
		t.Errorf("the redelivered batch rewrote the file: %d rows", n)
	}
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(st.ModTime()) || st2.Mode().Perm() != 0o644 {
		t.Errorf("the file changed (%v, %v) or has mode %v", st.ModTime(), st2.ModTime(), st2.Mode().Perm())
	}
	if err := s.Deliver(ctx, domain.SinkBatch{Flow: "f", BatchID: 8, Rows: batchOf(t)}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	if len(entries) != 1 {
		t.Errorf("out holds %d files, want the one batch's", len(entries))
	}
}

// TestSinkOptions: path is required and relative to the pipeline's
// directory; an unknown option or compression is INVALID_SINK_OPTION.
func TestSinkOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		ok   bool
	}{
		{map[string]string{"path": "out"}, true},
		{map[string]string{"PATH": "/abs", "Compression": "GZIP"}, true},
		{map[string]string{}, false},
		{map[string]string{"path": "out", "compression": "lz4"}, false},
		{map[string]string{"path": "out", "partitionBy": "day"}, false},
	} {
		s, err := parquet.NewSink("/pipe", c.opts)
		var de *domain.Error
		switch {
		case c.ok && err != nil:
			t.Errorf("%v: %v", c.opts, err)
		case !c.ok && (!errors.As(err, &de) || de.Code != domain.CodeSinkOption):
			t.Errorf("%v: got %v, want INVALID_SINK_OPTION", c.opts, err)
		case c.ok && c.opts["path"] == "out" && s.Dir != "/pipe/out":
			t.Errorf("a relative path is %s, want it under the pipeline's directory", s.Dir)
		}
	}
}

// TestSinkWriteFailureIsRetriable: a directory that cannot be written is
// SINK_WRITE_FAILED, retriable, and leaves no file.
func TestSinkWriteFailureIsRetriable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := parquet.NewSink("", map[string]string{"path": filepath.Join(blocker, "out")}) // a file where a directory should be
	err := s.Deliver(context.Background(), domain.SinkBatch{Flow: "f", BatchID: 1, Rows: batchOf(t, 1)})
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != domain.CodeSinkWriteFailed || !de.Retriable {
		t.Fatalf("got %v, want a retriable SINK_WRITE_FAILED", err)
	}
}
