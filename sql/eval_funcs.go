package sql

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
	suggestpkg "github.com/sluicehq/sluice/internal/suggest"
	"github.com/sluicehq/sluice/sql/syntax"
)

// fnNode is a function that is NULL when any argument is NULL. body fills
// out for the rows not marked NULL in out.Nulls, looping over whole columns.
type fnNode struct {
	args  []node
	t     domain.Type
	fails bool
	body  func(out *domain.Column, args []*domain.Column) error
}

func (n *fnNode) typ() domain.Type { return n.t }
func (n *fnNode) mayFail() bool    { return n.fails || anyMayFail(n.args) }

func (n *fnNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	cols, err := evalAll(n.args, b)
	if err != nil {
		return nil, err
	}
	out := newCol(n.t.Kind, rows)
	out.Nulls = unionNulls(rows, cols...)
	for _, c := range cols {
		if c.Kind == domain.KindNull {
			out.Nulls = allNulls(rows)
		}
	}
	if err := n.body(out, cols); err != nil {
		return nil, err
	}
	zeroNulls(out)
	return out, nil
}

func (c *compiler) args(e *syntax.FuncCall) ([]node, error) {
	out := make([]node, len(e.Args))
	for i, a := range e.Args {
		n, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func wrongArgs(e *syntax.FuncCall, name, want string) error {
	return exprErr(domain.CodeWrongNumArgs, e.Pos, "%s takes %s argument(s), %d given", name, want, len(e.Args))
}

// call compiles a call of a scalar function from the registry.
func (c *compiler) call(e *syntax.FuncCall) (node, error) {
	name := strings.ToLower(e.Name.Last().Name)
	if isAggregateCall(e) {
		return nil, exprErr(domain.CodeAggregateNotAllowed, e.Pos, "the aggregate function %s cannot be used here: an expression evaluated row by row takes no aggregates", name)
	}
	if len(e.Name.Parts) > 1 || e.Over != nil || e.Filter != nil || e.Quantifier != "" || len(e.WithinGroup) > 0 {
		return nil, exprErr(domain.CodeNotImplemented, e.Pos, "this form of function call is not supported in expressions yet")
	}
	f, ok := builtins[name]
	if !ok {
		msg := "no function named `" + name + "`"
		if s := suggestpkg.Closest(name, builtinNames()); s != "" {
			msg += "; did you mean `" + s + "`?"
		}
		return nil, exprErr(domain.CodeUnresolvedRoutine, e.Name.Pos, "%s", msg)
	}
	if n := len(e.Args); n < f.minArgs || (f.maxArgs >= 0 && n > f.maxArgs) {
		return nil, wrongArgs(e, name, f.arity())
	}
	if !f.lambdas {
		for _, a := range e.Args {
			switch a.(type) {
			case *syntax.Star, *syntax.NamedArg, *syntax.Lambda, *syntax.Aliased:
				return nil, exprErr(domain.CodeDatatypeMismatch, a.Position(), "%s does not take this kind of argument", name)
			}
		}
	}
	return f.compile(c, e, name)
}

func init() {
	register(map[string]builtin{
		"coalesce":         {minArgs: 1, maxArgs: -1, compile: compileCoalesce},
		"nvl":              {minArgs: 2, maxArgs: 2, compile: compileCoalesce},
		"ifnull":           {minArgs: 2, maxArgs: 2, compile: compileCoalesce},
		"nullif":           {minArgs: 2, maxArgs: 2, compile: compileNullif},
		"if":               {minArgs: 3, maxArgs: 3, compile: compileIf},
		"iff":              {minArgs: 3, maxArgs: 3, compile: compileIf},
		"upper":            {minArgs: 1, maxArgs: 1, compile: compileCase},
		"ucase":            {minArgs: 1, maxArgs: 1, compile: compileCase},
		"lower":            {minArgs: 1, maxArgs: 1, compile: compileCase},
		"lcase":            {minArgs: 1, maxArgs: 1, compile: compileCase},
		"length":           {minArgs: 1, maxArgs: 1, compile: compileLength},
		"len":              {minArgs: 1, maxArgs: 1, compile: compileLength},
		"char_length":      {minArgs: 1, maxArgs: 1, compile: compileLength},
		"character_length": {minArgs: 1, maxArgs: 1, compile: compileLength},
		"trim":             {minArgs: 1, maxArgs: 2, compile: compileTrimFunc},
		"ltrim":            {minArgs: 1, maxArgs: 2, compile: compileTrimFunc},
		"rtrim":            {minArgs: 1, maxArgs: 2, compile: compileTrimFunc},
		"concat":           {minArgs: 0, maxArgs: -1, compile: func(c *compiler, e *syntax.FuncCall, _ string) (node, error) { return c.concat(e.Args, e.Pos) }},
		"substring":        {minArgs: 2, maxArgs: 3, compile: func(c *compiler, e *syntax.FuncCall, _ string) (node, error) { return c.substring(e) }},
		"substr":           {minArgs: 2, maxArgs: 3, compile: func(c *compiler, e *syntax.FuncCall, _ string) (node, error) { return c.substring(e) }},
		"abs":              {minArgs: 1, maxArgs: 1, compile: compileMath},
		"floor":            {minArgs: 1, maxArgs: 1, compile: compileMath},
		"ceil":             {minArgs: 1, maxArgs: 1, compile: compileMath},
		"ceiling":          {minArgs: 1, maxArgs: 1, compile: compileMath},
		"round":            {minArgs: 1, maxArgs: 2, compile: compileMath},
	})
}

func compileCoalesce(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	t, err := unify(args, argPos(e))
	if err != nil {
		return nil, err
	}
	c.zoned(args...)
	return &coalesceNode{args: args, t: t}, nil
}

func compileNullif(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	l, r, err := c.comparable(e.Args[0], e.Args[1], e.Pos)
	if err != nil {
		return nil, err
	}
	a, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	return &caseNode{conds: []node{&cmpNode{op: "=", l: l, r: r}}, results: []node{&litNode{t: a.typ()}, a}, t: a.typ()}, nil
}

func compileIf(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	cond, err := c.expectBool(args[0], e.Args[0].Position(), name)
	if err != nil {
		return nil, err
	}
	res := args[1:]
	t, err := unify(res, argPos(e)[1:])
	if err != nil {
		return nil, err
	}
	c.zoned(res...)
	return &caseNode{conds: []node{cond}, results: res, t: t}, nil
}

func compileCase(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	f := upperJava
	if name == "lower" || name == "lcase" {
		f = strings.ToLower
	}
	return c.strFunc(e, domain.TypeString, func(out, in *domain.Column, i int) { out.Strs[i] = f(in.Strs[i]) })
}

func compileLength(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	return c.strFunc(e, domain.TypeInt64, func(out, in *domain.Column, i int) {
		out.Ints[i] = int64(utf8.RuneCountInString(in.Strs[i]))
	})
}

func compileTrimFunc(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	side := map[string]string{"trim": "BOTH", "ltrim": "LEADING", "rtrim": "TRAILING"}[name]
	if len(e.Args) == 2 { // trim(trimStr, str): the characters come first
		return c.trim(&syntax.Trim{Pos: e.Pos, Side: side, Chars: e.Args[0], X: e.Args[1]})
	}
	return c.trim(&syntax.Trim{Pos: e.Pos, Side: side, X: e.Args[0]})
}

func compileMath(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	return c.mathFunc(e, name)
}

// upperJava upper-cases as Java's String.toUpperCase (Spark's upper) for the
// common special case Go maps differently: ß becomes SS. Other one-to-many
// mappings of Unicode's SpecialCasing (ŉ, ǰ, ΐ, ligatures) are not applied.
func upperJava(s string) string {
	u := strings.ToUpper(s)
	if strings.Contains(u, "ß") {
		u = strings.ReplaceAll(u, "ß", "SS")
	}
	return u
}

func argPos(e *syntax.FuncCall) []syntax.Pos {
	out := make([]syntax.Pos, len(e.Args))
	for i, a := range e.Args {
		out[i] = a.Position()
	}
	return out
}

// asString brings an argument to string the way Spark's implicit cast does.
func asString(n node, p syntax.Pos, what string) (node, error) {
	k := n.typ().Kind
	if k == domain.KindString {
		return n, nil
	}
	if k == domain.KindNull || scalarCastable(k) {
		return implicit(n, domain.TypeString, p), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, p, "%s needs a string, found %s", what, n.typ())
}

func (c *compiler) strFunc(e *syntax.FuncCall, t domain.Type, f func(out, in *domain.Column, i int)) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if x, err = asString(x, e.Args[0].Position(), e.Name.Last().Name); err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: t, body: func(out *domain.Column, a []*domain.Column) error {
		in := a[0]
		for i := range in.Strs {
			if !isNullAt(out.Nulls, i) {
				f(out, in, i)
			}
		}
		return nil
	}}, nil
}

