package sql

import (
	"encoding/base64"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
)

func init() {
	register(map[string]builtin{
		"get_json_object":   {minArgs: 2, maxArgs: 2, compile: compileGetJSONObject},
		"from_json":         {minArgs: 2, maxArgs: 3, compile: compileFromJSON},
		"to_json":           {minArgs: 1, maxArgs: 2, compile: compileToJSON},
		"schema_of_json":    {minArgs: 1, maxArgs: 2, compile: compileSchemaOfJSON},
		"json_object_keys":  {minArgs: 1, maxArgs: 1, compile: compileJSONObjectKeys},
		"json_array_length": {minArgs: 1, maxArgs: 1, compile: compileJSONArrayLength},
	})
}

// ---- paths ----

// jsonStep is one step of a JSON path: a key, an array index or [*].
type jsonStep struct {
	key      string
	fold     bool // the key matches case-insensitively (col:key, not col:['key'])
	index    int  // when >= 0
	wildcard bool
}

// parseJSONPath parses get_json_object's path: $ then .key, ['key'],
// ["key"], [n] or [*] steps. ok is false for a path Spark rejects (its
// get_json_object then returns NULL).
func parseJSONPath(p string) ([]jsonStep, bool) {
	if !strings.HasPrefix(p, "$") {
		return nil, false
	}
	var steps []jsonStep
	for i := 1; i < len(p); {
		switch p[i] {
		case '.':
			j := i + 1
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			key := p[i+1 : j]
			switch key {
			case "":
				return nil, false
			case "*":
				steps = append(steps, jsonStep{wildcard: true, index: -1})
			default:
				steps = append(steps, jsonStep{key: key, index: -1})
			}
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, false
			}
			inner := p[i+1 : i+end]
			switch {
			case inner == "*":
				steps = append(steps, jsonStep{wildcard: true, index: -1})
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				key := inner[1 : len(inner)-1]
				if strings.ContainsAny(key, `'"`) {
					return nil, false
				}
				steps = append(steps, jsonStep{key: key, index: -1})
			default:
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 || strings.HasPrefix(inner, "+") {
					return nil, false
				}
				steps = append(steps, jsonStep{index: n})
			}
			i += end + 1
		default:
			return nil, false
		}
	}
	return steps, true
}

// errAmbiguousKey is a case-insensitive key that matches several keys.
type errAmbiguousKey struct{ key string }

// walkJSON follows steps from v. It returns the values reached and whether
// the path had a wildcard (then several values are an array of them).
func walkJSON(v *jsonValue, steps []jsonStep) ([]*jsonValue, bool, *errAmbiguousKey) {
	cur := []*jsonValue{v}
	wild := false
	for _, st := range steps {
		var next []*jsonValue
		for _, x := range cur {
			switch {
			case st.wildcard:
				wild = true
				if x.kind == jsonArray {
					next = append(next, x.items...)
				}
			case st.index >= 0:
				if x.kind == jsonArray && st.index < len(x.items) {
					next = append(next, x.items[st.index])
				}
			case x.kind == jsonObject:
				found := -1
				for i, k := range x.keys {
					if k == st.key || (st.fold && strings.EqualFold(k, st.key)) {
						if found >= 0 && x.keys[found] != k {
							return nil, false, &errAmbiguousKey{st.key}
						}
						if found < 0 {
							found = i
						}
					}
				}
				if found >= 0 {
					next = append(next, x.items[found])
				}
			}
		}
		cur = next
	}
	return cur, wild, nil
}

// jsonResult renders what a path reached as get_json_object returns it: a
// string's value, a JSON null as NULL, anything else as JSON text (raw: as
// written, else compact). With a wildcard, one value is returned alone and
// several as a JSON array.
func jsonResult(vals []*jsonValue, wild, raw bool) (string, bool) {
	if len(vals) == 0 {
		return "", false
	}
	if len(vals) > 1 || (wild && raw) {
		var sb strings.Builder
		(&jsonValue{kind: jsonArray, items: vals}).writeCompact(&sb)
		return sb.String(), true
	}
	v := vals[0]
	switch v.kind {
	case jsonNull:
		return "", false
	case jsonString:
		return v.str, true
	}
	if raw {
		return v.raw, true
	}
	var sb strings.Builder
	v.writeCompact(&sb)
	return sb.String(), true
}

