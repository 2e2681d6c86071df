package sql

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// CSV text in a column, as Spark's from_csv, to_csv and schema_of_csv read
// and write it: fields separated by commas (the option sep), quoted by
// double quotes, a quote inside a quoted field escaped by a backslash or
// doubled.

func init() {
	register(map[string]builtin{
		"from_csv":      {minArgs: 2, maxArgs: 3, compile: compileFromCSV},
		"to_csv":        {minArgs: 1, maxArgs: 2, compile: compileToCSV},
		"schema_of_csv": {minArgs: 1, maxArgs: 2, compile: compileSchemaOfCSV},
	})
}

// splitCSV splits one CSV record into its fields at sep; quoted marks the
// fields that were quoted (an empty quoted field is an empty string, an
// empty unquoted one NULL).
func splitCSV(s string, sep byte) (fields []string, quoted []bool) {
	var b strings.Builder
	inQuote, wasQuoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case inQuote && c == '"' && i+1 < len(s) && s[i+1] == '"':
			i++
			b.WriteByte('"')
		case c == '"' && (inQuote || b.Len() == 0):
			inQuote = !inQuote
			wasQuoted = true
		case c == sep && !inQuote:
			fields, quoted = append(fields, b.String()), append(quoted, wasQuoted)
			b.Reset()
			wasQuoted = false
		default:
			b.WriteByte(c)
		}
	}
	return append(fields, b.String()), append(quoted, wasQuoted)
}

// compileFromCSV: from_csv(csv, schema[, options]) reads a CSV record into
// a struct of the schema (a string literal); a field that does not fit its
// column's type is NULL, as in Spark's PERMISSIVE mode (with mode FAILFAST,
// MALFORMED_RECORD_IN_PARSING), and missing fields are NULL. The options
// sep, nullValue, dateFormat and timestampFormat read the fields.
func compileFromCSV(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	opts, err := c.textOptionsOf(e, 2, name, "mode", "sep", "delimiter", "nullvalue", "dateformat", "timestampformat")
	if err != nil {
		return nil, err
	}
	text, ok := stringConst(e.Args[1])
	if !ok {
		return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "%s needs the schema as a string literal", name)
	}
	t, err := parseTypeText("schema", text)
	if err != nil {
		return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "the schema %q cannot be read: %v", text, err)
	}
	if t.Kind != domain.KindStruct {
		return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "%s needs a struct schema (a column list), found %s", name, t)
	}
	for _, f := range t.Fields {
		if f.Type.Kind.IsNested() || isVariant(f.Type) {
			return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "%s reads columns of scalar types, and %s is %s", name, f.Name, f.Type)
		}
	}
	pos, loc := e.Pos, c.sess.TimeZone
	return &valuesNode{args: []node{x}, t: t, fails: opts.failFast, row: func(a []domain.Value) (domain.Value, error) {
		fields, quoted := splitCSV(a[0].AsString(), opts.sep)
		out := make([]domain.Value, len(t.Fields))
		for i, f := range t.Fields {
			if i >= len(fields) || fields[i] == "" && !quoted[i] || !quoted[i] && opts.nullValue != "" && fields[i] == opts.nullValue {
				continue
			}
			var v domain.Value
			var err error
			switch {
			case f.Type.Kind == domain.KindDate && opts.date != nil:
				d, ok := opts.parseDateText(fields[i])
				v, err = domain.DateDays(d), okOrMisfit(ok)
			case f.Type.Kind == domain.KindTimestamp && opts.ts != nil:
				us, ok := opts.parseTimestampText(fields[i], f.Type.NTZ)
				v, err = domain.TimestampMicros(us), okOrMisfit(ok)
			default:
				v, err = variantAs(&domain.JSONNode{Kind: domain.JSONString, Text: fields[i]}, f.Type, pos, loc)
			}
			switch {
			case err == nil:
				out[i] = v
			case opts.failFast:
				return domain.Value{}, exprErr(domain.CodeMalformedRecord, pos, "%s (mode FAILFAST): field %s %q does not fit %s", name, f.Name, fields[i], f.Type)
			}
		}
		return domain.Struct(out...), nil
	}}, nil
}

