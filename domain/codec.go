package domain

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
	"time"
)

// The codecs' format versions. A decoder refuses versions it does not know,
// so a store written by a newer sluice is never misread. Version 2 of both
// ends in a CRC-32C of everything before it; version 1 (no checksum) is still
// read. Batch version 3 adds decimal values (kind 13) to version 2: a sluice
// that reads only up to 2 refuses such a batch by its version instead of
// failing on a value it does not know. (A decimal column needs a decimal type
// in the batch's schema, which no older encoder wrote.)
const (
	eventCodecVersion = 2
	batchCodecVersion = 3
)

// checksumLen is the size of the CRC-32C trailer of version 2 payloads.
const checksumLen = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// seal appends the CRC-32C of b to b.
func seal(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// unseal checks the trailer of a version 2 payload and returns the payload
// without it; ok is false when the payload is too short or its checksum does
// not match (the bytes changed after they were written).
func unseal(p []byte) (body []byte, ok bool) {
	if len(p) < 1+checksumLen {
		return nil, false
	}
	body = p[:len(p)-checksumLen]
	return body, crc32.Checksum(body, castagnoli) == binary.LittleEndian.Uint32(p[len(p)-checksumLen:])
}

// corrupt is the error of a payload whose checksum does not match.
func corrupt(what string) *Error {
	return Errorf(CodeStoreCorrupt, "%s fails its checksum: its bytes changed after they were written", what)
}

// encoder appends primitives to a byte slice.
type encoder struct{ b []byte }

func (e *encoder) uvarint(x uint64) { e.b = binary.AppendUvarint(e.b, x) }
func (e *encoder) varint(x int64)   { e.b = binary.AppendVarint(e.b, x) }
func (e *encoder) byte1(x byte)     { e.b = append(e.b, x) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *encoder) u64(x uint64)     { e.b = binary.LittleEndian.AppendUint64(e.b, x) }

// decoder reads primitives; the first failure sticks in err and later reads
// return zero values, so callers check once at the end.
type decoder struct {
	b   []byte
	off int
	err error
	// s, when set, holds the same bytes as b: strings are then cut from it
	// instead of each being copied (one copy for a whole batch payload).
	s string
}

var errTruncated = errors.New("truncated input")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(errTruncated)
		return 0
	}
	d.off += n
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail(errTruncated)
		return 0
	}
	d.off += n
	return x
}

func (d *decoder) byte1() byte {
	if d.err != nil || d.off >= len(d.b) {
		d.fail(errTruncated)
		return 0
	}
	d.off++
	return d.b[d.off-1]
}

func (d *decoder) u64() uint64 {
	if d.err != nil || len(d.b)-d.off < 8 {
		d.fail(errTruncated)
		return 0
	}
	x := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return x
}

// length reads a length and checks that at least min*length bytes remain, so a
// corrupt length cannot make the decoder allocate without bound.
func (d *decoder) length(min int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if min < 1 {
		min = 1
	}
	if n > uint64(len(d.b)-d.off)/uint64(min) {
		d.fail(fmt.Errorf("length %d exceeds the %d bytes left", n, len(d.b)-d.off))
		return 0
	}
	return int(n)
}

