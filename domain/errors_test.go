package domain

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestEveryCodeHasAMessageAndAHint(t *testing.T) {
	codes := Codes()
	if len(codes) == 0 {
		t.Fatal("no codes")
	}
	if !slices.IsSorted(codes) {
		t.Errorf("Codes() is not sorted: %v", codes)
	}
	spelling := regexp.MustCompile(`^[A-Z][A-Z0-9_]*(\.[A-Z][A-Z0-9_]*)?$`)
	for i, c := range codes {
		if i > 0 && codes[i-1] == c {
			t.Errorf("code %s listed twice", c)
		}
		if !spelling.MatchString(string(c)) {
			t.Errorf("code %q is not spelled like A_CODE or A_CODE.SUBCODE", c)
		}
		if strings.TrimSpace(CodeMessage(c)) == "" {
			t.Errorf("code %s has no message", c)
		}
		if strings.TrimSpace(CodeHint(c)) == "" {
			t.Errorf("code %s has no hint", c)
		}
		for _, s := range []string{CodeMessage(c), CodeHint(c)} {
			if strings.HasSuffix(s, ".") || s != strings.TrimSpace(s) {
				t.Errorf("code %s: %q should not end with a period or space", c, s)
			}
		}
	}
	if CodeMessage("NO_SUCH_CODE") != "" || CodeHint("NO_SUCH_CODE") != "" {
		t.Error("an unknown code has text")
	}
}

// declaredCodes parses errors.go and the errors_*.go files beside it (each
// family of SQL functions declares its codes in its own) and returns the
// values of every constant of type Code declared there.
func declaredCodes(t *testing.T) []Code {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("errors*.go")
	if err != nil {
		t.Fatal(err)
	}
	var decls []ast.Decl
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		decls = append(decls, file.Decls...)
	}
	var out []Code
	for _, decl := range decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					t.Fatalf("%s: constant %s has no value of its own", fset.Position(name.Pos()), name.Name)
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s: constant %s is not a string literal", fset.Position(name.Pos()), name.Name)
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, Code(s))
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestCodesListsEveryDeclaredCode(t *testing.T) {
	declared := declaredCodes(t)
	if len(declared) < 10 {
		t.Fatalf("found only %d Code constants in errors.go: is the parser test broken?", len(declared))
	}
	for i := 1; i < len(declared); i++ {
		if declared[i] == declared[i-1] {
			t.Errorf("two constants spell %s", declared[i])
		}
	}
	listed := Codes()
	for _, c := range declared {
		if !slices.Contains(listed, c) {
			t.Errorf("code %s is declared but has no message and hint in codeInfo", c)
		}
	}
	for _, c := range listed {
		if !slices.Contains(declared, c) {
			t.Errorf("codeInfo has text for %s, which no constant declares", c)
		}
	}
}

