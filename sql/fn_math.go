package sql

import (
	"cmp"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"nvl2":         {minArgs: 3, maxArgs: 3, compile: compileNvl2},
		"greatest":     {minArgs: 2, maxArgs: -1, compile: compileGreatestLeast},
		"least":        {minArgs: 2, maxArgs: -1, compile: compileGreatestLeast},
		"nullifzero":   {minArgs: 1, maxArgs: 1, compile: compileNullifzero},
		"zeroifnull":   {minArgs: 1, maxArgs: 1, compile: compileZeroifnull},
		"try_add":      {minArgs: 2, maxArgs: 2, compile: compileTryArith},
		"try_subtract": {minArgs: 2, maxArgs: 2, compile: compileTryArith},
		"try_multiply": {minArgs: 2, maxArgs: 2, compile: compileTryArith},
		"try_divide":   {minArgs: 2, maxArgs: 2, compile: compileTryArith},
		"try_mod":      {minArgs: 2, maxArgs: 2, compile: compileTryArith},
		"mod":          {minArgs: 2, maxArgs: 2, compile: compileMod},
		"pmod":         {minArgs: 2, maxArgs: 2, compile: compilePmod},
		"pow":          {minArgs: 2, maxArgs: 2, compile: compileFloat2},
		"power":        {minArgs: 2, maxArgs: 2, compile: compileFloat2},
		"atan2":        {minArgs: 2, maxArgs: 2, compile: compileFloat2},
		"hypot":        {minArgs: 2, maxArgs: 2, compile: compileFloat2},
		"log":          {minArgs: 1, maxArgs: 2, compile: compileLog},
		"bround":       {minArgs: 1, maxArgs: 2, compile: compileBround},
		"rand":         {minArgs: 0, maxArgs: 1, compile: compileRand},
		"randn":        {minArgs: 0, maxArgs: 1, compile: compileRand},
		"random":       {minArgs: 0, maxArgs: 1, compile: compileRand},
		"e":            {minArgs: 0, maxArgs: 0, compile: compileConst},
		"pi":           {minArgs: 0, maxArgs: 0, compile: compileConst},
	})
	unary := map[string]builtin{}
	for name := range float1Funcs {
		unary[name] = builtin{minArgs: 1, maxArgs: 1, compile: compileFloat1}
	}
	register(unary)
}

// setNull marks row i of out NULL, making the marks when there are none.
func setNull(out *domain.Column, i int) {
	if out.Nulls == nil {
		out.Nulls = make([]bool, out.Len())
	}
	out.Nulls[i] = true
}

// numArg compiles argument i as a number: a string is cast to double (Spark's
// implicit cast), a NULL becomes a NULL of type t.
func (c *compiler) numArg(e *syntax.FuncCall, i int, name string, t domain.Type) (node, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	switch k := x.typ().Kind; {
	case k == domain.KindNull:
		return retype(x, t), nil
	case k == domain.KindString:
		return implicit(x, domain.TypeFloat64, e.Args[i].Position()), nil
	case !isNumeric(k):
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs a number, found %s", name, x.typ())
	case k == domain.KindDecimal:
		// the functions that keep decimals exact take them before this
		return implicit(x, domain.TypeFloat64, e.Args[i].Position()), nil
	}
	return x, nil
}

// doubleArg is numArg brought to double.
func (c *compiler) doubleArg(e *syntax.FuncCall, i int, name string) (node, error) {
	x, err := c.numArg(e, i, name, domain.TypeFloat64)
	if err != nil {
		return nil, err
	}
	return implicit(x, domain.TypeFloat64, e.Args[i].Position()), nil
}

// ---- conditional ----

// compileNvl2: nvl2(x, a, b) is a when x is not NULL, else b.
func compileNvl2(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	res := args[1:]
	t, err := unify(res, argPos(e)[1:])
	if err != nil {
		return nil, err
	}
	return &caseNode{conds: []node{&notNode{x: &isNullNode{x: args[0]}}}, results: res, t: t}, nil
}