func (c *compiler) concat(args []syntax.Expr, p syntax.Pos) (node, error) {
	ns := make([]node, len(args))
	arrays := false
	for i, a := range args {
		n, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		ns[i] = n
		arrays = arrays || n.typ().Kind == domain.KindList
	}
	if arrays {
		pos := make([]syntax.Pos, len(args))
		for i, a := range args {
			pos[i] = a.Position()
		}
		return arrayConcat(ns, pos)
	}
	for i, a := range args {
		var err error
		if ns[i], err = asString(ns[i], a.Position(), "concat"); err != nil {
			return nil, err
		}
	}
	c.zoned(ns...)
	return &fnNode{args: ns, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		var sb strings.Builder
		for i := range out.Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			sb.Reset()
			for _, c := range a {
				sb.WriteString(c.Strs[i])
			}
			out.Strs[i] = sb.String()
		}
		return nil
	}}, nil
}

// trim removes spaces (or the characters of Chars) from the ends of X.
func (c *compiler) trim(e *syntax.Trim) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if x, err = asString(x, e.X.Position(), "trim"); err != nil {
		return nil, err
	}
	args := []node{x}
	if e.Chars != nil {
		ch, err := c.compile(e.Chars)
		if err != nil {
			return nil, err
		}
		if ch, err = asString(ch, e.Chars.Position(), "trim"); err != nil {
			return nil, err
		}
		args = append(args, ch)
	}
	side := e.Side
	return &fnNode{args: args, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			cut := " "
			if len(a) > 1 {
				cut = a[1].Strs[i]
			}
			switch side {
			case "LEADING":
				s = strings.TrimLeft(s, cut)
			case "TRAILING":
				s = strings.TrimRight(s, cut)
			default:
				s = strings.Trim(s, cut)
			}
			out.Strs[i] = s
		}
		return nil
	}}, nil
}

