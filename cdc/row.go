package cdc

import (
	"encoding/binary"
	"math"

	"github.com/sluicehq/sluice/domain"
)

// row is a row of the stored columns as the state keeps it: encoded in one
// string, so that a row costs one allocation, copies nothing of the batch
// it came from, and holds no pointer for the garbage collector to follow.
// Two rows are equal exactly when their values are (floats bit for bit).
// The empty row is none (an SCD 1 tombstone, an SCD 2 delete).
type row string

// Each value is its kind's byte, then: nothing (NULL); 8 bytes (bool,
// bigint, date, timestamp, intervals, the bits of a double); the precision,
// the scale and 16 bytes of the unscaled value (decimal); a uvarint
// length and the bytes (string, binary); a uvarint count and the values
// (array, struct, map).

// appendValue encodes v.
func appendValue(b []byte, v domain.Value) []byte {
	b = append(b, byte(v.Kind()))
	switch v.Kind() {
	case domain.KindNull:
	case domain.KindString, domain.KindBytes:
		b = binary.AppendUvarint(b, uint64(len(v.AsString())))
		b = append(b, v.AsString()...)
	case domain.KindFloat64:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.AsFloat()))
	case domain.KindDecimal:
		u := v.AsDecimal()
		b = append(b, byte(v.Precision()), byte(v.Scale()))
		b = binary.LittleEndian.AppendUint64(b, uint64(u.Hi))
		b = binary.LittleEndian.AppendUint64(b, u.Lo)
	case domain.KindList, domain.KindStruct, domain.KindMap:
		items := v.AsList()
		b = binary.AppendUvarint(b, uint64(len(items)))
		for _, x := range items {
			b = appendValue(b, x)
		}
	default:
		b = binary.LittleEndian.AppendUint64(b, uint64(v.AsInt()))
	}
	return b
}

// appendCell encodes row i of c without making a Value of it.
func appendCell(b []byte, c *domain.Column, i int) []byte {
	if c.IsNull(i) {
		return append(b, byte(domain.KindNull))
	}
	switch {
	case c.Ints != nil:
		return binary.LittleEndian.AppendUint64(append(b, byte(c.Kind)), uint64(c.Ints[i]))
	case c.Strs != nil:
		b = binary.AppendUvarint(append(b, byte(c.Kind)), uint64(len(c.Strs[i])))
		return append(b, c.Strs[i]...)
	}
	return appendValue(b, c.Value(i))
}

// encodeAt encodes row i of the first n columns.
func (s *State) encodeAt(cols []*domain.Column, n, i int) row {
	b := s.rowBuf[:0]
	for j := 0; j < n; j++ {
		b = appendCell(b, cols[j], i)
	}
	s.rowBuf = b
	return row(b)
}

// encode encodes values.
func (s *State) encode(vals []domain.Value) row {
	b := s.rowBuf[:0]
	for _, v := range vals {
		b = appendValue(b, v)
	}
	s.rowBuf = b
	return row(b)
}

// values decodes a row into dst (reused when it has the room).
func (r row) values(dst []domain.Value) []domain.Value {
	dst = dst[:0]
	for p := 0; p < len(r); {
		var v domain.Value
		v, p = decodeValue(string(r), p)
		dst = append(dst, v)
	}
	return dst
}

// appendTo decodes a row into columns of the stored columns' kinds, one
// value each, without making values of its scalars: text is cut from the
// row's own string.
func (r row) appendTo(cols []*domain.Column) {
	s := string(r)
	p := 0
	for _, c := range cols {
		k := domain.Kind(s[p])
		switch {
		case k == c.Kind && c.Strs != nil:
			n, w := uvarint(s[p+1:])
			start := p + 1 + w
			c.Strs = append(c.Strs, s[start:start+int(n)])
			p = start + int(n)
		case k == c.Kind && c.Ints != nil:
			c.Ints = append(c.Ints, int64(le64(s[p+1:])))
			p += 9
		case k == c.Kind && c.Floats != nil:
			c.Floats = append(c.Floats, math.Float64frombits(le64(s[p+1:])))
			p += 9
		default: // NULL, nested values, or a column of another kind
			var v domain.Value
			v, p = decodeValue(s, p)
			if err := c.Append(v); err != nil {
				panic(err) // rows are encoded from the stored columns
			}
			continue
		}
		if c.Nulls != nil {
			c.Nulls = append(c.Nulls, false)
		}
	}
}

func decodeValue(s string, p int) (domain.Value, int) {
	k := domain.Kind(s[p])
	p++
	switch k {
	case domain.KindNull:
		return domain.Null(), p
	case domain.KindString, domain.KindBytes:
		n, w := uvarint(s[p:])
		p += w
		text := s[p : p+int(n)]
		if k == domain.KindBytes {
			return domain.Bytes([]byte(text)), p + int(n)
		}
		return domain.String(text), p + int(n)
	case domain.KindFloat64:
		return domain.Float(math.Float64frombits(le64(s[p:]))), p + 8
	case domain.KindDecimal:
		u := domain.Int128{Hi: int64(le64(s[p+2:])), Lo: le64(s[p+10:])}
		return domain.Decimal(u, int(s[p]), int(s[p+1])), p + 18
	case domain.KindList, domain.KindStruct, domain.KindMap:
		n, w := uvarint(s[p:])
		p += w
		items := make([]domain.Value, n)
		for i := range items {
			items[i], p = decodeValue(s, p)
		}
		switch k {
		case domain.KindList:
			return domain.List(items...), p
		case domain.KindStruct:
			return domain.Struct(items...), p
		}
		return domain.Map(items...), p
	}
	x := int64(le64(s[p:]))
	var v domain.Value
	switch k {
	case domain.KindBool:
		v = domain.Bool(x != 0)
	case domain.KindTimestamp:
		v = domain.TimestampMicros(x)
	case domain.KindDate:
		v = domain.DateDays(x)
	case domain.KindYearMonthInterval:
		v = domain.YearMonthInterval(x)
	case domain.KindDayTimeInterval:
		v = domain.DayTimeInterval(x)
	default:
		v = domain.Int(x)
	}
	return v, p + 8
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func uvarint(s string) (uint64, int) {
	var x uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<(7*i), i + 1
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	panic("cdc: a malformed row") // rows are only made by encode
}
