package syntax

import (
	"strings"
)

func (p *parser) statement() Statement {
	switch {
	case p.isKw("CREATE"):
		return p.create()
	case p.isKws("APPLY", "CHANGES"):
		return p.autoCDC()
	case p.isKws("AUTO", "CDC"):
		return p.autoCDC()
	case p.isKw("SET"):
		return p.set()
	case p.isKw("USE"):
		return p.use()
	case p.queryStart(0):
		pos := p.pos()
		return &QueryStmt{Pos: pos, Query: p.query()}
	}
	p.fail("CREATE, APPLY CHANGES, SET, USE or a query")
	return nil
}

func (p *parser) create() Statement {
	c := &CreateDataset{Pos: p.expectKws("CREATE")}
	if p.acceptKws("OR", "REFRESH") {
		c.OrRefresh = true
	} else if p.acceptKws("OR", "REPLACE") {
		c.OrReplace = true
	} else if p.isKw("OR") {
		p.next()
		p.fail("REFRESH or REPLACE")
	}
	if p.isKw("FLOW") {
		if c.OrRefresh || c.OrReplace {
			p.fail("STREAMING TABLE, MATERIALIZED VIEW or VIEW")
		}
		return p.flow(c.Pos)
	}
	c.Private = p.acceptKws("PRIVATE")
	c.Temporary = p.acceptKws("TEMPORARY") || p.acceptKws("TEMP")
	const what = "STREAMING TABLE, MATERIALIZED VIEW, VIEW, SINK, FLOW or a LIVE form"
	switch {
	case p.acceptKws("STREAMING", "LIVE", "TABLE"):
		c.Streaming, c.Live, c.Object = true, true, "TABLE"
	case p.acceptKws("STREAMING", "LIVE", "VIEW"):
		c.Streaming, c.Live, c.Object = true, true, "VIEW"
	case p.acceptKws("STREAMING", "TABLE"):
		c.Streaming, c.Object = true, "TABLE"
	case p.acceptKws("INCREMENTAL", "LIVE", "TABLE"):
		c.Incremental, c.Live, c.Object = true, true, "TABLE"
	case p.acceptKws("LIVE", "TABLE"):
		c.Live, c.Object = true, "TABLE"
	case p.acceptKws("LIVE", "VIEW"):
		c.Live, c.Object = true, "VIEW"
	case p.acceptKws("MATERIALIZED", "VIEW"):
		c.Object = "MATERIALIZED VIEW"
	case c.OrRefresh && p.acceptKws("TABLE"):
		// CREATE OR REFRESH TABLE, the LIVE TABLE of Databricks' examples
		// without LIVE: a materialized view
		c.Object = "TABLE"
	case p.acceptKws("VIEW"):
		c.Object = "VIEW"
	case p.acceptKws("SINK"):
		c.Object = "SINK"
	default:
		p.failClause(datasetForms, what)
	}
	if c.Kind() == Sink && (c.OrRefresh || c.Private || c.Temporary) {
		p.failAt(c.Pos, "a sink is declared with CREATE [OR REPLACE] SINK name USING format OPTIONS (...)")
	}
	if c.Kind() == View && c.OrRefresh {
		p.failAt(c.Pos, "a view is declared with CREATE [OR REPLACE] [TEMPORARY] VIEW, not OR REFRESH")
	}
	c.IfNotExists = p.acceptKws("IF", "NOT", "EXISTS")
	c.Name = p.name("a dataset name")
	if p.isOp("(") {
		p.next()
		for {
			c.Elements = append(c.Elements, p.tableElement())
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	}
	view := c.Kind() == View
	if c.Kind() == Sink {
		return p.sinkClauses(c)
	}
	for {
		pos := p.pos()
		dup := func(seen bool, clause string) {
			if seen {
				p.failAt(pos, "the "+clause+" clause is given twice")
			}
		}
		switch {
		case p.isKw("COMMENT"):
			dup(c.Comment != nil, "COMMENT")
			p.next()
			c.Comment = p.stringLit("a string")
			c.Comment.Pos = pos
			continue
		case p.isKw("TBLPROPERTIES"):
			dup(c.Properties != nil, "TBLPROPERTIES")
			c.Properties = p.properties()
			continue
		case !view && p.isKws("PARTITIONED", "BY"):
			dup(c.Partitioned != nil, "PARTITIONED BY")
			p.i += 2
			c.Partitioned = &ColumnsClause{Pos: pos, Columns: p.parenIdents("a column name")}
			continue
		case !view && p.isKws("CLUSTER", "BY"):
			dup(c.Cluster != nil, "CLUSTER BY")
			p.i += 2
			c.Cluster = &ClusterBy{Pos: pos}
			switch {
			case p.acceptKws("AUTO"):
				c.Cluster.Auto = true
			case p.acceptKws("NONE"):
				c.Cluster.None = true
			default:
				p.expectOp("(")
				c.Cluster.Columns = p.nameList("a column name")
				p.expectOp(")")
			}
			continue
		case !view && p.isKw("LOCATION"):
			dup(c.Location != nil, "LOCATION")
			p.next()
			c.Location = p.stringLit("a string")
			c.Location.Pos = pos
			continue
		case !view && p.isKws("WITH", "ROW", "FILTER"):
			dup(c.RowFilter != nil, "WITH ROW FILTER")
			p.i += 3
			c.RowFilter = &RowFilter{Pos: pos, Func: p.name("a function name")}
			p.expectKws("ON")
			p.expectOp("(")
			if !p.isOp(")") {
				c.RowFilter.On = p.exprList()
			}
			p.expectOp(")")
			continue
		case !view && p.isKw("USING"):
			dup(c.Using != nil, "USING")
			p.next()
			c.Using = p.ident("a format name")
			continue
		}
		break
	}
	if p.acceptKws("AS") {
		c.Query = p.query()
		return c
	}
	if c.Kind() == StreamingTable && p.atEnd() {
		return c // a target for flows
	}
	if view {
		p.fail("AS, COMMENT or TBLPROPERTIES")
	}
	p.fail("AS, COMMENT, PARTITIONED BY, CLUSTER BY, TBLPROPERTIES, LOCATION, USING or WITH ROW FILTER")
	return nil
}

func (p *parser) properties() *Properties {
	return p.propertyList("TBLPROPERTIES")
}

// sinkClauses parses what follows CREATE SINK name: USING format (which
// is required), OPTIONS (...) and COMMENT, in any order.
func (p *parser) sinkClauses(c *CreateDataset) *CreateDataset {
	for {
		pos := p.pos()
		dup := func(seen bool, clause string) {
			if seen {
				p.failAt(pos, "the "+clause+" clause is given twice")
			}
		}
		switch {
		case p.isKw("USING"):
			dup(c.Using != nil, "USING")
			p.next()
			c.Using = p.ident("a format name")
		case p.isKw("OPTIONS"):
			dup(c.Options != nil, "OPTIONS")
			c.Options = p.propertyList("OPTIONS")
		case p.isKw("COMMENT"):
			dup(c.Comment != nil, "COMMENT")
			p.next()
			c.Comment = p.stringLit("a string")
			c.Comment.Pos = pos
		case p.isKw("AS"):
			p.fail("the end of the statement: a sink has no query; its flows write to it (CREATE FLOW f AS INSERT INTO sink BY NAME SELECT ...)")
		case c.Using == nil:
			p.fail("USING and the sink's format, as in USING parquet")
		default:
			return c
		}
	}
}

// propertyList parses kw (key [=] value, ...): keys dotted names or strings,
// values literals (TBLPROPERTIES, OPTIONS).
func (p *parser) propertyList(kw string) *Properties {
	props := &Properties{Pos: p.expectKws(kw)}
	p.expectOp("(")
	for {
		prop := &Property{Pos: p.pos()}
		if p.peek().kind == tString {
			prop.Key = p.next().text // one literal: the value may follow without =
		} else {
			var parts []string
			for _, id := range p.name("a property key").Parts {
				parts = append(parts, id.Name)
			}
			prop.Key = strings.Join(parts, ".")
		}
		if p.acceptOp("=") || kw == "OPTIONS" && !p.isOp(",") && !p.isOp(")") {
			prop.Value = p.primary()
		}
		props.Items = append(props.Items, prop)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return props
}

// tableElement parses a column definition or a constraint of a column list.
func (p *parser) tableElement() TableElement {
	pos := p.pos()
	if p.isKw("CONSTRAINT") && p.isIdentAt(1) {
		p.next()
		name := p.ident("a constraint name")
		c := p.constraintBody(pos)
		c.Name = name
		return c
	}
	if (p.isKws("PRIMARY", "KEY") || p.isKws("FOREIGN", "KEY")) && p.isOpAt(2, "(") {
		return p.constraintBody(pos)
	}
	col := &ColumnDef{Pos: pos, Name: p.ident("a column name or CONSTRAINT")}
	if p.isIdentAt(0) && !p.isColumnOption() {
		col.Type = p.dataType()
	}
	for {
		opt := p.pos()
		switch {
		case p.acceptKws("NOT", "NULL"):
			col.NotNull = true
		case p.isKw("COMMENT"):
			p.next()
			col.Comment = p.stringLit("a string")
			col.Comment.Pos = opt
		case p.acceptKws("PRIMARY", "KEY"):
			col.PrimaryKey = true
		case p.isKw("CONSTRAINT") && p.isIdentAt(1):
			// a named key of this column
			p.next()
			name := p.ident("a constraint name")
			if p.acceptKws("PRIMARY", "KEY") {
				col.PrimaryKey = true
				p.constraintOptions(&Constraint{})
				continue
			}
			col.References = p.columnReference(opt)
			col.References.Name = name
		case p.isKws("FOREIGN", "KEY"), p.isKw("REFERENCES"):
			col.References = p.columnReference(opt)
		case p.isKw("MASK"):
			p.next()
			col.Mask = &Mask{Pos: opt, Func: p.name("a function name")}
			if p.acceptKws("USING", "COLUMNS") {
				p.expectOp("(")
				col.Mask.Using = p.exprList()
				p.expectOp(")")
			}
		case p.acceptKws("DEFAULT"):
			col.Default = p.expr()
		case p.isKw("GENERATED"):
			p.next()
			g := &Generated{Pos: opt}
			if p.acceptKws("BY", "DEFAULT") {
				g.ByDefault = true
			} else {
				p.expectKws("ALWAYS")
			}
			p.expectKws("AS")
			if p.acceptKws("IDENTITY") {
				g.Identity = true
				if p.acceptOp("(") {
					if p.acceptKws("START", "WITH") {
						g.Start = p.signedNumber()
					}
					if p.acceptKws("INCREMENT", "BY") {
						g.Increment = p.signedNumber()
					}
					p.expectOp(")")
				}
			} else {
				if g.ByDefault {
					p.fail("IDENTITY")
				}
				p.expectOp("(")
				g.Expr = p.expr()
				p.expectOp(")")
			}
			col.Generated = g
		default:
			return col
		}
	}
}

func (p *parser) signedNumber() Expr {
	pos := p.pos()
	if p.acceptOp("-") {
		return &Unary{Pos: pos, Op: "-", X: p.number()}
	}
	return p.number()
}

func (p *parser) number() Expr {
	t := p.peek()
	if t.kind != tNumber {
		p.fail("a number")
	}
	p.next()
	return &Literal{Pos: t.pos, Kind: NumberLit, Text: t.text, Suffix: t.suffix}
}

func (p *parser) isColumnOption() bool {
	for _, kw := range []string{"NOT", "COMMENT", "GENERATED", "PRIMARY", "DEFAULT", "MASK", "CONSTRAINT", "FOREIGN", "REFERENCES"} {
		if p.isKw(kw) {
			return true
		}
	}
	return false
}

// constraintBody parses what follows CONSTRAINT name.
func (p *parser) constraintBody(pos Pos) *Constraint {
	c := &Constraint{Pos: pos}
	switch {
	case p.acceptKws("EXPECT"), p.acceptKws("CHECK"):
		c.Kind = Expect
		if p.toks[p.i-1].upper == "CHECK" {
			c.Kind = Check
		}
		p.expectOp("(")
		c.Expr = p.expr()
		p.expectOp(")")
		if c.Kind == Expect && p.acceptKws("ON", "VIOLATION") {
			switch {
			case p.acceptKws("DROP", "ROW"):
				c.OnViolation = "DROP ROW"
			case p.acceptKws("FAIL", "UPDATE"):
				c.OnViolation = "FAIL UPDATE"
			default:
				p.fail("DROP ROW or FAIL UPDATE")
			}
		}
	case p.acceptKws("PRIMARY", "KEY"):
		c.Kind = PrimaryKey
		p.expectOp("(")
		for {
			id := p.ident("a column name")
			if p.acceptKws("TIMESERIES") {
				if c.Timeseries != nil {
					p.failAt(id.Pos, "only one column can be TIMESERIES")
				}
				c.Timeseries = id
			} else {
				c.Columns = append(c.Columns, id)
			}
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	case p.acceptKws("FOREIGN", "KEY"):
		c.Kind = ForeignKey
		c.Columns = p.parenIdents("a column name")
		p.expectKws("REFERENCES")
		c.RefTable = p.name("a table name")
		if p.isOp("(") {
			c.RefColumns = p.parenIdents("a column name")
		}
	default:
		p.fail("EXPECT, PRIMARY KEY, FOREIGN KEY or CHECK")
	}
	if c.Kind != Expect && c.Kind != Check {
		p.constraintOptions(c)
	}
	return c
}

// columnReference parses a column's [FOREIGN KEY] REFERENCES table
// [(column)] and its options.
func (p *parser) columnReference(pos Pos) *Constraint {
	c := &Constraint{Pos: pos, Kind: ForeignKey}
	p.acceptKws("FOREIGN", "KEY")
	p.expectKws("REFERENCES")
	c.RefTable = p.name("a table name")
	if p.isOp("(") {
		c.RefColumns = p.parenIdents("a column name")
	}
	p.constraintOptions(c)
	return c
}

// constraintOptions parses a key's informational options: RELY, NOT
// ENFORCED, MATCH FULL, ON DELETE NO ACTION, ...
func (p *parser) constraintOptions(c *Constraint) {
	for p.peek().kind == tIdent {
		switch p.peek().upper {
		case "RELY", "NORELY", "ENFORCED", "DEFERRABLE", "INITIALLY", "DEFERRED", "IMMEDIATE",
			"MATCH", "FULL", "ON", "DELETE", "UPDATE", "NO", "ACTION", "VALIDATE", "NOVALIDATE":
			c.Options = append(c.Options, p.next().upper)
		case "NOT":
			if !p.isKws("NOT", "ENFORCED") { // NOT NULL is the column's
				return
			}
			c.Options = append(c.Options, p.next().upper)
		default:
			return
		}
	}
}

// flow parses CREATE FLOW name [COMMENT] [DEPENDS ON (...)] AS body.
func (p *parser) flow(pos Pos) *CreateFlow {
	p.expectKws("FLOW")
	f := &CreateFlow{Pos: pos, Name: p.name("a flow name")}
	for {
		cpos := p.pos()
		if p.isKw("COMMENT") {
			if f.Comment != nil {
				p.failAt(cpos, "the COMMENT clause is given twice")
			}
			p.next()
			f.Comment = p.stringLit("a string")
			f.Comment.Pos = cpos
			continue
		}
		if p.acceptKws("DEPENDS", "ON") {
			if f.DependsOn != nil {
				p.failAt(cpos, "the DEPENDS ON clause is given twice")
			}
			d := &DependsOn{Pos: cpos}
			if p.acceptOp("(") {
				d.Flows = p.nameList("a flow name")
				p.expectOp(")")
			} else {
				d.Flows = []*Name{p.name("a flow name")}
			}
			f.DependsOn = d
			continue
		}
		break
	}
	if !p.isKw("AS") {
		p.fail("AS, COMMENT or DEPENDS ON")
	}
	p.next()
	switch {
	case p.isKws("INSERT", "INTO"):
		ins := &InsertInto{Pos: p.pos()}
		p.i += 2
		ins.Once = p.acceptKws("ONCE")
		ins.Target = p.name("a target table name")
		ins.ByName = p.acceptKws("BY", "NAME")
		if !p.queryStart(0) {
			p.fail("BY NAME or a query")
		}
		ins.Query = p.query()
		f.Body = ins
	case p.isKws("AUTO", "CDC"), p.isKws("APPLY", "CHANGES"):
		f.Body = p.autoCDC()
	default:
		p.fail("INSERT INTO, AUTO CDC or APPLY CHANGES")
	}
	return f
}

// autoCDC parses AUTO CDC [ONCE] INTO ... or APPLY CHANGES INTO ...; after
// KEYS the clauses may come in any order, each at most once.
func (p *parser) autoCDC() *AutoCDC {
	a := &AutoCDC{Pos: p.pos()}
	if p.acceptKws("APPLY", "CHANGES") {
		a.Legacy = true
	} else {
		p.expectKws("AUTO", "CDC")
		a.Once = p.acceptKws("ONCE")
	}
	p.expectKws("INTO")
	a.Target = p.name("a target table name")
	p.expectKws("FROM")
	if !a.Legacy && p.isKw("SNAPSHOT") && (p.isIdentAt(1) || p.isOpAt(1, "(")) {
		p.next()
		a.Snapshot = true
	}
	a.Source = p.fromPrimary()
	{
		kpos := p.expectKws("KEYS")
		p.expectOp("(")
		a.Keys = &KeysClause{Pos: kpos, Columns: p.nameList("a key column")}
		p.expectOp(")")
	}
	for {
		pos := p.pos()
		dup := func(seen bool, clause string) {
			if seen {
				p.failAt(pos, "the "+clause+" clause is given twice")
			}
		}
		switch {
		case p.acceptKws("IGNORE", "NULL", "UPDATES"):
			dup(a.IgnoreNulls != nil, "IGNORE NULL UPDATES")
			a.IgnoreNulls = &IgnoreNullUpdates{Pos: pos}
			if p.acceptKws("ON") {
				a.IgnoreNulls.On = p.columnSelection()
			}
		case p.acceptKws("APPLY", "AS", "DELETE", "WHEN"):
			dup(a.DeleteWhen != nil, "APPLY AS DELETE WHEN")
			a.DeleteWhen = &WhenClause{Pos: pos, Expr: p.expr()}
		case p.acceptKws("APPLY", "AS", "TRUNCATE", "WHEN"):
			dup(a.TruncateWhen != nil, "APPLY AS TRUNCATE WHEN")
			a.TruncateWhen = &WhenClause{Pos: pos, Expr: p.expr()}
		case p.acceptKws("SEQUENCE", "BY"):
			dup(a.SequenceBy != nil, "SEQUENCE BY")
			a.SequenceBy = &ExprClause{Pos: pos, Expr: p.expr()}
		case p.acceptKws("COLUMNS"):
			dup(a.Columns != nil, "COLUMNS")
			a.Columns = p.columnSelection()
		case p.acceptKws("STORED", "AS", "SCD", "TYPE"):
			dup(a.StoredAs != nil, "STORED AS")
			t := p.peek()
			if t.kind != tNumber || (t.text != "1" && t.text != "2") || t.suffix != "" {
				p.fail("1 or 2")
			}
			p.next()
			a.StoredAs = &StoredAs{Pos: pos, SCDType: int(t.text[0] - '0')}
		case p.acceptKws("TRACK", "HISTORY", "ON"):
			dup(a.TrackHistory != nil, "TRACK HISTORY ON")
			a.TrackHistory = p.columnSelection()
		default:
			if p.atEnd() {
				if a.SequenceBy == nil && !a.Snapshot {
					p.fail("SEQUENCE BY (it is required)")
				}
				return a
			}
			p.failClause(cdcClauses, "")
		}
	}
}

var datasetForms = [][]string{
	{"STREAMING", "LIVE", "TABLE"}, {"STREAMING", "LIVE", "VIEW"}, {"STREAMING", "TABLE"},
	{"INCREMENTAL", "LIVE", "TABLE"}, {"LIVE", "TABLE"}, {"LIVE", "VIEW"}, {"MATERIALIZED", "VIEW"},
	{"VIEW"}, {"SINK"}, {"FLOW"},
}

var cdcClauses = [][]string{
	{"IGNORE", "NULL", "UPDATES"}, {"APPLY", "AS", "DELETE", "WHEN"}, {"APPLY", "AS", "TRUNCATE", "WHEN"},
	{"SEQUENCE", "BY"}, {"COLUMNS"}, {"STORED", "AS", "SCD", "TYPE"}, {"TRACK", "HISTORY", "ON"},
}

// failClause reports that none of the clauses comes next. When the clause
// starts well but goes wrong (TRACK HISTROY), the error points at the
// word that goes wrong and names what should stand there. summary, if not
// empty, replaces the list of all clauses when none starts here.
func (p *parser) failClause(clauses [][]string, summary string) {
	best := 0
	var next []string
	for _, c := range clauses {
		n := 0
		for n < len(c) && p.isKwAt(n, c[n]) {
			n++
		}
		if n == 0 || n == len(c) {
			continue
		}
		if n > best {
			best, next = n, nil
		}
		if n == best && (len(next) == 0 || next[len(next)-1] != c[n]) {
			next = append(next, c[n])
		}
	}
	if best == 0 && summary != "" {
		p.fail(summary)
	}
	if best == 0 {
		var all []string
		for _, c := range clauses {
			all = append(all, strings.Join(c, " "))
		}
		p.fail(strings.Join(all[:len(all)-1], ", ") + " or " + all[len(all)-1])
	}
	p.i += best
	p.fail(strings.Join(next, " or "))
}

// columnSelection parses (a, b), a, b, or * EXCEPT (a, b).
func (p *parser) columnSelection() *ColumnSelection {
	s := &ColumnSelection{Pos: p.pos()}
	switch {
	case p.acceptOp("*"):
		s.Star = true
		p.expectKws("EXCEPT")
		p.expectOp("(")
		s.Columns = p.nameList("a column name")
		p.expectOp(")")
	case p.acceptOp("("):
		s.Columns = p.nameList("a column name")
		p.expectOp(")")
	default:
		s.Columns = p.nameList("a column name, a parenthesised list or * EXCEPT (...)")
	}
	return s
}

// set parses SET, SET key, SET key = value. Key and value are taken as raw
// text, as Spark does; a value that is one string literal is decoded.
func (p *parser) set() *Set {
	s := &Set{Pos: p.expectKws("SET")}
	if p.atEnd() {
		return s
	}
	start := p.peek().off
	end := start
	for !p.atEnd() && !p.isOp("=") {
		end = p.next().end
	}
	s.Key = strings.TrimSpace(p.text[start:end])
	if s.Key == "" {
		p.fail("a configuration key")
	}
	if !p.acceptOp("=") {
		return s
	}
	s.HasVal = true
	if p.peek().kind == tString && (p.peekAt(1).kind == tEOF || p.isOpAt(1, ";")) {
		s.Value, s.Quoted = p.next().text, true
		return s
	}
	start = p.peek().off
	end = start
	for !p.atEnd() {
		end = p.next().end
	}
	s.Value = strings.TrimSpace(p.text[start:end])
	return s
}

// use parses USE CATALOG x, USE SCHEMA x, USE DATABASE x or USE x.
func (p *parser) use() *Use {
	u := &Use{Pos: p.expectKws("USE")}
	for _, kw := range []string{"CATALOG", "SCHEMA", "DATABASE", "NAMESPACE"} {
		if p.isKw(kw) && p.isIdentAt(1) {
			p.next()
			u.Kind = kw
			break
		}
	}
	u.Name = p.name("a catalog or schema name")
	return u
}