// jsonArg compiles argument i, a JSON text, as a string.
func (c *compiler) jsonArg(e *FuncCall, i int, name string) (node, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	return asString(x, e.Args[i].Position(), name)
}

func compileGetJSONObject(c *compiler, e *FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	path, err := c.jsonArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	if p, ok := stringConst(e.Args[1]); ok {
		steps, valid := parseJSONPath(p)
		return &fnNode{args: []node{x}, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
			for i, s := range a[0].Strs {
				if isNullAt(out.Nulls, i) {
					continue
				}
				r, ok := getJSONObject(s, steps, valid)
				setStr(out, i, r, ok)
			}
			return nil
		}}, nil
	}
	return &fnNode{args: []node{x, path}, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			steps, valid := parseJSONPath(a[1].Strs[i])
			r, ok := getJSONObject(s, steps, valid)
			setStr(out, i, r, ok)
		}
		return nil
	}}, nil
}

func getJSONObject(s string, steps []jsonStep, valid bool) (string, bool) {
	if !valid {
		return "", false
	}
	v, ok := parseJSON(s)
	if !ok {
		return "", false
	}
	vals, wild, amb := walkJSON(v, steps)
	if amb != nil {
		return "", false
	}
	return jsonResult(vals, wild, false)
}

// setStr sets row i of a string column, or marks it NULL.
func setStr(out *domain.Column, i int, s string, ok bool) {
	if !ok {
		if out.Nulls == nil {
			out.Nulls = make([]bool, len(out.Strs))
		}
		out.Nulls[i] = true
		return
	}
	out.Strs[i] = s
}

// jsonPath compiles col:a.b[0], Databricks' path on a JSON string: keys
// written plainly or in backticks match case-insensitively (a key matching
// several keys that differ in case is AMBIGUOUS_REFERENCE_TO_FIELDS), keys in
// brackets exactly; values come back as written.
func (c *compiler) jsonPath(e *JSONPath) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if x, err = asString(x, e.X.Position(), "the : operator"); err != nil {
		return nil, err
	}
	steps := make([]jsonStep, len(e.Steps))
	for i, st := range e.Steps {
		switch {
		case st.Wildcard:
			steps[i] = jsonStep{wildcard: true, index: -1}
		case st.Index != nil:
			lit, ok := st.Index.(*Literal)
			n, err := 0, error(nil)
			if ok && lit.Kind == NumberLit {
				n, err = strconv.Atoi(lit.Text)
			}
			if !ok || lit.Kind != NumberLit || err != nil {
				return nil, exprErr(domain.CodeDatatypeMismatch, st.Index.Position(), "a JSON path index must be an integer literal")
			}
			steps[i] = jsonStep{index: n}
		default:
			steps[i] = jsonStep{key: st.Field, fold: !st.Bracket, index: -1}
		}
	}
	p := e.Pos
	return &fnNode{args: []node{x}, t: domain.TypeString, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			v, ok := parseJSON(s)
			if !ok {
				setStr(out, i, "", false)
				continue
			}
			vals, wild, amb := walkJSON(v, steps)
			if amb != nil {
				return exprErr(domain.CodeAmbiguousField, p, "the JSON key %s matches several keys that differ in case; write it in brackets (['key']) to match exactly", amb.key)
			}
			r, ok := jsonResult(vals, wild, true)
			setStr(out, i, r, ok)
		}
		return nil
	}}, nil
}

// ---- from_json ----

// compileFromJSON: from_json(json, schema[, options]) parses JSON into the
// schema, a string literal. As Spark's PERMISSIVE mode does, JSON that does
// not parse gives a struct of NULLs (a NULL for an array or map schema),
// and a field whose value does not fit its type is NULL. Options are not
// supported yet.
func compileFromJSON(c *compiler, e *FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
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
	if len(e.Args) == 3 {
		return nil, exprErr(domain.CodeNotImplemented, e.Args[2].Position(), "%s options are not supported yet", name)
	}
	if !t.Kind.IsNested() {
		return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "%s needs a struct, array or map schema, found %s", name, t)
	}
	return &valuesNode{args: []node{x}, t: t, row: func(a []domain.Value) (domain.Value, error) {
		v, ok := parseJSON(a[0].AsString())
		if !ok {
			if t.Kind == domain.KindStruct {
				return domain.Struct(make([]domain.Value, len(t.Fields))...), nil
			}
			return domain.Null(), nil
		}
		return jsonToValue(v, t), nil
	}}, nil
}

