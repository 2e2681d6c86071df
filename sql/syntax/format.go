package syntax

import (
	"fmt"
	"strings"
)

// Format renders a node as canonical SQL with one clause a line (at the top
// level of a statement; nested queries stay on one line). String renders it
// on one line. Parsing either rendering gives the same tree.
func Format(n Node) string {
	p := &printer{pretty: true}
	p.node(n)
	return p.b.String()
}

func oneLine(n Node) string {
	p := &printer{}
	p.node(n)
	return p.b.String()
}

// String renders the file: its notes as comments, then each statement.
func (f *File) String() string {
	var b strings.Builder
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "-- note %s: %s\n", n.Pos, n.Text)
	}
	for _, s := range f.Statements {
		b.WriteString(Format(s))
		b.WriteString(";\n")
	}
	return b.String()
}

type printer struct {
	b        strings.Builder
	pretty   bool
	explicit bool // parenthesise every operator, to show how the tree nests
	depth    int  // nesting of queries: clauses go on their own line at depth 0 only
}

func (p *printer) w(ss ...string) {
	for _, s := range ss {
		p.b.WriteString(s)
	}
}

// clause starts a clause: on a new line at the top level when pretty.
func (p *printer) clause(kw string) {
	if p.pretty && p.depth == 0 {
		p.w("\n", kw)
	} else {
		p.w(" ", kw)
	}
}

// quoteString renders a string literal that the lexer reads back as s.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '$':
			if i+1 < len(s) && s[i+1] == '{' {
				b.WriteString(`\$`)
			} else {
				b.WriteByte('$')
			}
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func (p *printer) ident(id *Ident) {
	if id.Quoted {
		p.w("`", strings.ReplaceAll(id.Name, "`", "``"), "`")
	} else {
		p.w(id.Name)
	}
}

func (p *printer) idents(ids []*Ident) {
	for i, id := range ids {
		if i > 0 {
			p.w(", ")
		}
		p.ident(id)
	}
}

func (p *printer) dotted(ids []*Ident) {
	for i, id := range ids {
		if i > 0 {
			p.w(".")
		}
		p.ident(id)
	}
}

func (p *printer) names(ns []*Name) {
	for i, n := range ns {
		if i > 0 {
			p.w(", ")
		}
		p.dotted(n.Parts)
	}
}

func (p *printer) exprs(es []Expr) {
	for i, e := range es {
		if i > 0 {
			p.w(", ")
		}
		p.node(e)
	}
}

func (p *printer) orderItems(items []*OrderItem) {
	for i, o := range items {
		if i > 0 {
			p.w(", ")
		}
		p.node(o.Expr)
		if o.Desc {
			p.w(" DESC")
		} else if o.Asc {
			p.w(" ASC")
		}
		if o.Nulls != "" {
			p.w(" NULLS ", o.Nulls)
		}
	}
}

// nested renders a query inside another construct, on one line.
func (p *printer) nested(q *Query) {
	p.depth++
	p.node(q)
	p.depth--
}

func (p *printer) alias(a *Alias) {
	if a == nil {
		return
	}
	p.w(" AS ")
	p.ident(a.Name)
	if len(a.Columns) > 0 {
		p.w("(")
		p.idents(a.Columns)
		p.w(")")
	}
}

func (p *printer) watermark(wm *Watermark) {
	if wm == nil {
		return
	}
	p.w(" WATERMARK ")
	p.node(wm.Column)
	if wm.Alias != nil {
		p.w(" AS ")
		p.ident(wm.Alias)
	}
	p.w(" DELAY OF ")
	p.node(wm.Delay)
	if len(wm.Deduplicate) > 0 {
		p.w(" DEDUPLICATE ON (")
		p.idents(wm.Deduplicate)
		p.w(")")
	}
}

func (p *printer) selection(s *ColumnSelection) {
	if s.Star {
		p.w("* EXCEPT (")
	} else {
		p.w("(")
	}
	p.names(s.Columns)
	p.w(")")
}

// explicitString renders an expression with every operator in parentheses.
func explicitString(n Node) string {
	p := &printer{explicit: true}
	p.node(n)
	return p.b.String()
}