// extremeNode is greatest / least: the largest (smallest) argument that is
// not NULL, NULL when all are. NaN is larger than every other double.
type extremeNode struct {
	args     []node
	t        domain.Type
	greatest bool
}

func compileGreatestLeast(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	t, err := unify(args, argPos(e))
	if err != nil {
		return nil, err
	}
	return &extremeNode{args: args, t: t, greatest: name == "greatest"}, nil
}

func (n *extremeNode) typ() domain.Type { return n.t }
func (n *extremeNode) mayFail() bool    { return anyMayFail(n.args) }

func (n *extremeNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	out := newCol(n.t.Kind, rows)
	out.Nulls = allNulls(rows)
	want := -1
	if n.greatest {
		want = 1
	}
	for _, a := range n.args {
		c, err := a.eval(b)
		if err != nil {
			return nil, err
		}
		if c.Kind == domain.KindNull {
			continue
		}
		switch c.Kind {
		case domain.KindBool, domain.KindInt64, domain.KindDate, domain.KindTimestamp:
			for i, v := range c.Ints {
				if !isNullAt(c.Nulls, i) && (out.Nulls[i] || cmp.Compare(v, out.Ints[i]) == want) {
					out.Ints[i], out.Nulls[i] = v, false
				}
			}
		case domain.KindFloat64:
			for i, v := range c.Floats {
				if !isNullAt(c.Nulls, i) && (out.Nulls[i] || cmpFloat(v, out.Floats[i]) == want) {
					out.Floats[i], out.Nulls[i] = v, false
				}
			}
		case domain.KindString, domain.KindBytes:
			for i, v := range c.Strs {
				if !isNullAt(c.Nulls, i) && (out.Nulls[i] || strings.Compare(v, out.Strs[i]) == want) {
					out.Strs[i], out.Nulls[i] = v, false
				}
			}
		default:
			for i := range c.Values {
				if c.IsNull(i) {
					continue
				}
				if v := c.Values[i]; out.Nulls[i] || domain.Compare(v, out.Values[i]) == want {
					out.Values[i], out.Nulls[i] = v, false
				}
			}
		}
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// compileNullifzero: nullifzero(x) is NULL when x is 0, else x.
func compileNullifzero(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.numArg(e, 0, name, domain.TypeInt64)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: x.typ(), body: func(out *domain.Column, a []*domain.Column) error {
		if out.Kind == domain.KindFloat64 {
			for i, v := range a[0].Floats {
				if out.Floats[i] = v; v == 0 {
					setNull(out, i)
				}
			}
			return nil
		}
		for i, v := range a[0].Ints {
			if out.Ints[i] = v; v == 0 {
				setNull(out, i)
			}
		}
		return nil
	}}, nil
}

// compileZeroifnull: zeroifnull(x) is 0 when x is NULL, else x.
func compileZeroifnull(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.numArg(e, 0, name, domain.TypeInt64)
	if err != nil {
		return nil, err
	}
	zero := &litNode{t: x.typ(), v: domain.Int(0)}
	if x.typ().Kind == domain.KindFloat64 {
		zero.v = domain.Float(0)
	}
	return &coalesceNode{args: []node{x, zero}, t: x.typ()}, nil
}

// ---- arithmetic functions ----

var tryOps = map[string]string{"try_add": "+", "try_subtract": "-", "try_multiply": "*", "try_divide": "/", "try_mod": "%"}

// compileTryArith: the try_ forms of + - * / % type as the operators do and
// give NULL where the operator fails with an overflow or a division by zero.
// Datetime and interval arithmetic (a date plus days or an interval, an
// interval times a number) is NULL where the operator's result overflows.
func compileTryArith(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	op := tryOps[name]
	n, err := c.arith(&syntax.Binary{Pos: e.Pos, Op: op, L: e.Args[0], R: e.Args[1]})
	if err != nil {
		return nil, err
	}
	var a *arithNode
	switch n := n.(type) {
	case *arithNode:
		a = n
	case *decArithNode:
		t := *n
		t.try = true
		return &t, nil
	case *intBinNode:
		t := *n
		t.try = true
		return &t, nil
	case dayOnly:
		if ib, ok := n.node.(*intBinNode); ok {
			t := *ib
			t.try = true
			return dayOnly{&t}, nil
		}
	}
	if a == nil {
		return nil, exprErr(domain.CodeNotImplemented, e.Pos, "%s of these argument types is not supported yet", name)
	}
	return &fnNode{args: []node{a.l, a.r}, t: a.t, body: func(out *domain.Column, cols []*domain.Column) error {
		l, r := cols[0], cols[1]
		if out.Kind == domain.KindFloat64 {
			for i, x := range l.Floats {
				y := r.Floats[i]
				switch op {
				case "+":
					out.Floats[i] = x + y
				case "-":
					out.Floats[i] = x - y
				case "*":
					out.Floats[i] = x * y
				default:
					if y == 0 {
						setNull(out, i)
					} else if op == "/" {
						out.Floats[i] = x / y
					} else {
						out.Floats[i] = math.Mod(x, y)
					}
				}
			}
			return nil
		}
		for i, x := range l.Ints {
			y := r.Ints[i]
			switch {
			case op == "%" && y == 0, overflowsType(op, x, y, a.t):
				setNull(out, i)
			case op == "+":
				out.Ints[i] = x + y
			case op == "-":
				out.Ints[i] = x - y
			case op == "*":
				out.Ints[i] = x * y
			case y == -1: // MinInt64 % -1 would trap
				out.Ints[i] = 0
			default:
				out.Ints[i] = x % y
			}
		}
		return nil
	}}, nil
}

// compileMod: mod(a, b) is a % b: mod(2, 1.8) is the decimal 0.2.
func compileMod(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	return c.arith(&syntax.Binary{Pos: e.Pos, Op: "%", L: e.Args[0], R: e.Args[1]})
}

// compilePmod: pmod(a, b) is the remainder of a / b made non-negative for a
// positive b: pmod(-10, 3) is 2. A zero divisor is DIVIDE_BY_ZERO (ANSI).
func compilePmod(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	n, err := c.arith(&syntax.Binary{Pos: e.Pos, Op: "%", L: e.Args[0], R: e.Args[1]})
	if err != nil {
		return nil, err
	}
	if d, ok := n.(*decArithNode); ok {
		return decimalPmod(d), nil
	}
	a := n.(*arithNode)
	pos := e.Pos
	return &fnNode{args: []node{a.l, a.r}, t: a.t, fails: true, body: func(out *domain.Column, cols []*domain.Column) error {
		l, r := cols[0], cols[1]
		if out.Kind == domain.KindFloat64 {
			for i, x := range l.Floats {
				if isNullAt(out.Nulls, i) {
					continue
				}
				y := r.Floats[i]
				if y == 0 {
					return exprErr(domain.CodeDivideByZero, pos, "pmod(%s, %s): division by zero", fmtFloat(x), fmtFloat(y))
				}
				m := math.Mod(x, y)
				if m < 0 {
					m = math.Mod(m+y, y)
				}
				out.Floats[i] = m
			}
			return nil
		}
		for i, x := range l.Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			y := r.Ints[i]
			switch y {
			case 0:
				return exprErr(domain.CodeDivideByZero, pos, "pmod(%d, 0): division by zero", x)
			case -1:
				out.Ints[i] = 0
				continue
			}
			m := x % y
			if m < 0 {
				// m+y cannot overflow: |m| < |y|
				m = (m + y) % y
			}
			out.Ints[i] = m
		}
		return nil
	}}, nil
}

