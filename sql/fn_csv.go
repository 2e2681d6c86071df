package sql

import (
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// CSV text in a column, as Spark's from_csv, to_csv and schema_of_csv read
// and write it with their default options: fields separated by commas,
// quoted by double quotes, a quote inside a quoted field escaped by a
// backslash or doubled.

func init() {
	register(map[string]builtin{
		"from_csv":      {minArgs: 2, maxArgs: 3, compile: compileFromCSV},
		"to_csv":        {minArgs: 1, maxArgs: 2, compile: compileToCSV},
		"schema_of_csv": {minArgs: 1, maxArgs: 2, compile: compileSchemaOfCSV},
	})
}

// splitCSV splits one CSV record into its fields; quoted marks the fields
// that were quoted (an empty quoted field is an empty string, an empty
// unquoted one NULL).
func splitCSV(s string) (fields []string, quoted []bool) {
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
		case c == ',' && !inQuote:
			fields, quoted = append(fields, b.String()), append(quoted, wasQuoted)
			b.Reset()
			wasQuoted = false
		default:
			b.WriteByte(c)
		}
	}
	return append(fields, b.String()), append(quoted, wasQuoted)
}

func csvOptionsRefused(e *syntax.FuncCall, name string, at int) error {
	if len(e.Args) > at {
		return exprErr(domain.CodeNotImplemented, e.Args[at].Position(), "%s options are not supported yet", name)
	}
	return nil
}

// compileFromCSV: from_csv(csv, schema) reads a CSV record into a struct of
// the schema (a string literal); a field that does not fit its column's
// type is NULL, as in Spark's PERMISSIVE mode, and missing fields are NULL.
func compileFromCSV(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	if err := csvOptionsRefused(e, name, 2); err != nil {
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
	return &valuesNode{args: []node{x}, t: t, row: func(a []domain.Value) (domain.Value, error) {
		fields, quoted := splitCSV(a[0].AsString())
		out := make([]domain.Value, len(t.Fields))
		for i, f := range t.Fields {
			if i >= len(fields) || fields[i] == "" && !quoted[i] {
				continue
			}
			v, err := variantAs(&domain.JSONNode{Kind: domain.JSONString, Text: fields[i]}, f.Type, pos, loc)
			if err == nil {
				out[i] = v
			}
		}
		return domain.Struct(out...), nil
	}}, nil
}

// compileToCSV: to_csv(struct) writes the struct's fields as one CSV
// record: NULL as nothing, a field holding a comma, a quote or a line break
// quoted (quotes inside escaped by a backslash, as Spark writes them).
func compileToCSV(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.nested(e, 0, domain.KindStruct, name)
	if err != nil {
		return nil, err
	}
	if err := csvOptionsRefused(e, name, 1); err != nil {
		return nil, err
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
				b.WriteByte(',')
			}
			if v.IsNull() {
				continue
			}
			s := valueText(v)
			if t.Fields[i].Type.Kind == domain.KindFloat64 {
				s = domain.FormatNumber(v.AsFloat(), t.Fields[i].Type)
			}
			if strings.ContainsAny(s, ",\"\r\n") || s == "" {
				s = `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
			}
			b.WriteString(s)
		}
		return domain.String(b.String()), nil
	}}, nil
}

// compileSchemaOfCSV: schema_of_csv(csv) is the schema Spark infers from one
// CSV record (a string literal): STRUCT<_c0: INT, _c1: STRING>, each field
// INT, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP or STRING.
func compileSchemaOfCSV(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	text, ok := stringConst(e.Args[0])
	if !ok {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a string literal", name)
	}
	if err := csvOptionsRefused(e, name, 1); err != nil {
		return nil, err
	}
	fields, _ := splitCSV(text)
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