func (d *decoder) raw() []byte {
	n := d.length(1)
	if d.err != nil {
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) str() string {
	if d.s == "" {
		return string(d.raw())
	}
	n := d.length(1)
	if d.err != nil {
		return ""
	}
	v := d.s[d.off : d.off+n]
	d.off += n
	return v
}

// The times an event's timestamp can have: the codec stores nanoseconds since
// the Unix epoch in an int64, which reaches from 1677 to 2262.
var (
	minEventTime = time.Unix(0, math.MinInt64)
	maxEventTime = time.Unix(0, math.MaxInt64)
)

// EncodeEvent encodes every part of ev except Seq, which the store keeps in
// the key. The encoding is deterministic: the same event gives the same bytes.
// A timestamp the format cannot hold (the zero time, say) is an error, not
// stored as another time.
func EncodeEvent(ev *Event) ([]byte, error) {
	return EncodeEventInto(nil, ev)
}

// EncodeEventInto is EncodeEvent writing into buf's space (from its start,
// growing it when it is too small): a caller that is done with one
// encoding can reuse its buffer for the next.
func EncodeEventInto(buf []byte, ev *Event) ([]byte, error) {
	if ev.Timestamp.Before(minEventTime) || ev.Timestamp.After(maxEventTime) {
		return nil, Errorf(CodeEventCodec, "event timestamp %s is outside the range the event codec holds (%s to %s)",
			ev.Timestamp.Format(time.RFC3339Nano), minEventTime.UTC().Format(time.RFC3339Nano), maxEventTime.UTC().Format(time.RFC3339Nano))
	}
	details, err := json.Marshal(ev.Details)
	if err != nil {
		return nil, Wrap(CodeEventCodec, err, "encoding event details")
	}
	e := encoder{b: slices.Grow(buf[:0], 64+len(ev.Message)+len(details)+len(ev.Data))}
	e.byte1(eventCodecVersion)
	e.str(ev.ID)
	e.varint(ev.Timestamp.UnixNano())
	e.str(string(ev.Type))
	e.str(string(ev.Level))
	e.str(ev.Message)
	o := ev.Origin
	e.str(o.PipelineName)
	e.str(o.UpdateID)
	e.str(o.FlowName)
	e.str(o.DatasetName)
	if o.BatchID != nil {
		e.byte1(1)
		e.varint(*o.BatchID)
	} else {
		e.byte1(0)
	}
	e.bytes(details)
	if ev.Error != nil {
		e.byte1(1)
		e.str(string(ev.Error.Code))
		e.str(ev.Error.Message)
		e.str(ev.Error.Hint)
		e.uvarint(uint64(len(ev.Error.Names)))
		for _, n := range ev.Error.Names {
			e.str(n)
		}
	} else {
		e.byte1(0)
	}
	e.bytes(ev.Data)
	return seal(e.b), nil
}

// DecodeEvent decodes an event encoded by EncodeEvent; seq is set as given.
// It never panics on bad input: anything malformed is an EVENT_CODEC_INVALID
// error.
//
// A version 2 event whose checksum does not match is a STORE_CORRUPT error
// naming the seq: the bytes are never decoded.
func DecodeEvent(seq uint64, p []byte) (*Event, error) { return decodeEvent(seq, p, true) }

// DecodeEventShared is DecodeEvent for a p that its owner never changes
// again: the event's Data is a part of p, not a copy of it.
func DecodeEventShared(seq uint64, p []byte) (*Event, error) { return decodeEvent(seq, p, false) }

func decodeEvent(seq uint64, p []byte, copyData bool) (*Event, error) {
	if len(p) > 0 {
		switch p[0] {
		case 1:
		case eventCodecVersion:
			body, ok := unseal(p)
			if !ok {
				return nil, corrupt(fmt.Sprintf("event %d", seq))
			}
			p = body
		default:
			return nil, Errorf(CodeEventCodec, "event %d has codec version %d; this sluice reads versions 1 and %d", seq, p[0], eventCodecVersion)
		}
	}
	d := decoder{b: p}
	d.byte1()
	ev := &Event{Seq: seq}
	ev.ID = d.str()
	ev.Timestamp = time.Unix(0, d.varint()).UTC()
	ev.Type = EventType(d.str())
	ev.Level = Level(d.str())
	ev.Message = d.str()
	ev.Origin.PipelineName = d.str()
	ev.Origin.UpdateID = d.str()
	ev.Origin.FlowName = d.str()
	ev.Origin.DatasetName = d.str()
	switch d.byte1() {
	case 0:
	case 1:
		id := d.varint()
		ev.Origin.BatchID = &id
	default:
		d.fail(errors.New("bad batch id marker"))
	}
	details := d.raw()
	switch d.byte1() {
	case 0:
	case 1:
		ei := &ErrorInfo{Code: Code(d.str()), Message: d.str(), Hint: d.str()}
		n := d.length(1)
		for i := 0; i < n && d.err == nil; i++ {
			ei.Names = append(ei.Names, d.str())
		}
		ev.Error = ei
	default:
		d.fail(errors.New("bad error marker"))
	}
	if data := d.raw(); len(data) > 0 {
		ev.Data = data
		if copyData {
			ev.Data = bytes.Clone(data) // p may be a buffer its owner reuses
		}
	}
	if d.err == nil && d.off != len(p) {
		d.fail(fmt.Errorf("%d trailing bytes", len(p)-d.off))
	}
	if d.err != nil {
		return nil, Wrap(CodeEventCodec, d.err, fmt.Sprintf("decoding event %d", seq))
	}
	if err := json.Unmarshal(details, &ev.Details); err != nil {
		return nil, Wrap(CodeEventCodec, err, fmt.Sprintf("decoding details of event %d", seq))
	}
	return ev, nil
}

// EncodeBatch encodes a batch in sluice's columnar row payload format:
// version, schema (JSON), row count, then each column as a null bitmap and
// its values.
//
// A batch DecodeBatch would refuse (a column of another kind or length than
// the schema and the row count say, a value of another kind in a column,
// values nested deeper than the decoder reads) is refused here, so that what
// was written can always be read.
func EncodeBatch(b *Batch) ([]byte, error) {
	if err := b.checkEncodable(); err != nil {
		return nil, Wrap(CodeBatchCodec, err, "encoding batch")
	}
	schema, err := json.Marshal(b.Schema)
	if err != nil {
		return nil, Wrap(CodeBatchCodec, err, "encoding batch schema")
	}
	e := encoder{b: make([]byte, 0, encodedSize(b)+len(schema)+checksumLen)}
	e.byte1(batchCodecVersion)
	e.bytes(schema)
	n := b.Len()
	e.uvarint(uint64(n))
	for j, c := range b.Columns {
		if c.Nulls == nil {
			e.byte1(0)
		} else {
			e.byte1(1)
			bits := make([]byte, (n+7)/8)
			for i, isNull := range c.Nulls[:n] {
				if isNull {
					bits[i/8] |= 1 << (i % 8)
				}
			}
			e.b = append(e.b, bits...)
		}
		switch c.Kind {
		case KindBool:
			for _, x := range c.Ints[:n] {
				if x != 0 && x != 1 {
					return nil, Errorf(CodeBatchCodec, "encoding batch: column %q: bad boolean %d", b.Schema.Fields[j].Name, x)
				}
				e.byte1(byte(x))
			}
		// the loops of the common kinds keep the buffer in a local: the
		// hot path of every commit of rows
		case KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
			b := e.b
			for _, x := range c.Ints[:n] {
				b = binary.AppendVarint(b, x)
			}
			e.b = b
		case KindFloat64:
			b := e.b
			for _, x := range c.Floats[:n] {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			}
			e.b = b
		case KindString, KindBytes:
			b := e.b
			for _, s := range c.Strs[:n] {
				b = append(binary.AppendUvarint(b, uint64(len(s))), s...)
			}
			e.b = b
		case KindNull, KindList, KindStruct, KindMap, KindDecimal:
			t := b.Schema.Fields[j].Type
			for _, v := range c.Values[:n] {
				err := encodeValue(&e, v, 0)
				switch {
				case err != nil, v.kind == KindNull:
				case v.kind != c.Kind:
					err = fmt.Errorf("a %s value in a %s column", v.kind, c.Kind)
				case v.kind == KindDecimal && (int(v.prec) != t.Precision || int(v.scale) != t.Scale):
					err = fmt.Errorf("a decimal(%d,%d) value in a %s column", v.prec, v.scale, t)
				}
				if err != nil {
					return nil, Wrap(CodeBatchCodec, err, fmt.Sprintf("encoding batch: column %q", b.Schema.Fields[j].Name))
				}
			}
		default:
			return nil, Errorf(CodeBatchCodec, "encoding batch: column %q: unknown column kind %d", b.Schema.Fields[j].Name, c.Kind)
		}
	}
	return seal(e.b), nil
}

// encodedSize is the bytes EncodeBatch writes for b's columns, so that its
// buffer is allocated once and no bigger than it needs (a commit's rows
// are megabytes): scalars as they are written, each varint by its length;
// nested values, and decimals, by guess (the buffer grows if need be).
func encodedSize(b *Batch) int {
	n := 32
	rows := b.Len()
	for _, c := range b.Columns {
		n += 1 + (rows+7)/8
		switch c.Kind {
		case KindString, KindBytes:
			for _, s := range c.Strs[:min(rows, len(c.Strs))] {
				n += uvarintLen(uint64(len(s))) + len(s)
			}
		case KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
			for _, x := range c.Ints[:min(rows, len(c.Ints))] {
				n += uvarintLen(uint64(x<<1) ^ uint64(x>>63))
			}
		case KindFloat64:
			n += rows * 8
		case KindBool:
			n += rows
		default:
			n += rows * binary.MaxVarintLen64
		}
	}
	return n
}

// checkEncodable checks that b's columns agree with its schema and row count,
// as DecodeBatch will check.
func (b *Batch) checkEncodable() error {
	if len(b.Columns) != len(b.Schema.Fields) {
		return fmt.Errorf("batch has %d columns for a schema of %d", len(b.Columns), len(b.Schema.Fields))
	}
	n := b.Len()
	if n > maxBatchRows {
		return fmt.Errorf("%d rows in one batch; the codec takes at most %d", n, maxBatchRows)
	}
	for i, c := range b.Columns {
		f := b.Schema.Fields[i]
		switch {
		case c == nil:
			return fmt.Errorf("column %q is missing", f.Name)
		case c.Kind != f.Type.Kind:
			return fmt.Errorf("column %q is %s in a batch whose schema says %s", f.Name, c.Kind, f.Type.Kind)
		case c.Len() != n:
			return fmt.Errorf("column %q has %d rows in a batch of %d", f.Name, c.Len(), n)
		case c.Nulls != nil && len(c.Nulls) != n:
			return fmt.Errorf("column %q has %d null marks for %d rows", f.Name, len(c.Nulls), n)
		}
	}
	return nil
}

// encodeValue appends v. Like decodeValue, it refuses values nested deeper
// than maxValueDepth.
func encodeValue(e *encoder, v Value, depth int) error {
	if depth > maxValueDepth {
		return errTooDeep
	}
	e.byte1(byte(v.kind))
	switch v.kind {
	case KindNull:
	case KindBool:
		e.byte1(byte(v.i))
	case KindFloat64:
		e.u64(uint64(v.i))
	case KindString, KindBytes:
		e.str(v.s)
	case KindDecimal:
		e.byte1(v.prec)
		e.byte1(v.scale)
		e.varint(v.i)
		e.str(v.s)
	case KindList, KindStruct, KindMap:
		e.uvarint(uint64(len(v.l)))
		for _, x := range v.l {
			if err := encodeValue(e, x, depth+1); err != nil {
				return err
			}
		}
	default:
		e.varint(v.i)
	}
	return nil
}

// maxValueDepth bounds nesting so a hostile payload cannot exhaust the stack.
const maxValueDepth = 64

var errTooDeep = errors.New("values nested too deeply")

// maxBatchRows bounds a batch's row count. With columns, the input bounds it
// too (each row takes at least a byte in each column); without, it keeps a
// corrupt count from making callers allocate for billions of empty rows.
const maxBatchRows = math.MaxInt32

func decodeValue(d *decoder, depth int) Value {
	if depth > maxValueDepth {
		d.fail(errTooDeep)
		return Value{}
	}
	k := Kind(d.byte1())
	switch k {
	case KindNull:
		return Value{}
	case KindBool:
		b := d.byte1()
		if b > 1 {
			d.fail(fmt.Errorf("bad boolean %d", b))
		}
		return Value{kind: k, i: int64(b)}
	case KindFloat64:
		return Value{kind: k, i: int64(d.u64())}
	case KindString, KindBytes:
		return Value{kind: k, s: d.str()}
	case KindDecimal:
		v := Value{kind: k, prec: d.byte1(), scale: d.byte1(), i: d.varint(), s: d.str()}
		if d.err == nil {
			if err := checkDecimal(v); err != nil {
				d.fail(err)
			}
		}
		return v
	case KindList, KindStruct, KindMap:
		n := d.length(1)
		// n is bounded by the bytes left, but nested lists each claiming
		// all of them must not each reserve room for them: grow as items
		// actually decode.
		items := make([]Value, 0, min(n, 16))
		for i := 0; i < n && d.err == nil; i++ {
			items = append(items, decodeValue(d, depth+1))
		}
		return Value{kind: k, l: items}
	case KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
		return Value{kind: k, i: d.varint()}
	}
	d.fail(fmt.Errorf("unknown value kind %d", k))
	return Value{}
}

// DecodeBatch decodes a batch encoded by EncodeBatch. It never panics on bad
// input: anything malformed is a BATCH_CODEC_INVALID error.
//
// A version 2 or 3 payload whose checksum does not match is a STORE_CORRUPT
// error: the bytes are never decoded.
func DecodeBatch(p []byte) (*Batch, error) {
	if len(p) > 0 {
		switch p[0] {
		case 1:
		case 2, batchCodecVersion:
			body, ok := unseal(p)
			if !ok {
				return nil, corrupt("a batch payload")
			}
			p = body
		default:
			return nil, Errorf(CodeBatchCodec, "batch has codec version %d; this sluice reads versions 1 to %d", p[0], batchCodecVersion)
		}
	}
	d := decoder{b: p, s: string(p)} // the batch's strings share one copy of the payload
	d.byte1()
	var schema Schema
	if raw := d.raw(); d.err == nil {
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, Wrap(CodeBatchCodec, err, "decoding batch schema")
		}
		for _, f := range schema.Fields {
			if err := checkDecimalTypes(f.Type); err != nil {
				return nil, Wrap(CodeBatchCodec, err, fmt.Sprintf("decoding batch schema: column %q", f.Name))
			}
		}
	}
	// Each row takes at least a byte in each column, so with columns the row
	// count is bounded by the bytes left; a batch without columns has rows
	// but no bytes for them.
	n := 0
	if rows := d.uvarint(); d.err == nil {
		switch {
		case len(schema.Fields) > 0 && rows > uint64(len(p)-d.off):
			d.fail(fmt.Errorf("%d rows cannot fit in the %d bytes left", rows, len(p)-d.off))
		case rows > maxBatchRows:
			d.fail(fmt.Errorf("%d rows in one batch; the codec takes at most %d", rows, maxBatchRows))
		default:
			n = int(rows)
		}
	}
	cols := make([]*Column, 0, len(schema.Fields))
	for _, f := range schema.Fields {
		if d.err != nil {
			break
		}
		c := &Column{Kind: f.Type.Kind}
		switch d.byte1() {
		case 0:
		case 1:
			nb := (n + 7) / 8
			if len(p)-d.off < nb {
				d.fail(errTruncated)
				break
			}
			c.Nulls = make([]bool, n)
			for i := range c.Nulls {
				c.Nulls[i] = p[d.off+i/8]&(1<<(i%8)) != 0
			}
			d.off += nb
		default:
			d.fail(errors.New("bad null marker"))
		}
		if d.err != nil {
			break
		}
		switch c.Kind {
		case KindBool:
			c.Ints = make([]int64, n)
			for i := range c.Ints {
				b := d.byte1()
				if b > 1 {
					d.fail(fmt.Errorf("bad boolean %d", b))
				}
				c.Ints[i] = int64(b)
			}
		case KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
			c.Ints = make([]int64, n)
			for i := range c.Ints {
				c.Ints[i] = d.varint()
			}
		case KindFloat64:
			if len(p)-d.off < 8*n {
				d.fail(errTruncated)
				break
			}
			c.Floats = make([]float64, n)
			for i := range c.Floats {
				c.Floats[i] = math.Float64frombits(d.u64())
			}
		case KindString, KindBytes:
			c.Strs = make([]string, n)
			for i := range c.Strs {
				c.Strs[i] = d.str()
			}
		case KindNull, KindList, KindStruct, KindMap, KindDecimal:
			c.Values = make([]Value, n)
			for i := range c.Values {
				c.Values[i] = decodeValue(&d, 0)
				v := c.Values[i]
				switch {
				case d.err != nil, v.kind == KindNull:
				case v.kind != c.Kind:
					d.fail(fmt.Errorf("a %s value in a %s column", v.kind, c.Kind))
				case v.kind == KindDecimal && (int(v.prec) != f.Type.Precision || int(v.scale) != f.Type.Scale):
					d.fail(fmt.Errorf("a decimal(%d,%d) value in a %s column", v.prec, v.scale, f.Type))
				}
			}
		default:
			d.fail(fmt.Errorf("unknown column kind %d", c.Kind))
		}
		cols = append(cols, c)
	}
	if d.err == nil && d.off != len(p) {
		d.fail(fmt.Errorf("%d trailing bytes", len(p)-d.off))
	}
	if d.err != nil {
		return nil, Wrap(CodeBatchCodec, d.err, "decoding batch")
	}
	b, err := BatchOf(schema, cols)
	if err != nil {
		return nil, Wrap(CodeBatchCodec, err, "decoding batch")
	}
	if len(schema.Fields) == 0 {
		b.rows = n
	}
	return b, nil
}

// uvarintLen is the bytes binary.AppendUvarint writes for x.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }
