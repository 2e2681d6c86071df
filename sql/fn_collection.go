package sql

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Arrays, maps and structs are held as domain.Values, so the functions here
// loop over the rows of a column of Values; scalar arguments are read per row
// as Values too, the cost of which is small beside the arrays themselves.

func init() {
	register(map[string]builtin{
		"array":            {minArgs: 0, maxArgs: -1, compile: compileArray},
		"struct":           {minArgs: 1, maxArgs: -1, lambdas: true, compile: compileStruct},
		"named_struct":     {minArgs: 2, maxArgs: -1, compile: compileNamedStruct},
		"map":              {minArgs: 0, maxArgs: -1, compile: compileMap},
		"map_from_arrays":  {minArgs: 2, maxArgs: 2, compile: compileMapFromArrays},
		"map_keys":         {minArgs: 1, maxArgs: 1, compile: compileMapParts},
		"map_values":       {minArgs: 1, maxArgs: 1, compile: compileMapParts},
		"map_entries":      {minArgs: 1, maxArgs: 1, compile: compileMapParts},
		"map_contains_key": {minArgs: 2, maxArgs: 2, compile: compileMapContainsKey},
		"size":             {minArgs: 1, maxArgs: 1, compile: compileSize},
		"cardinality":      {minArgs: 1, maxArgs: 1, compile: compileSize},
		"element_at":       {minArgs: 2, maxArgs: 2, compile: compileElementAt},
		"try_element_at":   {minArgs: 2, maxArgs: 2, compile: compileElementAt},
		"array_contains":   {minArgs: 2, maxArgs: 2, compile: compileArrayContains},
		"array_position":   {minArgs: 2, maxArgs: 2, compile: compileArrayPosition},
		"array_remove":     {minArgs: 2, maxArgs: 2, compile: compileArrayRemove},
		"array_distinct":   {minArgs: 1, maxArgs: 1, compile: compileArraySet},
		"array_union":      {minArgs: 2, maxArgs: 2, compile: compileArraySet},
		"array_intersect":  {minArgs: 2, maxArgs: 2, compile: compileArraySet},
		"array_except":     {minArgs: 2, maxArgs: 2, compile: compileArraySet},
		"array_join":       {minArgs: 2, maxArgs: 3, compile: compileArrayJoin},
		"array_max":        {minArgs: 1, maxArgs: 1, compile: compileArrayExtreme},
		"array_min":        {minArgs: 1, maxArgs: 1, compile: compileArrayExtreme},
		"arrays_zip":       {minArgs: 1, maxArgs: -1, compile: compileArraysZip},
		"slice":            {minArgs: 3, maxArgs: 3, compile: compileSlice},
		"sequence":         {minArgs: 2, maxArgs: 3, compile: compileSequence},
		"sort_array":       {minArgs: 1, maxArgs: 2, compile: compileSortArray},
		"flatten":          {minArgs: 1, maxArgs: 1, compile: compileFlatten},
	})
}

// valuesNode is a function computed row by row on Values. Unless nullSafe,
// it is NULL when any argument is NULL and row sees no NULL argument.
type valuesNode struct {
	args     []node
	t        domain.Type
	fails    bool
	nullSafe bool
	row      func(args []domain.Value) (domain.Value, error)
}

func (n *valuesNode) typ() domain.Type { return n.t }
func (n *valuesNode) mayFail() bool    { return n.fails || anyMayFail(n.args) }

func (n *valuesNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	cols, err := evalAll(n.args, b)
	if err != nil {
		return nil, err
	}
	var nulls []bool
	if !n.nullSafe {
		nulls = unionNulls(rows, cols...)
		for _, c := range cols {
			if c.Kind == domain.KindNull {
				nulls = allNulls(rows)
			}
		}
	}
	out := newCol(n.t.Kind, rows)
	vals := make([]domain.Value, len(cols))
	for i := 0; i < rows; i++ {
		if isNullAt(nulls, i) {
			putValue(out, i, domain.Null())
			continue
		}
		for j, c := range cols {
			vals[j] = c.Value(i)
		}
		v, err := n.row(vals)
		if err != nil {
			return nil, err
		}
		putValue(out, i, v)
	}
	return out, nil
}

// putValue stores v at row i of out, a column made by newCol.
func putValue(out *domain.Column, i int, v domain.Value) {
	if v.IsNull() {
		if out.Nulls == nil {
			out.Nulls = make([]bool, out.Len())
		}
		out.Nulls[i] = true
		return
	}
	switch out.Kind {
	case domain.KindBool, domain.KindInt64, domain.KindTimestamp, domain.KindDate:
		out.Ints[i] = v.AsInt()
	case domain.KindFloat64:
		out.Floats[i] = v.AsFloat()
	case domain.KindString, domain.KindBytes:
		out.Strs[i] = v.AsString()
	default:
		out.Values[i] = v
	}
}

// ---- types ----

func elemOf(t domain.Type) domain.Type {
	if t.Elem == nil {
		return domain.Type{}
	}
	return *t.Elem
}

