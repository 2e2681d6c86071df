package sql

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"initcap":    {minArgs: 1, maxArgs: 1, compile: compileInitcap},
		"left":       {minArgs: 2, maxArgs: 2, compile: compileLeftRight},
		"right":      {minArgs: 2, maxArgs: 2, compile: compileLeftRight},
		"concat_ws":  {minArgs: 1, maxArgs: -1, compile: compileConcatWs},
		"replace":    {minArgs: 2, maxArgs: 3, compile: compileReplace},
		"translate":  {minArgs: 3, maxArgs: 3, compile: compileTranslate},
		"split_part": {minArgs: 3, maxArgs: 3, compile: compileSplitPart},
		"instr":      {minArgs: 2, maxArgs: 2, compile: compileInstr},
		"locate":     {minArgs: 2, maxArgs: 3, compile: compileLocate},
		"position":   {minArgs: 2, maxArgs: 3, compile: compileLocate},
		"contains":   {minArgs: 2, maxArgs: 2, compile: compileContains},
		"startswith": {minArgs: 2, maxArgs: 2, compile: compileContains},
		"endswith":   {minArgs: 2, maxArgs: 2, compile: compileContains},
		"lpad":       {minArgs: 2, maxArgs: 3, compile: compilePad},
		"rpad":       {minArgs: 2, maxArgs: 3, compile: compilePad},
		"repeat":     {minArgs: 2, maxArgs: 2, compile: compileRepeat},
		"reverse":    {minArgs: 1, maxArgs: 1, compile: compileReverse},
		"ascii":      {minArgs: 1, maxArgs: 1, compile: compileASCII},
		"chr":        {minArgs: 1, maxArgs: 1, compile: compileChr},
		"char":       {minArgs: 1, maxArgs: 1, compile: compileChr},
		"btrim":      {minArgs: 1, maxArgs: 2, compile: compileBtrim},
	})
}

// maxStringBytes bounds the strings lpad, rpad and repeat build: Spark's
// strings are Java arrays, which stop at 2 GiB; sluice stops earlier, with
// INVALID_PARAMETER_VALUE.LENGTH, instead of exhausting memory.
const maxStringBytes = 1 << 30

// argsAs compiles the arguments of e, bringing argument i to kinds[i]
// (string or bigint) as Spark's implicit casts do; arguments past the end of
// kinds take its last kind.
func (c *compiler) argsAs(e *syntax.FuncCall, name string, kinds ...domain.Kind) ([]node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	for i := range args {
		k := kinds[min(i, len(kinds)-1)]
		p := e.Args[i].Position()
		if k == domain.KindString {
			if args[i], err = asString(args[i], p, name); err != nil {
				return nil, err
			}
			continue
		}
		if args[i], err = asInt(args[i], p, name); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// asInt brings an argument to bigint: a string is cast (and may fail), a
// double is refused as Spark's ANSI mode does not narrow it implicitly.
func asInt(n node, p syntax.Pos, what string) (node, error) {
	switch n.typ().Kind {
	case domain.KindInt64:
		return n, nil
	case domain.KindNull:
		return retype(n, domain.TypeInt64), nil
	case domain.KindString:
		return implicit(n, domain.TypeInt64, p), nil
	}
	return nil, exprErr(domain.CodeDatatypeMismatch, p, "%s needs an integer, found %s", what, n.typ())
}

// strBody is a fnNode body computing row i for the rows not NULL.
func strBody(f func(out *domain.Column, a []*domain.Column, i int) error) func(*domain.Column, []*domain.Column) error {
	return func(out *domain.Column, a []*domain.Column) error {
		for i := 0; i < out.Len(); i++ {
			if isNullAt(out.Nulls, i) {
				continue
			}
			if err := f(out, a, i); err != nil {
				return err
			}
		}
		return nil
	}
}

// compileInitcap: initcap lower-cases the string and upper-cases (title
// cases) the first letter of every word; words are separated by spaces only,
// as in Spark.
func compileInitcap(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	return c.strFunc(e, domain.TypeString, func(out, in *domain.Column, i int) {
		s := strings.ToLower(in.Strs[i])
		var sb strings.Builder
		sb.Grow(len(s))
		start := true
		for _, r := range s {
			if start {
				r = unicode.ToTitle(r)
			}
			sb.WriteRune(r)
			start = r == ' '
		}
		out.Strs[i] = sb.String()
	})
}

// compileLeftRight: left(s, n) is the first n characters, right(s, n) the
// last n; n <= 0 gives the empty string.
func compileLeftRight(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	right := name == "right"
	return &fnNode{args: args, t: domain.TypeString, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s, n := a[0].Strs[i], a[1].Ints[i]
		switch {
		case n <= 0:
			out.Strs[i] = ""
		case right:
			out.Strs[i] = substringSQL(s, -min(n, math.MaxInt32), math.MaxInt32)
		default:
			out.Strs[i] = substringSQL(s, 1, n)
		}
		return nil
	})}, nil
}

