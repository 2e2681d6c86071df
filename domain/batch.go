package domain

import (
	"fmt"
	"math"
)

// Column is one column of a batch, stored as a typed vector so that
// expressions run over whole columns without boxing each value. Which slice is
// used depends on the kind:
//
//	bool, int64, timestamp, date  Ints (bools as 0 and 1)
//	float64                       Floats
//	string, bytes                 Strs
//	list, struct, map, null       Values
//	decimal                       Values (see Kind.InValues)
//
// Nulls is nil when no value is NULL; otherwise Nulls[i] marks row i NULL and
// the typed slice holds a zero at i.
type Column struct {
	Kind   Kind
	Nulls  []bool
	Ints   []int64
	Floats []float64
	Strs   []string
	Values []Value
}

// NewColumn makes an empty column of kind k with room for capacity rows.
func NewColumn(k Kind, capacity int) *Column {
	c := &Column{Kind: k}
	switch k {
	case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
		c.Ints = make([]int64, 0, capacity)
	case KindFloat64:
		c.Floats = make([]float64, 0, capacity)
	case KindString, KindBytes:
		c.Strs = make([]string, 0, capacity)
	default:
		c.Values = make([]Value, 0, capacity)
	}
	return c
}

// Len is the number of rows in the column.
func (c *Column) Len() int {
	switch c.Kind {
	case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
		return len(c.Ints)
	case KindFloat64:
		return len(c.Floats)
	case KindString, KindBytes:
		return len(c.Strs)
	}
	return len(c.Values)
}

// IsNull reports whether row i is NULL.
func (c *Column) IsNull(i int) bool {
	if c.Nulls != nil && c.Nulls[i] {
		return true
	}
	return c.Kind.InValues() && c.Values[i].IsNull()
}

// Value returns row i as a Value.
func (c *Column) Value(i int) Value {
	if c.Nulls != nil && c.Nulls[i] {
		return Null()
	}
	switch c.Kind {
	case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
		return Value{kind: c.Kind, i: c.Ints[i]}
	case KindFloat64:
		return Float(c.Floats[i])
	case KindString, KindBytes:
		return Value{kind: c.Kind, s: c.Strs[i]}
	}
	return c.Values[i]
}

// Append adds v at the end. v must be NULL or of the column's kind; a value of
// another kind is an error (the caller converts first).
func (c *Column) Append(v Value) error {
	n := c.Len()
	if v.kind == KindNull {
		if c.Nulls == nil {
			c.Nulls = make([]bool, n, cap(c.Ints)+cap(c.Floats)+cap(c.Strs)+cap(c.Values)+1)
		}
		c.Nulls = append(c.Nulls, true)
		switch c.Kind {
		case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
			c.Ints = append(c.Ints, 0)
		case KindFloat64:
			c.Floats = append(c.Floats, 0)
		case KindString, KindBytes:
			c.Strs = append(c.Strs, "")
		default:
			c.Values = append(c.Values, Null())
		}
		return nil
	}
	if v.kind != c.Kind {
		return fmt.Errorf("value of type %s in a %s column", v.kind, c.Kind)
	}
	if c.Nulls != nil {
		c.Nulls = append(c.Nulls, false)
	}
	switch c.Kind {
	case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
		c.Ints = append(c.Ints, v.i)
	case KindFloat64:
		c.Floats = append(c.Floats, math.Float64frombits(uint64(v.i)))
	case KindString, KindBytes:
		c.Strs = append(c.Strs, v.s)
	default:
		c.Values = append(c.Values, v)
	}
	return nil
}

// zero sets row i's slot to the zero value of the column's kind.
func (c *Column) zero(i int) {
	switch c.Kind {
	case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
		c.Ints[i] = 0
	case KindFloat64:
		c.Floats[i] = 0
	case KindString, KindBytes:
		c.Strs[i] = ""
	default:
		c.Values[i] = Null()
	}
}

// Batch is a set of rows with one schema, stored by column.
type Batch struct {
	Schema  Schema
	Columns []*Column
	rows    int

	// Rescued and Malformed are what a source's Read says of the records
	// it read: those kept with their text in a rescued data column, and
	// those that did not parse or fit and were not rescued (dropped, or kept
	// with NULLs). A micro-batch records them in its metrics; transforms do
	// not carry them.
	Rescued, Malformed int64

	// origin is where the rows are stored, when they are some of a
	// table's stored rows (see SetStored).
	origin *storedOrigin
}