func keyOf(t domain.Type) domain.Type {
	if t.Key == nil {
		return domain.Type{}
	}
	return *t.Key
}

// widerType is the type values of types a and b are both brought to (array
// elements, map keys and values, branches): commonType, applied inside
// arrays, maps and structs too.
func widerType(a, b domain.Type) (domain.Type, bool) {
	switch {
	case a.Kind == domain.KindNull:
		return b, true
	case b.Kind == domain.KindNull:
		return a, true
	case a.Kind != b.Kind || !a.Kind.IsNested():
		return commonType(a, b, false)
	case a.Kind == domain.KindList:
		e, ok := widerType(elemOf(a), elemOf(b))
		return domain.ListOf(e), ok
	case a.Kind == domain.KindMap:
		k, ok1 := widerType(keyOf(a), keyOf(b))
		v, ok2 := widerType(elemOf(a), elemOf(b))
		return domain.MapOf(k, v), ok1 && ok2
	}
	if len(a.Fields) != len(b.Fields) {
		return a, false
	}
	fields := make([]domain.Field, len(a.Fields))
	for i, f := range a.Fields {
		t, ok := widerType(f.Type, b.Fields[i].Type)
		if !ok {
			return a, false
		}
		fields[i] = domain.Field{Name: f.Name, Type: t, Nullable: f.Nullable || b.Fields[i].Nullable}
	}
	return domain.StructOf(fields...), true
}

// widen brings every node to one type, in place, and returns it.
func widen(ns []node, pos []syntax.Pos, what string) (domain.Type, error) {
	t := domain.Type{}
	for i, n := range ns {
		nt, ok := widerType(t, n.typ())
		if !ok {
			return t, exprErr(domain.CodeDatatypeMismatch, pos[i], "%s: a value of type %s cannot be combined with %s", what, n.typ(), t)
		}
		t = nt
	}
	for i := range ns {
		ns[i] = coerce(ns[i], t, pos[i])
	}
	return t, nil
}

// coerce brings n to type t, which widerType chose: a scalar by an implicit
// cast, an array, map or struct by converting its values.
func coerce(n node, t domain.Type, p syntax.Pos) node {
	from := n.typ()
	if from.Equal(t) || (from.Kind == t.Kind && !t.Kind.IsNested() && t.Kind != domain.KindDecimal) {
		return n
	}
	if !t.Kind.IsNested() || from.Kind == domain.KindNull {
		return implicit(n, t, p)
	}
	return &convertNode{x: n, t: t}
}

// convertNode converts nested values to a wider type (bigint elements to
// double, say).
type convertNode struct {
	x node
	t domain.Type
}

func (n *convertNode) typ() domain.Type { return n.t }
func (n *convertNode) mayFail() bool    { return n.x.mayFail() }
func (n *convertNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	out := newCol(n.t.Kind, b.Len())
	for i := range out.Values {
		putValue(out, i, convertValue(x.Value(i), n.t))
	}
	return out, nil
}

// convertValue converts v to type t, a type widerType gave for v's type.
func convertValue(v domain.Value, t domain.Type) domain.Value {
	if v.IsNull() {
		return v
	}
	switch t.Kind {
	case domain.KindFloat64:
		switch v.Kind() {
		case domain.KindInt64:
			return domain.Float(float64(v.AsInt()))
		case domain.KindDecimal:
			return domain.Float(domain.DecimalToFloat(v.AsDecimal(), v.Scale()))
		}
	case domain.KindDecimal:
		// widerType chose a decimal that holds v's digits on both sides
		u, scale := domain.Int128Of(v.AsInt()), 0
		if v.Kind() == domain.KindDecimal {
			u, scale = v.AsDecimal(), v.Scale()
		}
		u, _ = domain.Rescale(u, scale, t.Scale)
		return domain.Decimal(u, t.Precision, t.Scale)
	case domain.KindTimestamp:
		if v.Kind() == domain.KindDate {
			return domain.TimestampMicros(v.AsInt() * 86400_000_000)
		}
	case domain.KindString:
		if v.Kind() != domain.KindString {
			return domain.String(valueText(v))
		}
	case domain.KindList:
		items := make([]domain.Value, len(v.AsList()))
		for i, x := range v.AsList() {
			items[i] = convertValue(x, elemOf(t))
		}
		return domain.List(items...)
	case domain.KindMap:
		entries := make([]domain.Value, len(v.Entries()))
		for i, e := range v.Entries() {
			entries[i] = domain.MapEntry(convertValue(e.Fields()[0], keyOf(t)), convertValue(e.Fields()[1], elemOf(t)))
		}
		return domain.Map(entries...)
	case domain.KindStruct:
		fields := make([]domain.Value, len(v.Fields()))
		for i, f := range v.Fields() {
			fields[i] = convertValue(f, t.Fields[i].Type)
		}
		return domain.Struct(fields...)
	}
	return v
}

// valueText renders a scalar value as CAST(v AS STRING) does.
func valueText(v domain.Value) string {
	c := domain.NewColumn(v.Kind(), 1)
	_ = c.Append(v)
	return toString(c, 0)
}

