package syntax

import (
	"errors"
	"github.com/sluicehq/sluice/domain"
	"strings"
	"testing"
	"unicode/utf8"
)

func lexAll(t testing.TB, src string) []token {
	t.Helper()
	s := newSource("lex.sql", src)
	toks, err := s.lex(src, nil)
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return toks
}

func TestLexTokens(t *testing.T) {
	cases := []struct {
		in   string
		want string // kind:text[suffix] separated by spaces
	}{
		{"1 1L 2s 3Y 1.5D 2.5f 10BD 1e10 1.5E-3 .5 1.", "n:1 n:1L n:2S n:3Y n:1.5D n:2.5F n:10BD n:1e10 n:1.5E-3 n:.5 n:1."},
		{"1day 1abc 12L3", "i:1day i:1abc i:12L3"},
		{`'a' "b" 'it''s' 'it\'s' "q\"q" 'x\ty' '\u00e9' '\101' '\%\_' '\z' r'\n' R"a\b"`,
			`s:a s:b s:it s:s s:it's s:q"q s:x	y s:é s:A s:\%\_ s:z s:\n s:a\b`},
		{"1.5L 1.5S 2.5BD 1e3D", "n:1 o:. n:5L n:1 o:. n:5S n:2.5BD n:1e3D"}, // as Spark: 1.5L is not a number
		{"a !> b !< c", "i:a o:<= i:b o:>= i:c"},
		{"a.0a 1.5x .5_ 1.5 1.5D", "i:a o:. i:0a n:1 o:. i:5x o:. i:5_ n:1.5 n:1.5D"},
		{"`a b` `x``y` sElEcT _x x1", "q:a b q:x`y i:sElEcT i:_x i:x1"},
		{"a--comment\nb/* c /* nested */ c */d /*+ hint */ e", "i:a i:b i:d i:e"},
		{"<=> :: -> => <= >= <> != == || ( ) [ ] , . ; : + - * / % = < > ! ~ & | ^ ?", "o:<=> o::: o:-> o:=> o:<= o:>= o:<> o:!= o:== o:|| o:( o:) o:[ o:] o:, o:. o:; o:: o:+ o:- o:* o:/ o:% o:= o:< o:> o:! o:~ o:& o:| o:^ o:?"},
		{"\ufeffa\u00a0b", "i:a i:b"},
	}
	for _, c := range cases {
		var got []string
		for _, tk := range lexAll(t, c.in) {
			var k string
			switch tk.kind {
			case tEOF:
				continue
			case tIdent:
				k = "i"
			case tQIdent:
				k = "q"
			case tString:
				k = "s"
			case tNumber:
				k = "n"
			case tOp:
				k = "o"
			}
			got = append(got, k+":"+tk.text+tk.suffix)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.in, g, c.want)
		}
	}
}

func TestLexKeywordsAnyCase(t *testing.T) {
	for _, tk := range lexAll(t, "select SELECT Select sElEcT") {
		if tk.kind == tIdent && tk.upper != "SELECT" {
			t.Errorf("%q: upper %q", tk.text, tk.upper)
		}
	}
}

func TestLexPositions(t *testing.T) {
	toks := lexAll(t, "a\n  é  b\n\tc")
	want := []Pos{{"lex.sql", 1, 1}, {"lex.sql", 2, 3}, {"lex.sql", 2, 6}, {"lex.sql", 3, 2}}
	for i, w := range want {
		if toks[i].pos != w {
			t.Errorf("token %d %q at %v, want %v", i, toks[i].text, toks[i].pos, w)
		}
	}
}

func TestLexErrors(t *testing.T) {
	cases := []struct {
		in  string
		pos Pos
	}{
		{"'abc", Pos{"lex.sql", 1, 1}},
		{"x \"abc\\\"", Pos{"lex.sql", 1, 3}},
		{"a\n`b", Pos{"lex.sql", 2, 1}},
		{"/* a /* b */", Pos{"lex.sql", 1, 1}},
		{"a # b", Pos{"lex.sql", 1, 3}},
		{"a\n  $", Pos{"lex.sql", 2, 3}},
	}
	for _, c := range cases {
		s := newSource("lex.sql", c.in)
		_, err := s.lex(c.in, nil)
		if err == nil {
			t.Errorf("%q: no error", c.in)
			continue
		}
		if err.Pos != c.pos || err.Code != domain.CodeParseSyntax {
			t.Errorf("%q: %v, want at %v", c.in, err, c.pos)
		}
	}
}

func TestSubstitute(t *testing.T) {
	conf := map[string]string{"a": "X", "a.b": "Y", "empty": "", "nl": "1\n+2"}
	cases := []struct{ in, want string }{
		{"${a}", "X"},
		{"t_${a}_${a.b}", "t_X_Y"},
		{"'${a}' \"${a.b}\" `${a} c`", "'X' \"Y\" `X c`"},
		{"-- ${nope}\n${a}", "-- ${nope}\nX"},
		{"/* ${nope} */ ${a}", "/* ${nope} */ X"},
		{`'\${nope}' ${a}`, `'\${nope}' X`},
		{"${ a }", "X"},
		{"${empty}x", "x"},
		{"${unclosed", "${unclosed"},
		{"${nl} z", "1\n+2 z"},
	}
	for _, c := range cases {
		s := newSource("p.sql", c.in)
		got, err := s.substitute(c.in, conf)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	// offsets after a substitution map back to the original
	s := newSource("p.sql", "${nl} zz")
	out, _ := s.substitute(s.orig, conf)
	if i := strings.Index(out, "zz"); s.pos(i) != (Pos{"p.sql", 1, 7}) {
		t.Errorf("zz at %v", s.pos(i))
	}
	if s.pos(2) != (Pos{"p.sql", 1, 1}) {
		t.Errorf("inside the value at %v, want the ${", s.pos(2))
	}
}

func TestSubstituteUnknown(t *testing.T) {
	_, err := ParseFile("p.sql", "SELECT 1;\nSELECT '${x.y}'", map[string]string{"x": "1"})
	var e *Error
	if !errors.As(err, &e) || e.Code != domain.CodeUnboundParameter || e.Pos != (Pos{"p.sql", 2, 9}) || !strings.Contains(e.Error(), "x.y") {
		t.Fatalf("got %v", err)
	}
}

// checkErrPos fails when an error's position is not within src.
func checkErrPos(t *testing.T, src string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("not a *Error: %T %v", err, err)
	}
	lines := strings.Split(src, "\n")
	if e.Pos.Line < 1 || e.Pos.Line > len(lines) {
		t.Fatalf("line %d outside 1..%d: %v", e.Pos.Line, len(lines), err)
	}
	if n := utf8.RuneCountInString(lines[e.Pos.Line-1]); e.Pos.Col < 1 || e.Pos.Col > n+1 {
		t.Fatalf("column %d outside 1..%d: %v", e.Pos.Col, n+1, err)
	}
}

// TestLongLine: positions on one very long line are computed in linear time.
func TestLongLine(t *testing.T) {
	src := "SELECT " + strings.Repeat("a, ", 100000) + "é"
	f, err := ParseFile("long.sql", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	items := f.Statements[0].(*QueryStmt).Query.Body.(*Select).Items
	if got := items[len(items)-1].Pos; got != (Pos{"long.sql", 1, 8 + 3*100000}) {
		t.Fatalf("last item at %v", got)
	}
}
