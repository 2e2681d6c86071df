package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sources"
	"github.com/sluicehq/sluice/sql"
)

func TestJSONValue(t *testing.T) {
	pt := domain.StructOf(domain.Field{Name: "x", Type: domain.TypeInt64}, domain.Field{Name: "y", Type: domain.TypeString})
	cases := []struct {
		v    domain.Value
		t    domain.Type
		want string
	}{
		{domain.Null(), domain.TypeInt64, `null`},
		{domain.Bool(true), domain.TypeBool, `true`},
		{domain.Int(42), domain.TypeInt64, `42`},
		{domain.Int(1 << 53), domain.TypeInt64, `9007199254740992`},
		{domain.Int(1<<53 + 1), domain.TypeInt64, `"9007199254740993"`},
		{domain.Int(-(1 << 53)), domain.TypeInt64, `-9007199254740992`},
		{domain.Int(-(1<<53 + 1)), domain.TypeInt64, `"-9007199254740993"`},
		{domain.Int(math.MaxInt64), domain.TypeInt64, `"9223372036854775807"`},
		{domain.Float(2.5), domain.TypeFloat64, `2.5`},
		{domain.Float(1e21), domain.TypeFloat64, `1e+21`},
		{domain.Float(math.NaN()), domain.TypeFloat64, `"NaN"`},
		{domain.Float(math.Inf(1)), domain.TypeFloat64, `"Infinity"`},
		{domain.Float(math.Inf(-1)), domain.TypeFloat64, `"-Infinity"`},
		{domain.String("a\"b\\c\n\x01é\u2028"), domain.TypeString, `"a\"b\\c\n\u0001é\u2028"`},
		{domain.Bytes([]byte{0, 1, 2}), domain.TypeBytes, `"AAEC"`},
		{domain.Timestamp(time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)), domain.TypeTimestamp, `"2026-12-01T10:00:00.123456Z"`},
		{domain.Timestamp(time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("x", 3600))), domain.TypeTimestamp, `"2026-12-01T09:00:00Z"`},
		{domain.Date(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)), domain.TypeDate, `"1969-12-31"`},
		{domain.List(domain.Int(1), domain.Null()), domain.ListOf(domain.TypeInt64), `[1,null]`},
		{domain.Struct(domain.Int(7), domain.String("why")), pt, `{"x":7,"y":"why"}`},
		{domain.List(domain.Struct(domain.Int(1<<60), domain.Null())), domain.ListOf(pt), `[{"x":"1152921504606846976","y":null}]`},
	}
	for _, c := range cases {
		got := string(jsonValue(nil, c.v, c.t))
		if got != c.want {
			t.Errorf("%v: got %s, want %s", c.v, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%v: %s is not JSON", c.v, got)
		}
	}
}

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
	f, err := sql.ParseFile(proj.Libraries[0], string(text), proj.Configuration)
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
