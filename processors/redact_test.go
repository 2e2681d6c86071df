package processors

import "testing"

// TestRedactPasswordsInValues: a sink's options in its definition event show no password:
// not under a key that says so, not inside a URL or a key=value DSN; a
// secret named ${env:NAME} shows as its reference.
func TestRedactPasswordsInValues(t *testing.T) {
	got := redact(map[string]string{
		"password":  "hunter2",
		"dsn":       "postgres://app:hunter2@db:5432/sales?sslmode=require",
		"kv":        "host=db user=app password=hunter2 dbname=sales",
		"quoted":    "host=db password='hunter 2' dbname=sales",
		"reference": "postgres://app:${env:PG_PASSWORD}@db/sales",
		"path":      "out/orders",
	})
	want := map[string]string{
		"password":  "*****",
		"dsn":       "postgres://app:*****@db:5432/sales?sslmode=require",
		"kv":        "host=db user=app password=***** dbname=sales",
		"quoted":    "host=db password=***** dbname=sales",
		"reference": "postgres://app:${env:PG_PASSWORD}@db/sales",
		"path":      "out/orders",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
}
