package sql

import (
	"errors"
	"regexp"
	resyntax "regexp/syntax"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// javaRegex is a Spark (Java) regular expression run by Go's RE2 engine.
//
// Java syntax RE2 does not have (lookaround, backreferences, possessive
// quantifiers, atomic groups, class intersection and nesting, some escapes
// and inline flags) is UNSUPPORTED_REGEX rather than a different match. The
// remaining differences are bridged:
//   - Java's . does not match the line terminators \r, \u0085, \u2028 and
//     \u2029 (nor \n): without an s flag it is translated to say so;
//   - Java's $ (without the m flag) also matches before a line terminator
//     that ends the input: the boolean tests retry on the input without it,
//     the functions that return matches refuse such an input
//     (UNSUPPORTED_REGEX) rather than give another result;
//   - Java's find finds an empty match right after a non-empty one, which Go
//     skips: findAll adds it back (a pattern that needs it and has anchors or
//     word boundaries is refused).
//
// Known differences left: with the i flag Java folds only ASCII letters,
// RE2 all of Unicode; \s does not match \x0B in RE2; with the m flag ^ and
// $ see only \n as a line break; \b is ASCII in RE2 (as in Java 19 and
// later), where Java 17 counts any letter or digit as a word character. Matching counts characters, where Java
// counts UTF-16 units (different only for characters outside the BMP in
// regexp_replace positions).
type javaRegex struct {
	re        *regexp.Regexp
	src       string
	dollarEnd bool // a $ without the m flag
	emptyToo  bool // can match both empty and non-empty text
	anchored  bool // has ^ $ \A \z \b or \B
}

// compileJavaRegex compiles a Java pattern; the error is UNSUPPORTED_REGEX
// for Java-only syntax, INVALID_PARAMETER_VALUE.PATTERN for a bad pattern.
func compileJavaRegex(pat string, pos syntax.Pos) (*javaRegex, error) {
	goPat, why := translateJavaRegex(pat)
	switch {
	case strings.HasPrefix(why, unknownFlag):
		return nil, exprErr(domain.CodeInvalidPattern, pos, "the pattern '%s' has %s: Java's are i, d, m, s, u, x and U", pat, why)
	case why != "":
		return nil, exprErr(domain.CodeUnsupportedRegex, pos, "the pattern '%s' uses %s, which Java has and RE2 does not", pat, why)
	}
	re, err := regexp.Compile(goPat)
	if err != nil {
		var se *resyntax.Error
		if errors.As(err, &se) && se.Code == resyntax.ErrInvalidCharRange && (strings.HasPrefix(se.Expr, `\p`) || strings.HasPrefix(se.Expr, `\P`)) {
			return nil, exprErr(domain.CodeUnsupportedRegex, pos, "the pattern '%s' uses the character class %s, which Java has and RE2 does not", pat, se.Expr)
		}
		return nil, exprErr(domain.CodeInvalidPattern, pos, "the pattern '%s' is not a valid regular expression: %v", pat, err)
	}
	r := &javaRegex{re: re, src: pat}
	tree, err := resyntax.Parse(goPat, resyntax.Perl)
	if err == nil {
		r.emptyToo = canMatchEmpty(tree) && canMatchText(tree)
		walkRegex(tree, func(t *resyntax.Regexp) {
			switch t.Op {
			case resyntax.OpBeginLine, resyntax.OpEndLine, resyntax.OpBeginText, resyntax.OpEndText, resyntax.OpWordBoundary, resyntax.OpNoWordBoundary:
				r.anchored = true
			}
			if t.Op == resyntax.OpEndText && t.Flags&resyntax.WasDollar != 0 {
				r.dollarEnd = true
			}
		})
	}
	return r, nil
}

func walkRegex(t *resyntax.Regexp, f func(*resyntax.Regexp)) {
	f(t)
	for _, s := range t.Sub {
		walkRegex(s, f)
	}
}

func canMatchEmpty(t *resyntax.Regexp) bool {
	switch t.Op {
	case resyntax.OpLiteral:
		return len(t.Rune) == 0
	case resyntax.OpCharClass, resyntax.OpAnyChar, resyntax.OpAnyCharNotNL, resyntax.OpNoMatch:
		return false
	case resyntax.OpCapture, resyntax.OpPlus:
		return canMatchEmpty(t.Sub[0])
	case resyntax.OpRepeat:
		return t.Min == 0 || canMatchEmpty(t.Sub[0])
	case resyntax.OpConcat:
		for _, s := range t.Sub {
			if !canMatchEmpty(s) {
				return false
			}
		}
		return true
	case resyntax.OpAlternate:
		for _, s := range t.Sub {
			if canMatchEmpty(s) {
				return true
			}
		}
		return false
	}
	return true // empty match, anchors, star, quest
}

func canMatchText(t *resyntax.Regexp) bool {
	switch t.Op {
	case resyntax.OpLiteral:
		return len(t.Rune) > 0
	case resyntax.OpCharClass, resyntax.OpAnyChar, resyntax.OpAnyCharNotNL:
		return true
	case resyntax.OpRepeat:
		return t.Max != 0 && canMatchText(t.Sub[0])
	case resyntax.OpCapture, resyntax.OpStar, resyntax.OpPlus, resyntax.OpQuest, resyntax.OpConcat, resyntax.OpAlternate:
		for _, s := range t.Sub {
			if canMatchText(s) {
				return true
			}
		}
	}
	return false
}

// unknownFlag begins what translateJavaRegex says of an inline flag that
// Java does not have either: an invalid pattern, not an unsupported one.
const unknownFlag = "the unknown inline flag "

// javaDot is Java's . without DOTALL: anything but a line terminator.
const javaDot = `[^\n\r\x{85}\x{2028}\x{2029}]`

// translateJavaRegex rewrites a Java pattern for RE2, or says which Java-only
// construct it uses.
func translateJavaRegex(p string) (string, string) {
	dotAll := strings.Contains(p, "(?") && inlineFlags(p, 's')
	var b strings.Builder
	class := 0 // depth in [...]
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			if i+1 == len(p) {
				b.WriteByte(c)
				continue
			}
			n := p[i+1]
			switch {
			case n == 'Q': // \Q...\E is literal text in both
				end := strings.Index(p[i+2:], `\E`)
				if end < 0 {
					b.WriteString(p[i:])
					return b.String(), ""
				}
				b.WriteString(p[i : i+2+end+2])
				i += 1 + end + 2
				continue
			case class == 0 && n >= '1' && n <= '9', n == 'k':
				return "", "a backreference (\\" + string(n) + ")"
			case strings.IndexByte("GZRXhHvVecN", n) >= 0:
				return "", "the escape \\" + string(n)
			case n == 'u' && i+6 <= len(p) && isHex(p[i+2:i+6]):
				b.WriteString(`\x{` + p[i+2:i+6] + `}`)
				i += 5
				continue
			}
			b.WriteString(p[i : i+2])
			i++
			continue
		}
		if class > 0 {
			switch {
			case c == '[' && i+1 < len(p) && p[i+1] == ':': // [:alpha:] in both
				end := strings.Index(p[i:], ":]")
				if end < 0 {
					end = 0
				}
				b.WriteString(p[i : i+end+1])
				i += end
				continue
			case c == '[':
				return "", "a character class inside a character class (union)"
			case c == '&' && i+1 < len(p) && p[i+1] == '&':
				return "", "a character class intersection (&&)"
			case c == ']':
				class--
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '[':
			class = 1
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			// RE2 reads a ] right after [ or [^ as a literal ]
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
			continue
		case '(':
			if i+1 < len(p) && p[i+1] == '?' {
				rest := p[i+2:]
				switch {
				case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
					return "", "a lookahead (?" + rest[:1] + ")"
				case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
					return "", "a lookbehind (?" + rest[:2] + ")"
				case strings.HasPrefix(rest, ">"):
					return "", "an atomic group (?>)"
				case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, "P<"), strings.HasPrefix(rest, ":"):
				default:
					for k := 0; k < len(rest) && rest[k] != ')' && rest[k] != ':'; k++ {
						switch {
						case strings.IndexByte("ims-", rest[k]) >= 0:
						case strings.IndexByte("duxU", rest[k]) >= 0:
							return "", "the inline flag " + string(rest[k])
						default:
							return "", unknownFlag + string(rest[k])
						}
					}
				}
				b.WriteString("(?")
				i++
				continue
			}
		case '*', '+', '?', '}':
			if i+1 < len(p) && p[i+1] == '+' && (c != '}' || closesRepeat(p[:i])) {
				return "", "a possessive quantifier (" + p[i:i+2] + ")"
			}
		case '.':
			if !dotAll {
				b.WriteString(javaDot)
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String(), ""
}

// closesRepeat reports whether a } after p closes a {n}, {n,} or {n,m}
// quantifier rather than being a literal }.
func closesRepeat(p string) bool {
	k := strings.LastIndexByte(p, '{')
	if k < 0 {
		return false
	}
	body := p[k+1:]
	lo, hi, comma := strings.Cut(body, ",")
	digits := func(s string) bool { return strings.Trim(s, "0123456789") == "" }
	return lo != "" && digits(lo) && (!comma || digits(hi))
}

// inlineFlags reports whether an inline flag group of p turns on flag.
func inlineFlags(p string, flag byte) bool {
	for i := 0; i+2 < len(p); i++ {
		if p[i] != '(' || p[i+1] != '?' || (i > 0 && p[i-1] == '\\') {
			continue
		}
		for k := i + 2; k < len(p) && p[k] != ')' && p[k] != ':' && p[k] != '-'; k++ {
			if p[k] == flag {
				return true
			}
		}
	}
	return false
}

func isHex(s string) bool {
	_, err := strconv.ParseUint(s, 16, 32)
	return err == nil
}

// javaTerminator is the length of the line terminator s ends with, 0 if
// none: Java's $ matches before it.
func javaTerminator(s string) int {
	switch {
	case strings.HasSuffix(s, "\r\n"):
		return 2
	case strings.HasSuffix(s, "\n"), strings.HasSuffix(s, "\r"):
		return 1
	case strings.HasSuffix(s, "\u0085"):
		return 2
	case strings.HasSuffix(s, "\u2028"), strings.HasSuffix(s, "\u2029"):
		return 3
	}
	return 0
}

// matches is Java's Matcher.find() as a boolean.
func (r *javaRegex) matches(s string) bool {
	if r.re.MatchString(s) {
		return true
	}
	if t := javaTerminator(s); r.dollarEnd && t > 0 {
		return r.re.MatchString(s[:len(s)-t])
	}
	return false
}

// findAll is every match of Java's Matcher.find() loop, as submatch
// indexes.
func (r *javaRegex) findAll(s string, pos syntax.Pos) ([][]int, error) {
	if err := r.checkInput(s, pos); err != nil {
		return nil, err
	}
	locs := r.re.FindAllStringSubmatchIndex(s, -1)
	if !r.emptyToo {
		return locs, nil
	}
	if r.anchored {
		return nil, exprErr(domain.CodeUnsupportedRegex, pos, "the pattern '%s' matches both empty and non-empty text and has anchors or word boundaries: Java finds empty matches right after a match where RE2 does not; make the pattern match at least one character", r.src)
	}
	var out [][]int
	for k, loc := range locs {
		out = append(out, loc)
		e := loc[1]
		if loc[0] == e || (k+1 < len(locs) && locs[k+1][0] == e) {
			continue
		}
		// Java also finds the empty match where this one ends
		if at := r.re.FindStringSubmatchIndex(s[e:]); at != nil && at[0] == 0 && at[1] == 0 {
			for j := range at {
				if at[j] >= 0 {
					at[j] += e
				}
			}
			out = append(out, at)
		}
	}
	return out, nil
}

// checkInput refuses an input the functions returning matches cannot treat
// as Java does: a $ pattern on an input ending with a line terminator.
func (r *javaRegex) checkInput(s string, pos syntax.Pos) error {
	if r.dollarEnd && javaTerminator(s) > 0 {
		return exprErr(domain.CodeUnsupportedRegex, pos, "the pattern '%s' has $, which in Java also matches before the line break that ends the input; RE2 does not: trim the input, or use \\z or (?m)", r.src)
	}
	return nil
}

// replPiece is a piece of a Java replacement string: literal text, or the
// text of a group.
type replPiece struct {
	text  string
	group int // -1: text
}

// parseJavaReplacement parses the replacement of regexp_replace as Java's
// Matcher.appendReplacement does: $n (as many digits as name a group),
// ${name}, and \ escaping the next character.
func parseJavaReplacement(rep string, re *regexp.Regexp) ([]replPiece, string) {
	var out []replPiece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, replPiece{text: lit.String(), group: -1})
			lit.Reset()
		}
	}
	groups := re.NumSubexp()
	for i := 0; i < len(rep); i++ {
		c := rep[i]
		switch c {
		case '\\':
			i++
			if i == len(rep) {
				return nil, "the replacement ends with a lone \\"
			}
			lit.WriteByte(rep[i])
		case '$':
			i++
			if i == len(rep) {
				return nil, "the replacement ends with a lone $"
			}
			flush()
			if rep[i] == '{' {
				end := strings.IndexByte(rep[i:], '}')
				if end < 0 {
					return nil, "the group name after ${ is not closed"
				}
				name := rep[i+1 : i+end]
				g := re.SubexpIndex(name)
				if g < 0 {
					return nil, "the pattern has no group named " + name
				}
				out = append(out, replPiece{group: g})
				i += end
				continue
			}
			if rep[i] < '0' || rep[i] > '9' {
				return nil, "$ must be followed by a group number or {name} (write \\$ for a $)"
			}
			g := int(rep[i] - '0')
			if g > groups {
				return nil, "the pattern has no group " + strconv.Itoa(g)
			}
			for i+1 < len(rep) && rep[i+1] >= '0' && rep[i+1] <= '9' {
				next := g*10 + int(rep[i+1]-'0')
				if next > groups {
					break
				}
				g = next
				i++
			}
			out = append(out, replPiece{group: g})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out, ""
}