// jsonToValue converts a JSON value to type t, NULL where it does not fit.
func jsonToValue(v *jsonValue, t domain.Type) domain.Value {
	if v.kind == jsonNull {
		return domain.Null()
	}
	switch t.Kind {
	case domain.KindString:
		if v.kind == jsonString {
			return domain.String(v.str)
		}
		return domain.String(v.raw)
	case domain.KindInt64:
		if v.kind == jsonNumber && v.isInt() {
			if n, err := strconv.ParseInt(v.str, 10, 64); err == nil {
				return domain.Int(n)
			}
		}
	case domain.KindFloat64:
		if v.kind == jsonNumber {
			f, _ := strconv.ParseFloat(v.str, 64)
			return domain.Float(f)
		}
		if v.kind == jsonString {
			if f, ok := parseDouble(v.str); ok && (v.str == "NaN" || strings.HasSuffix(v.str, "Infinity")) {
				return domain.Float(f)
			}
		}
	case domain.KindBool:
		if v.kind == jsonBool {
			return domain.Bool(v.str == "true")
		}
	case domain.KindDate:
		if d, ok := parseDate(v.str); ok && v.kind == jsonString {
			return domain.DateDays(d)
		}
	case domain.KindTimestamp:
		if us, ok := parseTimestampIn(v.str, time.UTC); ok && v.kind == jsonString {
			return domain.TimestampMicros(us)
		}
	case domain.KindBytes:
		if b, err := base64.StdEncoding.DecodeString(v.str); err == nil && v.kind == jsonString {
			return domain.Bytes(b)
		}
	case domain.KindList:
		if v.kind == jsonArray {
			items := make([]domain.Value, len(v.items))
			for i, it := range v.items {
				items[i] = jsonToValue(it, elemOf(t))
			}
			return domain.List(items...)
		}
	case domain.KindMap:
		if v.kind == jsonObject && keyOf(t).Kind == domain.KindString {
			entries := make([]domain.Value, 0, len(v.items))
			for i, it := range v.items {
				entries = append(entries, domain.MapEntry(domain.String(v.keys[i]), jsonToValue(it, elemOf(t))))
			}
			return domain.Map(entries...)
		}
	case domain.KindStruct:
		if v.kind == jsonObject {
			fields := make([]domain.Value, len(t.Fields))
			for i, f := range t.Fields {
				// the last of duplicate keys wins, as in Spark
				for j := len(v.keys) - 1; j >= 0; j-- {
					if v.keys[j] == f.Name {
						fields[i] = jsonToValue(v.items[j], f.Type)
						break
					}
				}
			}
			return domain.Struct(fields...)
		}
	}
	return domain.Null()
}

// ---- to_json ----

// compileToJSON: to_json(struct | map | array) writes JSON as Spark does:
// NULL struct fields left out, timestamps as 2024-02-29T13:14:15.123Z
// (Spark's default format, milliseconds, UTC), dates as 2024-02-29, binary
// as base64. Options are not supported yet.
func compileToJSON(c *compiler, e *FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if len(e.Args) == 2 {
		return nil, exprErr(domain.CodeNotImplemented, e.Args[1].Position(), "%s options are not supported yet", name)
	}
	t := x.typ()
	if !t.Kind.IsNested() {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a struct, a map or an array, found %s", name, t)
	}
	return &valuesNode{args: []node{x}, t: domain.TypeString, row: func(a []domain.Value) (domain.Value, error) {
		var sb strings.Builder
		writeValueJSON(&sb, a[0], t)
		return domain.String(sb.String()), nil
	}}, nil
}

