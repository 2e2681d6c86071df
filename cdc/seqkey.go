package cdc

import (
	"encoding/binary"
	"math"

	"github.com/sluicehq/sluice/domain"
)

// A sequence key is a sequence encoded so that comparing the bytes orders
// the sequences as domain.Compare does: an SCD 2 history keeps its changes'
// sequences this way, beside their rows in one string, and orders them
// without decoding them.
//
// A value is 8 big-endian bytes with the sign bit flipped (integers, dates,
// timestamps, intervals; a double's bits, all flipped when negative); 16
// such bytes (a decimal's unscaled value, high half first); one
// byte (a boolean); the bytes with 0x00 written 0x00 0xFF, ended by 0x00
// 0x00 (strings, binary). A struct or an array is each element as 0x01
// (NULL) or 0x02 and the element, then 0x00: a shorter array sorts first,
// NULL before any value. Sequences are never NULL themselves.

func appendSeqKey(b []byte, v domain.Value) []byte {
	switch v.Kind() {
	case domain.KindBool:
		if v.AsBool() {
			return append(b, 1)
		}
		return append(b, 0)
	case domain.KindFloat64:
		f := v.AsFloat()
		if f != f {
			f = math.NaN() // every NaN is one NaN, the greatest
		}
		bits := math.Float64bits(f)
		if bits>>63 == 1 {
			bits = ^bits
		} else {
			bits |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(b, bits)
	case domain.KindString, domain.KindBytes:
		s := v.AsString()
		for i := 0; i < len(s); i++ {
			b = append(b, s[i])
			if s[i] == 0 {
				b = append(b, 0xFF)
			}
		}
		return append(b, 0, 0)
	case domain.KindDecimal:
		// the unscaled value as a 128-bit integer: a sequence column has
		// one scale
		u := v.AsDecimal()
		b = binary.BigEndian.AppendUint64(b, uint64(u.Hi)^1<<63)
		return binary.BigEndian.AppendUint64(b, u.Lo)
	case domain.KindList, domain.KindStruct, domain.KindMap:
		for _, x := range v.AsList() {
			if x.IsNull() {
				b = append(b, 1)
				continue
			}
			b = appendSeqKey(append(b, 2), x)
		}
		return append(b, 0)
	}
	return binary.BigEndian.AppendUint64(b, uint64(v.AsInt())^1<<63)
}

// decodeSeqKey reads a sequence key of type t from s at p.
func decodeSeqKey(s string, p int, t domain.Type) (domain.Value, int) {
	switch t.Kind {
	case domain.KindBool:
		return domain.Bool(s[p] == 1), p + 1
	case domain.KindFloat64:
		bits := be64(s[p:])
		if bits>>63 == 1 {
			bits &^= 1 << 63
		} else {
			bits = ^bits
		}
		return domain.Float(math.Float64frombits(bits)), p + 8
	case domain.KindString, domain.KindBytes:
		var out []byte
		for {
			c := s[p]
			p++
			if c != 0 {
				out = append(out, c)
				continue
			}
			if s[p] == 0xFF {
				out = append(out, 0)
				p++
				continue
			}
			p++ // the end: 0x00 0x00
			break
		}
		if t.Kind == domain.KindBytes {
			return domain.Bytes(out), p
		}
		return domain.String(string(out)), p
	case domain.KindDecimal:
		u := domain.Int128{Hi: int64(be64(s[p:]) ^ 1<<63), Lo: be64(s[p+8:])}
		return domain.Decimal(u, t.Precision, t.Scale), p + 16
	case domain.KindList, domain.KindStruct, domain.KindMap:
		var items []domain.Value
		for i := 0; s[p] != 0; i++ {
			if s[p] == 1 {
				items = append(items, domain.Null())
				p++
				continue
			}
			var x domain.Value
			x, p = decodeSeqKey(s, p+1, t.Item(i))
			items = append(items, x)
		}
		p++
		switch t.Kind {
		case domain.KindList:
			return domain.List(items...), p
		case domain.KindStruct:
			return domain.Struct(items...), p
		}
		return domain.Map(items...), p
	}
	x := int64(be64(s[p:]) ^ 1<<63)
	switch t.Kind {
	case domain.KindTimestamp:
		return domain.TimestampMicros(x), p + 8
	case domain.KindDate:
		return domain.DateDays(x), p + 8
	case domain.KindYearMonthInterval:
		return domain.YearMonthInterval(x), p + 8
	case domain.KindDayTimeInterval:
		return domain.DayTimeInterval(x), p + 8
	}
	return domain.Int(x), p + 8
}

func be64(s string) uint64 {
	_ = s[7]
	return uint64(s[7]) | uint64(s[6])<<8 | uint64(s[5])<<16 | uint64(s[4])<<24 |
		uint64(s[3])<<32 | uint64(s[2])<<40 | uint64(s[1])<<48 | uint64(s[0])<<56
}
