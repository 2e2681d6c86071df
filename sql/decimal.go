package sql

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// DECIMAL(p, s) as Spark 4 computes it (ANSI, precision loss allowed):
// exact 128-bit values, result types by Spark's rules, rounding half away
// from zero where a result has fewer digits than the exact answer, and
// NUMERIC_VALUE_OUT_OF_RANGE where it has more than its precision.

// defaultDecimal is DECIMAL without a precision: DECIMAL(10, 0).
var defaultDecimal = domain.DecimalType(10, 0)

// minAdjustedScale is the least scale a result keeps when its precision is
// cut to 38 (Spark's MINIMUM_ADJUSTED_SCALE).
const minAdjustedScale = 6

// decimalFor is the decimal type an integer or decimal operand is brought to
// before decimal arithmetic: bigint is DECIMAL(20, 0), as in Spark. A bigint
// literal takes only the digits it has, as Spark's literal rule does.
func decimalFor(n node) (domain.Type, bool) {
	t := n.typ()
	switch t.Kind {
	case domain.KindDecimal:
		return t, true
	case domain.KindInt64:
		if l, ok := n.(*litNode); ok && !l.v.IsNull() {
			return domain.DecimalType(len(strings.TrimPrefix(strconv.FormatInt(l.v.AsInt(), 10), "-")), 0), true
		}
		return intDecimal(t), true
	}
	return domain.Type{}, false
}

// intDecimal is the decimal an integer type widens to: TINYINT DECIMAL(3, 0),
// SMALLINT (5, 0), INT (10, 0), BIGINT (20, 0); a decimal stays as it is.
func intDecimal(t domain.Type) domain.Type {
	if t.Kind != domain.KindInt64 {
		return t
	}
	return domain.DecimalType(map[int]int{8: 3, 16: 5, 32: 10, 64: 20}[t.Width()], 0)
}

// roundTo rounds a double to a float where t is FLOAT.
func roundTo(t domain.Type, f float64) float64 {
	if t.Bits == 32 {
		return float64(float32(f))
	}
	return f
}

// adjustPrecisionScale bounds a result type to 38 digits, giving up scale
// (down to 6) before integer digits, as Spark does.
func adjustPrecisionScale(p, s int) domain.Type {
	if p <= domain.MaxDecimalPrecision {
		return domain.DecimalType(p, s)
	}
	intDigits := p - s
	scale := max(domain.MaxDecimalPrecision-intDigits, min(s, minAdjustedScale))
	return domain.DecimalType(domain.MaxDecimalPrecision, scale)
}

// decimalResult is the type of a op b for decimals a and b.
func decimalResult(op string, a, b domain.Type) domain.Type {
	p1, s1, p2, s2 := a.Precision, a.Scale, b.Precision, b.Scale
	switch op {
	case "+", "-":
		s := max(s1, s2)
		return adjustPrecisionScale(s+max(p1-s1, p2-s2)+1, s)
	case "*":
		return adjustPrecisionScale(p1+p2+1, s1+s2)
	case "/":
		s := max(minAdjustedScale, s1+p2+1)
		return adjustPrecisionScale(p1-s1+s2+s, s)
	}
	s := max(s1, s2) // %
	return adjustPrecisionScale(min(p1-s1, p2-s2)+s, s)
}

// widerDecimal is the type two decimals are compared or combined in: the
// digits of both on either side of the point, bounded to 38 as Spark bounds
// it (keeping the scale: a value then beyond the integer digits left is
// NUMERIC_VALUE_OUT_OF_RANGE where it is cast, never rounded).
func widerDecimal(a, b domain.Type) domain.Type {
	s := max(a.Scale, b.Scale)
	return domain.DecimalType(min(s+max(a.Precision-a.Scale, b.Precision-b.Scale), domain.MaxDecimalPrecision), s)
}

// decArithNode is a + b, a - b, a * b, a / b or a % b over two decimals;
// with try (try_add and the like) a result that overflows or divides by zero
// is NULL.
type decArithNode struct {
	op   string
	l, r node
	t    domain.Type
	pos  syntax.Pos
	try  bool
}

