package sources

import (
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sluicehq/sluice/domain"
)

// openParquet opens a Parquet file as planned (its first Size bytes).
func (s *fileSource) openParquet(f fileSlice) (*parquet.File, *os.File, error) {
	path := filepath.Join(s.dir, filepath.FromSlash(f.Path))
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, domain.Errorf(domain.CodeFileNotExist, "file %s was planned for a micro-batch and no longer exists", path).WithNames(path)
		}
		return nil, nil, domain.Wrap(domain.CodeFileUnreadable, err, path).AsRetriable()
	}
	pf, err := parquet.OpenFile(fh, f.Size)
	if err != nil {
		fh.Close()
		return nil, nil, domain.Errorf(domain.CodeFileUnreadable, "file %s is not a readable Parquet file: %v", path, err).
			WithHint("check that the file was written completely (a truncated Parquet file has no footer)").WithNames(path)
	}
	return pf, fh, nil
}

func (s *fileSource) countParquetRows(f fileSlice) (int, error) {
	pf, fh, err := s.openParquet(f)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	return int(pf.NumRows()), nil
}

// parquetColumn maps a top-level Parquet column to a sluice type.
type parquetColumn struct {
	name  string
	kind  domain.Kind
	scale func(v parquet.Value) domain.Value
}

func parquetColumns(path string, schema *parquet.Schema) ([]parquetColumn, error) {
	var cols []parquetColumn
	for _, field := range schema.Fields() {
		if !field.Leaf() || field.Repeated() {
			return nil, domain.Errorf(domain.CodeFileUnreadable, "file %s: column %q is nested or repeated, which sluice does not read from Parquet yet", path, field.Name()).
				WithHint("flatten the column when writing the file, or use JSON lines").WithNames(path)
		}
		c := parquetColumn{name: field.Name()}
		var lt format.LogicalTypeValue
		if l := field.Type().LogicalType(); l != nil {
			lt = l.Value
		}
		switch field.Type().Kind() {
		case parquet.Boolean:
			c.kind, c.scale = domain.KindBool, func(v parquet.Value) domain.Value { return domain.Bool(v.Boolean()) }
		case parquet.Int32:
			if _, ok := lt.(*format.DateType); ok {
				c.kind, c.scale = domain.KindDate, func(v parquet.Value) domain.Value { return domain.DateDays(int64(v.Int32())) }
			} else {
				c.kind, c.scale = domain.KindInt64, func(v parquet.Value) domain.Value { return domain.Int(int64(v.Int32())) }
			}
		case parquet.Int64:
			c.kind, c.scale = domain.KindInt64, func(v parquet.Value) domain.Value { return domain.Int(v.Int64()) }
			if ts, ok := lt.(*format.TimestampType); ok {
				unit := ts.Unit.Value
				c.kind = domain.KindTimestamp
				c.scale = func(v parquet.Value) domain.Value {
					switch unit.(type) {
					case *format.MilliSeconds:
						return domain.TimestampMicros(v.Int64() * 1000)
					case *format.NanoSeconds:
						return domain.TimestampMicros(v.Int64() / 1000)
					}
					return domain.TimestampMicros(v.Int64())
				}
			}
		case parquet.Float:
			c.kind, c.scale = domain.KindFloat64, func(v parquet.Value) domain.Value { return domain.Float(float64(v.Float())) }
		case parquet.Double:
			c.kind, c.scale = domain.KindFloat64, func(v parquet.Value) domain.Value { return domain.Float(v.Double()) }
		case parquet.ByteArray, parquet.FixedLenByteArray:
			switch lt.(type) {
			case *format.StringType, *format.JsonType, *format.EnumType:
				c.kind, c.scale = domain.KindString, func(v parquet.Value) domain.Value { return domain.String(string(v.ByteArray())) }
			default:
				c.kind, c.scale = domain.KindBytes, func(v parquet.Value) domain.Value { return domain.Bytes(v.ByteArray()) }
			}
		default:
			return nil, domain.Errorf(domain.CodeFileUnreadable, "file %s: column %q has Parquet type %s, which sluice does not read", path, field.Name(), field.Type()).WithNames(path)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// decodeParquet adds rows [f.From, to) of a Parquet file to b.
func (s *fileSource) decodeParquet(b *builder, f fileSlice, to int) error {
	pf, fh, err := s.openParquet(f)
	if err != nil {
		return err
	}
	defer fh.Close()
	path := b.currentFile
	cols, err := parquetColumns(path, pf.Schema())
	if err != nil {
		return err
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	if f.From > 0 {
		if err := r.SeekToRow(int64(f.From)); err != nil {
			return domain.Errorf(domain.CodeFileUnreadable, "file %s: seeking to row %d: %v", path, f.From, err).WithNames(path)
		}
	}
	want := int(pf.NumRows()) - f.From
	if to >= 0 {
		want = to - f.From
	}
	rows := make([]parquet.Row, 256)
	for done := 0; done < want; {
		n, err := r.ReadRows(rows[:min(len(rows), want-done)])
		for _, row := range rows[:n] {
			b.currentLine = f.From + done + 1
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(cols) {
					continue
				}
				if v.IsNull() {
					b.set(cols[c].name, domain.Null())
				} else {
					b.set(cols[c].name, cols[c].scale(v))
				}
			}
			if err := b.endRow(); err != nil {
				return err
			}
			done++
		}
		if err == io.EOF {
			if done < want {
				return domain.Errorf(domain.CodeFileUnreadable, "file %s: %d rows read of %d", path, done, want).WithNames(path)
			}
			break
		}
		if err != nil {
			return domain.Errorf(domain.CodeFileUnreadable, "file %s: %v", path, err).
				WithHint("check that the file was written completely").WithNames(path)
		}
	}
	return nil
}

