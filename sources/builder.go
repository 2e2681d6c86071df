package sources

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
)

// RescuedDataColumn is the column that keeps what a source could not fit in a
// row when the flow opts to rescue bad records (the Auto Loader convention).
const RescuedDataColumn = "_rescued_data"

// builder accumulates decoded rows into typed columns. Without a declared
// schema it infers column types: bigint widens to double, and any other clash
// makes the column a string (as Spark's JSON inference does), holding each
// value as it was written. With a declared schema, values are converted to the
// declared types and the rest is a bad record: an error, or, when rescuing,
// kept in _rescued_data.
//
// Column names are matched as domain.Schema.Index matches them: ignoring case
// (Unicode simple folding), so a batch never has two columns Index cannot
// tell apart.
type builder struct {
	declared *domain.Schema
	rescue   bool   // keep bad records' text in the rescued data column
	rescueAs string // that column's name
	onBad    badPolicy
	// newColumns is what a field the declared schema lacks does: rescued
	// (when rescuing; else left out), or fails the record
	failOnNewColumns bool
	// parseDate and parseTimestamp read dates and timestamps from text
	// (dateFormat, timestampFormat); nil: ISO 8601
	parseDate, parseTimestamp func(string) (int64, bool)
	cols                      []*colBuilder
	index                     map[string]*colBuilder // by name as written, and by folded name
	rows                      int
	capHint                   int // the rows expected in all: room to make in new columns

	// slots remembers the column of each key position of the previous
	// record, so that records with their keys in the same order as the
	// previous one (the common case) find their columns without a map lookup.
	slots []slot

	rescued     *domain.Column          // _rescued_data, when rescuing
	rowRescue   map[string]domain.Value // what the current row could not fit
	bad         []badValue              // why the current row is bad, when failing
	rowBad      bool                    // the current row has a value that does not fit (badNull, badDrop)
	rescuedRows int64                   // rows kept with rescued data
	notRescued  int64                   // bad records not rescued: dropped, or kept with NULLs
	currentFile string
	currentLine int
	lineBase    int // lines of the file before the data being decoded
}

// badValue is a value of the current row that does not fit its column.
type badValue struct {
	col       *colBuilder // nil: no such column
	reason    string
	newColumn bool // a field the schema lacks (schemaEvolutionMode failOnNewColumns)
}

type slot struct {
	key string
	col *colBuilder
}

type colBuilder struct {
	field   domain.Field
	col     *domain.Column
	capHint int // the builder's capHint
	// raw holds, while inferring a column that is not (yet) a string, each
	// value's text as written where it differs from how the value prints
	// ("" elsewhere), so that the column can become a string column that
	// keeps 1.50 as "1.50" and 007 as "007". It stays nil until a value
	// comes with such a text.
	raw []string
}

// badPolicy is what a record that does not parse or fit does (Spark's
// mode option).
type badPolicy uint8

const (
	badFail   badPolicy = iota // fails the micro-batch (FAILFAST)
	badRescue                  // kept, NULL where it does not fit, its text in the rescued data column (PERMISSIVE)
	badNull                    // kept, NULL where it does not fit (PERMISSIVE without a rescued data column)
	badDrop                    // left out, counted (DROPMALFORMED)
)

// newBuilder starts a batch; rescue keeps bad records' text in the column
// RescuedDataColumn, and a bad record fails the micro-batch without it.
func newBuilder(declared *domain.Schema, rescue bool) *builder {
	policy := badFail
	if rescue {
		policy = badRescue
	}
	return newBuilderFor(declared, policy, RescuedDataColumn)
}

// newBuilderFor starts a batch whose bad records follow policy; with
// badRescue their text goes to the column rescueAs.
func newBuilderFor(declared *domain.Schema, policy badPolicy, rescueAs string) *builder {
	rescue := policy == badRescue
	b := &builder{declared: declared, rescue: rescue, rescueAs: rescueAs, onBad: policy, index: map[string]*colBuilder{}}
	if declared != nil {
		for _, f := range declared.Fields {
			b.addColumn(f)
		}
	}
	if rescue {
		b.rescued = domain.NewColumn(domain.KindString, 0)
	}
	return b
}

func (b *builder) addColumn(f domain.Field) *colBuilder {
	c := &colBuilder{field: f, capHint: b.capHint}
	if f.Type.Kind == domain.KindNull {
		c.col = domain.NewColumn(f.Type.Kind, 0) // room is made when it takes a type
	} else {
		c.col = domain.NewColumn(f.Type.Kind, b.capHint)
	}
	b.index[f.Name] = c
	b.index[foldName(f.Name)] = c
	b.cols = append(b.cols, c)
	return c
}

