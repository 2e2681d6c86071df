package syntax

// The syntax tree. Every node records the position of its first token in the
// original file. The tree keeps every clause as written (including the older
// spellings of statements, and parentheses), so it can be printed back as
// canonical SQL by String (one line) or Format (one clause a line); parsing
// that rendering gives the same tree, apart from positions.

// Node is any node of the tree.
type Node interface {
	Position() Pos
	String() string
}

// File is a parsed .sql file or notebook export.
type File struct {
	Name       string
	Statements []Statement
	Notes      []Note
}

// Statement is a top-level statement: *CreateDataset, *CreateFlow,
// *AutoCDC (an APPLY CHANGES outside a CREATE FLOW), *Set, *Use or *QueryStmt.
type Statement interface {
	Node
	stmt()
}

// Ident is an identifier. Quoted is true when it was written in backticks.
type Ident struct {
	Pos    Pos
	Name   string
	Quoted bool
}

// Name is a possibly qualified name: t, LIVE.t, schema.t, catalog.schema.t.
type Name struct {
	Pos   Pos
	Parts []*Ident
}

// Last is the last part of the name (the object itself).
func (n *Name) Last() *Ident { return n.Parts[len(n.Parts)-1] }

// ---- statements ----

// DatasetKind is what a CREATE declares.
type DatasetKind int

const (
	StreamingTable DatasetKind = iota + 1
	MaterializedView
	View // a temporary view of the pipeline
	Sink // an external destination flows write to
)

func (k DatasetKind) String() string {
	switch k {
	case StreamingTable:
		return "streaming table"
	case MaterializedView:
		return "materialized view"
	case View:
		return "view"
	case Sink:
		return "sink"
	}
	return "unknown"
}

// CreateDataset is CREATE ... STREAMING TABLE | MATERIALIZED VIEW | VIEW, in
// the current syntax or the older LIVE forms. The flags keep the spelling;
// Kind says what it declares.
type CreateDataset struct {
	Pos         Pos
	OrRefresh   bool
	OrReplace   bool
	Private     bool
	Temporary   bool
	Incremental bool // CREATE INCREMENTAL LIVE TABLE
	Streaming   bool // STREAMING TABLE, STREAMING LIVE TABLE, STREAMING LIVE VIEW
	Live        bool // the older LIVE spelling
	Object      string
	// Object is TABLE, VIEW, MATERIALIZED VIEW or SINK as written.
	IfNotExists bool
	Name        *Name
	Elements    []TableElement // the parenthesised list: columns and constraints, in order
	Comment     *StringClause
	Partitioned *ColumnsClause
	Cluster     *ClusterBy
	Properties  *Properties
	Location    *StringClause
	Using       *Ident
	Options     *Properties // OPTIONS (key 'value', ...): a sink's
	RowFilter   *RowFilter
	Query       *Query // nil: a streaming table that flows fill
}

// RowFilter is WITH ROW FILTER func ON (columns or literals).
type RowFilter struct {
	Pos  Pos
	Func *Name
	On   []Expr
}

// Mask is a column's MASK func [USING COLUMNS (columns or literals)].
type Mask struct {
	Pos   Pos
	Func  *Name
	Using []Expr
}

// Kind is what the statement declares, whichever spelling was used.
func (c *CreateDataset) Kind() DatasetKind {
	switch {
	case c.Object == "VIEW":
		return View
	case c.Object == "SINK":
		return Sink
	case c.Streaming || c.Incremental:
		return StreamingTable
	default:
		return MaterializedView
	}
}

// StringClause is a clause with a string: COMMENT '...', LOCATION '...'.
type StringClause struct {
	Pos   Pos
	Value string
}

// ColumnsClause is a clause with a list of columns: PARTITIONED BY (a, b).
type ColumnsClause struct {
	Pos     Pos
	Columns []*Ident
}

// ClusterBy is CLUSTER BY (cols), CLUSTER BY AUTO or CLUSTER BY NONE.
type ClusterBy struct {
	Pos     Pos
	Auto    bool
	None    bool
	Columns []*Name
}

// Properties is TBLPROPERTIES (key = value, ...).
type Properties struct {
	Pos   Pos
	Items []*Property
}

