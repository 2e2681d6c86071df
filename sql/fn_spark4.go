package sql

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Functions of Spark 4's built-in list that pipelines meet: the cast
// aliases, elt, positive and negative, isnan and nanvl, div, width_bucket,
// conv and bin, the array helpers get, array_size and array_compact, and
// decode and encode.

func init() {
	fs := map[string]builtin{
		"elt":           {minArgs: 2, maxArgs: -1, compile: compileElt},
		"positive":      {minArgs: 1, maxArgs: 1, compile: compileSign},
		"negative":      {minArgs: 1, maxArgs: 1, compile: compileSign},
		"isnan":         {minArgs: 1, maxArgs: 1, compile: compileIsNaN},
		"nanvl":         {minArgs: 2, maxArgs: 2, compile: compileNaNvl},
		"div":           {minArgs: 2, maxArgs: 2, compile: compileDivFunc},
		"width_bucket":  {minArgs: 4, maxArgs: 4, compile: compileWidthBucket},
		"conv":          {minArgs: 3, maxArgs: 3, compile: compileConv},
		"bin":           {minArgs: 1, maxArgs: 1, compile: compileBin},
		"get":           {minArgs: 2, maxArgs: 2, compile: compileGet},
		"array_size":    {minArgs: 1, maxArgs: 1, compile: compileArraySize},
		"array_compact": {minArgs: 1, maxArgs: 1, compile: compileArrayCompact},
		"decode":        {minArgs: 2, maxArgs: -1, compile: compileDecode},
		"encode":        {minArgs: 2, maxArgs: 2, compile: compileEncode},
	}
	for _, name := range castAliases {
		fs[strings.ToLower(name)] = builtin{minArgs: 1, maxArgs: 1, compile: compileCastAlias}
	}
	register(fs)
}

// castAliases are the types whose name, called as a function, casts its
// argument: int(x) is CAST(x AS INT).
var castAliases = []string{"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "STRING", "BINARY", "DATE", "TIMESTAMP"}

func compileCastAlias(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	return c.cast(&syntax.Cast{Pos: e.Pos, X: e.Args[0], Type: &syntax.Type{Pos: e.Pos, Name: strings.ToUpper(name)}})
}

// compileSign: positive(x) is +x, negative(x) is -x (which overflows as
// -x does).
func compileSign(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	op := "+"
	if name == "negative" {
		op = "-"
	}
	return c.unary(&syntax.Unary{Pos: e.Pos, Op: op, X: e.Args[0]})
}

// compileElt: elt(n, a1, a2, ...) is a_n; NULL when n is NULL; an n out of
// 1..count is INVALID_ARRAY_INDEX, as with ANSI on.
func compileElt(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	n, err := c.intArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	args, err := c.args(&syntax.FuncCall{Args: e.Args[1:]})
	if err != nil {
		return nil, err
	}
	t := domain.TypeString
	if binaryArgs(args) {
		t = domain.TypeBytes
	}
	for i, a := range args {
		switch k := a.typ().Kind; {
		case k == t.Kind || k == domain.KindNull:
			args[i] = retype(a, t)
		case scalarCastable(k):
			args[i] = c.implicit(a, t, e.Args[i+1].Position())
		default:
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i+1].Position(), "elt takes strings or binary values, found %s", a.typ())
		}
	}
	p := e.Pos
	return &valuesNode{args: append([]node{n}, args...), t: t, nullSafe: true, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		if a[0].IsNull() {
			return domain.Null(), nil
		}
		i := a[0].AsInt()
		if i < 1 || i > int64(len(a)-1) {
			return domain.Value{}, exprErr(domain.CodeInvalidArrayIndex, p, "elt: the index %d is out of bounds: there are %d inputs", i, len(a)-1)
		}
		return a[i], nil
	}}, nil
}

// binaryArgs reports whether every argument is binary (or NULL), and one is.
func binaryArgs(args []node) bool {
	some := false
	for _, a := range args {
		switch a.typ().Kind {
		case domain.KindBytes:
			some = true
		case domain.KindNull:
		default:
			return false
		}
	}
	return some
}

// compileIsNaN: isnan(x) is true for NaN, false otherwise, NULL included.
func compileIsNaN(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.doubleArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return isNaN(x), nil
}

func isNaN(x node) node {
	return &valuesNode{args: []node{x}, t: domain.TypeBool, nullSafe: true, row: func(a []domain.Value) (domain.Value, error) {
		return domain.Bool(!a[0].IsNull() && math.IsNaN(a[0].AsFloat())), nil
	}}
}

// compileNaNvl: nanvl(a, b) is a unless a is NaN, then b, which is
// evaluated only on those rows.
func compileNaNvl(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	a, err := c.doubleArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	b, err := c.doubleArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	return &caseNode{conds: []node{isNaN(a)}, results: []node{b, a}, t: domain.TypeFloat64}, nil
}

func compileDivFunc(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	return c.intDiv(&syntax.Binary{Pos: e.Pos, Op: "DIV", L: e.Args[0], R: e.Args[1]})
}