// ---- compile helpers ----

// nested compiles argument i and checks that it is of kind k (or NULL, then
// typed as t).
func (c *compiler) nested(e *syntax.FuncCall, i int, k domain.Kind, name string) (node, error) {
	n, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	switch n.typ().Kind {
	case k:
		return n, nil
	case domain.KindNull:
		return retype(n, domain.Type{Kind: k, Elem: &domain.Type{}, Key: keyIfMap(k)}), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs %s as argument %d, found %s", name, article(k), i+1, n.typ())
}

func keyIfMap(k domain.Kind) *domain.Type {
	if k == domain.KindMap {
		return &domain.Type{}
	}
	return nil
}

func article(k domain.Kind) string {
	if k == domain.KindList {
		return "an array"
	}
	return "a " + k.String()
}

// arrayAndValue compiles an array and a value to look for in it, bringing
// both to one element type.
func (c *compiler) arrayAndValue(e *syntax.FuncCall, name string) (arr, val node, err error) {
	if arr, err = c.nested(e, 0, domain.KindList, name); err != nil {
		return nil, nil, err
	}
	if val, err = c.compile(e.Args[1]); err != nil {
		return nil, nil, err
	}
	t, ok := widerType(elemOf(arr.typ()), val.typ())
	if !ok {
		return nil, nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "%s: a value of type %s cannot be looked for in %s", name, val.typ(), arr.typ())
	}
	return coerce(arr, domain.ListOf(t), e.Args[0].Position()), coerce(val, t, e.Args[1].Position()), nil
}

// sqlEqual is equality of two non-NULL values as SQL compares them: NaN
// equals NaN, and -0.0 equals 0.0.
func sqlEqual(a, b domain.Value) bool {
	if a.Kind() == domain.KindFloat64 && b.Kind() == domain.KindFloat64 {
		return cmpFloat(a.AsFloat(), b.AsFloat()) == 0
	}
	return domain.Compare(a, b) == 0
}

// sqlCompare orders two non-NULL values of one type as SQL does.
func sqlCompare(a, b domain.Value) int {
	if a.Kind() == domain.KindFloat64 && b.Kind() == domain.KindFloat64 {
		return cmpFloat(a.AsFloat(), b.AsFloat())
	}
	return domain.Compare(a, b)
}

// orderable reports whether values of type t can be sorted and compared.
func orderable(t domain.Type) bool {
	switch t.Kind {
	case domain.KindMap:
		return false
	case domain.KindList:
		return orderable(elemOf(t))
	case domain.KindStruct:
		for _, f := range t.Fields {
			if !orderable(f.Type) {
				return false
			}
		}
	}
	return true
}

// ---- constructors ----

func compileArray(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	t, err := widen(args, argPos(e), "array")
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: args, t: domain.ListOf(t), nullSafe: true, row: func(a []domain.Value) (domain.Value, error) {
		return domain.List(slices.Clone(a)...), nil
	}}, nil
}

// structFieldName is the name Spark gives a struct() field: the alias, the
// column or field name, else col1, col2, ...
func structFieldName(a syntax.Expr, i int) string {
	switch a := a.(type) {
	case *syntax.Aliased:
		return a.Alias.Name
	case *syntax.ColumnRef:
		return a.Parts[len(a.Parts)-1].Name
	case *syntax.FieldAccess:
		return a.Field.Name
	}
	return "col" + strconv.Itoa(i+1)
}

func compileStruct(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	args := make([]node, len(e.Args))
	fields := make([]domain.Field, len(e.Args))
	for i, a := range e.Args {
		x := a
		switch al := a.(type) {
		case *syntax.Aliased:
			x = al.X
		case *syntax.Star, *syntax.NamedArg, *syntax.Lambda:
			return nil, exprErr(domain.CodeDatatypeMismatch, a.Position(), "struct does not take this kind of argument")
		}
		n, err := c.compile(x)
		if err != nil {
			return nil, err
		}
		args[i] = n
		fields[i] = domain.Field{Name: structFieldName(a, i), Type: n.typ(), Nullable: true}
	}
	return newStructNode(args, fields), nil
}

func newStructNode(args []node, fields []domain.Field) node {
	return &valuesNode{args: args, t: domain.StructOf(fields...), nullSafe: true, row: func(a []domain.Value) (domain.Value, error) {
		return domain.Struct(slices.Clone(a)...), nil
	}}
}

// stringConst returns the value of a string literal argument.
func stringConst(e syntax.Expr) (string, bool) {
	if p, ok := e.(*syntax.Paren); ok {
		return stringConst(p.X)
	}
	l, ok := e.(*syntax.Literal)
	if !ok || l.Kind != syntax.StringLit {
		return "", false
	}
	return l.Value, true
}

func compileNamedStruct(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	if len(e.Args)%2 != 0 {
		return nil, wrongArgs(e, "named_struct", "an even number of")
	}
	var args []node
	var fields []domain.Field
	for i := 0; i < len(e.Args); i += 2 {
		name, ok := stringConst(e.Args[i])
		if !ok {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "named_struct needs a string literal as the name of each field")
		}
		n, err := c.compile(e.Args[i+1])
		if err != nil {
			return nil, err
		}
		args = append(args, n)
		fields = append(fields, domain.Field{Name: name, Type: n.typ(), Nullable: true})
	}
	return newStructNode(args, fields), nil
}

