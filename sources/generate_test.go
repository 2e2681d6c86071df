package sources

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

func TestRangeDrainsInSlices(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		start, end int64
		maxRows    int64
		wantSlices int
	}{
		{"one slice", 0, 10, 0, 1},
		{"even slices", 0, 10, 5, 2},
		{"ragged slices", 3, 10, 3, 3},
		{"empty", 5, 5, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := Range(tt.start, tt.end)
			var pos domain.Offset
			var got []int64
			slices := 0
			for {
				end, ok, err := src.Plan(ctx, pos, domain.ReadLimit{MaxRows: tt.maxRows})
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				b, err := src.Read(ctx, pos, end)
				if err != nil {
					t.Fatal(err)
				}
				again, err := src.Read(ctx, pos, end)
				if err != nil || again.Len() != b.Len() {
					t.Fatalf("reading the same range twice gave %d and %d rows (%v)", b.Len(), again.Len(), err)
				}
				got = append(got, b.Columns[0].Ints...)
				pos = end
				slices++
			}
			if slices != tt.wantSlices {
				t.Errorf("%d slices, want %d", slices, tt.wantSlices)
			}
			for i, id := range got {
				if id != tt.start+int64(i) {
					t.Fatalf("id %d at %d, want %d", id, i, tt.start+int64(i))
				}
			}
			if int64(len(got)) != tt.end-tt.start {
				t.Errorf("%d ids, want %d", len(got), tt.end-tt.start)
			}
		})
	}
}

func TestRangeRefusesForeignOffsets(t *testing.T) {
	src := Range(0, 10)
	for _, off := range []string{`{"next": 11}`, `{"next": -1}`, `not json`} {
		if _, _, err := src.Plan(context.Background(), domain.Offset(off), domain.ReadLimit{}); domain.CodeOf(err) != domain.CodeSourceFailed {
			t.Errorf("offset %s: error %v, want %s", off, err, domain.CodeSourceFailed)
		}
	}
}