func (n *decArithNode) typ() domain.Type { return n.t }
func (n *decArithNode) mayFail() bool    { return true }

func (n *decArithNode) eval(b *domain.Batch) (*domain.Column, error) {
	cols, err := evalAll([]node{n.l, n.r}, b)
	if err != nil {
		return nil, err
	}
	l, r := cols[0], cols[1]
	rows := b.Len()
	out := newCol(domain.KindDecimal, rows)
	out.Nulls = unionNulls(rows, l, r)
	lt, rt := n.l.typ(), n.r.typ()
	for i := 0; i < rows; i++ {
		if isNullAt(out.Nulls, i) {
			continue
		}
		a, c := l.Values[i].AsDecimal(), r.Values[i].AsDecimal()
		u, code := decimalOp(n.op, a, lt.Scale, c, rt.Scale, n.t)
		switch {
		case code == "":
			out.Values[i] = domain.Decimal(u, n.t.Precision, n.t.Scale)
			continue
		case n.try:
			setNull(out, i)
			continue
		case code == domain.CodeDivideByZero:
			return nil, exprErr(code, n.pos, "%s %s %s: division by zero", l.Values[i], n.op, r.Values[i])
		}
		return nil, exprErr(code, n.pos, "%s %s %s cannot be represented as %s", l.Values[i], n.op, r.Values[i], n.t)
	}
	return out, nil
}

// decimalOp computes a op b (a at scale sa, b at sb) as a value of type t,
// or the code of why it cannot.
func decimalOp(op string, a domain.Int128, sa int, b domain.Int128, sb int, t domain.Type) (domain.Int128, domain.Code) {
	if op == "+" || op == "-" {
		if sa == sb && sa == t.Scale && a.IsInt64() && b.IsInt64() {
			// the common case: no rescaling, no 128-bit arithmetic
			x, y := int64(a.Lo), int64(b.Lo)
			if op == "-" {
				y = -y
			}
			if s := x + y; (s > x) == (y > 0) && y != math.MinInt64 {
				u := domain.Int128Of(s)
				if !u.FitsPrecision(t.Precision) {
					return domain.Int128{}, domain.CodeNumericOutOfRange
				}
				return u, ""
			}
		}
	}
	if (op == "/" || op == "%") && b.Sign() == 0 {
		return domain.Int128{}, domain.CodeDivideByZero
	}
	x, y := a.Big(), b.Big()
	var exact *big.Int
	scale := t.Scale
	switch op {
	case "+", "-", "%":
		s := max(sa, sb)
		x.Mul(x, pow10Big(s-sa))
		y.Mul(y, pow10Big(s-sb))
		switch op {
		case "+":
			exact = x.Add(x, y)
		case "-":
			exact = x.Sub(x, y)
		default:
			exact = x.Rem(x, y) // the sign of the dividend, as Java's remainder
		}
		exact = rescaleBig(exact, s, scale)
	case "*":
		exact = rescaleBig(x.Mul(x, y), sa+sb, scale)
	case "/":
		// a/b at scale t: a × 10^(t - sa + sb) / b, rounded
		if k := scale - sa + sb; k >= 0 {
			x.Mul(x, pow10Big(k))
		} else {
			y.Mul(y, pow10Big(-k))
		}
		exact = domain.QuoRound(x, y)
	}
	u, ok := domain.Int128FromBig(exact)
	if !ok || !u.FitsPrecision(t.Precision) {
		return domain.Int128{}, domain.CodeNumericOutOfRange
	}
	return u, ""
}