// intDiv compiles a DIV b: the quotient truncated toward zero, as a bigint;
// a zero divisor is DIVIDE_BY_ZERO and a quotient beyond bigint
// ARITHMETIC_OVERFLOW, as with ANSI on.
func (c *compiler) intDiv(e *syntax.Binary) (node, error) {
	var args [2]node
	for i, x := range []syntax.Expr{e.L, e.R} {
		n, err := c.compile(x)
		if err != nil {
			return nil, err
		}
		switch k := n.typ().Kind; {
		case k == domain.KindNull, k == domain.KindString, k == domain.KindDecimal:
			n = implicit(n, domain.TypeFloat64, x.Position())
		case !isNumeric(k):
			return nil, exprErr(domain.CodeDatatypeMismatch, x.Position(), "div needs numbers, found %s", n.typ())
		}
		args[i] = n
	}
	p := e.Pos
	if args[0].typ().Kind == domain.KindInt64 && args[1].typ().Kind == domain.KindInt64 {
		return &fnNode{args: args[:], t: domain.TypeInt64, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
			for i, x := range a[0].Ints {
				if isNullAt(out.Nulls, i) {
					continue
				}
				switch y := a[1].Ints[i]; {
				case y == 0:
					return exprErr(domain.CodeDivideByZero, p, "%d div 0: division by zero", x)
				case y == -1 && x == math.MinInt64:
					return exprErr(domain.CodeArithmeticOverflow, p, "%d div -1 overflows bigint", x)
				default:
					out.Ints[i] = x / y
				}
			}
			return nil
		}}, nil
	}
	for i := range args {
		args[i] = implicit(args[i], domain.TypeFloat64, p)
	}
	return &fnNode{args: args[:], t: domain.TypeInt64, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i, x := range a[0].Floats {
			if isNullAt(out.Nulls, i) {
				continue
			}
			y := a[1].Floats[i]
			if y == 0 {
				return exprErr(domain.CodeDivideByZero, p, "%s div 0: division by zero", fmtFloat(x))
			}
			q := math.Trunc(x / y)
			if math.IsNaN(q) || q < math.MinInt64 || q >= math.MaxInt64 {
				return exprErr(domain.CodeArithmeticOverflow, p, "%s div %s does not fit a bigint", fmtFloat(x), fmtFloat(y))
			}
			out.Ints[i] = int64(q)
		}
		return nil
	}}, nil
}

// compileWidthBucket: width_bucket(v, min, max, n) is the bucket of v among
// n equal buckets from min to max (max may be below min): 0 below the
// first, n+1 past the last; NULL when n is not positive, min equals max, or
// a bound or v is NaN or a bound infinite, as in Spark.
func compileWidthBucket(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	var args []node
	for i := 0; i < 3; i++ {
		x, err := c.doubleArg(e, i, name)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	n, err := c.intArg(e, 3, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: append(args, n), t: domain.TypeInt64, row: func(a []domain.Value) (domain.Value, error) {
		v, lo, hi, n := a[0].AsFloat(), a[1].AsFloat(), a[2].AsFloat(), a[3].AsInt()
		b, ok := widthBucket(v, lo, hi, n)
		if !ok {
			return domain.Null(), nil
		}
		return domain.Int(b), nil
	}}, nil
}

func widthBucket(v, min, max float64, n int64) (int64, bool) {
	if n <= 0 || n == math.MaxInt64 || min == max || math.IsNaN(min) || math.IsNaN(max) || math.IsNaN(v) || math.IsInf(min, 0) || math.IsInf(max, 0) {
		return 0, false
	}
	lower, upper := math.Min(min, max), math.Max(min, max)
	if min < max {
		switch {
		case v < lower:
			return 0, true
		case v >= upper:
			return n + 1, true
		}
		return int64(float64(n)*(v-lower)/(max-min)) + 1, true
	}
	switch {
	case v > upper:
		return 0, true
	case v <= lower:
		return n + 1, true
	}
	return int64(float64(n)*(upper-v)/(min-max)) + 1, true
}

// compileConv: conv(num, from, to) writes the number num, read in base
// from, in base to (2 to 36; a negative to writes it signed); digits stop
// at the first character that is not one. NULL for a base out of range or
// an empty num; a number past 64 bits is ARITHMETIC_OVERFLOW, as with ANSI
// on. It follows Spark's NumberConverter, two's complement included.
func compileConv(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err == nil {
		x, err = asString(x, e.Args[0].Position(), name)
	}
	if err != nil {
		return nil, err
	}
	from, err := c.intArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	to, err := c.intArg(e, 2, name)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	return &valuesNode{args: []node{x, from, to}, t: domain.TypeString, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		s, ok, overflow := convert(a[0].AsString(), a[1].AsInt(), a[2].AsInt())
		if overflow {
			return domain.Value{}, exprErr(domain.CodeArithmeticOverflow, p, "conv(%q, %d, %d) overflows 64 bits", a[0].AsString(), a[1].AsInt(), a[2].AsInt())
		}
		if !ok {
			return domain.Null(), nil
		}
		return domain.String(s), nil
	}}, nil
}

func convert(n string, from, to int64) (string, bool, bool) {
	abs := to
	if abs < 0 {
		abs = -abs
	}
	if from < 2 || from > 36 || abs < 2 || abs > 36 || n == "" {
		return "", false, false
	}
	negative := n[0] == '-'
	if negative {
		n = n[1:]
	}
	radix := uint64(from)
	var v uint64
	bound := (math.MaxUint64 - radix) / radix // -1 - radix, unsigned
	for i := 0; i < len(n); i++ {
		d := digitValue(n[i])
		if d < 0 || uint64(d) >= radix {
			break
		}
		if int64(v) >= int64(bound) && (math.MaxUint64-uint64(d))/radix < v {
			return "", false, true
		}
		v = v*radix + uint64(d)
	}
	if negative && to > 0 {
		if int64(v) < 0 {
			v = math.MaxUint64
		} else {
			v = -v
		}
	}
	if to < 0 && int64(v) < 0 {
		v = -v
		negative = true
	}
	out := strings.ToUpper(strconv.FormatUint(v, int(abs)))
	if negative && to < 0 {
		out = "-" + out
	}
	return out, true, false
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return -1
}

// compileBin: bin(n) is n in base 2, a negative n in two's complement.
func compileBin(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.intArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Ints {
			out.Strs[i] = strconv.FormatUint(uint64(v), 2)
		}
		return nil
	}}, nil
}

// compileGet: get(array, i) is the element at i counted from 0, NULL when
// i is out of bounds.
func compileGet(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	i, err := c.intArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{arr, i}, t: elemOf(arr.typ()), row: func(a []domain.Value) (domain.Value, error) {
		items, i := a[0].AsList(), a[1].AsInt()
		if i < 0 || i >= int64(len(items)) {
			return domain.Null(), nil
		}
		return items[i], nil
	}}, nil
}

