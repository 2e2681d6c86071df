package syntax

import (
	suggestpkg "github.com/sluicehq/sluice/internal/suggest"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// ParseFile parses a .sql file or a Databricks notebook export: every
// statement, and the notes taken on the way (skipped notebook cells). Before
// lexing, every ${key} is replaced by conf[key] (see substitute). The first
// error stops the parse; it is a *Error with the file, line and column in the
// original text.
func ParseFile(name, src string, conf map[string]string) (*File, error) {
	f, errs := ParseFileAll(name, src, conf)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return f, nil
}

// ParseFileAll is ParseFile that goes on after a syntax error: it skips to
// the end of the statement (the next `;` or notebook cell) and parses the
// rest, returning the statements that parsed and every error, so that a
// pipeline's validation reports every problem of a file at once. An error
// in a ${key} or in lexing still stops it.
func ParseFileAll(name, src string, conf map[string]string) (*File, []*Error) {
	s := newSource(name, src)
	f := &File{Name: name}
	text := src
	var cellEnds map[int]bool
	if isNotebook(src) {
		text, cellEnds, f.Notes = s.notebook(src)
	}
	text, err := s.substitute(text, conf)
	if err != nil {
		return nil, []*Error{err}
	}
	toks, err := s.lex(text, cellEnds)
	if err != nil {
		return nil, []*Error{err}
	}
	p := &parser{s: s, text: text, toks: toks}
	var errs []*Error
	for {
		done := false
		err := p.run(func() {
			for p.acceptOp(";") {
			}
			if p.peek().kind == tEOF {
				done = true
				return
			}
			st := p.statement()
			if !p.atEnd() {
				p.fail(`";" or the end of the statement`)
			}
			f.Statements = append(f.Statements, st)
		})
		if done {
			return f, errs
		}
		if err != nil {
			errs = append(errs, err)
			for t := p.peek(); t.kind != tEOF && !(t.kind == tOp && t.text == ";"); t = p.peek() {
				p.i++
			}
		}
	}
}

// ParseExpr parses a single expression, such as an expectation's condition.
// name is used in error messages.
func ParseExpr(name, src string) (Expr, error) {
	s := newSource(name, src)
	toks, err := s.lex(src, nil)
	if err != nil {
		return nil, err
	}
	p := &parser{s: s, text: src, toks: toks}
	var e Expr
	if err := p.run(func() {
		e = p.expr()
		if p.peek().kind != tEOF {
			p.fail("the end of the expression")
		}
	}); err != nil {
		return nil, err
	}
	return e, nil
}

// parser is a recursive-descent parser over the token slice. Errors unwind
// the stack by panicking with a bailout, caught in run.
type parser struct {
	s    *source
	text string
	toks []token
	i    int
}

type bailout struct{ err *Error }

func (p *parser) run(f func()) (err *Error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			err = b.err
		}
	}()
	f()
	return nil
}

func (p *parser) peek() *token { return &p.toks[p.i] }

// peekAt looks n tokens ahead (0 is peek); past the end it is EOF.
func (p *parser) peekAt(n int) *token {
	if p.i+n >= len(p.toks) {
		return &p.toks[len(p.toks)-1]
	}
	return &p.toks[p.i+n]
}

func (p *parser) next() *token {
	t := &p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) pos() Pos { return p.peek().pos }

// fail stops the parse: expected this, found the current token.
func (p *parser) fail(expected string) {
	t := p.peek()
	err := p.s.errAt(domain.CodeParseSyntax, t.pos, "", expected, t.describe(p.text))
	if t.kind == tIdent {
		err.Suggest = suggest(t.upper, expected)
	}
	panic(bailout{err})
}

// suggest finds, among the keywords that may stand here (the first word of
// each alternative of expected, "A B, C or D"), one that word is likely a
// misspelling of (one or two edits away), or "".
func suggest(word, expected string) string {
	if len(word) < 4 {
		return ""
	}
	best, bestD := "", 3
	for _, alt := range strings.Split(strings.ReplaceAll(expected, " or ", ", "), ", ") {
		kw, _, _ := strings.Cut(alt, " ")
		if len(kw) < 4 || kw == word || strings.ToUpper(kw) != kw {
			continue
		}
		if d := suggestpkg.Distance(word, kw); d < bestD {
			best, bestD = kw, d
		}
	}
	return best
}

// failAt stops the parse with a message at a position.
func (p *parser) failAt(pos Pos, msg string) {
	panic(bailout{p.s.errAt(domain.CodeParseSyntax, pos, msg, "", "")})
}