// mapKeyCheck checks that a type can be a map's key: not a map.
func mapKeyCheck(t domain.Type, p syntax.Pos, name string) error {
	if !orderable(t) {
		return exprErr(domain.CodeDatatypeMismatch, p, "%s: a value of type %s cannot be a map key", name, t)
	}
	return nil
}

// buildMap makes a map of keys and values as Spark's default
// (spark.sql.mapKeyDedupPolicy=EXCEPTION) does: a NULL key or a key given
// twice is an error.
func buildMap(keys, vals []domain.Value, p syntax.Pos) (domain.Value, error) {
	entries := make([]domain.Value, len(keys))
	for i, k := range keys {
		if k.IsNull() {
			return domain.Value{}, exprErr(domain.CodeNullMapKey, p, "a map key is NULL (the value is %s)", vals[i])
		}
		for _, prev := range keys[:i] {
			if sqlEqual(prev, k) {
				return domain.Value{}, exprErr(domain.CodeDuplicatedMapKey, p, "the key %s is given twice", k)
			}
		}
		entries[i] = domain.MapEntry(k, vals[i])
	}
	return domain.Map(entries...), nil
}

func compileMap(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	if len(e.Args)%2 != 0 {
		return nil, wrongArgs(e, "map", "an even number of")
	}
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	pos := argPos(e)
	var keys, vals []node
	var kpos, vpos []syntax.Pos
	for i := 0; i < len(args); i += 2 {
		keys, vals = append(keys, args[i]), append(vals, args[i+1])
		kpos, vpos = append(kpos, pos[i]), append(vpos, pos[i+1])
	}
	kt, err := widen(keys, kpos, "map keys")
	if err != nil {
		return nil, err
	}
	if err := mapKeyCheck(kt, e.Pos, "map"); err != nil {
		return nil, err
	}
	vt, err := widen(vals, vpos, "map values")
	if err != nil {
		return nil, err
	}
	for i := range keys {
		args[2*i], args[2*i+1] = keys[i], vals[i]
	}
	p := e.Pos
	return &valuesNode{args: args, t: domain.MapOf(kt, vt), nullSafe: true, fails: len(args) > 0, row: func(a []domain.Value) (domain.Value, error) {
		ks, vs := make([]domain.Value, len(a)/2), make([]domain.Value, len(a)/2)
		for i := range ks {
			ks[i], vs[i] = a[2*i], a[2*i+1]
		}
		return buildMap(ks, vs, p)
	}}, nil
}

