package sql

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	suggestpkg "github.com/sluicehq/sluice/internal/suggest"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Compiled is an expression resolved against an input schema, type-checked
// with Spark's ANSI rules, and ready to run over whole batches.
//
// Eval runs column at a time: every operator is a typed loop over the
// column slices of its inputs, never a walk of the tree per row. Conditional
// forms (CASE, IF, COALESCE, AND, OR) evaluate a branch only on the rows that
// reach it when the branch can fail, so `CASE WHEN b = 0 THEN NULL ELSE a / b
// END` does not divide by zero. The returned column may be one of the batch's
// own columns: callers must not modify it.
type Compiled struct {
	root node
	expr syntax.Expr
	in   domain.Schema
	sess *Session
}

// EvalAt is Eval with current_timestamp and current_date at now, the time
// of the micro-batch being evaluated (as Spark fixes them per micro-batch).
// It must not run concurrently with another evaluation of c.
func (c *Compiled) EvalAt(b *domain.Batch, now time.Time) (*domain.Column, error) {
	if c.sess != nil {
		c.sess.Now = now
	}
	return c.Eval(b)
}

// Type is the type of the expression's result.
func (c *Compiled) Type() domain.Type { return c.root.typ() }

// Eval evaluates the expression over every row of b, which must have the
// schema the expression was compiled against. A row-level error (overflow,
// division by zero, a bad cast) is a *Error naming the offending value.
//
// A batch whose columns do not have the kinds of the compiled schema is
// SCHEMA_DRIFT.
func (c *Compiled) Eval(b *domain.Batch) (*domain.Column, error) {
	if err := checkBatch(b, c.in, c.expr); err != nil {
		return nil, err
	}
	return c.root.eval(b)
}

// checkBatch checks that b has the schema in that e was compiled against.
func checkBatch(b *domain.Batch, in domain.Schema, e syntax.Expr) error {
	if b == nil {
		return domain.Errorf(domain.CodeSchemaDrift, "no batch to evaluate %s on", syntax.Format(e))
	}
	if len(b.Columns) != len(in.Fields) {
		return domain.Errorf(domain.CodeSchemaDrift, "the batch has %d columns, the expression was compiled for %d (%s)", len(b.Columns), len(in.Fields), in)
	}
	for i, f := range in.Fields {
		if b.Columns[i] == nil || b.Columns[i].Kind != f.Type.Kind {
			return domain.Errorf(domain.CodeSchemaDrift, "column %d of the batch is not %s %s, as the expression was compiled for", i+1, f.Name, f.Type)
		}
	}
	return nil
}

// Compile resolves e against the input schema and type-checks it.
// Column names are case-insensitive; a.b reads field b of struct column a.
// Errors are *Error with the code UNRESOLVED_COLUMN, UNRESOLVED_ROUTINE,
// DATATYPE_MISMATCH, WRONG_NUM_ARGS or NOT_IMPLEMENTED, and the position of
// the offending part of e.
//
// The session is the default one: UTC, and now the time of compilation; see
// CompileSession.
func Compile(e syntax.Expr, in domain.Schema) (*Compiled, error) {
	return CompileSession(e, in, Session{})
}

func compileWith(e syntax.Expr, in domain.Schema, s *Session) (*Compiled, error) {
	if e == nil {
		return nil, exprErr(domain.CodeNotImplemented, syntax.Pos{Line: 1, Col: 1}, "no expression to compile")
	}
	c := &compiler{in: in, sess: s}
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	return &Compiled{root: n, expr: e, in: in, sess: s}, nil
}

type compiler struct {
	in domain.Schema
	// quals names, per input column, the FROM item it comes from, so t.a
	// reads column a of t; nil outside queries.
	quals []string
	// subst lets the query planner put its own nodes in place of parts of
	// an expression it has computed already (group keys, aggregates, window
	// functions, subqueries); nil returns mean "compile as usual".
	subst func(e syntax.Expr) (node, error)
	// params is how many of the first input columns are lambda parameters:
	// they shadow the columns of the enclosing scope that follow them.
	params int
	// seen, when set, is told every input column an expression reads.
	seen func(idx int)
	// sess is the session the expression is compiled under
	sess *Session
	// errs, when set, collects the errors of every part of the expression
	// (PlanQueryAll): compile then never fails, a part that does is an
	// unknown value
	errs *problems
}

// exprErr builds a position-carrying error about an expression.
func exprErr(code domain.Code, p syntax.Pos, format string, args ...any) *syntax.Error {
	return &syntax.Error{Code: code, File: "expression", Pos: p, Message: fmt.Sprintf(format, args...)}
}

func (c *compiler) compile(e syntax.Expr) (node, error) {
	if c.errs != nil {
		return c.compileAll(e), nil
	}
	return c.compileNode(e)
}

