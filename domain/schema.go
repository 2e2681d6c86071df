package domain

import (
	"math"
	"strconv"
	"strings"
)

// Type is a column type: a kind, with an element type for lists, fields for
// structs, a key type (Key) and value type (Elem) for maps, and a precision
// and scale for decimals.
//
// Bits narrows a number type: 8, 16 or 32 make a bigint a tinyint, a
// smallint or an int, whose values are still stored as bigints but held to
// the narrower range; 32 makes a double a float, whose values are doubles
// that a float holds exactly. 0 is the full width. Values carry no width:
// the type of their column or expression does.
type Type struct {
	Kind      Kind    `json:"kind"`
	Key       *Type   `json:"key,omitempty"`
	Elem      *Type   `json:"elem,omitempty"`
	Fields    []Field `json:"fields,omitempty"`
	Precision int     `json:"precision,omitempty"`
	Scale     int     `json:"scale,omitempty"`
	Bits      int     `json:"bits,omitempty"`
	// NTZ makes a timestamp a TIMESTAMP_NTZ: a wall-clock time of no time
	// zone, stored as the microseconds it would be in UTC.
	NTZ bool `json:"ntz,omitempty"`
	// Variant makes a string a VARIANT: its value is JSON text, compact,
	// each object's keys sorted (as Spark's variant keeps them), numbers as
	// written.
	Variant bool `json:"variant,omitempty"`
}

// Scalar types, for declaring schemas.
var (
	TypeBool      = Type{Kind: KindBool}
	TypeInt64     = Type{Kind: KindInt64}
	TypeInt32     = Type{Kind: KindInt64, Bits: 32}
	TypeInt16     = Type{Kind: KindInt64, Bits: 16}
	TypeInt8      = Type{Kind: KindInt64, Bits: 8}
	TypeFloat64   = Type{Kind: KindFloat64}
	TypeFloat32   = Type{Kind: KindFloat64, Bits: 32}
	TypeString    = Type{Kind: KindString}
	TypeBytes     = Type{Kind: KindBytes}
	TypeTimestamp = Type{Kind: KindTimestamp}
	// TypeTimestampNTZ is TIMESTAMP_NTZ; TypeTimestamp is Spark's TIMESTAMP,
	// TIMESTAMP_LTZ: an instant, shown in the session time zone.
	TypeTimestampNTZ = Type{Kind: KindTimestamp, NTZ: true}
	TypeVariant      = Type{Kind: KindString, Variant: true}
	TypeDate         = Type{Kind: KindDate}
)

// ListOf is the type of lists of elem.
func ListOf(elem Type) Type { return Type{Kind: KindList, Elem: &elem} }

// MapOf is the type of maps from key to value.
func MapOf(key, value Type) Type { return Type{Kind: KindMap, Key: &key, Elem: &value} }

// Item is the type of item i of a nested value of type t, as the value
// holds its items: a struct's field, an array's element, a map's entry (a
// struct of key and value); the zero Type where t has no such item.
func (t Type) Item(i int) Type {
	switch {
	case t.Kind == KindStruct && i >= 0 && i < len(t.Fields):
		return t.Fields[i].Type
	case t.Kind == KindMap && t.Key != nil && t.Elem != nil:
		return StructOf(Field{Name: "key", Type: *t.Key}, Field{Name: "value", Type: *t.Elem})
	case t.Kind == KindList && t.Elem != nil:
		return *t.Elem
	}
	return Type{}
}

// StructOf is the type of structs with the given fields.
func StructOf(fields ...Field) Type { return Type{Kind: KindStruct, Fields: fields} }

// String renders the type in SQL spelling: bigint, array<string>,
// map<string, bigint>, struct<a: bigint, b: string>.
func (t Type) String() string {
	switch t.Kind {
	case KindList:
		if t.Elem == nil {
			return "array<null>"
		}
		return "array<" + t.Elem.String() + ">"
	case KindMap:
		k, v := "null", "null"
		if t.Key != nil {
			k = t.Key.String()
		}
		if t.Elem != nil {
			v = t.Elem.String()
		}
		return "map<" + k + ", " + v + ">"
	case KindStruct:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + ": " + f.Type.String()
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	case KindDecimal:
		return "decimal(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")"
	case KindInt64:
		switch t.Bits {
		case 8:
			return "tinyint"
		case 16:
			return "smallint"
		case 32:
			return "int"
		}
	case KindFloat64:
		if t.Bits == 32 {
			return "float"
		}
	case KindTimestamp:
		if t.NTZ {
			return "timestamp_ntz"
		}
	case KindString:
		if t.Variant {
			return "variant"
		}
	}
	return t.Kind.String()
}

// Equal reports whether two types are identical.
func (t Type) Equal(o Type) bool {
	if t.Kind != o.Kind || t.Precision != o.Precision || t.Scale != o.Scale || t.Bits != o.Bits || t.NTZ != o.NTZ || t.Variant != o.Variant || len(t.Fields) != len(o.Fields) || (t.Elem == nil) != (o.Elem == nil) || (t.Key == nil) != (o.Key == nil) {
		return false
	}
	if t.Elem != nil && !t.Elem.Equal(*o.Elem) {
		return false
	}
	if t.Key != nil && !t.Key.Equal(*o.Key) {
		return false
	}
	for i := range t.Fields {
		if !t.Fields[i].Equal(o.Fields[i]) {
			return false
		}
	}
	return true
}

// Field is a named, typed column or struct member.
type Field struct {
	Name     string `json:"name"`
	Type     Type   `json:"type"`
	Nullable bool   `json:"nullable"`
	Comment  string `json:"comment,omitempty"`
}

// Equal reports whether two fields are identical, comments aside.
func (f Field) Equal(o Field) bool {
	return f.Name == o.Name && f.Nullable == o.Nullable && f.Type.Equal(o.Type)
}

// Schema is an ordered list of columns.
type Schema struct {
	Fields []Field `json:"fields"`
}

// NewSchema builds a schema from fields.
func NewSchema(fields ...Field) Schema { return Schema{Fields: fields} }

// Index returns the position of the column named name (case-insensitive, as in
// Spark), or -1.
func (s Schema) Index(name string) int {
	for i, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// Names lists the column names in order.
func (s Schema) Names() []string {
	out := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = f.Name
	}
	return out
}

// Equal reports whether two schemas are identical.
func (s Schema) Equal(o Schema) bool {
	if len(s.Fields) != len(o.Fields) {
		return false
	}
	for i := range s.Fields {
		if !s.Fields[i].Equal(o.Fields[i]) {
			return false
		}
	}
	return true
}

// String renders the schema in SQL column-list spelling.
func (s Schema) String() string {
	parts := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		parts[i] = f.Name + " " + f.Type.String()
		if !f.Nullable {
			parts[i] += " NOT NULL"
		}
	}
	return strings.Join(parts, ", ")
}

// IntRange is the least and greatest value of an integer type.
func (t Type) IntRange() (lo, hi int64) {
	if t.Bits == 0 || t.Bits >= 64 {
		return math.MinInt64, math.MaxInt64
	}
	return -1 << (t.Bits - 1), 1<<(t.Bits-1) - 1
}

// Width is the bits of a number type: 64 unless narrowed.
func (t Type) Width() int {
	if t.Bits == 0 {
		return 64
	}
	return t.Bits
}