// reserve makes room for n more rows in the columns, and in columns to come,
// so that they do not grow step by step (a decoder knows about how many rows
// a file has: its lines).
func (b *builder) reserve(n int) {
	b.capHint = max(b.capHint, b.rows+n) // a piece's reserve does not undo the batch's
	for _, c := range b.cols {
		c.capHint = b.capHint
		if c.col.Kind != domain.KindNull {
			growColumn(c.col, n)
		}
	}
	if b.rescued != nil {
		growColumn(b.rescued, n)
	}
}

// growColumn makes room for n more rows in c.
func growColumn(c *domain.Column, n int) {
	if c.Nulls != nil {
		c.Nulls = slices.Grow(c.Nulls, n)
	}
	switch c.Kind {
	case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate:
		c.Ints = slices.Grow(c.Ints, n)
	case domain.KindFloat64:
		c.Floats = slices.Grow(c.Floats, n)
	case domain.KindString, domain.KindBytes:
		c.Strs = slices.Grow(c.Strs, n)
	default:
		c.Values = slices.Grow(c.Values, n)
	}
}

// foldName maps a name to one spelling per class of names that
// strings.EqualFold (and so domain.Schema.Index) takes as equal: each rune
// becomes the smallest rune of its simple case folding orbit.
func foldName(name string) string {
	ascii := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < len(name); i++ {
			if c := name[i]; c >= 'A' && c <= 'Z' {
				return strings.ToLower(name)
			}
		}
		return name
	}
	var sb strings.Builder
	for _, r := range name { // invalid UTF-8 reads as U+FFFD, as in EqualFold
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		sb.WriteRune(low)
	}
	return sb.String()
}

// column finds the builder of a column, creating it when inferring. It
// returns nil for a name that has no column: not in the declared schema, or
// the rescued data column itself when rescuing.
func (b *builder) column(name string) *colBuilder {
	if c, ok := b.index[name]; ok {
		return c
	}
	folded := foldName(name)
	if c, ok := b.index[folded]; ok {
		b.index[name] = c
		return c
	}
	if b.declared != nil || (b.rescue && folded == RescuedDataColumn) {
		return nil
	}
	c := b.addColumn(domain.Field{Name: name, Type: domain.Type{Kind: domain.KindNull}, Nullable: true})
	for c.col.Len() < b.rows {
		c.appendNull()
	}
	return c
}

// typedColumn gives a column the type a file's own schema declares
// (Parquet), when inferring, so that an INT stays an INT and an empty list
// has its element type. A column already typed otherwise by an earlier file
// of the batch keeps its type where that holds the values, and takes the
// new one where the new one holds the old values.
func (b *builder) typedColumn(f domain.Field) {
	c := b.column(f.Name)
	switch have := c.field.Type; {
	case have.Kind == domain.KindNull:
		c.col = domain.NewColumn(f.Type.Kind, max(c.col.Len(), c.capHint))
		for range b.rows {
			c.appendNull()
		}
		c.field.Type = f.Type
	case have.Kind == f.Type.Kind && (have.Kind == domain.KindInt64 || have.Kind == domain.KindFloat64) && f.Type.Width() > have.Width():
		c.field.Type = f.Type
	}
}

// columnAt is column for the key at position i of a record.
func (b *builder) columnAt(i int, name string) *colBuilder {
	if i < len(b.slots) && b.slots[i].key == name {
		// The slot takes the reader's string: the next row's key, the
		// same string again, then compares by its pointer alone.
		b.slots[i].key = name
		return b.slots[i].col
	}
	c := b.column(name)
	if c == nil {
		return nil
	}
	if i < len(b.slots) {
		b.slots[i] = slot{key: name, col: c}
	} else if i == len(b.slots) {
		b.slots = append(b.slots, slot{key: name, col: c})
	}
	return c
}