func (c *compiler) compileNode(e syntax.Expr) (node, error) {
	if c.subst != nil {
		if n, err := c.subst(e); n != nil || err != nil {
			return n, err
		}
	}
	switch e := e.(type) {
	case *syntax.Paren:
		return c.compile(e.X)
	case *syntax.Literal:
		return c.literal(e)
	case *syntax.TypedLiteral:
		return c.typedLiteral(e)
	case *syntax.ColumnRef:
		return c.column(e)
	case *syntax.FieldAccess:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		return c.field(x, e.Field, e.Pos)
	case *syntax.Unary:
		return c.unary(e)
	case *syntax.Binary:
		return c.binary(e)
	case *syntax.Is:
		return c.is(e)
	case *syntax.IsDistinct:
		x, y, err := c.comparable(e.X, e.Y, e.Pos)
		if err != nil {
			return nil, err
		}
		var n node = &cmpNode{op: "<=>", l: x, r: y}
		if !e.Not {
			n = &notNode{x: n}
		}
		return n, nil
	case *syntax.In:
		return c.in_(e)
	case *syntax.Between:
		return c.between(e)
	case *syntax.Like:
		return c.like(e)
	case *syntax.Case:
		return c.caseExpr(e)
	case *syntax.Cast:
		return c.cast(e)
	case *syntax.FuncCall:
		return c.call(e)
	case *syntax.Trim:
		return c.trim(e)
	case *syntax.Subscript:
		return c.subscript(e)
	case *syntax.JSONPath:
		return c.jsonPath(e)
	case *syntax.Lambda:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "a lambda function is only allowed as an argument of a higher-order function such as transform or filter")
	case *syntax.Interval:
		return c.interval(e)
	case *syntax.Extract:
		return c.extract(e)
	}
	return nil, exprErr(domain.CodeNotImplemented, e.Position(), "%s is not supported in expressions yet", describe(e))
}

func describe(e syntax.Expr) string {
	s := fmt.Sprintf("%T", e)
	return strings.ToLower(strings.TrimPrefix(s, "*sql."))
}

func (c *compiler) literal(e *syntax.Literal) (node, error) {
	switch e.Kind {
	case syntax.NullLit:
		return &litNode{t: domain.Type{Kind: domain.KindNull}}, nil
	case syntax.BoolLit:
		return &litNode{t: domain.TypeBool, v: domain.Bool(strings.EqualFold(e.Text, "TRUE"))}, nil
	case syntax.StringLit:
		return &litNode{t: domain.TypeString, v: domain.String(e.Value)}, nil
	case syntax.NumberLit:
		suf := strings.ToUpper(e.Suffix)
		isInt := !strings.ContainsAny(e.Text, ".eE") && suf != "D" && suf != "F" && suf != "BD"
		if isInt {
			// 1 is an INT, 1L a BIGINT, 1S a SMALLINT, 1Y a TINYINT; an
			// integer beyond INT is a BIGINT, beyond BIGINT a DECIMAL
			t := map[string]domain.Type{"L": domain.TypeInt64, "S": domain.TypeInt16, "Y": domain.TypeInt8}[suf]
			i, err := strconv.ParseInt(e.Text, 10, 64)
			if t.Kind == domain.KindNull {
				t = domain.TypeInt32
				if lo, hi := t.IntRange(); err == nil && (i < lo || i > hi) {
					t = domain.TypeInt64
				}
			}
			if lo, hi := t.IntRange(); err == nil && i >= lo && i <= hi {
				return &litNode{t: t, v: domain.Int(i)}, nil
			}
			if suf == "L" || suf == "S" || suf == "Y" {
				return nil, exprErr(domain.CodeInvalidNumericLiteral, e.Pos, "the number %s does not fit a %s", e.Text, t)
			}
		}
		if (suf == "BD" || suf == "") && !strings.ContainsAny(e.Text, "eE") {
			// 1.5 is DECIMAL(2, 1), as is 1.5BD; so is an integer too
			// large for a bigint, with scale 0
			return decimalLiteral(e.Text, e.Pos)
		}
		f, err := strconv.ParseFloat(e.Text, 64)
		if err != nil {
			return nil, exprErr(domain.CodeCastInvalidInput, e.Pos, "the number %s is not valid", e.Text)
		}
		if suf == "F" {
			return &litNode{t: domain.TypeFloat32, v: domain.Float(float64(float32(f)))}, nil
		}
		return &litNode{t: domain.TypeFloat64, v: domain.Float(f)}, nil
	}
	return nil, exprErr(domain.CodeNotImplemented, e.Pos, "this literal is not supported yet")
}

