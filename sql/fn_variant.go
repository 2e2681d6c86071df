package sql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// VARIANT holds any JSON value. A variant is stored as its JSON text made
// canonical (compact, each object's keys sorted as Spark's variant keeps
// them, numbers and strings as written), so that equal variants are equal
// text; its functions parse that text when they look inside. Numbers keep
// their type by how they are written: 1 is a BIGINT, 1.5 a DECIMAL(2,1),
// 1e3 a DOUBLE, as Spark's parse_json makes them.

func init() {
	register(map[string]builtin{
		"parse_json":        {minArgs: 1, maxArgs: 1, compile: compileParseJSON},
		"try_parse_json":    {minArgs: 1, maxArgs: 1, compile: compileParseJSON},
		"variant_get":       {minArgs: 2, maxArgs: 3, compile: compileVariantGet},
		"try_variant_get":   {minArgs: 2, maxArgs: 3, compile: compileVariantGet},
		"is_variant_null":   {minArgs: 1, maxArgs: 1, compile: compileIsVariantNull},
		"schema_of_variant": {minArgs: 1, maxArgs: 1, compile: compileSchemaOfVariant},
		"to_variant_object": {minArgs: 1, maxArgs: 1, compile: compileToVariantObject},
	})
}

func isVariant(t domain.Type) bool { return t.Kind == domain.KindString && t.Variant }

// canonicalVariant parses JSON text into a variant's text; the error is
// MALFORMED_RECORD_IN_PARSING or VARIANT_DUPLICATE_KEY.
func canonicalVariant(s string, pos syntax.Pos) (string, error) {
	n, err := domain.ParseJSON(s)
	if err != nil {
		return "", exprErr(domain.CodeMalformedRecord, pos, "the text is not JSON: %v", err)
	}
	b, dup := domain.AppendVariant(nil, n)
	if dup != "" {
		return "", exprErr(domain.CodeVariantDuplicateKey, pos, "the JSON object has the key %q twice", dup)
	}
	return string(b), nil
}

// compileParseJSON: parse_json(s) is the variant of the JSON text s;
// text that is not JSON is MALFORMED_RECORD_IN_PARSING (NULL from
// try_parse_json).
func compileParseJSON(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	try, pos := name == "try_parse_json", e.Pos
	return &valuesNode{args: []node{x}, t: domain.TypeVariant, fails: !try, row: func(a []domain.Value) (domain.Value, error) {
		v, err := canonicalVariant(a[0].AsString(), pos)
		if err != nil {
			if try {
				return domain.Null(), nil
			}
			return domain.Value{}, err
		}
		return domain.String(v), nil
	}}, nil
}

// variantArg compiles argument i as a variant.
func (c *compiler) variantArg(e *syntax.FuncCall, i int, name string) (node, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	switch t := x.typ(); {
	case isVariant(t):
		return x, nil
	case t.Kind == domain.KindNull:
		return retype(x, domain.TypeVariant), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs a variant, found %s", name, x.typ())
}

// compileVariantGet: variant_get(v, path[, type]) is the value at path (a
// string literal: $ then .key, ['key'] or [n] steps) cast to type (a string
// literal, variant by default); NULL where the path leads nowhere. A value
// that does not cast is INVALID_VARIANT_CAST (NULL from try_variant_get).
func compileVariantGet(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	v, err := c.variantArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	lit, ok := e.Args[1].(*syntax.Literal)
	var steps []jsonStep
	if ok && lit.Kind == syntax.StringLit {
		steps, ok = parseJSONPath(lit.Value)
	}
	if !ok {
		return nil, exprErr(domain.CodeInvalidVariantPath, e.Args[1].Position(), "the path of %s must be a string literal such as '$.a[0]'", name)
	}
	t := domain.TypeVariant
	if len(e.Args) == 3 {
		tl, ok := e.Args[2].(*syntax.Literal)
		if !ok || tl.Kind != syntax.StringLit {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[2].Position(), "the type of %s must be a string literal such as 'int'", name)
		}
		if t, err = parseTypeText("type", tl.Value); err != nil {
			return nil, err
		}
	}
	return variantGetter(v, steps, t, strings.HasPrefix(name, "try_"), e.Pos, c.sess.TimeZone), nil
}

// variantGetter is the value of variant v at steps as type t; text becomes
// a timestamp in the time zone loc.
func variantGetter(v node, steps []jsonStep, t domain.Type, try bool, pos syntax.Pos, loc *time.Location) node {
	return &valuesNode{args: []node{v}, t: t, fails: !try, row: func(a []domain.Value) (domain.Value, error) {
		n, err := domain.ParseJSON(a[0].AsString())
		if err != nil {
			return domain.Value{}, exprErr(domain.CodeMalformedRecord, pos, "a variant holds text that is not JSON")
		}
		found, _, _ := walkJSON(n, steps)
		if len(found) != 1 {
			return domain.Null(), nil
		}
		out, err := variantAs(found[0], t, pos, loc)
		if err != nil && try {
			return domain.Null(), nil
		}
		return out, err
	}}
}