// compileToCSV: to_csv(struct[, options]) writes the struct's fields as one
// CSV record: NULL as nothing (or the option nullValue), a field holding
// the separator (the option sep), a quote or a line break quoted (quotes
// inside escaped by a backslash, as Spark writes them); dateFormat and
// timestampFormat write dates and timestamps by a pattern.
func compileToCSV(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.nested(e, 0, domain.KindStruct, name)
	if err != nil {
		return nil, err
	}
	opts, err := c.textOptionsOf(e, 1, name, "sep", "delimiter", "nullvalue", "dateformat", "timestampformat")
	if err != nil {
		return nil, err
	}
	special := ",\"\r\n"
	if opts.sep != ',' {
		special = string(opts.sep) + "\"\r\n"
	}
	t := x.typ()
	for _, f := range t.Fields {
		if f.Type.Kind.IsNested() {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s writes fields of scalar types, and %s is %s", name, f.Name, f.Type)
		}
	}
	return &valuesNode{args: []node{x}, t: domain.TypeString, row: func(a []domain.Value) (domain.Value, error) {
		var b strings.Builder
		for i, v := range a[0].Fields() {
			if i > 0 {
				b.WriteByte(opts.sep)
			}
			if v.IsNull() {
				b.WriteString(opts.nullValue)
				continue
			}
			s := valueText(v)
			switch ft := t.Fields[i].Type; {
			case ft.Kind == domain.KindFloat64:
				s = domain.FormatNumber(v.AsFloat(), ft)
			case ft.Kind == domain.KindDate && opts.date != nil:
				s = string(opts.date.format(nil, v.AsInt()*microsPerDay, time.UTC))
			case ft.Kind == domain.KindTimestamp && opts.ts != nil && ft.NTZ:
				s = string(opts.ts.format(nil, v.AsInt(), time.UTC))
			case ft.Kind == domain.KindTimestamp && opts.ts != nil:
				s = string(opts.ts.format(nil, v.AsInt(), opts.loc))
			}
			if strings.ContainsAny(s, special) || s == "" {
				s = `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
			}
			b.WriteString(s)
		}
		return domain.String(b.String()), nil
	}}, nil
}

// compileSchemaOfCSV: schema_of_csv(csv[, options]) is the schema Spark
// infers from one CSV record (a string literal, its fields split at the
// option sep): STRUCT<_c0: INT, _c1: STRING>, each field INT, BIGINT,
// DOUBLE, BOOLEAN, TIMESTAMP or STRING.
func compileSchemaOfCSV(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	text, ok := stringConst(e.Args[0])
	if !ok {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a string literal", name)
	}
	opts, err := c.textOptionsOf(e, 1, name, "sep", "delimiter")
	if err != nil {
		return nil, err
	}
	fields, _ := splitCSV(text, opts.sep)
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = "_c" + strconv.Itoa(i) + ": " + inferCSVType(strings.TrimSpace(f))
	}
	return &litNode{t: domain.TypeString, v: domain.String("STRUCT<" + strings.Join(parts, ", ") + ">")}, nil
}

func inferCSVType(s string) string {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		if i >= -1<<31 && i < 1<<31 {
			return "INT"
		}
		return "BIGINT"
	}
	if _, ok := parseDouble(s); ok && s != "" && strings.ContainsAny(s, "0123456789") {
		return "DOUBLE"
	}
	if strings.EqualFold(s, "true") || strings.EqualFold(s, "false") {
		return "BOOLEAN"
	}
	if _, ok := parseTimestampIn(s, time.UTC); ok && strings.ContainsAny(s, ":") {
		return "TIMESTAMP"
	}
	return "STRING"
}

// okOrMisfit is the error of a field a pattern did not read.
func okOrMisfit(ok bool) error {
	if ok {
		return nil
	}
	return errMisfit
}

var errMisfit = errors.New("the field does not fit its type")