// logNull: Spark's logarithms are NULL, not NaN or -Infinity, for an
// argument at or below their asymptote.
func logNull(f func(float64) float64, below float64) func(float64) (float64, bool) {
	return func(x float64) (float64, bool) {
		if x <= below {
			return 0, false
		}
		return f(x), true
	}
}

func always(f func(float64) float64) func(float64) (float64, bool) {
	return func(x float64) (float64, bool) { return f(x), true }
}

// float1Funcs are the functions of one double giving a double; false means
// NULL.
var float1Funcs = map[string]func(float64) (float64, bool){
	"sqrt":    always(math.Sqrt), // sqrt(-1) is NaN, as in Spark
	"cbrt":    always(math.Cbrt),
	"exp":     always(math.Exp),
	"expm1":   always(math.Expm1),
	"ln":      logNull(math.Log, 0),
	"log10":   logNull(math.Log10, 0),
	"log2":    logNull(math.Log2, 0),
	"log1p":   logNull(math.Log1p, -1),
	"sin":     always(math.Sin),
	"cos":     always(math.Cos),
	"tan":     always(math.Tan),
	"asin":    always(math.Asin),
	"acos":    always(math.Acos),
	"atan":    always(math.Atan),
	"sinh":    always(math.Sinh),
	"cosh":    always(math.Cosh),
	"tanh":    always(math.Tanh),
	"degrees": always(func(x float64) float64 { return x * (180 / math.Pi) }),
	"radians": always(func(x float64) float64 { return x * (math.Pi / 180) }),
	"rint":    always(math.RoundToEven),
	"cot":     always(func(x float64) float64 { return 1 / math.Tan(x) }),
	"sec":     always(func(x float64) float64 { return 1 / math.Cos(x) }),
	"csc":     always(func(x float64) float64 { return 1 / math.Sin(x) }),
	// the inverse hyperbolic functions by Spark's formulas, so that the
	// last digits agree
	"acosh": always(func(x float64) float64 { return math.Log(x + math.Sqrt(x*x-1)) }),
	"asinh": always(func(x float64) float64 {
		if math.IsInf(x, -1) {
			return x
		}
		return math.Log(x + math.Sqrt(x*x+1))
	}),
	"atanh":  always(func(x float64) float64 { return 0.5 * (math.Log1p(x) - math.Log1p(-x)) }),
	"sign":   always(signum),
	"signum": always(signum),
}