func pow10Big(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// rescaleBig brings x from scale from to scale to, rounding half away from zero.
func rescaleBig(x *big.Int, from, to int) *big.Int {
	switch {
	case to > from:
		return x.Mul(x, pow10Big(to-from))
	case to < from:
		return domain.QuoRound(x, pow10Big(from-to))
	}
	return x
}

// decCastNode casts to or from a decimal: from bigint, boolean, double,
// string or another decimal to DECIMAL(p, s) (NUMERIC_VALUE_OUT_OF_RANGE when
// it does not fit, CAST_INVALID_INPUT for text that is not a number); from a
// decimal to bigint (rounded toward zero, CAST_OVERFLOW when out of range),
// double, boolean or string.
type decCastNode struct {
	x   node
	to  domain.Type
	try bool
	pos syntax.Pos
}

func (n *decCastNode) typ() domain.Type { return n.to }
func (n *decCastNode) mayFail() bool    { return !n.try || n.x.mayFail() }

func (n *decCastNode) eval(b *domain.Batch) (*domain.Column, error) {
	x, err := n.x.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := newCol(n.to.Kind, rows)
	out.Nulls = unionNulls(rows, x)
	from := n.x.typ()
	for i := 0; i < rows; i++ {
		if isNullAt(out.Nulls, i) {
			continue
		}
		code := n.castAt(out, i, x, from)
		if code == "" {
			continue
		}
		if n.try {
			if out.Nulls == nil {
				out.Nulls = make([]bool, rows)
			}
			out.Nulls[i] = true
			if n.to.Kind == domain.KindDecimal {
				out.Values[i] = domain.Null()
			}
			continue
		}
		v := x.Value(i)
		text := v.String()
		if from.Kind == domain.KindString {
			text = "'" + text + "'"
		}
		switch code {
		case domain.CodeNumericOutOfRange:
			return nil, exprErr(code, n.pos, "%s cannot be represented as %s", text, n.to)
		case domain.CodeCastOverflow:
			return nil, exprErr(code, n.pos, "the value %s of type %s is out of the range of %s", text, from, n.to)
		}
		return nil, exprErr(code, n.pos, "the value %s of type %s cannot be cast to %s", text, from, n.to)
	}
	return out, nil
}

// castAt casts row i of x into out, or says why it cannot.
func (n *decCastNode) castAt(out *domain.Column, i int, x *domain.Column, from domain.Type) domain.Code {
	to := n.to
	if to.Kind == domain.KindDecimal {
		var u domain.Int128
		ok := true
		switch from.Kind {
		case domain.KindDecimal:
			v := x.Values[i]
			u, ok = domain.Rescale(v.AsDecimal(), v.Scale(), to.Scale)
		case domain.KindInt64, domain.KindBool:
			u, ok = domain.Rescale(domain.Int128Of(x.Ints[i]), 0, to.Scale)
		case domain.KindFloat64:
			f := x.Floats[i]
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return domain.CodeCastInvalidInput
			}
			u, ok = domain.DecimalFromFloat(f, to.Precision, to.Scale)
		case domain.KindString:
			var valid bool
			u, valid, ok = domain.ParseDecimal(strings.TrimSpace(x.Strs[i]), to.Precision, to.Scale)
			if !valid {
				return domain.CodeCastInvalidInput
			}
		}
		if !ok || !u.FitsPrecision(to.Precision) {
			return domain.CodeNumericOutOfRange
		}
		out.Values[i] = domain.Decimal(u, to.Precision, to.Scale)
		return ""
	}
	v := x.Values[i]
	u, scale := v.AsDecimal(), v.Scale()
	switch to.Kind {
	case domain.KindFloat64:
		out.Floats[i] = roundTo(to, domain.DecimalToFloat(u, scale))
	case domain.KindBool:
		out.Ints[i] = b2i(u.Sign() != 0)
	case domain.KindString:
		out.Strs[i] = domain.FormatDecimal(u, scale)
	case domain.KindTimestamp: // seconds since the epoch, to the microsecond toward zero
		q := new(big.Int).Quo(rescaleBig(u.Big(), scale, 6+scale), pow10Big(scale))
		if !q.IsInt64() {
			return domain.CodeCastOverflow
		}
		out.Ints[i] = q.Int64()
	case domain.KindInt64:
		q := new(big.Int).Quo(u.Big(), pow10Big(scale)) // toward zero
		if lo, hi := to.IntRange(); !q.IsInt64() || q.Int64() < lo || q.Int64() > hi {
			return domain.CodeCastOverflow
		}
		out.Ints[i] = q.Int64()
	}
	return ""
}

