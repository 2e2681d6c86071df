package syntax

import (
	"slices"
	"strings"
)

// Expressions, by precedence climbing, loosest first, as in Spark's grammar:
//
//	OR
//	AND
//	NOT
//	predicates: IS, [NOT] IN, BETWEEN, LIKE ... (on a value expression)
//	comparisons: = == <=> != <> < <= > >=
//	|
//	^
//	&
//	+ - ||
//	* / % DIV
//	unary - + ~
//	postfix: .field [index] ::type :json.path
func (p *parser) expr() Expr { return p.or() }

func (p *parser) or() Expr {
	l := p.and()
	for p.isKw("OR") {
		pos := p.next().pos
		l = &Binary{Pos: pos, Op: "OR", L: l, R: p.and()}
	}
	return l
}

func (p *parser) and() Expr {
	l := p.not()
	for p.isKw("AND") {
		pos := p.next().pos
		l = &Binary{Pos: pos, Op: "AND", L: l, R: p.not()}
	}
	return l
}

func (p *parser) not() Expr {
	if p.isKw("NOT") || p.isOp("!") {
		pos := p.next().pos
		return &Unary{Pos: pos, Op: "NOT", X: p.not()}
	}
	return p.predicate()
}

func (p *parser) predicate() Expr {
	x := p.comparison()
	pos := p.pos()
	if p.isKw("IS") {
		p.next()
		not := p.acceptKws("NOT")
		switch {
		case p.acceptKws("DISTINCT", "FROM"):
			return &IsDistinct{Pos: pos, X: x, Not: not, Y: p.comparison()}
		case p.isKw("NULL"), p.isKw("TRUE"), p.isKw("FALSE"), p.isKw("UNKNOWN"):
			return &Is{Pos: pos, X: x, Not: not, What: p.next().upper}
		}
		p.fail("NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM")
	}
	not := false
	if p.isKw("NOT") && (p.isKwAt(1, "IN") || p.isKwAt(1, "BETWEEN") || p.isKwAt(1, "LIKE") ||
		p.isKwAt(1, "ILIKE") || p.isKwAt(1, "RLIKE") || p.isKwAt(1, "REGEXP")) {
		p.next()
		not = true
	}
	switch {
	case p.acceptKws("IN"):
		in := &In{Pos: pos, X: x, Not: not}
		p.expectOp("(")
		if p.queryStart(0) {
			in.Query = p.query()
		} else {
			in.List = p.exprList()
		}
		p.expectOp(")")
		return in
	case p.acceptKws("BETWEEN"):
		b := &Between{Pos: pos, X: x, Not: not, Lo: p.comparison()}
		p.expectKws("AND")
		b.Hi = p.comparison()
		return b
	case p.isKw("LIKE"), p.isKw("ILIKE"), p.isKw("RLIKE"), p.isKw("REGEXP"):
		op := p.next().upper
		l := &Like{Pos: pos, X: x, Not: not, Op: op}
		if (op == "LIKE" || op == "ILIKE") && (p.isKw("ANY") || p.isKw("ALL") || p.isKw("SOME")) && p.isOpAt(1, "(") {
			l.Quantifier = p.next().upper
			p.expectOp("(")
			l.Patterns = p.exprList()
			p.expectOp(")")
		} else {
			l.Pattern = p.comparison()
		}
		if (op == "LIKE" || op == "ILIKE") && p.acceptKws("ESCAPE") {
			l.Escape = p.comparison()
		}
		return l
	}
	return x
}