// appendScalar appends a value of the column's kind, or a NULL, the
// common cases, without building a domain.Value: num holds a boolean, a bigint or a
// double's bits, str a string or a number's text as written. It reports
// false, having done nothing, when put must do the work: another kind, a
// repeated key, no such column.
func (b *builder) appendScalar(c *colBuilder, kind domain.Kind, num int64, str string) bool {
	if kind == domain.KindNull && c != nil && b.declared != nil && c.field.Nullable && !jsonTyped(c.field.Type) && c.col.Len() == b.rows {
		c.appendNull() // a NULL in a declared scalar column that takes one: what put would do
		return true
	}
	if c == nil || kind != c.col.Kind || c.field.Type.Bits != 0 || c.field.Type.Variant {
		return false // narrow types (int, float) are checked by put
	}
	// The text of a number matters only to an inferred column, which may
	// yet become a string column.
	keepRaw := b.declared == nil && (str != "" || c.raw != nil)
	col := c.col
	switch kind {
	case domain.KindString:
		if len(col.Strs) != b.rows {
			return false
		}
		col.Strs = append(col.Strs, str)
	case domain.KindInt64, domain.KindBool:
		if len(col.Ints) != b.rows {
			return false
		}
		col.Ints = append(col.Ints, num)
		if keepRaw {
			c.noteRaw(str)
		}
	case domain.KindFloat64:
		if len(col.Floats) != b.rows {
			return false
		}
		col.Floats = append(col.Floats, math.Float64frombits(uint64(num)))
		if keepRaw {
			c.noteRaw(str)
		}
	default:
		return false
	}
	if col.Nulls != nil {
		col.Nulls = append(col.Nulls, false)
	}
	return true
}

// set puts the value of a column in the current row.
func (b *builder) set(name string, v domain.Value) { b.setRaw(name, v, "") }

// setRaw is set with the value's text as written in the record, if any.
func (b *builder) setRaw(name string, v domain.Value, raw string) {
	b.put(b.column(name), name, v, raw)
}

// put sets the value of column c (nil: no such column) in the current row. A
// type the column cannot take makes the row bad (declared schema) or widens
// the column (inferred).
func (b *builder) put(c *colBuilder, name string, v domain.Value, raw string) {
	b.putAs(c, name, v, raw, nil)
}

// putAs is put with the conversion to a declared column's type done by
// conv, when not nil (a JSON field of a nested, variant or binary column).
func (b *builder) putAs(c *colBuilder, name string, v domain.Value, raw string, conv func(domain.Type) (domain.Value, error)) {
	if c == nil {
		b.reject(nil, name, v, raw, "column is not in the declared schema")
		return
	}
	if c.col.Len() > b.rows { // a repeated key: the last one wins
		c.truncate(b.rows)
		b.bad = slices.DeleteFunc(b.bad, func(bv badValue) bool { return bv.col == c })
		if b.rowRescue != nil {
			delete(b.rowRescue, name)
		}
	}
	if b.declared == nil {
		c.appendInferred(v, raw)
		return
	}
	var cv domain.Value
	var err error
	switch t := c.field.Type; {
	case conv != nil:
		cv, err = conv(t)
	case t.Kind == domain.KindDecimal:
		cv, err = toDecimal(v, raw, t)
	case v.Kind().IsNested():
		cv, err = toType(v, t)
	case (t.Variant || t.Kind.IsNested()) && v.Kind() == domain.KindString:
		// JSON text (a CSV field): a variant of it, or the nested value
		var n *domain.JSONNode
		if n, err = domain.ParseJSON(v.AsString()); err == nil {
			cv, err = jsonAs(n, t)
		}
	default:
		cv, err = b.convert(v, t.Kind)
		if err == nil {
			cv, err = narrow(cv, t)
		}
	}
	if err == nil && raw != "" && c.field.Type.Kind == domain.KindString && v.Kind() != domain.KindString && !v.IsNull() {
		cv = domain.String(raw) // 1.50 stays 1.50
	}
	switch {
	case err != nil:
		b.reject(c, name, v, raw, err.Error())
		cv = domain.Null()
	case cv.IsNull() && !c.field.Nullable:
		b.reject(c, name, v, raw, "column is NOT NULL and the value is null")
	}
	_ = c.col.Append(cv)
}

// reject records that the value of a column does not fit (c nil: a field
// the declared schema lacks), as the bad-record policy says.
func (b *builder) reject(c *colBuilder, name string, v domain.Value, raw, reason string) {
	if c == nil && b.failOnNewColumns {
		b.bad = append(b.bad, badValue{reason: fmt.Sprintf("field %q is not in the schema (value %s)", name, v), newColumn: true})
		return
	}
	switch {
	case b.onBad == badRescue:
		b.rowRescueSet(name, rescuedValue(v, raw))
	case b.onBad == badFail:
		b.bad = append(b.bad, badValue{col: c, reason: fmt.Sprintf("column %q: %s (value %s)", name, reason, v)})
	case c == nil:
		// a field the schema lacks, with nowhere to keep it: left out, as
		// Spark reads it
	default:
		b.rowBad = true
	}
}

// rescuedValue is a value as kept in _rescued_data: its text as written
// (strings as they read), NULL as null.
func rescuedValue(v domain.Value, raw string) domain.Value {
	switch {
	case v.IsNull(), v.Kind() == domain.KindString:
		return v
	case raw != "":
		return domain.String(raw)
	}
	return domain.String(v.String())
}

