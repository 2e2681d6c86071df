package processors

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

func TestBackoff(t *testing.T) {
	p := RetryPolicy{Attempts: 5, Initial: time.Second, Max: 5 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for n, w := range want {
		if got := p.backoff(n); got != w {
			t.Errorf("backoff(%d) = %s, want %s", n, got, w)
		}
	}
}

func TestRedact(t *testing.T) {
	got := redact(map[string]string{
		"kafka.bootstrap.servers": "broker:9092",
		"kafka.sasl.jaas.config":  "user=a password=b",
		"password":                "hunter2",
		"api_token":               "t0k3n",
		"aws.secret_access_key":   "s3cr3t",
		"topic":                   "events",
	})
	for k, v := range got {
		secret := k != "kafka.bootstrap.servers" && k != "topic"
		if secret != (v == "*****") {
			t.Errorf("%s = %q", k, v)
		}
	}
	if redact(nil) != nil {
		t.Error("redact(nil) is not nil")
	}
}

// TestLimitDefaultsPerBound: a bound set alone keeps the others' defaults.
func TestLimitDefaultsPerBound(t *testing.T) {
	got := Options{Limit: domain.ReadLimit{MaxRows: 10}}.withDefaults().Limit
	if want := (domain.ReadLimit{MaxFiles: DefaultLimit.MaxFiles, MaxRows: 10, MaxBytes: DefaultLimit.MaxBytes}); got != want {
		t.Fatalf("limit %+v, want %+v", got, want)
	}
}