func signum(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // 0, -0 and NaN are themselves
}

func compileFloat1(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.doubleArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return float1(x, float1Funcs[name]), nil
}

func float1(x node, f func(float64) (float64, bool)) node {
	return &fnNode{args: []node{x}, t: domain.TypeFloat64, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Floats {
			r, ok := f(v)
			if !ok {
				setNull(out, i)
			}
			out.Floats[i] = r
		}
		return nil
	}}
}

func float2(x, y node, f func(a, b float64) (float64, bool)) node {
	return &fnNode{args: []node{x, y}, t: domain.TypeFloat64, body: func(out *domain.Column, a []*domain.Column) error {
		ys := a[1].Floats
		for i, v := range a[0].Floats {
			r, ok := f(v, ys[i])
			if !ok {
				setNull(out, i)
			}
			out.Floats[i] = r
		}
		return nil
	}}
}

func compileFloat2(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.doubleArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	y, err := c.doubleArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	f := func(a, b float64) (float64, bool) { return math.Pow(a, b), true }
	switch name {
	case "atan2":
		f = func(a, b float64) (float64, bool) { return math.Atan2(a, b), true }
	case "hypot":
		f = func(a, b float64) (float64, bool) { return math.Hypot(a, b), true }
	}
	return float2(x, y, f), nil
}

// compileLog: log(x) is ln(x); log(base, x) is ln(x) / ln(base), NULL when
// the base or x is at most 0, as in Spark.
func compileLog(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	if len(e.Args) == 1 {
		return compileFloat1(c, e, "ln")
	}
	base, err := c.doubleArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	x, err := c.doubleArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	return float2(base, x, func(b, v float64) (float64, bool) {
		if b <= 0 || v <= 0 {
			return 0, false
		}
		return math.Log(v) / math.Log(b), true
	}), nil
}