var comparisonOps = map[string]bool{"=": true, "==": true, "<=>": true, "!=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

func (p *parser) comparison() Expr {
	l := p.bitOr()
	for p.peek().kind == tOp && comparisonOps[p.peek().text] {
		t := p.next()
		l = &Binary{Pos: t.pos, Op: t.text, L: l, R: p.bitOr()}
	}
	return l
}

func (p *parser) bitOr() Expr  { return p.leftAssoc(p.bitXor, "|") }
func (p *parser) bitXor() Expr { return p.leftAssoc(p.bitAnd, "^") }
func (p *parser) bitAnd() Expr { return p.leftAssoc(p.shift, "&") }

// shift parses a << b, a >> b and a >>> b, which bind looser than + and -
// and tighter than &, as in Spark. The lexer makes single < and > tokens
// (so that ARRAY<ARRAY<INT>> closes two types); a shift is two or three of
// them with nothing between.
func (p *parser) shift() Expr {
	l := p.additive()
	for {
		op := p.shiftOp()
		if op == "" {
			return l
		}
		t := p.peek()
		p.i += len(op)
		l = &Binary{Pos: t.pos, Op: op, L: l, R: p.additive()}
	}
}

// shiftOp is the shift operator at the parser's position, or "".
func (p *parser) shiftOp() string {
	adjacent := func(n int) bool { return p.peekAt(n).end == p.peekAt(n+1).off }
	switch {
	case p.isOp("<") && p.isOpAt(1, "<") && adjacent(0):
		return "<<"
	case p.isOp(">") && p.isOpAt(1, ">") && adjacent(0) && p.isOpAt(2, ">") && adjacent(1):
		return ">>>"
	case p.isOp(">") && p.isOpAt(1, ">") && adjacent(0):
		return ">>"
	}
	return ""
}

func (p *parser) additive() Expr { return p.leftAssoc(p.multiplicative, "+", "-", "||") }

// leftAssoc parses one level of left-associative binary operators: operands
// of the next tighter level joined by any of ops.
func (p *parser) leftAssoc(operand func() Expr, ops ...string) Expr {
	l := operand()
	for p.peek().kind == tOp && slices.Contains(ops, p.peek().text) {
		t := p.next()
		l = &Binary{Pos: t.pos, Op: t.text, L: l, R: operand()}
	}
	return l
}

func (p *parser) multiplicative() Expr {
	l := p.unary()
	for {
		switch {
		case p.isOp("*"), p.isOp("/"), p.isOp("%"):
			t := p.next()
			l = &Binary{Pos: t.pos, Op: t.text, L: l, R: p.unary()}
		case p.isKw("DIV") && !p.atEndAt(1) && !p.isOpAt(1, ","):
			t := p.next()
			l = &Binary{Pos: t.pos, Op: "DIV", L: l, R: p.unary()}
		default:
			return l
		}
	}
}

func (p *parser) unary() Expr {
	if p.isOp("-") || p.isOp("+") || p.isOp("~") {
		t := p.next()
		return &Unary{Pos: t.pos, Op: t.text, X: p.unary()}
	}
	return p.postfix(p.primary())
}

func (p *parser) postfix(x Expr) Expr {
	for {
		pos := p.pos()
		switch {
		case p.isOp(".") && p.isOpAt(1, "*"):
			c, ok := x.(*ColumnRef)
			if !ok {
				p.fail("a name before .*")
			}
			p.i += 2
			x = &Star{Pos: c.Pos, Qualifier: c.Parts}
		case p.isOp(".") && p.isIdentAt(1):
			p.next()
			f := p.ident("a field name")
			if c, ok := x.(*ColumnRef); ok {
				c.Parts = append(c.Parts, f)
			} else {
				x = &FieldAccess{Pos: pos, X: x, Field: f}
			}
		case p.isOp("["):
			p.next()
			idx := p.expr()
			p.expectOp("]")
			x = &Subscript{Pos: pos, X: x, Index: idx}
		case p.isOp("::"):
			p.next()
			x = &Cast{Pos: pos, X: x, Type: p.dataType(), Colons: true}
		case p.isOp(":") && (p.isIdentAt(1) || p.isOpAt(1, "[")):
			p.next()
			x = p.jsonPath(pos, x)
		default:
			return x
		}
	}
}

// jsonPath parses the path after col: — a.b[0], ['key'], [*], `quoted`.
func (p *parser) jsonPath(pos Pos, x Expr) Expr {
	j := &JSONPath{Pos: pos, X: x}
	first := true
	for {
		switch {
		case (first && p.isIdentAt(0)) || (!first && p.isOp(".") && p.isIdentAt(1)):
			if !first {
				p.next()
			}
			t := p.next()
			j.Steps = append(j.Steps, &JSONStep{Field: t.text, Quoted: t.kind == tQIdent})
		case p.isOp("["):
			p.next()
			st := &JSONStep{}
			switch {
			case p.acceptOp("*"):
				st.Wildcard = true
			case p.peek().kind == tString:
				st.Field, st.Bracket = p.next().text, true
			default:
				st.Index = p.expr()
			}
			p.expectOp("]")
			j.Steps = append(j.Steps, st)
		default:
			if first {
				p.fail("a JSON path")
			}
			return j
		}
		first = false
	}
}

// intervalUnits are the units of INTERVAL literals, singular and plural.
var intervalUnits = map[string]bool{}

func init() {
	for _, u := range []string{"YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"} {
		intervalUnits[u] = true
		intervalUnits[u+"S"] = true
	}
}

func (p *parser) isUnitAt(n int) bool {
	t := p.peekAt(n)
	return t.kind == tIdent && intervalUnits[t.upper]
}

// intervalValueAt reports whether an interval value ([sign] number or
// string) starts n tokens ahead, and how many tokens it takes.
func (p *parser) intervalValueAt(n int) int {
	k := 0
	if p.isOpAt(n, "-") || p.isOpAt(n, "+") {
		k = 1
	}
	switch p.peekAt(n + k).kind {
	case tNumber, tString:
		return k + 1
	}
	return 0
}

func (p *parser) interval(pos Pos) Expr {
	iv := &Interval{Pos: pos}
	for {
		n := p.intervalValueAt(0)
		if n == 0 || (len(iv.Parts) > 0 && !p.isUnitAt(n)) {
			break
		}
		part := &IntervalPart{}
		if n == 2 {
			part.Sign = p.next().text
		}
		t := p.next()
		part.Value, part.Quoted = t.text, t.kind == tString
		if t.kind == tNumber {
			part.Value += t.suffix
		}
		if p.isUnitAt(0) {
			part.Unit = p.next().upper
			if p.isKw("TO") && p.isUnitAt(1) {
				p.next()
				part.ToUnit = p.next().upper
			}
		} else if !part.Quoted {
			p.fail("an interval unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, ...)")
		}
		iv.Parts = append(iv.Parts, part)
		if part.Unit == "" {
			break
		}
	}
	return iv
}

func (p *parser) primary() Expr {
	t := p.peek()
	pos := t.pos
	switch t.kind {
	case tNumber:
		p.next()
		return &Literal{Pos: pos, Kind: NumberLit, Text: t.text, Suffix: t.suffix}
	case tString:
		return &Literal{Pos: pos, Kind: StringLit, Value: p.stringLit("a string").Value}
	case tOp:
		switch t.text {
		case "*":
			p.next()
			return &Star{Pos: pos}
		case "(":
			return p.parenExpr()
		}
	case tQIdent:
		return p.nameExpr()
	case tIdent:
		next := p.peekAt(1)
		switch t.upper {
		case "TRUE", "FALSE":
			p.next()
			return &Literal{Pos: pos, Kind: BoolLit, Text: t.upper}
		case "NULL":
			p.next()
			return &Literal{Pos: pos, Kind: NullLit}
		case "CASE":
			return p.caseExpr()
		case "CAST", "TRY_CAST":
			if next.kind == tOp && next.text == "(" {
				p.i += 2
				c := &Cast{Pos: pos, Try: t.upper == "TRY_CAST", X: p.expr()}
				p.expectKws("AS")
				c.Type = p.dataType()
				p.expectOp(")")
				return c
			}
		case "EXISTS":
			if next.kind == tOp && next.text == "(" && p.queryStart(2) {
				p.i += 2
				q := p.query()
				p.expectOp(")")
				return &Exists{Pos: pos, Query: q}
			}
		case "INTERVAL":
			if p.intervalValueAt(1) > 0 {
				p.next()
				return p.interval(pos)
			}
		case "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "X":
			if next.kind == tString {
				p.next()
				return &TypedLiteral{Pos: pos, Type: t.upper, Value: p.stringLit("a string").Value}
			}
		case "EXTRACT":
			if next.kind == tOp && next.text == "(" && p.isIdentAt(2) && p.isKwAt(3, "FROM") {
				p.i += 2
				e := &Extract{Pos: pos, Field: p.ident("a field")}
				p.expectKws("FROM")
				e.X = p.expr()
				p.expectOp(")")
				return e
			}
		case "TRIM":
			if next.kind == tOp && next.text == "(" {
				if e := p.trim(pos); e != nil {
					return e
				}
			}
		case "SUBSTRING", "SUBSTR", "OVERLAY":
			// SUBSTRING(s FROM a [FOR n]) is substring(s, a[, n]);
			// OVERLAY(s PLACING r FROM a [FOR n]) is overlay(s, r, a[, n])
			kw := map[bool]string{true: "PLACING", false: "FROM"}[t.upper == "OVERLAY"]
			if next.kind == tOp && next.text == "(" && p.kwAtTopLevel(2, kw) {
				p.i += 2
				call := &FuncCall{Pos: pos, Name: &Name{Pos: pos, Parts: []*Ident{{Pos: pos, Name: t.text}}}}
				call.Args = []Expr{p.expr()}
				if t.upper == "OVERLAY" {
					p.expectKws("PLACING")
					call.Args = append(call.Args, p.expr())
				}
				p.expectKws("FROM")
				call.Args = append(call.Args, p.expr())
				if p.isKw("FOR") {
					p.next()
					call.Args = append(call.Args, p.expr())
				}
				p.expectOp(")")
				return call
			}
		case "POSITION":
			if next.kind == tOp && next.text == "(" && p.inAtTopLevel(2) {
				// POSITION(sub IN s) is position(sub, s)
				p.i += 2
				call := &FuncCall{Pos: pos, Name: &Name{Pos: pos, Parts: []*Ident{{Pos: pos, Name: t.text}}}}
				sub := p.comparison()
				p.expectKws("IN")
				call.Args = []Expr{sub, p.comparison()}
				p.expectOp(")")
				return call
			}
		}
		if reservedExpr[t.upper] {
			p.fail("an expression")
		}
		if next.kind == tOp && next.text == "->" {
			p.next()
			p.next()
			return &Lambda{Pos: pos, Params: []*Ident{{Pos: pos, Name: t.text}}, Body: p.expr()}
		}
		return p.nameExpr()
	}
	p.fail("an expression")
	return nil
}

// reservedExpr are the words that cannot be an unquoted column name where an
// expression starts (quote them in backticks to use them as names).
var reservedExpr = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`SELECT FROM WHERE HAVING UNION INTERSECT EXCEPT JOIN ON
		THEN ELSE END AS WHEN AND OR IS IN BETWEEN LIKE WITH`) {
		reservedExpr[w] = true
	}
}