func (c *colBuilder) appendNull() {
	_ = c.col.Append(domain.Null())
	if c.raw != nil {
		c.raw = append(c.raw, "")
	}
}

// noteRaw records the text of the value just appended to a column that is
// not a string column.
func (c *colBuilder) noteRaw(raw string) {
	if c.raw == nil {
		if raw == "" {
			return
		}
		c.raw = make([]string, c.col.Len()-1, cap(c.col.Ints)+cap(c.col.Floats))
	}
	c.raw = append(c.raw, raw)
}

func (c *colBuilder) truncate(n int) {
	c.col.Truncate(n)
	if c.raw != nil {
		c.raw = c.raw[:n]
	}
}

// appendInferred appends v, changing the column's type when v does not fit.
func (c *colBuilder) appendInferred(v domain.Value, raw string) {
	col := c.col
	k := v.Kind()
	if k == col.Kind && col.Nulls == nil {
		// The common case, without going through Value.
		switch k {
		case domain.KindString, domain.KindBytes:
			col.Strs = append(col.Strs, v.AsString())
			return
		case domain.KindInt64, domain.KindBool, domain.KindTimestamp, domain.KindDate:
			col.Ints = append(col.Ints, v.AsInt())
			if raw != "" || c.raw != nil {
				c.noteRaw(raw)
			}
			return
		case domain.KindFloat64:
			col.Floats = append(col.Floats, v.AsFloat())
			if raw != "" || c.raw != nil {
				c.noteRaw(raw)
			}
			return
		}
	}
	switch {
	case k == domain.KindNull:
		c.appendNull()
		return
	case k == domain.KindDecimal && (col.Kind == domain.KindDecimal || col.Kind == domain.KindNull):
		c.takeDecimal(v)
		return
	case k == col.Kind:
	case col.Kind == domain.KindNull:
		c.retype(k)
	case col.Kind == domain.KindFloat64 && k == domain.KindInt64:
		v = domain.Float(float64(v.AsInt()))
	case col.Kind == domain.KindInt64 && k == domain.KindFloat64:
		c.retype(domain.KindFloat64)
	case col.Kind == domain.KindString:
		v = domain.String(textOf(v, raw))
	default:
		c.retype(domain.KindString)
		v = domain.String(textOf(v, raw))
	}
	_ = c.col.Append(v)
	if c.col.Kind != domain.KindString && c.col.Kind != domain.KindBytes {
		c.noteRaw(raw)
	}
}

// takeDecimal makes the column's type one that holds the decimal v as well
// as the column's values (files of one batch may declare different
// decimals), and v of that type; beyond 38 digits, the column becomes a
// string column.
func (c *colBuilder) takeDecimal(v domain.Value) {
	vt := domain.DecimalType(v.Precision(), v.Scale())
	if c.col.Kind == domain.KindNull {
		c.retype(domain.KindDecimal)
		c.field.Type = vt
	}
	if c.field.Type.Equal(vt) {
		_ = c.col.Append(v)
		return
	}
	w, ok := domain.WiderDecimal(c.field.Type, vt)
	if !ok {
		c.retype(domain.KindString)
		_ = c.col.Append(domain.String(v.String()))
		return
	}
	n := c.col.Len()
	if !c.field.Type.Equal(w) {
		c.col, _ = domain.DecimalColumn(c.col, n, w)
		c.field.Type = w
	}
	one := &domain.Column{Kind: domain.KindDecimal, Values: []domain.Value{v}}
	conv, _ := domain.DecimalColumn(one, 1, w)
	_ = c.col.Append(conv.Values[0])
}

// textOf is a value as a string: as written when known.
func textOf(v domain.Value, raw string) string {
	if raw != "" && v.Kind() != domain.KindString {
		return raw
	}
	return v.String()
}

// retype converts the values so far to kind k.
func (c *colBuilder) retype(k domain.Kind) {
	old := c.col
	c.col = domain.NewColumn(k, max(old.Len()+1, c.capHint))
	for i := 0; i < old.Len(); i++ {
		v := old.Value(i)
		switch {
		case v.IsNull():
		case k == domain.KindFloat64 && v.Kind() == domain.KindInt64:
			v = domain.Float(float64(v.AsInt()))
		case k == domain.KindString:
			raw := ""
			if i < len(c.raw) {
				raw = c.raw[i]
			}
			v = domain.String(textOf(v, raw))
		}
		_ = c.col.Append(v)
	}
	c.field.Type = domain.Type{Kind: k}
	if k == domain.KindString || k == domain.KindBytes {
		c.raw = nil
	}
}