// decimalCastable reports whether a cast between from and to, one of them a
// decimal, exists.
func decimalCastable(from, to domain.Kind) bool {
	ok := func(k domain.Kind) bool {
		switch k {
		case domain.KindDecimal, domain.KindInt64, domain.KindFloat64, domain.KindBool, domain.KindString:
			return true
		}
		return false
	}
	return ok(from) && ok(to) || from == domain.KindDecimal && to == domain.KindTimestamp
}

// decimalArith types a op b where one side is a decimal (or both are
// decimals after a bigint literal): a double on either side makes it double,
// otherwise both are brought to decimals and the result takes Spark's type.
func (c *compiler) decimalArith(e *syntax.Binary, l, r node) (node, error) {
	lt, lok := decimalFor(l)
	rt, rok := decimalFor(r)
	if !lok || !rok {
		t := domain.TypeFloat64
		return &arithNode{op: e.Op, l: implicit(l, t, e.L.Position()), r: implicit(r, t, e.R.Position()), t: t, pos: e.Pos}, nil
	}
	return &decArithNode{op: e.Op, l: implicit(l, lt, e.L.Position()), r: implicit(r, rt, e.R.Position()), t: decimalResult(e.Op, lt, rt), pos: e.Pos}, nil
}

// decimalLiteral types a number literal with a point (or one too large for a
// bigint) as Spark does: DECIMAL of its digits, `1.50` DECIMAL(3, 2).
func decimalLiteral(text string, pos syntax.Pos) (node, error) {
	digits := strings.TrimLeft(strings.Replace(strings.TrimLeft(text, "+-"), ".", "", 1), "0")
	scale := 0
	if i := strings.IndexByte(text, '.'); i >= 0 {
		scale = len(text) - i - 1
	}
	p := max(len(digits), scale, 1)
	if p > domain.MaxDecimalPrecision {
		return nil, exprErr(domain.CodeDecimalPrecisionExceeded, pos, "the number %s has %d digits; a DECIMAL holds at most %d", text, p, domain.MaxDecimalPrecision)
	}
	u, _, _ := domain.ParseDecimal(text, p, scale)
	t := domain.DecimalType(p, scale)
	return &litNode{t: t, v: domain.Decimal(u, p, scale)}, nil
}

// castDecimal compiles a cast to or from a decimal.
func (c *compiler) castDecimal(e *syntax.Cast, x node) (node, error) {
	var to domain.Type
	if e.Type.Name == "DECIMAL" {
		t, err := decimalType(e.Type)
		if err != nil {
			return nil, err
		}
		to = t
	} else {
		t, ok := castTarget(e.Type)
		if !ok {
			return nil, exprErr(domain.CodeNotImplemented, e.Type.Pos, "casts to %s are not supported yet", e.Type.Name)
		}
		to = t
	}
	from := x.typ()
	switch {
	case from.Kind == domain.KindNull:
		return retype(x, to), nil
	case from.Equal(to):
		return x, nil
	case !decimalCastable(from.Kind, to.Kind):
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "cannot cast %s to %s", from, strings.ToLower(e.Type.Name))
	}
	return &decCastNode{x: x, to: to, try: e.Try, pos: e.Pos}, nil
}

