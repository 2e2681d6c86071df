package sql

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"format_string": {minArgs: 1, maxArgs: -1, compile: compileFormatString},
		"printf":        {minArgs: 1, maxArgs: -1, compile: compileFormatString},
	})
}

// fmtSpec is one piece of a Java format string: literal text followed by at
// most one conversion.
type fmtSpec struct {
	text  string
	conv  byte // 0: text only
	arg   int  // 0-based index into the values formatted
	flags string
	width int // -1: none
	prec  int // -1: none
}

// parseFormat parses the subset of java.util.Formatter that format_string
// supports: %[index$][flags][width][.precision]conversion with the
// conversions s S d x X o f c b B n %, and the flags - + space 0 ,. Anything
// else (%e, %g, %t dates, %h, the flags # and (, relative indexes) is
// UNSUPPORTED_FORMAT_STRING rather than a different result from Spark's.
func parseFormat(f string) ([]fmtSpec, string) {
	var specs []fmtSpec
	var text strings.Builder
	ordinary := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			text.WriteByte(f[i])
			continue
		}
		start := i
		i++
		sp := fmtSpec{arg: -1, width: -1, prec: -1}
		num := func() int {
			j := i
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
			}
			if j == i {
				return -1
			}
			n, err := strconv.Atoi(f[j:i])
			if err != nil {
				return math.MaxInt32
			}
			return n
		}
		// an index is digits followed by $; otherwise the digits are a width
		j := i
		if n := num(); n >= 0 && i < len(f) && f[i] == '$' {
			if n == 0 {
				return nil, "the argument index in " + f[start:i+1] + " starts at 1"
			}
			sp.arg = n - 1
			i++
		} else {
			i = j
		}
		for i < len(f) && strings.IndexByte("-#+ 0,(<", f[i]) >= 0 {
			if strings.IndexByte("#(<", f[i]) >= 0 {
				return nil, "the flag '" + string(f[i]) + "' in " + f[start:min(i+1, len(f))] + " is not supported"
			}
			if strings.IndexByte(sp.flags, f[i]) >= 0 {
				return nil, "the flag '" + string(f[i]) + "' is repeated in " + f[start:i+1]
			}
			sp.flags += string(f[i])
			i++
		}
		sp.width = num()
		if i < len(f) && f[i] == '.' {
			i++
			if sp.prec = num(); sp.prec < 0 {
				return nil, "a precision needs digits after the dot in " + f[start:i]
			}
		}
		if i >= len(f) {
			return nil, "the format ends inside the conversion " + f[start:]
		}
		sp.conv = f[i]
		spec := f[start : i+1]
		if sp.width > maxStringBytes || sp.prec > maxStringBytes {
			return nil, "the width or precision of " + spec + " is larger than sluice allows"
		}
		if strings.IndexByte("sSdxXofcbBn%", sp.conv) < 0 {
			return nil, "the conversion " + spec + " is not supported"
		}
		has := func(c byte) bool { return strings.IndexByte(sp.flags, c) >= 0 }
		switch {
		case (has('-') || has('0')) && sp.width < 0:
			return nil, spec + " needs a width for its flags - or 0"
		case has('-') && has('0'), has('+') && has(' '):
			return nil, "the flags of " + spec + " contradict each other"
		case strings.IndexByte("dxXo", sp.conv) >= 0 && sp.prec >= 0,
			strings.IndexByte("cn%", sp.conv) >= 0 && sp.prec >= 0:
			return nil, spec + " does not take a precision"
		case strings.IndexByte("sScbBn%", sp.conv) >= 0 && (has('+') || has(' ') || has(',') || has('0')),
			strings.IndexByte("xXo", sp.conv) >= 0 && (has('+') || has(' ') || has(',')):
			return nil, "the flags of " + spec + " do not apply to %" + string(sp.conv)
		case sp.conv == 'n' && (sp.flags != "" || sp.width >= 0):
			return nil, spec + " takes no flags or width"
		}
		sp.text = text.String()
		text.Reset()
		switch sp.conv {
		case 'n':
			sp.text += "\n"
			sp.conv = 0
		case '%':
			sp.arg = -1
		default:
			if sp.arg < 0 {
				sp.arg = ordinary
				ordinary++
			}
		}
		specs = append(specs, sp)
	}
	return append(specs, fmtSpec{text: text.String(), arg: -1}), ""
}