// inAtTopLevel reports whether the parenthesised arguments starting at token
// k hold the keyword IN outside any nested parentheses.
func (p *parser) inAtTopLevel(k int) bool { return p.kwAtTopLevel(k, "IN") }

// kwAtTopLevel reports whether the parenthesised arguments starting at token
// k hold the keyword kw outside any nested parentheses.
func (p *parser) kwAtTopLevel(k int, kw string) bool {
	depth := 0
	for ; p.i+k < len(p.toks) && p.toks[p.i+k].kind != tEOF; k++ {
		t := &p.toks[p.i+k]
		switch {
		case t.kind == tOp && (t.text == "(" || t.text == "["):
			depth++
		case t.kind == tOp && (t.text == ")" || t.text == "]"):
			if depth == 0 {
				return false
			}
			depth--
		case depth == 0 && t.kind == tIdent && t.upper == kw:
			return true
		}
	}
	return false
}

// trim parses TRIM([BOTH | LEADING | TRAILING] [chars] FROM x); a plain
// trim(x[, chars]) call gives nil and is parsed as a function.
func (p *parser) trim(pos Pos) Expr {
	save := p.i
	p.i += 2
	tr := &Trim{Pos: pos}
	if p.isKw("BOTH") || p.isKw("LEADING") || p.isKw("TRAILING") {
		tr.Side = p.next().upper
	}
	if !p.isKw("FROM") {
		if tr.Side == "" {
			// trim(x) or trim(chars FROM x): look for FROM at this level
			depth := 0
			found := false
			for k := p.i; k < len(p.toks) && p.toks[k].kind != tEOF; k++ {
				t := &p.toks[k]
				if t.kind == tOp && (t.text == "(" || t.text == "[") {
					depth++
				} else if t.kind == tOp && (t.text == ")" || t.text == "]") {
					if depth == 0 {
						break
					}
					depth--
				} else if depth == 0 && t.kind == tIdent && t.upper == "FROM" {
					found = true
					break
				}
			}
			if !found {
				p.i = save
				return nil
			}
		}
		tr.Chars = p.expr()
	}
	p.expectKws("FROM")
	tr.X = p.expr()
	p.expectOp(")")
	return tr
}