func (c *compiler) substring(e *syntax.FuncCall) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	if args[0], err = asString(args[0], e.Args[0].Position(), "substring"); err != nil {
		return nil, err
	}
	for i := 1; i < len(args); i++ {
		k := args[i].typ().Kind
		switch {
		case k == domain.KindNull:
			args[i] = retype(args[i], domain.TypeInt64)
		case k == domain.KindString:
			args[i] = implicit(args[i], domain.TypeInt64, e.Args[i].Position())
		case k != domain.KindInt64:
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "substring needs an integer position and length, found %s", args[i].typ())
		}
	}
	return &fnNode{args: args, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			length := int64(math.MaxInt32)
			if len(a) > 2 {
				length = a[2].Ints[i]
			}
			out.Strs[i] = substringSQL(s, a[1].Ints[i], length)
		}
		return nil
	}}, nil
}

// substringSQL is Spark's UTF8String.substringSQL: 1-based pos, a negative
// pos counts from the end, 0 is 1; characters are code points.
func substringSQL(s string, pos, length int64) string {
	// Spark's positions are ints; clamping keeps the sums below from wrapping
	pos = max(min(pos, math.MaxInt32), math.MinInt32)
	length = max(min(length, math.MaxInt32), math.MinInt32)
	n := int64(utf8.RuneCountInString(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = n + pos
	}
	end := start + length
	if length > math.MaxInt32 || end > math.MaxInt32 {
		end = math.MaxInt32
	}
	if start < 0 {
		start = 0
	}
	if start >= end || start >= n {
		return ""
	}
	if end > n {
		end = n
	}
	if n == int64(len(s)) { // ASCII
		return s[start:end]
	}
	var bs, be = len(s), len(s)
	k := int64(0)
	for bi := range s {
		if k == start {
			bs = bi
		}
		if k == end {
			be = bi
			break
		}
		k++
	}
	return s[bs:be]
}

func (c *compiler) mathFunc(e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	x := args[0]
	switch k := x.typ().Kind; {
	case k == domain.KindNull:
		x = retype(x, domain.TypeFloat64)
	case k == domain.KindString:
		x = implicit(x, domain.TypeFloat64, e.Args[0].Position())
	case !isNumeric(k):
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a number, found %s", name, x.typ())
	case k == domain.KindDecimal:
		return c.decimalMath(e, name, x, args)
	}
	isInt := x.typ().Kind == domain.KindInt64
	pos := e.Pos
	switch name {
	case "abs":
		t := x.typ()
		lo, _ := t.IntRange()
		return &fnNode{args: []node{x}, t: t, fails: isInt, body: func(out *domain.Column, a []*domain.Column) error {
			if !isInt {
				for i, v := range a[0].Floats {
					out.Floats[i] = math.Abs(v)
				}
				return nil
			}
			for i, v := range a[0].Ints {
				if v == lo && !isNullAt(out.Nulls, i) {
					return exprErr(domain.CodeArithmeticOverflow, pos, "abs(%d) overflows %s", v, t)
				}
				if v < 0 {
					v = -v
				}
				out.Ints[i] = v
			}
			return nil
		}}, nil
	case "floor", "ceil", "ceiling":
		if isInt {
			return x, nil
		}
		f := math.Floor
		if name != "floor" {
			f = math.Ceil
		}
		return &fnNode{args: []node{x}, t: domain.TypeInt64, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
			for i, v := range a[0].Floats {
				if isNullAt(out.Nulls, i) {
					continue
				}
				r := f(v)
				if math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
					return exprErr(domain.CodeArithmeticOverflow, pos, "%s(%s) does not fit a bigint", name, fmtFloat(v))
				}
				out.Ints[i] = int64(r)
			}
			return nil
		}}, nil
	}
	// round
	scale := int64(0)
	if len(args) == 2 {
		sc := args[1]
		neg := false
		if ng, ok := sc.(*negNode); ok {
			sc, neg = ng.x, true
		}
		lit, ok := sc.(*litNode)
		if !ok || lit.t.Kind != domain.KindInt64 || lit.v.IsNull() {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "round needs a constant integer scale")
		}
		scale = lit.v.AsInt()
		if neg {
			scale = -scale
		}
	}
	if isInt {
		return &fnNode{args: []node{x}, t: domain.TypeInt64, fails: scale < 0, body: func(out *domain.Column, a []*domain.Column) error {
			for i, v := range a[0].Ints {
				if isNullAt(out.Nulls, i) {
					continue
				}
				r, ok := roundInt(v, scale)
				if !ok {
					return exprErr(domain.CodeArithmeticOverflow, pos, "round(%d, %d) overflows bigint", v, scale)
				}
				out.Ints[i] = r
			}
			return nil
		}}, nil
	}
	return &fnNode{args: []node{x}, t: domain.TypeFloat64, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Floats {
			out.Floats[i] = roundHalfUp(v, scale)
		}
		return nil
	}}, nil
}

