package syntax

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
)

// Pos is a position in the original source file: the file's name as it was
// given to the parser, 1-based line, and 1-based column counted in
// characters (runes), not bytes. Every node the parser makes carries its
// file, so an error found while planning or running a query knows the file
// it comes from without searching the statements again. A Pos made by hand
// may leave File empty.
type Pos struct {
	File      string
	Line, Col int
}

// String is line:col, without the file.
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error is a lexing, substitution or parsing error. It names the file, the
// position, the source line, what was expected and what was found instead.
// Its Unwrap gives a *domain.Error with the same code, so domain.CodeOf works
// on it.
type Error struct {
	Code     domain.Code
	File     string
	Pos      Pos
	Line     string // the source line at Pos.Line, without its line break
	Message  string // what is wrong, when Expected/Found do not say it
	Expected string // e.g. `AS`, `an expression`
	Found    string // e.g. `"SELECT"`, `end of input`
	Suggest  string // a keyword the found word may be a misspelling of
}

// Msg is the error's sentence, without the position and the source line.
func (e *Error) Msg() string {
	var parts []string
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	if e.Expected != "" {
		s := "expected " + e.Expected
		if e.Found != "" {
			s += ", found " + e.Found
		}
		parts = append(parts, s)
	}
	msg := strings.Join(parts, ": ")
	if e.Suggest != "" {
		msg += " (did you mean " + e.Suggest + "?)"
	}
	return msg
}

// Error renders the error as
//
//	file:line:col: [CODE] message
//	   3 | the source line
//	     |       ^
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: [%s] %s", e.File, e.Pos.Line, e.Pos.Col, e.Code, e.Msg())
	if e.Pos.Line > 0 {
		num := fmt.Sprint(e.Pos.Line)
		gutter := strings.Repeat(" ", len(num))
		fmt.Fprintf(&b, "\n %s | %s\n %s | %s^", num, e.Line, gutter, caretPad(e.Line, e.Pos.Col))
	}
	return b.String()
}

// caretPad is the whitespace before a caret under column col of line: tabs
// are kept so the caret lines up in a terminal.
func caretPad(line string, col int) string {
	var b strings.Builder
	n := 1
	for _, r := range line {
		if n >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		n++
	}
	for ; n < col; n++ {
		b.WriteByte(' ')
	}
	return b.String()
}

// Unwrap returns the error as a *domain.Error.
func (e *Error) Unwrap() error {
	return &domain.Error{
		Code:    e.Code,
		Message: fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg()),
		Hint:    domain.CodeHint(e.Code),
		File:    e.File,
		Line:    e.Pos.Line,
		Column:  e.Pos.Col,
	}
}

// source is a file being parsed: the original text (positions are always
// reported in it) and the map from offsets of the substituted text back to it.
type source struct {
	name       string
	orig       string
	lineStarts []int
	subst      []substSpan // sorted by out

	lastLine, lastOff, lastCol int // the last position computed, see posOrig
}

// substSpan records that out[outStart:outEnd] replaced orig[origStart:origEnd].
type substSpan struct {
	outStart, outEnd, origStart, origEnd int
}

func newSource(name, src string) *source {
	s := &source{name: name, orig: src, lineStarts: []int{0}, lastLine: -1}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			s.lineStarts = append(s.lineStarts, i+1)
		}
	}
	return s
}

// origOffset maps an offset of the substituted text to the original. An
// offset inside a substituted value maps to the `${` that produced it.
func (s *source) origOffset(off int) int {
	lo, hi := 0, len(s.subst)
	for lo < hi {
		m := (lo + hi) / 2
		if s.subst[m].outStart <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return off
	}
	sp := s.subst[lo-1]
	if off < sp.outEnd {
		return sp.origStart
	}
	return sp.origEnd + off - sp.outEnd
}

// posOrig is the position of a byte offset of the original text.
func (s *source) posOrig(off int) Pos {
	if off > len(s.orig) {
		off = len(s.orig)
	}
	if off < 0 {
		off = 0
	}
	lo, hi := 0, len(s.lineStarts)
	for lo < hi {
		m := (lo + hi) / 2
		if s.lineStarts[m] <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	line := lo - 1
	// columns count runes; tokens come in order, so continue from the last
	// position on the same line rather than recount the line each time
	from, col := s.lineStarts[line], 1
	if s.lastLine == line && s.lastOff <= off && s.lastOff >= from {
		from, col = s.lastOff, s.lastCol
	}
	col += utf8.RuneCountInString(s.orig[from:off])
	s.lastLine, s.lastOff, s.lastCol = line, off, col
	return Pos{File: s.name, Line: line + 1, Col: col}
}

// pos is the position in the original text of an offset of the substituted text.
func (s *source) pos(off int) Pos { return s.posOrig(s.origOffset(off)) }

// line is the text of a 1-based line of the original, without its break.
func (s *source) line(n int) string {
	if n < 1 || n > len(s.lineStarts) {
		return ""
	}
	start := s.lineStarts[n-1]
	end := len(s.orig)
	if n < len(s.lineStarts) {
		end = s.lineStarts[n] - 1
	}
	return strings.TrimRight(s.orig[start:end], "\r")
}

// errAt builds an error at a position of the original text.
func (s *source) errAt(code domain.Code, p Pos, msg, expected, found string) *Error {
	return &Error{Code: code, File: s.name, Pos: p, Line: s.line(p.Line), Message: msg, Expected: expected, Found: found}
}

// Locate places an error found after parsing (resolution, type checking) in
// the file the statement came from: positions in the AST are positions in
// that file, so the error gets the file's name and the source line. Other
// errors are returned as they are.
func Locate(err error, file, src string) error {
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	located := *e
	located.File = file
	located.Line = newSource(file, src).line(e.Pos.Line)
	return &located
}
