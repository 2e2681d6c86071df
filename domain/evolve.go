package domain

import (
	"fmt"
)

// Schema evolution of a stored table. A table's schema is declared, or taken
// from its first batch; later batches may add nullable columns, widen an
// integer to a wider one (tinyint, smallint, int, bigint) or to double, a
// float to double, widen a decimal to one with more digits on either side of
// the point, a date to TIMESTAMP_NTZ (Delta's type widening), bigint to a
// decimal of 19 integer digits or more; a string column takes any scalar as its text (so that a
// column inferred as string in one batch and as a number in the next, like a
// zip code, is not drift). Anything else is SCHEMA_DRIFT: the batch is not written
// and the flow fails, naming the column, both types and the fix.

// scalar reports whether values of kind k print as a single text value.
func scalar(k Kind) bool { return !k.IsNested() && k != KindNull }

// EvolveSchema returns the schema a table has after taking a batch of schema
// incoming. With declared set, the table's schema is fixed: the batch must
// fit it (columns of the declared schema only; bigint into double).
func EvolveSchema(table string, cur Schema, incoming Schema, declared bool) (Schema, error) {
	out := Schema{Fields: append([]Field(nil), cur.Fields...)}
	for _, f := range incoming.Fields {
		i := out.Index(f.Name)
		if i < 0 {
			if declared {
				return cur, drift(table, f.Name, "is not in the declared schema ("+cur.String()+")",
					"add the column to the table's declared schema, or drop it in the flow's query")
			}
			f.Nullable = true // rows written before have no value for it
			out.Fields = append(out.Fields, f)
			continue
		}
		have := out.Fields[i].Type
		switch {
		case have.Equal(f.Type), f.Type.Kind == KindNull:
		case have.Kind == KindFloat64 && f.Type.Kind == KindInt64:
		case have.Kind == f.Type.Kind && (have.Kind == KindInt64 || have.Kind == KindFloat64) && f.Type.Width() <= have.Width():
			// a narrower integer or a float: the values fit as they are
		case have.Kind == f.Type.Kind && (have.Kind == KindInt64 || have.Kind == KindFloat64) && !declared:
			out.Fields[i].Type = f.Type // widened: tinyint to smallint to int to bigint, float to double
		case have.Kind == KindInt64 && f.Type.Kind == KindFloat64 && !declared:
			out.Fields[i].Type = TypeFloat64
		case decimalHolds(have, f.Type), dateToNTZ(have, f.Type):
		case dateToNTZ(f.Type, have) && !declared:
			out.Fields[i].Type = f.Type // widened: a date to its midnight
		case have.Kind == KindDecimal && f.Type.Kind == KindDecimal && !declared:
			w, ok := WiderDecimal(have, f.Type)
			if !ok {
				return cur, drift(table, f.Name, fmt.Sprintf("is %s in the table and %s in the new batch, and no decimal holds both", have, f.Type),
					fmt.Sprintf("cast %s to %s in the flow's query", f.Name, have))
			}
			out.Fields[i].Type = w
		case have.Kind == KindNull && !declared:
			out.Fields[i].Type = f.Type
		case have.Kind == KindString && !declared && scalar(f.Type.Kind):
			// A string column takes any scalar as its text, as the files'
			// type inference does within a batch.
		default:
			return cur, drift(table, f.Name, fmt.Sprintf("is %s in the table and %s in the new batch", have, f.Type),
				fmt.Sprintf("cast %s to %s in the flow's query, or run a full refresh of %q to take the new type", f.Name, have, table))
		}
	}
	return out, nil
}

func drift(table, column, what, fix string) error {
	return Errorf(CodeSchemaDrift, "table %q: column %q %s", table, column, what).WithHint(fix).WithNames(table, column)
}

