// Package parquet writes sluice's rows as Parquet files: the Writer of one
// file (sluice table --format parquet, sluice export), and the Sink that
// writes each micro-batch of a flow to a file of its own.
package parquet

import (
	"encoding/binary"
	"io"
	"math"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/parquetvariant"
)

// Writer writes rows of one schema to a Parquet file, mapping types
// as Spark's Parquet writer does: TINYINT and SMALLINT as INT32 with an
// INT(8) or INT(16) annotation, INT as INT32, BIGINT as INT64, FLOAT and
// DOUBLE, DECIMAL(p,s) as INT32 (p ≤ 9), INT64 (p ≤ 18) or a fixed-length
// byte array of the fewest bytes, DATE, TIMESTAMP as microseconds adjusted
// to UTC and TIMESTAMP_NTZ as microseconds not adjusted, STRING, BINARY,
// ARRAY as a three-level LIST, MAP as a MAP of key_value groups, STRUCT as a
// group, VARIANT as the VARIANT logical type. Columns keep the schema's
// order. Every column and field is optional (only map keys are required):
// a NOT NULL column that a row lacks could otherwise only be written as a
// broken file, and readers take optional columns as nullable, as sluice's
// tables read from files are. Intervals and columns of no type have no Parquet form (as in Spark)
// and are refused.
type Writer struct {
	w       *pq.GenericWriter[any]
	columns []*parquetColumn // the schema's top-level fields
	leaves  [][]pq.Value
	rows    []pq.Row
	grouped int64 // bytes in the row group being buffered
}

// parquetRowsPerWrite bounds the rows built before handing them to the
// Parquet writer, and parquetRowGroupBytes the row group it buffers before
// writing it out: memory stays flat however many rows the file has.
const (
	parquetRowsPerWrite  = 1024
	parquetRowGroupBytes = 64 << 20
)

// NewWriter starts a Parquet file of schema on out; Close finishes
// it (a Parquet file's footer comes last).
func NewWriter(out io.Writer, schema domain.Schema, codec Codec) (*Writer, error) {
	p := &Writer{}
	group := orderedGroup{Group: pq.Group{}}
	var leaves int
	for _, f := range schema.Fields {
		node, col, err := parquetNode(f.Name, f.Type, true, 0, 0, &leaves)
		if err != nil {
			return nil, err
		}
		group.Group[f.Name] = node
		group.order = append(group.order, f.Name)
		p.columns = append(p.columns, col)
	}
	p.leaves = make([][]pq.Value, leaves)
	p.w = pq.NewGenericWriter[any](out, pq.NewSchema("spark_schema", group), codec.codec())
	return p, nil
}

// Write writes the first n rows of b; its columns are found by name, and
// one b lacks is NULL.
func (p *Writer) Write(b *domain.Batch, n int) error {
	cols := make([]*domain.Column, len(p.columns))
	for k, c := range p.columns {
		if j := b.Schema.Index(c.name); j >= 0 {
			cols[k] = b.Columns[j]
		}
	}
	for i := 0; i < n; i++ {
		for k, c := range p.columns {
			v := domain.Null()
			if cols[k] != nil {
				v = cols[k].Value(i)
			}
			if err := p.stripe(c, v, 0); err != nil {
				return err
			}
		}
		var row pq.Row
		for l, vs := range p.leaves {
			row = append(row, vs...)
			p.leaves[l] = vs[:0]
		}
		p.rows = append(p.rows, row)
		if len(p.rows) == parquetRowsPerWrite {
			if err := p.flush(); err != nil {
				return err
			}
		}
	}
	return p.flush()
}

func (p *Writer) flush() error {
	start := p.w.Size()
	_, err := p.w.WriteRows(p.rows)
	p.rows = p.rows[:0]
	if err != nil {
		return err
	}
	if p.grouped += p.w.Size() - start; p.grouped >= parquetRowGroupBytes {
		p.grouped = 0
		return p.w.Flush()
	}
	return nil
}

// Close writes the file's footer.
func (p *Writer) Close() error { return p.w.Close() }