// compileArraySize: array_size(a) is the number of elements of an array.
func compileArraySize(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{arr}, t: domain.TypeInt32, row: func(a []domain.Value) (domain.Value, error) {
		return domain.Int(int64(len(a[0].AsList()))), nil
	}}, nil
}

// compileArrayCompact: array_compact(a) is a without its NULL elements.
func compileArrayCompact(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{arr}, t: arr.typ(), row: func(a []domain.Value) (domain.Value, error) {
		var out []domain.Value
		for _, x := range a[0].AsList() {
			if !x.IsNull() {
				out = append(out, x)
			}
		}
		return domain.List(out...), nil
	}}, nil
}

// compileDecode: decode(bin, charset) decodes bytes to text;
// decode(x, search1, result1, ..., [default]) is the result of the first
// search equal to x, NULL equal to NULL (a CASE of <=>), else default.
func compileDecode(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	if len(e.Args) == 2 {
		return c.charsetFunc(e, name)
	}
	cs := &syntax.Case{Pos: e.Pos}
	rest := e.Args[1:]
	for ; len(rest) >= 2; rest = rest[2:] {
		cs.Whens = append(cs.Whens, &syntax.When{Pos: rest[0].Position(),
			Cond: &syntax.Binary{Pos: rest[0].Position(), Op: "<=>", L: e.Args[0], R: rest[0]}, Result: rest[1]})
	}
	if len(rest) == 1 {
		cs.Else = rest[0]
	}
	return c.caseExpr(cs)
}

func compileEncode(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	return c.charsetFunc(e, name)
}

// charsets are the character sets decode and encode take, as Java names
// them (case does not matter).
var charsets = []string{"US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16", "UTF-32"}

// charsetFunc compiles decode(bin, charset) and encode(str, charset). Bytes
// that are not text in the charset, or text it cannot hold, are
// MALFORMED_CHARACTER_CODING, as Spark 4 raises it.
func (c *compiler) charsetFunc(e *syntax.FuncCall, name string) (node, error) {
	var x node
	var err error
	if name == "decode" {
		x, err = c.bytesArg(e, 0, name)
	} else {
		x, err = c.compile(e.Args[0])
		if err == nil {
			x, err = asString(x, e.Args[0].Position(), name)
		}
	}
	if err != nil {
		return nil, err
	}
	cs, err := c.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	if k := cs.typ().Kind; k != domain.KindString && k != domain.KindNull {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "%s needs the charset as a string, found %s", name, cs.typ())
	}
	cs = retype(cs, domain.TypeString)
	t := domain.TypeString
	if name == "encode" {
		t = domain.TypeBytes
	}
	p := e.Pos
	return &valuesNode{args: []node{x, cs}, t: t, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		charset := strings.ToUpper(strings.TrimSpace(a[1].AsString()))
		known := false
		for _, k := range charsets {
			known = known || k == charset
		}
		if !known {
			return domain.Value{}, exprErr(domain.CodeInvalidParameterValueCharset, p, "%s: unknown charset %q; the charsets are %s", name, a[1].AsString(), strings.Join(charsets, ", "))
		}
		if name == "encode" {
			b, ok := encodeText(a[0].AsString(), charset)
			if !ok {
				return domain.Value{}, exprErr(domain.CodeMalformedCharacterCoding, p, "encode: the text cannot be written in %s", charset)
			}
			return domain.Bytes(b), nil
		}
		s, ok := decodeText([]byte(a[0].AsString()), charset)
		if !ok {
			return domain.Value{}, exprErr(domain.CodeMalformedCharacterCoding, p, "decode: the bytes are not %s text", charset)
		}
		return domain.String(s), nil
	}}, nil
}

func decodeText(b []byte, charset string) (string, bool) {
	switch charset {
	case "US-ASCII":
		for _, x := range b {
			if x >= 0x80 {
				return "", false
			}
		}
		return string(b), true
	case "ISO-8859-1":
		r := make([]rune, len(b))
		for i, x := range b {
			r[i] = rune(x)
		}
		return string(r), true
	case "UTF-8":
		return string(b), utf8.Valid(b)
	case "UTF-32":
		if len(b)%4 != 0 {
			return "", false
		}
		r := make([]rune, len(b)/4)
		for i := range r {
			r[i] = rune(binary.BigEndian.Uint32(b[4*i:]))
			if !utf8.ValidRune(r[i]) {
				return "", false
			}
		}
		return string(r), true
	}
	// UTF-16: big-endian unless a byte order mark says otherwise
	order := binary.ByteOrder(binary.BigEndian)
	switch {
	case charset == "UTF-16LE":
		order = binary.LittleEndian
	case charset == "UTF-16" && len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
		order, b = binary.LittleEndian, b[2:]
	case charset == "UTF-16" && len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
		b = b[2:]
	}
	if len(b)%2 != 0 {
		return "", false
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = order.Uint16(b[2*i:])
	}
	for i := 0; i < len(units); i++ { // a lone surrogate is malformed
		switch u := units[i]; {
		case u >= 0xD800 && u < 0xDC00:
			if i+1 == len(units) || units[i+1] < 0xDC00 || units[i+1] >= 0xE000 {
				return "", false
			}
			i++
		case u >= 0xDC00 && u < 0xE000:
			return "", false
		}
	}
	return string(utf16.Decode(units)), true
}

func encodeText(s string, charset string) ([]byte, bool) {
	switch charset {
	case "UTF-8":
		return []byte(s), utf8.ValidString(s)
	case "US-ASCII", "ISO-8859-1":
		limit := rune(0x80)
		if charset == "ISO-8859-1" {
			limit = 0x100
		}
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r >= limit {
				return nil, false
			}
			out = append(out, byte(r))
		}
		return out, true
	case "UTF-32":
		var out []byte
		for _, r := range s {
			out = binary.BigEndian.AppendUint32(out, uint32(r))
		}
		return out, true
	}
	var out []byte
	order := binary.AppendByteOrder(binary.BigEndian)
	switch charset {
	case "UTF-16LE":
		order = binary.LittleEndian
	case "UTF-16": // Java writes a byte order mark, then big-endian
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		out = order.AppendUint16(out, u)
	}
	return out, true
}

