package syntax

import "strings"

// The printer of expressions and types: one method an expression kind,
// called by printer.node.

func (p *printer) printLiteral(n *Literal) {
	switch n.Kind {
	case StringLit:
		p.w(quoteString(n.Value))
	case NullLit:
		p.w("NULL")
	default:
		p.w(n.Text, n.Suffix)
	}
}

func (p *printer) printTypedLiteral(n *TypedLiteral) {
	if n.Type == "X" {
		p.w("X", quoteString(n.Value))
	} else {
		p.w(n.Type, " ", quoteString(n.Value))
	}
}

func (p *printer) printInterval(n *Interval) {
	p.w("INTERVAL")
	for _, part := range n.Parts {
		p.w(" ", part.Sign)
		if part.Quoted {
			p.w(quoteString(part.Value))
		} else {
			p.w(part.Value)
		}
		if part.Unit != "" {
			p.w(" ", part.Unit)
		}
		if part.ToUnit != "" {
			p.w(" TO ", part.ToUnit)
		}
	}
}

func (p *printer) printFieldAccess(n *FieldAccess) {
	p.node(n.X)
	if lit, ok := n.X.(*Literal); ok && lit.Kind == NumberLit {
		p.w(" ") // 1 .a, not the number 1.a
	}
	p.w(".")
	p.ident(n.Field)
}

func (p *printer) printSubscript(n *Subscript) {
	p.node(n.X)
	p.w("[")
	p.node(n.Index)
	p.w("]")
}

func (p *printer) printJSONPath(n *JSONPath) {
	p.node(n.X)
	p.w(":")
	for i, st := range n.Steps {
		switch {
		case st.Wildcard:
			p.w("[*]")
		case st.Index != nil:
			p.w("[")
			p.node(st.Index)
			p.w("]")
		case st.Bracket:
			p.w("[", quoteString(st.Field), "]")
		default:
			if i > 0 {
				p.w(".")
			}
			p.ident(&Ident{Name: st.Field, Quoted: st.Quoted})
		}
	}
}

func (p *printer) printStar(n *Star) {
	if len(n.Qualifier) > 0 {
		p.dotted(n.Qualifier)
		p.w(".")
	}
	p.w("*")
	if len(n.Except) > 0 {
		p.w(" EXCEPT (")
		for i, c := range n.Except {
			if i > 0 {
				p.w(", ")
			}
			p.node(c)
		}
		p.w(")")
	}
}

func (p *printer) printUnary(n *Unary) {
	switch n.Op {
	case "NOT":
		p.w("NOT ")
		p.node(n.X)
	default:
		p.w(n.Op)
		// render the operand once, aside, to see whether it starts
		// with a minus: "- -a", never "--a" (a comment)
		q := &printer{pretty: p.pretty, explicit: p.explicit, depth: p.depth}
		q.node(n.X)
		if s := q.b.String(); n.Op == "-" && strings.HasPrefix(s, "-") {
			p.w(" ")
		}
		p.w(q.b.String())
	}
}

func (p *printer) printBinary(n *Binary) {
	p.node(n.L)
	p.w(" ", n.Op, " ")
	p.node(n.R)
}

func (p *printer) printParen(n *Paren) {
	p.w("(")
	p.node(n.X)
	p.w(")")
}

func (p *printer) printTuple(n *Tuple) {
	p.w("(")
	p.exprs(n.Items)
	p.w(")")
}

func (p *printer) printIs(n *Is) {
	p.node(n.X)
	p.w(" IS ")
	if n.Not {
		p.w("NOT ")
	}
	p.w(n.What)
}

func (p *printer) printIsDistinct(n *IsDistinct) {
	p.node(n.X)
	p.w(" IS ")
	if n.Not {
		p.w("NOT ")
	}
	p.w("DISTINCT FROM ")
	p.node(n.Y)
}

func (p *printer) printIn(n *In) {
	p.node(n.X)
	if n.Not {
		p.w(" NOT")
	}
	p.w(" IN (")
	if n.Query != nil {
		p.nested(n.Query)
	} else {
		p.exprs(n.List)
	}
	p.w(")")
}

func (p *printer) printBetween(n *Between) {
	p.node(n.X)
	if n.Not {
		p.w(" NOT")
	}
	p.w(" BETWEEN ")
	p.node(n.Lo)
	p.w(" AND ")
	p.node(n.Hi)
}

func (p *printer) printLike(n *Like) {
	p.node(n.X)
	if n.Not {
		p.w(" NOT")
	}
	p.w(" ", n.Op, " ")
	if n.Quantifier != "" {
		p.w(n.Quantifier, " (")
		p.exprs(n.Patterns)
		p.w(")")
	} else {
		p.node(n.Pattern)
	}
	if n.Escape != nil {
		p.w(" ESCAPE ")
		p.node(n.Escape)
	}
}

