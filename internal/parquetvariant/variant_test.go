package parquetvariant

import (
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// TestRoundTrip encodes variant texts as Spark's parse_json types them and
// decodes them back: the text is the same but where Spark's to_json prints
// a type another way (a double in Java's notation).
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`null`, `null`},
		{`true`, `true`},
		{`"text"`, `"text"`},
		{`"a long string of more than sixty-three bytes, so not a short string at all"`, `"a long string of more than sixty-three bytes, so not a short string at all"`},
		{`127`, `127`},
		{`-32768`, `-32768`},
		{`2147483648`, `2147483648`},
		{`-9223372036854775808`, `-9223372036854775808`},
		{`9223372036854775808`, `9223372036854775808`}, // beyond a bigint: a decimal
		{`12345678901234567890123456789012345678`, `12345678901234567890123456789012345678`}, // 38 digits
		{`123456789012345678901234567890123456789`, `1.2345678901234568E38`},                 // 39: a double
		{`1.50`, `1.50`},
		{`-0.000001`, `-0.000001`},
		{`0.1234567890123456789`, `0.1234567890123456789`},
		{`1e3`, `1000.0`},
		{`2.5E-7`, `2.5E-7`},
		{`[1, "a", [], {}]`, `[1,"a",[],{}]`},
		{`{"b": 1, "a": {"y": [null], "x": 2}}`, `{"a":{"x":2,"y":[null]},"b":1}`},
	} {
		meta, value, err := Encode(c.in)
		if err != nil {
			t.Fatalf("Encode(%s): %v", c.in, err)
		}
		got, err := Decode(meta, value)
		if err != nil {
			t.Fatalf("Decode(Encode(%s)): %v", c.in, err)
		}
		if got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestEncodeRefusesWhatIsNotJSON(t *testing.T) {
	if _, _, err := Encode(`{"a": }`); err == nil {
		t.Error("Encode took text that is not JSON")
	}
}

// FuzzDecode: any bytes decode to a variant's text or fail, and never
// panic; a decoded text re-encodes, and after one re-encoding (which may
// retype a number: a double -0.0 becomes the decimal 0.0, as Spark's
// parse_json types it) encoding is stable.
func FuzzDecode(f *testing.F) {
	for _, doc := range []string{`{"a":[1,2.5,"x"]}`, `1.50`, `"s"`, `null`, `[{"k":true}]`} {
		meta, value, err := Encode(doc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(meta, value)
	}
	f.Fuzz(func(t *testing.T, meta, value []byte) {
		text, err := Decode(meta, value)
		if err != nil {
			return
		}
		if _, err := domain.ParseJSON(text); err != nil {
			t.Fatalf("Decode gave %q, which is not JSON: %v", text, err)
		}
		reencode := func(text string) string {
			m, v, err := Encode(text)
			if err != nil {
				t.Fatalf("Encode(%s): %v", text, err)
			}
			again, err := Decode(m, v)
			if err != nil {
				t.Fatalf("Decode(Encode(%s)): %v", text, err)
			}
			return again
		}
		once := reencode(text)
		if twice := reencode(once); twice != once {
			t.Fatalf("%s re-encoded decodes to %s, then to %s", text, once, twice)
		}
	})
}
