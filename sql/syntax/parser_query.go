package syntax

// queryStart reports whether a query starts n tokens ahead: SELECT, WITH,
// VALUES, or parentheses around one.
func (p *parser) queryStart(n int) bool {
	for p.isOpAt(n, "(") {
		n++
	}
	return p.isKwAt(n, "SELECT") || p.isKwAt(n, "WITH") || p.isKwAt(n, "VALUES")
}

// query parses [WITH ...] set-expression [ORDER BY] [LIMIT] [OFFSET].
func (p *parser) query() *Query {
	q := &Query{Pos: p.pos()}
	if p.acceptKws("WITH") {
		p.acceptKws("RECURSIVE")
		for {
			c := &CTE{Pos: p.pos(), Name: p.ident("a CTE name")}
			if p.isOp("(") {
				c.Columns = p.parenIdents("a column name")
			}
			p.expectKws("AS")
			p.expectOp("(")
			c.Query = p.query()
			p.expectOp(")")
			q.With = append(q.With, c)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	q.Body = p.setExpr(1)
	if p.isKws("ORDER", "BY") {
		q.OrderByPos = p.pos()
		p.i += 2
		q.OrderBy = p.orderItems()
	}
	// CLUSTER BY, DISTRIBUTE BY and SORT BY place rows in a cluster's
	// partitions and order them within each; a pipeline's micro-batch is one
	// partition of no set order, so they are read and have no effect
	switch {
	case p.acceptKws("CLUSTER", "BY"):
		q.Partitioning = p.exprList()
	case p.acceptKws("DISTRIBUTE", "BY"):
		q.Partitioning = p.exprList()
		if p.acceptKws("SORT", "BY") {
			q.PartitionOrder = p.orderItems()
		}
	case p.acceptKws("SORT", "BY"):
		q.PartitionOrder = p.orderItems()
	}
	if p.isKw("LIMIT") {
		q.LimitPos = p.pos()
		p.next()
		if p.isKw("ALL") {
			q.Limit = &LimitAll{Pos: p.pos()}
			p.next()
		} else {
			q.Limit = p.expr()
		}
	}
	if p.isKw("OFFSET") {
		q.OffsetPos = p.next().pos
		q.Offset = p.expr()
	}
	return q
}

// setOpPrec is the precedence of the set operator that comes next, or 0:
// INTERSECT binds tighter than UNION, EXCEPT and MINUS.
func (p *parser) setOpPrec() int {
	switch {
	case p.isKw("UNION"), p.isKw("MINUS"):
		return 1
	case p.isKw("EXCEPT"):
		return 1
	case p.isKw("INTERSECT"):
		return 2
	}
	return 0
}

func (p *parser) setExpr(minPrec int) SetExpr {
	left := p.setPrimary()
	for {
		prec := p.setOpPrec()
		if prec == 0 || prec < minPrec {
			return left
		}
		t := p.next()
		op := &SetOp{Pos: t.pos, Op: t.upper, Left: left}
		if p.acceptKws("ALL") {
			op.Quantifier = "ALL"
		} else if p.acceptKws("DISTINCT") {
			op.Quantifier = "DISTINCT"
		}
		op.ByName = op.Op == "UNION" && p.acceptKws("BY", "NAME")
		op.Right = p.setExpr(prec + 1)
		left = op
	}
}

func (p *parser) setPrimary() SetExpr {
	switch {
	case p.isKw("SELECT"):
		return p.selectBlock()
	case p.isKw("VALUES"):
		return p.values()
	case p.isOp("("):
		pos := p.expectOp("(")
		q := p.query()
		p.expectOp(")")
		return &ParenQuery{Pos: pos, Query: q}
	}
	p.fail("SELECT, VALUES, WITH or (")
	return nil
}

func (p *parser) values() *Values {
	v := &Values{Pos: p.expectKws("VALUES")}
	for {
		e := p.expr()
		switch e := e.(type) {
		case *Tuple:
			v.Rows = append(v.Rows, e.Items)
		case *Paren:
			v.Rows = append(v.Rows, []Expr{e.X})
		default:
			v.Rows = append(v.Rows, []Expr{e})
		}
		if !p.acceptOp(",") {
			return v
		}
	}
}

func (p *parser) orderItems() []*OrderItem {
	var out []*OrderItem
	for {
		o := &OrderItem{Pos: p.pos(), Expr: p.expr()}
		if p.acceptKws("DESC") {
			o.Desc = true
		} else if p.acceptKws("ASC") {
			o.Asc = true
		}
		if p.acceptKws("NULLS", "FIRST") {
			o.Nulls = "FIRST"
		} else if p.acceptKws("NULLS", "LAST") {
			o.Nulls = "LAST"
		}
		out = append(out, o)
		if !p.acceptOp(",") {
			return out
		}
	}
}

// selectBlock parses SELECT ... [FROM ...] [LATERAL VIEW ...] [WHERE]
// [GROUP BY] [HAVING] then QUALIFY and WINDOW in either order.
func (p *parser) selectBlock() *Select {
	s := &Select{Pos: p.expectKws("SELECT")}
	if p.acceptKws("DISTINCT") {
		s.Quantifier = "DISTINCT"
	} else if p.isKw("ALL") && !p.isOpAt(1, ",") && !p.isKwAt(1, "FROM") && !p.atEndAt(1) {
		p.next()
		s.Quantifier = "ALL"
	}
	for {
		s.Items = append(s.Items, p.selectItem())
		if !p.acceptOp(",") {
			break
		}
	}
	if p.isKw("FROM") {
		s.FromPos = p.next().pos
		for {
			s.From = append(s.From, p.fromItem())
			if !p.acceptOp(",") {
				break
			}
		}
		for p.isKws("LATERAL", "VIEW") {
			s.LateralViews = append(s.LateralViews, p.lateralView())
		}
	}
	if p.isKw("WHERE") {
		s.WherePos = p.next().pos
		s.Where = p.expr()
	}
	if p.isKws("GROUP", "BY") {
		g := &GroupBy{Pos: p.pos()}
		p.i += 2
		if p.isKw("ALL") && (p.atEndAt(1) || !p.isOpAt(1, "(") && !p.isOpAt(1, ".")) {
			p.next()
			g.All = true
		} else {
			for {
				g.Items = append(g.Items, p.groupItem())
				if !p.acceptOp(",") {
					break
				}
			}
			if p.acceptKws("WITH", "ROLLUP") {
				g.With = "ROLLUP"
			} else if p.acceptKws("WITH", "CUBE") {
				g.With = "CUBE"
			}
		}
		s.GroupBy = g
	}
	if p.isKw("HAVING") {
		s.HavingPos = p.next().pos
		s.Having = p.expr()
	}
	for {
		switch {
		case s.Qualify == nil && p.isKw("QUALIFY"):
			s.QualifyPos = p.next().pos
			s.Qualify = p.expr()
			continue
		case s.Windows == nil && p.isKw("WINDOW") && p.isIdentAt(1) && p.isKwAt(2, "AS"):
			s.WindowPos = p.next().pos
			for {
				w := &NamedWindow{Pos: p.pos(), Name: p.ident("a window name")}
				p.expectKws("AS")
				w.Spec = p.windowSpec()
				s.Windows = append(s.Windows, w)
				if !p.acceptOp(",") {
					break
				}
			}
			continue
		}
		return s
	}
}

func (p *parser) atEndAt(n int) bool {
	t := p.peekAt(n)
	return t.kind == tEOF || (t.kind == tOp && (t.text == ";" || t.text == ")"))
}

func (p *parser) groupItem() Expr {
	if p.isKws("GROUPING", "SETS") && p.isOpAt(2, "(") {
		g := &GroupingSets{Pos: p.pos()}
		p.i += 2
		p.expectOp("(")
		for {
			if p.isOp("(") {
				p.next()
				var set []Expr
				if !p.isOp(")") {
					set = p.exprList()
				}
				p.expectOp(")")
				g.Sets = append(g.Sets, set)
			} else {
				g.Sets = append(g.Sets, []Expr{p.expr()})
			}
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
		return g
	}
	return p.expr()
}

func (p *parser) exprList() []Expr {
	var out []Expr
	for {
		out = append(out, p.expr())
		if !p.acceptOp(",") {
			return out
		}
	}
}

func (p *parser) selectItem() *SelectItem {
	it := &SelectItem{Pos: p.pos()}
	it.Expr = p.expr()
	if st, ok := it.Expr.(*Star); ok {
		p.starExcept(st)
	}
	if p.acceptKws("AS") {
		if p.isOp("(") {
			it.AliasColumns = p.parenIdents("a column alias")
		} else {
			it.Alias = p.ident("an alias")
		}
	} else if p.aliasNext() {
		it.Alias = p.ident("an alias")
	}
	return it
}

// starExcept parses the EXCEPT (cols) after a star, unless the EXCEPT is the
// set operation.
func (p *parser) starExcept(st *Star) {
	if !p.isKw("EXCEPT") || !p.isOpAt(1, "(") || p.queryStart(1) {
		return
	}
	p.i += 2
	for {
		pos := p.pos()
		c := &ColumnRef{Pos: pos}
		c.Parts = p.name("a column name").Parts
		st.Except = append(st.Except, c)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
}

func (p *parser) lateralView() *LateralView {
	lv := &LateralView{Pos: p.expectKws("LATERAL", "VIEW")}
	lv.Outer = p.acceptKws("OUTER")
	name := p.name("a generator function")
	if !p.isOp("(") {
		p.fail(`"("`)
	}
	lv.Func = p.call(name)
	lv.Table = p.ident("a table alias")
	if p.acceptKws("AS") {
		lv.Columns = p.identList("a column alias")
	} else if p.aliasNext() {
		lv.Columns = p.identList("a column alias")
	}
	return lv
}

// fromItem parses a FROM item with its joins, then a PIVOT or UNPIVOT of
// them.
func (p *parser) fromItem() FromItem {
	item := p.joins()
	for {
		switch {
		case p.isKw("PIVOT") && p.isOpAt(1, "("):
			item = p.pivot(item)
		case p.isKw("UNPIVOT") && (p.isOpAt(1, "(") || p.isKwAt(1, "INCLUDE") || p.isKwAt(1, "EXCLUDE")):
			item = p.unpivot(item)
		default:
			return item
		}
	}
}

func (p *parser) pivot(src FromItem) FromItem {
	pv := &Pivot{Pos: p.expectKws("PIVOT"), Source: src}
	p.expectOp("(")
	for {
		it := &SelectItem{Pos: p.pos(), Expr: p.expr()}
		if p.acceptKws("AS") || p.aliasNext() && !p.isKw("FOR") {
			it.Alias = p.ident("an alias")
		}
		pv.Aggs = append(pv.Aggs, it)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectKws("FOR")
	if p.acceptOp("(") {
		for {
			pv.For = append(pv.For, &ColumnRef{Pos: p.pos(), Parts: p.name("a column").Parts})
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	} else {
		pv.For = []*ColumnRef{{Pos: p.pos(), Parts: p.name("a column").Parts}}
	}
	p.expectKws("IN")
	p.expectOp("(")
	for {
		v := &PivotValue{Pos: p.pos()}
		switch e := p.expr().(type) {
		case *Tuple:
			v.Values = e.Items
		default:
			v.Values = []Expr{e}
		}
		if p.acceptKws("AS") || p.aliasNext() {
			v.Alias = p.ident("an alias")
		}
		pv.In = append(pv.In, v)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	p.expectOp(")")
	pv.Alias = p.alias()
	return pv
}

func (p *parser) unpivot(src FromItem) FromItem {
	up := &Unpivot{Pos: p.expectKws("UNPIVOT"), Source: src}
	if p.acceptKws("INCLUDE", "NULLS") {
		up.IncludeNulls = true
	} else {
		p.acceptKws("EXCLUDE", "NULLS")
	}
	p.expectOp("(")
	if p.isOp("(") {
		up.Values = p.parenIdents("a value column")
	} else {
		up.Values = []*Ident{p.ident("a value column")}
	}
	p.expectKws("FOR")
	up.Name = p.ident("a name column")
	p.expectKws("IN")
	p.expectOp("(")
	for {
		c := &UnpivotColumns{Pos: p.pos()}
		if p.acceptOp("(") {
			for {
				c.Columns = append(c.Columns, &ColumnRef{Pos: p.pos(), Parts: p.name("a column").Parts})
				if !p.acceptOp(",") {
					break
				}
			}
			p.expectOp(")")
		} else {
			c.Columns = []*ColumnRef{{Pos: p.pos(), Parts: p.name("a column").Parts}}
		}
		if p.acceptKws("AS") || p.aliasNext() {
			c.Alias = p.ident("an alias")
		}
		up.In = append(up.In, c)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	p.expectOp(")")
	up.Alias = p.alias()
	return up
}

// joins parses a FROM item with its joins.
func (p *parser) joins() FromItem {
	left := p.fromPrimary()
	for {
		pos := p.pos()
		start := p.i
		natural := p.acceptKws("NATURAL")
		kind := ""
		switch {
		case p.acceptKws("JOIN"):
			kind = "INNER"
		case p.acceptKws("INNER", "JOIN"):
			kind = "INNER"
		case p.acceptKws("CROSS", "JOIN"):
			kind = "CROSS"
		case p.acceptKws("LEFT", "OUTER", "JOIN"), p.acceptKws("LEFT", "JOIN"):
			kind = "LEFT"
		case p.acceptKws("LEFT", "SEMI", "JOIN"), p.acceptKws("SEMI", "JOIN"):
			kind = "LEFT SEMI"
		case p.acceptKws("LEFT", "ANTI", "JOIN"), p.acceptKws("ANTI", "JOIN"):
			kind = "LEFT ANTI"
		case p.acceptKws("RIGHT", "OUTER", "JOIN"), p.acceptKws("RIGHT", "JOIN"):
			kind = "RIGHT"
		case p.acceptKws("FULL", "OUTER", "JOIN"), p.acceptKws("FULL", "JOIN"):
			kind = "FULL"
		default:
			if natural {
				p.fail("JOIN")
			}
			return left
		}
		written := ""
		for k := start; k < p.i; k++ {
			if k > start {
				written += " "
			}
			written += p.toks[k].upper
		}
		j := &Join{Pos: pos, Kind: kind, Natural: natural, Written: written, Left: left}
		j.Right = p.fromPrimary()
		if !natural && kind != "CROSS" {
			if p.acceptKws("ON") {
				j.On = p.expr()
			} else if p.acceptKws("USING") {
				j.Using = p.parenIdents("a column name")
			}
		}
		left = j
	}
}

// fromPrimary parses one FROM item without joins.
func (p *parser) fromPrimary() FromItem {
	pos := p.pos()
	var item FromItem
	switch {
	case p.isOp("(") && p.queryStart(1):
		p.next()
		q := p.query()
		p.expectOp(")")
		sq := &SubqueryRef{Pos: pos, Query: q}
		sq.Alias = p.alias()
		return sq
	case p.isKw("LATERAL") && p.isOpAt(1, "(") && p.queryStart(2):
		p.i += 2
		q := p.query()
		p.expectOp(")")
		sq := &SubqueryRef{Pos: pos, Lateral: true, Query: q}
		sq.Alias = p.alias()
		return sq
	case p.isOp("("):
		p.next()
		inner := p.fromItem()
		p.expectOp(")")
		pj := &ParenJoin{Pos: pos, Item: inner}
		pj.Alias = p.alias()
		return pj
	case p.isKw("VALUES"):
		v := &ValuesRef{Pos: pos, Values: p.values()}
		v.Alias = p.alias()
		return v
	case p.isKw("STREAM") && (p.isOpAt(1, "(") || (p.isIdentAt(1) && !notAlias[p.peekAt(1).upper])):
		p.next()
		if p.acceptOp("(") {
			item = p.namedSource(pos, true)
			p.expectOp(")")
		} else {
			item = p.namedSource(pos, true)
		}
	default:
		item = p.namedSource(pos, false)
	}
	var wm **Watermark
	var al **Alias
	switch it := item.(type) {
	case *TableRef:
		it.Sample = p.tableSample()
		wm, al = &it.Watermark, &it.Alias
	case *TableFunc:
		wm, al = &it.Watermark, &it.Alias
	}
	*wm = p.watermark()
	*al = p.alias()
	if *wm == nil && *al != nil {
		*wm = p.watermark()
	}
	return item
}

// namedSource parses a table name or a table-valued function call.
func (p *parser) namedSource(pos Pos, stream bool) FromItem {
	name := p.name("a table name, a table-valued function or a subquery")
	if p.isOp("(") {
		return &TableFunc{Pos: pos, Stream: stream, Func: p.call(name)}
	}
	return &TableRef{Pos: pos, Stream: stream, Name: name}
}

// tableSample parses TABLESAMPLE (n PERCENT | n ROWS | BUCKET x OUT OF y)
// [REPEATABLE (seed)], if present.
func (p *parser) tableSample() *Sample {
	if !p.isKw("TABLESAMPLE") {
		return nil
	}
	s := &Sample{Pos: p.next().pos}
	p.expectOp("(")
	if p.acceptKws("BUCKET") {
		s.Bucket = p.expr()
		p.expectKws("OUT", "OF")
		s.Buckets = p.expr()
	} else {
		s.Size = p.expr()
		switch {
		case p.acceptKws("PERCENT"):
			s.Unit = "PERCENT"
		case p.acceptKws("ROWS"):
			s.Unit = "ROWS"
		default:
			p.fail("PERCENT or ROWS")
		}
	}
	p.expectOp(")")
	if p.acceptKws("REPEATABLE") {
		p.expectOp("(")
		s.Seed = p.expr()
		p.expectOp(")")
	}
	return s
}

// watermark parses WATERMARK col [AS alias] DELAY OF interval [DEDUPLICATE
// ON (col, ...)], if present.
func (p *parser) watermark() *Watermark {
	if !p.isKw("WATERMARK") || p.atEndAt(1) || p.isOpAt(1, ",") {
		return nil
	}
	w := &Watermark{Pos: p.pos()}
	p.next()
	w.Column = p.expr()
	if p.acceptKws("AS") {
		w.Alias = p.ident("an alias")
	}
	p.expectKws("DELAY", "OF")
	w.Delay = p.expr()
	if pos := p.pos(); p.acceptKws("DEDUPLICATE", "ON") {
		w.DedupPos, w.Deduplicate = pos, p.parenIdents("a column")
	}
	return w
}

// alias parses [AS] name [(cols)], if present.
func (p *parser) alias() *Alias {
	pos := p.pos()
	if p.acceptKws("AS") {
		a := &Alias{Pos: pos, Name: p.ident("an alias")}
		if p.isOp("(") {
			a.Columns = p.parenIdents("a column alias")
		}
		return a
	}
	if p.aliasNext() {
		a := &Alias{Pos: pos, Name: p.ident("an alias")}
		if p.isOp("(") && p.isIdentAt(1) {
			a.Columns = p.parenIdents("a column alias")
		}
		return a
	}
	return nil
}