func (c *compiler) typedLiteral(e *syntax.TypedLiteral) (node, error) {
	switch e.Type {
	case "DATE":
		d, ok := parseDate(e.Value)
		if !ok {
			return nil, exprErr(domain.CodeCastInvalidInput, e.Pos, "the value '%s' is not a valid DATE", e.Value)
		}
		return &litNode{t: domain.TypeDate, v: domain.DateDays(d)}, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		us, ok := parseTimestampIn(e.Value, c.sess.TimeZone)
		if !ok {
			return nil, exprErr(domain.CodeCastInvalidInput, e.Pos, "the value '%s' is not a valid TIMESTAMP", e.Value)
		}
		return &litNode{t: domain.TypeTimestamp, v: domain.TimestampMicros(us)}, nil
	case "TIMESTAMP_NTZ":
		// a wall-clock time, whatever the session's zone
		us, ok := parseTimestampIn(e.Value, time.UTC)
		if !ok {
			return nil, exprErr(domain.CodeCastInvalidInput, e.Pos, "the value '%s' is not a valid TIMESTAMP_NTZ", e.Value)
		}
		return &litNode{t: domain.TypeTimestampNTZ, v: domain.TimestampMicros(us)}, nil
	case "X":
		// an odd number of digits has an implicit leading 0, as in Spark
		digits := e.Value
		if len(digits)%2 != 0 {
			digits = "0" + digits
		}
		b, err := hex.DecodeString(digits)
		if err != nil {
			return nil, exprErr(domain.CodeCastInvalidInput, e.Pos, "the value '%s' is not a valid binary literal: it needs hexadecimal digits", e.Value)
		}
		return &litNode{t: domain.TypeBytes, v: domain.Bytes(b)}, nil
	}
	return nil, exprErr(domain.CodeNotImplemented, e.Pos, "%s literals are not supported yet", e.Type)
}

func (c *compiler) column(e *syntax.ColumnRef) (node, error) {
	if e.Parts[len(e.Parts)-1].Name == opaqueName && c.marker(e.Parts) < 0 {
		return unknownValue(), nil // the columns of a star that failed (PlanQueryAll)
	}
	idx, used, err := c.resolveColumn(e.Parts)
	if err != nil {
		// current_date and current_timestamp may be written without
		// parentheses, when no column has the name
		if len(e.Parts) == 1 {
			if n, ok := c.niladic(e.Parts[0].Name); ok {
				return n, nil
			}
		}
		return nil, err
	}
	var n node = &colNode{idx: idx, t: c.in.Fields[idx].Type}
	if isUnknown(n.typ()) {
		return n, nil // its fields are as unknown as it is
	}
	for _, part := range e.Parts[used:] {
		var err error
		if n, err = c.field(n, part, part.Pos); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// resolveColumn finds the input column a name path starts with: t.a when t
// names a FROM item that has a column a, else a alone, which must then be
// unambiguous. It returns the column and how many parts it took.
func (c *compiler) resolveColumn(parts []*syntax.Ident) (idx, used int, err error) {
	idx, used, err = c.lookupColumn(parts)
	if err == nil && c.seen != nil {
		c.seen(idx)
	}
	return idx, used, err
}

func (c *compiler) lookupColumn(parts []*syntax.Ident) (idx, used int, err error) {
	for i := 0; i < c.params; i++ {
		if strings.EqualFold(c.in.Fields[i].Name, parts[0].Name) {
			return i, 1, nil
		}
	}
	if len(parts) >= 2 && c.quals != nil {
		for i, f := range c.in.Fields {
			if strings.EqualFold(c.quals[i], parts[0].Name) && strings.EqualFold(f.Name, parts[1].Name) {
				return i, 2, nil
			}
		}
	}
	first := parts[0]
	idx = -1
	for i, f := range c.in.Fields {
		if strings.EqualFold(f.Name, first.Name) && !isMarker(f) {
			if idx >= 0 {
				return 0, 0, exprErr(domain.CodeAmbiguousReference, first.Pos, "`%s` is a column of both %s and %s; qualify it, as in %s.%s",
					first.Name, c.qual(idx), c.qual(i), c.qual(idx), first.Name)
			}
			idx = i
		}
	}
	if idx >= 0 {
		return idx, 1, nil
	}
	if m := c.marker(parts); m >= 0 {
		return m, len(parts), nil // a column of a relation that failed to plan, maybe
	}
	msg := fmt.Sprintf("no column named `%s`", first.Name)
	if len(parts) >= 2 && c.quals != nil && c.hasQual(parts[0].Name) {
		msg = fmt.Sprintf("%s has no column named `%s`", parts[0].Name, parts[1].Name)
		first = parts[1]
	}
	// the planner's own columns (__a0, __grouping_id, ...) are not the user's
	var names []string
	for _, n := range c.in.Names() {
		if !strings.HasPrefix(n, "__") && n != opaqueName {
			names = append(names, n)
		}
	}
	if s := suggestpkg.Closest(first.Name, names); s != "" {
		msg += fmt.Sprintf("; did you mean `%s`?", s)
	} else if len(names) > 0 {
		msg += fmt.Sprintf("; the columns are %s", strings.Join(names, ", "))
	}
	return 0, 0, exprErr(domain.CodeUnresolvedColumn, first.Pos, "%s", msg)
}

func (c *compiler) qual(i int) string {
	if c.quals == nil || c.quals[i] == "" {
		return "the input"
	}
	return c.quals[i]
}

func (c *compiler) hasQual(name string) bool {
	for _, q := range c.quals {
		if strings.EqualFold(q, name) {
			return true
		}
	}
	return false
}

func (c *compiler) field(x node, f *syntax.Ident, p syntax.Pos) (node, error) {
	t := x.typ()
	if t.Kind != domain.KindStruct {
		return nil, exprErr(domain.CodeDatatypeMismatch, p, "cannot read field `%s` of a value of type %s", f.Name, t)
	}
	var names []string
	for i, fd := range t.Fields {
		if strings.EqualFold(fd.Name, f.Name) {
			return &fieldNode{x: x, i: i, t: fd.Type}, nil
		}
		names = append(names, fd.Name)
	}
	msg := fmt.Sprintf("no field named `%s` in %s", f.Name, t)
	if s := suggestpkg.Closest(f.Name, names); s != "" {
		msg += fmt.Sprintf("; did you mean `%s`?", s)
	}
	return nil, exprErr(domain.CodeUnresolvedColumn, f.Pos, "%s", msg)
}

func isNumeric(k domain.Kind) bool {
	return k == domain.KindInt64 || k == domain.KindFloat64 || k == domain.KindDecimal
}

func (c *compiler) unary(e *syntax.Unary) (node, error) {
	if lit, ok := e.X.(*syntax.Literal); ok && e.Op == "-" && lit.Kind == syntax.NumberLit && !strings.HasPrefix(lit.Text, "-") {
		// -2147483648 is one literal, an INT, as Spark reads it
		neg := *lit
		neg.Text = "-" + lit.Text
		return c.literal(&neg)
	}
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case "NOT", "!":
		if x, err = c.expectBool(x, e.X.Position(), "NOT"); err != nil {
			return nil, err
		}
		return &notNode{x: x}, nil
	case "+", "-":
		k := x.typ().Kind
		if k == domain.KindNull {
			x = retype(x, domain.TypeFloat64)
			k = domain.KindFloat64
		}
		if !isNumeric(k) && !isInterval(k) {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "unary %s needs a number, found %s", e.Op, x.typ())
		}
		if e.Op == "+" {
			return x, nil
		}
		if isDayOnly(x) {
			return dayOnly{&negNode{x: x, pos: e.Pos}}, nil
		}
		return &negNode{x: x, pos: e.Pos}, nil
	case "~":
		x, err := c.integer(x, e.X.Position(), "~")
		if err != nil {
			return nil, err
		}
		return &fnNode{args: []node{x}, t: domain.TypeInt64, body: func(out *domain.Column, a []*domain.Column) error {
			for i, v := range a[0].Ints {
				out.Ints[i] = ^v
			}
			return nil
		}}, nil
	}
	return nil, exprErr(domain.CodeNotImplemented, e.Pos, "the operator %s is not supported yet", e.Op)
}