// concatWsNode is concat_ws(sep, ...): the arguments that are not NULL
// joined by sep; an array argument contributes its elements that are not
// NULL. NULL only when sep is.
type concatWsNode struct {
	args []node // args[0] is the separator
}

func compileConcatWs(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	for i, a := range args {
		t := a.typ()
		if i > 0 && t.Kind == domain.KindList && t.Elem != nil && (t.Elem.Kind == domain.KindString || t.Elem.Kind == domain.KindNull) {
			continue
		}
		if args[i], err = asString(a, e.Args[i].Position(), name); err != nil {
			return nil, err
		}
	}
	return &concatWsNode{args: args}, nil
}

func (n *concatWsNode) typ() domain.Type { return domain.TypeString }
func (n *concatWsNode) mayFail() bool    { return anyMayFail(n.args) }

func (n *concatWsNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	cols, err := evalAll(n.args, b)
	if err != nil {
		return nil, err
	}
	out := newCol(domain.KindString, rows)
	out.Nulls = unionNulls(rows, cols[0])
	var sb strings.Builder
	for i := 0; i < rows; i++ {
		if isNullAt(out.Nulls, i) {
			continue
		}
		sep := cols[0].Strs[i]
		sb.Reset()
		first := true
		add := func(s string) {
			if !first {
				sb.WriteString(sep)
			}
			sb.WriteString(s)
			first = false
		}
		for _, c := range cols[1:] {
			if c.IsNull(i) {
				continue
			}
			if c.Kind != domain.KindList {
				add(c.Strs[i])
				continue
			}
			for _, v := range c.Values[i].AsList() {
				if !v.IsNull() {
					add(v.AsString())
				}
			}
		}
		out.Strs[i] = sb.String()
	}
	return out, nil
}

// compileReplace: replace(s, search[, with]) replaces every occurrence of
// search; an empty search leaves s as it is (Spark).
func compileReplace(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeString, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s, search, with := a[0].Strs[i], a[1].Strs[i], ""
		if len(a) > 2 {
			with = a[2].Strs[i]
		}
		if search == "" {
			out.Strs[i] = s
		} else {
			out.Strs[i] = strings.ReplaceAll(s, search, with)
		}
		return nil
	})}, nil
}

// compileTranslate: translate(s, from, to) replaces each character of s
// found in from by the character at the same place in to, or drops it when
// to is shorter; the first occurrence of a character in from counts.
func compileTranslate(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		// the map is rebuilt only when from or to change, so a constant pair
		// is built once per batch
		var lastFrom, lastTo string
		var dict map[rune]rune // -1: drop
		var sb strings.Builder
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			from, to := a[1].Strs[i], a[2].Strs[i]
			if dict == nil || from != lastFrom || to != lastTo {
				dict, lastFrom, lastTo = translateMap(from, to), from, to
			}
			sb.Reset()
			for _, r := range s {
				if t, ok := dict[r]; !ok {
					sb.WriteRune(r)
				} else if t >= 0 {
					sb.WriteRune(t)
				}
			}
			out.Strs[i] = sb.String()
		}
		return nil
	}}, nil
}

func translateMap(from, to string) map[rune]rune {
	dict := map[rune]rune{}
	tr := []rune(to)
	for k, r := range []rune(from) {
		if _, seen := dict[r]; seen {
			continue
		}
		if k < len(tr) {
			dict[r] = tr[k]
		} else {
			dict[r] = -1
		}
	}
	return dict
}