// parenExpr parses what starts with "(": a scalar subquery, a lambda
// (x, y) -> ..., a tuple (a, b) or a parenthesised expression.
func (p *parser) parenExpr() Expr {
	pos := p.pos()
	if p.queryStart(1) {
		p.next()
		q := p.query()
		p.expectOp(")")
		return &Subquery{Pos: pos, Query: q}
	}
	// lambda parameters: ( ident {, ident} ) ->
	k := 1
	for p.isIdentAt(k) {
		if p.isOpAt(k+1, ",") {
			k += 2
			continue
		}
		if p.isOpAt(k+1, ")") && p.isOpAt(k+2, "->") {
			p.next()
			params := p.identList("a lambda parameter")
			p.expectOp(")")
			p.expectOp("->")
			return &Lambda{Pos: pos, Params: params, Parens: true, Body: p.expr()}
		}
		break
	}
	p.next()
	e := p.expr()
	if p.isOp(",") {
		items := []Expr{e}
		for p.acceptOp(",") {
			items = append(items, p.expr())
		}
		p.expectOp(")")
		return &Tuple{Pos: pos, Items: items}
	}
	p.expectOp(")")
	return &Paren{Pos: pos, X: e}
}

// nameExpr parses a column reference a.b.c or a function call f(...) /
// schema.f(...).
func (p *parser) nameExpr() Expr {
	// a qualified function name: [catalog.]schema.f(
	k := 1
	for p.isOpAt(k, ".") && p.isIdentAt(k+1) {
		k += 2
	}
	call := p.isOpAt(k, "(")
	first := p.ident("an expression")
	parts := []*Ident{first}
	for call && p.isOp(".") {
		p.next()
		parts = append(parts, p.ident("a name"))
	}
	if p.isOp("(") {
		return p.call(&Name{Pos: first.Pos, Parts: parts})
	}
	return &ColumnRef{Pos: first.Pos, Parts: parts}
}