// Property is one key = value; the key is a dotted name or a string, the
// value a literal.
type Property struct {
	Pos   Pos
	Key   string
	Value Expr // nil when only the key is given
}

// TableElement is a *ColumnDef or a *Constraint of a column list.
type TableElement interface {
	Node
	element()
}

// ColumnDef declares a column: name [type] [NOT NULL] [GENERATED ...]
// [DEFAULT expr] [PRIMARY KEY] [COMMENT '...'].
type ColumnDef struct {
	Pos        Pos
	Name       *Ident
	Type       *Type // nil when only the name is given
	NotNull    bool
	Generated  *Generated
	Default    Expr
	PrimaryKey bool
	// References is a column's [CONSTRAINT name] FOREIGN KEY REFERENCES
	// table [(column)]: information only, as a table's keys are
	References *Constraint
	Comment    *StringClause
	Mask       *Mask
}

// Generated is GENERATED ALWAYS AS (expr) or GENERATED {ALWAYS | BY DEFAULT}
// AS IDENTITY [(START WITH n INCREMENT BY m)].
type Generated struct {
	Pos       Pos
	ByDefault bool
	Expr      Expr // nil for an identity
	Identity  bool
	Start     Expr
	Increment Expr
}

// ConstraintKind is the kind of a table constraint.
type ConstraintKind int

const (
	Expect ConstraintKind = iota + 1
	PrimaryKey
	ForeignKey
	Check
)

// Constraint is CONSTRAINT name EXPECT (expr) [ON VIOLATION ...], a PRIMARY
// KEY, a FOREIGN KEY ... REFERENCES, or a CHECK. Keys are information only.
type Constraint struct {
	Pos         Pos
	Name        *Ident // nil when unnamed
	Kind        ConstraintKind
	Expr        Expr   // EXPECT and CHECK
	OnViolation string // "", "DROP ROW" or "FAIL UPDATE"
	Columns     []*Ident
	Timeseries  *Ident // PRIMARY KEY (..., col TIMESERIES)
	RefTable    *Name
	RefColumns  []*Ident
	Options     []string // RELY, NOT ENFORCED, ... in upper case, as written
}

// CreateFlow is CREATE FLOW name [COMMENT] [DEPENDS ON (...)] AS body.
type CreateFlow struct {
	Pos       Pos
	Name      *Name
	Comment   *StringClause
	DependsOn *DependsOn
	Body      FlowBody
}

// DependsOn is DEPENDS ON (flow, ...).
type DependsOn struct {
	Pos   Pos
	Flows []*Name
}

// FlowBody is *InsertInto or *AutoCDC.
type FlowBody interface {
	Node
	flowBody()
}

// InsertInto is INSERT INTO [ONCE] target [BY NAME] query.
type InsertInto struct {
	Pos    Pos
	Once   bool
	Target *Name
	ByName bool
	Query  *Query
}

// AutoCDC is AUTO CDC [ONCE] INTO target FROM [SNAPSHOT] source ..., or the
// older APPLY CHANGES INTO target FROM source ... (Legacy).
type AutoCDC struct {
	Pos          Pos
	Legacy       bool
	Once         bool
	Target       *Name
	Snapshot     bool
	Source       FromItem
	Keys         *KeysClause
	IgnoreNulls  *IgnoreNullUpdates
	DeleteWhen   *WhenClause
	TruncateWhen *WhenClause
	SequenceBy   *ExprClause
	Columns      *ColumnSelection
	StoredAs     *StoredAs
	TrackHistory *ColumnSelection
}

// KeysClause is KEYS (col, ...).
type KeysClause struct {
	Pos     Pos
	Columns []*Name
}

// IgnoreNullUpdates is IGNORE NULL UPDATES [ON columns].
type IgnoreNullUpdates struct {
	Pos Pos
	On  *ColumnSelection
}

// WhenClause is APPLY AS DELETE WHEN expr or APPLY AS TRUNCATE WHEN expr.
type WhenClause struct {
	Pos  Pos
	Expr Expr
}

// ExprClause is SEQUENCE BY expr.
type ExprClause struct {
	Pos  Pos
	Expr Expr
}

// ColumnSelection is a list of columns or * EXCEPT (columns).
type ColumnSelection struct {
	Pos     Pos
	Star    bool
	Columns []*Name // the list, or the EXCEPT list when Star
}

// StoredAs is STORED AS SCD TYPE 1 | 2.
type StoredAs struct {
	Pos     Pos
	SCDType int
}

// Set is SET key = value, SET key (show it) or SET (show all).
type Set struct {
	Pos    Pos
	Key    string // raw text, "" for SET alone
	Value  string // raw text, or the decoded string when Quoted
	HasVal bool
	Quoted bool
}

// Use is USE CATALOG x, USE SCHEMA x (or DATABASE) or USE x.
type Use struct {
	Pos  Pos
	Kind string // "CATALOG", "SCHEMA", "DATABASE" or ""
	Name *Name
}

// QueryStmt is a query standing alone.
type QueryStmt struct {
	Pos   Pos
	Query *Query
}

// ---- queries ----

// Query is [WITH ...] body [ORDER BY ...] [LIMIT n] [OFFSET n].
type Query struct {
	Pos     Pos
	With    []*CTE
	Body    SetExpr
	OrderBy []*OrderItem
	Limit   Expr // nil, or *LimitAll
	Offset  Expr
	// positions of the ORDER BY, LIMIT and OFFSET keywords
	OrderByPos, LimitPos, OffsetPos Pos
	// Partitioning and PartitionOrder are CLUSTER BY or DISTRIBUTE BY and
	// SORT BY, which place rows in partitions of a cluster: read, and of no
	// effect on one node.
	Partitioning   []Expr
	PartitionOrder []*OrderItem
}

// LimitAll is LIMIT ALL.
type LimitAll struct{ Pos Pos }

// CTE is name [(cols)] AS (query).
type CTE struct {
	Pos     Pos
	Name    *Ident
	Columns []*Ident
	Query   *Query
}

// SetExpr is *Select, *SetOp, *ParenQuery or *Values.
type SetExpr interface {
	Node
	setExpr()
}

// SetOp is left UNION | INTERSECT | EXCEPT [ALL | DISTINCT] right.
type SetOp struct {
	Pos         Pos
	Op          string // UNION, INTERSECT, EXCEPT or MINUS
	Quantifier  string // "", ALL or DISTINCT
	ByName      bool   // UNION BY NAME: columns matched by name, not position
	Left, Right SetExpr
}

// ParenQuery is a query in parentheses in a set operation.
type ParenQuery struct {
	Pos   Pos
	Query *Query
}

// Values is VALUES (row), (row) ...
type Values struct {
	Pos  Pos
	Rows [][]Expr
}

// Select is one SELECT block.
type Select struct {
	Pos          Pos
	Quantifier   string // "", DISTINCT or ALL
	Items        []*SelectItem
	From         []FromItem // comma-separated items
	LateralViews []*LateralView
	Where        Expr
	GroupBy      *GroupBy
	Having       Expr
	Qualify      Expr
	Windows      []*NamedWindow
	// positions of the FROM, WHERE, HAVING, QUALIFY and WINDOW keywords
	FromPos, WherePos, HavingPos, QualifyPos, WindowPos Pos
}

// SelectItem is expr [AS] alias, or expr AS (a, b) for generators. A star
// is a *Star expression.
type SelectItem struct {
	Pos          Pos
	Expr         Expr
	Alias        *Ident
	AliasColumns []*Ident
}

// GroupBy is GROUP BY ALL, or items (expressions, ordinals, ROLLUP(...),
// CUBE(...), GROUPING SETS (...)).
type GroupBy struct {
	Pos   Pos
	All   bool
	Items []Expr
	With  string // WITH ROLLUP | WITH CUBE
}

// GroupingSets is GROUPING SETS ((a, b), (a), ()).
type GroupingSets struct {
	Pos  Pos
	Sets [][]Expr
}

// NamedWindow is name AS (spec) of a WINDOW clause.
type NamedWindow struct {
	Pos  Pos
	Name *Ident
	Spec *WindowSpec
}

// LateralView is LATERAL VIEW [OUTER] generator(args) table [AS] col, ...
type LateralView struct {
	Pos     Pos
	Outer   bool
	Func    *FuncCall
	Table   *Ident
	Columns []*Ident
}