// parquetColumn is a node of the Parquet schema with what striping a value
// into its leaves needs (the record shredding of the Dremel paper).
type parquetColumn struct {
	name string
	t    domain.Type
	// def is the definition level of the node when it has a value; rep,
	// for a list or a map, is the repetition level of its elements
	def, rep int
	leaf     int              // a leaf's column index
	kids     []*parquetColumn // a struct's fields; a list's element; a map's key and value; a variant's metadata and value
	physical pq.Kind          // a leaf's physical type
}

// parquetNode maps a field to its Parquet node; def and rep are the levels
// of its parent, and leaves counts the leaf columns so far.
func parquetNode(name string, t domain.Type, nullable bool, def, rep int, leaves *int) (pq.Node, *parquetColumn, error) {
	if nullable {
		def++
	}
	c := &parquetColumn{name: name, t: t, def: def}
	wrap := func(n pq.Node) pq.Node {
		if nullable {
			return pq.Optional(n)
		}
		return pq.Required(n)
	}
	leaf := func(n pq.Node) (pq.Node, *parquetColumn, error) {
		c.leaf = *leaves
		*leaves++
		c.physical = n.Type().Kind()
		return wrap(n), c, nil
	}
	switch t.Kind {
	case domain.KindBool:
		return leaf(pq.Leaf(pq.BooleanType))
	case domain.KindInt64:
		if t.Bits == 0 {
			return leaf(pq.Leaf(pq.Int64Type))
		}
		if t.Bits == 32 {
			return leaf(pq.Leaf(pq.Int32Type))
		}
		return leaf(pq.Int(t.Bits))
	case domain.KindFloat64:
		if t.Bits == 32 {
			return leaf(pq.Leaf(pq.FloatType))
		}
		return leaf(pq.Leaf(pq.DoubleType))
	case domain.KindString:
		if !t.Variant {
			return leaf(pq.String())
		}
		for range 2 { // metadata and value, required in the variant's group
			c.kids = append(c.kids, &parquetColumn{t: domain.TypeBytes, def: def, leaf: *leaves, physical: pq.ByteArray})
			*leaves++
		}
		return wrap(pq.Variant()), c, nil
	case domain.KindBytes:
		return leaf(pq.Leaf(pq.ByteArrayType))
	case domain.KindDate:
		return leaf(pq.Date())
	case domain.KindTimestamp:
		return leaf(pq.TimestampAdjusted(pq.Microsecond, !t.NTZ))
	case domain.KindDecimal:
		var physical pq.Type
		switch {
		case t.Precision <= 9:
			physical = pq.Int32Type
		case t.Precision <= 18:
			physical = pq.Int64Type
		default:
			physical = pq.FixedLenByteArrayType(decimalBytes(t.Precision))
		}
		return leaf(pq.Decimal(t.Scale, t.Precision, physical))
	case domain.KindList:
		elem, kid, err := parquetNode("element", *t.Elem, true, def+1, rep+1, leaves)
		if err != nil {
			return nil, nil, err
		}
		c.rep, c.kids = rep+1, []*parquetColumn{kid}
		return wrap(pq.List(elem)), c, nil
	case domain.KindMap:
		key, kk, err := parquetNode("key", *t.Key, false, def+1, rep+1, leaves)
		if err != nil {
			return nil, nil, err
		}
		value, vk, err := parquetNode("value", *t.Elem, true, def+1, rep+1, leaves)
		if err != nil {
			return nil, nil, err
		}
		c.rep, c.kids = rep+1, []*parquetColumn{kk, vk}
		return wrap(pq.Map(key, value)), c, nil
	case domain.KindStruct:
		g := orderedGroup{Group: pq.Group{}}
		for _, f := range t.Fields {
			n, kid, err := parquetNode(f.Name, f.Type, true, def, rep, leaves)
			if err != nil {
				return nil, nil, err
			}
			g.Group[f.Name] = n
			g.order = append(g.order, f.Name)
			c.kids = append(c.kids, kid)
		}
		return wrap(g), c, nil
	}
	return nil, nil, domain.Errorf(domain.CodeUnsupportedDataType, "column %q is %s, which Parquet cannot hold", name, t).WithNames(name)
}