// call parses the argument list of a function and what may follow it.
func (p *parser) call(name *Name) *FuncCall {
	f := &FuncCall{Pos: name.Pos, Name: name}
	p.expectOp("(")
	if p.acceptKws("DISTINCT") {
		f.Quantifier = "DISTINCT"
	} else if p.isKw("ALL") && !p.isOpAt(1, ")") && !p.isOpAt(1, ",") {
		p.next()
		f.Quantifier = "ALL"
	}
	if !p.isOp(")") {
		for {
			f.Args = append(f.Args, p.arg())
			if !p.acceptOp(",") {
				break
			}
		}
	}
	p.expectOp(")")
	if p.isKws("WITHIN", "GROUP") {
		p.i += 2
		p.expectOp("(")
		p.expectKws("ORDER", "BY")
		f.WithinGroup = p.orderItems()
		p.expectOp(")")
	}
	if p.isKw("FILTER") && p.isOpAt(1, "(") && p.isKwAt(2, "WHERE") {
		p.i += 3
		f.Filter = p.expr()
		p.expectOp(")")
	}
	if p.acceptKws("IGNORE", "NULLS") {
		f.Nulls = "IGNORE NULLS"
	} else if p.acceptKws("RESPECT", "NULLS") {
		f.Nulls = "RESPECT NULLS"
	}
	if p.acceptKws("OVER") {
		f.Over = p.windowSpec()
	}
	return f
}

// arg parses one function argument: name => value, a lambda, or expr [AS name].
func (p *parser) arg() Expr {
	pos := p.pos()
	if p.isIdentAt(0) && p.isOpAt(1, "=>") {
		name := p.ident("a parameter name")
		p.next()
		return &NamedArg{Pos: pos, Name: name, Value: p.expr()}
	}
	e := p.expr()
	if p.isKw("AS") {
		p.next()
		return &Aliased{Pos: pos, X: e, Alias: p.ident("an alias")}
	}
	return e
}

// windowSpec parses what follows OVER (or AS in a WINDOW clause).
func (p *parser) windowSpec() *WindowSpec {
	w := &WindowSpec{Pos: p.pos()}
	if !p.isOp("(") {
		w.Name = p.ident("a window name or (")
		return w
	}
	p.next()
	w.Parens = true
	if p.isIdentAt(0) && !p.isKws("PARTITION", "BY") && !p.isKws("DISTRIBUTE", "BY") &&
		!p.isKws("ORDER", "BY") && !p.isKws("SORT", "BY") && !p.isKw("ROWS") && !p.isKw("RANGE") {
		w.Name = p.ident("a window name")
	}
	if p.acceptKws("PARTITION", "BY") || p.acceptKws("DISTRIBUTE", "BY") {
		w.PartitionBy = p.exprList()
	}
	if p.acceptKws("ORDER", "BY") || p.acceptKws("SORT", "BY") {
		w.OrderBy = p.orderItems()
	}
	if p.isKw("ROWS") || p.isKw("RANGE") {
		f := &Frame{Pos: p.pos(), Unit: p.next().upper}
		if p.acceptKws("BETWEEN") {
			f.Start = p.frameBound()
			p.expectKws("AND")
			f.End = p.frameBound()
		} else {
			f.Start = p.frameBound()
		}
		w.Frame = f
	}
	p.expectOp(")")
	return w
}