// OrderItem is expr [ASC | DESC] [NULLS FIRST | LAST].
type OrderItem struct {
	Pos   Pos
	Expr  Expr
	Desc  bool
	Asc   bool // written explicitly
	Nulls string
}

// FromItem is *TableRef, *TableFunc, *SubqueryRef, *ValuesRef, *Join,
// *ParenJoin, *Pivot or *Unpivot.
type FromItem interface {
	Node
	fromItem()
}

// Alias is [AS] name [(col, ...)].
type Alias struct {
	Pos     Pos
	Name    *Ident
	Columns []*Ident
}

// Watermark is WATERMARK col [AS alias] DELAY OF interval [DEDUPLICATE ON
// (col, ...)].
//
// DEDUPLICATE ON (col, ...) after it keeps the first row of each identity
// while the watermark has not passed its event time plus the delay (Spark's
// dropDuplicatesWithinWatermark); DedupPos is where it starts.
type Watermark struct {
	Pos         Pos
	Column      Expr
	Alias       *Ident
	Delay       Expr
	Deduplicate []*Ident
	DedupPos    Pos
}

// TableRef reads a table or view: name, LIVE.name, STREAM(name), STREAM name.
type TableRef struct {
	Pos       Pos
	Stream    bool
	Name      *Name
	Sample    *Sample
	Watermark *Watermark
	Alias     *Alias
}

// Sample is TABLESAMPLE (Size PERCENT | Size ROWS | BUCKET Bucket OUT OF
// Buckets) [REPEATABLE (Seed)].
type Sample struct {
	Pos             Pos
	Size            Expr
	Unit            string // PERCENT or ROWS; "" for BUCKET
	Bucket, Buckets Expr
	Seed            Expr
}

// TableFunc is a table-valued function: read_files(...), cloud_files(...),
// range(n), STREAM read_files(...), ...
type TableFunc struct {
	Pos       Pos
	Stream    bool
	Func      *FuncCall
	Watermark *Watermark
	Alias     *Alias
}

// SubqueryRef is [LATERAL] (query) [alias].
type SubqueryRef struct {
	Pos     Pos
	Lateral bool
	Query   *Query
	Alias   *Alias
}

// ValuesRef is VALUES ... used as a FROM item.
type ValuesRef struct {
	Pos    Pos
	Values *Values
	Alias  *Alias
}

// Join is left [NATURAL] kind JOIN right [ON expr | USING (cols)].
type Join struct {
	Pos     Pos
	Kind    string // INNER, LEFT, RIGHT, FULL, CROSS, LEFT SEMI, LEFT ANTI
	Natural bool
	Written string // the join keywords as written, e.g. "LEFT OUTER JOIN"
	Left    FromItem
	Right   FromItem
	On      Expr
	Using   []*Ident
}

// Pivot is source PIVOT (agg [AS a], ... FOR col IN (value [AS a], ...))
// [alias], or FOR (c1, c2) IN ((v1, v2) [AS a], ...): one column of each
// aggregate for each value, grouped by the source's other columns.
type Pivot struct {
	Pos    Pos
	Source FromItem
	Aggs   []*SelectItem
	For    []*ColumnRef
	In     []*PivotValue
	Alias  *Alias
}

// PivotValue is one value (or tuple, for several FOR columns) of a PIVOT.
type PivotValue struct {
	Pos    Pos
	Values []Expr
	Alias  *Ident
}

// Unpivot is source UNPIVOT [INCLUDE | EXCLUDE NULLS] (value FOR name IN
// (col [AS a], ...)) [alias], or ((v1, v2) FOR name IN ((c1, c2) [AS a],
// ...)): a row for each column (set) of each source row.
type Unpivot struct {
	Pos          Pos
	Source       FromItem
	IncludeNulls bool
	Values       []*Ident
	Name         *Ident
	In           []*UnpivotColumns
	Alias        *Alias
}

// UnpivotColumns is one column (or set) of an UNPIVOT and its name.
type UnpivotColumns struct {
	Pos     Pos
	Columns []*ColumnRef
	Alias   *Ident
}

// ParenJoin is a FROM item in parentheses: (a JOIN b).
type ParenJoin struct {
	Pos   Pos
	Item  FromItem
	Alias *Alias
}

