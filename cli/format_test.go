package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sources"
	"github.com/sluicehq/sluice/sql/syntax"
)

// TestRunExitCodes runs the command line in this process over a Go pipeline.
func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	newPipeline := func() *pipeline.Pipeline {
		p := pipeline.New("unit")
		p.StreamingTable("numbers", pipeline.StreamFrom(sources.Range(0, 10)))
		return p
	}
	broken := pipeline.New("broken")
	broken.StreamingTable("t", pipeline.ReadStream("missing"))
	cases := []struct {
		args []string
		p    *pipeline.Pipeline
		code int
		err  string
	}{
		{[]string{"-p", dir, "validate"}, newPipeline(), ExitOK, ""},
		{[]string{"-p", dir, "validate"}, broken, ExitInvalid, "TABLE_OR_VIEW_NOT_FOUND"},
		{[]string{"-p", dir, "run"}, broken, ExitInvalid, "TABLE_OR_VIEW_NOT_FOUND"},
		{[]string{"-p", dir, "run"}, newPipeline(), ExitOK, "COMPLETED"},
		{[]string{"run", "-p", dir, "--full-refresh-all", "--refresh-failed"}, newPipeline(), ExitInvalid, "CONFLICTING_UPDATE_OPTIONS"},
		{[]string{"-p", dir, "table", "numbers", "--limit", "-1"}, newPipeline(), ExitInvalid, "--limit"},
		{[]string{"-p", dir, "table"}, newPipeline(), ExitInvalid, "accepts 1 arg"},
		{[]string{"-p", dir, "events", "--format", "yaml"}, newPipeline(), ExitInvalid, "--format"},
		{[]string{"-p", dir, "replay", "--verify"}, newPipeline(), ExitOK, ""},
		{[]string{"--nope"}, newPipeline(), ExitInvalid, "unknown flag"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), c.args, &stdout, &stderr, Pipeline(c.p))
		if code != c.code || !strings.Contains(stderr.String(), c.err) {
			t.Errorf("%v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, c.err, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"-p", dir, "table", "numbers", "--format", "csv"}, &stdout, &stderr, Pipeline(newPipeline())); code != 0 || strings.Count(stdout.String(), "\n") != 11 {
		t.Errorf("table numbers: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// The SQL that init writes is pipeline SQL the parser takes, with the
// configuration init writes beside it.
func TestInitSQLParses(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"init", filepath.Join(dir, "demo")}, &stdout, &stderr, Pipeline(pipeline.New("x"))); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, stderr.String())
	}
	proj, err := pipeline.LoadProject(filepath.Join(dir, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if len(proj.Libraries) != 1 || proj.Name != "demo" || proj.Configuration["source_dir"] != "data" {
		t.Fatalf("project: %+v", proj)
	}
	text, err := os.ReadFile(proj.Libraries[0])
	if err != nil {
		t.Fatal(err)
	}
	f, err := syntax.ParseFile(proj.Libraries[0], string(text), proj.Configuration)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Statements) != 2 {
		t.Errorf("%d statements, want 2", len(f.Statements))
	}
}

// events --follow goes on with new events until canceled, then exits 0.
func TestEventsFollow(t *testing.T) {
	dir := t.TempDir()
	p := pipeline.New("follow")
	p.StreamingTable("numbers", pipeline.StreamFrom(sources.Range(0, 3)))
	if code := Run(context.Background(), []string{"-p", dir, "run"}, io.Discard, io.Discard, Pipeline(p)); code != 0 {
		t.Fatalf("run: exit %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := Run(ctx, []string{"-p", dir, "events", "--follow", "--format", "jsonl", "--type", "update_progress"}, &stdout, &stderr, Pipeline(p)); code != 0 {
		t.Fatalf("events --follow: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"state":"COMPLETED"`) {
		t.Errorf("events --follow:\n%s", stdout.String())
	}
}