// integer brings an operand of a bitwise operator to bigint: NULL and
// strings are cast, as Spark's implicit cast does; others are a mismatch.
func (c *compiler) integer(x node, p syntax.Pos, op string) (node, error) {
	switch x.typ().Kind {
	case domain.KindInt64:
		return x, nil
	case domain.KindNull, domain.KindString:
		return implicit(x, domain.TypeInt64, p), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, p, "%s needs integers, found %s", op, x.typ())
}

// bitwise compiles a & b, a | b and a ^ b over bigints.
func (c *compiler) bitwise(e *syntax.Binary) (node, error) {
	var args [2]node
	for i, x := range []syntax.Expr{e.L, e.R} {
		n, err := c.compile(x)
		if err != nil {
			return nil, err
		}
		if args[i], err = c.integer(n, x.Position(), e.Op); err != nil {
			return nil, err
		}
	}
	op := e.Op
	return &fnNode{args: args[:], t: domain.TypeInt64, body: func(out *domain.Column, a []*domain.Column) error {
		l, r := a[0].Ints, a[1].Ints
		for i := range out.Ints {
			switch op {
			case "&":
				out.Ints[i] = l[i] & r[i]
			case "|":
				out.Ints[i] = l[i] | r[i]
			default:
				out.Ints[i] = l[i] ^ r[i]
			}
		}
		return nil
	}}, nil
}

func (c *compiler) expectBool(x node, p syntax.Pos, what string) (node, error) {
	switch x.typ().Kind {
	case domain.KindBool:
		return x, nil
	case domain.KindNull:
		return retype(x, domain.TypeBool), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, p, "%s needs a boolean, found %s", what, x.typ())
}