// NewBatch makes an empty batch for schema with room for capacity rows.
func NewBatch(schema Schema, capacity int) *Batch {
	b := &Batch{Schema: schema, Columns: make([]*Column, len(schema.Fields))}
	for i, f := range schema.Fields {
		b.Columns[i] = NewColumn(f.Type.Kind, capacity)
	}
	return b
}

// BatchOf builds a batch from columns that already hold their rows. Every
// column must have the same length and the kind of its field.
func BatchOf(schema Schema, cols []*Column) (*Batch, error) {
	if len(cols) != len(schema.Fields) {
		return nil, fmt.Errorf("batch has %d columns for a schema of %d", len(cols), len(schema.Fields))
	}
	n := 0
	for i, c := range cols {
		if c == nil {
			return nil, fmt.Errorf("column %q is missing", schema.Fields[i].Name)
		}
		if c.Kind != schema.Fields[i].Type.Kind {
			return nil, fmt.Errorf("column %q is %s in a batch whose schema says %s", schema.Fields[i].Name, c.Kind, schema.Fields[i].Type.Kind)
		}
		if i == 0 {
			n = c.Len()
		} else if c.Len() != n {
			return nil, fmt.Errorf("column %q has %d rows, column %q has %d", schema.Fields[i].Name, c.Len(), schema.Fields[0].Name, n)
		}
		if c.Nulls != nil && len(c.Nulls) != n {
			return nil, fmt.Errorf("column %q has %d null marks for %d rows", schema.Fields[i].Name, len(c.Nulls), n)
		}
	}
	return &Batch{Schema: schema, Columns: cols, rows: n}, nil
}

// NoColumns is a batch of n rows and no columns: what a query without FROM
// reads, and what a projection of no columns keeps.
func NoColumns(n int) *Batch { return &Batch{rows: n} }

// Len is the number of rows.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return b.rows
}

// AppendRow adds one row; values are in schema order.
func (b *Batch) AppendRow(vals ...Value) error {
	if len(vals) != len(b.Columns) {
		return fmt.Errorf("row has %d values for %d columns", len(vals), len(b.Columns))
	}
	b.origin = nil // the rows are no longer only stored ones
	for i, v := range vals {
		if err := b.Columns[i].Append(v); err != nil {
			// Undo the columns already extended so the batch stays rectangular.
			for j := 0; j < i; j++ {
				b.Columns[j].Truncate(b.rows)
			}
			return fmt.Errorf("column %q: %w", b.Schema.Fields[i].Name, err)
		}
	}
	b.rows++
	return nil
}

// Truncate keeps the first n rows.
func (c *Column) Truncate(n int) {
	if c.Nulls != nil {
		c.Nulls = c.Nulls[:n]
	}
	switch c.Kind {
	case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
		c.Ints = c.Ints[:n]
	case KindFloat64:
		c.Floats = c.Floats[:n]
	case KindString, KindBytes:
		c.Strs = c.Strs[:n]
	default:
		c.Values = c.Values[:n]
	}
}

// Row returns row i as values in schema order.
func (b *Batch) Row(i int) []Value {
	out := make([]Value, len(b.Columns))
	for j, c := range b.Columns {
		out[j] = c.Value(i)
	}
	return out
}

// Rows returns every row; for tests and small outputs.
func (b *Batch) Rows() [][]Value {
	out := make([][]Value, b.Len())
	for i := range out {
		out[i] = b.Row(i)
	}
	return out
}

// SelectColumns returns a batch of the columns whose index is in keep, in
// that order, sharing them with b.
func (b *Batch) SelectColumns(keep []int) *Batch {
	fields := make([]Field, len(keep))
	cols := make([]*Column, len(keep))
	for i, j := range keep {
		fields[i], cols[i] = b.Schema.Fields[j], b.Columns[j]
	}
	return &Batch{Schema: NewSchema(fields...), Columns: cols, rows: b.Len()}
}