// roundInt rounds v HALF_UP to 10^-scale (scale < 0 rounds to tens, ...).
func roundInt(v, scale int64) (int64, bool) { return roundInteger(v, scale, false) }

// roundInteger rounds v to a multiple of 10^-scale, half away from zero
// (round) or half to even (bround); false when the result does not fit a
// bigint.
func roundInteger(v, scale int64, halfEven bool) (int64, bool) {
	if scale >= 0 {
		return v, true
	}
	if scale < -18 {
		return 0, true
	}
	p := int64(1)
	for i := int64(0); i < -scale; i++ {
		p *= 10
	}
	q, r := v/p, v%p
	twice := 2 * r
	if r < 0 {
		twice = -twice
	}
	up := twice >= p
	if halfEven && twice == p {
		up = q%2 != 0 // an exact tie goes to the even neighbour
	}
	if up {
		if r < 0 {
			q--
		} else {
			q++
		}
	}
	res := q * p
	return res, res/p == q
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// roundHalfUp rounds f to scale decimal places, half away from zero, on the
// shortest decimal representation of f, as Spark's BigDecimal(f) does:
// round(2.675, 2) is 2.68.
func roundHalfUp(f float64, scale int64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		return f
	}
	// fast path: away from a tie, rounding the scaled binary value gives the
	// same result as rounding the decimal one; n / 10^scale with both exact
	// is the double nearest the decimal result.
	if scale >= 0 && scale <= 15 {
		p := pow10[scale]
		x := f * p
		if a := math.Abs(x); a < 1<<52 {
			fr := a - math.Floor(a)
			if math.Abs(fr-0.5) > 1e-6 {
				return math.Copysign(math.Floor(a+0.5), f) / p
			}
		}
	}
	return roundDecimal(f, scale)
}