// variantAs casts the JSON value n of a variant to t, as Spark's variant
// cast does: a scalar as CAST would take its value (a number by its
// written type), JSON null as NULL, an object or array into a struct, map
// or array of its fields, or as its JSON text into a string.
func variantAs(n *domain.JSONNode, t domain.Type, pos syntax.Pos, loc *time.Location) (domain.Value, error) {
	if isVariant(t) {
		b, _ := domain.AppendVariant(nil, n)
		return domain.String(string(b)), nil
	}
	if n.Kind == domain.JSONNull {
		return domain.Null(), nil
	}
	bad := func() (domain.Value, error) {
		b, _ := domain.AppendVariant(nil, n)
		return domain.Value{}, exprErr(domain.CodeInvalidVariantCast, pos, "the variant value %s cannot be cast to %s", b, t)
	}
	switch t.Kind {
	case domain.KindList, domain.KindMap, domain.KindStruct:
		if n.Kind != domain.JSONArray && n.Kind != domain.JSONObject {
			return bad()
		}
		return jsonToValue(n, t), nil
	case domain.KindString:
		if n.Kind == domain.JSONString {
			return domain.String(n.Text), nil
		}
		b, _ := domain.AppendVariant(nil, n)
		return domain.String(string(b)), nil
	}
	var from node
	switch n.Kind {
	case domain.JSONBool:
		from = &litNode{t: domain.TypeBool, v: domain.Bool(n.Text == "true")}
	case domain.JSONString:
		from = &litNode{t: domain.TypeString, v: domain.String(n.Text)}
	case domain.JSONNumber:
		lit, err := (&compiler{sess: &Session{}}).literal(&syntax.Literal{Pos: pos, Kind: syntax.NumberLit, Text: n.Text})
		if err != nil {
			// an integer beyond a bigint, or a decimal beyond 38 digits
			lit = &litNode{t: domain.TypeFloat64, v: domain.Float(mustFloat(n.Text))}
		}
		from = lit
	default:
		return bad()
	}
	cast := castTo(from, t, false, pos, loc)
	c, err := cast.eval(domain.NoColumns(1))
	if err != nil {
		return bad()
	}
	return c.Value(0), nil
}

func mustFloat(s string) float64 {
	f, _ := parseDouble(s)
	return f
}

// compileIsVariantNull: is_variant_null(v) is true for a variant holding
// JSON null, false otherwise (a SQL NULL too).
func compileIsVariantNull(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	v, err := c.variantArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{v}, t: domain.TypeBool, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			out.Ints[i] = b2i(!isNullAt(a[0].Nulls, i) && s == "null")
		}
		out.Nulls = nil
		return nil
	}}, nil
}

// compileSchemaOfVariant: schema_of_variant(v) is the SQL type of v's value,
// as Spark spells it: OBJECT<a: BIGINT>, ARRAY<STRING>, DECIMAL(2,1), VOID
// for JSON null; an array's elements of different types are VARIANT.
func compileSchemaOfVariant(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	v, err := c.variantArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	pos := e.Pos
	return &valuesNode{args: []node{v}, t: domain.TypeString, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		n, err := domain.ParseJSON(a[0].AsString())
		if err != nil {
			return domain.Value{}, exprErr(domain.CodeMalformedRecord, pos, "a variant holds text that is not JSON")
		}
		return domain.String(variantSchema(n)), nil
	}}, nil
}

func variantSchema(n *domain.JSONNode) string { return shapeOf(n).String() }

// variantShape is the SQL type of a variant value, as schema_of_variant
// names it: VOID, BOOLEAN, STRING, BIGINT, DOUBLE, DECIMAL(p,s), ARRAY of a
// shape, OBJECT of named shapes (sorted by name), or VARIANT where values of
// different types meet.
type variantShape struct {
	name           string
	precision, scl int
	elem           *variantShape
	keys           []string
	fields         []*variantShape
}

func (v *variantShape) String() string {
	switch v.name {
	case "DECIMAL":
		return fmt.Sprintf("DECIMAL(%d,%d)", v.precision, v.scl)
	case "ARRAY":
		return "ARRAY<" + v.elem.String() + ">"
	case "OBJECT":
		parts := make([]string, len(v.keys))
		for i, k := range v.keys {
			parts[i] = k + ": " + v.fields[i].String()
		}
		return "OBJECT<" + strings.Join(parts, ", ") + ">"
	}
	return v.name
}

