// Package parquetvariant converts between a VARIANT's text (canonical JSON,
// as sluice stores it) and the variant binary encoding that Parquet's
// VARIANT logical type holds, with Spark's choice of types for numbers, so
// that a file sluice writes reads in Spark and a file Spark writes reads in
// sluice.
package parquetvariant

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go/variant"

	"github.com/sluicehq/sluice/domain"
)

// Encode turns a variant's text into its metadata and value bytes. Numbers
// take Spark's types: an integer the smallest integer type that holds it,
// else a decimal; a number with a point and no exponent a decimal of up to
// 38 digits; anything else a double.
func Encode(text string) (metadata, value []byte, err error) {
	n, err := domain.ParseJSON(text)
	if err != nil {
		return nil, nil, err
	}
	var b variant.Builder
	if err := build(&b, n); err != nil {
		return nil, nil, err
	}
	return b.Finish()
}

func build(b *variant.Builder, n *domain.JSONNode) error {
	switch n.Kind {
	case domain.JSONNull:
		b.Null()
	case domain.JSONBool:
		b.Bool(n.Text == "true")
	case domain.JSONString:
		b.String(n.Text)
	case domain.JSONNumber:
		number(b, n.Text)
	case domain.JSONArray:
		b.BeginArray()
		for _, it := range n.Items {
			if err := build(b, it); err != nil {
				return err
			}
		}
		b.EndArray()
	case domain.JSONObject:
		b.BeginObject()
		for i, k := range n.Keys {
			b.Field(k)
			if err := build(b, n.Items[i]); err != nil {
				return err
			}
		}
		b.EndObject()
	}
	return b.Err()
}

// number writes a JSON number as Spark's parse_json types it.
func number(b *variant.Builder, text string) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		switch {
		case i == int64(int8(i)):
			b.Int8(int8(i))
		case i == int64(int16(i)):
			b.Int16(int16(i))
		case i == int64(int32(i)):
			b.Int32(int32(i))
		default:
			b.Int64(i)
		}
		return
	}
	if !strings.ContainsAny(text, "eE") {
		digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(text), "0")
		scale := 0
		if dot := strings.IndexByte(text, '.'); dot >= 0 {
			scale = len(text) - dot - 1
		}
		if p := max(len(digits), scale, 1); p <= domain.MaxDecimalPrecision {
			if u, ok, fits := domain.ParseDecimal(text, domain.MaxDecimalPrecision, scale); ok && fits {
				switch {
				case p <= 9:
					b.Decimal4(int32(u.Lo), byte(scale))
				case p <= 18:
					b.Decimal8(int64(u.Lo), byte(scale))
				default:
					var le [16]byte
					binary.LittleEndian.PutUint64(le[:8], u.Lo)
					binary.LittleEndian.PutUint64(le[8:], uint64(u.Hi))
					b.Decimal16(le, byte(scale))
				}
				return
			}
		}
	}
	f, _ := strconv.ParseFloat(text, 64) // a JSON number parses; beyond a double's range it is ±Inf
	b.Double(f)
}

// Decode turns a variant's metadata and value bytes into its text. Types
// JSON lacks print as Spark's to_json prints them: a date or timestamp as
// a string, binary as base64.
func Decode(metadata, value []byte) (string, error) {
	m, err := variant.DecodeMetadata(metadata)
	if err != nil {
		return "", err
	}
	v, err := variant.Decode(m, value)
	if err != nil {
		return "", err
	}
	out, err := appendJSON(nil, v)
	if err != nil {
		return "", err
	}
	n, err := domain.ParseJSON(string(out))
	if err != nil {
		return "", err
	}
	canonical, dup := domain.AppendVariant(nil, n)
	if dup != "" {
		return "", fmt.Errorf("the object has the key %q twice", dup)
	}
	return string(canonical), nil
}

// decimalScaleLimit is the greatest scale of each decimal width: its digits.
var decimalScaleLimit = map[variant.PrimitiveType]int{
	variant.PrimitiveDecimal4: 9, variant.PrimitiveDecimal8: 18, variant.PrimitiveDecimal16: domain.MaxDecimalPrecision,
}

func appendJSON(b []byte, v variant.Value) ([]byte, error) {
	switch v.Basic() {
	case variant.BasicObject:
		b = append(b, '{')
		for i, f := range v.ObjectValue().Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = domain.AppendJSONString(b, f.Name)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, f.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case variant.BasicArray:
		b = append(b, '[')
		for i, e := range v.ArrayValue().Elements {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case variant.BasicShortString:
		return domain.AppendJSONString(b, v.Str()), nil
	}
	switch v.Type() {
	case variant.PrimitiveNull:
		return append(b, "null"...), nil
	case variant.PrimitiveTrue, variant.PrimitiveFalse:
		return strconv.AppendBool(b, v.BoolValue()), nil
	case variant.PrimitiveInt8, variant.PrimitiveInt16, variant.PrimitiveInt32, variant.PrimitiveInt64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	}
	if limit, ok := decimalScaleLimit[v.Type()]; ok && int(v.Scale()) > limit {
		return nil, fmt.Errorf("a variant decimal of scale %d is not valid", v.Scale())
	}
	switch v.Type() {
	case variant.PrimitiveDecimal4, variant.PrimitiveDecimal8:
		return append(b, domain.FormatDecimal(domain.Int128Of(v.Int()), int(v.Scale()))...), nil
	case variant.PrimitiveDecimal16:
		le := v.Decimal16Value()
		u := domain.Int128{Lo: binary.LittleEndian.Uint64(le[:8]), Hi: int64(binary.LittleEndian.Uint64(le[8:]))}
		return append(b, domain.FormatDecimal(u, int(v.Scale()))...), nil
	case variant.PrimitiveFloat, variant.PrimitiveDouble:
		f := v.FloatValue()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return domain.AppendJSONString(b, domain.FormatDouble(f)), nil // JSON has no such number
		}
		if v.Type() == variant.PrimitiveFloat {
			return append(b, domain.FormatFloat(f)...), nil
		}
		return append(b, domain.FormatDouble(f)...), nil
	case variant.PrimitiveString:
		return domain.AppendJSONString(b, v.Str()), nil
	case variant.PrimitiveBinary:
		return domain.AppendJSONString(b, domain.Bytes(v.Bytes()).String()), nil
	case variant.PrimitiveDate:
		return domain.AppendJSONString(b, domain.DateDays(v.Int()).String()), nil
	case variant.PrimitiveTimestamp, variant.PrimitiveTimestampNTZ:
		return domain.AppendJSONString(b, domain.TimestampMicros(v.Int()).String()), nil
	case variant.PrimitiveUUID:
		return domain.AppendJSONString(b, v.UUIDValue().String()), nil
	}
	return nil, fmt.Errorf("variant value of type %v is not supported", v.Type())
}
