package sql

import (
	"testing"
	"time"
)

// FuzzISOTimestamp holds the quick reading of ISO timestamps to the
// layouts it stands in for: whatever it accepts, they read alike, in UTC
// and in a zone with daylight saving.
func FuzzISOTimestamp(f *testing.F) {
	for _, s := range []string{
		"2025-01-01T00:00:00.014Z", "2025-01-01 00:00:00", "2024-02-29T23:59:59.999999999+05:30",
		"2023-02-29T00:00:00", "1969-12-31T23:59:59.5-08:00", "0001-01-01T00:00:00Z", "2025-03-30 02:30:00",
		"2025-01-01T24:00:00", "2025-01-01T00:00:00.Z", "2025-01-01T00:00:00+1:00",
	} {
		f.Add(s)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		us, zoned, ok := parseISOTimestamp(s)
		if !ok {
			return
		}
		for _, loc := range []*time.Location{time.UTC, paris} {
			want, wok := parseTimestampByLayouts(s, loc)
			got := us
			if !zoned {
				got = fromLocalMicros(us, loc)
			}
			if !wok || got != want {
				t.Fatalf("%q in %s: quick reading %d, the layouts %d (ok %v)", s, loc, got, want, wok)
			}
		}
	})
}