// decimalMath is abs, floor, ceil, round and bround of a decimal, which stay
// decimals with Spark's result types.
func (c *compiler) decimalMath(e *syntax.FuncCall, name string, x node, args []node) (node, error) {
	t := x.typ()
	p, s := t.Precision, t.Scale
	var out domain.Type
	var f func(u domain.Int128) (domain.Int128, bool)
	switch name {
	case "abs":
		out = t
		f = func(u domain.Int128) (domain.Int128, bool) {
			if u.Sign() < 0 {
				return u.Neg(), true
			}
			return u, true
		}
	case "floor", "ceil", "ceiling":
		out = domain.DecimalType(min(p-s+1, domain.MaxDecimalPrecision), 0)
		if s == 0 {
			return x, nil
		}
		up := name != "floor"
		f = func(u domain.Int128) (domain.Int128, bool) {
			q, r := new(big.Int).QuoRem(u.Big(), pow10Big(s), new(big.Int))
			if r.Sign() != 0 && (r.Sign() > 0) == up {
				q.Add(q, big.NewInt(int64(r.Sign())))
			}
			return domain.Int128FromBig(q)
		}
	default: // round (half up) and bround (half even)
		d := int64(0)
		if len(args) == 2 {
			var ok bool
			if d, ok = constInt(args[1]); !ok {
				return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "%s needs a constant integer scale", name)
			}
		}
		scale := int(max(min(d, domain.MaxDecimalPrecision), -domain.MaxDecimalPrecision))
		even := name == "bround"
		if scale < 0 {
			out = domain.DecimalType(min(max(p-s+1, -scale+1), domain.MaxDecimalPrecision), 0)
		} else {
			scale = min(s, scale)
			out = domain.DecimalType(min(p-s+1+scale, domain.MaxDecimalPrecision), scale)
		}
		f = func(u domain.Int128) (domain.Int128, bool) {
			r := roundUnscaled(u.Big(), s, scale, even)
			if scale < 0 { // to tens, hundreds...: back to scale 0
				r.Mul(r, pow10Big(-scale))
			}
			return domain.Int128FromBig(r)
		}
	}
	pos := e.Pos
	return &valuesNode{args: []node{x}, t: out, fails: true, row: func(v []domain.Value) (domain.Value, error) {
		u, ok := f(v[0].AsDecimal())
		if !ok || !u.FitsPrecision(out.Precision) {
			return domain.Value{}, exprErr(domain.CodeNumericOutOfRange, pos, "%s(%s) cannot be represented as %s", name, v[0], out)
		}
		return domain.Decimal(u, out.Precision, out.Scale), nil
	}}, nil
}

// sumDecimalAcc sums decimals exactly: sum(DECIMAL(p, s)) is
// DECIMAL(min(38, p + 10), s), NUMERIC_VALUE_OUT_OF_RANGE beyond it (NULL
// for try_sum).
type sumDecimalAcc struct {
	t        domain.Type
	try      bool
	pos      syntax.Pos
	sum      []domain.Int128
	n        []int64
	overflow []bool
}

func (a *sumDecimalAcc) grow(n int) {
	add := n - len(a.sum)
	a.sum = append(a.sum, make([]domain.Int128, add)...)
	a.n = append(a.n, make([]int64, add)...)
	a.overflow = append(a.overflow, make([]bool, add)...)
}

func (a *sumDecimalAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || x.Values[i].IsNull() {
			continue
		}
		s, ok := a.sum[g].Add(x.Values[i].AsDecimal())
		if !ok || !s.FitsPrecision(a.t.Precision) {
			if !a.try {
				return exprErr(domain.CodeNumericOutOfRange, a.pos, "sum of %s cannot be represented as %s", x.Values[i].String(), a.t)
			}
			a.overflow[g] = true
		}
		a.sum[g] = s
		a.n[g]++
	}
	return nil
}

func (a *sumDecimalAcc) result() (*domain.Column, error) {
	out := newCol(domain.KindDecimal, len(a.sum))
	for g, s := range a.sum {
		if a.n[g] == 0 || a.overflow[g] {
			setNull(out, g)
			continue
		}
		out.Values[g] = domain.Decimal(s, a.t.Precision, a.t.Scale)
	}
	return out, nil
}

// avgDecimalAcc averages decimals exactly: avg(DECIMAL(p, s)) is
// DECIMAL(min(38, p + 4), min(38, s + 4)), the quotient rounded half up. Its
// sum is bounded by 38 digits, not by the result's type.
type avgDecimalAcc struct {
	sumDecimalAcc
	in, out domain.Type
}