// roundDecimal is roundHalfUp on the shortest decimal representation of f.
func roundDecimal(f float64, scale int64) float64 { return roundShortest(f, scale, false) }

// roundShortest rounds the shortest decimal representation of f (the
// digits Spark's BigDecimal(f) sees) to scale places: half up (round) or
// half to even (bround).
func roundShortest(f float64, scale int64, halfEven bool) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		return f
	}
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // d.ddde±x
	ei := strings.IndexByte(s, 'e')
	digits := strings.Replace(s[:ei], ".", "", 1)
	exp, _ := strconv.Atoi(s[ei+1:])
	// f = 0.digits × 10^(exp+1)
	keep := int64(exp) + 1 + scale
	if keep >= int64(len(digits)) {
		return f
	}
	if keep < 0 {
		return math.Copysign(0, f)
	}
	var n uint64
	for _, d := range digits[:keep] {
		n = n*10 + uint64(d-'0')
	}
	rest := digits[keep:]
	up := rest[0] >= '5'
	if halfEven && rest[0] == '5' && strings.Trim(rest[1:], "0") == "" {
		up = n%2 == 1 // an exact tie goes to the even neighbour
	}
	if up {
		n++
	}
	r, _ := strconv.ParseFloat(strconv.FormatUint(n, 10)+"e"+strconv.FormatInt(int64(exp)+1-keep, 10), 64)
	return math.Copysign(r, f)
}

// ---- LIKE ----

// likeNode is x [NOT] LIKE | ILIKE pattern [ESCAPE c]. A constant pattern is
// compiled once; others are compiled per distinct pattern.
type likeNode struct {
	x, pat node
	esc    rune
	ci     bool
	m      *likeMatcher // constant pattern
	pos    syntax.Pos
}

func (n *likeNode) typ() domain.Type { return domain.TypeBool }
func (n *likeNode) mayFail() bool    { return n.m == nil || n.x.mayFail() }

func (n *likeNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := &domain.Column{Kind: domain.KindBool, Ints: make([]int64, rows)}
	if n.m != nil {
		out.Nulls = unionNulls(rows, x)
		for i, s := range x.Strs {
			out.Ints[i] = b2i(n.m.match(s))
		}
		for i, null := range out.Nulls {
			if null {
				out.Ints[i] = 0
			}
		}
		return out, nil
	}
	p, err := n.pat.eval(b)
	if err != nil {
		return nil, err
	}
	out.Nulls = unionNulls(rows, x, p)
	if p.Kind == domain.KindNull {
		out.Nulls = allNulls(rows)
		return out, nil
	}
	cache := map[string]*likeMatcher{}
	for i, s := range x.Strs {
		if isNullAt(out.Nulls, i) {
			continue
		}
		m, ok := cache[p.Strs[i]]
		if !ok {
			if m, err = compileLike(p.Strs[i], n.esc, n.ci, n.pos); err != nil {
				return nil, err
			}
			cache[p.Strs[i]] = m
		}
		out.Ints[i] = b2i(m.match(s))
	}
	return out, nil
}

// likeMatcher matches one LIKE pattern: by prefix, suffix, substring or
// equality when the pattern allows, by a regular expression otherwise.
type likeMatcher struct {
	kind byte // '=' equal, 'p' prefix, 's' suffix, 'c' contains, 'r' regexp
	lit  string
	re   *regexp.Regexp
	ci   bool
}

func (m *likeMatcher) match(s string) bool {
	if m.ci && m.kind != 'r' {
		s = strings.ToLower(s)
	}
	switch m.kind {
	case '=':
		return s == m.lit
	case 'p':
		return strings.HasPrefix(s, m.lit)
	case 's':
		return strings.HasSuffix(s, m.lit)
	case 'c':
		return strings.Contains(s, m.lit)
	}
	return m.re.MatchString(s)
}