func compileMapFromArrays(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	ks, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	vs, err := c.nested(e, 1, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	kt := elemOf(ks.typ())
	if err := mapKeyCheck(kt, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	p := e.Pos
	return &valuesNode{args: []node{ks, vs}, t: domain.MapOf(kt, elemOf(vs.typ())), fails: true, row: func(a []domain.Value) (domain.Value, error) {
		k, v := a[0].AsList(), a[1].AsList()
		if len(k) != len(v) {
			// Spark raises an internal error here; a parameter error says more.
			return domain.Value{}, exprErr(domain.CodeInvalidParameterValue, p, "map_from_arrays: %d keys and %d values", len(k), len(v))
		}
		return buildMap(k, v, p)
	}}, nil
}

func compileMapParts(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	m, err := c.nested(e, 0, domain.KindMap, name)
	if err != nil {
		return nil, err
	}
	kt, vt := keyOf(m.typ()), elemOf(m.typ())
	part := 0
	t := domain.ListOf(kt)
	switch name {
	case "map_values":
		part, t = 1, domain.ListOf(vt)
	case "map_entries":
		part, t = -1, domain.ListOf(domain.StructOf(domain.Field{Name: "key", Type: kt}, domain.Field{Name: "value", Type: vt, Nullable: true}))
	}
	return &valuesNode{args: []node{m}, t: t, row: func(a []domain.Value) (domain.Value, error) {
		entries := a[0].Entries()
		out := make([]domain.Value, len(entries))
		for i, en := range entries {
			if part < 0 {
				out[i] = domain.Struct(en.Fields()...)
			} else {
				out[i] = en.Fields()[part]
			}
		}
		return domain.List(out...), nil
	}}, nil
}

// mapGet returns the value of key in map m, or NULL.
func mapGet(m, key domain.Value) (domain.Value, bool) {
	for _, en := range m.Entries() {
		if sqlEqual(en.Fields()[0], key) {
			return en.Fields()[1], true
		}
	}
	return domain.Null(), false
}

// mapAndKey compiles a map and a key to look up in it, of one key type.
func (c *compiler) mapAndKey(m node, key syntax.Expr, name string) (node, node, error) {
	k, err := c.compile(key)
	if err != nil {
		return nil, nil, err
	}
	kt := keyOf(m.typ())
	if kt.Kind == domain.KindNull { // a NULL or empty map: no key to match
		return m, k, nil
	}
	t, ok := widerType(kt, k.typ())
	if !ok || !t.Equal(kt) && !(t.Kind == kt.Kind && !t.Kind.IsNested()) {
		// the map's keys would have to change type: Spark refuses this too
		return nil, nil, exprErr(domain.CodeDatatypeMismatch, key.Position(), "%s: a key of type %s cannot be looked up in %s", name, k.typ(), m.typ())
	}
	return m, coerce(k, kt, key.Position()), nil
}

func compileMapContainsKey(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	m, err := c.nested(e, 0, domain.KindMap, name)
	if err != nil {
		return nil, err
	}
	m, k, err := c.mapAndKey(m, e.Args[1], name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{m, k}, t: domain.TypeBool, row: func(a []domain.Value) (domain.Value, error) {
		_, ok := mapGet(a[0], a[1])
		return domain.Bool(ok), nil
	}}, nil
}

// ---- access ----

// compileSize: size(NULL) is NULL, as with spark.sql.ansi.enabled (the
// legacy -1 is not offered).
func compileSize(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	switch x.typ().Kind {
	case domain.KindList, domain.KindMap:
	case domain.KindNull:
		x = retype(x, domain.ListOf(domain.Type{}))
	default:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs an array or a map, found %s", name, x.typ())
	}
	return &valuesNode{args: []node{x}, t: domain.TypeInt32, row: func(a []domain.Value) (domain.Value, error) {
		return domain.Int(int64(len(a[0].AsList()))), nil
	}}, nil
}

func compileElementAt(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	try := name == "try_element_at"
	p := e.Pos
	switch x.typ().Kind {
	case domain.KindMap:
		m, k, err := c.mapAndKey(x, e.Args[1], name)
		if err != nil {
			return nil, err
		}
		return &valuesNode{args: []node{m, k}, t: elemOf(m.typ()), row: func(a []domain.Value) (domain.Value, error) {
			v, _ := mapGet(a[0], a[1])
			return v, nil
		}}, nil
	case domain.KindList, domain.KindNull:
		if x, err = c.nested(e, 0, domain.KindList, name); err != nil {
			return nil, err
		}
		idx, err := c.intArg(e, 1, name)
		if err != nil {
			return nil, err
		}
		return &valuesNode{args: []node{x, idx}, t: elemOf(x.typ()), fails: true, row: func(a []domain.Value) (domain.Value, error) {
			items, i := a[0].AsList(), a[1].AsInt()
			switch {
			case i == 0:
				return domain.Value{}, exprErr(domain.CodeInvalidIndexOfZero, p, "%s: the index 0 is invalid; the first element has index 1", name)
			case i > int64(len(items)) || -i > int64(len(items)):
				if try {
					return domain.Null(), nil
				}
				return domain.Value{}, exprErr(domain.CodeInvalidArrayIndexElementAt, p, "the index %d is out of bounds: the array has %d elements", i, len(items))
			case i < 0:
				return items[int64(len(items))+i], nil
			}
			return items[i-1], nil
		}}, nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs an array or a map, found %s", name, x.typ())
}

// intArg compiles argument i as a bigint (a string is cast, as Spark's
// implicit cast does).
func (c *compiler) intArg(e *syntax.FuncCall, i int, name string) (node, error) {
	n, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	switch n.typ().Kind {
	case domain.KindInt64, domain.KindNull, domain.KindString:
		return implicit(n, domain.TypeInt64, e.Args[i].Position()), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs an integer as argument %d, found %s", name, i+1, n.typ())
}

// subscript compiles x[i]: an array element counted from 0 (out of range is
// INVALID_ARRAY_INDEX, as with ANSI on), a map value (NULL when the key is
// missing), or a struct field named by a string literal.
func (c *compiler) subscript(e *syntax.Subscript) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	switch x.typ().Kind {
	case domain.KindMap:
		m, k, err := c.mapAndKey(x, e.Index, "subscript")
		if err != nil {
			return nil, err
		}
		return &valuesNode{args: []node{m, k}, t: elemOf(m.typ()), row: func(a []domain.Value) (domain.Value, error) {
			v, _ := mapGet(a[0], a[1])
			return v, nil
		}}, nil
	case domain.KindStruct:
		name, ok := stringConst(e.Index)
		if !ok {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Index.Position(), "a struct field is named by a string literal")
		}
		return c.field(x, &syntax.Ident{Pos: e.Index.Position(), Name: name}, p)
	case domain.KindList, domain.KindNull:
		x = retype(x, domain.ListOf(domain.Type{}))
		idx, err := c.compile(e.Index)
		if err != nil {
			return nil, err
		}
		switch idx.typ().Kind {
		case domain.KindInt64, domain.KindNull, domain.KindString:
			idx = implicit(idx, domain.TypeInt64, e.Index.Position())
		default:
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Index.Position(), "an array subscript needs an integer, found %s", idx.typ())
		}
		return &valuesNode{args: []node{x, idx}, t: elemOf(x.typ()), fails: true, row: func(a []domain.Value) (domain.Value, error) {
			items, i := a[0].AsList(), a[1].AsInt()
			if i < 0 || i >= int64(len(items)) {
				return domain.Value{}, exprErr(domain.CodeInvalidArrayIndex, p, "the index %d is out of bounds: the array has %d elements", i, len(items))
			}
			return items[i], nil
		}}, nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, p, "a value of type %s cannot be subscripted", x.typ())
}

// ---- search ----

// compileArrayContains: true when found; else NULL when the array holds a
// NULL; else false.
func compileArrayContains(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, val, err := c.arrayAndValue(e, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{arr, val}, t: domain.TypeBool, row: func(a []domain.Value) (domain.Value, error) {
		sawNull := false
		for _, x := range a[0].AsList() {
			if x.IsNull() {
				sawNull = true
			} else if sqlEqual(x, a[1]) {
				return domain.Bool(true), nil
			}
		}
		if sawNull {
			return domain.Null(), nil
		}
		return domain.Bool(false), nil
	}}, nil
}

func compileArrayPosition(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, val, err := c.arrayAndValue(e, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{arr, val}, t: domain.TypeInt64, row: func(a []domain.Value) (domain.Value, error) {
		for i, x := range a[0].AsList() {
			if !x.IsNull() && sqlEqual(x, a[1]) {
				return domain.Int(int64(i + 1)), nil
			}
		}
		return domain.Int(0), nil
	}}, nil
}

func compileArrayRemove(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, val, err := c.arrayAndValue(e, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{arr, val}, t: arr.typ(), row: func(a []domain.Value) (domain.Value, error) {
		out := []domain.Value{}
		for _, x := range a[0].AsList() {
			if x.IsNull() || !sqlEqual(x, a[1]) {
				out = append(out, x)
			}
		}
		return domain.List(out...), nil
	}}, nil
}

// ---- set operations ----

// valueSet is a set of values in insertion order, one NULL at most, for the
// array set functions (arrays are short; a linear scan keeps SQL equality).
type valueSet struct{ items []domain.Value }

func (s *valueSet) has(v domain.Value) bool {
	for _, x := range s.items {
		if x.IsNull() == v.IsNull() && (v.IsNull() || sqlEqual(x, v)) {
			return true
		}
	}
	return false
}

func (s *valueSet) add(v domain.Value) {
	if !s.has(v) {
		s.items = append(s.items, v)
	}
}

func compileArraySet(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args := make([]node, len(e.Args))
	for i := range e.Args {
		n, err := c.nested(e, i, domain.KindList, name)
		if err != nil {
			return nil, err
		}
		args[i] = n
	}
	t, err := widen(args, argPos(e), name)
	if err != nil {
		return nil, err
	}
	if !orderable(elemOf(t)) {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "%s cannot compare elements of type %s", name, elemOf(t))
	}
	return &valuesNode{args: args, t: t, row: func(a []domain.Value) (domain.Value, error) {
		s := &valueSet{items: []domain.Value{}}
		switch name {
		case "array_distinct", "array_union":
			for _, arr := range a {
				for _, x := range arr.AsList() {
					s.add(x)
				}
			}
		case "array_intersect", "array_except":
			other := &valueSet{items: a[1].AsList()}
			for _, x := range a[0].AsList() {
				if other.has(x) == (name == "array_intersect") {
					s.add(x)
				}
			}
		}
		return domain.List(s.items...), nil
	}}, nil
}

