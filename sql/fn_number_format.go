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
		"to_number":     {minArgs: 2, maxArgs: 2, compile: compileToNumber},
		"try_to_number": {minArgs: 2, maxArgs: 2, compile: compileToNumber},
		"to_char":       {minArgs: 2, maxArgs: 2, compile: compileToChar},
		"to_varchar":    {minArgs: 2, maxArgs: 2, compile: compileToChar},
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

// numFormat is a Spark number format ('$99,999.99', '999.99PR', 'S0000'):
// the digits before and after the point (0 or 9 each), where the grouping
// separators (',' or 'G') fall among the integer digits, a leading '$', and
// a sign: S or MI before or after, or PR (angle brackets) after.
type numFormat struct {
	intDigits, fracDigits int
	zeroPad               bool  // the integer digits start with 0: pad with zeros
	groups                []int // integer digit counts after which a separator falls
	dollar, point         bool
	sign                  string // "", "S", "MI" or "PR"
	signFirst             bool
}

func parseNumFormat(f string) (numFormat, bool) {
	var nf numFormat
	u := strings.ToUpper(f)
	take := func(p string) bool {
		if strings.HasPrefix(u, p) {
			u = u[len(p):]
			return true
		}
		return false
	}
	switch {
	case take("S"):
		nf.sign, nf.signFirst = "S", true
	case take("MI"):
		nf.sign, nf.signFirst = "MI", true
	}
	nf.dollar = take("$")
	for len(u) > 0 {
		switch c := u[0]; {
		case c == '0' || c == '9':
			if nf.point {
				nf.fracDigits++
			} else {
				if nf.intDigits == 0 && c == '0' {
					nf.zeroPad = true
				}
				nf.intDigits++
			}
		case (c == ',' || c == 'G') && !nf.point && nf.intDigits > 0:
			nf.groups = append(nf.groups, nf.intDigits)
		case (c == '.' || c == 'D') && !nf.point:
			nf.point = true
		default:
			switch {
			case nf.sign == "" && (u == "S" || u == "MI" || u == "PR"):
				nf.sign = u
			default:
				return nf, false
			}
			u = ""
			continue
		}
		u = u[1:]
	}
	if len(nf.groups) > 0 && nf.groups[len(nf.groups)-1] == nf.intDigits {
		return nf, false // a separator must be between digits
	}
	return nf, nf.intDigits+nf.fracDigits > 0 && nf.intDigits+nf.fracDigits <= domain.MaxDecimalPrecision
}

// parse reads s as the format says, into DECIMAL(digits, fracDigits).
func (nf numFormat) parse(s string) (domain.Int128, bool) {
	neg := false
	switch {
	case nf.sign == "PR" && strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">"):
		s, neg = s[1:len(s)-1], true
	case (nf.sign == "S" || nf.sign == "MI") && nf.signFirst && (strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+")):
		s, neg = s[1:], s[0] == '-'
	case (nf.sign == "S" || nf.sign == "MI") && !nf.signFirst && (strings.HasSuffix(s, "-") || strings.HasSuffix(s, "+")):
		s, neg = s[:len(s)-1], s[len(s)-1] == '-'
	}
	if nf.dollar {
		var ok bool
		if s, ok = strings.CutPrefix(s, "$"); !ok {
			return domain.Int128{}, false
		}
	}
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if hasPoint && !nf.point || len(frac) > nf.fracDigits {
		return domain.Int128{}, false
	}
	if len(nf.groups) > 0 {
		intPart = strings.ReplaceAll(intPart, ",", "")
	}
	if len(intPart) > nf.intDigits || intPart == "" && frac == "" || strings.Trim(intPart+frac, "0123456789") != "" {
		return domain.Int128{}, false
	}
	text := intPart + "." + frac
	if neg {
		text = "-" + text
	}
	u, ok, fits := domain.ParseDecimal(strings.TrimSuffix(text, "."), nf.intDigits+nf.fracDigits, nf.fracDigits)
	return u, ok && fits
}

