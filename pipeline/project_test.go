package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/domain"
)

// The settings files under testdata/projects are read as if each were the
// pipeline.yaml of testdata/projects/tree.
func TestParseProject(t *testing.T) {
	tree, err := filepath.Abs("testdata/projects/tree")
	if err != nil {
		t.Fatal(err)
	}
	lib := func(rel string) string { return filepath.Join(tree, filepath.FromSlash(rel)) }
	allSQL := []string{lib("extra.sql"), lib("transformations/a.sql"), lib("transformations/sub/b.sql")}
	cases := []struct {
		file string
		want *Project // nil when problems are expected
		// problems as "CODE line", in order
		problems []string
		// a fragment of each problem's message, in order
		messages []string
	}{
		{file: "defaults.yaml", want: &Project{Name: "demo", Storage: lib(".sluice"), Libraries: allSQL}},
		{file: "full.yaml", want: &Project{
			Name: "sales", Storage: lib("state/events"), Libraries: allSQL,
			Configuration: map[string]string{"source_dir": "data", "threshold": "10"},
			Catalog:       "main", Schema: "sales", Continuous: true, Development: true, MaxConcurrentFlows: 8,
		}},
		{file: "storage_excluded.yaml", want: &Project{Name: "demo", Storage: lib("transformations/sub"), Libraries: allSQL[:2]}},
		{file: "glob_dir.yaml", want: &Project{Name: "demo", Storage: lib(".sluice"), Libraries: allSQL[1:]}},
		{file: "hooks.yaml", want: &Project{Name: "demo", Storage: lib(".sluice"), Libraries: allSQL, EventHooks: []EventHook{{
			Name: "alerts", On: []string{"update_failed", "expectation_failed"}, URL: "https://example.com/hook", MinFailureRate: 0.05,
			Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}, Retries: 3}}}},
		{file: "bad_hooks.yaml",
			problems: []string{"PIPELINE_CONFIG_INVALID 4", "PIPELINE_CONFIG_INVALID 6", "PIPELINE_CONFIG_INVALID 10"},
			messages: []string{`no field "onn" (did you mean on?)`, `two event hooks are named "a"`, "min_failure_rate must be a number from 0 to 1"}},
		{file: "unknown_field.yaml", problems: []string{"PIPELINE_CONFIG_INVALID 2"}, messages: []string{`unknown field "libaries" (did you mean libraries?)`}},
		{file: "missing_name.yaml", problems: []string{"PIPELINE_CONFIG_INVALID 1"}, messages: []string{"no name"}},
		{file: "config_not_string.yaml",
			problems: []string{"PIPELINE_CONFIG_INVALID 4", "PIPELINE_CONFIG_INVALID 5"},
			messages: []string{`value of "threshold" must be a string, not the number 10`, `value of "flags" must be a string, not a list`}},
		{file: "glob_no_match.yaml", problems: []string{"LIBRARY_NOT_FOUND 4"}, messages: []string{`glob "nowhere/**/*.sql" matches no .sql file`}},
		{file: "file_missing.yaml", problems: []string{"LIBRARY_NOT_FOUND 3"}, messages: []string{`"missing.sql" does not exist`}},
		{file: "bad_types.yaml",
			problems: []string{"PIPELINE_CONFIG_INVALID 1", "PIPELINE_CONFIG_INVALID 2", "PIPELINE_CONFIG_INVALID 3"},
			messages: []string{"name must be a string, not a list", `continuous must be true or false, not "yes please"`, "at least 1, not the number 0"}},
		{file: "bad_library.yaml",
			problems: []string{"PIPELINE_CONFIG_INVALID 3", "PIPELINE_CONFIG_INVALID 4", "PIPELINE_CONFIG_INVALID 5"},
			messages: []string{`unknown library kind "notebook"`, `unknown field "pattern" in glob`, `file takes a mapping with path`}},
		{file: "syntax.yaml", problems: []string{"PIPELINE_CONFIG_INVALID 2"}, messages: []string{"did not find expected"}},
		{file: "not_mapping.yaml", problems: []string{"PIPELINE_CONFIG_INVALID 1"}, messages: []string{"must be a mapping"}},
		{file: "empty.yaml", problems: []string{"PIPELINE_CONFIG_INVALID 1"}, messages: []string{"empty"}},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".yaml"), func(t *testing.T) {
			path, err := filepath.Abs(filepath.Join("testdata/projects", c.file))
			if err != nil {
				t.Fatal(err)
			}
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			proj, err := ParseProject(tree, path, text)
			if c.want != nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				c.want.Dir, c.want.File = tree, path
				if diff := cmp.Diff(c.want, proj); diff != "" {
					t.Errorf("project (-want +got):\n%s", diff)
				}
				return
			}
			var problems domain.Problems
			if !errors.As(err, &problems) {
				t.Fatalf("want problems, got %v", err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, fmt.Sprintf("%s %d", p.Code, p.Line))
				if p.File != filepath.Base(path) { // relative to the pipeline directory
					t.Errorf("problem %q names file %q, want %q", p.Message, p.File, filepath.Base(path))
				}
				if p.Hint == "" {
					t.Errorf("problem %q has no hint", p.Message)
				}
			}
			if diff := cmp.Diff(c.problems, got); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\n%v", diff, problems)
			}
			for i, m := range c.messages {
				if !strings.Contains(problems[i].Message, m) {
					t.Errorf("problem %d: %q does not say %q", i, problems[i].Message, m)
				}
				if p := problems[i]; p.Line > 0 && !strings.Contains(p.Message, fmt.Sprintf("%s:%d:", filepath.Base(path), p.Line)) {
					t.Errorf("problem %d: %q does not name the file and line", i, p.Message)
				}
			}
		})
	}
}