// ---- other array functions ----

func compileArrayJoin(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	if et := elemOf(arr.typ()); et.Kind != domain.KindNull && !scalarCastable(et.Kind) && et.Kind != domain.KindString {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs an array of scalars, found %s", name, arr.typ())
	}
	args := []node{arr}
	for i := 1; i < len(e.Args); i++ {
		n, err := c.compile(e.Args[i])
		if err != nil {
			return nil, err
		}
		if n, err = asString(n, e.Args[i].Position(), name); err != nil {
			return nil, err
		}
		args = append(args, n)
	}
	join := func(a []domain.Value) (domain.Value, error) {
		var sb strings.Builder
		first := true
		for _, x := range a[0].AsList() {
			s := ""
			switch {
			case !x.IsNull():
				s = valueText(x)
			case len(a) == 3:
				s = a[2].AsString()
			default:
				continue
			}
			if !first {
				sb.WriteString(a[1].AsString())
			}
			first = false
			sb.WriteString(s)
		}
		return domain.String(sb.String()), nil
	}
	// as in Spark, a NULL delimiter or NULL replacement makes the result NULL
	return &valuesNode{args: args, t: domain.TypeString, row: join}, nil
}

func compileArrayExtreme(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	et := elemOf(arr.typ())
	if !orderable(et) {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s cannot order elements of type %s", name, et)
	}
	sign := 1
	if name == "array_min" {
		sign = -1
	}
	return &valuesNode{args: []node{arr}, t: et, row: func(a []domain.Value) (domain.Value, error) {
		best := domain.Null()
		for _, x := range a[0].AsList() {
			if !x.IsNull() && (best.IsNull() || sign*sqlCompare(x, best) > 0) {
				best = x
			}
		}
		return best, nil
	}}, nil
}

