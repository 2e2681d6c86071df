package sources

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
)

// RescuedDataColumn is the column that keeps what a source could not fit in a
// row when the flow opts to rescue bad records (the Auto Loader convention).
const RescuedDataColumn = "_rescued_data"

// builder accumulates decoded rows into typed columns. Without a declared
// schema it infers column types: bigint widens to double, and any other clash
// makes the column a string (as Spark's JSON inference does). With a declared
// schema, values are converted to the declared types and the rest is a bad
// record: an error, or, when rescuing, kept in _rescued_data.
type builder struct {
	declared *domain.Schema
	rescue   bool
	cols     []*colBuilder
	index    map[string]int
	rows     int

	rescued     *domain.Column // _rescued_data, when rescuing
	rowRescue   map[string]any // what the current row could not fit
	badReason   string         // why the current row is bad, when not rescuing
	currentFile string
	currentLine int
}

type colBuilder struct {
	field domain.Field
	col   *domain.Column
}

func newBuilder(declared *domain.Schema, rescue bool) *builder {
	b := &builder{declared: declared, rescue: rescue, index: map[string]int{}}
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
	c := &colBuilder{field: f, col: domain.NewColumn(f.Type.Kind, 0)}
	b.index[strings.ToLower(f.Name)] = len(b.cols)
	b.cols = append(b.cols, c)
	return c
}

// column finds the builder of a column, creating it when inferring.
func (b *builder) column(name string) *colBuilder {
	if i, ok := b.index[name]; ok {
		return b.cols[i]
	}
	if i, ok := b.index[strings.ToLower(name)]; ok {
		return b.cols[i]
	}
	if b.declared != nil {
		return nil
	}
	c := b.addColumn(domain.Field{Name: name, Type: domain.Type{Kind: domain.KindNull}, Nullable: true})
	for c.col.Len() < b.rows {
		_ = c.col.Append(domain.Null())
	}
	return c
}

// set puts the value of a column in the current row. A type the column cannot
// take makes the row bad (declared schema) or widens the column (inferred).
func (b *builder) set(name string, v domain.Value) {
	c := b.column(name)
	if c == nil {
		b.reject(name, v, "column is not in the declared schema")
		return
	}
	if c.col.Len() > b.rows { // a repeated key: the last one wins
		c.col.Truncate(b.rows)
	}
	if b.declared != nil {
		cv, err := convert(v, c.field.Type.Kind)
		if err != nil {
			b.reject(name, v, err.Error())
			_ = c.col.Append(domain.Null())
			return
		}
		_ = c.col.Append(cv)
		return
	}
	b.appendInferred(c, v)
}

func (b *builder) reject(name string, v domain.Value, reason string) {
	if b.rescue {
		if b.rowRescue == nil {
			b.rowRescue = map[string]any{}
		}
		b.rowRescue[name] = jsonValue(v)
		return
	}
	if b.badReason == "" {
		b.badReason = fmt.Sprintf("column %q: %s (value %s)", name, reason, v)
	}
}

// appendInferred appends v, changing the column's type when v does not fit.
func (b *builder) appendInferred(c *colBuilder, v domain.Value) {
	k := v.Kind()
	switch {
	case k == domain.KindNull || k == c.col.Kind:
	case c.col.Kind == domain.KindNull:
		c.retype(k)
	case c.col.Kind == domain.KindFloat64 && k == domain.KindInt64:
		v = domain.Float(float64(v.AsInt()))
	case c.col.Kind == domain.KindInt64 && k == domain.KindFloat64:
		c.retype(domain.KindFloat64)
	case c.col.Kind == domain.KindString:
		v = domain.String(v.String())
	default:
		c.retype(domain.KindString)
		v = domain.String(v.String())
	}
	_ = c.col.Append(v)
}

// retype converts the values so far to kind k.
func (c *colBuilder) retype(k domain.Kind) {
	old := c.col
	c.col = domain.NewColumn(k, old.Len()+1)
	for i := 0; i < old.Len(); i++ {
		v := old.Value(i)
		switch {
		case v.IsNull():
		case k == domain.KindFloat64 && v.Kind() == domain.KindInt64:
			v = domain.Float(float64(v.AsInt()))
		case k == domain.KindString:
			v = domain.String(v.String())
		}
		_ = c.col.Append(v)
	}
	c.field.Type = domain.Type{Kind: k}
}

