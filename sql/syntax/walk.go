package syntax

// Inspect walks the tree below n in source order, calling f for each node
// (n first). When f returns false, the children of that node are skipped.
// Nil children are not visited.
func Inspect(n Node, f func(Node) bool) {
	w := walker(f)
	w.node(n)
}

type walker func(Node) bool

func (w walker) exprs(es []Expr) {
	for _, e := range es {
		w.node(e)
	}
}

func (w walker) idents(ids []*Ident) {
	for _, id := range ids {
		w.node(id)
	}
}

func (w walker) names(ns []*Name) {
	for _, n := range ns {
		w.node(n)
	}
}

func (w walker) order(items []*OrderItem) {
	for _, o := range items {
		w.node(o.Expr)
	}
}

func (w walker) alias(a *Alias) {
	if a != nil {
		w.node(a.Name)
		w.idents(a.Columns)
	}
}

func (w walker) watermark(wm *Watermark) {
	if wm != nil {
		w.node(wm.Column)
		if wm.Alias != nil {
			w.node(wm.Alias)
		}
		w.node(wm.Delay)
		w.idents(wm.Deduplicate)
	}
}

func (w walker) selection(s *ColumnSelection) {
	if s != nil {
		w.names(s.Columns)
	}
}

func (w walker) window(s *WindowSpec) {
	if s != nil {
		w.node(s)
	}
}