// ---- expressions ----

// Expr is an expression.
type Expr interface {
	Node
	expr()
}

// LiteralKind is the kind of a literal.
type LiteralKind int

const (
	NumberLit LiteralKind = iota + 1
	StringLit
	BoolLit
	NullLit
)

// Literal is a number (Text with Suffix: 1L, 1.5D, 2BD), a string (Value,
// adjacent strings already joined), TRUE/FALSE or NULL.
type Literal struct {
	Pos    Pos
	Kind   LiteralKind
	Text   string // number digits, or TRUE / FALSE
	Suffix string // L, S, Y, D, F, BD
	Value  string // string value
}

// TypedLiteral is DATE '...', TIMESTAMP '...', TIMESTAMP_NTZ '...',
// TIMESTAMP_LTZ '...' or X'...'.
type TypedLiteral struct {
	Pos   Pos
	Type  string
	Value string
}

// Interval is INTERVAL '...' [unit [TO unit]] or INTERVAL n unit [n unit ...].
type Interval struct {
	Pos   Pos
	Parts []*IntervalPart
}

// IntervalPart is one value with its unit.
type IntervalPart struct {
	Value  string // number text or string value
	Sign   string // "" or "-" or "+"
	Quoted bool
	Unit   string // upper case as written (MINUTES, DAY, ...), "" if none
	ToUnit string
}

// ColumnRef is a column or a struct field path: a, t.a, t.a.b.
type ColumnRef struct {
	Pos   Pos
	Parts []*Ident
}

// FieldAccess is expr.field where expr is not a plain name.
type FieldAccess struct {
	Pos   Pos
	X     Expr
	Field *Ident
}

// Subscript is expr[index] (arrays and maps).
type Subscript struct {
	Pos   Pos
	X     Expr
	Index Expr
}

// JSONPath is expr:path, Databricks' JSON path on a string.
type JSONPath struct {
	Pos   Pos
	X     Expr
	Steps []*JSONStep
}

// JSONStep is .field, ['key'], [n] or [*].
type JSONStep struct {
	Field    string
	Bracket  bool // ['key'] rather than .key
	Quoted   bool // `field`
	Index    Expr // [n]
	Wildcard bool // [*]
}

// Star is *, t.*, * EXCEPT (cols).
type Star struct {
	Pos       Pos
	Qualifier []*Ident
	Except    []*ColumnRef
}

// Unary is -x, +x, ~x or NOT x.
type Unary struct {
	Pos Pos
	Op  string
	X   Expr
}

// Binary is x op y: OR AND = == <=> != <> < <= > >= | ^ & + - || * / % DIV.
type Binary struct {
	Pos  Pos
	Op   string
	L, R Expr
}

// Paren is (x), kept as written.
type Paren struct {
	Pos Pos
	X   Expr
}

// Tuple is (a, b, ...).
type Tuple struct {
	Pos   Pos
	Items []Expr
}

// Is is x IS [NOT] NULL | TRUE | FALSE | UNKNOWN.
type Is struct {
	Pos  Pos
	X    Expr
	Not  bool
	What string
}

// IsDistinct is x IS [NOT] DISTINCT FROM y.
type IsDistinct struct {
	Pos  Pos
	X, Y Expr
	Not  bool
}

// In is x [NOT] IN (list) or x [NOT] IN (query).
type In struct {
	Pos   Pos
	X     Expr
	Not   bool
	List  []Expr
	Query *Query
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	Pos       Pos
	X, Lo, Hi Expr
	Not       bool
}

// Like is x [NOT] LIKE | ILIKE | RLIKE | REGEXP pattern [ESCAPE c], or
// x [NOT] LIKE ANY | ALL | SOME (patterns).
type Like struct {
	Pos        Pos
	X          Expr
	Not        bool
	Op         string
	Quantifier string
	Pattern    Expr   // without a quantifier
	Patterns   []Expr // with one
	Escape     Expr
}

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Pos     Pos
	Operand Expr
	Whens   []*When
	Else    Expr
}

// When is one WHEN cond THEN result.
type When struct {
	Pos          Pos
	Cond, Result Expr
}