func (p *printer) printCase(n *Case) {
	p.w("CASE")
	if n.Operand != nil {
		p.w(" ")
		p.node(n.Operand)
	}
	for _, w := range n.Whens {
		p.w(" WHEN ")
		p.node(w.Cond)
		p.w(" THEN ")
		p.node(w.Result)
	}
	if n.Else != nil {
		p.w(" ELSE ")
		p.node(n.Else)
	}
	p.w(" END")
}

func (p *printer) printCast(n *Cast) {
	if n.Try {
		p.w("TRY_CAST(")
	} else {
		p.w("CAST(")
	}
	p.node(n.X)
	p.w(" AS ")
	p.node(n.Type)
	p.w(")")
}

func (p *printer) printType(n *Type) {
	switch n.Name {
	case "ARRAY", "MAP":
		p.w(n.Name, "<")
		for i, e := range n.Elems {
			if i > 0 {
				p.w(", ")
			}
			p.node(e)
		}
		p.w(">")
	case "STRUCT":
		p.w("STRUCT<")
		for i, f := range n.Fields {
			if i > 0 {
				p.w(", ")
			}
			p.ident(f.Name)
			p.w(": ")
			p.node(f.Type)
			if f.NotNull {
				p.w(" NOT NULL")
			}
			if f.Comment != nil {
				p.w(" COMMENT ", quoteString(f.Comment.Value))
			}
		}
		p.w(">")
	default:
		p.w(n.Name)
		if len(n.Params) > 0 {
			p.w("(", strings.Join(n.Params, ", "), ")")
		}
	}
}

func (p *printer) printFuncCall(n *FuncCall) {
	p.node(n.Name)
	p.w("(")
	if n.Quantifier != "" {
		p.w(n.Quantifier, " ")
	}
	p.exprs(n.Args)
	p.w(")")
	if len(n.WithinGroup) > 0 {
		p.w(" WITHIN GROUP (ORDER BY ")
		p.orderItems(n.WithinGroup)
		p.w(")")
	}
	if n.Filter != nil {
		p.w(" FILTER (WHERE ")
		p.node(n.Filter)
		p.w(")")
	}
	if n.Nulls != "" {
		p.w(" ", n.Nulls)
	}
	if n.Over != nil {
		p.w(" OVER ")
		p.node(n.Over)
	}
}

func (p *printer) printNamedArg(n *NamedArg) {
	p.ident(n.Name)
	p.w(" => ")
	p.node(n.Value)
}

func (p *printer) printAliased(n *Aliased) {
	p.node(n.X)
	p.w(" AS ")
	p.ident(n.Alias)
}

func (p *printer) printLambda(n *Lambda) {
	if n.Parens || len(n.Params) != 1 {
		p.w("(")
		p.idents(n.Params)
		p.w(")")
	} else {
		p.ident(n.Params[0])
	}
	p.w(" -> ")
	p.node(n.Body)
}

func (p *printer) printSubquery(n *Subquery) {
	p.w("(")
	p.nested(n.Query)
	p.w(")")
}

func (p *printer) printExists(n *Exists) {
	p.w("EXISTS (")
	p.nested(n.Query)
	p.w(")")
}

func (p *printer) printExtract(n *Extract) {
	p.w("EXTRACT(")
	p.ident(n.Field)
	p.w(" FROM ")
	p.node(n.X)
	p.w(")")
}

func (p *printer) printTrim(n *Trim) {
	p.w("TRIM(")
	if n.Side != "" {
		p.w(n.Side, " ")
	}
	if n.Chars != nil {
		p.node(n.Chars)
		p.w(" ")
	}
	p.w("FROM ")
	p.node(n.X)
	p.w(")")
}

func (p *printer) printGroupingSets(n *GroupingSets) {
	p.w("GROUPING SETS (")
	for i, set := range n.Sets {
		if i > 0 {
			p.w(", ")
		}
		p.w("(")
		p.exprs(set)
		p.w(")")
	}
	p.w(")")
}

func (p *printer) printWindowSpec(n *WindowSpec) {
	if !n.Parens {
		p.ident(n.Name)
		return
	}
	p.w("(")
	sep := ""
	if n.Name != nil {
		p.ident(n.Name)
		sep = " "
	}
	if len(n.PartitionBy) > 0 {
		p.w(sep, "PARTITION BY ")
		p.exprs(n.PartitionBy)
		sep = " "
	}
	if len(n.OrderBy) > 0 {
		p.w(sep, "ORDER BY ")
		p.orderItems(n.OrderBy)
		sep = " "
	}
	if f := n.Frame; f != nil {
		p.w(sep, f.Unit, " ")
		if f.End != nil {
			p.w("BETWEEN ")
			p.bound(f.Start)
			p.w(" AND ")
			p.bound(f.End)
		} else {
			p.bound(f.Start)
		}
	}
	p.w(")")
}

func (p *printer) bound(b *FrameBound) {
	if b.Expr != nil {
		p.node(b.Expr)
		p.w(" ")
	}
	p.w(b.Kind)
}