// isKwAt reports whether the token n ahead is the keyword kw (a plain
// identifier, any case).
func (p *parser) isKwAt(n int, kw string) bool {
	t := p.peekAt(n)
	return t.kind == tIdent && t.upper == kw
}

func (p *parser) isKw(kw string) bool { return p.isKwAt(0, kw) }

// isKws reports whether the next tokens are the keywords kws.
func (p *parser) isKws(kws ...string) bool {
	for n, kw := range kws {
		if !p.isKwAt(n, kw) {
			return false
		}
	}
	return true
}

// acceptKws consumes the keywords kws if they come next.
func (p *parser) acceptKws(kws ...string) bool {
	if !p.isKws(kws...) {
		return false
	}
	p.i += len(kws)
	return true
}

// expectKws consumes the keywords kws or fails; it returns the position of
// the first.
func (p *parser) expectKws(kws ...string) Pos {
	pos := p.pos()
	for _, kw := range kws {
		if !p.isKw(kw) {
			p.fail(kw)
		}
		p.next()
	}
	return pos
}

func (p *parser) isOpAt(n int, op string) bool {
	t := p.peekAt(n)
	return t.kind == tOp && t.text == op
}

func (p *parser) isOp(op string) bool { return p.isOpAt(0, op) }

func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectOp(op string) Pos {
	if !p.isOp(op) {
		p.fail(`"` + op + `"`)
	}
	pos := p.pos()
	p.next()
	return pos
}

// atEnd reports whether the statement ends here.
func (p *parser) atEnd() bool {
	t := p.peek()
	return t.kind == tEOF || (t.kind == tOp && t.text == ";")
}

func (p *parser) isIdentAt(n int) bool {
	k := p.peekAt(n).kind
	return k == tIdent || k == tQIdent
}

// ident parses an identifier, plain or quoted; keywords are accepted as names.
func (p *parser) ident(what string) *Ident {
	t := p.peek()
	if t.kind != tIdent && t.kind != tQIdent {
		p.fail(what)
	}
	p.next()
	return &Ident{Pos: t.pos, Name: t.text, Quoted: t.kind == tQIdent}
}

// name parses a dotted name.
func (p *parser) name(what string) *Name {
	first := p.ident(what)
	n := &Name{Pos: first.Pos, Parts: []*Ident{first}}
	for p.isOp(".") && p.isIdentAt(1) {
		p.next()
		n.Parts = append(n.Parts, p.ident(what))
	}
	return n
}

func (p *parser) identList(what string) []*Ident {
	var out []*Ident
	for {
		out = append(out, p.ident(what))
		if !p.acceptOp(",") {
			return out
		}
	}
}

// parenIdents parses (a, b, ...).
func (p *parser) parenIdents(what string) []*Ident {
	p.expectOp("(")
	out := p.identList(what)
	p.expectOp(")")
	return out
}

func (p *parser) nameList(what string) []*Name {
	var out []*Name
	for {
		out = append(out, p.name(what))
		if !p.acceptOp(",") {
			return out
		}
	}
}

// stringLit parses a string literal (adjacent strings joined).
func (p *parser) stringLit(what string) *StringClause {
	t := p.peek()
	if t.kind != tString {
		p.fail(what)
	}
	var b strings.Builder
	for p.peek().kind == tString {
		b.WriteString(p.next().text)
	}
	return &StringClause{Pos: t.pos, Value: b.String()}
}

// notAlias are the words that end an expression or a FROM item rather than
// name it: `SELECT a FROM t WHERE ...` is not `a AS from`.
var notAlias = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`FROM WHERE GROUP HAVING ORDER LIMIT OFFSET UNION INTERSECT
		EXCEPT MINUS WINDOW QUALIFY LATERAL JOIN INNER LEFT RIGHT FULL CROSS NATURAL SEMI ANTI
		ON USING AS WATERMARK SORT CLUSTER DISTRIBUTE PIVOT UNPIVOT TABLESAMPLE SELECT KEYS
		INTO WHEN THEN ELSE END AND OR NOT IS IN LIKE ILIKE RLIKE REGEXP BETWEEN ESCAPE OVER
		FILTER WITHIN ASC DESC NULLS ROWS RANGE PRECEDING FOLLOWING DELAY SEQUENCE IGNORE
		APPLY COLUMNS STORED TRACK BY VALUES WITH DIV`) {
		notAlias[w] = true
	}
}

// aliasNext reports whether an implicit alias (without AS) comes next.
func (p *parser) aliasNext() bool {
	t := p.peek()
	return t.kind == tQIdent || (t.kind == tIdent && !notAlias[t.upper])
}