func init() {
	register(map[string]builtin{
		"isnull":             {minArgs: 1, maxArgs: 1, compile: compileIsNull},
		"isnotnull":          {minArgs: 1, maxArgs: 1, compile: compileIsNull},
		"equal_null":         {minArgs: 2, maxArgs: 2, compile: compileEqualNull},
		"typeof":             {minArgs: 1, maxArgs: 1, compile: compileTypeof},
		"factorial":          {minArgs: 1, maxArgs: 1, compile: compileFactorial},
		"bit_count":          {minArgs: 1, maxArgs: 1, compile: compileBitCount},
		"bit_get":            {minArgs: 2, maxArgs: 2, compile: compileBitGet},
		"getbit":             {minArgs: 2, maxArgs: 2, compile: compileBitGet},
		"shiftleft":          {minArgs: 2, maxArgs: 2, compile: compileShift},
		"shiftright":         {minArgs: 2, maxArgs: 2, compile: compileShift},
		"shiftrightunsigned": {minArgs: 2, maxArgs: 2, compile: compileShift},
		"find_in_set":        {minArgs: 2, maxArgs: 2, compile: compileFindInSet},
		"luhn_check":         {minArgs: 1, maxArgs: 1, compile: compileLuhnCheck},
		"assert_true":        {minArgs: 1, maxArgs: 2, compile: compileAssertTrue},
		"raise_error":        {minArgs: 1, maxArgs: 1, compile: compileRaiseError},
	})
}

// compileIsNull: isnull(x) is x IS NULL, isnotnull(x) x IS NOT NULL.
func compileIsNull(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	return c.is(&syntax.Is{Pos: e.Pos, X: e.Args[0], Not: name == "isnotnull", What: "NULL"})
}

// compileEqualNull: equal_null(a, b) is a <=> b.
func compileEqualNull(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	return c.binary(&syntax.Binary{Pos: e.Pos, Op: "<=>", L: e.Args[0], R: e.Args[1]})
}

// compileTypeof: typeof(x) is the name of x's type, as Spark writes it.
func compileTypeof(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	return &litNode{t: domain.TypeString, v: domain.String(x.typ().String())}, nil
}

// compileFactorial: factorial(n) for n from 0 to 20, NULL otherwise.
func compileFactorial(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	n, err := c.intArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{n}, t: domain.TypeInt64, row: func(a []domain.Value) (domain.Value, error) {
		n := a[0].AsInt()
		if n < 0 || n > 20 {
			return domain.Null(), nil
		}
		f := int64(1)
		for k := int64(2); k <= n; k++ {
			f *= k
		}
		return domain.Int(f), nil
	}}, nil
}

// bitsArg compiles argument i of a bit function: an integer, or a boolean
// as 0 or 1.
func (c *compiler) bitsArg(e *syntax.FuncCall, i int, name string) (node, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	if x.typ().Kind == domain.KindBool {
		return implicit(x, domain.TypeInt64, e.Args[i].Position()), nil
	}
	return c.intArg(e, i, name)
}

func compileBitCount(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.bitsArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: domain.TypeInt64, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Ints {
			out.Ints[i] = int64(bits.OnesCount64(uint64(v)))
		}
		return nil
	}}, nil
}

// compileBitGet: bit_get(x, pos) is bit pos of x (0 the lowest); a pos
// outside 0..63 is INVALID_PARAMETER_VALUE.
func compileBitGet(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.intArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	pos, err := c.intArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	return &fnNode{args: []node{x, pos}, t: domain.TypeInt64, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			k := a[1].Ints[i]
			if k < 0 || k > 63 {
				return exprErr(domain.CodeInvalidParameterValue, p, "%s: the bit position %d is not from 0 to 63", name, k)
			}
			out.Ints[i] = (v >> k) & 1
		}
		return nil
	}}, nil
}

// compileShift: shiftleft(a, n) is a << n, shiftright arithmetic and
// shiftrightunsigned logical shifts; n is taken modulo 64, as Java does.
func compileShift(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.intArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	n, err := c.intArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x, n}, t: domain.TypeInt64, body: func(out *domain.Column, a []*domain.Column) error {
		for i, v := range a[0].Ints {
			k := uint(a[1].Ints[i]) & 63
			switch name {
			case "shiftleft":
				out.Ints[i] = v << k
			case "shiftright":
				out.Ints[i] = v >> k
			default:
				out.Ints[i] = int64(uint64(v) >> k)
			}
		}
		return nil
	}}, nil
}

// compileFindInSet: find_in_set(s, list) is the 1-based place of s among
// the comma-separated strings of list; 0 when absent or when s holds a
// comma.
func compileFindInSet(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeInt64, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) || strings.Contains(s, ",") {
				continue
			}
			for k, part := range strings.Split(a[1].Strs[i], ",") {
				if part == s {
					out.Ints[i] = int64(k + 1)
					break
				}
			}
		}
		return nil
	}}, nil
}

// stringArgs compiles every argument as a string (other scalars are cast).
func (c *compiler) stringArgs(e *syntax.FuncCall, name string) ([]node, error) {
	out := make([]node, len(e.Args))
	for i, a := range e.Args {
		x, err := c.compile(a)
		if err == nil {
			x, err = asString(x, a.Position(), name)
		}
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// compileLuhnCheck: luhn_check(s) is whether s is digits that pass the
// Luhn checksum (card numbers).
func compileLuhnCheck(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeBool, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if luhn(s) {
				out.Ints[i] = 1
			}
		}
		return nil
	}}, nil
}

