package sql

import (
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"rlike":              {minArgs: 2, maxArgs: 2, compile: compileRegexLike},
		"regexp":             {minArgs: 2, maxArgs: 2, compile: compileRegexLike},
		"regexp_like":        {minArgs: 2, maxArgs: 2, compile: compileRegexLike},
		"regexp_extract":     {minArgs: 2, maxArgs: 3, compile: compileRegexExtract},
		"regexp_extract_all": {minArgs: 2, maxArgs: 3, compile: compileRegexExtract},
		"regexp_replace":     {minArgs: 3, maxArgs: 4, compile: compileRegexReplace},
		"regexp_count":       {minArgs: 2, maxArgs: 2, compile: compileRegexCount},
		"regexp_substr":      {minArgs: 2, maxArgs: 2, compile: compileRegexSubstr},
		"split":              {minArgs: 2, maxArgs: 3, compile: compileSplit},
	})
}

// regexBody computes row i of a regex function with the pattern of the row.
type regexBody func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error

// regexFunc compiles a function whose second argument is a Java pattern: a
// constant pattern is compiled once here (its errors are compile errors),
// others once per distinct pattern of a batch. check, when set, validates a
// compiled pattern against the other constant arguments.
func (c *compiler) regexFunc(e *syntax.FuncCall, name string, t domain.Type, kinds []domain.Kind, check func(*javaRegex) error, body regexBody) (node, error) {
	args, err := c.argsAs(e, name, kinds...)
	if err != nil {
		return nil, err
	}
	patPos := e.Args[1].Position()
	var constRe *javaRegex
	var constErr error // a bad constant pattern fails when a row meets it, as in Spark 4
	if lit, ok := args[1].(*litNode); ok && !lit.v.IsNull() {
		if constRe, constErr = compileJavaRegex(lit.v.AsString(), patPos); constErr == nil && check != nil {
			constErr = check(constRe)
		}
	}
	return &fnNode{args: args, t: t, fails: true, body: func(out *domain.Column, a []*domain.Column) error {
		var cache map[string]*javaRegex
		for i := 0; i < out.Len(); i++ {
			if isNullAt(out.Nulls, i) {
				continue
			}
			if constErr != nil {
				return constErr
			}
			re := constRe
			if re == nil {
				p := a[1].Strs[i]
				if re = cache[p]; re == nil {
					var err error
					if re, err = compileJavaRegex(p, patPos); err != nil {
						return err
					}
					if check != nil {
						if err := check(re); err != nil {
							return err
						}
					}
					if cache == nil {
						cache = map[string]*javaRegex{}
					}
					cache[p] = re
				}
			}
			if err := body(out, a, i, re); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

var strPattern = []domain.Kind{domain.KindString, domain.KindString}

// compileRegexLike: rlike(s, p), regexp(s, p), regexp_like(s, p) and the
// operators s RLIKE p, s REGEXP p are true when p matches a part of s.
func compileRegexLike(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	n, err := c.regexFunc(e, name, domain.TypeBool, strPattern, nil, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
		out.Ints[i] = b2i(re.matches(a[0].Strs[i]))
		return nil
	})
	if err != nil {
		return nil, err
	}
	fn := n.(*fnNode)
	if _, ok := fn.args[1].(*litNode); ok {
		fn.fails = false // a constant pattern was checked; matching cannot fail
	}
	return fn, nil
}

// rlike compiles x [NOT] RLIKE | REGEXP pattern.
func (c *compiler) rlike(e *syntax.Like) (node, error) {
	if e.Escape != nil {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Escape.Position(), "%s takes no ESCAPE", e.Op)
	}
	call := &syntax.FuncCall{Pos: e.Pos, Name: &syntax.Name{Pos: e.Pos, Parts: []*syntax.Ident{{Pos: e.Pos, Name: strings.ToLower(e.Op)}}}, Args: []syntax.Expr{e.X, e.Pattern}}
	n, err := compileRegexLike(c, call, strings.ToLower(e.Op))
	if err != nil {
		return nil, err
	}
	if e.Not {
		n = &notNode{x: n}
	}
	return n, nil
}

// groupOf is the text of group g of the match loc in s; a group that took
// no part in the match is the empty string, as in Spark.
func groupOf(s string, loc []int, g int) string {
	if loc[2*g] < 0 {
		return ""
	}
	return s[loc[2*g]:loc[2*g+1]]
}

// compileRegexExtract: regexp_extract(s, p[, g]) is group g (1 by default)
// of the first match, the empty string without a match; regexp_extract_all
// is group g of every match. A g outside 0 to the number of groups is
// INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX.
func compileRegexExtract(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	if len(e.Args) == 2 {
		e = &syntax.FuncCall{Pos: e.Pos, Name: e.Name, Args: append(append([]syntax.Expr{}, e.Args...), &syntax.Literal{Pos: e.Pos, Kind: syntax.NumberLit, Text: "1"})}
	}
	pos := e.Args[2].Position()
	checkGroup := func(re *javaRegex, g int64) error {
		if g < 0 || g > int64(re.re.NumSubexp()) {
			return exprErr(domain.CodeRegexGroupIndex, pos, "%s: the pattern '%s' has %d group(s), group %d was asked", name, re.src, re.re.NumSubexp(), g)
		}
		return nil
	}
	g3, err := c.compile(e.Args[2])
	if err != nil {
		return nil, err
	}
	var check func(*javaRegex) error
	if g, ok := constInt(g3); ok {
		check = func(re *javaRegex) error { return checkGroup(re, g) }
	}
	kinds := []domain.Kind{domain.KindString, domain.KindString, domain.KindInt64}
	if name == "regexp_extract_all" {
		return c.regexFunc(e, name, domain.ListOf(domain.TypeString), kinds, check, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
			g := a[2].Ints[i]
			if err := checkGroup(re, g); err != nil {
				return err
			}
			s := a[0].Strs[i]
			locs, err := re.findAll(s, pos)
			if err != nil {
				return err
			}
			items := make([]domain.Value, len(locs))
			for k, loc := range locs {
				items[k] = domain.String(groupOf(s, loc, int(g)))
			}
			out.Values[i] = domain.List(items...)
			return nil
		})
	}
	return c.regexFunc(e, name, domain.TypeString, kinds, check, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
		g := a[2].Ints[i]
		if err := checkGroup(re, g); err != nil {
			return err
		}
		s := a[0].Strs[i]
		if err := re.checkInput(s, pos); err != nil {
			return err
		}
		if loc := re.re.FindStringSubmatchIndex(s); loc != nil {
			out.Strs[i] = groupOf(s, loc, int(g))
		}
		return nil
	})
}