// node visits n; a typed nil (e.g. a nil *Query in an interface) is skipped.
func (w walker) node(n Node) {
	if n == nil || isNilNode(n) || !w(n) {
		return
	}
	switch n := n.(type) {
	case *Name:
		w.idents(n.Parts)
	case *CreateDataset:
		w.node(n.Name)
		for _, e := range n.Elements {
			w.node(e)
		}
		if n.Partitioned != nil {
			w.idents(n.Partitioned.Columns)
		}
		if n.Cluster != nil {
			w.names(n.Cluster.Columns)
		}
		if n.Properties != nil {
			for _, p := range n.Properties.Items {
				if p.Value != nil {
					w.node(p.Value)
				}
			}
		}
		if n.Using != nil {
			w.node(n.Using)
		}
		if n.RowFilter != nil {
			w.node(n.RowFilter.Func)
			w.exprs(n.RowFilter.On)
		}
		w.node(n.Query)
	case *ColumnDef:
		w.node(n.Name)
		w.node(n.Type)
		if n.References != nil {
			w.node(n.References)
		}
		if g := n.Generated; g != nil {
			w.node(g.Expr)
			w.node(g.Start)
			w.node(g.Increment)
		}
		w.node(n.Default)
		if n.Mask != nil {
			w.node(n.Mask.Func)
			w.exprs(n.Mask.Using)
		}
	case *Constraint:
		w.node(n.Name)
		w.node(n.Expr)
		w.idents(n.Columns)
		w.node(n.Timeseries)
		w.node(n.RefTable)
		w.idents(n.RefColumns)
	case *CreateFlow:
		w.node(n.Name)
		if n.DependsOn != nil {
			w.names(n.DependsOn.Flows)
		}
		w.node(n.Body)
	case *InsertInto:
		w.node(n.Target)
		w.node(n.Query)
	case *AutoCDC:
		w.node(n.Target)
		w.node(n.Source)
		if n.Keys != nil {
			w.names(n.Keys.Columns)
		}
		if n.IgnoreNulls != nil {
			w.selection(n.IgnoreNulls.On)
		}
		if n.DeleteWhen != nil {
			w.node(n.DeleteWhen.Expr)
		}
		if n.TruncateWhen != nil {
			w.node(n.TruncateWhen.Expr)
		}
		if n.SequenceBy != nil {
			w.node(n.SequenceBy.Expr)
		}
		w.selection(n.Columns)
		w.selection(n.TrackHistory)
	case *Use:
		w.node(n.Name)
	case *QueryStmt:
		w.node(n.Query)
	case *Query:
		for _, c := range n.With {
			w.node(c.Name)
			w.idents(c.Columns)
			w.node(c.Query)
		}
		w.node(n.Body)
		w.order(n.OrderBy)
		for _, e := range n.Partitioning {
			w.node(e)
		}
		w.order(n.PartitionOrder)
		w.node(n.Limit)
		w.node(n.Offset)
	case *SetOp:
		w.node(n.Left)
		w.node(n.Right)
	case *ParenQuery:
		w.node(n.Query)
	case *Values:
		for _, row := range n.Rows {
			w.exprs(row)
		}
	case *Select:
		for _, it := range n.Items {
			w.node(it.Expr)
			w.node(it.Alias)
			w.idents(it.AliasColumns)
		}
		for _, f := range n.From {
			w.node(f)
		}
		for _, lv := range n.LateralViews {
			w.node(lv.Func)
			w.node(lv.Table)
			w.idents(lv.Columns)
		}
		w.node(n.Where)
		if n.GroupBy != nil {
			w.exprs(n.GroupBy.Items)
		}
		w.node(n.Having)
		w.node(n.Qualify)
		for _, nw := range n.Windows {
			w.node(nw.Name)
			w.window(nw.Spec)
		}
	case *TableRef:
		w.node(n.Name)
		if s := n.Sample; s != nil {
			w.node(s.Size)
			w.node(s.Bucket)
			w.node(s.Buckets)
			w.node(s.Seed)
		}
		w.watermark(n.Watermark)
		w.alias(n.Alias)
	case *TableFunc:
		w.node(n.Func)
		w.watermark(n.Watermark)
		w.alias(n.Alias)
	case *SubqueryRef:
		w.node(n.Query)
		w.alias(n.Alias)
	case *ValuesRef:
		w.node(n.Values)
		w.alias(n.Alias)
	case *Join:
		w.node(n.Left)
		w.node(n.Right)
		w.node(n.On)
		w.idents(n.Using)
	case *ParenJoin:
		w.node(n.Item)
		w.alias(n.Alias)
	case *Pivot:
		w.node(n.Source)
		for _, a := range n.Aggs {
			w.node(a.Expr)
			w.node(a.Alias)
		}
		for _, c := range n.For {
			w.node(c)
		}
		for _, v := range n.In {
			for _, e := range v.Values {
				w.node(e)
			}
			w.node(v.Alias)
		}
		w.alias(n.Alias)
	case *Unpivot:
		w.node(n.Source)
		w.idents(n.Values)
		w.node(n.Name)
		for _, c := range n.In {
			for _, col := range c.Columns {
				w.node(col)
			}
			w.node(c.Alias)
		}
		w.alias(n.Alias)
	case *ColumnRef:
		w.idents(n.Parts)
	case *FieldAccess:
		w.node(n.X)
		w.node(n.Field)
	case *Subscript:
		w.node(n.X)
		w.node(n.Index)
	case *JSONPath:
		w.node(n.X)
		for _, st := range n.Steps {
			w.node(st.Index)
		}
	case *Star:
		w.idents(n.Qualifier)
		for _, c := range n.Except {
			w.node(c)
		}
	case *Unary:
		w.node(n.X)
	case *Binary:
		w.node(n.L)
		w.node(n.R)
	case *Paren:
		w.node(n.X)
	case *Tuple:
		w.exprs(n.Items)
	case *Is:
		w.node(n.X)
	case *IsDistinct:
		w.node(n.X)
		w.node(n.Y)
	case *In:
		w.node(n.X)
		w.exprs(n.List)
		w.node(n.Query)
	case *Between:
		w.node(n.X)
		w.node(n.Lo)
		w.node(n.Hi)
	case *Like:
		w.node(n.X)
		w.node(n.Pattern)
		w.exprs(n.Patterns)
		w.node(n.Escape)
	case *Case:
		w.node(n.Operand)
		for _, wh := range n.Whens {
			w.node(wh.Cond)
			w.node(wh.Result)
		}
		w.node(n.Else)
	case *Cast:
		w.node(n.X)
		w.node(n.Type)
	case *Type:
		for _, e := range n.Elems {
			w.node(e)
		}
		for _, f := range n.Fields {
			w.node(f.Name)
			w.node(f.Type)
		}
	case *FuncCall:
		w.node(n.Name)
		w.exprs(n.Args)
		w.order(n.WithinGroup)
		w.node(n.Filter)
		w.window(n.Over)
	case *NamedArg:
		w.node(n.Name)
		w.node(n.Value)
	case *Aliased:
		w.node(n.X)
		w.node(n.Alias)
	case *Lambda:
		w.idents(n.Params)
		w.node(n.Body)
	case *Subquery:
		w.node(n.Query)
	case *Exists:
		w.node(n.Query)
	case *Extract:
		w.node(n.Field)
		w.node(n.X)
	case *Trim:
		w.node(n.Chars)
		w.node(n.X)
	case *GroupingSets:
		for _, set := range n.Sets {
			w.exprs(set)
		}
	case *WindowSpec:
		w.node(n.Name)
		w.exprs(n.PartitionBy)
		w.order(n.OrderBy)
		if n.Frame != nil {
			for _, b := range []*FrameBound{n.Frame.Start, n.Frame.End} {
				if b != nil {
					w.node(b.Expr)
				}
			}
		}
	}
}

// isNilNode reports whether n is an interface holding a nil pointer.
func isNilNode(n Node) bool {
	switch n := n.(type) {
	case *Ident:
		return n == nil
	case *Name:
		return n == nil
	case *Query:
		return n == nil
	case *Type:
		return n == nil
	case *FuncCall:
		return n == nil
	case *WindowSpec:
		return n == nil
	case *Values:
		return n == nil
	}
	return false
}