// compileSplitPart: split_part(s, delim, n) is the n-th part of s split at
// delim (n < 0 counts from the end), the empty string past the last part; n = 0 is
// INVALID_INDEX_OF_ZERO. An empty delimiter does not split.
func compileSplitPart(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindString, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	pos := e.Args[2].Position()
	return &fnNode{args: args, t: domain.TypeString, fails: true, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s, delim, n := a[0].Strs[i], a[1].Strs[i], a[2].Ints[i]
		if n == 0 {
			return exprErr(domain.CodeInvalidIndexOfZero, pos, "split_part('%s', '%s', 0): parts are numbered from 1 (or from -1 at the end)", s, delim)
		}
		parts := []string{s}
		if delim != "" {
			parts = strings.Split(s, delim)
		}
		k := int64(len(parts))
		switch {
		case n > k || n < -k:
			out.Strs[i] = ""
		case n > 0:
			out.Strs[i] = parts[n-1]
		default:
			out.Strs[i] = parts[k+n]
		}
		return nil
	})}, nil
}

// indexFrom is the 0-based character index of sub in s at or after
// character start, or -1; an empty sub is found at 0 whatever start is
// (Spark's UTF8String.indexOf).
func indexFrom(s, sub string, start int64) int64 {
	if sub == "" {
		return 0
	}
	b, c := 0, int64(0)
	for b < len(s) && c < start {
		_, w := utf8.DecodeRuneInString(s[b:])
		b += w
		c++
	}
	k := strings.Index(s[b:], sub)
	if k < 0 {
		return -1
	}
	return c + int64(utf8.RuneCountInString(s[b:b+k]))
}

// compileInstr: instr(s, sub) is the 1-based character position of sub in
// s, 0 when absent.
func compileInstr(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeInt64, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		out.Ints[i] = indexFrom(a[0].Strs[i], a[1].Strs[i], 0) + 1
		return nil
	})}, nil
}

// locateNode is locate(sub, s[, pos]) and position(sub, s[, pos]): the
// 1-based position of sub in s at or after pos, 0 when absent or pos < 1.
// As in Spark (after Hive), a NULL pos gives 0, not NULL.
type locateNode struct {
	sub, s, start node
}

func compileLocate(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindString, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	n := &locateNode{sub: args[0], s: args[1], start: &litNode{t: domain.TypeInt64, v: domain.Int(1)}}
	if len(args) > 2 {
		n.start = args[2]
	}
	return n, nil
}

func (n *locateNode) typ() domain.Type { return domain.TypeInt64 }
func (n *locateNode) mayFail() bool    { return anyMayFail([]node{n.sub, n.s, n.start}) }

func (n *locateNode) eval(b *domain.Batch) (*domain.Column, error) {
	sub, err := n.sub.eval(b)
	if err != nil {
		return nil, err
	}
	s, err := n.s.eval(b)
	if err != nil {
		return nil, err
	}
	start, err := n.start.eval(b)
	if err != nil {
		return nil, err
	}
	rows := b.Len()
	out := newCol(domain.KindInt64, rows)
	nulls := make([]bool, rows)
	for i := 0; i < rows; i++ {
		if start.IsNull(i) {
			continue // 0
		}
		if sub.IsNull(i) || s.IsNull(i) {
			nulls[i] = true
			continue
		}
		if p := start.Ints[i]; p >= 1 {
			out.Ints[i] = indexFrom(s.Strs[i], sub.Strs[i], p-1) + 1
		}
	}
	out.Nulls = dropNulls(nulls)
	return out, nil
}

// compileContains: contains, startswith and endswith of two strings or two
// binaries; an empty second argument is always found.
func compileContains(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	if args[0].typ().Kind != domain.KindBytes || args[1].typ().Kind != domain.KindBytes {
		if args, err = c.argsAs(e, name, domain.KindString); err != nil {
			return nil, err
		}
	}
	f := strings.Contains
	switch name {
	case "startswith":
		f = strings.HasPrefix
	case "endswith":
		f = strings.HasSuffix
	}
	return &fnNode{args: args, t: domain.TypeBool, body: func(out *domain.Column, a []*domain.Column) error {
		x, y := a[0].Strs, a[1].Strs
		for i := range out.Ints {
			out.Ints[i] = b2i(f(x[i], y[i]))
		}
		return nil
	}}, nil
}