// compileRegexReplace: regexp_replace(s, p, r[, position]) replaces every
// match at or after character position (1-based, a positive constant) by r,
// a Java replacement string ($1, ${name}, \$).
func compileRegexReplace(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	start := int64(1)
	if len(e.Args) == 4 {
		p, err := c.compile(e.Args[3])
		if err != nil {
			return nil, err
		}
		var ok bool
		if start, ok = constInt(p); !ok || start < 1 {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[3].Position(), "the position of %s must be a positive integer constant", name)
		}
		e = &syntax.FuncCall{Pos: e.Pos, Name: e.Name, Args: e.Args[:3]}
	}
	pos := e.Pos
	repPos := e.Args[2].Position()
	parse := func(rep string, re *javaRegex) ([]replPiece, error) {
		pieces, msg := parseJavaReplacement(rep, re.re)
		if msg != "" {
			return nil, exprErr(domain.CodeInvalidPattern, repPos, "the replacement '%s' of %s is not valid: %s", rep, name, msg)
		}
		return pieces, nil
	}
	// a constant replacement of a constant pattern is parsed once, here
	var constPieces []replPiece
	pat, patOK := e.Args[1].(*syntax.Literal)
	rep, repOK := e.Args[2].(*syntax.Literal)
	if patOK && repOK && pat.Kind == syntax.StringLit && rep.Kind == syntax.StringLit {
		// a bad pattern fails when a row meets it (regexFunc); a bad
		// replacement of a good one, now
		if re, err := compileJavaRegex(pat.Value, pat.Pos); err == nil {
			if constPieces, err = parse(rep.Value, re); err != nil {
				return nil, err
			}
		}
	}
	return c.regexFunc(e, name, domain.TypeString, []domain.Kind{domain.KindString}, nil, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
		s, pieces := a[0].Strs[i], constPieces
		if pieces == nil {
			var err error
			if pieces, err = parse(a[2].Strs[i], re); err != nil {
				return err
			}
		}
		from := charOffset(s, start-1)
		if from < 0 {
			out.Strs[i] = s
			return nil
		}
		tail := s[from:]
		locs, err := re.findAll(tail, pos)
		if err != nil {
			return err
		}
		var sb strings.Builder
		sb.WriteString(s[:from])
		last := 0
		for _, loc := range locs {
			sb.WriteString(tail[last:loc[0]])
			for _, p := range pieces {
				if p.group < 0 {
					sb.WriteString(p.text)
				} else {
					sb.WriteString(groupOf(tail, loc, p.group))
				}
			}
			last = loc[1]
		}
		sb.WriteString(tail[last:])
		out.Strs[i] = sb.String()
		return nil
	})
}

