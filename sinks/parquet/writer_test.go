package parquet_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sinks/parquet"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func everyType() domain.Schema {
	dec := func(p, s int) domain.Type { return domain.DecimalType(p, s) }
	return domain.NewSchema(
		domain.Field{Name: "b", Type: domain.TypeBool, Nullable: true},
		domain.Field{Name: "ti", Type: domain.TypeInt8, Nullable: true},
		domain.Field{Name: "si", Type: domain.TypeInt16, Nullable: true},
		domain.Field{Name: "i", Type: domain.TypeInt32},
		domain.Field{Name: "bi", Type: domain.TypeInt64, Nullable: true},
		domain.Field{Name: "f", Type: domain.TypeFloat32, Nullable: true},
		domain.Field{Name: "d", Type: domain.TypeFloat64, Nullable: true},
		domain.Field{Name: "d9", Type: dec(9, 2), Nullable: true},
		domain.Field{Name: "d18", Type: dec(18, 4), Nullable: true},
		domain.Field{Name: "d38", Type: dec(38, 10), Nullable: true},
		domain.Field{Name: "s", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "bin", Type: domain.TypeBytes, Nullable: true},
		domain.Field{Name: "day", Type: domain.TypeDate, Nullable: true},
		domain.Field{Name: "at", Type: domain.TypeTimestamp, Nullable: true},
		domain.Field{Name: "local", Type: domain.TypeTimestampNTZ, Nullable: true},
		domain.Field{Name: "v", Type: domain.TypeVariant, Nullable: true},
		domain.Field{Name: "tags", Type: domain.ListOf(domain.TypeInt32), Nullable: true},
		domain.Field{Name: "m", Type: domain.MapOf(domain.TypeString, domain.ListOf(dec(5, 2))), Nullable: true},
		domain.Field{Name: "st", Type: domain.StructOf(
			domain.Field{Name: "z", Type: domain.TypeString, Nullable: true},
			domain.Field{Name: "a", Type: domain.ListOf(domain.StructOf(domain.Field{Name: "x", Type: domain.TypeInt64, Nullable: true}))},
		), Nullable: true},
	)
}

// TestParquetSchema writes every type and checks the file's schema against
// the golden file: Spark's mapping, the columns in the table's order.
func TestParquetSchema(t *testing.T) {
	schema := everyType()
	var buf bytes.Buffer
	w, err := parquet.NewWriter(&buf, schema, parquet.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	b := domain.NewBatch(schema, 0)
	row := make([]domain.Value, len(schema.Fields))
	row[3] = domain.Int(1) // i is NOT NULL
	for range 2500 {       // more than one write's worth of rows
		if err := b.AppendRow(row...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(b, b.Len()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 2500 {
		t.Errorf("the file has %d rows, want 2500", f.NumRows())
	}
	got := f.Schema().String() + "\n"
	path := filepath.Join("testdata", "every_type.schema")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the Parquet schema is\n%s\nwant\n%s", got, want)
	}
}

// TestParquetRefusesIntervals: an interval has no Parquet type, as in Spark.
func TestParquetRefusesIntervals(t *testing.T) {
	for _, typ := range []domain.Type{{Kind: domain.KindDayTimeInterval}, domain.ListOf(domain.Type{Kind: domain.KindYearMonthInterval}), {Kind: domain.KindNull}} {
		schema := domain.NewSchema(domain.Field{Name: "x", Type: domain.TypeInt64}, domain.Field{Name: "span", Type: typ, Nullable: true})
		_, err := parquet.NewWriter(&bytes.Buffer{}, schema, parquet.Zstd)
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.CodeUnsupportedDataType {
			t.Errorf("%s: got %v, want %s", typ, err, domain.CodeUnsupportedDataType)
		}
	}
}
