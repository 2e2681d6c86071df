package sources

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
)

var jsonSeeds = []string{
	`{"id": 1, "user": "ann", "event": "click", "amount": 12.5, "ts": "2025-03-01T12:00:00Z", "ok": true}` + "\n" +
		`{"id": 2, "user": "bob", "event": "view", "amount": 3, "ts": "2025-03-01T12:00:01Z", "ok": false}` + "\n",
	`{"a": null, "b": [1, {"c": "]"}], "d": {"e": {}}}` + "\n\n" + `{"a": "x\u00e9\ud83d\ude00\n", "A": 1}`,
	`{"n": 9223372036854775807}` + "\n" + `{"n": 9223372036854775808}` + "\n" + `{"n": -0.0e-3}` + "\n" + `{"n": 1e400}`,
	`{"x": 1, "x": "two"}` + "\r\n" + `{"y": true}` + "\r\n",
	`{"id": 01}` + "\n" + `{"id": 1.}` + "\n" + `{"id": 3} x` + "\n" + `{"s": "\q"}` + "\n" + `{"s": "abc`,
	`{"s": "\ud800\u0041\udc00"}` + "\n" + "{\"s\": \"\xff\xfe\"}",
	`[1]` + "\n" + `"str"` + "\n" + `{}` + "\n" + `   `,
	`{"_rescued_data": 1, "k": [[[[]]]]}`,
}

// FuzzJSONLines feeds arbitrary input to decodeJSONLines through a builder,
// with and without rescue. It must never panic; every error is a coded
// MALFORMED_RECORD_IN_PARSING naming a line; a batch is rectangular; a line
// is bad exactly when encoding/json does not read it as one object; and the
// values of good lines agree with encoding/json's.
func FuzzJSONLines(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, rescue bool) {
		text := string(data)
		lines := splitLines(text)
		b := newBuilder(nil, rescue)
		b.currentFile = "fuzz.json"
		err := decodeJSONLines(b, text)
		if err != nil {
			if rescue {
				t.Fatalf("rescuing, decoding failed: %v", err)
			}
			line := checkLineError(t, err, len(lines))
			if ok, _ := jsonObject(lines[line-1]); ok {
				t.Fatalf("line %d %q is a JSON object, yet: %v", line, lines[line-1], err)
			}
			for _, l := range lines[:line-1] {
				if ok, _ := jsonObject(l); !ok && !blank(l) {
					t.Fatalf("line %q is bad, yet the error names a later one: %v", l, err)
				}
			}
			return
		}
		batch, err := b.batch()
		if err != nil {
			t.Fatalf("batch: %v", err)
		}
		checkRectangular(t, batch)

		// Match rows to lines: one row per line that is not blank.
		var rowLines []string
		for _, l := range lines {
			if !blank(l) {
				rowLines = append(rowLines, l)
			}
		}
		if batch.Len() != len(rowLines) {
			t.Fatalf("%d rows for %d non-blank lines", batch.Len(), len(rowLines))
		}
		var rescuedCol []domain.Value
		if rescue {
			rescuedCol = column(t, batch, RescuedDataColumn)
		}
		for r, l := range rowLines {
			ok, obj := jsonObject(l)
			corrupt := false
			if rescue && !rescuedCol[r].IsNull() {
				var m map[string]any
				if err := json.Unmarshal([]byte(rescuedCol[r].AsString()), &m); err != nil {
					t.Fatalf("rescued data %q: %v", rescuedCol[r].AsString(), err)
				}
				_, corrupt = m["_corrupt_record"]
				if m["_file_path"] != "fuzz.json" || m["_line"] == nil {
					t.Fatalf("rescued data %q names no file and line", rescuedCol[r].AsString())
				}
			}
			if !ok {
				if !corrupt {
					t.Fatalf("line %q is no JSON object, yet row %d is not rescued as corrupt", l, r)
				}
				continue
			}
			if corrupt {
				t.Fatalf("line %q is a JSON object, yet rescued as corrupt: %s", l, rescuedCol[r].AsString())
			}
			checkRow(t, batch, r, obj, rescue)
		}

		// Decoding the lines in two slices gives the rows of decoding them at
		// once (as files split across micro-batches are).
		if rescue && len(lines) > 1 {
			cut := len(data) % len(lines)
			at := 0 // the byte offset of line cut
			for i := 0; i < cut; i++ {
				at += strings.IndexByte(text[at:], '\n') + 1
			}
			n := 0
			for _, part := range []string{text[:at], text[at:]} {
				part, text := newBuilder(nil, true), part
				if err := decodeJSONLines(part, text); err != nil {
					t.Fatal(err)
				}
				pb, err := part.batch()
				if err != nil {
					t.Fatal(err)
				}
				n += pb.Len()
			}
			if n != batch.Len() {
				t.Fatalf("slices have %d rows, the whole %d", n, batch.Len())
			}
		}
	})
}

