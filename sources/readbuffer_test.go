package sources

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// TestReadOwnsItsRows: a micro-batch's slices are read into the buffer the
// next micro-batch reads into again, so nothing of the batch may share its
// bytes: not the strings of nested values, not the names of inferred
// columns and struct fields (keys of the records), not a CSV header's
// names. The buffer is overwritten after Read, and the batch must still
// equal one decoded from bytes of its own. The JSON file is large enough
// to be decoded in parallel parts.
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
			buf := <-src.spare
			if cap(buf) < len(tt.data) {
				t.Fatalf("the read buffer kept holds %d bytes, fewer than the %d read", cap(buf), len(tt.data))
			}
			for i := range buf[:cap(buf)] {
				buf[:cap(buf)][i] = '#'
			}
			pieces, err := src.readPieces(offsetOf(t, end).Files[0], nil) // into bytes of its own
			if err != nil {
				t.Fatal(err)
			}
			want, err := src.decode(pieces, linesOf(pieces))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := dump(got), dump(want); g != w {
				t.Errorf("the batch read, its buffer overwritten, differs from one decoded from bytes of its own:\n%.400s\nwant\n%.400s", g, w)
			}
		})
	}
}