// endRow finishes the current row: missing columns are NULL; a bad row is
// rolled back and reported, or kept with its rescued data.
func (b *builder) endRow() error {
	for _, c := range b.cols {
		if c.col.Len() > b.rows {
			continue
		}
		if !c.field.Nullable && b.declared != nil {
			b.reject(c, c.field.Name, domain.Null(), "", "column is NOT NULL and the record has no value for it")
		}
		c.appendNull()
	}
	if len(b.bad) > 0 {
		bad := b.bad[0]
		b.rollback()
		if bad.newColumn {
			return domain.Errorf(domain.CodeUnknownField, "%s, line %d: %s", b.currentFile, b.currentLine, bad.reason).WithNames(b.currentFile).
				WithHint("add the column to the schema (or its schemaHints), or read with schemaEvolutionMode => 'rescue'")
		}
		return b.malformed(bad.reason)
	}
	if b.rowBad {
		b.notRescued++
		if b.onBad == badDrop {
			b.rollback()
			return nil
		}
		b.rowBad = false
	}
	if b.rescue {
		if b.rowRescue == nil {
			_ = b.rescued.Append(domain.Null())
		} else {
			b.rowRescue["_file_path"] = domain.String(b.currentFile)
			b.rowRescue["_line"] = domain.Int(int64(b.currentLine))
			_ = b.rescued.Append(domain.String(rescuedJSON(b.rowRescue)))
			b.rowRescue = nil
			b.rescuedRows++
		}
	}
	b.rows++
	return nil
}

// rescuedJSON is the text of _rescued_data: an object of the values, keys
// sorted.
func rescuedJSON(m map[string]domain.Value) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = domain.AppendJSONString(b, k)
		b = append(b, ':')
		b = domain.AppendJSON(b, m[k], domain.Type{Kind: m[k].Kind()})
	}
	return string(append(b, '}'))
}

func (b *builder) rowRescueSet(name string, v domain.Value) {
	if b.rowRescue == nil {
		b.rowRescue = map[string]domain.Value{}
	}
	b.rowRescue[name] = v
}

// rollback drops the values set for the current row.
func (b *builder) rollback() {
	for _, c := range b.cols {
		c.truncate(b.rows)
	}
	b.rowRescue = nil
	b.bad = b.bad[:0]
	b.rowBad = false
}

// badRecord handles a record that could not be parsed at all: an error, or
// when rescuing, a row of NULLs with the raw record in _rescued_data.
func (b *builder) badRecord(raw string, reason string) error {
	b.rollback()
	switch b.onBad {
	case badFail:
		return b.malformed(reason)
	case badDrop:
		b.notRescued++
		return nil
	case badRescue:
		b.rowRescue = map[string]domain.Value{"_corrupt_record": domain.String(raw), "_error": domain.String(reason)}
	}
	for _, c := range b.cols {
		c.appendNull() // NOT NULL columns too: the record is kept as NULLs
	}
	b.rowBad = b.onBad == badNull
	return b.endRow()
}

func (b *builder) malformed(reason string) error {
	return domain.Errorf(domain.CodeMalformedRecord, "%s, line %d: %s", b.currentFile, b.currentLine, reason).WithNames(b.currentFile)
}

// batch returns the rows built so far. When rescuing, every column is
// nullable: a bad record is a row of NULLs.
func (b *builder) batch() (*domain.Batch, error) {
	fields := make([]domain.Field, 0, len(b.cols)+1)
	cols := make([]*domain.Column, 0, len(b.cols)+1)
	for _, c := range b.cols {
		for c.col.Len() < b.rows {
			c.appendNull()
		}
		f := c.field
		if b.onBad == badRescue || b.onBad == badNull { // a bad record is a row of NULLs
			f.Nullable = true
		}
		fields = append(fields, f)
		cols = append(cols, c.col)
	}
	if b.rescue {
		fields = append(fields, domain.Field{Name: b.rescueAs, Type: domain.TypeString, Nullable: true})
		cols = append(cols, b.rescued)
	}
	for i := range fields {
		fields[i] = ownField(fields[i])
	}
	for _, c := range cols {
		ownStrings(c)
		domain.OwnStrings(c.Values)
	}
	if len(cols) == 0 { // rows without columns ({} lines): keep their count
		out := domain.NewBatch(domain.NewSchema(), 0)
		for range b.rows {
			_ = out.AppendRow()
		}
		return out, nil
	}
	return domain.BatchOf(domain.NewSchema(fields...), cols)
}