func writeValueJSON(sb *strings.Builder, v domain.Value, t domain.Type) {
	if v.IsNull() {
		sb.WriteString("null")
		return
	}
	switch v.Kind() {
	case domain.KindString:
		writeJSONString(sb, v.AsString())
	case domain.KindBytes:
		writeJSONString(sb, base64.StdEncoding.EncodeToString(v.AsBytes()))
	case domain.KindFloat64:
		writeJSONFloat(sb, v.AsFloat())
	case domain.KindDate:
		writeJSONString(sb, valueText(v))
	case domain.KindTimestamp:
		writeJSONString(sb, time.UnixMicro(v.AsInt()).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	case domain.KindList:
		sb.WriteByte('[')
		for i, x := range v.AsList() {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeValueJSON(sb, x, elemOf(t))
		}
		sb.WriteByte(']')
	case domain.KindMap:
		sb.WriteByte('{')
		for i, en := range v.Entries() {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJSONString(sb, jsonMapKey(en.Fields()[0]))
			sb.WriteByte(':')
			writeValueJSON(sb, en.Fields()[1], elemOf(t))
		}
		sb.WriteByte('}')
	case domain.KindStruct:
		sb.WriteByte('{')
		first := true
		for i, f := range v.Fields() {
			if f.IsNull() || i >= len(t.Fields) {
				continue
			}
			if !first {
				sb.WriteByte(',')
			}
			first = false
			writeJSONString(sb, t.Fields[i].Name)
			sb.WriteByte(':')
			writeValueJSON(sb, f, t.Fields[i].Type)
		}
		sb.WriteByte('}')
	default:
		sb.WriteString(v.String())
	}
}

// jsonMapKey is the text of a map key in JSON, as Spark writes it: a
// scalar's string form, a struct or array as its values in brackets.
func jsonMapKey(k domain.Value) string {
	switch k.Kind() {
	case domain.KindStruct, domain.KindList:
		parts := make([]string, len(k.AsList()))
		for i, x := range k.AsList() {
			parts[i] = jsonMapKey(x)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case domain.KindNull:
		return "null"
	case domain.KindTimestamp:
		return time.UnixMicro(k.AsInt()).UTC().Format("2006-01-02 15:04:05.999999")
	}
	return valueText(k)
}

// ---- schema_of_json ----

// compileSchemaOfJSON: schema_of_json(json literal) is the DDL of the type
// Spark infers: BIGINT, DOUBLE, BOOLEAN, STRING (also for null), ARRAY<...>,
// STRUCT<...> with fields sorted by name. Options are not supported yet.
func compileSchemaOfJSON(c *compiler, e *FuncCall, name string) (node, error) {
	text, ok := stringConst(e.Args[0])
	if !ok {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a string literal", name)
	}
	if len(e.Args) == 2 {
		return nil, exprErr(domain.CodeNotImplemented, e.Args[1].Position(), "%s options are not supported yet", name)
	}
	v, ok := parseJSON(text)
	if !ok {
		return nil, exprErr(domain.CodeMalformedRecord, e.Args[0].Position(), "%s: %q is not valid JSON", name, text)
	}
	return &litNode{t: domain.TypeString, v: domain.String(inferJSON(v).ddl())}, nil
}

// jsonType is an inferred JSON type: a kind name, an element, or fields.
type jsonType struct {
	name   string // BIGINT DOUBLE BOOLEAN STRING NULL ARRAY STRUCT
	elem   *jsonType
	fields map[string]*jsonType
}

func inferJSON(v *jsonValue) *jsonType {
	switch v.kind {
	case jsonNumber:
		if v.isInt() {
			if _, err := strconv.ParseInt(v.str, 10, 64); err == nil {
				return &jsonType{name: "BIGINT"}
			}
			return &jsonType{name: "DECIMAL(38,0)"}
		}
		return &jsonType{name: "DOUBLE"}
	case jsonBool:
		return &jsonType{name: "BOOLEAN"}
	case jsonString:
		return &jsonType{name: "STRING"}
	case jsonArray:
		var el *jsonType
		for _, it := range v.items {
			el = mergeJSONTypes(el, inferJSON(it))
		}
		return &jsonType{name: "ARRAY", elem: el}
	case jsonObject:
		t := &jsonType{name: "STRUCT", fields: map[string]*jsonType{}}
		for i, k := range v.keys {
			t.fields[k] = mergeJSONTypes(t.fields[k], inferJSON(v.items[i]))
		}
		return t
	}
	return &jsonType{name: "NULL"}
}

// mergeJSONTypes is the type of values of both types, as Spark's inference
// widens: bigint and double to double, anything else that differs to string.
func mergeJSONTypes(a, b *jsonType) *jsonType {
	switch {
	case a == nil || a.name == "NULL":
		return b
	case b == nil || b.name == "NULL":
		return a
	case a.name == "ARRAY" && b.name == "ARRAY":
		return &jsonType{name: "ARRAY", elem: mergeJSONTypes(a.elem, b.elem)}
	case a.name == "STRUCT" && b.name == "STRUCT":
		t := &jsonType{name: "STRUCT", fields: map[string]*jsonType{}}
		for k, f := range a.fields {
			t.fields[k] = f
		}
		for k, f := range b.fields {
			t.fields[k] = mergeJSONTypes(t.fields[k], f)
		}
		return t
	case a.name == b.name:
		return a
	case (a.name == "BIGINT" || a.name == "DOUBLE" || strings.HasPrefix(a.name, "DECIMAL")) &&
		(b.name == "BIGINT" || b.name == "DOUBLE" || strings.HasPrefix(b.name, "DECIMAL")):
		return &jsonType{name: "DOUBLE"}
	}
	return &jsonType{name: "STRING"}
}

func (t *jsonType) ddl() string {
	switch {
	case t == nil || t.name == "NULL":
		return "STRING"
	case t.name == "ARRAY":
		return "ARRAY<" + t.elem.ddl() + ">"
	case t.name == "STRUCT":
		names := make([]string, 0, len(t.fields))
		for k := range t.fields {
			names = append(names, k)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, k := range names {
			parts[i] = quoteDDLName(k) + ": " + t.fields[k].ddl()
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">"
	}
	return t.name
}

// quoteDDLName puts a field name in backticks when it is not a plain
// identifier, as Spark's DDL output does.
func quoteDDLName(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// ---- json_object_keys, json_array_length ----

func compileJSONObjectKeys(c *compiler, e *FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{x}, t: domain.ListOf(domain.TypeString), row: func(a []domain.Value) (domain.Value, error) {
		v, ok := parseJSON(a[0].AsString())
		if !ok || v.kind != jsonObject {
			return domain.Null(), nil
		}
		keys := make([]domain.Value, len(v.keys))
		for i, k := range v.keys {
			keys[i] = domain.String(k)
		}
		return domain.List(keys...), nil
	}}, nil
}

func compileJSONArrayLength(c *compiler, e *FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: domain.TypeInt64, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			v, ok := parseJSON(s)
			if !ok || v.kind != jsonArray {
				if out.Nulls == nil {
					out.Nulls = make([]bool, len(out.Ints))
				}
				out.Nulls[i] = true
				continue
			}
			out.Ints[i] = int64(len(v.items))
		}
		return nil
	}}, nil
}

// ---- json_tuple ----

// compileJSONTuple: json_tuple(json, 'k1', 'k2', ...) is a generator of one
// row with columns c0, c1, ...: each key's value at the top level, as
// get_json_object gives it.
func compileJSONTuple(c *compiler, e *FuncCall, name string) (*Generator, error) {
	args := make([]node, len(e.Args))
	for i := range e.Args {
		n, err := c.jsonArg(e, i, name)
		if err != nil {
			return nil, err
		}
		args[i] = n
	}
	fields := make([]domain.Field, len(args)-1)
	for i := range fields {
		fields[i] = domain.Field{Name: "c" + strconv.Itoa(i), Type: domain.TypeString, Nullable: true}
	}
	return &Generator{schema: domain.NewSchema(fields...), args: args, rows: func(out *domain.Batch, vals []domain.Value) (int, error) {
		row := make([]domain.Value, len(fields))
		if v, ok := parseJSON(vals[0].AsString()); ok && !vals[0].IsNull() {
			for i := range row {
				if vals[i+1].IsNull() {
					continue
				}
				got, wild, _ := walkJSON(v, []jsonStep{{key: vals[i+1].AsString(), index: -1}})
				if s, ok := jsonResult(got, wild, false); ok {
					row[i] = domain.String(s)
				}
			}
		}
		return 1, out.AppendRow(row...)
	}}, nil
}
