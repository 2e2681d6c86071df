package sql

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// FuzzNumberFormat: a number format and an input never panic, a value read
// fits the format's decimal, and writing it with the format reads back as
// the same value.
func FuzzNumberFormat(f *testing.F) {
	for _, seed := range [][2]string{{"99,999.9S", "12,454.8-"}, {"$99.99", "$78.12"}, {"99.9PR", "<12.5>"}, {"000D00", "454.00"}, {"S9", "+1"}, {"9G9", "1,2"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, format, input string) {
		nf, ok := parseNumFormat(format)
		if !ok {
			return
		}
		u, ok := nf.parse(input)
		if !ok {
			return
		}
		if !u.FitsPrecision(nf.intDigits + nf.fracDigits) {
			t.Fatalf("%q read with %q gives %v, beyond the format's digits", input, format, u.Big())
		}
		text := nf.format(u.Big(), nf.fracDigits)
		if strings.Contains(text, "#") {
			return
		}
		back, ok := nf.parse(strings.TrimSpace(strings.ReplaceAll(text, " ", "")))
		if !ok || back != u {
			t.Fatalf("%q with %q is %s, written %q, which reads back as %v (%v)", input, format,
				domain.FormatDecimal(u, nf.fracDigits), text, back.Big(), ok)
		}
	})
}