func compileArraysZip(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args := make([]node, len(e.Args))
	fields := make([]domain.Field, len(e.Args))
	for i, a := range e.Args {
		n, err := c.nested(e, i, domain.KindList, name)
		if err != nil {
			return nil, err
		}
		args[i] = n
		// Spark names a field after its argument when that is a column, else
		// by its position
		fname := strconv.Itoa(i)
		switch a.(type) {
		case *syntax.ColumnRef, *syntax.FieldAccess:
			fname = structFieldName(a, i)
		}
		fields[i] = domain.Field{Name: fname, Type: elemOf(n.typ()), Nullable: true}
	}
	return &valuesNode{args: args, t: domain.ListOf(domain.StructOf(fields...)), row: func(a []domain.Value) (domain.Value, error) {
		n := 0
		for _, arr := range a {
			n = max(n, len(arr.AsList()))
		}
		out := make([]domain.Value, n)
		for i := range out {
			fs := make([]domain.Value, len(a))
			for j, arr := range a {
				if i < len(arr.AsList()) {
					fs[j] = arr.AsList()[i]
				}
			}
			out[i] = domain.Struct(fs...)
		}
		return domain.List(out...), nil
	}}, nil
}

func compileSlice(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	start, err := c.intArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	length, err := c.intArg(e, 2, name)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	return &valuesNode{args: []node{arr, start, length}, t: arr.typ(), fails: true, row: func(a []domain.Value) (domain.Value, error) {
		items, s, l := a[0].AsList(), a[1].AsInt(), a[2].AsInt()
		n := int64(len(items))
		switch {
		case s == 0:
			return domain.Value{}, exprErr(domain.CodeInvalidParameterValue, p, "slice: the start must not be 0 (the first element is 1), got %d", s)
		case l < 0:
			return domain.Value{}, exprErr(domain.CodeInvalidParameterValue, p, "slice: the length must not be negative, got %d", l)
		case s < 0:
			s += n
		default:
			s--
		}
		if s < 0 || s >= n {
			return domain.List(), nil
		}
		end := n
		if l < n-s {
			end = s + l
		}
		return domain.List(slices.Clone(items[s:end])...), nil
	}}, nil
}

// maxSequenceLength bounds the arrays sequence builds. Spark's limit is
// 2147483632 elements, but an array of each row lives in memory here as
// Values, so sluice stops far sooner, with Spark's error for the limit.
const maxSequenceLength = 1 << 20

// compileSequence: sequence(start, stop[, step]) of integers (step a
// number, ±1 by default), or of dates or timestamps (step an interval, ±1
// day by default; a date's day-time step must be whole days, and a number
// is taken as days): Spark's sequence. A timestamp steps by months and days
// on its wall-clock date in the session's time zone, as timestamp +
// interval does.
func compileSequence(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	t := args[0].typ()
	if t.Kind == domain.KindNull {
		t = args[1].typ()
	}
	switch t.Kind {
	case domain.KindInt64, domain.KindDate, domain.KindTimestamp:
	case domain.KindNull:
		t = domain.TypeInt64
	default:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs integers, dates or timestamps, found %s", name, t)
	}
	for i := 0; i < 2; i++ {
		if it := args[i].typ(); it.Kind != domain.KindNull && (it.Kind != t.Kind || it.NTZ != t.NTZ) {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s: start and stop must have one type, found %s and %s", name, args[0].typ(), args[1].typ())
		}
		args[i] = retype(args[i], t)
	}
	stepKind := domain.KindInt64
	if len(args) == 3 {
		stepKind = args[2].typ().Kind
		switch {
		case stepKind == domain.KindNull:
			stepKind = domain.KindInt64
			args[2] = retype(args[2], domain.TypeInt64)
		case stepKind == domain.KindInt64 && t.Kind != domain.KindTimestamp:
		case (stepKind == domain.KindYearMonthInterval || stepKind == domain.KindDayTimeInterval) && t.Kind != domain.KindInt64:
		default:
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[2].Position(), "%s of %s cannot step by %s", name, t, args[2].typ())
		}
	}
	loc := c.sess.TimeZone
	if t.NTZ || loc == nil {
		loc = time.UTC // a wall-clock time steps as if in UTC
	}
	p := e.Pos
	kind := t.Kind
	// next is the element i steps from start, by step of stepKind
	next := func(start, step int64, i int64) (int64, bool) {
		switch {
		case stepKind == domain.KindYearMonthInterval && kind == domain.KindDate:
			return addMonthsDays(start, step*i), true
		case stepKind == domain.KindYearMonthInterval:
			return addMonthsMicros(start, step*i, loc), true
		case stepKind == domain.KindDayTimeInterval && kind == domain.KindDate:
			return start + step/microsPerDay*i, true
		case stepKind == domain.KindDayTimeInterval:
			us, code := addDayTime(start, step*i, loc)
			return us, code == ""
		}
		return start + step*i, true
	}
	return &valuesNode{args: args, t: domain.ListOf(t), fails: true, row: func(a []domain.Value) (domain.Value, error) {
		start, stop := a[0].AsInt(), a[1].AsInt()
		var step int64
		switch {
		case len(a) == 3:
			step = a[2].AsInt()
		case kind == domain.KindTimestamp:
			stepKind, step = domain.KindDayTimeInterval, microsPerDay
		default:
			step = 1 // a number, or a day for dates
		}
		if start > stop && len(a) < 3 {
			step = -step
		}
		if stepKind == domain.KindDayTimeInterval && kind == domain.KindDate && step%microsPerDay != 0 {
			return domain.Value{}, exprErr(domain.CodeInvalidParameterValue, p, "the step of a %s of dates must be a whole number of days, not %s", name, domain.FormatDayTime(step))
		}
		if (step > 0 && start > stop) || (step < 0 && start < stop) || (step == 0 && start != stop) {
			stepText := strconv.FormatInt(step, 10)
			if len(a) == 3 {
				stepText = a[2].String()
			}
			return domain.Value{}, exprErr(domain.CodeInvalidParameterValue, p, "%s boundaries %s to %s by %s are illegal", name, a[0], a[1], stepText)
		}
		count := uint64(maxSequenceLength) + 1 // interval steps: until past stop
		if stepKind == domain.KindInt64 {
			count = 1
			if step != 0 {
				count = absDiff(start, stop)/absU(step) + 1
			}
		}
		var out []domain.Value
		for i := int64(0); uint64(i) < count; i++ {
			x, ok := next(start, step, i)
			if !ok || (step >= 0 && x > stop) || (step < 0 && x < stop) || (step == 0 && i > 0) {
				break
			}
			if len(out) == maxSequenceLength {
				return domain.Value{}, exprErr(domain.CodeCollectionSizeLimit, p, "%s would have more than %d elements; sluice builds at most %d", name, maxSequenceLength, maxSequenceLength)
			}
			switch kind {
			case domain.KindDate:
				out = append(out, domain.DateDays(x))
			case domain.KindTimestamp:
				out = append(out, domain.TimestampMicros(x))
			default:
				out = append(out, domain.Int(x))
			}
		}
		return domain.List(out...), nil
	}}, nil
}