func (c *compiler) binary(e *syntax.Binary) (node, error) {
	switch e.Op {
	case "AND", "OR":
		l, err := c.compile(e.L)
		if err != nil {
			return nil, err
		}
		r, err := c.compile(e.R)
		if err != nil {
			return nil, err
		}
		if l, err = c.expectBool(l, e.L.Position(), e.Op); err != nil {
			return nil, err
		}
		if r, err = c.expectBool(r, e.R.Position(), e.Op); err != nil {
			return nil, err
		}
		return &logicNode{and: e.Op == "AND", l: l, r: r}, nil
	case "=", "==", "<>", "!=", "<", "<=", ">", ">=", "<=>":
		l, r, err := c.comparable(e.L, e.R, e.Pos)
		if err != nil {
			return nil, err
		}
		op := e.Op
		switch op {
		case "==":
			op = "="
		case "<>":
			op = "!="
		}
		// a constant goes on the right, where it is compared as a scalar
		if _, lc := l.(*litNode); lc {
			if _, rc := r.(*litNode); !rc {
				l, r = r, l
				op = map[string]string{"=": "=", "!=": "!=", "<=>": "<=>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
			}
		}
		return &cmpNode{op: op, l: l, r: r}, nil
	case "+", "-", "*", "/", "%":
		return c.arith(e)
	case "||":
		return c.concat([]syntax.Expr{e.L, e.R}, e.Pos)
	case "&", "|", "^":
		return c.bitwise(e)
	case "DIV":
		return c.intDiv(e)
	case "<<", ">>", ">>>":
		name := map[string]string{"<<": "shiftleft", ">>": "shiftright", ">>>": "shiftrightunsigned"}[e.Op]
		return compileShift(c, &syntax.FuncCall{Pos: e.Pos, Name: &syntax.Name{Parts: []*syntax.Ident{{Pos: e.Pos, Name: name}}}, Args: []syntax.Expr{e.L, e.R}}, name)
	}
	return nil, exprErr(domain.CodeNotImplemented, e.Pos, "the operator %s is not supported yet", e.Op)
}

// arith types an arithmetic operator: integers stay integers of the wider
// width, a float or a double makes it one, `/` is always double, a decimal
// makes it decimal arithmetic; a string operand is cast to the other side's
// type (Spark ANSI), or to double against NULL.
func (c *compiler) arith(e *syntax.Binary) (node, error) {
	l, err := c.compile(e.L)
	if err != nil {
		return nil, err
	}
	r, err := c.compile(e.R)
	if err != nil {
		return nil, err
	}
	lk, rk := l.typ().Kind, r.typ().Kind
	if isDatetime(lk) || isDatetime(rk) {
		return c.datetimeArith(e, l, r)
	}
	numOrNull := func(k domain.Kind) bool { return isNumeric(k) || k == domain.KindNull || k == domain.KindString }
	if !numOrNull(lk) || !numOrNull(rk) {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "%s cannot be applied to %s and %s", e.Op, l.typ(), r.typ())
	}
	if lk == domain.KindDecimal || rk == domain.KindDecimal {
		return c.decimalArith(e, l, r)
	}
	// integers keep the wider of their widths (INT + INT is INT, INT +
	// BIGINT is BIGINT); with a float they are FLOAT, with a double DOUBLE;
	// `/` is always DOUBLE
	lt, rt := l.typ(), r.typ()
	t := domain.TypeInt64
	switch {
	case e.Op == "/":
		t = domain.TypeFloat64
	case lk == domain.KindString || rk == domain.KindString:
		t = domain.TypeFloat64
		if lk != domain.KindString && lk != domain.KindNull {
			t = lt // a string is cast to the other side's type
		} else if rk != domain.KindString && rk != domain.KindNull {
			t = rt
		}
	default:
		if t, _ = commonType(lt, rt, false); t.Kind == domain.KindNull {
			t = domain.TypeInt64
		}
	}
	return &arithNode{op: e.Op, l: implicit(l, t, e.L.Position()), r: implicit(r, t, e.R.Position()), t: t, pos: e.Pos}, nil
}

// comparable compiles two operands to be compared and brings them to one
// type: numbers to the wider, a string to the other side's type, a date to a
// timestamp.
func (c *compiler) comparable(a, b syntax.Expr, p syntax.Pos) (node, node, error) {
	l, err := c.compile(a)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.compile(b)
	if err != nil {
		return nil, nil, err
	}
	t, ok := commonType(l.typ(), r.typ(), true)
	if !ok {
		return nil, nil, exprErr(domain.CodeDatatypeMismatch, p, "cannot compare %s with %s", l.typ(), r.typ())
	}
	return c.implicit(l, t, a.Position()), c.implicit(r, t, b.Position()), nil
}