func (p *parser) frameBound() *FrameBound {
	b := &FrameBound{Pos: p.pos()}
	switch {
	case p.acceptKws("UNBOUNDED", "PRECEDING"):
		b.Kind = "UNBOUNDED PRECEDING"
	case p.acceptKws("UNBOUNDED", "FOLLOWING"):
		b.Kind = "UNBOUNDED FOLLOWING"
	case p.acceptKws("CURRENT", "ROW"):
		b.Kind = "CURRENT ROW"
	default:
		b.Expr = p.additive()
		switch {
		case p.acceptKws("PRECEDING"):
			b.Kind = "PRECEDING"
		case p.acceptKws("FOLLOWING"):
			b.Kind = "FOLLOWING"
		default:
			p.fail("PRECEDING or FOLLOWING")
		}
	}
	return b
}

func (p *parser) caseExpr() Expr {
	c := &Case{Pos: p.expectKws("CASE")}
	if !p.isKw("WHEN") {
		c.Operand = p.expr()
	}
	for p.isKw("WHEN") {
		w := &When{Pos: p.next().pos}
		w.Cond = p.expr()
		p.expectKws("THEN")
		w.Result = p.expr()
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		p.fail("WHEN")
	}
	if p.acceptKws("ELSE") {
		c.Else = p.expr()
	}
	p.expectKws("END")
	return c
}

// typeAliases maps spellings to the canonical type name.
var typeAliases = map[string]string{
	"INTEGER": "INT", "LONG": "BIGINT", "SHORT": "SMALLINT", "BYTE": "TINYINT",
	"REAL": "FLOAT", "DEC": "DECIMAL", "NUMERIC": "DECIMAL", "BOOL": "BOOLEAN",
}

// dataType parses a Spark data type.
func (p *parser) dataType() *Type {
	pos := p.pos()
	t := p.peek()
	if t.kind != tIdent {
		p.fail("a data type")
	}
	p.next()
	name := t.upper
	if a, ok := typeAliases[name]; ok {
		name = a
	}
	ty := &Type{Pos: pos, Name: name}
	switch name {
	case "ARRAY":
		p.expectOp("<")
		ty.Elems = []*Type{p.dataType()}
		p.expectOp(">")
	case "MAP":
		p.expectOp("<")
		k := p.dataType()
		p.expectOp(",")
		v := p.dataType()
		p.expectOp(">")
		ty.Elems = []*Type{k, v}
	case "STRUCT":
		ty.Fields = []*StructField{}
		if p.acceptOp("<>") {
			break
		}
		p.expectOp("<")
		if !p.isOp(">") {
			for {
				f := &StructField{Pos: p.pos(), Name: p.ident("a field name")}
				p.acceptOp(":")
				f.Type = p.dataType()
				if p.acceptKws("NOT", "NULL") {
					f.NotNull = true
				}
				if p.isKw("COMMENT") {
					cpos := p.next().pos
					f.Comment = p.stringLit("a string")
					f.Comment.Pos = cpos
				}
				ty.Fields = append(ty.Fields, f)
				if !p.acceptOp(",") {
					break
				}
			}
		}
		p.expectOp(">")
	case "INTERVAL":
		if p.isUnitAt(0) {
			ty.Name += " " + p.next().upper
			if p.isKw("TO") && p.isUnitAt(1) {
				p.next()
				ty.Name += " TO " + p.next().upper
			}
		}
	default:
		if p.acceptOp("(") {
			for {
				n := p.peek()
				if n.kind != tNumber {
					p.fail("a number")
				}
				p.next()
				ty.Params = append(ty.Params, n.text)
				if !p.acceptOp(",") {
					break
				}
			}
			p.expectOp(")")
		}
	}
	return ty
}