// constInt is the value of a constant integer argument (a literal, possibly
// negated).
func constInt(n node) (int64, bool) {
	neg := false
	if ng, ok := n.(*negNode); ok {
		n, neg = ng.x, true
	}
	lit, ok := n.(*litNode)
	if !ok || lit.t.Kind != domain.KindInt64 || lit.v.IsNull() {
		return 0, false
	}
	if neg {
		return -lit.v.AsInt(), true
	}
	return lit.v.AsInt(), true
}

// compileBround: bround(x, d) rounds to d decimal places HALF_EVEN (banker's
// rounding) on the shortest decimal representation of x, as Spark's
// BigDecimal does: bround(2.5) is 2.0, bround(25, -1) is 20.
func compileBround(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	if d, err := c.compile(e.Args[0]); err == nil && d.typ().Kind == domain.KindDecimal {
		args, err := c.args(e)
		if err != nil {
			return nil, err
		}
		return c.decimalMath(e, name, args[0], args)
	}
	x, err := c.numArg(e, 0, name, domain.TypeFloat64)
	if err != nil {
		return nil, err
	}
	scale := int64(0)
	if len(e.Args) == 2 {
		sc, err := c.compile(e.Args[1])
		if err != nil {
			return nil, err
		}
		var ok bool
		if scale, ok = constInt(sc); !ok {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "bround needs a constant integer scale")
		}
	}
	if x.typ().Kind == domain.KindInt64 {
		pos := e.Pos
		return &fnNode{args: []node{x}, t: domain.TypeInt64, fails: scale < 0, body: func(out *domain.Column, a []*domain.Column) error {
			for i, v := range a[0].Ints {
				r, ok := broundInt(v, scale)
				if !ok && !isNullAt(out.Nulls, i) {
					return exprErr(domain.CodeArithmeticOverflow, pos, "bround(%d, %d) overflows bigint", v, scale)
				}
				out.Ints[i] = r
			}
			return nil
		}}, nil
	}
	return float1(x, func(v float64) (float64, bool) { return broundFloat(v, scale), true }), nil
}

// broundInt rounds v HALF_EVEN to a multiple of 10^-scale; false when the
// result does not fit a bigint.
func broundInt(v, scale int64) (int64, bool) { return roundInteger(v, scale, true) }

// broundFloat is HALF_EVEN rounding on the shortest decimal representation
// of f.
func broundFloat(f float64, scale int64) float64 { return roundShortest(f, scale, true) }

// randNode is rand([seed]): uniform doubles in [0, 1). With a seed, the
// values are a fixed sequence that starts again for every batch: the same
// batch gives the same values, row k of every batch the same value. Spark
// seeds per partition with its own generator, so the values differ from
// Spark's. Without a seed every evaluation draws new values.
type randNode struct {
	seed   uint64
	seeded bool
	normal bool // randn: standard normal, not uniform in [0, 1)
}

func compileRand(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	n := &randNode{normal: name == "randn"}
	if len(e.Args) == 1 {
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		if lit, ok := x.(*litNode); ok && lit.v.IsNull() {
			n.seeded = true // Spark takes a NULL seed as 0
		} else if s, ok := constInt(x); ok {
			n.seed, n.seeded = uint64(s), true
		} else {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "the seed of %s must be a constant integer", name)
		}
	}
	return n, nil
}

func (n *randNode) typ() domain.Type { return domain.TypeFloat64 }
func (n *randNode) mayFail() bool    { return false }
func (n *randNode) eval(b *domain.Batch) (*domain.Column, error) {
	src := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	if n.seeded {
		src = rand.New(rand.NewPCG(n.seed, 0))
	}
	out := newCol(domain.KindFloat64, b.Len())
	for i := range out.Floats {
		if n.normal {
			out.Floats[i] = src.NormFloat64()
		} else {
			out.Floats[i] = src.Float64()
		}
	}
	return out, nil
}

func compileConst(_ *compiler, _ *syntax.FuncCall, name string) (node, error) {
	v := math.E
	if name == "pi" {
		v = math.Pi
	}
	return &litNode{t: domain.TypeFloat64, v: domain.Float(v)}, nil
}