// checkFormatArgs reports the first conversion whose argument is missing or
// of a type it does not format (Java's MissingFormatArgumentException and
// IllegalFormatConversionException).
func checkFormatArgs(specs []fmtSpec, kinds []domain.Kind) string {
	for _, sp := range specs {
		if sp.conv == 0 || sp.conv == '%' {
			continue
		}
		if sp.arg >= len(kinds) {
			return "the format has no argument for conversion %" + string(sp.conv) + " number " + strconv.Itoa(sp.arg+1)
		}
		k := kinds[sp.arg]
		ok := k == domain.KindNull
		switch sp.conv {
		case 's', 'S':
			ok = ok || k == domain.KindString || k == domain.KindInt64 || k == domain.KindFloat64 || k == domain.KindDecimal || k == domain.KindBool
		case 'd', 'x', 'X', 'o', 'c':
			ok = ok || k == domain.KindInt64
		case 'f':
			ok = ok || k == domain.KindFloat64
		case 'b', 'B':
			ok = true
		}
		if !ok {
			return "%" + string(sp.conv) + " cannot format a value of type " + k.String()
		}
	}
	return ""
}

type formatNode struct {
	fmt   node
	args  []node
	specs []fmtSpec // a constant format, parsed once
	pos   syntax.Pos
}