// splitLines splits as decodeJSONLines does: on \n, without a final empty
// line, with a trailing \r removed.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// blank is a line of JSON whitespace only.
func blank(l string) bool { return strings.Trim(l, " \t\r") == "" }

var lineRE = regexp.MustCompile(`, line (\d+): `)

// checkLineError checks err is a coded malformed-record error naming a line
// in [1, lines] and returns that line.
func checkLineError(t *testing.T, err error, lines int) int {
	t.Helper()
	if domain.CodeOf(err) != domain.CodeMalformedRecord {
		t.Fatalf("error %v has code %q", err, domain.CodeOf(err))
	}
	m := lineRE.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error %q names no line", err)
	}
	n, _ := strconv.Atoi(m[1])
	if n < 1 || n > lines {
		t.Fatalf("error %q names line %d of %d", err, n, lines)
	}
	return n
}

func checkRectangular(t *testing.T, b *domain.Batch) {
	t.Helper()
	if len(b.Columns) != len(b.Schema.Fields) {
		t.Fatalf("%d columns for %d fields", len(b.Columns), len(b.Schema.Fields))
	}
	for i, c := range b.Columns {
		if c.Len() != b.Len() || (c.Nulls != nil && len(c.Nulls) != b.Len()) {
			t.Fatalf("column %d has %d rows (%d null marks) in a batch of %d", i, c.Len(), len(c.Nulls), b.Len())
		}
		if c.Kind != b.Schema.Fields[i].Type.Kind {
			t.Fatalf("column %d is %s, its field %s", i, c.Kind, b.Schema.Fields[i].Type)
		}
		for j := 0; j < i; j++ {
			if strings.EqualFold(b.Schema.Fields[i].Name, b.Schema.Fields[j].Name) {
				t.Fatalf("columns %q and %q have the same name", b.Schema.Fields[j].Name, b.Schema.Fields[i].Name)
			}
		}
	}
}

// jsonObject decodes a line with encoding/json: ok when it is one object.
func jsonObject(line string) (bool, map[string]json.RawMessage) {
	if !json.Valid([]byte(line)) {
		return false, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &obj); err != nil || obj == nil {
		return false, nil
	}
	return true, obj
}

// checkRow compares row r with what encoding/json reads from its line.
func checkRow(t *testing.T, b *domain.Batch, r int, obj map[string]json.RawMessage, rescue bool) {
	t.Helper()
	// Keys equal but for case are one column, the last value winning; which
	// of them came last encoding/json does not say, so skip such lines.
	folded := map[string]int{}
	for k := range obj {
		folded[foldName(k)]++
	}
	for k, raw := range obj {
		if folded[foldName(k)] > 1 {
			continue
		}
		if rescue && strings.EqualFold(k, RescuedDataColumn) {
			continue // kept in the rescued data
		}
		i := b.Schema.Index(k)
		if i < 0 {
			t.Fatalf("no column for key %q", k)
		}
		kind := b.Schema.Fields[i].Type.Kind
		got := b.Columns[i].Value(r)
		want, ok := expectedValue(raw, kind)
		if !ok {
			t.Fatalf("key %q: value %s in a %s column", k, raw, kind)
		}
		if !got.Equal(want) {
			t.Fatalf("key %q: got %s (%s), encoding/json reads %s: want %s", k, render(got), got.Kind(), raw, render(want))
		}
	}
}

