package domain

import (
	"strings"
	"testing"
)

func TestParseDebezium(t *testing.T) {
	cases := []struct {
		name, event string
		op, image   string // image: its JSON text, "" for none
		ts          int64  // -1: none
		seq, err    string
	}{
		{"insert with the schema envelope", `{"schema": {"type": "struct"}, "payload": {"before": null, "after": {"id": 1}, "source": {"lsn": 42, "ts_ms": 1000}, "op": "c", "ts_ms": 2000}}`,
			"INSERT", `{"id": 1}`, 1000, "00000000000000000042", ""},
		{"update without it", `{"before": {"id": 1}, "after": {"id": 1, "v": 2}, "source": {"lsn": 43, "ts_ms": 1001}, "op": "u"}`,
			"UPDATE", `{"id": 1, "v": 2}`, 1001, "00000000000000000043", ""},
		{"delete: the before image", `{"before": {"id": 1}, "after": null, "source": {"lsn": 44, "ts_ms": 1002}, "op": "d"}`,
			"DELETE", `{"id": 1}`, 1002, "00000000000000000044", ""},
		{"snapshot read", `{"after": {"id": 2}, "source": {"lsn": 7}, "op": "r", "ts_ms": 5}`, "READ", `{"id": 2}`, 5, "00000000000000000007", ""},
		{"truncate: no image", `{"source": {"lsn": 45, "ts_ms": 1003}, "op": "t"}`, "TRUNCATE", "", 1003, "00000000000000000045", ""},
		{"MySQL position", `{"after": {"id": 1}, "source": {"file": "mysql-bin.000003", "pos": 154, "row": 1, "ts_ms": 9}, "op": "c"}`,
			"INSERT", `{"id": 1}`, 9, "mysql-bin.000003/00000000000000000154/0000000001", ""},
		{"SQL Server change LSN", `{"after": {"id": 1}, "source": {"change_lsn": "0000002b:00000658:0003", "ts_ms": 9}, "op": "c"}`,
			"INSERT", `{"id": 1}`, 9, "0000002b:00000658:0003", ""},
		{"Oracle SCN", `{"after": {"id": 1}, "source": {"scn": "12345", "ts_ms": 9}, "op": "c"}`,
			"INSERT", `{"id": 1}`, 9, strings.Repeat("0", 25) + "12345", ""},
		{"source time only", `{"after": {"id": 1}, "source": {"ts_ms": 9}, "op": "c"}`, "INSERT", `{"id": 1}`, 9, "00000000000000000009", ""},
		{"unknown op", `{"after": {"id": 1}, "op": "x"}`, "", "", -1, "", `op "x"`},
		{"no op", `{"after": {"id": 1}}`, "", "", -1, "", "no op"},
		{"delete without before", `{"after": null, "op": "d"}`, "", "", -1, "", "no before image"},
		{"not an object", `[1]`, "", "", -1, "", "JSON object"},
		{"not JSON", `{"op": `, "", "", -1, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParseDebezium(tc.event)
			if tc.op == "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			image := ""
			if ev.Image != nil {
				image = ev.Image.Raw
			}
			ts := int64(-1)
			if ev.SourceTS != nil {
				ts = *ev.SourceTS
			}
			if ev.Op != tc.op || image != tc.image || ts != tc.ts || ev.Sequence != tc.seq {
				t.Fatalf("got %s %q %d %q, want %s %q %d %q", ev.Op, image, ts, ev.Sequence, tc.op, tc.image, tc.ts, tc.seq)
			}
		})
	}
}

// FuzzParseDebezium: any text either is refused with an error or gives an
// event with a known operation, an image when the operation has one, and a
// sequence that does not depend on anything but the text.
func FuzzParseDebezium(f *testing.F) {
	for _, s := range []string{
		`{"schema": {}, "payload": {"after": {"id": 1}, "source": {"lsn": 1}, "op": "c"}}`,
		`{"before": {"id": 1}, "source": {"file": "b.1", "pos": 3}, "op": "d"}`,
		`{"source": {"scn": "9"}, "op": "t"}`, `{"op": "u", "after": {}}`, `null`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ev, err := ParseDebezium(s)
		if err != nil {
			return
		}
		switch ev.Op {
		case "TRUNCATE":
			if ev.Image != nil {
				t.Fatalf("a truncate with an image: %q", s)
			}
		case "INSERT", "UPDATE", "DELETE", "READ":
			if ev.Image == nil || ev.Image.Kind != JSONObject {
				t.Fatalf("%s without an object image: %q", ev.Op, s)
			}
		default:
			t.Fatalf("op %q from %q", ev.Op, s)
		}
		again, _ := ParseDebezium(s)
		if again.Sequence != ev.Sequence {
			t.Fatalf("sequence %q then %q", ev.Sequence, again.Sequence)
		}
	})
}

// With the schema envelope, the image's columns of a logical type take the
// value the type means.
func TestDebeziumLogicalTypes(t *testing.T) {
	event := `{"schema": {"type": "struct", "fields": [
	  {"type": "struct", "field": "before", "fields": []},
	  {"type": "struct", "field": "after", "fields": [
	    {"type": "int32", "field": "id"},
	    {"type": "int32", "name": "io.debezium.time.Date", "field": "born"},
	    {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "field": "seen"},
	    {"type": "int64", "name": "io.debezium.time.Timestamp", "field": "ms"},
	    {"type": "int64", "name": "io.debezium.time.NanoTimestamp", "field": "ns"},
	    {"type": "string", "name": "io.debezium.time.ZonedTimestamp", "field": "zoned"},
	    {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2", "connect.decimal.precision": "5"}, "field": "price"},
	    {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "3"}, "field": "debt"},
	    {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "0"}, "field": "huge"}]}]},
	 "payload": {"before": null, "after": {"id": 1, "born": 19000, "seen": 1700000000123456, "ms": 1700000000123,
	   "ns": 1700000000123456789, "zoned": "2023-11-14T22:13:20.5+01:00", "price": "MDk=", "debt": "/84=",
	   "huge": "XODppWAV/sWq36MorjmBFQ=="},
	  "source": {"lsn": 1}, "op": "c"}}`
	ev, err := ParseDebezium(event)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"born":  "2022-01-08",
		"seen":  "2023-11-14T22:13:20.123456Z",
		"ms":    "2023-11-14T22:13:20.123Z",
		"ns":    "2023-11-14T22:13:20.123456Z",
		"zoned": "2023-11-14T21:13:20.5Z",
		"price": "123.45",
		"debt":  "-0.050",
		"huge":  "123456789012345678901234567890123456789", // 39 digits: its text
	}
	kinds := map[string]string{"price": "decimal(5,2)", "debt": "decimal(38,3)", "huge": "string"}
	if len(ev.Logical) != len(want) {
		t.Fatalf("logical types %v, want %d of them", ev.Logical, len(want))
	}
	for col, w := range want {
		v, ok := ev.Logical[col].Value(ev.Image.Member(col))
		if !ok || v.String() != w {
			t.Errorf("%s: %v (%v), want %s", col, v, ok, w)
		}
		if k, typed := kinds[col]; typed {
			got := v.Kind().String()
			if v.Kind() == KindDecimal {
				got = DecimalType(v.Precision(), v.Scale()).String()
			}
			if got != k {
				t.Errorf("%s is %s, want %s", col, got, k)
			}
		}
	}
}