// format writes v (an unscaled value at scale) as the format says; a value
// with more integer digits than the format has is all '#', as in Spark.
func (nf numFormat) format(u *big.Int, scale int) string {
	x := roundUnscaled(new(big.Int).Set(u), scale, nf.fracDigits, false)
	neg := x.Sign() < 0
	digits := new(big.Int).Abs(x).String()
	for len(digits) <= nf.fracDigits {
		digits = "0" + digits
	}
	intDigits, frac := digits[:len(digits)-nf.fracDigits], digits[len(digits)-nf.fracDigits:]
	if intDigits == "0" && nf.fracDigits > 0 && !nf.zeroPad {
		intDigits = "" // 0.5 with 9.9 is " .5", as Oracle's and Spark's formats write it
	}
	var b strings.Builder
	if len(intDigits) > nf.intDigits {
		for range nf.intDigits + len(nf.groups) {
			b.WriteByte('#')
		}
		intDigits = ""
	} else {
		pad := strings.Repeat(map[bool]string{true: "0", false: " "}[nf.zeroPad], nf.intDigits-len(intDigits))
		all := pad + intDigits
		g := 0
		for i := range all {
			if g < len(nf.groups) && i == nf.groups[g] {
				sep := ","
				if i > 0 && all[i-1] == ' ' {
					sep = " "
				}
				b.WriteString(sep)
				g++
			}
			b.WriteByte(all[i])
		}
	}
	body := b.String()
	if nf.point {
		body += "." + frac
	}
	if nf.dollar {
		body = "$" + body
	}
	switch nf.sign {
	case "S":
		if neg {
			body = sign(nf.signFirst, body, "-")
		} else {
			body = sign(nf.signFirst, body, "+")
		}
	case "MI":
		if neg {
			body = sign(nf.signFirst, body, "-")
		} else {
			body = sign(nf.signFirst, body, " ")
		}
	case "PR":
		if neg {
			body = "<" + body + ">"
		}
	default:
		if neg {
			body = "-" + body
		}
	}
	return body
}

func sign(first bool, body, s string) string {
	if first {
		return s + body
	}
	return body + s
}

func (c *compiler) numFormatArg(e *syntax.FuncCall, name string) (numFormat, error) {
	lit, ok := e.Args[1].(*syntax.Literal)
	if !ok || lit.Kind != syntax.StringLit {
		return numFormat{}, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "the format of %s must be a string literal such as '$99,999.99'", name)
	}
	nf, ok := parseNumFormat(lit.Value)
	if !ok {
		return numFormat{}, exprErr(domain.CodeInvalidFormat, lit.Pos, "the format '%s' of %s is not valid: digits 0 and 9, separators , or G between them, one . or D, a leading $, and S, MI or PR for the sign", lit.Value, name)
	}
	return nf, nil
}

// compileToNumber: to_number(s, format) reads s as format says, into a
// DECIMAL of the format's digits; s that does not match is
// INVALID_FORMAT.MISMATCH_INPUT (NULL from try_to_number).
func compileToNumber(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	nf, err := c.numFormatArg(e, name)
	if err != nil {
		return nil, err
	}
	t := domain.DecimalType(nf.intDigits+nf.fracDigits, nf.fracDigits)
	try, pos := strings.HasPrefix(name, "try_"), e.Pos
	return &valuesNode{args: []node{x}, t: t, fails: !try, row: func(a []domain.Value) (domain.Value, error) {
		u, ok := nf.parse(a[0].AsString())
		switch {
		case ok:
			return domain.Decimal(u, t.Precision, t.Scale), nil
		case try:
			return domain.Null(), nil
		}
		return domain.Value{}, exprErr(domain.CodeFormatMismatchInput, pos, "the value '%s' does not match the format of %s", a[0].AsString(), name)
	}}, nil
}

// compileToChar: to_char(x, format) (and to_varchar) writes the number x as
// format says: digits padded with zeros where the format's start with 0,
// spaces otherwise, rounded half up to its digits after the point.
func compileToChar(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	switch k := x.typ().Kind; {
	case k == domain.KindNull:
		x = retype(x, domain.TypeInt64)
	case k == domain.KindFloat64:
		x = implicit(x, domain.DecimalType(domain.MaxDecimalPrecision, 18), e.Args[0].Position())
	case k != domain.KindInt64 && k != domain.KindDecimal:
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s writes numbers, found %s (date_format writes dates and timestamps)", name, x.typ())
	}
	nf, err := c.numFormatArg(e, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{x}, t: domain.TypeString, row: func(a []domain.Value) (domain.Value, error) {
		v := a[0]
		if v.Kind() == domain.KindInt64 {
			return domain.String(nf.format(big.NewInt(v.AsInt()), 0)), nil
		}
		return domain.String(nf.format(v.AsDecimal().Big(), v.Scale())), nil
	}}, nil
}