// compileFormatString: format_string(fmt, args...) (printf) formats as
// Java's String.format; NULL when fmt is, a NULL argument prints "null" (and
// false for %b). A constant format is parsed and checked against the
// argument types when compiling.
func compileFormatString(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	if args[0], err = asString(args[0], e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	n := &formatNode{fmt: args[0], args: args[1:], pos: e.Pos}
	lit, ok := args[0].(*litNode)
	if !ok || lit.v.IsNull() {
		return n, nil
	}
	specs, msg := parseFormat(lit.v.AsString())
	for _, sp := range specs {
		// %f formats a decimal as it does the nearest double; %s keeps
		// its digits
		if sp.conv == 'f' && sp.arg < len(n.args) && n.args[sp.arg].typ().Kind == domain.KindDecimal {
			n.args[sp.arg] = implicit(n.args[sp.arg], domain.TypeFloat64, e.Args[sp.arg+1].Position())
		}
	}
	if msg == "" {
		msg = checkFormatArgs(specs, n.kinds())
	}
	if msg != "" {
		return nil, exprErr(domain.CodeUnsupportedFormat, e.Args[0].Position(), "%s", msg)
	}
	n.specs = specs
	return n, nil
}

func (n *formatNode) kinds() []domain.Kind {
	ks := make([]domain.Kind, len(n.args))
	for i, a := range n.args {
		ks[i] = a.typ().Kind
	}
	return ks
}

func (n *formatNode) typ() domain.Type { return domain.TypeString }
func (n *formatNode) mayFail() bool    { return n.specs == nil || anyMayFail(n.args) }

func (n *formatNode) eval(b *domain.Batch) (*domain.Column, error) {
	f, err := n.fmt.eval(b)
	if err != nil {
		return nil, err
	}
	cols, err := evalAll(n.args, b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := newCol(domain.KindString, rows)
	out.Nulls = unionNulls(rows, f)
	if f.Kind == domain.KindNull {
		out.Nulls = allNulls(rows)
		return out, nil
	}
	specs, lastFmt := n.specs, ""
	var sb strings.Builder
	for i := 0; i < rows; i++ {
		if isNullAt(out.Nulls, i) {
			continue
		}
		if n.specs == nil && (specs == nil || f.Strs[i] != lastFmt) {
			var msg string
			if specs, msg = parseFormat(f.Strs[i]); msg == "" {
				msg = checkFormatArgs(specs, n.kinds())
			}
			if msg != "" {
				return nil, exprErr(domain.CodeUnsupportedFormat, n.pos, "format '%s': %s", f.Strs[i], msg)
			}
			lastFmt = f.Strs[i]
		}
		sb.Reset()
		for _, sp := range specs {
			sb.WriteString(sp.text)
			if sp.conv == 0 {
				continue
			}
			s, err := formatOne(sp, cols, i, n.pos)
			if err != nil {
				return nil, err
			}
			sb.WriteString(s)
		}
		out.Strs[i] = sb.String()
	}
	return out, nil
}

// formatOne formats row i of the argument of sp.
func formatOne(sp fmtSpec, cols []*domain.Column, i int, pos syntax.Pos) (string, error) {
	has := func(c byte) bool { return strings.IndexByte(sp.flags, c) >= 0 }
	var c *domain.Column
	null := true
	if sp.arg >= 0 {
		c = cols[sp.arg]
		null = c.IsNull(i)
	}
	var s string
	numeric := false
	switch {
	case sp.conv == '%':
		s = "%"
	case sp.conv == 'b' || sp.conv == 'B':
		s = strconv.FormatBool(!null && (c.Kind != domain.KindBool || c.Ints[i] != 0))
	case null:
		s = "null"
	case sp.conv == 's' || sp.conv == 'S':
		switch c.Kind {
		case domain.KindString:
			s = c.Strs[i]
		case domain.KindInt64:
			s = strconv.FormatInt(c.Ints[i], 10)
		case domain.KindFloat64:
			s = fmtFloat(c.Floats[i])
		case domain.KindBool:
			s = strconv.FormatBool(c.Ints[i] != 0)
		}
	case sp.conv == 'd':
		s, numeric = formatSigned(strconv.FormatInt(c.Ints[i], 10), sp), true
	case sp.conv == 'x' || sp.conv == 'X':
		// Java prints a negative long in two's complement
		s, numeric = strconv.FormatUint(uint64(c.Ints[i]), 16), true
	case sp.conv == 'o':
		s, numeric = strconv.FormatUint(uint64(c.Ints[i]), 8), true
	case sp.conv == 'c':
		v := c.Ints[i]
		if v < 0 || v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
			return "", exprErr(domain.CodeUnsupportedFormat, pos, "%%c cannot format the code point %d", v)
		}
		s = string(rune(v))
	case sp.conv == 'f':
		s, numeric = formatFixed(c.Floats[i], sp), true
	}
	if sp.prec >= 0 && strings.IndexByte("sSbB", sp.conv) >= 0 {
		s = substringSQL(s, 1, int64(sp.prec))
	}
	if sp.conv == 'S' || sp.conv == 'X' || sp.conv == 'B' {
		s = upperJava(s)
	}
	pad := sp.width - utf8.RuneCountInString(s)
	switch {
	case pad <= 0:
	case has('-'):
		s += strings.Repeat(" ", pad)
	case has('0') && numeric && !strings.ContainsAny(s, "IN"): // not Infinity or NaN
		sign := ""
		if s != "" && (s[0] == '-' || s[0] == '+' || s[0] == ' ') {
			sign, s = s[:1], s[1:]
		}
		s = sign + strings.Repeat("0", pad) + s
	default:
		s = strings.Repeat(" ", pad) + s
	}
	return s, nil
}

// formatSigned applies the flags , + and space to the decimal digits of a
// number (with its minus sign).
func formatSigned(digits string, sp fmtSpec) string {
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	intPart, frac := digits, ""
	if k := strings.IndexByte(digits, '.'); k >= 0 {
		intPart, frac = digits[:k], digits[k:]
	}
	if strings.IndexByte(sp.flags, ',') >= 0 && len(intPart) > 3 {
		var g strings.Builder
		for k, d := range intPart {
			if k > 0 && (len(intPart)-k)%3 == 0 {
				g.WriteByte(',')
			}
			g.WriteRune(d)
		}
		intPart = g.String()
	}
	sign := ""
	switch {
	case neg:
		sign = "-"
	case strings.IndexByte(sp.flags, '+') >= 0:
		sign = "+"
	case strings.IndexByte(sp.flags, ' ') >= 0:
		sign = " "
	}
	return sign + intPart + frac
}

// formatFixed is %f: Java rounds HALF_UP on the shortest decimal form of
// the double (so %.2f of 2.675 is 2.68 and of 0.125 is 0.13, where Go's
// fmt gives 2.67 and 0.12), and pads with zeros past its digits.
func formatFixed(f float64, sp fmtSpec) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 0):
		return formatSigned(strings.TrimPrefix(fmtFloat(f), "+"), sp)
	}
	prec := sp.prec
	if prec < 0 {
		prec = 6
	}
	r := roundDecimal(f, int64(prec))
	s := strconv.FormatFloat(math.Abs(r), 'f', -1, 64)
	if k := strings.IndexByte(s, '.'); k < 0 {
		if prec > 0 {
			s += "." + strings.Repeat("0", prec)
		}
	} else if n := len(s) - k - 1; n < prec {
		s += strings.Repeat("0", prec-n)
	} else if n > prec { // a value whose shortest form needs more digits
		s = strconv.FormatFloat(math.Abs(r), 'f', prec, 64)
	}
	if math.Signbit(r) {
		s = "-" + s
	}
	return formatSigned(s, sp)
}