// endRow finishes the current row: missing columns are NULL; a bad row is
// rolled back and reported, or kept with its rescued data.
func (b *builder) endRow() error {
	if b.badReason != "" {
		reason := b.badReason
		b.badReason = ""
		b.rollback()
		return b.malformed(reason)
	}
	for _, c := range b.cols {
		if c.col.Len() == b.rows {
			if !c.field.Nullable && b.declared != nil {
				if b.rescue {
					b.rowRescueSet(c.field.Name, nil)
				} else {
					b.rollback()
					return b.malformed(fmt.Sprintf("column %q is NOT NULL and the record has no value for it", c.field.Name))
				}
			}
			_ = c.col.Append(domain.Null())
		}
	}
	if b.rescue {
		if b.rowRescue == nil {
			_ = b.rescued.Append(domain.Null())
		} else {
			b.rowRescue["_file_path"] = b.currentFile
			b.rowRescue["_line"] = b.currentLine
			raw, _ := json.Marshal(b.rowRescue)
			_ = b.rescued.Append(domain.String(string(raw)))
			b.rowRescue = nil
		}
	}
	b.rows++
	return nil
}

func (b *builder) rowRescueSet(name string, v any) {
	if b.rowRescue == nil {
		b.rowRescue = map[string]any{}
	}
	b.rowRescue[name] = v
}

// rollback drops the values set for the current row.
func (b *builder) rollback() {
	for _, c := range b.cols {
		c.col.Truncate(b.rows)
	}
	b.rowRescue = nil
}

// badRecord handles a record that could not be parsed at all: an error, or
// when rescuing, a row of NULLs with the raw record in _rescued_data.
func (b *builder) badRecord(raw string, reason string) error {
	b.rollback()
	if !b.rescue {
		return b.malformed(reason)
	}
	b.rowRescue = map[string]any{"_corrupt_record": raw, "_error": reason}
	return b.endRow()
}

func (b *builder) malformed(reason string) error {
	return domain.Errorf(domain.CodeMalformedRecord, "%s, line %d: %s", b.currentFile, b.currentLine, reason).WithNames(b.currentFile)
}

// batch returns the rows built so far.
func (b *builder) batch() (*domain.Batch, error) {
	fields := make([]domain.Field, 0, len(b.cols)+1)
	cols := make([]*domain.Column, 0, len(b.cols)+1)
	for _, c := range b.cols {
		for c.col.Len() < b.rows {
			_ = c.col.Append(domain.Null())
		}
		fields = append(fields, c.field)
		cols = append(cols, c.col)
	}
	if b.rescue {
		fields = append(fields, domain.Field{Name: RescuedDataColumn, Type: domain.TypeString, Nullable: true})
		cols = append(cols, b.rescued)
	}
	out, err := domain.BatchOf(domain.NewSchema(fields...), cols)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// convert turns v into a value of kind k, the way a declared schema reads it.
func convert(v domain.Value, k domain.Kind) (domain.Value, error) {
	vk := v.Kind()
	switch {
	case vk == domain.KindNull || vk == k:
		return v, nil
	case k == domain.KindFloat64 && vk == domain.KindInt64:
		return domain.Float(float64(v.AsInt())), nil
	case k == domain.KindString && vk != domain.KindList && vk != domain.KindStruct:
		return domain.String(v.String()), nil
	case vk == domain.KindString:
		return parseAs(v.AsString(), k)
	}
	return v, fmt.Errorf("expected %s, found %s", k, vk)
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
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
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

// jsonValue is v as a JSON-encodable Go value, for _rescued_data.
func jsonValue(v domain.Value) any {
	switch v.Kind() {
	case domain.KindNull:
		return nil
	case domain.KindBool:
		return v.AsBool()
	case domain.KindInt64:
		return v.AsInt()
	case domain.KindFloat64:
		return v.AsFloat()
	}
	return v.String()
}