func absDiff(a, b int64) uint64 {
	if a > b {
		return uint64(a) - uint64(b)
	}
	return uint64(b) - uint64(a)
}

func absU(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// compileSortArray: sort_array(arr[, asc]) puts NULLs first ascending and
// last descending; NaN is greater than every number.
func compileSortArray(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	if !orderable(elemOf(arr.typ())) {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s cannot order elements of type %s", name, elemOf(arr.typ()))
	}
	asc := true
	if len(e.Args) == 2 {
		l, ok := e.Args[1].(*syntax.Literal)
		if !ok || l.Kind != syntax.BoolLit {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "%s needs the literal true or false as its second argument", name)
		}
		asc = strings.EqualFold(l.Text, "TRUE")
	}
	return &valuesNode{args: []node{arr}, t: arr.typ(), row: func(a []domain.Value) (domain.Value, error) {
		return domain.List(sortValues(a[0].AsList(), asc, asc)...), nil
	}}, nil
}

// sortValues returns items sorted (stably), NULLs first or last.
func sortValues(items []domain.Value, asc, nullsFirst bool) []domain.Value {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(x, y domain.Value) int {
		switch {
		case x.IsNull() && y.IsNull():
			return 0
		case x.IsNull() == nullsFirst && (x.IsNull() || y.IsNull()):
			return -1
		case x.IsNull() || y.IsNull():
			return 1
		}
		if asc {
			return sqlCompare(x, y)
		}
		return sqlCompare(y, x)
	})
	return out
}

func compileFlatten(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	inner := elemOf(arr.typ())
	switch inner.Kind {
	case domain.KindList:
	case domain.KindNull:
		inner = domain.ListOf(domain.Type{})
	default:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs an array of arrays, found %s", name, arr.typ())
	}
	return &valuesNode{args: []node{arr}, t: inner, row: func(a []domain.Value) (domain.Value, error) {
		out := []domain.Value{}
		for _, x := range a[0].AsList() {
			if x.IsNull() {
				return domain.Null(), nil
			}
			out = append(out, x.AsList()...)
		}
		return domain.List(out...), nil
	}}, nil
}

// arrayConcat is concat() when its arguments are arrays: NULL when any is.
func arrayConcat(args []node, pos []syntax.Pos) (node, error) {
	t, err := widen(args, pos, "concat")
	if err != nil {
		return nil, err
	}
	if t.Kind != domain.KindList {
		return nil, exprErr(domain.CodeDatatypeMismatch, pos[0], "concat of arrays needs arrays only, found %s", t)
	}
	return &valuesNode{args: args, t: t, row: func(a []domain.Value) (domain.Value, error) {
		out := []domain.Value{}
		for _, arr := range a {
			out = append(out, arr.AsList()...)
		}
		return domain.List(out...), nil
	}}, nil
}
