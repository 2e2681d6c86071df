package sql

import (
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// A generator (explode, posexplode, inline, stack, json_tuple) makes zero or
// more output rows of each input row, so it is not a scalar expression: a
// query's SELECT or LATERAL VIEW runs it through CompileGenerator, and
// Compile refuses it elsewhere.

// generators maps each generator's name to its argument count and compiler.
var generators = map[string]struct {
	minArgs, maxArgs int
	compile          func(c *compiler, e *syntax.FuncCall, name string) (*Generator, error)
}{
	"explode":          {1, 1, compileExplode},
	"explode_outer":    {1, 1, compileExplode},
	"posexplode":       {1, 1, compileExplode},
	"posexplode_outer": {1, 1, compileExplode},
	"inline":           {1, 1, compileInline},
	"inline_outer":     {1, 1, compileInline},
	"stack":            {1, -1, compileStack},
	"json_tuple":       {2, -1, compileJSONTuple},
}

func init() {
	// Called as a scalar, a generator is UNSUPPORTED_GENERATOR rather than an
	// unknown function.
	fs := map[string]builtin{}
	for name, g := range generators {
		fs[name] = builtin{minArgs: g.minArgs, maxArgs: g.maxArgs, compile: func(_ *compiler, e *syntax.FuncCall, name string) (node, error) {
			return nil, exprErr(domain.CodeUnsupportedGenerator, e.Pos, "the generator %s makes rows, so it cannot be used inside an expression; call it at the top of a SELECT item", name)
		}}
	}
	register(fs)
}

// Generator is a compiled generator call.
type Generator struct {
	schema domain.Schema
	call   *syntax.FuncCall
	in     domain.Schema
	args   []node
	// rows appends the output rows of input row r (whose argument values
	// are vals) to out, returning how many it added.
	rows func(out *domain.Batch, vals []domain.Value) (int, error)
}

// Schema is the generator's output columns: col; pos, col; key, value;
// a struct's fields; col0, col1, ... (stack); c0, c1, ... (json_tuple).
func (g *Generator) Schema() domain.Schema { return g.schema }

// CompileGenerator compiles a generator call against the input schema. A
// call of a function that is not a generator is NOT_IMPLEMENTED (in Spark a
// scalar in LATERAL VIEW is not allowed either).
func CompileGenerator(call *syntax.FuncCall, in domain.Schema) (*Generator, error) {
	return compileGeneratorWith(call, &compiler{in: in, sess: Session{}.resolved()})
}

// compileGeneratorWith compiles a generator call with the compiler of its
// query's scope.
func compileGeneratorWith(call *syntax.FuncCall, c *compiler) (*Generator, error) {
	in := c.in
	if call == nil {
		return nil, exprErr(domain.CodeNotImplemented, syntax.Pos{Line: 1, Col: 1}, "no generator to compile")
	}
	name := strings.ToLower(call.Name.Last().Name)
	g, ok := generators[name]
	if call.Over != nil || call.Filter != nil || call.Quantifier != "" || len(call.WithinGroup) > 0 {
		return nil, exprErr(domain.CodeNotImplemented, call.Pos, "this form of generator call is not supported")
	}
	if !ok || len(call.Name.Parts) > 1 {
		return nil, exprErr(domain.CodeNotImplemented, call.Pos, "%s is not a generator; generators are explode, explode_outer, posexplode, posexplode_outer, inline, inline_outer, stack and json_tuple", name)
	}
	if n := len(call.Args); n < g.minArgs || (g.maxArgs >= 0 && n > g.maxArgs) {
		return nil, wrongArgs(call, name, builtin{minArgs: g.minArgs, maxArgs: g.maxArgs}.arity())
	}
	for _, a := range call.Args {
		switch a.(type) {
		case *syntax.Star, *syntax.NamedArg, *syntax.Lambda, *syntax.Aliased:
			return nil, exprErr(domain.CodeDatatypeMismatch, a.Position(), "%s does not take this kind of argument", name)
		}
	}
	gen, err := g.compile(c, call, name)
	if err != nil {
		return nil, err
	}
	gen.call, gen.in = call, in
	return gen, nil
}

// Eval returns the generated rows and, for each, the index of the input row
// it came from. A batch of another schema than the generator was compiled
// for is SCHEMA_DRIFT.
func (g *Generator) Eval(b *domain.Batch) (*domain.Batch, []int, error) {
	if err := checkBatch(b, g.in, g.call); err != nil {
		return nil, nil, err
	}
	cols, err := evalAll(g.args, b)
	if err != nil {
		return nil, nil, err
	}
	out := domain.NewBatch(g.schema, b.Len())
	var from []int
	vals := make([]domain.Value, len(cols))
	for r := 0; r < b.Len(); r++ {
		for j, c := range cols {
			vals[j] = c.Value(r)
		}
		n, err := g.rows(out, vals)
		if err != nil {
			return nil, nil, err
		}
		for range n {
			from = append(from, r)
		}
	}
	return out, from, nil
}

func nullRow(n int) []domain.Value { return make([]domain.Value, n) }

func compileExplode(c *compiler, e *syntax.FuncCall, name string) (*Generator, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	t := x.typ()
	if t.Kind == domain.KindNull {
		x, t = retype(x, domain.ListOf(domain.Type{})), domain.ListOf(domain.Type{})
	}
	var fields []domain.Field
	withPos := strings.HasPrefix(name, "pos")
	if withPos {
		fields = append(fields, domain.Field{Name: "pos", Type: domain.TypeInt64, Nullable: true})
	}
	switch t.Kind {
	case domain.KindList:
		fields = append(fields, domain.Field{Name: "col", Type: elemOf(t), Nullable: true})
	case domain.KindMap:
		fields = append(fields, domain.Field{Name: "key", Type: keyOf(t), Nullable: true}, domain.Field{Name: "value", Type: elemOf(t), Nullable: true})
	default:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs an array or a map, found %s", name, t)
	}
	outer := strings.HasSuffix(name, "_outer")
	width := len(fields)
	return &Generator{schema: domain.NewSchema(fields...), args: []node{x}, rows: func(out *domain.Batch, vals []domain.Value) (int, error) {
		items := vals[0].AsList() // a map's entries are its items
		if len(items) == 0 {
			if outer {
				return 1, out.AppendRow(nullRow(width)...)
			}
			return 0, nil
		}
		row := make([]domain.Value, 0, width)
		for k, it := range items {
			row = row[:0]
			if withPos {
				row = append(row, domain.Int(int64(k)))
			}
			if t.Kind == domain.KindMap {
				row = append(row, it.Fields()...)
			} else {
				row = append(row, it)
			}
			if err := out.AppendRow(row...); err != nil {
				return 0, err
			}
		}
		return len(items), nil
	}}, nil
}

// compileInline: inline(array<struct>) makes a row of each struct, its
// fields the columns; a NULL struct is a row of NULLs.
func compileInline(c *compiler, e *syntax.FuncCall, name string) (*Generator, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	t := x.typ()
	if t.Kind != domain.KindList || elemOf(t).Kind != domain.KindStruct {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs an array of structs, found %s", name, t)
	}
	fields := make([]domain.Field, len(elemOf(t).Fields))
	for i, f := range elemOf(t).Fields {
		fields[i] = domain.Field{Name: f.Name, Type: f.Type, Nullable: true}
	}
	outer := strings.HasSuffix(name, "_outer")
	return &Generator{schema: domain.NewSchema(fields...), args: []node{x}, rows: func(out *domain.Batch, vals []domain.Value) (int, error) {
		items := vals[0].AsList()
		if len(items) == 0 && outer {
			return 1, out.AppendRow(nullRow(len(fields))...)
		}
		for _, it := range items {
			row := it.Fields()
			if it.IsNull() {
				row = nullRow(len(fields))
			}
			if err := out.AppendRow(row...); err != nil {
				return 0, err
			}
		}
		return len(items), nil
	}}, nil
}

// compileStack: stack(n, v1, ..., vk) spreads the k values over n rows of
// ceil(k/n) columns col0, col1, ..., padding the last row with NULLs. n must
// be a positive integer literal.
func compileStack(c *compiler, e *syntax.FuncCall, name string) (*Generator, error) {
	lit, ok := e.Args[0].(*syntax.Literal)
	n, err := 0, error(nil)
	if ok && lit.Kind == syntax.NumberLit {
		n, err = strconv.Atoi(lit.Text)
	}
	if !ok || lit.Kind != syntax.NumberLit || err != nil || n < 1 {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a positive integer literal as the number of rows", name)
	}
	vals := e.Args[1:]
	width := (len(vals) + n - 1) / n
	args := make([]node, len(vals))
	for i, v := range vals {
		if args[i], err = c.compile(v); err != nil {
			return nil, err
		}
	}
	fields := make([]domain.Field, width)
	for col := 0; col < width; col++ {
		var ns []node
		var pos []syntax.Pos
		for i := col; i < len(args); i += width {
			ns, pos = append(ns, args[i]), append(pos, vals[i].Position())
		}
		t, err := widen(ns, pos, name)
		if err != nil {
			return nil, err
		}
		for k, i := 0, col; i < len(args); k, i = k+1, i+width {
			args[i] = ns[k]
		}
		fields[col] = domain.Field{Name: "col" + strconv.Itoa(col), Type: t, Nullable: true}
	}
	return &Generator{schema: domain.NewSchema(fields...), args: args, rows: func(out *domain.Batch, v []domain.Value) (int, error) {
		for r := 0; r < n; r++ {
			row := nullRow(width)
			for col := 0; col < width; col++ {
				if i := r*width + col; i < len(v) {
					row[col] = v[i]
				}
			}
			if err := out.AppendRow(row...); err != nil {
				return 0, err
			}
		}
		return n, nil
	}}, nil
}
