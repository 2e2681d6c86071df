package sql

import (
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// DomainType is the type sluice stores a SQL type as: TINYINT, SMALLINT,
// INT and FLOAT as narrowed bigints and doubles, strings of every kind as
// string, DECIMAL(p, s) exactly; arrays, maps and structs of those. A type sluice cannot store is
// DATATYPE_MISMATCH (or NOT_IMPLEMENTED for the types still to come).
func DomainType(t *syntax.Type) (domain.Type, error) {
	switch t.Name {
	case "ARRAY":
		if len(t.Elems) != 1 {
			return domain.Type{}, exprErr(domain.CodeDatatypeMismatch, t.Pos, "ARRAY needs one element type")
		}
		elem, err := DomainType(t.Elems[0])
		if err != nil {
			return domain.Type{}, err
		}
		return domain.ListOf(elem), nil
	case "MAP":
		if len(t.Elems) != 2 {
			return domain.Type{}, exprErr(domain.CodeDatatypeMismatch, t.Pos, "MAP needs a key type and a value type")
		}
		k, err := DomainType(t.Elems[0])
		if err != nil {
			return domain.Type{}, err
		}
		v, err := DomainType(t.Elems[1])
		if err != nil {
			return domain.Type{}, err
		}
		return domain.MapOf(k, v), nil
	case "STRUCT":
		fields := make([]domain.Field, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := DomainType(f.Type)
			if err != nil {
				return domain.Type{}, err
			}
			fields[i] = domain.Field{Name: f.Name.Name, Type: ft, Nullable: !f.NotNull}
			if f.Comment != nil {
				fields[i].Comment = f.Comment.Value
			}
		}
		return domain.StructOf(fields...), nil
	case "BINARY":
		return domain.TypeBytes, nil
	case "DECIMAL":
		return decimalType(t)
	}
	dt, ok := castTarget(t)
	if !ok {
		return domain.Type{}, exprErr(domain.CodeNotImplemented, t.Pos, "columns of type %s are not supported yet", t.Name)
	}
	return dt, nil
}

// ParseSchema parses a schema written as Spark's DDL: a column list such as
// `id BIGINT, name STRING NOT NULL, tags ARRAY<STRING>` (or the same inside
// STRUCT<...>), as read_files' schema option takes it.
func ParseSchema(name, src string) (domain.Schema, error) {
	t, err := parseTypeText(name, src)
	if err != nil {
		return domain.Schema{}, err
	}
	if t.Kind != domain.KindStruct {
		return domain.Schema{}, exprErr(domain.CodeInvalidSchema, syntax.Pos{Line: 1, Col: 1}, "a schema is a list of columns, not %s", t)
	}
	return domain.NewSchema(t.Fields...), nil
}

// parseTypeText reads a type given as text, as syntax.ParseType does, and
// gives the type sluice stores it as.
func parseTypeText(name, text string) (domain.Type, error) {
	t, err := syntax.ParseType(name, text)
	if err != nil {
		return domain.Type{}, err
	}
	dt, terr := DomainType(t)
	if terr != nil {
		return domain.Type{}, syntax.Locate(terr, name, text)
	}
	return dt, nil
}

// decimalType reads DECIMAL, DECIMAL(p) and DECIMAL(p, s).
func decimalType(t *syntax.Type) (domain.Type, error) {
	if len(t.Params) == 0 {
		return defaultDecimal, nil
	}
	var ps [2]int
	for i, text := range t.Params {
		n, err := strconv.Atoi(text)
		if i > 1 || err != nil || n < 0 {
			return domain.Type{}, exprErr(domain.CodeDatatypeMismatch, t.Pos, "DECIMAL takes a precision and a scale, DECIMAL(p, s), found DECIMAL(%s)", strings.Join(t.Params, ", "))
		}
		ps[i] = n
	}
	p, s := ps[0], ps[1]
	switch {
	case p < 1 || p > domain.MaxDecimalPrecision:
		return domain.Type{}, exprErr(domain.CodeDecimalPrecisionExceeded, t.Pos, "DECIMAL(%d, %d): the precision must be 1 to %d", p, s, domain.MaxDecimalPrecision)
	case s > p:
		return domain.Type{}, exprErr(domain.CodeDatatypeMismatch, t.Pos, "DECIMAL(%d, %d): the scale cannot be more than the precision", p, s)
	}
	return domain.DecimalType(p, s), nil
}