// decimalBytes is the fewest bytes of two's complement that hold every
// unscaled value of p digits (Spark's minBytesForPrecision).
func decimalBytes(p int) int {
	n := 1
	for math.Pow(2, float64(8*n-1)) < math.Pow(10, float64(p)) {
		n++
	}
	return n
}

// stripe appends the leaf values of v, a value of column c, at repetition
// level rep.
func (p *Writer) stripe(c *parquetColumn, v domain.Value, rep int) error {
	if v.IsNull() {
		p.nulls(c, rep, c.def-1)
		return nil
	}
	switch c.t.Kind {
	case domain.KindStruct:
		for i, kid := range c.kids {
			if err := p.stripe(kid, v.Fields()[i], rep); err != nil {
				return err
			}
		}
		return nil
	case domain.KindList, domain.KindMap:
		items := v.AsList()
		if len(items) == 0 {
			p.nulls(c, rep, c.def)
			return nil
		}
		for i, it := range items {
			r := rep
			if i > 0 {
				r = c.rep
			}
			if c.t.Kind == domain.KindList {
				if err := p.stripe(c.kids[0], it, r); err != nil {
					return err
				}
				continue
			}
			for k, kid := range c.kids {
				if err := p.stripe(kid, it.Fields()[k], r); err != nil {
					return err
				}
			}
		}
		return nil
	case domain.KindString:
		if c.t.Variant {
			meta, value, err := parquetvariant.Encode(v.AsString())
			if err != nil {
				return domain.Errorf(domain.CodeMalformedRecord, "column %q: the variant %s does not encode: %v", c.name, v.AsString(), err)
			}
			p.put(c.kids[0], pq.ByteArrayValue(meta), rep)
			p.put(c.kids[1], pq.ByteArrayValue(value), rep)
			return nil
		}
	}
	p.put(c, leafValue(c, v), rep)
	return nil
}

func (p *Writer) put(c *parquetColumn, v pq.Value, rep int) {
	p.leaves[c.leaf] = append(p.leaves[c.leaf], v.Level(rep, c.def, c.leaf))
}

// nulls appends a NULL (or an empty list's mark) at definition level def to
// every leaf under c.
func (p *Writer) nulls(c *parquetColumn, rep, def int) {
	if len(c.kids) == 0 {
		p.leaves[c.leaf] = append(p.leaves[c.leaf], pq.NullValue().Level(rep, def, c.leaf))
		return
	}
	for _, kid := range c.kids {
		p.nulls(kid, rep, def)
	}
}

// leafValue is a scalar value in the leaf's physical type.
func leafValue(c *parquetColumn, v domain.Value) pq.Value {
	switch c.t.Kind {
	case domain.KindBool:
		return pq.BooleanValue(v.AsBool())
	case domain.KindInt64, domain.KindDate:
		if c.physical == pq.Int32 {
			return pq.Int32Value(int32(v.AsInt()))
		}
		return pq.Int64Value(v.AsInt())
	case domain.KindTimestamp:
		return pq.Int64Value(v.AsInt())
	case domain.KindFloat64:
		if c.t.Bits == 32 {
			return pq.FloatValue(float32(v.AsFloat()))
		}
		return pq.DoubleValue(v.AsFloat())
	case domain.KindDecimal:
		u := v.AsDecimal()
		switch c.physical {
		case pq.Int32:
			return pq.Int32Value(int32(u.Lo))
		case pq.Int64:
			return pq.Int64Value(int64(u.Lo))
		}
		var be [16]byte
		binary.BigEndian.PutUint64(be[:8], uint64(u.Hi))
		binary.BigEndian.PutUint64(be[8:], u.Lo)
		return pq.FixedLenByteArrayValue(be[16-decimalBytes(c.t.Precision):])
	}
	return pq.ByteArrayValue(v.AsBytes())
}

// orderedGroup is a Parquet group whose fields keep the order they were
// declared in (pq.Group orders them by name).
type orderedGroup struct {
	pq.Group
	order []string
}

func (g orderedGroup) Fields() []pq.Field {
	byName := map[string]pq.Field{}
	for _, f := range g.Group.Fields() {
		byName[f.Name()] = f
	}
	out := make([]pq.Field, len(g.order))
	for i, name := range g.order {
		out[i] = byName[name]
	}
	return out
}