// Conform returns b with the columns of schema, in its order: a column b
// lacks is NULL (an error if the column is NOT NULL), bigint becomes double
// where schema says double. Columns of b that schema lacks are an error.
func Conform(table string, b *Batch, schema Schema) (*Batch, error) {
	if b.Schema.Equal(schema) {
		return b, nil
	}
	n := b.Len()
	cols := make([]*Column, len(schema.Fields))
	for j, f := range schema.Fields {
		k := b.Schema.Index(f.Name)
		if k < 0 {
			if !f.Nullable {
				return nil, drift(table, f.Name, "is NOT NULL and the batch has no such column", "give the column a value in the flow's query")
			}
			c := NewColumn(f.Type.Kind, n)
			for i := 0; i < n; i++ {
				_ = c.Append(Null())
			}
			cols[j] = c
			continue
		}
		src := b.Columns[k]
		if !f.Nullable && src.Nulls != nil {
			for i := 0; i < n; i++ {
				if src.IsNull(i) {
					return nil, drift(table, f.Name, fmt.Sprintf("is NOT NULL and row %d of the batch is NULL", i), "filter out or fill the NULLs in the flow's query")
				}
			}
		}
		switch {
		case b.Schema.Fields[k].Type.Equal(f.Type) || src.Kind == f.Type.Kind && src.Kind != KindDecimal:
			cols[j] = src
		case decimalHolds(f.Type, b.Schema.Fields[k].Type):
			c, err := DecimalColumn(src, n, f.Type)
			if err != nil {
				return nil, drift(table, f.Name, err.Error(), "cast the column in the flow's query")
			}
			cols[j] = c
		case f.Type.Kind == KindFloat64 && src.Kind == KindInt64, src.Kind == KindNull, dateToNTZ(f.Type, b.Schema.Fields[k].Type):
			c := NewColumn(f.Type.Kind, n)
			appendColumn(c, src, n)
			cols[j] = c
		case f.Type.Kind == KindString && scalar(src.Kind):
			c := NewColumn(KindString, n)
			for i := 0; i < n; i++ {
				v := src.Value(i)
				if !v.IsNull() {
					v = String(v.String())
				}
				_ = c.Append(v)
			}
			cols[j] = c
		default:
			return nil, drift(table, f.Name, fmt.Sprintf("is %s in the table and %s in the batch", f.Type, b.Schema.Fields[k].Type), "cast the column in the flow's query")
		}
	}
	for _, f := range b.Schema.Fields {
		if schema.Index(f.Name) < 0 {
			return nil, drift(table, f.Name, "is not in the table's schema", "add the column to the declared schema, or drop it in the flow's query")
		}
	}
	return BatchOf(schema, cols)
}

// dateToNTZ reports whether to is a TIMESTAMP_NTZ and from a DATE: Delta
// widens a date column to TIMESTAMP_NTZ, each date its midnight.
func dateToNTZ(to, from Type) bool {
	return to.Kind == KindTimestamp && to.NTZ && from.Kind == KindDate
}

// decimalHolds reports whether every value of type from fits in the decimal
// type to without rounding: a decimal with no more digits on either side of
// the point, or a bigint where to has 19 integer digits.
func decimalHolds(to, from Type) bool {
	if to.Kind != KindDecimal {
		return false
	}
	switch from.Kind {
	case KindDecimal:
		return from.Scale <= to.Scale && from.Precision-from.Scale <= to.Precision-to.Scale
	case KindInt64:
		return to.Precision-to.Scale >= 19
	}
	return false
}

// WiderDecimal is the narrowest decimal that holds both a and b, if one does.
func WiderDecimal(a, b Type) (Type, bool) {
	scale := max(a.Scale, b.Scale)
	p := scale + max(a.Precision-a.Scale, b.Precision-b.Scale)
	return DecimalType(p, scale), p <= MaxDecimalPrecision
}

// DecimalColumn converts the first n rows of src (bigints or decimals that
// fit t without rounding) to a column of the decimal type t.
func DecimalColumn(src *Column, n int, t Type) (*Column, error) {
	c := NewColumn(KindDecimal, n)
	for i := 0; i < n; i++ {
		v := src.Value(i)
		switch v.kind {
		case KindInt64:
			u, _ := Rescale(Int128Of(v.i), 0, t.Scale)
			v = Decimal(u, t.Precision, t.Scale)
		case KindDecimal:
			u, _ := Rescale(v.AsDecimal(), int(v.scale), t.Scale)
			v = Decimal(u, t.Precision, t.Scale)
		}
		if err := c.Append(v); err != nil {
			return nil, err
		}
	}
	return c, nil
}