// node prints any node: it puts the operators in braces when p.explicit
// and hands the node to the method that prints its kind (format_stmt.go,
// format_query.go, format_expr.go).
func (p *printer) node(n Node) {
	if p.explicit {
		switch n.(type) {
		case *Binary, *Unary, *Is, *IsDistinct, *In, *Between, *Like, *JSONPath, *Subscript, *FieldAccess:
			p.w("{")
			defer p.w("}")
		}
	}
	switch n := n.(type) {
	case *Ident:
		p.ident(n)
	case *Name:
		p.dotted(n.Parts)

	// ---- statements ----
	case *CreateDataset:
		p.printCreateDataset(n)
	case *ColumnDef:
		p.printColumnDef(n)
	case *Constraint:
		p.printConstraint(n)
	case *CreateFlow:
		p.printCreateFlow(n)
	case *InsertInto:
		p.printInsertInto(n)
	case *AutoCDC:
		p.printAutoCDC(n)
	case *Set:
		p.printSet(n)
	case *Use:
		p.printUse(n)
	case *QueryStmt:
		p.node(n.Query)

	// ---- queries ----
	case *Query:
		p.printQuery(n)
	case *SetOp:
		p.printSetOp(n)
	case *ParenQuery:
		p.printParenQuery(n)
	case *Values:
		p.printValues(n)
	case *Select:
		p.printSelect(n)
	case *TableRef:
		p.printTableRef(n)
	case *TableFunc:
		p.printTableFunc(n)
	case *SubqueryRef:
		p.printSubqueryRef(n)
	case *ValuesRef:
		p.printValuesRef(n)
	case *Join:
		p.printJoin(n)
	case *ParenJoin:
		p.printParenJoin(n)
	case *Pivot:
		p.printPivot(n)
	case *Unpivot:
		p.printUnpivot(n)

	// ---- expressions ----
	case *Literal:
		p.printLiteral(n)
	case *TypedLiteral:
		p.printTypedLiteral(n)
	case *Interval:
		p.printInterval(n)
	case *ColumnRef:
		p.dotted(n.Parts)
	case *FieldAccess:
		p.printFieldAccess(n)
	case *Subscript:
		p.printSubscript(n)
	case *JSONPath:
		p.printJSONPath(n)
	case *Star:
		p.printStar(n)
	case *Unary:
		p.printUnary(n)
	case *Binary:
		p.printBinary(n)
	case *Paren:
		p.printParen(n)
	case *Tuple:
		p.printTuple(n)
	case *Is:
		p.printIs(n)
	case *IsDistinct:
		p.printIsDistinct(n)
	case *In:
		p.printIn(n)
	case *Between:
		p.printBetween(n)
	case *Like:
		p.printLike(n)
	case *Case:
		p.printCase(n)
	case *Cast:
		p.printCast(n)
	case *Type:
		p.printType(n)
	case *FuncCall:
		p.printFuncCall(n)
	case *NamedArg:
		p.printNamedArg(n)
	case *Aliased:
		p.printAliased(n)
	case *Lambda:
		p.printLambda(n)
	case *Subquery:
		p.printSubquery(n)
	case *Exists:
		p.printExists(n)
	case *Extract:
		p.printExtract(n)
	case *Trim:
		p.printTrim(n)
	case *LimitAll:
		p.w("ALL")
	case *GroupingSets:
		p.printGroupingSets(n)
	case *WindowSpec:
		p.printWindowSpec(n)
	default:
		p.w(fmt.Sprintf("<%T>", n))
	}
}

func (n *Ident) String() string         { return oneLine(n) }
func (n *Name) String() string          { return oneLine(n) }
func (n *CreateDataset) String() string { return oneLine(n) }
func (n *ColumnDef) String() string     { return oneLine(n) }
func (n *Constraint) String() string    { return oneLine(n) }
func (n *CreateFlow) String() string    { return oneLine(n) }
func (n *InsertInto) String() string    { return oneLine(n) }
func (n *AutoCDC) String() string       { return oneLine(n) }
func (n *Set) String() string           { return oneLine(n) }
func (n *Use) String() string           { return oneLine(n) }
func (n *QueryStmt) String() string     { return oneLine(n) }
func (n *Query) String() string         { return oneLine(n) }
func (n *SetOp) String() string         { return oneLine(n) }
func (n *ParenQuery) String() string    { return oneLine(n) }
func (n *Values) String() string        { return oneLine(n) }
func (n *Select) String() string        { return oneLine(n) }
func (n *TableRef) String() string      { return oneLine(n) }
func (n *TableFunc) String() string     { return oneLine(n) }
func (n *SubqueryRef) String() string   { return oneLine(n) }
func (n *ValuesRef) String() string     { return oneLine(n) }
func (n *Join) String() string          { return oneLine(n) }
func (n *ParenJoin) String() string     { return oneLine(n) }
func (n *Pivot) String() string         { return oneLine(n) }
func (n *Unpivot) String() string       { return oneLine(n) }
func (n *Literal) String() string       { return oneLine(n) }
func (n *TypedLiteral) String() string  { return oneLine(n) }
func (n *Interval) String() string      { return oneLine(n) }
func (n *ColumnRef) String() string     { return oneLine(n) }
func (n *FieldAccess) String() string   { return oneLine(n) }
func (n *Subscript) String() string     { return oneLine(n) }
func (n *JSONPath) String() string      { return oneLine(n) }
func (n *Star) String() string          { return oneLine(n) }
func (n *Unary) String() string         { return oneLine(n) }
func (n *Binary) String() string        { return oneLine(n) }
func (n *Paren) String() string         { return oneLine(n) }
func (n *Tuple) String() string         { return oneLine(n) }
func (n *Is) String() string            { return oneLine(n) }
func (n *IsDistinct) String() string    { return oneLine(n) }
func (n *In) String() string            { return oneLine(n) }
func (n *Between) String() string       { return oneLine(n) }
func (n *Like) String() string          { return oneLine(n) }
func (n *Case) String() string          { return oneLine(n) }
func (n *Cast) String() string          { return oneLine(n) }
func (n *Type) String() string          { return oneLine(n) }
func (n *FuncCall) String() string      { return oneLine(n) }
func (n *NamedArg) String() string      { return oneLine(n) }
func (n *Aliased) String() string       { return oneLine(n) }
func (n *Lambda) String() string        { return oneLine(n) }
func (n *Subquery) String() string      { return oneLine(n) }
func (n *Exists) String() string        { return oneLine(n) }
func (n *Extract) String() string       { return oneLine(n) }
func (n *Trim) String() string          { return oneLine(n) }
func (n *LimitAll) String() string      { return oneLine(n) }
func (n *GroupingSets) String() string  { return oneLine(n) }
func (n *WindowSpec) String() string    { return oneLine(n) }
func (n *WindowSpec) Position() Pos     { return n.Pos }