// ownStrings copies the strings of a string or bytes column into one
// allocation of their own. A source's strings are parts of the bytes it
// read (a file's piece, a message): without the copy, a row kept anywhere
// (a micro-batch waiting for its reader, a filter's survivors) would keep
// all of those bytes, with their syntax, names and rows filtered out, and
// a file's bytes, read mapped, are gone once read. The strings inside
// nested values are copied by domain.OwnStrings, the names of the columns
// (keys of the records, when inferred) by ownField: nothing of a batch
// shares the bytes read.
func ownStrings(c *domain.Column) {
	if c.Kind != domain.KindString && c.Kind != domain.KindBytes {
		return
	}
	n := 0
	for _, s := range c.Strs {
		n += len(s)
	}
	var all strings.Builder
	all.Grow(n)
	for _, s := range c.Strs {
		all.WriteString(s)
	}
	owned, at := all.String(), 0
	for i, s := range c.Strs {
		c.Strs[i] = owned[at : at+len(s)]
		at += len(s)
	}
}

// ownField is f with its names, and those of its type's fields, copied.
func ownField(f domain.Field) domain.Field {
	f.Name, f.Comment = strings.Clone(f.Name), strings.Clone(f.Comment)
	f.Type = ownType(f.Type)
	return f
}

// ownType is t with the names of its fields, at every depth, copied; t's
// own parts are left as they are, as other schemas may share them.
func ownType(t domain.Type) domain.Type {
	if t.Key != nil {
		k := ownType(*t.Key)
		t.Key = &k
	}
	if t.Elem != nil {
		e := ownType(*t.Elem)
		t.Elem = &e
	}
	if t.Fields != nil {
		fields := make([]domain.Field, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = ownField(f)
		}
		t.Fields = fields
	}
	return t
}

// convert is the package's convert, with the source's date and timestamp
// formats.
func (b *builder) convert(v domain.Value, k domain.Kind) (domain.Value, error) {
	if v.Kind() == domain.KindString {
		switch {
		case k == domain.KindDate && b.parseDate != nil:
			if d, ok := b.parseDate(v.AsString()); ok {
				return domain.DateDays(d), nil
			}
			return domain.Null(), fmt.Errorf("%q is not a date in the source's dateFormat", v.AsString())
		case k == domain.KindTimestamp && b.parseTimestamp != nil:
			if us, ok := b.parseTimestamp(v.AsString()); ok {
				return domain.TimestampMicros(us), nil
			}
			return domain.Null(), fmt.Errorf("%q is not a timestamp in the source's timestampFormat", v.AsString())
		}
	}
	return convert(v, k)
}

// convert turns v into a value of kind k, the way a declared schema reads it.
func convert(v domain.Value, k domain.Kind) (domain.Value, error) {
	vk := v.Kind()
	switch {
	case vk == domain.KindNull || vk == k:
		return v, nil
	case k == domain.KindFloat64 && vk == domain.KindInt64:
		return domain.Float(float64(v.AsInt())), nil
	case k == domain.KindFloat64 && vk == domain.KindDecimal:
		return domain.Float(domain.DecimalToFloat(v.AsDecimal(), v.Scale())), nil
	case k == domain.KindString && vk != domain.KindList && vk != domain.KindStruct:
		return domain.String(v.String()), nil
	case vk == domain.KindString:
		return parseAs(v.AsString(), k)
	}
	return v, fmt.Errorf("expected %s, found %s", k, vk)
}

// narrow holds a value to a narrowed type: an integer to the range of an
// INT, SMALLINT or TINYINT column (an error beyond it), a double to the
// nearest float in a FLOAT column.
func narrow(v domain.Value, t domain.Type) (domain.Value, error) {
	switch {
	case t.Bits == 0 || v.IsNull():
		return v, nil
	case v.Kind() == domain.KindInt64:
		if lo, hi := t.IntRange(); v.AsInt() < lo || v.AsInt() > hi {
			return domain.Null(), fmt.Errorf("%d does not fit %s", v.AsInt(), t)
		}
	case v.Kind() == domain.KindFloat64:
		return domain.Float(float64(float32(v.AsFloat()))), nil
	}
	return v, nil
}