// Select returns a batch of the rows whose index is in keep, in that order.
func (b *Batch) Select(keep []int) *Batch {
	cols := make([]*Column, len(b.Columns))
	for j, c := range b.Columns {
		nc := &Column{Kind: c.Kind}
		if c.Nulls != nil {
			nc.Nulls = make([]bool, len(keep))
			for k, i := range keep {
				nc.Nulls[k] = c.Nulls[i]
			}
		}
		switch c.Kind {
		case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
			nc.Ints = make([]int64, len(keep))
			for k, i := range keep {
				nc.Ints[k] = c.Ints[i]
			}
		case KindFloat64:
			nc.Floats = make([]float64, len(keep))
			for k, i := range keep {
				nc.Floats[k] = c.Floats[i]
			}
		case KindString, KindBytes:
			nc.Strs = make([]string, len(keep))
			for k, i := range keep {
				nc.Strs[k] = c.Strs[i]
			}
		default:
			nc.Values = make([]Value, len(keep))
			for k, i := range keep {
				nc.Values[k] = c.Values[i]
			}
		}
		cols[j] = nc
	}
	out := &Batch{Schema: b.Schema, Columns: cols, rows: len(keep)}
	if b.origin != nil {
		out.KeepRowsOf(b, keep)
	}
	return out
}

// Extend appends the rows of more to b, in b's own columns (in place where
// they have room), and reports true, when every batch of more has b's
// schema; otherwise it changes nothing and reports false (Concat joins
// batches of different schemas). It is for a caller that owns b, as a
// decoder owns the parts it decoded: any slice that shares b's columns'
// arrays may see them written.
func (b *Batch) Extend(more ...*Batch) bool {
	for _, m := range more {
		if !m.Schema.Equal(b.Schema) || len(m.Columns) != len(b.Columns) {
			return false
		}
		for j, c := range m.Columns {
			if c.Kind != b.Columns[j].Kind {
				return false
			}
		}
	}
	b.origin = nil // the rows are no longer only stored ones
	for _, m := range more {
		for j, c := range m.Columns {
			appendColumn(b.Columns[j], c, m.Len())
		}
		b.rows += m.Len()
	}
	return true
}

// Concat joins batches into one. Columns are matched by name; the result has
// every column of every batch, in order of first appearance. A column missing
// from a batch is NULL there (and so nullable), and a column that is bigint in
// one batch and double in another becomes double. Any other difference of
// type is an error.
func Concat(batches ...*Batch) (*Batch, error) {
	var parts []*Batch
	for _, b := range batches {
		if b != nil && (b.Len() > 0 || len(b.Columns) > 0) {
			parts = append(parts, b)
		}
	}
	switch len(parts) {
	case 0:
		return &Batch{}, nil
	case 1:
		return parts[0], nil
	}
	schema, err := unifySchemas(parts)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, b := range parts {
		total += b.Len()
	}
	out := NewBatch(schema, total)
	for j, f := range schema.Fields {
		dst := out.Columns[j]
		for _, b := range parts {
			k := b.Schema.Index(f.Name)
			if k < 0 {
				for i := 0; i < b.Len(); i++ {
					_ = dst.Append(Null())
				}
				continue
			}
			src := b.Columns[k]
			if f.Type.Kind == KindDecimal && !b.Schema.Fields[k].Type.Equal(f.Type) {
				src, _ = DecimalColumn(src, b.Len(), f.Type) // unifySchemas chose a type that holds it
			}
			appendColumn(dst, src, b.Len())
		}
	}
	out.rows = total
	out.origin = concatOrigin(parts)
	return out, nil
}

// ConcatByPosition stacks batches whose columns match schema by position
// (SQL's UNION ALL): names do not matter, kinds must match the schema's.
func ConcatByPosition(schema Schema, batches ...*Batch) (*Batch, error) {
	total := 0
	for _, b := range batches {
		if len(b.Columns) != len(schema.Fields) {
			return nil, fmt.Errorf("a batch of %d columns stacked under a schema of %d", len(b.Columns), len(schema.Fields))
		}
		for j, c := range b.Columns {
			if k := schema.Fields[j].Type.Kind; c.Kind != k && c.Kind != KindNull {
				return nil, fmt.Errorf("column %d is %s in a batch stacked under %s", j+1, c.Kind, k)
			}
		}
		total += b.Len()
	}
	out := NewBatch(schema, total)
	for j := range schema.Fields {
		for _, b := range batches {
			appendColumn(out.Columns[j], b.Columns[j], b.Len())
		}
	}
	out.rows = total
	return out, nil
}