// charOffset is the byte offset of character k of s, len(s) for k at the
// end, -1 past it.
func charOffset(s string, k int64) int {
	if k <= 0 {
		return 0
	}
	n := int64(0)
	for b := range s {
		if n == k {
			return b
		}
		n++
	}
	if n == k {
		return len(s)
	}
	return -1
}

// compileRegexCount: regexp_count(s, p) is the number of matches.
func compileRegexCount(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	pos := e.Pos
	return c.regexFunc(e, name, domain.TypeInt64, strPattern, nil, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
		locs, err := re.findAll(a[0].Strs[i], pos)
		out.Ints[i] = int64(len(locs))
		return err
	})
}

// compileRegexSubstr: regexp_substr(s, p) is the first match, NULL without
// one or when the first match is empty (as Spark 4: regexp_substr('abc',
// 'x*') is NULL).
func compileRegexSubstr(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	pos := e.Pos
	return c.regexFunc(e, name, domain.TypeString, strPattern, nil, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
		s := a[0].Strs[i]
		if err := re.checkInput(s, pos); err != nil {
			return err
		}
		if loc := re.re.FindStringIndex(s); loc != nil && loc[1] > loc[0] {
			out.Strs[i] = s[loc[0]:loc[1]]
		} else {
			setNull(out, i)
		}
		return nil
	})
}

// compileSplit: split(s, p[, limit]) splits s around the matches of p, as
// Java's String.split with limit (at most limit parts when limit > 0, all
// of them and trailing empty strings kept otherwise); an empty pattern
// splits into characters, as Spark does.
func compileSplit(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	kinds := []domain.Kind{domain.KindString, domain.KindString, domain.KindInt64}
	if len(e.Args) == 2 {
		e = &syntax.FuncCall{Pos: e.Pos, Name: e.Name, Args: append(append([]syntax.Expr{}, e.Args...), &syntax.Literal{Pos: e.Pos, Kind: syntax.NumberLit, Text: "-1"})}
	}
	pos := e.Pos
	return c.regexFunc(e, name, domain.ListOf(domain.TypeString), kinds, nil, func(out *domain.Column, a []*domain.Column, i int, re *javaRegex) error {
		parts, err := splitJava(a[0].Strs[i], re, a[2].Ints[i], pos)
		if err != nil {
			return err
		}
		items := make([]domain.Value, len(parts))
		for k, p := range parts {
			items[k] = domain.String(p)
		}
		out.Values[i] = domain.List(items...)
		return nil
	})
}

func splitJava(s string, re *javaRegex, limit int64, pos syntax.Pos) ([]string, error) {
	if re.src == "" && s != "" {
		n := int64(utf8.RuneCountInString(s))
		if limit > 0 && limit < n {
			n = limit
		}
		parts := make([]string, 0, n)
		for int64(len(parts)) < n-1 {
			_, w := utf8.DecodeRuneInString(s)
			parts = append(parts, s[:w])
			s = s[w:]
		}
		return append(parts, s), nil
	}
	locs, err := re.findAll(s, pos)
	if err != nil {
		return nil, err
	}
	var parts []string
	index := 0
	for _, loc := range locs {
		if limit > 0 && int64(len(parts)) >= limit-1 {
			break
		}
		if index == 0 && loc[0] == 0 && loc[1] == 0 {
			continue // a zero-width match at the start makes no leading empty part
		}
		parts = append(parts, s[index:loc[0]])
		index = loc[1]
	}
	if index == 0 {
		return []string{s}, nil
	}
	return append(parts, s[index:]), nil
}