// Cast is CAST(x AS type), TRY_CAST(x AS type) or x::type (Colons).
type Cast struct {
	Pos    Pos
	X      Expr
	Type   *Type
	Try    bool
	Colons bool
}

// Type is a data type: INT, DECIMAL(10, 2), ARRAY<T>, MAP<K, V>,
// STRUCT<a: T, ...>, INTERVAL DAY TO SECOND.
type Type struct {
	Pos    Pos
	Name   string // upper case
	Params []string
	Elems  []*Type // ARRAY: one; MAP: two
	Fields []*StructField
}

// StructField is one field of a STRUCT type.
type StructField struct {
	Pos     Pos
	Name    *Ident
	Type    *Type
	NotNull bool
	Comment *StringClause
}

// FuncCall is a function call, with the Spark extras around it.
type FuncCall struct {
	Pos         Pos
	Name        *Name
	Quantifier  string // DISTINCT or ALL inside the parentheses
	Args        []Expr // *Star for count(*), *NamedArg, *Lambda, *Aliased
	WithinGroup []*OrderItem
	Filter      Expr
	Nulls       string // IGNORE NULLS | RESPECT NULLS after the call
	Over        *WindowSpec
}

// NamedArg is name => value.
type NamedArg struct {
	Pos   Pos
	Name  *Ident
	Value Expr
}

// Aliased is expr AS name inside a call: struct(a AS x).
type Aliased struct {
	Pos   Pos
	X     Expr
	Alias *Ident
}

// Lambda is x -> body or (x, y) -> body.
type Lambda struct {
	Pos    Pos
	Params []*Ident
	Parens bool
	Body   Expr
}

// Subquery is a scalar subquery (query).
type Subquery struct {
	Pos   Pos
	Query *Query
}

// Exists is EXISTS (query).
type Exists struct {
	Pos   Pos
	Query *Query
}

// Extract is EXTRACT(field FROM x).
type Extract struct {
	Pos   Pos
	Field *Ident
	X     Expr
}

// Trim is TRIM([BOTH | LEADING | TRAILING] [chars] FROM x).
type Trim struct {
	Pos   Pos
	Side  string
	Chars Expr
	X     Expr
}

// WindowSpec is OVER name or OVER ([base] [PARTITION BY ...] [ORDER BY ...]
// [frame]).
type WindowSpec struct {
	Pos         Pos
	Name        *Ident // OVER name, or the base window inside the parentheses
	Parens      bool
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame
}

// Frame is ROWS | RANGE [BETWEEN start AND end | start].
type Frame struct {
	Pos   Pos
	Unit  string
	Start *FrameBound
	End   *FrameBound // nil without BETWEEN
}

// FrameBound is UNBOUNDED PRECEDING | FOLLOWING, CURRENT ROW, or expr
// PRECEDING | FOLLOWING.
type FrameBound struct {
	Pos  Pos
	Kind string // UNBOUNDED PRECEDING, UNBOUNDED FOLLOWING, CURRENT ROW, PRECEDING, FOLLOWING
	Expr Expr
}

