package pipeline

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

func TestParseTriggerInterval(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10 milliseconds", 10 * time.Millisecond, true},
		{"1 second", time.Second, true},
		{"1.5 Seconds", 1500 * time.Millisecond, true},
		{"5 minutes", 5 * time.Minute, true},
		{"2 hours", 2 * time.Hour, true},
		{"  250   ms ", 250 * time.Millisecond, true},
		{"10", 0, false},
		{"10 days", 0, false},
		{"-1 second", 0, false},
		{"0 seconds", 0, false},
		{"0.1 milliseconds", 0, false},
		{"NaN seconds", 0, false},
		{"1e300 hours", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseTriggerInterval(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTriggerInterval(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseTriggerInterval(f *testing.F) {
	for _, s := range []string{"10 milliseconds", "1 second", "1e300 hours", "x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTriggerInterval(s)
		if err == nil && d < time.Millisecond {
			t.Fatalf("%q gave %v", s, d)
		}
	})
}

// TestTriggerIntervalFromConfiguration: pipeline.yaml's
// pipelines.trigger.interval sets the pipeline's, and a wrong one is a
// problem of the project.
func TestTriggerIntervalFromConfiguration(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
		code  domain.Code
	}{{"20 milliseconds", 20 * time.Millisecond, ""}, {"soon", 0, domain.CodeInvalidOptions}} {
		dir := t.TempDir()
		yaml := "name: p\nconfiguration:\n  pipelines.trigger.interval: " + tt.value + "\n"
		if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "t.sql"), []byte("CREATE MATERIALIZED VIEW v AS SELECT 1 AS x;"), 0o644); err != nil {
			t.Fatal(err)
		}
		proj, err := LoadProject(dir)
		if err != nil {
			t.Fatal(err)
		}
		p, problems := LoadSQLProject(proj)
		var code domain.Code
		if len(problems) > 0 {
			code = domain.CodeOf(problems[0])
		}
		if p.TriggerInterval != tt.want || code != tt.code {
			t.Errorf("%q: interval %v, problems %v; want %v, %q", tt.value, p.TriggerInterval, problems, tt.want, tt.code)
		}
	}
}
