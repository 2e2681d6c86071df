package syntax

// The printer of queries and the relations they read: one method a kind,
// called by printer.node.
func (p *printer) printQuery(n *Query) {
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
	if len(n.Partitioning) > 0 {
		p.clause("DISTRIBUTE BY ")
		p.exprs(n.Partitioning)
	}
	if len(n.PartitionOrder) > 0 {
		p.clause("SORT BY ")
		p.orderItems(n.PartitionOrder)
	}
	if n.Limit != nil {
		p.clause("LIMIT ")
		p.node(n.Limit)
	}
	if n.Offset != nil {
		p.clause("OFFSET ")
		p.node(n.Offset)
	}
}

func (p *printer) printSetOp(n *SetOp) {
	p.node(n.Left)
	op := n.Op
	if n.Quantifier != "" {
		op += " " + n.Quantifier
	}
	if n.ByName {
		op += " BY NAME"
	}
	p.clause(op)
	if p.pretty && p.depth == 0 {
		p.w("\n")
	} else {
		p.w(" ")
	}
	p.node(n.Right)
}

func (p *printer) printParenQuery(n *ParenQuery) {
	p.w("(")
	p.nested(n.Query)
	p.w(")")
}

func (p *printer) printValues(n *Values) {
	p.w("VALUES ")
	for i, row := range n.Rows {
		if i > 0 {
			p.w(", ")
		}
		p.w("(")
		p.exprs(row)
		p.w(")")
	}
}

func (p *printer) printSelect(n *Select) {
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
}

func (p *printer) printTableRef(n *TableRef) {
	if n.Stream {
		p.w("STREAM(")
		p.node(n.Name)
		p.w(")")
	} else {
		p.node(n.Name)
	}
	p.sample(n.Sample)
	p.watermark(n.Watermark)
	p.alias(n.Alias)
}

func (p *printer) printTableFunc(n *TableFunc) {
	if n.Stream {
		p.w("STREAM ")
	}
	p.node(n.Func)
	p.watermark(n.Watermark)
	p.alias(n.Alias)
}

func (p *printer) printSubqueryRef(n *SubqueryRef) {
	if n.Lateral {
		p.w("LATERAL ")
	}
	p.w("(")
	p.nested(n.Query)
	p.w(")")
	p.alias(n.Alias)
}

func (p *printer) printValuesRef(n *ValuesRef) {
	p.node(n.Values)
	p.alias(n.Alias)
}

func (p *printer) printJoin(n *Join) {
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
}

func (p *printer) printParenJoin(n *ParenJoin) {
	p.w("(")
	p.depth++
	p.node(n.Item)
	p.depth--
	p.w(")")
	p.alias(n.Alias)
}

func (p *printer) printPivot(n *Pivot) {
	p.node(n.Source)
	p.w(" PIVOT (")
	for i, a := range n.Aggs {
		if i > 0 {
			p.w(", ")
		}
		p.node(a.Expr)
		if a.Alias != nil {
			p.w(" AS ")
			p.ident(a.Alias)
		}
	}
	p.w(" FOR ")
	if len(n.For) > 1 {
		p.w("(")
	}
	for i, c := range n.For {
		if i > 0 {
			p.w(", ")
		}
		p.node(c)
	}
	if len(n.For) > 1 {
		p.w(")")
	}
	p.w(" IN (")
	for i, v := range n.In {
		if i > 0 {
			p.w(", ")
		}
		if len(v.Values) > 1 {
			p.w("(")
		}
		p.exprs(v.Values)
		if len(v.Values) > 1 {
			p.w(")")
		}
		if v.Alias != nil {
			p.w(" AS ")
			p.ident(v.Alias)
		}
	}
	p.w("))")
	p.alias(n.Alias)
}

func (p *printer) printUnpivot(n *Unpivot) {
	p.node(n.Source)
	p.w(" UNPIVOT ")
	if n.IncludeNulls {
		p.w("INCLUDE NULLS ")
	}
	p.w("(")
	if len(n.Values) > 1 {
		p.w("(")
		p.idents(n.Values)
		p.w(")")
	} else {
		p.ident(n.Values[0])
	}
	p.w(" FOR ")
	p.ident(n.Name)
	p.w(" IN (")
	for i, c := range n.In {
		if i > 0 {
			p.w(", ")
		}
		if len(c.Columns) > 1 {
			p.w("(")
		}
		for k, col := range c.Columns {
			if k > 0 {
				p.w(", ")
			}
			p.node(col)
		}
		if len(c.Columns) > 1 {
			p.w(")")
		}
		if c.Alias != nil {
			p.w(" AS ")
			p.ident(c.Alias)
		}
	}
	p.w("))")
	p.alias(n.Alias)
}

func (p *printer) sample(s *Sample) {
	if s == nil {
		return
	}
	p.w(" TABLESAMPLE (")
	if s.Unit == "" {
		p.w("BUCKET ")
		p.node(s.Bucket)
		p.w(" OUT OF ")
		p.node(s.Buckets)
	} else {
		p.node(s.Size)
		p.w(" " + s.Unit)
	}
	p.w(")")
	if s.Seed != nil {
		p.w(" REPEATABLE (")
		p.node(s.Seed)
		p.w(")")
	}
}