// commonType is the type two values are brought to for comparison (cmp) or
// for one result (CASE branches, coalesce arguments).
func commonType(a, b domain.Type, cmp bool) (domain.Type, bool) {
	ak, bk := a.Kind, b.Kind
	switch {
	case ak == domain.KindNull:
		return b, true
	case bk == domain.KindNull:
		return a, true
	case a.Variant || b.Variant:
		// as in Spark, variants are not compared; two combine
		return a, a.Equal(b) && !cmp
	case ak == domain.KindDecimal && bk == domain.KindDecimal:
		return widerDecimal(a, b), true
	case ak == domain.KindTimestamp && bk == domain.KindTimestamp && a.NTZ != b.NTZ:
		return domain.TypeTimestamp, true // TIMESTAMP_NTZ with TIMESTAMP is TIMESTAMP, as in Spark
	case ak == bk && (ak == domain.KindInt64 || ak == domain.KindFloat64):
		if b.Width() > a.Width() {
			return b, true
		}
		return a, true
	case ak == bk:
		if ak.IsNested() {
			t, ok := widerType(a, b)
			// as in Spark, maps cannot be compared, nor anything holding one
			return t, ok && (!cmp || orderable(t))
		}
		return a, true
	case ak == domain.KindDecimal && (bk == domain.KindDecimal || bk == domain.KindInt64),
		bk == domain.KindDecimal && ak == domain.KindInt64:
		return widerDecimal(intDecimal(a), intDecimal(b)), true
	case ak == domain.KindInt64 && bk == domain.KindFloat64:
		return b, true // int with float is float, with double double
	case ak == domain.KindFloat64 && bk == domain.KindInt64:
		return a, true
	case isNumeric(ak) && isNumeric(bk):
		return domain.TypeFloat64, true
	case ak == domain.KindDate && bk == domain.KindTimestamp:
		return b, true // a date with a timestamp (or a TIMESTAMP_NTZ) is one
	case ak == domain.KindTimestamp && bk == domain.KindDate:
		return a, true
	case ak == domain.KindString && scalarCastable(bk):
		if cmp {
			return b, true
		}
		return a, bk != domain.KindBytes
	case bk == domain.KindString && scalarCastable(ak):
		if cmp {
			return a, true
		}
		return b, ak != domain.KindBytes
	}
	return domain.Type{}, false
}

func scalarCastable(k domain.Kind) bool {
	switch k {
	case domain.KindBool, domain.KindInt64, domain.KindFloat64, domain.KindDecimal, domain.KindDate, domain.KindTimestamp:
		return true
	}
	return false
}

// implicit wraps n in a cast to t when its type differs.
func implicit(n node, t domain.Type, p syntax.Pos) node {
	k := n.typ().Kind
	if (k == domain.KindDecimal || t.Kind == domain.KindDecimal) && k != domain.KindNull && !n.typ().Equal(t) {
		return foldNumber(n, &decCastNode{x: n, to: t, pos: p})
	}
	if k == t.Kind {
		switch {
		case k.IsNested() && !n.typ().Equal(t):
			return &convertNode{x: n, t: t} // bigint elements to double, say
		case n.typ().Bits == t.Bits && n.typ().NTZ == t.NTZ:
			return n
		case t.Width() > n.typ().Width():
			if l, ok := n.(*litNode); ok {
				return &litNode{t: t, v: l.v} // a constant stays one, for the fast comparisons
			}
			return &widened{x: n, t: t}
		}
		return &castNode{x: n, to: t.Kind, pos: p, implicit: true, bits: t.Bits, ntz: t.NTZ}
	}
	if k == domain.KindNull {
		return retype(n, t)
	}
	return foldNumber(n, &castNode{x: n, to: t.Kind, pos: p, implicit: true, bits: t.Bits, ntz: t.NTZ})
}

// foldNumber is cast, a cast of n, as a constant when n is a number constant
// cast to a number (1.5 compared with a double column, say), so that the
// comparisons and arithmetic that take a constant operand fast still do. A
// cast that fails stays, to fail where a row meets it; casts of text and
// times stay too, their time zone being set later.
func foldNumber(n, cast node) node {
	l, ok := n.(*litNode)
	if !ok || l.v.IsNull() || !isNumeric(l.t.Kind) || !isNumeric(cast.typ().Kind) {
		return cast
	}
	c, err := cast.eval(domain.NoColumns(1))
	if err != nil {
		return cast
	}
	return &litNode{t: cast.typ(), v: c.Value(0)}
}

// implicit is implicit with the session's time zone, for the casts between
// strings, dates and timestamps.
func (c *compiler) implicit(n node, t domain.Type, p syntax.Pos) node {
	n = implicit(n, t, p)
	c.zoned(n)
	return n
}

