package sql

import (
	suggestpkg "github.com/sluicehq/sluice/internal/suggest"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"regexp_instr":    {minArgs: 2, maxArgs: 3, compile: compileRegexInstr},
		"octet_length":    {minArgs: 1, maxArgs: 1, compile: compileByteLength},
		"bit_length":      {minArgs: 1, maxArgs: 1, compile: compileByteLength},
		"substring_index": {minArgs: 3, maxArgs: 3, compile: compileSubstringIndex},
		"space":           {minArgs: 1, maxArgs: 1, compile: compileSpace},
		"levenshtein":     {minArgs: 2, maxArgs: 3, compile: compileLevenshtein},
		"soundex":         {minArgs: 1, maxArgs: 1, compile: compileSoundex},
	})
}

// compileRegexInstr: regexp_instr(s, p[, g]) is the 1-based character
// position where group g (0, the whole match, by default) of the first
// match starts; 0 without a match or when the group took no part.
func compileRegexInstr(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	if len(e.Args) == 2 {
		e = &syntax.FuncCall{Pos: e.Pos, Name: e.Name, Args: append(append([]syntax.Expr{}, e.Args...), &syntax.Literal{Pos: e.Pos, Kind: syntax.NumberLit, Text: "0"})}
	}
	pos := e.Args[2].Position()
	kinds := []domain.Kind{domain.KindString, domain.KindString, domain.KindInt64}
	return c.regexFunc(e, name, domain.TypeInt64, kinds, nil, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
		s, g := a[0].Strs[i], a[2].Ints[i]
		if g < 0 || g > int64(re.re.NumSubexp()) {
			return exprErr(domain.CodeRegexGroupIndex, pos, "%s: the pattern '%s' has %d group(s), group %d was asked", name, re.src, re.re.NumSubexp(), g)
		}
		if err := re.checkInput(s, pos); err != nil {
			return err
		}
		if loc := re.re.FindStringSubmatchIndex(s); loc != nil && loc[2*g] >= 0 {
			out.Ints[i] = int64(utf8.RuneCountInString(s[:loc[2*g]])) + 1
		}
		return nil
	})
}

// compileByteLength: octet_length is the length in bytes of a string (as
// UTF-8) or binary, bit_length eight times that.
func compileByteLength(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	unit := int64(1)
	if name == "bit_length" {
		unit = 8
	}
	return c.bytesFunc(e, name, domain.TypeInt64, func(out *domain.Column, b string, i int) error {
		out.Ints[i] = int64(len(b)) * unit
		return nil
	})
}

// compileSubstringIndex: substring_index(s, delim, n) is s before the n-th
// delim (n > 0) or after the n-th delim from the end (n < 0); all of s when
// it has fewer delims, the empty string for n = 0 or an empty delim.
func compileSubstringIndex(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindString, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeString, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s, delim, n := a[0].Strs[i], a[1].Strs[i], a[2].Ints[i]
		switch {
		case n == 0 || delim == "":
		case n > 0:
			at := -len(delim)
			for k := int64(0); k < n; k++ {
				next := strings.Index(s[at+len(delim):], delim)
				if next < 0 {
					out.Strs[i] = s
					return nil
				}
				at += len(delim) + next
			}
			out.Strs[i] = s[:at]
		default:
			at := len(s)
			for k := int64(0); k > n; k-- {
				next := strings.LastIndex(s[:at], delim)
				if next < 0 {
					out.Strs[i] = s
					return nil
				}
				at = next
			}
			out.Strs[i] = s[at+len(delim):]
		}
		return nil
	})}, nil
}

// compileSpace: space(n) is n spaces, the empty string for n <= 0.
func compileSpace(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	pos := e.Pos
	return &fnNode{args: args, t: domain.TypeString, fails: true, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		n := a[0].Ints[i]
		if n > maxStringBytes {
			return exprErr(domain.CodeInvalidLength, pos, "space(%d) is longer than sluice allows (%d)", n, maxStringBytes)
		}
		if n > 0 {
			out.Strs[i] = strings.Repeat(" ", int(n))
		}
		return nil
	})}, nil
}

// compileLevenshtein: levenshtein(a, b[, threshold]) is the edit distance
// in characters; with a threshold, -1 when the distance exceeds it.
func compileLevenshtein(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindString, domain.KindInt64)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args, t: domain.TypeInt64, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		d := int64(suggestpkg.Distance(a[0].Strs[i], a[1].Strs[i]))
		if len(a) > 2 && d > a[2].Ints[i] {
			d = -1
		}
		out.Ints[i] = d
		return nil
	})}, nil
}

// soundexCodes are the American Soundex digits of A to Z; 7 marks H and W,
// which do not separate equal codes.
const soundexCodes = "01230127022455012623017202"

// compileSoundex: soundex(s) as Spark computes it: a string that does not
// start with an ASCII letter is returned as it is.
func compileSoundex(c *compiler, e *syntax.FuncCall, _ string) (node, error) {
	return c.strFunc(e, domain.TypeString, func(out, in *domain.Column, i int) {
		out.Strs[i] = soundex(in.Strs[i])
	})
}

func soundex(s string) string {
	upper := func(b byte) (byte, bool) {
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		return b, 'A' <= b && b <= 'Z'
	}
	if s == "" {
		return s
	}
	first, ok := upper(s[0])
	if !ok {
		return s
	}
	sx := []byte{first, '0', '0', '0'}
	n := 1
	last := soundexCodes[first-'A']
	for k := 1; k < len(s) && n < 4; k++ {
		b, ok := upper(s[k])
		if !ok {
			last = '0'
			continue
		}
		code := soundexCodes[b-'A']
		if code == '7' {
			continue
		}
		if code != '0' && code != last {
			sx[n] = code
			n++
		}
		last = code
	}
	return string(sx)
}
