package sql

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
		p.w("CREATE")
		if n.OrRefresh {
			p.w(" OR REFRESH")
		}
		if n.OrReplace {
			p.w(" OR REPLACE")
		}
		if n.Private {
			p.w(" PRIVATE")
		}
		if n.Temporary {
			p.w(" TEMPORARY")
		}
		if n.Incremental {
			p.w(" INCREMENTAL")
		}
		if n.Streaming {
			p.w(" STREAMING")
		}
		if n.Live {
			p.w(" LIVE")
		}
		p.w(" ", n.Object)
		if n.IfNotExists {
			p.w(" IF NOT EXISTS")
		}
		p.w(" ")
		p.node(n.Name)
		if len(n.Elements) > 0 {
			if p.pretty {
				p.w(" (\n")
				for i, e := range n.Elements {
					p.w("  ")
					p.node(e)
					if i < len(n.Elements)-1 {
						p.w(",")
					}
					p.w("\n")
				}
				p.w(")")
			} else {
				p.w(" (")
				for i, e := range n.Elements {
					if i > 0 {
						p.w(", ")
					}
					p.node(e)
				}
				p.w(")")
			}
		}
		if n.Comment != nil {
			p.clause("COMMENT " + quoteString(n.Comment.Value))
		}
		if n.Partitioned != nil {
			p.clause("PARTITIONED BY (")
			p.idents(n.Partitioned.Columns)
			p.w(")")
		}
		if c := n.Cluster; c != nil {
			switch {
			case c.Auto:
				p.clause("CLUSTER BY AUTO")
			case c.None:
				p.clause("CLUSTER BY NONE")
			default:
				p.clause("CLUSTER BY (")
				p.names(c.Columns)
				p.w(")")
			}
		}
		if n.Properties != nil {
			p.clause("TBLPROPERTIES (")
			for i, prop := range n.Properties.Items {
				if i > 0 {
					p.w(", ")
				}
				p.w(quoteString(prop.Key))
				if prop.Value != nil {
					p.w(" = ")
					p.node(prop.Value)
				}
			}
			p.w(")")
		}
		if n.Location != nil {
			p.clause("LOCATION " + quoteString(n.Location.Value))
		}
		if n.Using != nil {
			p.clause("USING ")
			p.ident(n.Using)
		}
		if rf := n.RowFilter; rf != nil {
			p.clause("WITH ROW FILTER ")
			p.node(rf.Func)
			p.w(" ON (")
			p.exprs(rf.On)
			p.w(")")
		}
		if n.Query != nil {
			p.clause("AS ")
			p.node(n.Query)
		}
	case *ColumnDef:
		p.ident(n.Name)
		if n.Type != nil {
			p.w(" ")
			p.node(n.Type)
		}
		if n.NotNull {
			p.w(" NOT NULL")
		}
		if g := n.Generated; g != nil {
			if g.Identity {
				if g.ByDefault {
					p.w(" GENERATED BY DEFAULT AS IDENTITY")
				} else {
					p.w(" GENERATED ALWAYS AS IDENTITY")
				}
				if g.Start != nil || g.Increment != nil {
					p.w(" (")
					if g.Start != nil {
						p.w("START WITH ")
						p.node(g.Start)
						if g.Increment != nil {
							p.w(" ")
						}
					}
					if g.Increment != nil {
						p.w("INCREMENT BY ")
						p.node(g.Increment)
					}
					p.w(")")
				}
			} else {
				p.w(" GENERATED ALWAYS AS (")
				p.node(g.Expr)
				p.w(")")
			}
		}
		if n.Default != nil {
			p.w(" DEFAULT ")
			p.node(n.Default)
		}
		if n.PrimaryKey {
			p.w(" PRIMARY KEY")
		}
		if n.Comment != nil {
			p.w(" COMMENT ", quoteString(n.Comment.Value))
		}
		if m := n.Mask; m != nil {
			p.w(" MASK ")
			p.node(m.Func)
			if len(m.Using) > 0 {
				p.w(" USING COLUMNS (")
				p.exprs(m.Using)
				p.w(")")
			}
		}
	case *Constraint:
		if n.Name != nil {
			p.w("CONSTRAINT ")
			p.ident(n.Name)
			p.w(" ")
		}
		switch n.Kind {
		case Expect, Check:
			if n.Kind == Expect {
				p.w("EXPECT (")
			} else {
				p.w("CHECK (")
			}
			p.node(n.Expr)
			p.w(")")
			if n.OnViolation != "" {
				p.w(" ON VIOLATION ", n.OnViolation)
			}
		case PrimaryKey:
			p.w("PRIMARY KEY (")
			p.idents(n.Columns)
			if n.Timeseries != nil {
				if len(n.Columns) > 0 {
					p.w(", ")
				}
				p.ident(n.Timeseries)
				p.w(" TIMESERIES")
			}
			p.w(")")
		case ForeignKey:
			p.w("FOREIGN KEY (")
			p.idents(n.Columns)
			p.w(") REFERENCES ")
			p.node(n.RefTable)
			if len(n.RefColumns) > 0 {
				p.w(" (")
				p.idents(n.RefColumns)
				p.w(")")
			}
		}
		for _, o := range n.Options {
			p.w(" ", o)
		}
	case *CreateFlow:
		p.w("CREATE FLOW ")
		p.node(n.Name)
		if n.Comment != nil {
			p.clause("COMMENT " + quoteString(n.Comment.Value))
		}
		if n.DependsOn != nil {
			p.clause("DEPENDS ON (")
			p.names(n.DependsOn.Flows)
			p.w(")")
		}
		p.clause("AS ")
		p.node(n.Body)
	case *InsertInto:
		p.w("INSERT INTO ")
		if n.Once {
			p.w("ONCE ")
		}
		p.node(n.Target)
		if n.ByName {
			p.w(" BY NAME")
		}
		if p.pretty && p.depth == 0 {
			p.w("\n")
		} else {
			p.w(" ")
		}
		p.node(n.Query)
	case *AutoCDC:
		if n.Legacy {
			p.w("APPLY CHANGES INTO ")
		} else {
			p.w("AUTO CDC ")
			if n.Once {
				p.w("ONCE ")
			}
			p.w("INTO ")
		}
		p.node(n.Target)
		p.clause("FROM ")
		if n.Snapshot {
			p.w("SNAPSHOT ")
		}
		p.node(n.Source)
		if n.Keys != nil {
			p.clause("KEYS (")
			p.names(n.Keys.Columns)
			p.w(")")
		}
		if n.IgnoreNulls != nil {
			p.clause("IGNORE NULL UPDATES")
			if n.IgnoreNulls.On != nil {
				p.w(" ON ")
				p.selection(n.IgnoreNulls.On)
			}
		}
		if n.DeleteWhen != nil {
			p.clause("APPLY AS DELETE WHEN ")
			p.node(n.DeleteWhen.Expr)
		}
		if n.TruncateWhen != nil {
			p.clause("APPLY AS TRUNCATE WHEN ")
			p.node(n.TruncateWhen.Expr)
		}
		if n.SequenceBy != nil {
			p.clause("SEQUENCE BY ")
			p.node(n.SequenceBy.Expr)
		}
		if n.Columns != nil {
			p.clause("COLUMNS ")
			p.selection(n.Columns)
		}
		if n.StoredAs != nil {
			p.clause(fmt.Sprintf("STORED AS SCD TYPE %d", n.StoredAs.SCDType))
		}
		if n.TrackHistory != nil {
			p.clause("TRACK HISTORY ON ")
			p.selection(n.TrackHistory)
		}
	case *Set:
		p.w("SET")
		if n.Key != "" {
			p.w(" ", n.Key)
		}
		if n.HasVal {
			p.w(" = ")
			if n.Quoted {
				p.w(quoteString(n.Value))
			} else {
				p.w(n.Value)
			}
		}
	case *Use:
		p.w("USE ")
		if n.Kind != "" {
			p.w(n.Kind, " ")
		}
		p.node(n.Name)
	case *QueryStmt:
		p.node(n.Query)

	// ---- queries ----
	case *Query:
		if len(n.With) > 0 {
			p.w("WITH ")
			for i, c := range n.With {
				if i > 0 {
					p.w(", ")
				}
				p.ident(c.Name)
				if len(c.Columns) > 0 {
					p.w(" (")
					p.idents(c.Columns)
					p.w(")")
				}
				p.w(" AS (")
				p.nested(c.Query)
				p.w(")")
			}
			if p.pretty && p.depth == 0 {
				p.w("\n")
			} else {
				p.w(" ")
			}
		}
		p.node(n.Body)
		if len(n.OrderBy) > 0 {
			p.clause("ORDER BY ")
			p.orderItems(n.OrderBy)
		}
		if n.Limit != nil {
			p.clause("LIMIT ")
			p.node(n.Limit)
		}
		if n.Offset != nil {
			p.clause("OFFSET ")
			p.node(n.Offset)
		}
	case *SetOp:
		p.node(n.Left)
		op := n.Op
		if n.Quantifier != "" {
			op += " " + n.Quantifier
		}
		p.clause(op)
		if p.pretty && p.depth == 0 {
			p.w("\n")
		} else {
			p.w(" ")
		}
		p.node(n.Right)
	case *ParenQuery:
		p.w("(")
		p.nested(n.Query)
		p.w(")")
	case *Values:
		p.w("VALUES ")
		for i, row := range n.Rows {
			if i > 0 {
				p.w(", ")
			}
			p.w("(")
			p.exprs(row)
			p.w(")")
		}
	case *Select:
		p.w("SELECT ")
		if n.Quantifier != "" {
			p.w(n.Quantifier, " ")
		}
		for i, it := range n.Items {
			if i > 0 {
				p.w(", ")
			}
			p.node(it.Expr)
			if it.Alias != nil {
				p.w(" AS ")
				p.ident(it.Alias)
			} else if len(it.AliasColumns) > 0 {
				p.w(" AS (")
				p.idents(it.AliasColumns)
				p.w(")")
			}
		}
		if len(n.From) > 0 {
			p.clause("FROM ")
			for i, f := range n.From {
				if i > 0 {
					p.w(", ")
				}
				p.node(f)
			}
		}
		for _, lv := range n.LateralViews {
			if lv.Outer {
				p.clause("LATERAL VIEW OUTER ")
			} else {
				p.clause("LATERAL VIEW ")
			}
			p.node(lv.Func)
			p.w(" ")
			p.ident(lv.Table)
			if len(lv.Columns) > 0 {
				p.w(" AS ")
				p.idents(lv.Columns)
			}
		}
		if n.Where != nil {
			p.clause("WHERE ")
			p.node(n.Where)
		}
		if g := n.GroupBy; g != nil {
			p.clause("GROUP BY ")
			if g.All {
				p.w("ALL")
			} else {
				p.exprs(g.Items)
			}
			if g.With != "" {
				p.w(" WITH ", g.With)
			}
		}
		if n.Having != nil {
			p.clause("HAVING ")
			p.node(n.Having)
		}
		if n.Qualify != nil {
			p.clause("QUALIFY ")
			p.node(n.Qualify)
		}
		if len(n.Windows) > 0 {
			p.clause("WINDOW ")
			for i, w := range n.Windows {
				if i > 0 {
					p.w(", ")
				}
				p.ident(w.Name)
				p.w(" AS ")
				p.node(w.Spec)
			}
		}
	case *TableRef:
		if n.Stream {
			p.w("STREAM(")
			p.node(n.Name)
			p.w(")")
		} else {
			p.node(n.Name)
		}
		p.watermark(n.Watermark)
		p.alias(n.Alias)
	case *TableFunc:
		if n.Stream {
			p.w("STREAM ")
		}
		p.node(n.Func)
		p.watermark(n.Watermark)
		p.alias(n.Alias)
	case *SubqueryRef:
		if n.Lateral {
			p.w("LATERAL ")
		}
		p.w("(")
		p.nested(n.Query)
		p.w(")")
		p.alias(n.Alias)
	case *ValuesRef:
		p.node(n.Values)
		p.alias(n.Alias)
	case *Join:
		p.node(n.Left)
		p.clause(n.Written + " ")
		p.node(n.Right)
		if n.On != nil {
			p.w(" ON ")
			p.node(n.On)
		}
		if n.Using != nil {
			p.w(" USING (")
			p.idents(n.Using)
			p.w(")")
		}
	case *ParenJoin:
		p.w("(")
		p.depth++
		p.node(n.Item)
		p.depth--
		p.w(")")
		p.alias(n.Alias)

	// ---- expressions ----
	case *Literal:
		switch n.Kind {
		case StringLit:
			p.w(quoteString(n.Value))
		case NullLit:
			p.w("NULL")
		default:
			p.w(n.Text, n.Suffix)
		}
	case *TypedLiteral:
		if n.Type == "X" {
			p.w("X", quoteString(n.Value))
		} else {
			p.w(n.Type, " ", quoteString(n.Value))
		}
	case *Interval:
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
	case *ColumnRef:
		p.dotted(n.Parts)
	case *FieldAccess:
		p.node(n.X)
		if lit, ok := n.X.(*Literal); ok && lit.Kind == NumberLit {
			p.w(" ") // 1 .a, not the number 1.a
		}
		p.w(".")
		p.ident(n.Field)
	case *Subscript:
		p.node(n.X)
		p.w("[")
		p.node(n.Index)
		p.w("]")
	case *JSONPath:
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
	case *Star:
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
	case *Unary:
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
	case *Binary:
		p.node(n.L)
		p.w(" ", n.Op, " ")
		p.node(n.R)
	case *Paren:
		p.w("(")
		p.node(n.X)
		p.w(")")
	case *Tuple:
		p.w("(")
		p.exprs(n.Items)
		p.w(")")
	case *Is:
		p.node(n.X)
		p.w(" IS ")
		if n.Not {
			p.w("NOT ")
		}
		p.w(n.What)
	case *IsDistinct:
		p.node(n.X)
		p.w(" IS ")
		if n.Not {
			p.w("NOT ")
		}
		p.w("DISTINCT FROM ")
		p.node(n.Y)
	case *In:
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
	case *Between:
		p.node(n.X)
		if n.Not {
			p.w(" NOT")
		}
		p.w(" BETWEEN ")
		p.node(n.Lo)
		p.w(" AND ")
		p.node(n.Hi)
	case *Like:
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
	case *Case:
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
	case *Cast:
		if n.Try {
			p.w("TRY_CAST(")
		} else {
			p.w("CAST(")
		}
		p.node(n.X)
		p.w(" AS ")
		p.node(n.Type)
		p.w(")")
	case *Type:
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
	case *FuncCall:
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
	case *NamedArg:
		p.ident(n.Name)
		p.w(" => ")
		p.node(n.Value)
	case *Aliased:
		p.node(n.X)
		p.w(" AS ")
		p.ident(n.Alias)
	case *Lambda:
		if n.Parens || len(n.Params) != 1 {
			p.w("(")
			p.idents(n.Params)
			p.w(")")
		} else {
			p.ident(n.Params[0])
		}
		p.w(" -> ")
		p.node(n.Body)
	case *Subquery:
		p.w("(")
		p.nested(n.Query)
		p.w(")")
	case *Exists:
		p.w("EXISTS (")
		p.nested(n.Query)
		p.w(")")
	case *Extract:
		p.w("EXTRACT(")
		p.ident(n.Field)
		p.w(" FROM ")
		p.node(n.X)
		p.w(")")
	case *Trim:
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
	case *LimitAll:
		p.w("ALL")
	case *GroupingSets:
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
	case *WindowSpec:
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
	default:
		p.w(fmt.Sprintf("<%T>", n))
	}
}

func (p *printer) bound(b *FrameBound) {
	if b.Expr != nil {
		p.node(b.Expr)
		p.w(" ")
	}
	p.w(b.Kind)
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