// zoned gives the casts among ns that implicit, unify or asString made the
// session's time zone: those functions know no session, so their casts are
// in UTC until a compiler method passes them here.
func (c *compiler) zoned(ns ...node) {
	for _, n := range ns {
		if cn, ok := n.(*castNode); ok && cn.loc == nil {
			cn.loc = c.sess.TimeZone
		}
	}
}

// retype gives a NULL-typed node a concrete type.
func retype(n node, t domain.Type) node {
	if l, ok := n.(*litNode); ok && l.t.Kind == domain.KindNull {
		return &litNode{t: t}
	}
	if n.typ().Kind == domain.KindNull {
		return &nullAs{x: n, t: t}
	}
	return n
}

func (c *compiler) is(e *syntax.Is) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	var n node
	switch e.What {
	case "NULL":
		n = &isNullNode{x: x}
	case "TRUE", "FALSE", "UNKNOWN":
		if x, err = c.expectBool(x, e.X.Position(), "IS "+e.What); err != nil {
			return nil, err
		}
		if e.What == "UNKNOWN" {
			n = &isNullNode{x: x}
		} else {
			lit := &litNode{t: domain.TypeBool, v: domain.Bool(e.What == "TRUE")}
			n = &cmpNode{op: "<=>", l: x, r: lit}
		}
	default:
		return nil, exprErr(domain.CodeNotImplemented, e.Pos, "IS %s is not supported", e.What)
	}
	if e.Not {
		n = &notNode{x: n}
	}
	return n, nil
}

func (c *compiler) in_(e *syntax.In) (node, error) {
	if e.Query != nil {
		return nil, exprErr(domain.CodeNotImplemented, e.Pos, "IN (subquery) is not supported in expressions yet")
	}
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	items := make([]node, len(e.List))
	t := x.typ()
	for i, it := range e.List {
		if items[i], err = c.compile(it); err != nil {
			return nil, err
		}
		nt, ok := commonType(t, items[i].typ(), true)
		if !ok {
			return nil, exprErr(domain.CodeDatatypeMismatch, it.Position(), "IN list item of type %s cannot be compared with %s", items[i].typ(), t)
		}
		t = nt
	}
	x = c.implicit(x, t, e.X.Position())
	for i := range items {
		items[i] = c.implicit(items[i], t, e.List[i].Position())
	}
	in := &inNode{x: x, list: items}
	in.constSet()
	var n node = in
	if e.Not {
		n = &notNode{x: n}
	}
	return n, nil
}

func (c *compiler) between(e *syntax.Between) (node, error) {
	lo, x1, err := c.comparable(e.Lo, e.X, e.Pos)
	if err != nil {
		return nil, err
	}
	x2, hi, err := c.comparable(e.X, e.Hi, e.Pos)
	if err != nil {
		return nil, err
	}
	var n node = &logicNode{and: true, l: &cmpNode{op: "<=", l: lo, r: x1}, r: &cmpNode{op: "<=", l: x2, r: hi}}
	if e.Not {
		n = &notNode{x: n}
	}
	return n, nil
}

func (c *compiler) caseExpr(e *syntax.Case) (node, error) {
	n := &caseNode{}
	var operand node
	var err error
	if e.Operand != nil {
		if operand, err = c.compile(e.Operand); err != nil {
			return nil, err
		}
	}
	var results []node
	var rpos []syntax.Pos
	for _, w := range e.Whens {
		var cond node
		if operand != nil {
			v, err := c.compile(w.Cond)
			if err != nil {
				return nil, err
			}
			t, ok := commonType(operand.typ(), v.typ(), true)
			if !ok {
				return nil, exprErr(domain.CodeDatatypeMismatch, w.Cond.Position(), "cannot compare %s with %s", operand.typ(), v.typ())
			}
			cond = &cmpNode{op: "=", l: c.implicit(operand, t, e.Operand.Position()), r: c.implicit(v, t, w.Cond.Position())}
		} else {
			if cond, err = c.compile(w.Cond); err != nil {
				return nil, err
			}
			if cond, err = c.expectBool(cond, w.Cond.Position(), "WHEN"); err != nil {
				return nil, err
			}
		}
		r, err := c.compile(w.Result)
		if err != nil {
			return nil, err
		}
		n.conds = append(n.conds, cond)
		results = append(results, r)
		rpos = append(rpos, w.Result.Position())
	}
	if e.Else != nil {
		r, err := c.compile(e.Else)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
		rpos = append(rpos, e.Else.Position())
	} else {
		results = append(results, &litNode{t: domain.Type{Kind: domain.KindNull}})
		rpos = append(rpos, e.Pos)
	}
	t, err := unify(results, rpos)
	if err != nil {
		return nil, err
	}
	c.zoned(results...)
	n.t = t
	n.results = results
	return n, nil
}