func luhn(s string) bool {
	if s == "" {
		return false
	}
	sum := 0
	for k := 0; k < len(s); k++ {
		d := s[len(s)-1-k]
		if d < '0' || d > '9' {
			return false
		}
		v := int(d - '0')
		if k%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// compileAssertTrue: assert_true(cond[, message]) is NULL when cond is
// true, and otherwise fails the query with USER_RAISED_EXCEPTION.
func compileAssertTrue(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	cond, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if cond, err = c.expectBool(cond, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	msg := node(&litNode{t: domain.TypeString, v: domain.String(fmt.Sprintf("'%s' is not true!", fmt.Sprint(e.Args[0])))})
	if len(e.Args) == 2 {
		args, err := c.stringArgs(&syntax.FuncCall{Args: e.Args[1:]}, name)
		if err != nil {
			return nil, err
		}
		msg = args[0]
	}
	p := e.Pos
	return &valuesNode{args: []node{cond, msg}, t: domain.Type{Kind: domain.KindNull}, nullSafe: true, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		if !a[0].IsNull() && a[0].AsBool() {
			return domain.Null(), nil
		}
		return domain.Value{}, exprErr(domain.CodeUserRaisedException, p, "%s", a[1].AsString())
	}}, nil
}

// compileRaiseError: raise_error(message) fails the query with
// USER_RAISED_EXCEPTION on any row it is evaluated for.
func compileRaiseError(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	return &valuesNode{args: args, t: domain.Type{Kind: domain.KindNull}, nullSafe: true, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		return domain.Value{}, exprErr(domain.CodeUserRaisedException, p, "%s", a[0].AsString())
	}}, nil
}

func init() {
	register(map[string]builtin{
		"dayname":           {minArgs: 1, maxArgs: 1, compile: compileDayName},
		"monthname":         {minArgs: 1, maxArgs: 1, compile: compileDayName},
		"array_append":      {minArgs: 2, maxArgs: 2, compile: compileArrayAdd},
		"array_prepend":     {minArgs: 2, maxArgs: 2, compile: compileArrayAdd},
		"array_insert":      {minArgs: 3, maxArgs: 3, compile: compileArrayInsert},
		"arrays_overlap":    {minArgs: 2, maxArgs: 2, compile: compileArraysOverlap},
		"array_repeat":      {minArgs: 2, maxArgs: 2, compile: compileArrayRepeat},
		"current_timezone":  {minArgs: 0, maxArgs: 0, compile: compileCurrentTimezone},
		"url_encode":        {minArgs: 1, maxArgs: 1, compile: compileURL},
		"url_decode":        {minArgs: 1, maxArgs: 1, compile: compileURL},
		"try_url_decode":    {minArgs: 1, maxArgs: 1, compile: compileURL},
		"is_valid_utf8":     {minArgs: 1, maxArgs: 1, compile: compileUTF8},
		"make_valid_utf8":   {minArgs: 1, maxArgs: 1, compile: compileUTF8},
		"validate_utf8":     {minArgs: 1, maxArgs: 1, compile: compileUTF8},
		"try_validate_utf8": {minArgs: 1, maxArgs: 1, compile: compileUTF8},
		"quote":             {minArgs: 1, maxArgs: 1, compile: compileQuote},
	})
}

var dayNames = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
var monthNames = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// compileDayName: dayname(d) is the day of the week of a date or timestamp
// ("Mon"), monthname(d) its month ("Jan").
func compileDayName(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	d, err := c.dateArg(e, 0)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{d}, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, days := range a[0].Ints {
			if name == "dayname" {
				out.Strs[i] = dayNames[((days+4)%7+7)%7] // 1970-01-01 was a Thursday
			} else {
				_, m, _ := civil(days)
				out.Strs[i] = monthNames[m-1]
			}
		}
		return nil
	}}, nil
}

// elemArg compiles argument i as an element of the arrays arr holds: of
// their element type, or NULL, or (for an array of NULLs) any type.
func (c *compiler) elemArg(e *syntax.FuncCall, i int, arr node, name string) (node, domain.Type, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, domain.Type{}, err
	}
	elem := elemOf(arr.typ())
	switch {
	case x.typ().Kind == domain.KindNull:
		return retype(x, elem), elem, nil
	case elem.Kind == domain.KindNull || x.typ().Equal(elem):
		return x, x.typ(), nil
	case elem.Kind == domain.KindFloat64 && isNumeric(x.typ().Kind):
		return implicit(x, elem, e.Args[i].Position()), elem, nil
	}
	if w, ok := widerType(elem, x.typ()); ok && w.Equal(elem) {
		return coerce(x, elem, e.Args[i].Position()), elem, nil // a decimal the array's holds
	}
	return nil, domain.Type{}, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s: the element is %s, the array holds %s", name, x.typ(), elem)
}

// compileArrayAdd: array_append(a, x) is a with x at its end,
// array_prepend(a, x) with x at its start; NULL when a is NULL.
func compileArrayAdd(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	x, elem, err := c.elemArg(e, 1, arr, name)
	if err != nil {
		return nil, err
	}
	return &valuesNode{args: []node{arr, x}, t: domain.ListOf(elem), nullSafe: true, row: func(a []domain.Value) (domain.Value, error) {
		if a[0].IsNull() {
			return domain.Null(), nil
		}
		items := a[0].AsList()
		out := make([]domain.Value, 0, len(items)+1)
		if name == "array_prepend" {
			out = append(append(out, a[1]), items...)
		} else {
			out = append(append(out, items...), a[1])
		}
		return domain.List(out...), nil
	}}, nil
}