// positions
func (n *Ident) Position() Pos         { return n.Pos }
func (n *Name) Position() Pos          { return n.Pos }
func (n *CreateDataset) Position() Pos { return n.Pos }
func (n *ColumnDef) Position() Pos     { return n.Pos }
func (n *Constraint) Position() Pos    { return n.Pos }
func (n *CreateFlow) Position() Pos    { return n.Pos }
func (n *InsertInto) Position() Pos    { return n.Pos }
func (n *AutoCDC) Position() Pos       { return n.Pos }
func (n *Set) Position() Pos           { return n.Pos }
func (n *Use) Position() Pos           { return n.Pos }
func (n *QueryStmt) Position() Pos     { return n.Pos }
func (n *Query) Position() Pos         { return n.Pos }
func (n *SetOp) Position() Pos         { return n.Pos }
func (n *ParenQuery) Position() Pos    { return n.Pos }
func (n *Values) Position() Pos        { return n.Pos }
func (n *Select) Position() Pos        { return n.Pos }
func (n *TableRef) Position() Pos      { return n.Pos }
func (n *TableFunc) Position() Pos     { return n.Pos }
func (n *SubqueryRef) Position() Pos   { return n.Pos }
func (n *ValuesRef) Position() Pos     { return n.Pos }
func (n *Join) Position() Pos          { return n.Pos }
func (n *ParenJoin) Position() Pos     { return n.Pos }
func (n *Pivot) Position() Pos         { return n.Pos }
func (n *Unpivot) Position() Pos       { return n.Pos }
func (n *Literal) Position() Pos       { return n.Pos }
func (n *TypedLiteral) Position() Pos  { return n.Pos }
func (n *Interval) Position() Pos      { return n.Pos }
func (n *ColumnRef) Position() Pos     { return n.Pos }
func (n *FieldAccess) Position() Pos   { return n.Pos }
func (n *Subscript) Position() Pos     { return n.Pos }
func (n *JSONPath) Position() Pos      { return n.Pos }
func (n *Star) Position() Pos          { return n.Pos }
func (n *Unary) Position() Pos         { return n.Pos }
func (n *Binary) Position() Pos        { return n.Pos }
func (n *Paren) Position() Pos         { return n.Pos }
func (n *Tuple) Position() Pos         { return n.Pos }
func (n *Is) Position() Pos            { return n.Pos }
func (n *IsDistinct) Position() Pos    { return n.Pos }
func (n *In) Position() Pos            { return n.Pos }
func (n *Between) Position() Pos       { return n.Pos }
func (n *Like) Position() Pos          { return n.Pos }
func (n *Case) Position() Pos          { return n.Pos }
func (n *Cast) Position() Pos          { return n.Pos }
func (n *Type) Position() Pos          { return n.Pos }
func (n *FuncCall) Position() Pos      { return n.Pos }
func (n *NamedArg) Position() Pos      { return n.Pos }
func (n *Aliased) Position() Pos       { return n.Pos }
func (n *Lambda) Position() Pos        { return n.Pos }
func (n *Subquery) Position() Pos      { return n.Pos }
func (n *Exists) Position() Pos        { return n.Pos }
func (n *Extract) Position() Pos       { return n.Pos }
func (n *Trim) Position() Pos          { return n.Pos }
func (n *LimitAll) Position() Pos      { return n.Pos }
func (n *GroupingSets) Position() Pos  { return n.Pos }

func (*CreateDataset) stmt() {}
func (*CreateFlow) stmt()    {}
func (*AutoCDC) stmt()       {}
func (*Set) stmt()           {}
func (*Use) stmt()           {}
func (*QueryStmt) stmt()     {}

func (*ColumnDef) element()  {}
func (*Constraint) element() {}

func (*InsertInto) flowBody() {}
func (*AutoCDC) flowBody()    {}

func (*Select) setExpr()     {}
func (*SetOp) setExpr()      {}
func (*ParenQuery) setExpr() {}
func (*Values) setExpr()     {}

func (*TableRef) fromItem()    {}
func (*TableFunc) fromItem()   {}
func (*SubqueryRef) fromItem() {}
func (*ValuesRef) fromItem()   {}
func (*Join) fromItem()        {}
func (*ParenJoin) fromItem()   {}
func (*Pivot) fromItem()       {}
func (*Unpivot) fromItem()     {}

func (*Literal) expr()      {}
func (*TypedLiteral) expr() {}
func (*Interval) expr()     {}
func (*ColumnRef) expr()    {}
func (*FieldAccess) expr()  {}
func (*Subscript) expr()    {}
func (*JSONPath) expr()     {}
func (*Star) expr()         {}
func (*Unary) expr()        {}
func (*Binary) expr()       {}
func (*Paren) expr()        {}
func (*Tuple) expr()        {}
func (*Is) expr()           {}
func (*IsDistinct) expr()   {}
func (*In) expr()           {}
func (*Between) expr()      {}
func (*Like) expr()         {}
func (*Case) expr()         {}
func (*Cast) expr()         {}
func (*FuncCall) expr()     {}
func (*NamedArg) expr()     {}
func (*Aliased) expr()      {}
func (*Lambda) expr()       {}
func (*Subquery) expr()     {}
func (*Exists) expr()       {}
func (*Extract) expr()      {}
func (*Trim) expr()         {}
func (*LimitAll) expr()     {}
func (*GroupingSets) expr() {}