// unify brings result branches to one type, in place.
func unify(ns []node, pos []syntax.Pos) (domain.Type, error) {
	t := domain.Type{Kind: domain.KindNull}
	for i, n := range ns {
		nt, ok := commonType(t, n.typ(), false)
		if !ok {
			return t, exprErr(domain.CodeDatatypeMismatch, pos[i], "a branch of type %s cannot be combined with %s", n.typ(), t)
		}
		t = nt
	}
	for i := range ns {
		ns[i] = implicit(ns[i], t, pos[i])
	}
	return t, nil
}

// castTarget maps a SQL type name to the type sluice stores it as.
func castTarget(t *syntax.Type) (domain.Type, bool) {
	switch t.Name {
	case "BIGINT", "LONG":
		return domain.TypeInt64, true
	case "INT", "INTEGER":
		return domain.TypeInt32, true
	case "SMALLINT", "SHORT":
		return domain.TypeInt16, true
	case "TINYINT", "BYTE":
		return domain.TypeInt8, true
	case "DOUBLE":
		return domain.TypeFloat64, true
	case "FLOAT", "REAL":
		return domain.TypeFloat32, true
	case "STRING", "VARCHAR", "CHAR":
		return domain.TypeString, true
	case "BOOLEAN", "BOOL":
		return domain.TypeBool, true
	case "DATE":
		return domain.TypeDate, true
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		return domain.TypeTimestamp, true
	case "TIMESTAMP_NTZ":
		return domain.TypeTimestampNTZ, true
	case "VARIANT":
		return domain.TypeVariant, true
	}
	return domain.Type{}, false
}

func (c *compiler) cast(e *syntax.Cast) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(e.Type.Name, "INTERVAL") {
		return c.castInterval(e, x)
	}
	switch e.Type.Name {
	case "ARRAY", "MAP", "STRUCT":
		return c.castNested(e, x)
	case "BINARY":
		return castBinary(e, x)
	}
	if isVariant(x.typ()) || e.Type.Name == "VARIANT" {
		return c.castVariant(e, x)
	}
	if x.typ().Kind == domain.KindDecimal || e.Type.Name == "DECIMAL" {
		return c.castDecimal(e, x)
	}
	toType, ok := castTarget(e.Type)
	if !ok {
		return nil, exprErr(domain.CodeNotImplemented, e.Type.Pos, "casts to %s are not supported yet", e.Type.Name)
	}
	from, to := x.typ().Kind, toType.Kind
	switch {
	case from == domain.KindNull:
		return retype(x, toType), nil
	case x.typ().Equal(toType):
		return x, nil
	case from == to && toType.NTZ == x.typ().NTZ && toType.Width() >= x.typ().Width():
		return &widened{x: x, t: toType}, nil // int to bigint, float to double: the values stay
	case !castable(from, to) && from != to:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "cannot cast %s to %s", x.typ(), strings.ToLower(e.Type.Name))
	}
	return &castNode{x: x, to: to, try: e.Try, pos: e.Pos, loc: c.sess.TimeZone, bits: toType.Bits, ntz: toType.NTZ}, nil
}

// widened gives a value a wider type of the same storage (int to bigint,
// float to double), whose values it holds unchanged.
type widened struct {
	x node
	t domain.Type
}

func (n *widened) typ() domain.Type                             { return n.t }
func (n *widened) mayFail() bool                                { return n.x.mayFail() }
func (n *widened) eval(b *domain.Batch) (*domain.Column, error) { return n.x.eval(b) }

// castBinary compiles a cast to BINARY: a string gives its UTF-8 bytes.
func castBinary(e *syntax.Cast, x node) (node, error) {
	switch x.typ().Kind {
	case domain.KindBytes:
		return x, nil
	case domain.KindNull:
		return retype(x, domain.TypeBytes), nil
	case domain.KindString:
		return &fnNode{args: []node{x}, t: domain.TypeBytes, body: func(out *domain.Column, a []*domain.Column) error {
			copy(out.Strs, a[0].Strs)
			return nil
		}}, nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "cannot cast %s to binary", x.typ())
}

func castable(from, to domain.Kind) bool {
	if to == domain.KindString {
		return scalarCastable(from) || from == domain.KindBytes || isInterval(from) || from.IsNested()
	}
	if from == domain.KindString {
		return scalarCastable(to)
	}
	switch to {
	case domain.KindInt64, domain.KindFloat64:
		// numbers, and timestamps as seconds since the epoch
		return from == domain.KindInt64 || from == domain.KindFloat64 || from == domain.KindBool || from == domain.KindTimestamp
	case domain.KindBool:
		return from == domain.KindInt64 || from == domain.KindFloat64 || from == domain.KindBool
	case domain.KindDate:
		return from == domain.KindDate || from == domain.KindTimestamp
	case domain.KindTimestamp:
		return from == domain.KindDate || from == domain.KindTimestamp || from == domain.KindInt64 || from == domain.KindFloat64
	}
	return false
}