func unifySchemas(parts []*Batch) (Schema, error) {
	var fields []Field
	for bi, b := range parts {
		for _, f := range b.Schema.Fields {
			i := Schema{Fields: fields}.Index(f.Name)
			if i < 0 {
				if bi > 0 {
					f.Nullable = true
				}
				fields = append(fields, f)
				continue
			}
			cur := &fields[i]
			cur.Nullable = cur.Nullable || f.Nullable
			switch {
			case cur.Type.Equal(f.Type):
			case cur.Type.Kind == KindInt64 && f.Type.Kind == KindFloat64:
				cur.Type = TypeFloat64
			case cur.Type.Kind == KindFloat64 && f.Type.Kind == KindInt64:
			case cur.Type.Kind == f.Type.Kind && (f.Type.Kind == KindInt64 || f.Type.Kind == KindFloat64):
				if f.Type.Width() > cur.Type.Width() {
					cur.Type = f.Type // the wider of two integers or floats
				}
			case decimalHolds(cur.Type, f.Type), dateToNTZ(cur.Type, f.Type):
			case decimalHolds(f.Type, cur.Type), dateToNTZ(f.Type, cur.Type):
				cur.Type = f.Type
			case cur.Type.Kind == KindDecimal && f.Type.Kind == KindDecimal:
				w, ok := WiderDecimal(cur.Type, f.Type)
				if !ok {
					return Schema{}, Errorf(CodeSchemaDrift, "column %q is %s in one batch and %s in another, and no decimal holds both", f.Name, cur.Type, f.Type).
						WithHint("cast the column to one type in the flow's query").WithNames(f.Name)
				}
				cur.Type = w
			case cur.Type.Kind == KindNull:
				cur.Type, cur.Nullable = f.Type, true
			case f.Type.Kind == KindNull:
				cur.Nullable = true
			default:
				return Schema{}, Errorf(CodeSchemaDrift, "column %q is %s in one batch and %s in another", f.Name, cur.Type, f.Type).
					WithHint("cast the column to one type in the flow's query").WithNames(f.Name)
			}
		}
	}
	for _, b := range parts {
		for i := range fields {
			if b.Schema.Index(fields[i].Name) < 0 {
				fields[i].Nullable = true
			}
		}
	}
	return Schema{Fields: fields}, nil
}

// microsPerDay turns a date (days) into its midnight (microseconds).
const microsPerDay = 86400_000_000

// appendColumn appends the first n rows of src to dst, converting bigint to
// double when dst is double.
func appendColumn(dst, src *Column, n int) {
	if src.Nulls != nil && src.Kind == dst.Kind {
		// the same kind: the slices are appended as they are, and a NULL
		// row's slot is set to the zero value, as Append leaves it
		at := dst.Len()
		if dst.Nulls == nil {
			dst.Nulls = make([]bool, at, at+n)
		}
		dst.Nulls = append(dst.Nulls, src.Nulls[:n]...)
		switch dst.Kind {
		case KindBool, KindInt64, KindTimestamp, KindDate, KindYearMonthInterval, KindDayTimeInterval:
			dst.Ints = append(dst.Ints, src.Ints[:n]...)
		case KindFloat64:
			dst.Floats = append(dst.Floats, src.Floats[:n]...)
		case KindString, KindBytes:
			dst.Strs = append(dst.Strs, src.Strs[:n]...)
		default:
			dst.Values = append(dst.Values, src.Values[:n]...)
		}
		for i, isNull := range src.Nulls[:n] {
			if isNull {
				dst.zero(at + i)
			}
		}
		return
	}
	if src.Nulls != nil || (src.Kind == KindNull && dst.Kind != KindNull) {
		for i := 0; i < n; i++ {
			v := src.Value(i)
			switch {
			case v.kind == KindInt64 && dst.Kind == KindFloat64:
				v = Float(float64(v.i))
			case v.kind == KindDate && dst.Kind == KindTimestamp:
				v = TimestampMicros(v.i * microsPerDay)
			}
			_ = dst.Append(v)
		}
		return
	}
	if dst.Nulls != nil {
		dst.Nulls = append(dst.Nulls, make([]bool, n)...)
	}
	switch {
	case dst.Kind == KindFloat64 && src.Kind == KindInt64:
		for _, x := range src.Ints[:n] {
			dst.Floats = append(dst.Floats, float64(x))
		}
	case dst.Kind == KindFloat64:
		dst.Floats = append(dst.Floats, src.Floats[:n]...)
	case dst.Kind == KindTimestamp && src.Kind == KindDate:
		for _, d := range src.Ints[:n] {
			dst.Ints = append(dst.Ints, d*microsPerDay)
		}
	case src.Ints != nil || dst.Ints != nil:
		dst.Ints = append(dst.Ints, src.Ints[:n]...)
	case dst.Kind == KindString || dst.Kind == KindBytes:
		dst.Strs = append(dst.Strs, src.Strs[:n]...)
	default:
		dst.Values = append(dst.Values, src.Values[:n]...)
	}
}
