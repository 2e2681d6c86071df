package syntax

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
)

// operators, longest first where one is a prefix of another.
var operators = []string{
	"<=>", "::", "->", "=>", "<=", ">=", "<>", "!=", "==", "||", "!>", "!<",
	"(", ")", "[", "]", ",", ".", ";", ":", "+", "-", "*", "/", "%",
	"=", "<", ">", "!", "~", "&", "|", "^", "?",
}

// lex splits the substituted text into tokens, as Spark does: strings in
// '...' and "..." (both are strings), with backslash escapes; r'...' raw
// strings; identifiers plain or in backticks (two backticks for one); -- and nested /* */ comments (hints /*+ ... */ are comments
// too); numbers with the suffixes L, S, Y, D, F and BD.
func (s *source) lex(text string, cellEnds map[int]bool) ([]token, *Error) {
	toks := make([]token, 0, len(text)/4+1)
	i := 0
	for {
		// whitespace and comments
		for i < len(text) {
			c := text[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
				i++
				continue
			}
			if c == '-' && i+1 < len(text) && text[i+1] == '-' {
				nl := strings.IndexByte(text[i:], '\n')
				if nl < 0 {
					i = len(text)
				} else {
					i += nl + 1
				}
				continue
			}
			if c == '/' && i+1 < len(text) && text[i+1] == '*' {
				start := i
				depth := 0
				for i < len(text) {
					if text[i] == '/' && i+1 < len(text) && text[i+1] == '*' {
						depth++
						i += 2
					} else if text[i] == '*' && i+1 < len(text) && text[i+1] == '/' {
						depth--
						i += 2
						if depth == 0 {
							break
						}
					} else {
						i++
					}
				}
				if depth != 0 {
					return nil, s.errAt(domain.CodeParseSyntax, s.pos(start), "unterminated comment", "*/", "end of input")
				}
				continue
			}
			if c >= utf8.RuneSelf {
				r, n := utf8.DecodeRuneInString(text[i:])
				if r == '\ufeff' || unicode.IsSpace(r) {
					i += n
					continue
				}
			}
			break
		}
		if i >= len(text) {
			toks = append(toks, token{kind: tEOF, off: len(text), end: len(text), pos: s.pos(len(text))})
			return toks, nil
		}
		start := i
		c := text[i]
		t := token{off: start}
		switch {
		case c == '\'' || c == '"':
			val, end, err := s.lexString(text, i, false)
			if err != nil {
				return nil, err
			}
			t.kind, t.text, i = tString, val, end
		case (c == 'r' || c == 'R') && i+1 < len(text) && (text[i+1] == '\'' || text[i+1] == '"'):
			val, end, err := s.lexString(text, i+1, true)
			if err != nil {
				return nil, err
			}
			t.kind, t.text, t.raw, i = tString, val, true, end
		case c == '`':
			var b strings.Builder
			j := i + 1
			for {
				k := strings.IndexByte(text[j:], '`')
				if k < 0 {
					return nil, s.errAt(domain.CodeParseSyntax, s.pos(start), "unterminated quoted identifier", "`", "end of input")
				}
				b.WriteString(text[j : j+k])
				j += k + 1
				if j < len(text) && text[j] == '`' {
					b.WriteByte('`')
					j++
					continue
				}
				break
			}
			t.kind, t.text, i = tQIdent, b.String(), j
		case isDigit(c) || (c == '.' && i+1 < len(text) && isDigit(text[i+1])):
			numEnd, suffix, sufEnd := scanNumber(text, i)
			identEnd := i
			for identEnd < len(text) {
				r, n := utf8.DecodeRuneInString(text[identEnd:])
				if !isIdentRune(r) {
					break
				}
				identEnd += n
			}
			if c != '.' && identEnd > sufEnd {
				t.kind, t.text, i = tIdent, text[i:identEnd], identEnd
				t.upper = strings.ToUpper(t.text)
			} else if r, _ := utf8.DecodeRuneInString(text[sufEnd:]); sufEnd < len(text) && isIdentRune(r) &&
				strings.IndexByte(text[i:numEnd], '.') >= 0 {
				// not a valid decimal (Spark's isValidDecimal): in t.0a the
				// .0 is not a number; take the integer part, or the dot alone
				if c == '.' {
					t.kind, t.text, i = tOp, ".", i+1
				} else {
					j := i
					for isDigit(text[j]) {
						j++
					}
					t.kind, t.text, i = tNumber, text[i:j], j
				}
			} else {
				t.kind, t.text, t.suffix, i = tNumber, text[i:numEnd], suffix, sufEnd
			}
		case isIdentStart(text, i):
			j := i
			for j < len(text) {
				r, n := utf8.DecodeRuneInString(text[j:])
				if !isIdentRune(r) {
					break
				}
				j += n
			}
			t.kind, t.text, i = tIdent, text[i:j], j
			t.upper = strings.ToUpper(t.text)
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(text[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(text[i:])
				return nil, s.errAt(domain.CodeParseSyntax, s.pos(start), "unexpected character "+strconv.QuoteRune(r), "", "")
			}
			t.kind, t.text, i = tOp, op, i+len(op)
			switch op { // Spark's other spellings of <= and >=
			case "!>":
				t.text = "<="
			case "!<":
				t.text = ">="
			}
			if op == ";" && cellEnds[s.origOffset(start)] {
				t.cellEnd = true
			}
		}
		t.end = i
		t.pos = s.pos(start)
		toks = append(toks, t)
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isIdentStart(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i:])
	return r == '_' || unicode.IsLetter(r)
}

// scanNumber reads a number at text[i:]: digits, an optional fraction, an
// optional exponent, then an optional suffix. It returns the end of the
// number proper, the suffix (upper case) and the end of the suffix.
func scanNumber(text string, i int) (numEnd int, suffix string, sufEnd int) {
	j := i
	for j < len(text) && isDigit(text[j]) {
		j++
	}
	if j < len(text) && text[j] == '.' {
		k := j + 1
		for k < len(text) && isDigit(text[k]) {
			k++
		}
		// "1." is a number; "t.1" never reaches here
		j = k
	}
	if j < len(text) && (text[j] == 'e' || text[j] == 'E') {
		k := j + 1
		if k < len(text) && (text[k] == '+' || text[k] == '-') {
			k++
		}
		if k < len(text) && isDigit(text[k]) {
			for k < len(text) && isDigit(text[k]) {
				k++
			}
			j = k
		}
	}
	numEnd = j
	rest := text[j:]
	integer := true
	for k := i; k < j; k++ {
		if !isDigit(text[k]) {
			integer = false
		}
	}
	for _, suf := range []string{"BD", "L", "S", "Y", "D", "F"} {
		if !integer && (suf == "L" || suf == "S" || suf == "Y") {
			continue // only integers take L, S and Y
		}
		if len(rest) >= len(suf) && strings.EqualFold(rest[:len(suf)], suf) {
			after := j + len(suf)
			if after < len(text) {
				r, _ := utf8.DecodeRuneInString(text[after:])
				if isIdentRune(r) {
					continue
				}
			}
			return numEnd, suf, after
		}
	}
	return numEnd, "", numEnd
}

// lexString reads a string whose opening quote is at text[i]. Escapes, unless
// raw: \n \t \r \b \0 \Z, \uXXXX, \UXXXXXXXX, three octal digits, \% and \_
// kept with their backslash (for LIKE patterns), any other \c is c. As in
// Spark, a doubled quote is not an escape: it ends one string and starts
// another, which the parser joins to the first without the quote. A raw string ends at its first quote.
func (s *source) lexString(text string, i int, raw bool) (val string, end int, err *Error) {
	q := text[i]
	var b strings.Builder
	j := i + 1
	for j < len(text) {
		c := text[j]
		switch {
		case c == q:
			return b.String(), j + 1, nil
		case c == '\\' && !raw && j+1 < len(text):
			e := text[j+1]
			j += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'Z':
				b.WriteByte(0x1a)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			case 'u', 'U':
				n := 4
				if e == 'U' {
					n = 8
				}
				if j+n <= len(text) {
					if v, perr := strconv.ParseUint(text[j:j+n], 16, 32); perr == nil && utf8.ValidRune(rune(v)) {
						b.WriteRune(rune(v))
						j += n
						continue
					}
				}
				b.WriteByte(e)
			default:
				if e >= '0' && e <= '7' && j+1 < len(text) && isOctal(text[j]) && isOctal(text[j+1]) {
					v := (int(e-'0') << 6) | (int(text[j]-'0') << 3) | int(text[j+1]-'0')
					b.WriteRune(rune(v))
					j += 2
				} else if e == '0' {
					b.WriteByte(0)
				} else if e >= utf8.RuneSelf {
					r, n := utf8.DecodeRuneInString(text[j-1:])
					b.WriteRune(r)
					j += n - 1
				} else {
					b.WriteByte(e)
				}
			}
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", 0, s.errAt(domain.CodeParseSyntax, s.pos(i), "unterminated string literal", "closing "+string(q), "end of input")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
