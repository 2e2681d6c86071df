package sql

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"get_json_object":   {minArgs: 2, maxArgs: 2, compile: compileGetJSONObject},
		"from_json":         {minArgs: 2, maxArgs: 3, compile: compileFromJSON},
		"from_debezium":     {minArgs: 2, maxArgs: 2, compile: compileFromDebezium},
		"to_json":           {minArgs: 1, maxArgs: 2, compile: compileToJSON},
		"schema_of_json":    {minArgs: 1, maxArgs: 2, compile: compileSchemaOfJSON},
		"json_object_keys":  {minArgs: 1, maxArgs: 1, compile: compileJSONObjectKeys},
		"json_array_length": {minArgs: 1, maxArgs: 1, compile: compileJSONArrayLength},
	})
}

// parseJSON reads JSON text; ok is false when it is not valid JSON.
func parseJSON(s string) (*domain.JSONNode, bool) {
	n, err := domain.ParseJSON(s)
	return n, err == nil
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
func walkJSON(v *domain.JSONNode, steps []jsonStep) ([]*domain.JSONNode, bool, *errAmbiguousKey) {
	cur := []*domain.JSONNode{v}
	wild := false
	for _, st := range steps {
		var next []*domain.JSONNode
		for _, x := range cur {
			switch {
			case st.wildcard:
				wild = true
				if x.Kind == domain.JSONArray {
					next = append(next, x.Items...)
				}
			case st.index >= 0:
				if x.Kind == domain.JSONArray && st.index < len(x.Items) {
					next = append(next, x.Items[st.index])
				}
			case x.Kind == domain.JSONObject:
				found := -1
				for i, k := range x.Keys {
					if k == st.key || (st.fold && strings.EqualFold(k, st.key)) {
						if found >= 0 && x.Keys[found] != k {
							return nil, false, &errAmbiguousKey{st.key}
						}
						if found < 0 {
							found = i
						}
					}
				}
				if found >= 0 {
					next = append(next, x.Items[found])
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
func jsonResult(vals []*domain.JSONNode, wild, raw bool) (string, bool) {
	if len(vals) == 0 {
		return "", false
	}
	if len(vals) > 1 || (wild && raw) {
		return string((&domain.JSONNode{Kind: domain.JSONArray, Items: vals}).AppendCompact(nil)), true
	}
	v := vals[0]
	switch v.Kind {
	case domain.JSONNull:
		return "", false
	case domain.JSONString:
		return v.Text, true
	}
	if raw {
		return v.Raw, true
	}
	return string(v.AppendCompact(nil)), true
}

// jsonArg compiles argument i, a JSON text, as a string.
func (c *compiler) jsonArg(e *syntax.FuncCall, i int, name string) (node, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	return asString(x, e.Args[i].Position(), name)
}

func compileGetJSONObject(c *compiler, e *syntax.FuncCall, name string) (node, error) {
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
func (c *compiler) jsonPath(e *syntax.JSONPath) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	variant := isVariant(x.typ())
	if x, err = asString(x, e.X.Position(), "the : operator"); err != nil {
		return nil, err
	}
	steps := make([]jsonStep, len(e.Steps))
	for i, st := range e.Steps {
		switch {
		case st.Wildcard:
			steps[i] = jsonStep{wildcard: true, index: -1}
		case st.Index != nil:
			lit, ok := st.Index.(*syntax.Literal)
			n, err := 0, error(nil)
			if ok && lit.Kind == syntax.NumberLit {
				n, err = strconv.Atoi(lit.Text)
			}
			if !ok || lit.Kind != syntax.NumberLit || err != nil {
				return nil, exprErr(domain.CodeDatatypeMismatch, st.Index.Position(), "a JSON path index must be an integer literal")
			}
			steps[i] = jsonStep{index: n}
		default:
			steps[i] = jsonStep{key: st.Field, fold: !st.Bracket, index: -1}
		}
	}
	p := e.Pos
	if variant {
		// on a variant, the path gives a variant (keys match exactly, as
		// variant_get's)
		for i := range steps {
			steps[i].fold = false
		}
		return variantGetter(x, steps, domain.TypeVariant, false, p, c.sess.TimeZone), nil
	}
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
// and a field whose value does not fit its type is NULL; with mode
// FAILFAST either is MALFORMED_RECORD_IN_PARSING. dateFormat and
// timestampFormat read dates and timestamps by a pattern.
func compileFromJSON(c *compiler, e *syntax.FuncCall, name string) (node, error) {
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
	opts, err := c.textOptionsOf(e, 2, name, "mode", "dateformat", "timestampformat")
	if err != nil {
		return nil, err
	}
	if !t.Kind.IsNested() {
		return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "%s needs a struct, array or map schema, found %s", name, t)
	}
	pos := e.Pos
	return &valuesNode{args: []node{x}, t: t, fails: opts.failFast, row: func(a []domain.Value) (domain.Value, error) {
		v, ok := parseJSON(a[0].AsString())
		if !ok {
			if opts.failFast {
				return domain.Value{}, exprErr(domain.CodeMalformedRecord, pos, "%s (mode FAILFAST): %q is not JSON", name, a[0].AsString())
			}
			if t.Kind == domain.KindStruct {
				return domain.Struct(make([]domain.Value, len(t.Fields))...), nil
			}
			return domain.Null(), nil
		}
		r := jsonReading{opts: &opts}
		out := r.value(v, t)
		if r.misfit && opts.failFast {
			return domain.Value{}, exprErr(domain.CodeMalformedRecord, pos, "%s (mode FAILFAST): %q does not fit %s", name, a[0].AsString(), t)
		}
		return out, nil
	}}, nil
}

// compileFromDebezium: from_debezium(event, schema) takes a Debezium change
// event (a JSON string, with or without the schema envelope) apart into a
// struct of the row's columns, read as from_json reads them into schema (a
// string literal of columns: 'id BIGINT, name STRING'; a column the schema
// envelope gives a logical type, a time or a decimal, as that type means
// it), then _op (INSERT,
// UPDATE, DELETE, READ, TRUNCATE), _source_ts and _sequence (see
// domain.ParseDebezium): the after image, the before image for a delete,
// NULLs for a truncate. A NULL event (a Kafka tombstone) gives NULL; an
// event that is not a Debezium change event is MALFORMED_RECORD_IN_PARSING.
// Select its columns with from_debezium(...).* or d.* of an alias.
func compileFromDebezium(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	text, ok := stringConst(e.Args[1])
	if !ok {
		return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "%s needs the row's columns as a string literal, such as 'id BIGINT, name STRING'", name)
	}
	row, err := parseTypeText("schema", text)
	if err == nil && row.Kind != domain.KindStruct {
		err = fmt.Errorf("it is %s, not a list of columns", row)
	}
	if err != nil {
		return nil, exprErr(domain.CodeInvalidSchema, e.Args[1].Position(), "the schema %q cannot be read: %v", text, err)
	}
	fields := append(append([]domain.Field(nil), row.Fields...),
		domain.Field{Name: domain.DebeziumOp, Type: domain.TypeString, Nullable: true},
		domain.Field{Name: domain.DebeziumSourceTS, Type: domain.Type{Kind: domain.KindTimestamp}, Nullable: true},
		domain.Field{Name: domain.DebeziumSequence, Type: domain.TypeString, Nullable: true})
	t := domain.StructOf(fields...)
	return &valuesNode{args: []node{x}, t: t, row: func(a []domain.Value) (domain.Value, error) {
		if a[0].IsNull() || strings.TrimSpace(a[0].AsString()) == "null" {
			return domain.Null(), nil
		}
		ev, err := domain.ParseDebezium(a[0].AsString())
		if err != nil {
			return domain.Null(), domain.Errorf(domain.CodeMalformedRecord, "%s: %v", name, err)
		}
		vals := make([]domain.Value, len(row.Fields), len(fields))
		if ev.Image != nil {
			copy(vals, jsonToValue(ev.Image, row).Fields())
			for i, f := range row.Fields {
				// a column the schema envelope gives a logical type (a
				// time, a decimal): its meaning, where it fits the column
				l, ok := ev.Logical[f.Name]
				if !ok {
					continue
				}
				v, ok := l.Value(ev.Image.Member(f.Name))
				switch {
				case !ok:
				case v.Kind() == domain.KindDecimal && f.Type.Kind != domain.KindString:
					// the column's own type decides: a decimal of its
					// precision and scale, or a double
					vals[i] = jsonToValue(&domain.JSONNode{Kind: domain.JSONNumber, Text: v.String()}, f.Type)
				case v.Kind() == f.Type.Kind || v.IsNull():
					vals[i] = v
				case f.Type.Kind == domain.KindFloat64 && v.Kind() == domain.KindString:
					if x, err := strconv.ParseFloat(v.AsString(), 64); err == nil {
						vals[i] = domain.Float(x)
					}
				}
			}
		}
		ts := domain.Null()
		if ev.SourceTS != nil {
			ts = domain.TimestampMicros(*ev.SourceTS * 1000)
		}
		return domain.Struct(append(vals, domain.String(ev.Op), ts, domain.String(ev.Sequence))...), nil
	}}, nil
}

// jsonToValue converts a JSON value to type t, NULL where it does not fit.
func jsonToValue(v *domain.JSONNode, t domain.Type) domain.Value {
	return (&jsonReading{opts: &textOptions{loc: time.UTC}}).value(v, t)
}

// jsonReading converts JSON values as from_json's options say; misfit
// records that a value did not fit its type (and was read as NULL).
type jsonReading struct {
	opts   *textOptions
	misfit bool
}

func (r *jsonReading) value(v *domain.JSONNode, t domain.Type) domain.Value {
	if v.Kind == domain.JSONNull {
		return domain.Null()
	}
	switch t.Kind {
	case domain.KindString:
		if v.Kind == domain.JSONString {
			return domain.String(v.Text)
		}
		return domain.String(v.Raw)
	case domain.KindInt64:
		if v.Kind == domain.JSONNumber && v.IsInt() {
			if n, err := strconv.ParseInt(v.Text, 10, 64); err == nil {
				return domain.Int(n)
			}
		}
	case domain.KindFloat64:
		if v.Kind == domain.JSONNumber {
			f, _ := strconv.ParseFloat(v.Text, 64)
			return domain.Float(f)
		}
		if v.Kind == domain.JSONString {
			if f, ok := parseDouble(v.Text); ok && (v.Text == "NaN" || strings.HasSuffix(v.Text, "Infinity")) {
				return domain.Float(f)
			}
		}
	case domain.KindDecimal:
		// a number by its digits as written, or a string of one, as Spark
		if v.Kind == domain.JSONNumber || v.Kind == domain.JSONString {
			if u, ok, fits := domain.ParseDecimal(v.Text, t.Precision, t.Scale); ok && fits {
				return domain.Decimal(u, t.Precision, t.Scale)
			}
		}
	case domain.KindBool:
		if v.Kind == domain.JSONBool {
			return domain.Bool(v.Text == "true")
		}
	case domain.KindDate:
		if d, ok := r.opts.parseDateText(v.Text); ok && v.Kind == domain.JSONString {
			return domain.DateDays(d)
		}
	case domain.KindTimestamp:
		if us, ok := r.opts.parseTimestampText(v.Text, t.NTZ); ok && v.Kind == domain.JSONString {
			return domain.TimestampMicros(us)
		}
	case domain.KindBytes:
		if b, err := base64.StdEncoding.DecodeString(v.Text); err == nil && v.Kind == domain.JSONString {
			return domain.Bytes(b)
		}
	case domain.KindYearMonthInterval:
		if m, ok := parseIntervalString(v.Text, "YEAR", "MONTH"); ok && v.Kind == domain.JSONString {
			return domain.YearMonthInterval(m)
		}
	case domain.KindDayTimeInterval:
		if us, ok := parseIntervalString(v.Text, "DAY", "SECOND"); ok && v.Kind == domain.JSONString {
			return domain.DayTimeInterval(us)
		}
	case domain.KindList:
		if v.Kind == domain.JSONArray {
			items := make([]domain.Value, len(v.Items))
			for i, it := range v.Items {
				items[i] = r.value(it, elemOf(t))
			}
			return domain.List(items...)
		}
	case domain.KindMap:
		if v.Kind == domain.JSONObject && keyOf(t).Kind == domain.KindString {
			entries := make([]domain.Value, 0, len(v.Items))
			for i, it := range v.Items {
				entries = append(entries, domain.MapEntry(domain.String(v.Keys[i]), r.value(it, elemOf(t))))
			}
			return domain.Map(entries...)
		}
	case domain.KindStruct:
		if v.Kind == domain.JSONObject {
			fields := make([]domain.Value, len(t.Fields))
			for i, f := range t.Fields {
				// the last of duplicate keys wins, as in Spark
				for j := len(v.Keys) - 1; j >= 0; j-- {
					if v.Keys[j] == f.Name {
						fields[i] = r.value(v.Items[j], f.Type)
						break
					}
				}
			}
			return domain.Struct(fields...)
		}
	}
	r.misfit = true
	return domain.Null()
}

// ---- to_json ----

// compileToJSON: to_json(struct | map | array[, options]) writes JSON as
// Spark does (domain.AppendJSON); dateFormat and timestampFormat write
// dates and timestamps by a pattern, ignoreNullFields false writes NULL
// fields as null.
func compileToJSON(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	opts, err := c.textOptionsOf(e, 1, name, "dateformat", "timestampformat", "ignorenullfields")
	if err != nil {
		return nil, err
	}
	style := opts.jsonStyle()
	t := x.typ()
	if isVariant(t) {
		return &widened{x: x, t: domain.TypeString}, nil // its text is its JSON
	}
	if !t.Kind.IsNested() {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a struct, a map, an array or a variant, found %s", name, t)
	}
	return &valuesNode{args: []node{x}, t: domain.TypeString, row: func(a []domain.Value) (domain.Value, error) {
		return domain.String(string(domain.AppendJSONStyled(nil, a[0], t, style))), nil
	}}, nil
}

// ---- schema_of_json ----

// compileSchemaOfJSON: schema_of_json(json literal) is the DDL of the type
// Spark infers: BIGINT, DOUBLE, BOOLEAN, STRING (also for null), ARRAY<...>,
// STRUCT<...> with fields sorted by name.
func compileSchemaOfJSON(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	text, ok := stringConst(e.Args[0])
	if !ok {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a string literal", name)
	}
	if _, err := c.textOptionsOf(e, 1, name); err != nil { // no option changes what it infers here
		return nil, err
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

func inferJSON(v *domain.JSONNode) *jsonType {
	switch v.Kind {
	case domain.JSONNumber:
		if v.IsInt() {
			if _, err := strconv.ParseInt(v.Text, 10, 64); err == nil {
				return &jsonType{name: "BIGINT"}
			}
			return &jsonType{name: "DECIMAL(38,0)"}
		}
		return &jsonType{name: "DOUBLE"}
	case domain.JSONBool:
		return &jsonType{name: "BOOLEAN"}
	case domain.JSONString:
		return &jsonType{name: "STRING"}
	case domain.JSONArray:
		var el *jsonType
		for _, it := range v.Items {
			el = mergeJSONTypes(el, inferJSON(it))
		}
		return &jsonType{name: "ARRAY", elem: el}
	case domain.JSONObject:
		t := &jsonType{name: "STRUCT", fields: map[string]*jsonType{}}
		for i, k := range v.Keys {
			t.fields[k] = mergeJSONTypes(t.fields[k], inferJSON(v.Items[i]))
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

func compileJSONObjectKeys(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{x}, t: domain.ListOf(domain.TypeString), row: func(a []domain.Value) (domain.Value, error) {
		v, ok := parseJSON(a[0].AsString())
		if !ok || v.Kind != domain.JSONObject {
			return domain.Null(), nil
		}
		keys := make([]domain.Value, len(v.Keys))
		for i, k := range v.Keys {
			keys[i] = domain.String(k)
		}
		return domain.List(keys...), nil
	}}, nil
}

func compileJSONArrayLength(c *compiler, e *syntax.FuncCall, name string) (node, error) {
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
			if !ok || v.Kind != domain.JSONArray {
				if out.Nulls == nil {
					out.Nulls = make([]bool, len(out.Ints))
				}
				out.Nulls[i] = true
				continue
			}
			out.Ints[i] = int64(len(v.Items))
		}
		return nil
	}}, nil
}

// ---- json_tuple ----

// compileJSONTuple: json_tuple(json, 'k1', 'k2', ...) is a generator of one
// row with columns c0, c1, ...: each key's value at the top level, as
// get_json_object gives it.
func compileJSONTuple(c *compiler, e *syntax.FuncCall, name string) (*Generator, error) {
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
