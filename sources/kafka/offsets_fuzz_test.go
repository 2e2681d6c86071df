package kafka

import "testing"

// FuzzParsePosition: any checkpoint text reads as a position or an error,
// never a panic, and a position read writes back to one that reads the same.
func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{`{"t":{"0":5}}`, `{"$from":{"t":{"1":0}},"t":{"1":3}}`, `{}`, `[]`, `{"t":{"x":1}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePosition([]byte(s))
		if err != nil {
			return
		}
		text, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := parsePosition(text)
		if err != nil || len(again.to) != len(p.to) || len(again.from) != len(p.from) {
			t.Fatalf("%s wrote %s, read back as %v (%v)", s, text, again, err)
		}
	})
}