// compileArrayInsert: array_insert(a, pos, x) is a with x at position pos,
// counted from 1, or from the end with a negative pos (-1 is after the last
// element); a position beyond the array pads it with NULLs. Position 0 is
// INVALID_INDEX_OF_ZERO; a NULL array or position gives NULL.
func compileArrayInsert(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	pos, err := c.intArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	x, elem, err := c.elemArg(e, 2, arr, name)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	return &valuesNode{args: []node{arr, pos, x}, t: domain.ListOf(elem), nullSafe: true, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		if a[0].IsNull() || a[1].IsNull() {
			return domain.Null(), nil
		}
		items, at := a[0].AsList(), a[1].AsInt()
		if at == 0 {
			return domain.Value{}, exprErr(domain.CodeInvalidIndexOfZero, p, "%s counts positions from 1 (or -1 from the end)", name)
		}
		idx := at - 1 // where x goes, 0-based
		if at < 0 {
			idx = int64(len(items)) + at + 1
		}
		const most = 1 << 20
		switch {
		case idx < 0: // before the start: x, then NULLs up to the array
			if -idx > most {
				return domain.Value{}, exprErr(domain.CodeInvalidLength, p, "%s would make an array of more than %d elements", name, most)
			}
			out := append([]domain.Value{a[2]}, make([]domain.Value, -idx)...)
			return domain.List(append(out, items...)...), nil
		case idx > int64(len(items)): // after the end: NULLs, then x
			if idx > most {
				return domain.Value{}, exprErr(domain.CodeInvalidLength, p, "%s would make an array of more than %d elements", name, most)
			}
			out := append(append([]domain.Value{}, items...), make([]domain.Value, idx-int64(len(items)))...)
			return domain.List(append(out, a[2])...), nil
		}
		out := make([]domain.Value, 0, len(items)+1)
		out = append(append(append(out, items[:idx]...), a[2]), items[idx:]...)
		return domain.List(out...), nil
	}}, nil
}

// compileArraysOverlap: arrays_overlap(a, b) is true when the arrays share
// a non-NULL element; otherwise NULL when both are non-empty and one holds
// a NULL, else false.
func compileArraysOverlap(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	a, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	b, err := c.nested(e, 1, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	ta, tb := elemOf(a.typ()), elemOf(b.typ())
	if ta.Kind != domain.KindNull && tb.Kind != domain.KindNull && !ta.Equal(tb) {
		if !isNumeric(ta.Kind) || !isNumeric(tb.Kind) {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Pos, "%s needs arrays of one element type, found %s and %s", name, a.typ(), b.typ())
		}
	}
	return &valuesNode{args: []node{a, b}, t: domain.TypeBool, row: func(v []domain.Value) (domain.Value, error) {
		x, y := v[0].AsList(), v[1].AsList()
		nulls := false
		for _, p := range x {
			if p.IsNull() {
				nulls = true
				continue
			}
			for _, q := range y {
				if q.IsNull() {
					nulls = true
				} else if domain.Compare(p, q) == 0 {
					return domain.Bool(true), nil
				}
			}
		}
		for _, q := range y {
			nulls = nulls || q.IsNull()
		}
		if nulls && len(x) > 0 && len(y) > 0 {
			return domain.Null(), nil
		}
		return domain.Bool(false), nil
	}}, nil
}

// compileArrayRepeat: array_repeat(x, n) is an array of n copies of x
// (empty for n below 1), NULL when n is NULL.
func compileArrayRepeat(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	n, err := c.intArg(e, 1, name)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	return &valuesNode{args: []node{x, n}, t: domain.ListOf(x.typ()), nullSafe: true, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		if a[1].IsNull() {
			return domain.Null(), nil
		}
		k := a[1].AsInt()
		if k > maxSequenceLength {
			return domain.Value{}, exprErr(domain.CodeCollectionSizeLimit, p, "array_repeat: %d elements are more than an array holds (%d)", k, maxSequenceLength)
		}
		out := make([]domain.Value, max(k, 0))
		for i := range out {
			out[i] = a[0]
		}
		return domain.List(out...), nil
	}}, nil
}

func compileCurrentTimezone(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	zone := "UTC"
	if c.sess.TimeZone != nil {
		zone = c.sess.TimeZone.String()
	}
	return &litNode{t: domain.TypeString, v: domain.String(zone)}, nil
}

// compileURL: url_encode and url_decode as Java's URLEncoder and
// URLDecoder do them in UTF-8 (a space is +; letters, digits and .-*_ stay
// as they are). Text that is not a URL encoding is CANNOT_DECODE_URL for
// url_decode, NULL for try_url_decode.
func compileURL(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	p := e.Pos
	return &fnNode{args: args, t: domain.TypeString, fails: name == "url_decode", body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			if name == "url_encode" {
				out.Strs[i] = urlEncode(s)
				continue
			}
			d, ok := urlDecode(s)
			switch {
			case ok:
				out.Strs[i] = d
			case name == "try_url_decode":
				setNull(out, i)
			default:
				return exprErr(domain.CodeCannotDecodeURL, p, "url_decode: %q is not a URL encoding", s)
			}
		}
		return nil
	}}, nil
}

func urlEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '.', ch == '-', ch == '*', ch == '_':
			b.WriteByte(ch)
		case ch == ' ':
			b.WriteByte('+')
		default:
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(ch)>>4, 16)+strconv.FormatUint(uint64(ch)&15, 16)))
		}
	}
	return b.String()
}

func urlDecode(s string) (string, bool) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(s) {
				return "", false
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			out = append(out, byte(v))
			i += 2
		default:
			out = append(out, ch)
		}
	}
	return domain.ValidUTF8(string(out)), true
}

// compileUTF8: is_valid_utf8(s), make_valid_utf8(s) (each bad byte
// replaced by U+FFFD), validate_utf8(s) (INVALID_UTF8_STRING when not
// valid) and try_validate_utf8(s) (NULL when not valid).
func compileUTF8(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if x.typ().Kind == domain.KindBytes { // checked as the text it would be
		x = retype(x, domain.TypeString)
	} else if x, err = asString(x, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	t := domain.TypeString
	if name == "is_valid_utf8" {
		t = domain.TypeBool
	}
	p := e.Pos
	return &fnNode{args: []node{x}, t: t, fails: name == "validate_utf8", body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			valid := utf8.ValidString(s)
			switch name {
			case "is_valid_utf8":
				if valid {
					out.Ints[i] = 1
				}
			case "make_valid_utf8":
				out.Strs[i] = domain.ValidUTF8(s)
			default:
				switch {
				case valid:
					out.Strs[i] = s
				case name == "try_validate_utf8":
					setNull(out, i)
				default:
					return exprErr(domain.CodeInvalidUTF8String, p, "validate_utf8: the string is not valid UTF-8")
				}
			}
		}
		return nil
	}}, nil
}

