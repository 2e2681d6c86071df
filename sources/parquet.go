package sources

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/internal/parquetvariant"
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

// parquetColumn is a node of a Parquet file's schema as sluice reads it:
// its type, and what assembling a value from the leaf columns' values needs
// (the record assembly of the Dremel paper).
type parquetColumn struct {
	name string
	t    domain.Type
	// def is the definition level of the node when it has a value; rep,
	// for a list or a map, is the repetition level of its elements
	def, rep int
	leaf     int              // a leaf's column index
	kids     []*parquetColumn // a struct's fields; a list's element; a map's key and value; a variant's metadata and value
	variant  bool
	// scale reads a leaf's non-null value; ok is false for a value the
	// type cannot hold
	scale func(v parquet.Value) (out domain.Value, ok bool)
}

// julianUnixEpoch is the Julian day of 1970-01-01, for INT96 timestamps.
const julianUnixEpoch = 2440588

// parquetColumns maps the top-level columns of a Parquet schema, with
// Spark's reading of Parquet types.
func parquetColumns(path string, schema *parquet.Schema) ([]*parquetColumn, error) {
	var cols []*parquetColumn
	leaves := 0
	for _, field := range schema.Fields() {
		c, err := parquetNode(path, field.Name(), field, 0, 0, &leaves)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// parquetNode maps one node; def and rep are its parent's levels, leaves
// counts the leaf columns before it.
func parquetNode(path, name string, n parquet.Node, def, rep int, leaves *int) (*parquetColumn, error) {
	if n.Repeated() { // a repeated field outside a LIST group: a list of it
		def, rep = def+1, rep+1
		elem, err := parquetNode(path, name, parquet.Required(n), def, rep, leaves)
		if err != nil {
			return nil, err
		}
		return &parquetColumn{name: name, t: domain.ListOf(elem.t), def: def - 1, rep: rep, kids: []*parquetColumn{elem}}, nil
	}
	if n.Optional() {
		def++
	}
	c := &parquetColumn{name: name, def: def}
	var lt format.LogicalTypeValue
	if l := n.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	unreadable := func(what string) error {
		return domain.Errorf(domain.CodeFileUnreadable, "file %s: column %q %s, which sluice does not read", path, name, what).
			WithHint("write the column as another type, or use JSON lines").WithNames(path)
	}
	if n.Leaf() {
		if err := parquetLeaf(path, c, n, lt); err != nil {
			return nil, err
		}
		c.leaf = *leaves
		*leaves++
		return c, nil
	}
	fields := n.Fields()
	switch lt.(type) {
	case *format.ListType:
		if len(fields) != 1 || !fields[0].Repeated() {
			return nil, unreadable("is a LIST whose group is not one repeated field")
		}
		inner := fields[0]
		// Three levels (a repeated group of one field, the element), or two
		// (the repeated field is the element), as the format's rules for
		// reading old files say.
		elemNode, elemName := parquet.Required(inner), name
		if !inner.Leaf() && len(inner.Fields()) == 1 && inner.Name() != "array" && inner.Name() != name+"_tuple" {
			elemNode, elemName = inner.Fields()[0], inner.Fields()[0].Name()
		}
		elem, err := parquetNode(path, elemName, elemNode, def+1, rep+1, leaves)
		if err != nil {
			return nil, err
		}
		c.t, c.rep, c.kids = domain.ListOf(elem.t), rep+1, []*parquetColumn{elem}
		return c, nil
	case *format.MapType:
		if len(fields) != 1 || !fields[0].Repeated() || len(fields[0].Fields()) != 2 {
			return nil, unreadable("is a MAP whose group is not one repeated group of a key and a value")
		}
		kv := fields[0].Fields()
		key, err := parquetNode(path, kv[0].Name(), kv[0], def+1, rep+1, leaves)
		if err != nil {
			return nil, err
		}
		value, err := parquetNode(path, kv[1].Name(), kv[1], def+1, rep+1, leaves)
		if err != nil {
			return nil, err
		}
		c.t, c.rep, c.kids = domain.MapOf(key.t, value.t), rep+1, []*parquetColumn{key, value}
		return c, nil
	case *format.VariantType:
		if len(fields) != 2 || fields[0].Name() != "metadata" || fields[1].Name() != "value" {
			return nil, unreadable("is a shredded VARIANT")
		}
		c.t, c.variant = domain.TypeVariant, true
		for _, f := range fields {
			kid, err := parquetNode(path, f.Name(), f, def, rep, leaves)
			if err != nil {
				return nil, err
			}
			c.kids = append(c.kids, kid)
		}
		return c, nil
	}
	var st []domain.Field
	for _, f := range fields {
		kid, err := parquetNode(path, f.Name(), f, def, rep, leaves)
		if err != nil {
			return nil, err
		}
		c.kids = append(c.kids, kid)
		st = append(st, domain.Field{Name: f.Name(), Type: kid.t, Nullable: !f.Required()})
	}
	c.t = domain.StructOf(st...)
	return c, nil
}

// parquetLeaf sets the type and reader of a leaf column.
func parquetLeaf(path string, c *parquetColumn, n parquet.Node, lt format.LogicalTypeValue) error {
	if dec, ok := lt.(*format.DecimalType); ok {
		p, s := int(dec.Precision), int(dec.Scale)
		if p < 1 || p > domain.MaxDecimalPrecision || s < 0 || s > p {
			return domain.Errorf(domain.CodeFileUnreadable, "file %s: column %q is DECIMAL(%d, %d); sluice reads decimals of 1 to %d digits", path, c.name, p, s, domain.MaxDecimalPrecision).
				WithHint("write the column as a double or a string").WithNames(path)
		}
		c.t, c.scale = domain.DecimalType(p, s), decimalScale(n.Type().Kind(), p, s)
		return nil
	}
	bitWidth, unsigned := 0, false
	if it, ok := lt.(*format.IntType); ok {
		bitWidth, unsigned = int(it.BitWidth), !it.IsSigned
	}
	switch n.Type().Kind() {
	case parquet.Boolean:
		c.t, c.scale = domain.TypeBool, func(v parquet.Value) (domain.Value, bool) { return domain.Bool(v.Boolean()), true }
	case parquet.Int32:
		switch _, date := lt.(*format.DateType); {
		case date:
			c.t, c.scale = domain.TypeDate, func(v parquet.Value) (domain.Value, bool) { return domain.DateDays(int64(v.Int32())), true }
		case unsigned: // Spark reads UINT8, UINT16 and UINT32 as the next wider signed type
			c.t = map[int]domain.Type{8: domain.TypeInt16, 16: domain.TypeInt32}[bitWidth]
			if c.t.Kind == domain.KindNull {
				c.t = domain.TypeInt64
			}
			c.scale = func(v parquet.Value) (domain.Value, bool) { return domain.Int(int64(uint32(v.Int32()))), true }
		default:
			c.t = map[int]domain.Type{8: domain.TypeInt8, 16: domain.TypeInt16}[bitWidth]
			if c.t.Kind == domain.KindNull {
				c.t = domain.TypeInt32
			}
			lo, hi := c.t.IntRange()
			c.scale = func(v parquet.Value) (domain.Value, bool) {
				i := int64(v.Int32())
				return domain.Int(i), i >= lo && i <= hi
			}
		}
	case parquet.Int64:
		c.t, c.scale = domain.TypeInt64, func(v parquet.Value) (domain.Value, bool) { return domain.Int(v.Int64()), true }
		if unsigned {
			c.scale = func(v parquet.Value) (domain.Value, bool) { return domain.Int(v.Int64()), v.Int64() >= 0 }
		}
		if ts, ok := lt.(*format.TimestampType); ok {
			unit := ts.Unit.Value
			c.t = domain.TypeTimestamp
			if !ts.IsAdjustedToUTC {
				c.t = domain.TypeTimestampNTZ
			}
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
		c.t, c.scale = domain.TypeTimestamp, func(v parquet.Value) (domain.Value, bool) {
			i := v.Int96()
			nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
			days := int64(i[2]) - julianUnixEpoch
			return domain.TimestampMicros(days*86400_000_000 + floorDiv(nanos, 1000)), true
		}
	case parquet.Float:
		c.t, c.scale = domain.TypeFloat32, func(v parquet.Value) (domain.Value, bool) { return domain.Float(float64(v.Float())), true }
	case parquet.Double:
		c.t, c.scale = domain.TypeFloat64, func(v parquet.Value) (domain.Value, bool) { return domain.Float(v.Double()), true }
	case parquet.ByteArray, parquet.FixedLenByteArray:
		switch lt.(type) {
		case *format.StringType, *format.JsonType, *format.EnumType:
			c.t, c.scale = domain.TypeString, func(v parquet.Value) (domain.Value, bool) { return domain.String(string(v.ByteArray())), true }
		default:
			c.t, c.scale = domain.TypeBytes, func(v parquet.Value) (domain.Value, bool) { return domain.Bytes(v.ByteArray()), true }
		}
	default:
		return domain.Errorf(domain.CodeFileUnreadable, "file %s: column %q has Parquet type %s, which sluice does not read", path, c.name, n.Type()).WithNames(path)
	}
	return nil
}

// firstLeaf is the leftmost leaf under c: its values say whether c is NULL,
// empty, or has another element.
func (c *parquetColumn) firstLeaf() int {
	for len(c.kids) > 0 {
		c = c.kids[0]
	}
	return c.leaf
}

// parquetRow assembles the values of one row's top-level columns from its
// leaf values.
type parquetRow struct {
	byLeaf [][]parquet.Value // the row's values of each leaf column
	at     []int             // the next value of each leaf column
}

func (r *parquetRow) reset(row parquet.Row, leaves int) {
	if len(r.byLeaf) != leaves {
		r.byLeaf, r.at = make([][]parquet.Value, leaves), make([]int, leaves)
	}
	for l := range r.byLeaf {
		r.byLeaf[l], r.at[l] = r.byLeaf[l][:0], 0
	}
	for _, v := range row {
		if c := v.Column(); c >= 0 && c < leaves {
			r.byLeaf[c] = append(r.byLeaf[c], v)
		}
	}
}

// peek is the next value of leaf column l; ok is false past the row's last.
func (r *parquetRow) peek(l int) (parquet.Value, bool) {
	if r.at[l] >= len(r.byLeaf[l]) {
		return parquet.Value{}, false
	}
	return r.byLeaf[l][r.at[l]], true
}

// skip passes over one value of each leaf under c: c's NULL or emptiness.
func (r *parquetRow) skip(c *parquetColumn) {
	if len(c.kids) == 0 {
		r.at[c.leaf]++
		return
	}
	for _, k := range c.kids {
		r.skip(k)
	}
}

// leafMisfit is a leaf value its column's type cannot hold.
type leafMisfit struct {
	c *parquetColumn
	v parquet.Value
}

func (e *leafMisfit) Error() string { return fmt.Sprintf("value %s does not fit a %s", e.v, e.c.t) }

// leaf reads a non-null value of a leaf column.
func (r *parquetRow) leaf(c *parquetColumn, v parquet.Value) (domain.Value, error) {
	out, ok := c.scale(v)
	if !ok {
		return domain.Null(), &leafMisfit{c: c, v: v}
	}
	return out, nil
}

// value assembles the next value of c; a leaf value that does not fit is a
// *leafMisfit.
func (r *parquetRow) value(c *parquetColumn) (domain.Value, error) {
	first, ok := r.peek(c.firstLeaf())
	if !ok || first.DefinitionLevel() < c.def {
		r.skip(c)
		return domain.Null(), nil
	}
	switch {
	case c.variant:
		meta, _ := r.peek(c.kids[0].leaf)
		value, _ := r.peek(c.kids[1].leaf)
		r.skip(c)
		text, err := parquetvariant.Decode(meta.ByteArray(), value.ByteArray())
		if err != nil {
			return domain.Null(), err
		}
		return domain.String(text), nil
	case len(c.kids) == 0:
		r.at[c.leaf]++
		return r.leaf(c, first)
	case c.t.Kind == domain.KindStruct:
		fields := make([]domain.Value, len(c.kids))
		for i, k := range c.kids {
			var err error
			if fields[i], err = r.value(k); err != nil {
				return domain.Null(), err
			}
		}
		return domain.Struct(fields...), nil
	}
	if first.DefinitionLevel() == c.def { // an empty list or map
		r.skip(c)
		if c.t.Kind == domain.KindMap {
			return domain.Map(), nil
		}
		return domain.List(), nil
	}
	var items []domain.Value
	for {
		parts := make([]domain.Value, len(c.kids))
		for i, k := range c.kids {
			var err error
			if parts[i], err = r.value(k); err != nil {
				return domain.Null(), err
			}
		}
		if c.t.Kind == domain.KindMap {
			items = append(items, domain.MapEntry(parts[0], parts[1]))
		} else {
			items = append(items, parts[0])
		}
		if next, ok := r.peek(c.firstLeaf()); !ok || next.RepetitionLevel() != c.rep {
			break
		}
	}
	if c.t.Kind == domain.KindMap {
		return domain.Map(items...), nil
	}
	return domain.List(items...), nil
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
	if b.declared == nil {
		for _, c := range cols {
			b.typedColumn(domain.Field{Name: c.name, Type: c.t, Nullable: true})
		}
	}
	leaves := len(pf.Schema().Columns())
	var assembled parquetRow
	flat := true // every top-level column a leaf: a value per column, in order
	for _, c := range cols {
		flat = flat && len(c.kids) == 0
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
			if flat {
				for _, pv := range row {
					c := cols[pv.Column()]
					v, err := domain.Null(), error(nil)
					if !pv.IsNull() {
						v, err = assembled.leaf(c, pv)
					}
					if err != nil {
						return domain.Errorf(domain.CodeFileUnreadable, "file %s, row %d: column %q: %v", path, b.currentLine, c.name, err).WithNames(path)
					}
					b.set(c.name, v)
				}
			} else {
				assembled.reset(row, leaves)
				for _, c := range cols {
					v, err := assembled.value(c)
					if err != nil {
						return domain.Errorf(domain.CodeFileUnreadable, "file %s, row %d: column %q: %v", path, b.currentLine, c.name, err).WithNames(path)
					}
					b.set(c.name, v)
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