func shapeOf(n *domain.JSONNode) *variantShape {
	switch n.Kind {
	case domain.JSONNull:
		return &variantShape{name: "VOID"}
	case domain.JSONBool:
		return &variantShape{name: "BOOLEAN"}
	case domain.JSONString:
		return &variantShape{name: "STRING"}
	case domain.JSONNumber:
		if strings.ContainsAny(n.Text, "eE") {
			return &variantShape{name: "DOUBLE"}
		}
		if _, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
			return &variantShape{name: "BIGINT"}
		}
		lit, err := decimalLiteral(strings.TrimPrefix(n.Text, "-"), syntax.Pos{})
		if err != nil {
			return &variantShape{name: "DOUBLE"} // beyond 38 digits
		}
		t := lit.typ()
		return &variantShape{name: "DECIMAL", precision: t.Precision, scl: t.Scale}
	case domain.JSONArray:
		elem := &variantShape{name: "VOID"}
		for _, it := range n.Items {
			elem = mergeShapes(elem, shapeOf(it))
		}
		return &variantShape{name: "ARRAY", elem: elem}
	}
	obj := &variantShape{name: "OBJECT"}
	for i, k := range n.Keys {
		obj = mergeShapes(obj, &variantShape{name: "OBJECT", keys: []string{k}, fields: []*variantShape{shapeOf(n.Items[i])}})
	}
	return obj
}

// mergeShapes is the shape that holds values of both shapes, as Spark's
// schema_of_variant merges them: VOID gives way, a bigint and a decimal
// meet in a decimal (the bigint as DECIMAL(20,0)) of up to 38 digits, any
// number and a double in DOUBLE, arrays element by element, objects key by
// key; anything else is VARIANT.
func mergeShapes(a, b *variantShape) *variantShape {
	switch {
	case a.name == "VOID":
		return b
	case b.name == "VOID":
		return a
	case a.name == "ARRAY" && b.name == "ARRAY":
		return &variantShape{name: "ARRAY", elem: mergeShapes(a.elem, b.elem)}
	case a.name == "OBJECT" && b.name == "OBJECT":
		out := &variantShape{name: "OBJECT"}
		i, j := 0, 0
		for i < len(a.keys) || j < len(b.keys) {
			switch {
			case j == len(b.keys) || i < len(a.keys) && a.keys[i] < b.keys[j]:
				out.keys, out.fields = append(out.keys, a.keys[i]), append(out.fields, a.fields[i])
				i++
			case i == len(a.keys) || b.keys[j] < a.keys[i]:
				out.keys, out.fields = append(out.keys, b.keys[j]), append(out.fields, b.fields[j])
				j++
			default:
				out.keys, out.fields = append(out.keys, a.keys[i]), append(out.fields, mergeShapes(a.fields[i], b.fields[j]))
				i, j = i+1, j+1
			}
		}
		return out
	case a.name == b.name && a.name != "DECIMAL":
		return a
	}
	number := func(v *variantShape) bool { return v.name == "BIGINT" || v.name == "DECIMAL" || v.name == "DOUBLE" }
	if !number(a) || !number(b) {
		return &variantShape{name: "VARIANT"}
	}
	if a.name == "DOUBLE" || b.name == "DOUBLE" {
		return &variantShape{name: "DOUBLE"}
	}
	asDecimal := func(v *variantShape) (int, int) {
		if v.name == "BIGINT" {
			return 20, 0
		}
		return v.precision, v.scl
	}
	ap, as := asDecimal(a)
	bp, bs := asDecimal(b)
	scale := max(as, bs)
	p := scale + max(ap-as, bp-bs)
	if p > domain.MaxDecimalPrecision {
		return &variantShape{name: "DOUBLE"}
	}
	return &variantShape{name: "DECIMAL", precision: p, scl: scale}
}

// compileToVariantObject: to_variant_object(x) is the variant of a struct,
// map or array (structs become objects).
func compileToVariantObject(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if !x.typ().Kind.IsNested() {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a struct, a map or an array, found %s", name, x.typ())
	}
	return toVariant(x, e.Pos), nil
}

// toVariant is the variant of any value: its JSON, made canonical.
func toVariant(x node, pos syntax.Pos) node {
	t := x.typ()
	return &valuesNode{args: []node{x}, t: domain.TypeVariant, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		v, err := canonicalVariant(string(domain.AppendJSON(nil, a[0], t)), pos)
		if err != nil {
			return domain.Value{}, err
		}
		return domain.String(v), nil
	}}
}

// castVariant compiles CAST(x AS VARIANT), the variant of any value, and
// CAST(v AS type), the value of a variant as variant_get(v, '$', type).
func (c *compiler) castVariant(e *syntax.Cast, x node) (node, error) {
	to, err := DomainType(e.Type)
	if err != nil {
		return nil, err
	}
	switch {
	case x.typ().Kind == domain.KindNull:
		return retype(x, to), nil
	case x.typ().Equal(to):
		return x, nil
	case isVariant(to):
		return toVariant(x, e.Pos), nil
	}
	return variantGetter(x, nil, to, e.Try, e.Pos, c.sess.TimeZone), nil
}