// compileLike translates a LIKE pattern: % any sequence, _ one character,
// esc followed by %, _ or esc the character itself; esc before anything
// else, or at the end, is INVALID_LIKE_PATTERN (as in Spark).
func compileLike(pat string, esc rune, ci bool, pos syntax.Pos) (*likeMatcher, error) {
	var re strings.Builder
	var lit strings.Builder
	re.WriteString("(?s)^")
	if ci {
		re.WriteString("(?i)")
	}
	simple := true // only literal text and % at the ends
	leading, trailing := false, false
	runes := []rune(pat)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case r == esc:
			if i+1 == len(runes) {
				return nil, exprErr(domain.CodeInvalidLikePattern, pos, "the pattern '%s' ends with the escape character", pat)
			}
			nx := runes[i+1]
			if nx != '%' && nx != '_' && nx != esc {
				return nil, exprErr(domain.CodeInvalidLikePattern, pos, "in the pattern '%s' the escape character precedes '%c', which is not %%, _ or the escape character", pat, nx)
			}
			i++
			re.WriteString(regexp.QuoteMeta(string(nx)))
			lit.WriteRune(nx)
			if trailing {
				simple = false
			}
		case r == '%':
			re.WriteString(".*")
			if i == 0 {
				leading = true
			} else if i == len(runes)-1 || trailing {
				trailing = true
			} else {
				trailing = true
			}
		case r == '_':
			re.WriteString(".")
			simple = false
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
			lit.WriteRune(r)
			if trailing {
				simple = false
			}
		}
	}
	re.WriteString("$")
	m := &likeMatcher{ci: ci, lit: lit.String()}
	if ci {
		m.lit = strings.ToLower(m.lit)
	}
	switch {
	case simple && leading && trailing:
		m.kind = 'c'
	case simple && leading:
		m.kind = 's'
	case simple && trailing:
		m.kind = 'p'
	case simple:
		m.kind = '='
	default:
		m.kind = 'r'
		m.re = regexp.MustCompile(re.String())
	}
	if m.kind != 'r' && ci {
		// lower-casing may change lengths in odd scripts; the regexp is exact
		m.kind, m.re = 'r', regexp.MustCompile(re.String())
	}
	return m, nil
}

// likeQuantified is x [NOT] LIKE ANY | SOME | ALL (p, ...): one match per
// pattern, combined with OR (ANY, SOME) or AND (ALL) in three-valued logic,
// so a NULL pattern that could decide the answer makes it NULL, as in Spark.
// NOT applies to each match: NOT LIKE ANY is true when some pattern does not
// match.
func (c *compiler) likeQuantified(e *syntax.Like) (node, error) {
	if len(e.Patterns) == 0 {
		return nil, exprErr(domain.CodeWrongNumArgs, e.Pos, "%s %s needs at least one pattern", e.Op, e.Quantifier)
	}
	var out node
	for _, p := range e.Patterns {
		one := *e
		one.Quantifier, one.Not, one.Pattern, one.Patterns = "", false, p, nil
		n, err := c.like(&one)
		if err != nil {
			return nil, err
		}
		if e.Not {
			n = &notNode{x: n}
		}
		if out == nil {
			out = n
			continue
		}
		out = &logicNode{and: strings.EqualFold(e.Quantifier, "ALL"), l: out, r: n}
	}
	return out, nil
}

func (c *compiler) like(e *syntax.Like) (node, error) {
	if e.Quantifier == "" && (e.Op == "RLIKE" || e.Op == "REGEXP") {
		return c.rlike(e)
	}
	if e.Quantifier != "" {
		return c.likeQuantified(e)
	}
	if e.Op != "LIKE" && e.Op != "ILIKE" {
		return nil, exprErr(domain.CodeNotImplemented, e.Pos, "%s is not supported", e.Op)
	}
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if x, err = asString(x, e.X.Position(), e.Op); err != nil {
		return nil, err
	}
	p, err := c.compile(e.Pattern)
	if err != nil {
		return nil, err
	}
	if p, err = asString(p, e.Pattern.Position(), e.Op); err != nil {
		return nil, err
	}
	esc := '\\'
	if e.Escape != nil {
		lit, ok := e.Escape.(*syntax.Literal)
		if !ok || lit.Kind != syntax.StringLit || utf8.RuneCountInString(lit.Value) != 1 {
			return nil, exprErr(domain.CodeInvalidLikePattern, e.Escape.Position(), "ESCAPE needs a string of one character")
		}
		esc, _ = utf8.DecodeRuneInString(lit.Value)
	}
	n := &likeNode{x: x, pat: p, esc: esc, ci: e.Op == "ILIKE", pos: e.Pos}
	if lit, ok := p.(*litNode); ok {
		if lit.v.IsNull() {
			n.pat = lit
		} else if n.m, err = compileLike(lit.v.AsString(), esc, n.ci, e.Pattern.Position()); err != nil {
			return nil, err
		}
	}
	var out node = n
	if e.Not {
		out = &notNode{x: out}
	}
	return out, nil
}