func (a *avgDecimalAcc) result() (*domain.Column, error) {
	out := newCol(domain.KindDecimal, len(a.sum))
	for g, s := range a.sum {
		if a.n[g] == 0 {
			setNull(out, g)
			continue
		}
		q := domain.QuoRound(rescaleBig(s.Big(), a.in.Scale, a.out.Scale), big.NewInt(a.n[g]))
		u, ok := domain.Int128FromBig(q)
		if !ok || !u.FitsPrecision(a.out.Precision) {
			return nil, exprErr(domain.CodeNumericOutOfRange, a.pos, "the average cannot be represented as %s", a.out)
		}
		out.Values[g] = domain.Decimal(u, a.out.Precision, a.out.Scale)
	}
	return out, nil
}

// decimalSum compiles sum and avg (and their try_ forms) of a decimal.
func decimalSum(ac *aggCompile, c *Compiled, avg bool) {
	in := c.Type()
	ac.a.args = []*Compiled{c}
	try, pos := strings.HasPrefix(ac.name, "try_"), ac.call.Pos
	if avg {
		out := domain.DecimalType(min(domain.MaxDecimalPrecision, in.Precision+4), min(domain.MaxDecimalPrecision, in.Scale+4))
		bound := domain.DecimalType(domain.MaxDecimalPrecision, in.Scale)
		ac.a.t = out
		ac.a.newAcc = func() accumulator {
			return &avgDecimalAcc{sumDecimalAcc: sumDecimalAcc{t: bound, try: try, pos: pos}, in: in, out: out}
		}
		return
	}
	sumType := domain.DecimalType(min(domain.MaxDecimalPrecision, in.Precision+10), in.Scale)
	ac.a.t = sumType
	ac.a.newAcc = func() accumulator { return &sumDecimalAcc{t: sumType, try: try, pos: pos} }
}

// decimalPmod is pmod of decimals: the remainder of % made non-negative for
// a positive divisor, in the type of %.
func decimalPmod(d *decArithNode) node {
	lt, rt, t, pos := d.l.typ(), d.r.typ(), d.t, d.pos
	return &valuesNode{args: []node{d.l, d.r}, t: t, fails: true, row: func(v []domain.Value) (domain.Value, error) {
		if v[1].AsDecimal().Sign() == 0 {
			return domain.Value{}, exprErr(domain.CodeDivideByZero, pos, "pmod(%s, %s): division by zero", v[0], v[1])
		}
		s := max(lt.Scale, rt.Scale)
		x := rescaleBig(v[0].AsDecimal().Big(), lt.Scale, s)
		y := rescaleBig(v[1].AsDecimal().Big(), rt.Scale, s)
		r := new(big.Int).Rem(x, y)
		if r.Sign() < 0 {
			r.Rem(r.Add(r, y), y)
		}
		u, ok := domain.Int128FromBig(rescaleBig(r, s, t.Scale))
		if !ok || !u.FitsPrecision(t.Precision) {
			return domain.Value{}, exprErr(domain.CodeNumericOutOfRange, pos, "pmod(%s, %s) cannot be represented as %s", v[0], v[1], t)
		}
		return domain.Decimal(u, t.Precision, t.Scale), nil
	}}
}

// roundUnscaled brings x from scale from to a lower scale to, rounding half
// away from zero or, with even, half to even.
func roundUnscaled(x *big.Int, from, to int, even bool) *big.Int {
	if to >= from {
		return x.Mul(x, pow10Big(to-from))
	}
	d := pow10Big(from - to)
	q, r := new(big.Int).QuoRem(x, d, new(big.Int))
	twice := r.Abs(r).Lsh(r, 1)
	if c := twice.Cmp(d); c > 0 || c == 0 && (!even || q.Bit(0) == 1) {
		q.Add(q, big.NewInt(int64(x.Sign())))
	}
	return q
}