// compilePad: lpad(s, n[, pad]) and rpad(s, n[, pad]) bring s to n
// characters, cutting it or filling it with repetitions of pad (a space by
// default); an empty pad only cuts.
func compilePad(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindInt64, domain.KindString)
	if err != nil {
		return nil, err
	}
	if len(args) == 2 {
		args = append(args, &litNode{t: domain.TypeString, v: domain.String(" ")})
	}
	left, pos := name == "lpad", e.Pos
	return &fnNode{args: args, t: domain.TypeString, fails: true, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s, n, pad := a[0].Strs[i], a[1].Ints[i], a[2].Strs[i]
		chars := int64(utf8.RuneCountInString(s))
		if n <= chars || pad == "" {
			out.Strs[i] = substringSQL(s, 1, n)
			return nil
		}
		if n > maxStringBytes {
			return exprErr(domain.CodeInvalidLength, pos, "%s to %d characters is longer than sluice allows (%d)", name, n, maxStringBytes)
		}
		need := n - chars
		padChars := int64(utf8.RuneCountInString(pad))
		fill := strings.Repeat(pad, int(need/padChars)) + substringSQL(pad, 1, need%padChars)
		if left {
			out.Strs[i] = fill + s
		} else {
			out.Strs[i] = s + fill
		}
		return nil
	})}, nil
}

// compileRepeat: repeat(s, n) is s n times; n <= 0 gives the empty string.
func compileRepeat(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	pos := e.Pos
	return &fnNode{args: args, t: domain.TypeString, fails: true, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s, n := a[0].Strs[i], a[1].Ints[i]
		switch {
		case n <= 0 || s == "":
			out.Strs[i] = ""
		case n > maxStringBytes/int64(len(s)):
			return exprErr(domain.CodeInvalidLength, pos, "repeat of a %d-byte string %d times is longer than sluice allows (%d bytes)", len(s), n, maxStringBytes)
		default:
			out.Strs[i] = strings.Repeat(s, int(n))
		}
		return nil
	})}, nil
}

// compileReverse: reverse of a string, by characters. Arrays are reversed
// by the array functions.
// compileReverse: reverse(s) reverses the characters of a string and
// reverse(a) the elements of an array.
func compileReverse(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if x.typ().Kind == domain.KindList {
		return &valuesNode{args: []node{x}, t: x.typ(), row: func(a []domain.Value) (domain.Value, error) {
			out := slices.Clone(a[0].AsList())
			slices.Reverse(out)
			return domain.List(out...), nil
		}}, nil
	}
	if x, err = asString(x, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if !isNullAt(out.Nulls, i) {
				r := []rune(s)
				slices.Reverse(r)
				out.Strs[i] = string(r)
			}
		}
		return nil
	}}, nil
}

// compileASCII: ascii(s) is the code point of the first character, 0 for the empty string.
func compileASCII(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	return c.strFunc(e, domain.TypeInt64, func(out, in *domain.Column, i int) {
		if r, w := utf8.DecodeRuneInString(in.Strs[i]); w > 0 {
			out.Ints[i] = int64(r)
		}
	})
}

// compileChr: chr(n) is the character with code n mod 256 (Latin-1), the empty string
// for a negative n.
func compileChr(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
		for i, n := range a[0].Ints {
			if n >= 0 {
				out.Strs[i] = string(rune(n & 0xFF))
			}
		}
		return nil
	}}, nil
}

// compileBtrim: btrim(s[, chars]) trims both ends; unlike trim(chars, s),
// the string comes first.
func compileBtrim(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	t := &syntax.Trim{Pos: e.Pos, Side: "BOTH", X: e.Args[0]}
	if len(e.Args) == 2 {
		t.Chars = e.Args[1]
	}
	return c.trim(t)
}