func TestFindAndLoadProject(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := FindProject(dir); domain.CodeOf(err) != domain.CodePipelineNotFound {
		t.Fatalf("FindProject of a directory without pipeline.yaml: %v", err)
	}
	if _, err := LoadProject(dir); domain.CodeOf(err) != domain.CodePipelineNotFound {
		t.Fatalf("LoadProject of a directory without pipeline.yaml: %v", err)
	}
	write("pipeline.yml", "name: p\n")
	write("sql/deep/q.sql", "SELECT 1;\n")
	got, err := FindProject(filepath.Join(dir, "sql", "deep"))
	if err != nil || got != dir {
		t.Fatalf("FindProject from below = %q, %v; want %q", got, err, dir)
	}
	proj, err := LoadProject(got)
	if err != nil {
		t.Fatal(err)
	}
	if proj.Name != "p" || proj.File != filepath.Join(dir, "pipeline.yml") || len(proj.Libraries) != 1 {
		t.Errorf("LoadProject = %+v", proj)
	}
	write("pipeline.yaml", "name: q\n")
	if _, err := LoadProject(dir); domain.CodeOf(err) != domain.CodePipelineConfigInvalid {
		t.Errorf("both pipeline.yaml and pipeline.yml: %v", err)
	}
}

// FuzzParseProject: any text gives a project or problems, each with a code
// and a hint, never a panic.
func FuzzParseProject(f *testing.F) {
	files, _ := filepath.Glob("testdata/projects/*.yaml")
	for _, name := range files {
		text, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	tree, err := filepath.Abs("testdata/projects/tree")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		proj, err := ParseProject(tree, filepath.Join(tree, "pipeline.yaml"), text)
		if err == nil {
			if proj == nil || proj.Name == "" {
				t.Fatalf("no error and project %+v", proj)
			}
			return
		}
		var problems domain.Problems
		if !errors.As(err, &problems) || len(problems) == 0 {
			t.Fatalf("error is not problems: %v", err)
		}
		for _, p := range problems {
			if p.Code == "" || p.Hint == "" {
				t.Fatalf("problem without a code or a hint: %+v", p)
			}
		}
	})
}