// toType converts a nested value to a declared nested type, element by
// element, as a declared schema reads a scalar.
func toType(v domain.Value, t domain.Type) (domain.Value, error) {
	switch {
	case v.IsNull():
		return v, nil
	case t.Kind == domain.KindDecimal:
		return toDecimal(v, "", t)
	case v.Kind() == domain.KindList && t.Kind == domain.KindList:
		items := make([]domain.Value, len(v.AsList()))
		for i, it := range v.AsList() {
			var err error
			if items[i], err = toType(it, *t.Elem); err != nil {
				return domain.Null(), err
			}
		}
		return domain.List(items...), nil
	case v.Kind() == domain.KindMap && t.Kind == domain.KindMap:
		entries := make([]domain.Value, len(v.Entries()))
		for i, e := range v.Entries() {
			k, err := toType(e.Fields()[0], *t.Key)
			if err != nil {
				return domain.Null(), err
			}
			if k.IsNull() {
				return domain.Null(), fmt.Errorf("a map key is null")
			}
			val, err := toType(e.Fields()[1], *t.Elem)
			if err != nil {
				return domain.Null(), err
			}
			entries[i] = domain.MapEntry(k, val)
		}
		return domain.Map(entries...), nil
	case v.Kind() == domain.KindStruct && t.Kind == domain.KindStruct:
		if len(v.Fields()) != len(t.Fields) {
			return domain.Null(), fmt.Errorf("expected %s, found a struct of %d fields", t, len(v.Fields()))
		}
		fields := make([]domain.Value, len(t.Fields))
		for i, f := range t.Fields {
			var err error
			if fields[i], err = toType(v.Fields()[i], f.Type); err != nil {
				return domain.Null(), err
			}
			if fields[i].IsNull() && !f.Nullable {
				return domain.Null(), fmt.Errorf("field %s is NOT NULL and the value is null", f.Name)
			}
		}
		return domain.Struct(fields...), nil
	case v.Kind().IsNested() || t.Kind.IsNested():
		return domain.Null(), fmt.Errorf("expected %s, found %s", t, v.Kind())
	}
	cv, err := convert(v, t.Kind)
	if err != nil {
		return domain.Null(), err
	}
	return narrow(cv, t)
}

// jsonAs reads a JSON value into a declared type, as Spark's JSON reader
// does: an array into an ARRAY, an object into a MAP or a STRUCT (fields by
// name, others left out), any value into a VARIANT, a base64 string into a
// BINARY, a value of another kind into a STRING as its JSON text.
func jsonAs(n *domain.JSONNode, t domain.Type) (domain.Value, error) {
	if n.Kind == domain.JSONNull {
		return domain.Null(), nil
	}
	mismatch := func() (domain.Value, error) {
		return domain.Null(), fmt.Errorf("expected %s, found %s", t, n.Raw)
	}
	switch {
	case t.Variant:
		text, dup := domain.AppendVariant(nil, n)
		if dup != "" {
			return domain.Null(), fmt.Errorf("the object has the key %q twice, which a variant cannot hold", dup)
		}
		return domain.String(string(text)), nil
	case t.Kind == domain.KindList:
		if n.Kind != domain.JSONArray {
			return mismatch()
		}
		items := make([]domain.Value, len(n.Items))
		for i, it := range n.Items {
			var err error
			if items[i], err = jsonAs(it, *t.Elem); err != nil {
				return domain.Null(), err
			}
		}
		return domain.List(items...), nil
	case t.Kind == domain.KindMap:
		if n.Kind != domain.JSONObject {
			return mismatch()
		}
		entries := make([]domain.Value, len(n.Items))
		for i, it := range n.Items {
			k, err := toType(domain.String(n.Keys[i]), *t.Key)
			if err != nil {
				return domain.Null(), err
			}
			v, err := jsonAs(it, *t.Elem)
			if err != nil {
				return domain.Null(), err
			}
			entries[i] = domain.MapEntry(k, v)
		}
		return domain.Map(entries...), nil
	case t.Kind == domain.KindStruct:
		if n.Kind != domain.JSONObject {
			return mismatch()
		}
		fields := make([]domain.Value, len(t.Fields))
		for i, f := range t.Fields {
			for j := len(n.Keys) - 1; j >= 0; j-- { // the last of duplicate keys wins
				if n.Keys[j] == f.Name {
					var err error
					if fields[i], err = jsonAs(n.Items[j], f.Type); err != nil {
						return domain.Null(), err
					}
					break
				}
			}
			if fields[i].IsNull() && !f.Nullable {
				return domain.Null(), fmt.Errorf("field %s is NOT NULL and the value is null", f.Name)
			}
		}
		return domain.Struct(fields...), nil
	case t.Kind == domain.KindBytes:
		if n.Kind != domain.JSONString {
			return mismatch()
		}
		b, err := base64.StdEncoding.DecodeString(n.Text)
		if err != nil {
			return domain.Null(), fmt.Errorf("%q is not base64", n.Text)
		}
		return domain.Bytes(b), nil
	case t.Kind == domain.KindString:
		if n.Kind == domain.JSONString {
			return domain.String(n.Text), nil
		}
		return domain.String(n.Raw), nil
	case t.Kind == domain.KindDecimal && (n.Kind == domain.JSONNumber || n.Kind == domain.JSONString):
		return toDecimal(domain.String(n.Text), "", t)
	}
	switch n.Kind {
	case domain.JSONString:
		return toType(domain.String(n.Text), t)
	case domain.JSONBool:
		return toType(domain.Bool(n.Text == "true"), t)
	case domain.JSONNumber:
		if i, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
			return toType(domain.Int(i), t)
		}
		if t.Kind == domain.KindInt64 {
			return mismatch()
		}
		f, _ := strconv.ParseFloat(n.Text, 64)
		return toType(domain.Float(f), t)
	}
	return mismatch()
}

