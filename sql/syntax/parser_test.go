package syntax

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/parse")

// goldenInputs lists testdata/parse/*.sql; a file X.conf beside X.sql holds
// the configuration for ${key} substitution, one key=value a line.
func goldenInputs(t testing.TB) []string {
	files, err := filepath.Glob("testdata/parse/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/parse/*.sql")
	}
	return files
}

func readConf(t testing.TB, sqlPath string) map[string]string {
	conf := map[string]string{}
	b, err := os.ReadFile(strings.TrimSuffix(sqlPath, ".sql") + ".conf")
	if errors.Is(err, os.ErrNotExist) {
		return conf
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			conf[k] = strings.ReplaceAll(v, `\n`, "\n")
		}
	}
	return conf
}

// render is the golden form of a parse: the error, or the notes and each
// statement with its position.
func render(f *File, err error) string {
	if err != nil {
		return err.Error() + "\n"
	}
	var b strings.Builder
	for _, n := range f.Notes {
		b.WriteString("-- note " + n.Pos.String() + ": " + n.Text + "\n")
	}
	for _, s := range f.Statements {
		b.WriteString("-- " + s.Position().String() + "\n")
		b.WriteString(Format(s))
		b.WriteString(";\n\n")
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, path := range goldenInputs(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, perr := ParseFile(filepath.Base(path), string(src), readConf(t, path))
			got := render(f, perr)
			golden := strings.TrimSuffix(path, ".sql") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./sql -update)", err)
			}
			if got != string(want) {
				t.Errorf("parse of %s differs from %s:\n--- got\n%s\n--- want\n%s", path, golden, got, want)
			}
		})
	}
}

// TestRoundTrip: for every golden input that parses, parsing the rendering
// gives the same rendering, in both the pretty and the one-line forms.
func TestRoundTrip(t *testing.T) {
	for _, path := range goldenInputs(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseFile(filepath.Base(path), string(src), readConf(t, path))
		if err != nil {
			continue
		}
		checkRoundTrip(t, path, f)
	}
}

func statementsText(f *File, one bool) string {
	var b strings.Builder
	for _, s := range f.Statements {
		if one {
			b.WriteString(s.String())
		} else {
			b.WriteString(Format(s))
		}
		b.WriteString(";\n")
	}
	return b.String()
}

func checkRoundTrip(t *testing.T, name string, f *File) {
	t.Helper()
	want := statementsText(f, false)
	for _, one := range []bool{false, true} {
		text := statementsText(f, one)
		g, err := ParseFile("rendering", text, nil)
		if err != nil {
			t.Errorf("%s: the rendering does not parse: %v\n%s", name, err, text)
			continue
		}
		if got := statementsText(g, false); got != want {
			t.Errorf("%s: round trip differs (one line: %v):\n--- got\n%s\n--- want\n%s", name, one, got, want)
		}
	}
}

func TestErrorIsDomainError(t *testing.T) {
	_, err := ParseFile("x.sql", "SELECT ${nope}", nil)
	if got := domain.CodeOf(err); got != domain.CodeUnboundParameter {
		t.Fatalf("code %q, want %q", got, domain.CodeUnboundParameter)
	}
	var e *Error
	if !errors.As(err, &e) || e.Pos != (Pos{"x.sql", 1, 8}) {
		t.Fatalf("error %#v", err)
	}
	_, err = ParseFile("x.sql", "SELECT FROM", nil)
	if got := domain.CodeOf(err); got != domain.CodeParseSyntax {
		t.Fatalf("code %q, want %q", got, domain.CodeParseSyntax)
	}
}