var quoteEscapes = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// compileQuote: quote(s) is s in single quotes, its quotes and
// backslashes escaped with a backslash.
func compileQuote(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			out.Strs[i] = "'" + quoteEscapes.Replace(s) + "'"
		}
		return nil
	}}, nil
}

func init() {
	register(map[string]builtin{
		"mask":             {minArgs: 1, maxArgs: 5, compile: compileMask},
		"overlay":          {minArgs: 3, maxArgs: 4, compile: compileOverlay},
		"map_from_entries": {minArgs: 1, maxArgs: 1, compile: compileMapFromEntries},
		"map_concat":       {minArgs: 0, maxArgs: -1, compile: compileMapConcat},
	})
}

// compileMask: mask(s[, upper, lower, digit, other]) replaces upper-case
// letters with upper ('X'), lower-case with lower ('x'), digits with digit
// ('n') and, when other is given, every other character with it; a NULL
// replacement leaves its class as it is.
func compileMask(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	defaults := []string{"X", "x", "n", ""}
	return &valuesNode{args: args, t: domain.TypeString, nullSafe: true, row: func(a []domain.Value) (domain.Value, error) {
		if a[0].IsNull() {
			return domain.Null(), nil
		}
		var with [4]rune // 0: keep the class
		for k := range with {
			r := defaults[k]
			if 1+k < len(a) {
				r = a[1+k].AsString()
				if a[1+k].IsNull() {
					r = ""
				}
			}
			if r != "" {
				with[k], _ = utf8.DecodeRuneInString(r)
			}
		}
		var b strings.Builder
		for _, ch := range a[0].AsString() {
			class := 3
			switch {
			case ch >= 'A' && ch <= 'Z':
				class = 0
			case ch >= 'a' && ch <= 'z':
				class = 1
			case ch >= '0' && ch <= '9':
				class = 2
			}
			if with[class] != 0 {
				ch = with[class]
			}
			b.WriteRune(ch)
		}
		return domain.String(b.String()), nil
	}}, nil
}

// compileOverlay: overlay(s, r, pos[, len]) replaces len characters of s
// from the 1-based pos with r (len defaults to r's length).
func compileOverlay(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	strs, err := c.stringArgs(&syntax.FuncCall{Args: e.Args[:2]}, name)
	if err != nil {
		return nil, err
	}
	args := strs
	for i := 2; i < len(e.Args); i++ {
		n, err := c.intArg(e, i, name)
		if err != nil {
			return nil, err
		}
		args = append(args, n)
	}
	return &valuesNode{args: args, t: domain.TypeString, row: func(a []domain.Value) (domain.Value, error) {
		s, r := []rune(a[0].AsString()), []rune(a[1].AsString())
		pos, n := a[2].AsInt(), int64(len(r))
		if len(a) == 4 {
			n = a[3].AsInt()
		}
		cut := func(i int64) int64 { return min(max(i, 0), int64(len(s))) }
		head := cut(pos - 1)
		tail := cut(pos - 1 + max(n, 0))
		return domain.String(string(s[:head]) + string(r) + string(s[tail:])), nil
	}}, nil
}

// compileMapFromEntries: map_from_entries(array of (key, value) structs).
func compileMapFromEntries(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	arr, err := c.nested(e, 0, domain.KindList, name)
	if err != nil {
		return nil, err
	}
	st := elemOf(arr.typ())
	if st.Kind != domain.KindStruct || len(st.Fields) != 2 {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs an array of structs of a key and a value, found %s", name, arr.typ())
	}
	kt, vt := st.Fields[0].Type, st.Fields[1].Type
	if err := mapKeyCheck(kt, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	p := e.Pos
	return &valuesNode{args: []node{arr}, t: domain.MapOf(kt, vt), fails: true, row: func(a []domain.Value) (domain.Value, error) {
		var ks, vs []domain.Value
		for _, entry := range a[0].AsList() {
			if entry.IsNull() {
				return domain.Null(), nil // Spark: a NULL entry makes the map NULL
			}
			f := entry.Fields()
			ks, vs = append(ks, f[0]), append(vs, f[1])
		}
		return buildMap(ks, vs, p)
	}}, nil
}

// compileMapConcat: map_concat(m1, m2, ...) is the union of the maps; a key
// in two of them is DUPLICATED_MAP_KEY, as with Spark's default policy.
func compileMapConcat(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	var args []node
	var t domain.Type
	for i := range e.Args {
		m, err := c.nested(e, i, domain.KindMap, name)
		if err != nil {
			return nil, err
		}
		typed := m.typ().Key.Kind != domain.KindNull // not a NULL map
		switch {
		case typed && t.Kind == domain.KindNull:
			t = m.typ()
		case typed && !m.typ().Equal(t):
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[i].Position(), "%s needs maps of one type, found %s and %s", name, t, m.typ())
		}
		args = append(args, m)
	}
	if len(args) == 0 {
		return &litNode{t: domain.MapOf(domain.TypeString, domain.TypeString), v: domain.Map()}, nil
	}
	if t.Kind == domain.KindNull {
		t = args[0].typ()
	}
	p := e.Pos
	return &valuesNode{args: args, t: t, fails: true, row: func(a []domain.Value) (domain.Value, error) {
		var ks, vs []domain.Value
		for _, m := range a {
			for _, entry := range m.Entries() {
				f := entry.Fields()
				ks, vs = append(ks, f[0]), append(vs, f[1])
			}
		}
		return buildMap(ks, vs, p)
	}}, nil
}