// jsonTyped reports whether a declared column takes a JSON field through
// jsonAs rather than as a scalar.
func jsonTyped(t domain.Type) bool {
	return t.Variant || t.Kind.IsNested() || t.Kind == domain.KindBytes
}

// toDecimal reads v into a decimal column of type t exactly: a number by its
// text as written (1.10 is 1.10, not the double nearest it), a string as a
// number; a value with more digits than t's scale is rounded half up, one
// with more integer digits than t holds is an error.
func toDecimal(v domain.Value, raw string, t domain.Type) (domain.Value, error) {
	var text string
	switch v.Kind() {
	case domain.KindNull:
		return v, nil
	case domain.KindDecimal:
		text = v.String()
	case domain.KindInt64:
		text = strconv.FormatInt(v.AsInt(), 10)
	case domain.KindFloat64:
		text = raw
		if text == "" {
			text = strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
		}
	case domain.KindString:
		text = strings.TrimSpace(v.AsString())
	default:
		return v, fmt.Errorf("expected %s, found %s", t, v.Kind())
	}
	u, ok, fits := domain.ParseDecimal(text, t.Precision, t.Scale)
	switch {
	case !ok:
		return domain.Null(), fmt.Errorf("%q is not a number", text)
	case !fits:
		return domain.Null(), fmt.Errorf("%s does not fit %s", text, t)
	}
	return domain.Decimal(u, t.Precision, t.Scale), nil
}

// timestampLayouts are the spellings a timestamp may have in text: RFC 3339
// with a T or a space, with or without a zone (UTC without), or a date.
var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// parseUTCTimestamp reads the most common spelling of a timestamp,
// 2006-01-02T15:04:05[.999999999]Z, several times faster than time.Parse,
// with the same result; ok is false for anything else (time.Parse then
// decides).
func parseUTCTimestamp(s string) (time.Time, bool) {
	if len(s) < 20 || s[len(s)-1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(p string) (int, bool) {
		n := 0
		for i := 0; i < len(p); i++ {
			c := p[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	h, ok4 := num(s[11:13])
	mi, ok5 := num(s[14:16])
	sec, ok6 := num(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	if d > time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, false // not a day of that month
	}
	ns := 0
	if frac := s[19 : len(s)-1]; frac != "" {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, false
		}
		f, ok := num(frac[1:])
		if !ok {
			return time.Time{}, false
		}
		for i := len(frac) - 1; i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC), true
}

// parseAs reads text as a value of kind k (CSV fields, JSON strings for
// timestamp and date columns).
func parseAs(s string, k domain.Kind) (domain.Value, error) {
	switch k {
	case domain.KindString:
		return domain.String(s), nil
	case domain.KindBytes:
		return domain.Bytes([]byte(s)), nil
	case domain.KindInt64:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return domain.Null(), fmt.Errorf("%q is not a bigint", s)
		}
		return domain.Int(i), nil
	case domain.KindFloat64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return domain.Null(), fmt.Errorf("%q is not a double", s)
		}
		return domain.Float(f), nil
	case domain.KindBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return domain.Bool(true), nil
		case "false":
			return domain.Bool(false), nil
		}
		return domain.Null(), fmt.Errorf("%q is not a boolean", s)
	case domain.KindTimestamp:
		if t, ok := parseUTCTimestamp(s); ok {
			return domain.Timestamp(t), nil
		}
		for _, layout := range timestampLayouts {
			if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
				return domain.Timestamp(t), nil
			}
		}
		return domain.Null(), fmt.Errorf("%q is not a timestamp", s)
	case domain.KindDate:
		t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
		if err != nil {
			return domain.Null(), fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
		}
		return domain.Date(t), nil
	}
	return domain.Null(), fmt.Errorf("cannot read text as %s", k)
}
