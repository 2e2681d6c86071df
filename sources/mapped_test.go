package sources

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// TestReadOwnsItsRows: a micro-batch's slices are read mapped and unmapped
// before Read returns, so nothing of the batch may share their bytes: not
// the strings of nested values, not the names of inferred columns and
// struct fields (keys of the records), not a CSV header's names. Reading
// any of them after Read would fault; the batch must equal one decoded from
// a copy of the bytes. The JSON file is large enough to be decoded in
// parallel parts.
func TestReadOwnsItsRows(t *testing.T) {
	var js strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&js, `{"id": %d, "name": "n\u00e9%d", "tags": ["a%d", "b"], "who": {"first": "f%d", "deep": {"k": "v%d"}}, "m": {"x%d": "y"}}`+"\n", i, i, i, i, i, i%3)
	}
	var csv strings.Builder
	csv.WriteString("id,name_of_it\n")
	for i := range 1000 {
		fmt.Fprintf(&csv, "%d,row %d\n", i, i)
	}
	str := domain.TypeString
	declared := domain.NewSchema(
		domain.Field{Name: "id", Type: domain.TypeInt64, Nullable: true},
		domain.Field{Name: "name", Type: str, Nullable: true},
		domain.Field{Name: "tags", Type: domain.ListOf(str), Nullable: true},
		domain.Field{Name: "who", Type: domain.StructOf(
			domain.Field{Name: "first", Type: str, Nullable: true},
			domain.Field{Name: "deep", Type: domain.StructOf(domain.Field{Name: "k", Type: str, Nullable: true}), Nullable: true}), Nullable: true},
		domain.Field{Name: "m", Type: domain.MapOf(str, str), Nullable: true})
	for _, tt := range []struct {
		name, file, data string
		opts             FileOptions
	}{
		{"json inferred", "a.json", js.String(), FileOptions{Format: "json"}},
		{"json nested", "a.json", js.String(), FileOptions{Format: "json", Schema: &declared}},
		{"json rescued", "a.json", js.String() + "{not json\n", FileOptions{Format: "json", RescueBadRecords: true}},
		{"csv header", "a.csv", csv.String(), FileOptions{Format: "csv", Header: true}},
		{"text", "a.txt", csv.String(), FileOptions{Format: "text"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, tt.file, tt.data, baseTime)
			src := newFiles(t, dir, tt.opts).(*fileSource)
			end, ok, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			got, err := src.Read(context.Background(), nil, end)
			if err != nil {
				t.Fatal(err)
			}
			pieces, err := src.readPieces(offsetOf(t, end).Files[0], nil) // read, not mapped
			if err != nil {
				t.Fatal(err)
			}
			want, err := src.decode(pieces, linesOf(pieces))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := dump(got), dump(want); g != w {
				t.Errorf("the batch read mapped differs from one decoded from a copy:\n%.400s\nwant\n%.400s", g, w)
			}
		})
	}
}

// TestReadFileShrunkUnderMapping: a file that shrinks while its mapped
// bytes are decoded is a retriable FAILED_READ_FILE error, not a crash; a
// panic of anything else goes on.
func TestReadFileShrunkUnderMapping(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, `{"id": %d, "name": "n%d"}`+"\n", i, i)
	}
	path := writeFile(t, dir, "a.json", sb.String(), baseTime)
	src := newFiles(t, dir, FileOptions{Format: "json"}).(*fileSource)
	end, ok, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var maps []mapped
	defer func() {
		for _, m := range maps {
			m.unmap()
		}
	}()
	pieces, err := src.readPieces(offsetOf(t, end).Files[0], &maps)
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 1 {
		t.Fatalf("%d mappings, want the slice mapped", len(maps))
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	err = src.guarded(&maps, func() error {
		_, err := src.decode(pieces, linesOf(pieces))
		return err
	})
	var e *domain.Error
	if !errors.As(err, &e) || e.Code != domain.CodeFileUnreadable || !e.Retriable {
		t.Fatalf("decoding a file shrunk under its mapping: %v, want a retriable %s", err, domain.CodeFileUnreadable)
	}

	defer func() {
		if p := recover(); p != "another panic" {
			t.Errorf("a panic that is no fault of the mapping: recovered %v, want it to go on", p)
		}
	}()
	_ = src.guarded(&maps, func() error { panic("another panic") })
}