// expectedValue is what a JSON value becomes in a column of kind k.
func expectedValue(raw json.RawMessage, k domain.Kind) (domain.Value, bool) {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case 'n':
		return domain.Null(), true
	case 't', 'f':
		switch k {
		case domain.KindBool:
			return domain.Bool(raw[0] == 't'), true
		case domain.KindString:
			return domain.String(string(raw)), true
		}
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || k != domain.KindString {
			return domain.Null(), false
		}
		return domain.String(s), true
	case '{', '[':
		return domain.String(string(raw)), k == domain.KindString
	default: // a number
		text := string(raw)
		i, intErr := strconv.ParseInt(text, 10, 64)
		switch k {
		case domain.KindInt64:
			return domain.Int(i), intErr == nil
		case domain.KindFloat64:
			if intErr == nil {
				return domain.Float(float64(i)), true
			}
			f, err := strconv.ParseFloat(text, 64)
			var ne *strconv.NumError
			if err != nil && !(errors.As(err, &ne) && ne.Err == strconv.ErrRange && math.IsInf(f, 0)) {
				return domain.Null(), false
			}
			return domain.Float(f), true
		case domain.KindString:
			return domain.String(text), true
		}
	}
	return domain.Null(), false
}

var csvSeeds = []string{
	"id,name,score\n1,ann,1.5\n2,\"bo, b\",\n",
	"a;b\n\"x;y\";\"multi\nline\"\n1;2\r\n",
	"1,2,3\n4,5\n6,7,8,9\n",
	"h\n\"unterminated\n",
	"a,b\nx\"y,z\n\"q\"r,s\n",
	"\n\n,,\n\"\"\n",
	"id,id,ID,\n1,2,3,4\n",
}

// FuzzCSV decodes arbitrary CSV in several dialects: it must never panic,
// rows are rectangular, errors are coded and name a line, and a file planned
// in slices gives as many rows as decoding it at once.
func FuzzCSV(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add([]byte(s), true, byte(','), false, false, false)
		f.Add([]byte(s), false, byte(';'), true, true, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, header bool, delim byte, infer, rescue, multiLine bool) {
		delims := []rune{',', ';', '\t', '|', ' ', 'x', 0xE9}
		opts := FileOptions{Format: "csv", Header: header, Delimiter: delims[int(delim)%len(delims)], InferSchema: infer, RescueBadRecords: rescue, MultiLine: multiLine}
		text := string(data)
		b := newBuilder(nil, rescue)
		b.currentFile = "fuzz.csv"
		err := opts.decodeCSV(b, text)
		lines := strings.Count(text, "\n") + 1
		if err != nil {
			if rescue && !strings.Contains(err.Error(), "header") {
				t.Fatalf("rescuing, decoding failed: %v", err)
			}
			checkLineError(t, err, lines)
			return
		}
		batch, err := b.batch()
		if err != nil {
			t.Fatalf("batch: %v", err)
		}
		checkRectangular(t, batch)
		if !rescue {
			return
		}
		// Planned in slices of at most two records (as files are split
		// across micro-batches), every byte is read once, and a well-formed
		// file gives the rows of one read.
		dir := t.TempDir()
		writeFile(t, dir, "f.csv", text, baseTime)
		sliced := opts
		sliced.MaxRowsPerTrigger = 2
		got := 0
		for _, s := range drain(t, newFiles(t, dir, sliced), nil, domain.ReadLimit{}) {
			checkRectangular(t, s.batch)
			got += s.batch.Len()
		}
		if rescued := batch.Schema.Index(RescuedDataColumn); rescued < 0 || allNull(batch.Columns[rescued]) {
			if got != batch.Len() {
				t.Fatalf("slices have %d rows, the whole %d", got, batch.Len())
			}
		}
	})
}

func allNull(c *domain.Column) bool {
	for i := range c.Len() {
		if !c.IsNull(i) {
			return false
		}
	}
	return true
}

// FuzzUTCTimestamp checks the fast timestamp reader against time.Parse:
// whatever it reads, time.Parse reads the same.
func FuzzUTCTimestamp(f *testing.F) {
	for _, s := range []string{"2025-01-01T00:00:00.014Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2025-13-01T00:00:00Z",
		"2025-01-01T24:00:00Z", "2025-01-01T00:00:00.123456789Z", "2025-01-01T00:00:00.1234567891Z", "2025-01-01T00:00:00.Z", "+025-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseUTCTimestamp(s)
		if !ok {
			return
		}
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("%q: read as %v, time.Parse refuses it: %v", s, got, err)
		}
		if !got.Equal(want) {
			t.Fatalf("%q: %v, time.Parse %v", s, got, want)
		}
	})
}
