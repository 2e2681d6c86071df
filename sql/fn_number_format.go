package sql

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"format_number": {minArgs: 2, maxArgs: 2, compile: compileFormatNumber},
	})
}

// numberFormat is a Java DecimalFormat pattern as format_number takes it:
// digits after the point (at least min, at most max), at least minInt
// digits before it, grouped by group digits (0 for none).
type numberFormat struct {
	minFrac, maxFrac, minInt, group int
}

// parseNumberFormat reads the #,##0.00 subset of DecimalFormat patterns.
func parseNumberFormat(p string) (numberFormat, bool) {
	intPart, frac, hasPoint := strings.Cut(p, ".")
	var f numberFormat
	if strings.Trim(intPart, "#,0") != "" || strings.Trim(frac, "#0") != "" || hasPoint && frac == "" && intPart == "" {
		return f, false
	}
	f.minInt = strings.Count(intPart, "0")
	if i := strings.LastIndexByte(intPart, ','); i >= 0 {
		f.group = len(intPart) - i - 1
	}
	f.minFrac = len(frac) - len(strings.TrimLeft(frac, "0"))
	f.maxFrac = len(frac)
	return f, f.group != 0 || !strings.Contains(intPart, ",")
}

// format renders x × 10^-scale, rounded half to even as DecimalFormat does.
func (f numberFormat) format(x *big.Int, scale int) string {
	if scale > f.maxFrac {
		x = roundUnscaled(new(big.Int).Set(x), scale, f.maxFrac, true)
		scale = f.maxFrac
	}
	neg := x.Sign() < 0
	digits := new(big.Int).Abs(x).String()
	for len(digits) <= scale {
		digits = "0" + digits
	}
	intDigits, frac := digits[:len(digits)-scale], digits[len(digits)-scale:]
	for len(frac) > f.minFrac && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	for len(frac) < f.minFrac {
		frac += "0"
	}
	intDigits = strings.TrimLeft(intDigits, "0")
	for len(intDigits) < f.minInt {
		intDigits = "0" + intDigits
	}
	if f.group > 0 {
		var b strings.Builder
		for i, d := range intDigits {
			if i > 0 && (len(intDigits)-i)%f.group == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(d)
		}
		intDigits = b.String()
	}
	out := intDigits
	if frac != "" {
		out += "." + frac
	}
	if out == "" {
		out = "0"
	}
	if neg && strings.Trim(out, "0.,") != "" {
		out = "-" + out
	}
	return out
}

// compileFormatNumber: format_number(x, d) writes x with d digits after the
// point and groups of three before it (12,332.1235), rounding half to even;
// format_number(x, pattern) with a DecimalFormat pattern of # 0 , and . (a
// string literal). A negative d is NULL.
func compileFormatNumber(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	switch k := x.typ().Kind; {
	case k == domain.KindNull:
		x = retype(x, domain.TypeFloat64)
	case !isNumeric(k):
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a number, found %s", name, x.typ())
	}
	var f numberFormat
	var dArg node
	if lit, ok := e.Args[1].(*syntax.Literal); ok && lit.Kind == syntax.StringLit {
		if f, ok = parseNumberFormat(lit.Value); !ok {
			return nil, exprErr(domain.CodeInvalidParameterValue, lit.Pos, "%s takes a pattern of # 0 , and ., not '%s'", name, lit.Value)
		}
	} else if dArg, err = c.intArg(e, 1, name); err != nil {
		return nil, err
	}
	args := []node{x}
	if dArg != nil {
		args = append(args, dArg)
	}
	return &valuesNode{args: args, t: domain.TypeString, row: func(a []domain.Value) (domain.Value, error) {
		ff := f
		if len(a) == 2 {
			d := a[1].AsInt()
			if d < 0 {
				return domain.Null(), nil
			}
			ff = numberFormat{minFrac: int(min(d, 340)), maxFrac: int(min(d, 340)), minInt: 1, group: 3}
		}
		v := a[0]
		var u *big.Int
		scale := 0
		switch v.Kind() {
		case domain.KindInt64:
			u = big.NewInt(v.AsInt())
		case domain.KindDecimal:
			u, scale = v.AsDecimal().Big(), v.Scale()
		default:
			fv := v.AsFloat()
			if fv != fv || fv > 1.7976931348623157e308 || fv < -1.7976931348623157e308 {
				return domain.String(domain.FormatDouble(fv)), nil // NaN and the infinities as Java writes them
			}
			text := strconv.FormatFloat(fv, 'e', -1, 64) // the shortest digits, as Java's
			mant, exp, _ := strings.Cut(text, "e")
			e10, _ := strconv.Atoi(exp)
			digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
			fracDigits := len(digits) - 1 - e10
			u, _ = new(big.Int).SetString(digits, 10)
			if fracDigits < 0 {
				u.Mul(u, pow10Big(-fracDigits))
				fracDigits = 0
			}
			if fv < 0 {
				u.Neg(u)
			}
			scale = fracDigits
		}
		return domain.String(ff.format(u, scale)), nil
	}}, nil
}
