package sources

import (
	"errors"
	"io"
	"math/big"
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

// recoverParquet turns a panic of the Parquet library over a damaged file
// into an error naming the file.
func recoverParquet(path string, err *error) {
	if r := recover(); r != nil {
		*err = domain.Errorf(domain.CodeFileUnreadable, "file %s is not a readable Parquet file: %v", path, r).
			WithHint("check that the file was written completely and is not damaged").WithNames(path)
	}
}

// parquetColumn maps a top-level Parquet column to a sluice type. scale reads
// a non-null value; ok is false for a value the type cannot hold.
type parquetColumn struct {
	name  string
	kind  domain.Kind
	scale func(v parquet.Value) (out domain.Value, ok bool)
}

// julianUnixEpoch is the Julian day of 1970-01-01, for INT96 timestamps.
const julianUnixEpoch = 2440588

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
		if dec, ok := lt.(*format.DecimalType); ok {
			p, s := int(dec.Precision), int(dec.Scale)
			if p < 1 || p > domain.MaxDecimalPrecision || s < 0 || s > p {
				return nil, domain.Errorf(domain.CodeFileUnreadable, "file %s: column %q is DECIMAL(%d, %d); sluice reads decimals of 1 to %d digits", path, field.Name(), p, s, domain.MaxDecimalPrecision).
					WithHint("write the column as a double or a string").WithNames(path)
			}
			c.kind, c.scale = domain.KindDecimal, decimalScale(field.Type().Kind(), p, s)
			cols = append(cols, c)
			continue
		}
		unsigned := false
		if it, ok := lt.(*format.IntType); ok {
			unsigned = !it.IsSigned
		}
		switch field.Type().Kind() {
		case parquet.Boolean:
			c.kind, c.scale = domain.KindBool, func(v parquet.Value) (domain.Value, bool) { return domain.Bool(v.Boolean()), true }
		case parquet.Int32:
			switch _, date := lt.(*format.DateType); {
			case date:
				c.kind, c.scale = domain.KindDate, func(v parquet.Value) (domain.Value, bool) { return domain.DateDays(int64(v.Int32())), true }
			case unsigned:
				c.kind, c.scale = domain.KindInt64, func(v parquet.Value) (domain.Value, bool) { return domain.Int(int64(uint32(v.Int32()))), true }
			default:
				c.kind, c.scale = domain.KindInt64, func(v parquet.Value) (domain.Value, bool) { return domain.Int(int64(v.Int32())), true }
			}
		case parquet.Int64:
			c.kind, c.scale = domain.KindInt64, func(v parquet.Value) (domain.Value, bool) { return domain.Int(v.Int64()), true }
			if unsigned {
				c.scale = func(v parquet.Value) (domain.Value, bool) { return domain.Int(v.Int64()), v.Int64() >= 0 }
			}
			if ts, ok := lt.(*format.TimestampType); ok {
				unit := ts.Unit.Value
				c.kind = domain.KindTimestamp
				c.scale = func(v parquet.Value) (domain.Value, bool) {
					switch unit.(type) {
					case *format.MilliSeconds:
						return domain.TimestampMicros(v.Int64() * 1000), true
					case *format.NanoSeconds:
						return domain.TimestampMicros(floorDiv(v.Int64(), 1000)), true
					}
					return domain.TimestampMicros(v.Int64()), true
				}
			}
		case parquet.Int96: // legacy timestamps (Spark, Hive, Impala): nanoseconds of the day and a Julian day
			c.kind, c.scale = domain.KindTimestamp, func(v parquet.Value) (domain.Value, bool) {
				i := v.Int96()
				nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
				days := int64(i[2]) - julianUnixEpoch
				return domain.TimestampMicros(days*86400_000_000 + floorDiv(nanos, 1000)), true
			}
		case parquet.Float:
			c.kind, c.scale = domain.KindFloat64, func(v parquet.Value) (domain.Value, bool) { return domain.Float(float64(v.Float())), true }
		case parquet.Double:
			c.kind, c.scale = domain.KindFloat64, func(v parquet.Value) (domain.Value, bool) { return domain.Float(v.Double()), true }
		case parquet.ByteArray, parquet.FixedLenByteArray:
			switch lt.(type) {
			case *format.StringType, *format.JsonType, *format.EnumType:
				c.kind, c.scale = domain.KindString, func(v parquet.Value) (domain.Value, bool) { return domain.String(string(v.ByteArray())), true }
			default:
				c.kind, c.scale = domain.KindBytes, func(v parquet.Value) (domain.Value, bool) { return domain.Bytes(v.ByteArray()), true }
			}
		default:
			return nil, domain.Errorf(domain.CodeFileUnreadable, "file %s: column %q has Parquet type %s, which sluice does not read", path, field.Name(), field.Type()).WithNames(path)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// floorDiv divides rounding down, so that instants before 1970 round to the
// earlier microsecond as they do after.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// decimalScale reads a DECIMAL(p, s) stored as an integer or as big-endian
// two's complement bytes, exactly; a value of more than p digits does not fit.
func decimalScale(physical parquet.Kind, p, s int) func(parquet.Value) (domain.Value, bool) {
	of := func(u domain.Int128, ok bool) (domain.Value, bool) {
		if !ok || !u.FitsPrecision(p) {
			return domain.Null(), false
		}
		return domain.Decimal(u, p, s), true
	}
	switch physical {
	case parquet.Int32:
		return func(v parquet.Value) (domain.Value, bool) { return of(domain.Int128Of(int64(v.Int32())), true) }
	case parquet.Int64:
		return func(v parquet.Value) (domain.Value, bool) { return of(domain.Int128Of(v.Int64()), true) }
	}
	return func(v parquet.Value) (domain.Value, bool) {
		b := v.ByteArray()
		n := new(big.Int).SetBytes(b)
		if len(b) > 0 && b[0]&0x80 != 0 { // negative: subtract 2^(8*len)
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		return of(domain.Int128FromBig(n))
	}
}

// decodeParquet adds rows [f.From, to) of a Parquet file to b.
func (s *fileSource) decodeParquet(b *builder, f fileSlice) (err error) {
	defer recoverParquet(b.currentFile, &err)
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
	if f.Start > 0 {
		if err := r.SeekToRow(f.Start); err != nil {
			return domain.Errorf(domain.CodeFileUnreadable, "file %s: seeking to row %d: %v", path, f.Start, err).WithNames(path)
		}
	}
	want := int(f.End - f.Start)
	b.reserve(want)
	rows := make([]parquet.Row, 256)
	for done := 0; done < want; {
		n, err := r.ReadRows(rows[:min(len(rows), want-done)])
		for _, row := range rows[:n] {
			b.currentLine = int(f.Start) + done + 1
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(cols) {
					continue
				}
				if v.IsNull() {
					b.set(cols[c].name, domain.Null())
					continue
				}
				val, ok := cols[c].scale(v)
				if !ok {
					return domain.Errorf(domain.CodeFileUnreadable, "file %s, row %d: column %q: value %s does not fit a %s",
						path, b.currentLine, cols[c].name, v, cols[c].kind).WithNames(path)
				}
				b.set(cols[c].name, val)
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
