// Package pgtest names the PostgreSQL server the tests use.
package pgtest

import "os"

// DSN is the local server (trust authentication); SLUICE_TEST_PG_DSN
// points the tests at another.
func DSN() string {
	if dsn := os.Getenv("SLUICE_TEST_PG_DSN"); dsn != "" {
		return dsn
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}