func TestErrorFormatting(t *testing.T) {
	e := Errorf(CodeUnknownDependsOn, "flow %q depends on unknown flow %q", "live", "backfil")
	if got, want := e.Error(), `[DEPENDS_ON_UNKNOWN_FLOW] flow "live" depends on unknown flow "backfil"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if e.Hint != CodeHint(CodeUnknownDependsOn) || e.Cause != nil || e.Retriable || e.Names != nil {
		t.Errorf("Errorf: %+v", e)
	}
	if got, want := (&Error{Code: CodeStoreClosed}).Error(), "[STORE_CLOSED] the event store is closed"; got != want {
		t.Errorf("Error() without a message = %q, want %q", got, want)
	}
	if got, want := Errorf(CodeFlowFailed, "100%% done").Error(), "[FLOW_FAILED] 100% done"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := Errorf("UNKNOWN_CODE", "x"); got.Hint != "" || got.Error() != "[UNKNOWN_CODE] x" {
		t.Errorf("unknown code: %+v", got)
	}

	e = e.WithNames("live").WithNames("backfil").WithHint("check the spelling")
	if !slices.Equal(e.Names, []string{"live", "backfil"}) || e.Hint != "check the spelling" {
		t.Errorf("WithNames/WithHint: %+v", e)
	}
	if IsRetriable(e) {
		t.Error("retriable before AsRetriable")
	}
	if !IsRetriable(fmt.Errorf("outer: %w", e.AsRetriable())) {
		t.Error("AsRetriable not seen through wrapping")
	}
	if IsRetriable(nil) || IsRetriable(io.EOF) {
		t.Error("IsRetriable of a plain error")
	}
}

func TestWrap(t *testing.T) {
	cause := fmt.Errorf("open /data/x: %w", io.ErrUnexpectedEOF)
	e := Wrap(CodeStoreIO, cause, "reading the log")
	if got, want := e.Error(), "[STORE_IO] reading the log: open /data/x: unexpected EOF"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if e.Hint != CodeHint(CodeStoreIO) {
		t.Errorf("Hint = %q", e.Hint)
	}
	if !errors.Is(e, io.ErrUnexpectedEOF) || errors.Unwrap(e) != cause {
		t.Error("Wrap does not wrap its cause")
	}
	if got, want := Wrap(CodeStoreIO, cause, "").Error(), "[STORE_IO] open /data/x: unexpected EOF"; got != want {
		t.Errorf("Error() without context = %q, want %q", got, want)
	}
}

func TestCodeOf(t *testing.T) {
	inner := Errorf(CodeSourceFailed, "kafka down")
	outer := Wrap(CodeFlowFailed, inner, "flow f")
	tests := []struct {
		name string
		err  error
		want Code
	}{
		{"nil", nil, ""},
		{"plain", errors.New("x"), ""},
		{"direct", inner, CodeSourceFailed},
		{"as error interface", error(inner), CodeSourceFailed},
		{"wrapped", fmt.Errorf("a: %w", inner), CodeSourceFailed},
		{"wrapped twice", fmt.Errorf("b: %w", fmt.Errorf("a: %w", inner)), CodeSourceFailed},
		{"outermost wins", outer, CodeFlowFailed},
		{"outermost wins when wrapped", fmt.Errorf("c: %w", outer), CodeFlowFailed},
		{"joined", errors.Join(errors.New("x"), inner), CodeSourceFailed},
		{"formatted, not wrapped", fmt.Errorf("a: %v", inner), ""},
		{"problems are not an *Error", Problems{inner}, ""},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("%s: CodeOf = %q, want %q", tt.name, got, tt.want)
		}
	}
	if !errors.Is(outer, inner) {
		t.Error("errors.Is does not see the inner error")
	}
}

func TestProblems(t *testing.T) {
	p := Problems{
		Errorf(CodeCircularDependency, "a -> b -> a").WithNames("a", "b"),
		Errorf(CodeUnknownDataset, "flow %q reads %q", "f", "raw").WithHint(""),
	}
	want := "2 problem(s) in the pipeline:\n" +
		"  [CIRCULAR_DEPENDENCY] a -> b -> a (hint: break the cycle: remove a depends_on or a read that closes it)\n" +
		`  [TABLE_OR_VIEW_NOT_FOUND] flow "f" reads "raw"`
	if got := p.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if got := (Problems{}).Error(); got != "0 problem(s) in the pipeline:" {
		t.Errorf("empty: %q", got)
	}
	if !p.Has(CodeCircularDependency) || !p.Has(CodeUnknownDataset) || p.Has(CodeEmptyPipeline) || (Problems{}).Has(CodeFlowFailed) {
		t.Error("Has is wrong")
	}
	var err error = p
	var got Problems
	if !errors.As(fmt.Errorf("validating: %w", err), &got) || len(got) != 2 {
		t.Error("Problems not found through wrapping")
	}
}

func TestErrorInfoOf(t *testing.T) {
	if ErrorInfoOf(nil) != nil {
		t.Error("ErrorInfoOf(nil) is not nil")
	}
	e := Errorf(CodeSchemaDrift, "column a changed").WithNames("t")
	got := ErrorInfoOf(fmt.Errorf("commit: %w", e))
	want := ErrorInfo{Code: CodeSchemaDrift, Message: e.Error(), Hint: e.Hint, Names: []string{"t"}}
	if got.Code != want.Code || got.Message != want.Message || got.Hint != want.Hint || !slices.Equal(got.Names, want.Names) {
		t.Errorf("ErrorInfoOf(*Error) = %+v, want %+v", got, want)
	}
	p := Problems{Errorf(CodeEmptyPipeline, "nothing").WithNames("x"), Errorf(CodeInvalidName, "bad")}
	got = ErrorInfoOf(p)
	if got.Code != CodeEmptyPipeline || got.Message != p.Error() || got.Hint != CodeHint(CodeEmptyPipeline) || !slices.Equal(got.Names, []string{"x"}) {
		t.Errorf("ErrorInfoOf(Problems) = %+v", got)
	}
	got = ErrorInfoOf(errors.New("boom"))
	if got.Code != CodeFlowFailed || got.Message != "boom" {
		t.Errorf("ErrorInfoOf(plain) = %+v", got)
	}
}