func init() {
	register(map[string]builtin{
		"str_to_map": {minArgs: 1, maxArgs: 3, compile: compileStrToMap},
		"shuffle":    {minArgs: 1, maxArgs: 2, compile: compileRandomFunc},
		"uniform":    {minArgs: 2, maxArgs: 3, compile: compileRandomFunc},
		"randstr":    {minArgs: 1, maxArgs: 2, compile: compileRandomFunc},
	})
}

// compileStrToMap: str_to_map(text[, pairDelim, keyValueDelim]) splits
// text into pairs around pairDelim (',' by default), each into a key and
// a value around the first keyValueDelim (':'); both are Java regular
// expressions, as in Spark. A pair without the delimiter has a NULL value;
// a key given twice is DUPLICATED_MAP_KEY.
func compileStrToMap(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	for len(args) < 3 {
		args = append(args, &litNode{t: domain.TypeString, v: domain.String([]string{",", ":"}[len(args)-1])})
	}
	p := e.Pos
	patterns := map[string]*javaRegex{}
	pattern := func(s string) (*javaRegex, error) {
		re, ok := patterns[s]
		if !ok {
			var err error
			if re, err = compileJavaRegex(s, p); err != nil {
				return nil, err
			}
			patterns[s] = re
		}
		return re, nil
	}
	return &valuesNode{args: args, t: domain.MapOf(domain.TypeString, domain.TypeString), fails: true, row: func(a []domain.Value) (domain.Value, error) {
		pairRe, err := pattern(a[1].AsString())
		if err != nil {
			return domain.Value{}, err
		}
		kvRe, err := pattern(a[2].AsString())
		if err != nil {
			return domain.Value{}, err
		}
		pairs, err := splitJava(a[0].AsString(), pairRe, -1, p)
		if err != nil {
			return domain.Value{}, err
		}
		ks, vs := make([]domain.Value, len(pairs)), make([]domain.Value, len(pairs))
		for i, pair := range pairs {
			kv, err := splitJava(pair, kvRe, 2, p)
			if err != nil {
				return domain.Value{}, err
			}
			ks[i], vs[i] = domain.String(kv[0]), domain.Null()
			if len(kv) == 2 {
				vs[i] = domain.String(kv[1])
			}
		}
		return buildMap(ks, vs, p)
	}}, nil
}

// compileRandomFunc compiles shuffle(array[, seed]) (the elements in a
// random order), uniform(min, max[, seed]) (a number from min up to max,
// a bigint when both are) and randstr(length[, seed]) (that many random
// letters and digits). A seed, a constant integer, makes the values the
// same on every run for the same rows of a micro-batch, as rand(seed)
// does; they are not Spark's values.
func compileRandomFunc(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	nArgs := map[string]int{"shuffle": 1, "uniform": 2, "randstr": 1}[name]
	var args []node
	for i := 0; i < nArgs; i++ {
		var x node
		var err error
		switch name {
		case "shuffle":
			x, err = c.nested(e, i, domain.KindList, name)
		case "uniform":
			x, err = c.numArg(e, i, name, domain.TypeInt64)
		default:
			x, err = c.intArg(e, i, name)
		}
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	var seed *uint64
	if len(e.Args) > nArgs {
		x, err := c.compile(e.Args[nArgs])
		if err != nil {
			return nil, err
		}
		s, ok := constInt(x)
		if !ok {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[nArgs].Position(), "the seed of %s must be a constant integer", name)
		}
		u := uint64(s)
		seed = &u
	}
	t := domain.TypeString
	switch name {
	case "shuffle":
		t = args[0].typ()
	case "uniform":
		t = domain.TypeInt64
		if args[0].typ().Kind == domain.KindFloat64 || args[1].typ().Kind == domain.KindFloat64 {
			t = domain.TypeFloat64
			for i := range args {
				args[i] = implicit(args[i], t, e.Args[i].Position())
			}
		}
	}
	return &randomNode{args: args, t: t, name: name, seed: seed, pos: e.Pos}, nil
}

// randomNode evaluates a random function with a source of its own for
// each batch.
type randomNode struct {
	args []node
	t    domain.Type
	name string
	seed *uint64
	pos  syntax.Pos
}

func (n *randomNode) typ() domain.Type { return n.t }
func (n *randomNode) mayFail() bool    { return n.name == "randstr" || anyMayFail(n.args) }

const randChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func (n *randomNode) eval(b *domain.Batch) (*domain.Column, error) {
	src := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	if n.seed != nil {
		src = rand.New(rand.NewPCG(*n.seed, 0))
	}
	body := func(a []domain.Value) (domain.Value, error) {
		switch n.name {
		case "shuffle":
			items := append([]domain.Value(nil), a[0].AsList()...)
			src.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
			return domain.List(items...), nil
		case "uniform":
			if n.t.Kind == domain.KindFloat64 {
				lo, hi := a[0].AsFloat(), a[1].AsFloat()
				return domain.Float(lo + src.Float64()*(hi-lo)), nil
			}
			lo, hi := min(a[0].AsInt(), a[1].AsInt()), max(a[0].AsInt(), a[1].AsInt())
			if hi == lo {
				return domain.Int(lo), nil
			}
			return domain.Int(lo + int64(src.Uint64N(uint64(hi-lo)))), nil
		}
		k := a[0].AsInt()
		if k < 0 || k > maxSequenceLength {
			return domain.Value{}, exprErr(domain.CodeInvalidParameterValue, n.pos, "randstr: the length %d is not from 0 to %d", k, maxSequenceLength)
		}
		s := make([]byte, k)
		for i := range s {
			s[i] = randChars[src.IntN(len(randChars))]
		}
		return domain.String(string(s)), nil
	}
	return (&valuesNode{args: n.args, t: n.t, fails: n.mayFail(), row: body}).eval(b)
}
