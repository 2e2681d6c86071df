package sources

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/domain"
)

// badJSONLines are lines that are not one JSON object. Each is the third line
// of a file between good ones.
var badJSONLines = []struct{ name, line string }{
	{"truncated object", `{"id": 3, "name": "c"`},
	{"truncated inside a key", `{"id": 3, "na`},
	{"truncated after a colon", `{"id":`},
	{"only an opening brace", `{`},
	{"leading zero", `{"id": 01}`},
	{"negative leading zero", `{"id": -01}`},
	{"no digit after the point", `{"id": 1.}`},
	{"no digit before the point", `{"id": .5}`},
	{"lone minus", `{"id": -}`},
	{"plus sign", `{"id": +1}`},
	{"no exponent digits", `{"id": 1e}`},
	{"no exponent digits after a sign", `{"id": 1e+}`},
	{"hex number", `{"id": 0x10}`},
	{"NaN", `{"id": NaN}`},
	{"trailing text", `{"id": 3} x`},
	{"two objects", `{"id": 3}{"id": 4}`},
	{"bad escape", `{"name": "a\qb"}`},
	{"bad unicode escape", `{"name": "\u12G4"}`},
	{"short unicode escape", `{"name": "\u12"}`},
	{"unterminated string", `{"name": "abc}`},
	{"unterminated string after an escape", `{"name": "abc\"}`},
	{"raw tab in a string", "{\"name\": \"a\tb\"}"},
	{"not an object: array", `[1, 2]`},
	{"not an object: string", `"id"`},
	{"not an object: number", `42`},
	{"missing colon", `{"id" 3}`},
	{"missing comma", `{"id": 3 "name": "c"}`},
	{"trailing comma", `{"id": 3,}`},
	{"unquoted key", `{id: 3}`},
	{"single quotes", `{'id': 3}`},
	{"bad literal", `{"ok": tru}`},
	{"literal with trailing letters", `{"ok": nulls}`},
	{"unbalanced nested", `{"a": [1, 2}`},
	{"unterminated nested", `{"a": {"b": [1]}`},
	{"invalid nested content", `{"a": [1,,2]}`},
	{"invalid nested object", `{"a": {"b" 1}}`},
	{"nested trailing comma", `{"a": [1, 2,]}`},
	{"nested bad number", `{"a": [01]}`},
	{"garbage after setting columns", `{"id": "three", "name": 3, "new": 1 garbage`},
	{"vertical tab as space", "{\"id\":\v3}"},
	{"only a no-break space", "\u00a0"},
}

func TestMalformedJSONLines(t *testing.T) {
	for _, tt := range badJSONLines {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			content := `{"id": 1, "name": "a"}` + "\n" + `{"id": 2, "name": "b"}` + "\n" + tt.line + "\n" + `{"id": 4, "name": "d"}` + "\n"
			path := writeFile(t, dir, "data.json", content, baseTime)

			err := readErr(t, newFiles(t, dir, FileOptions{Format: "json"}))
			wantError(t, err, domain.CodeMalformedRecord, path, "line 3")
			if strings.Count(err.Error(), ", line ") != 1 {
				t.Errorf("error %q names more than one line", err)
			}

			// Rescued, the bad line is a row of NULLs with the raw line, its
			// file and line; the good rows keep their values and types.
			b := readOnce(t, newFiles(t, dir, FileOptions{Format: "json", RescueBadRecords: true}))
			if got, want := b.Schema.String(), "id bigint, name string, _rescued_data string"; got != want {
				t.Errorf("schema %s, want %s", got, want)
			}
			if b.Len() != 4 {
				t.Fatalf("%d rows, want 4:\n%s", b.Len(), dump(b))
			}
			r := rescued(t, b)
			if r[0] != nil || r[1] != nil || r[3] != nil {
				t.Errorf("good rows have rescued data: %v", r)
			}
			bad := r[2]
			if bad["_corrupt_record"] != tt.line || bad["_file_path"] != path || bad["_line"] != float64(3) {
				t.Errorf("rescued %v, want the line %q, file %s and line 3", bad, tt.line, path)
			}
			if reason, _ := bad["_error"].(string); reason == "" {
				t.Errorf("rescued %v has no _error", bad)
			}
			ids, names := column(t, b, "id"), column(t, b, "name")
			for i, want := range []domain.Value{domain.Int(1), domain.Int(2), domain.Null(), domain.Int(4)} {
				if !ids[i].Equal(want) {
					t.Errorf("id of row %d = %s, want %s", i, ids[i], want)
				}
			}
			if !names[3].Equal(domain.String("d")) || !names[2].IsNull() {
				t.Errorf("names %v", names)
			}
		})
	}
}

// TestValidJSONEdgeCases are lines the parser must accept.
func TestValidJSONEdgeCases(t *testing.T) {
	tests := []struct {
		line string
		want domain.Value // the value of column v
	}{
		{`{"v": -0}`, domain.Int(0)},
		{`{"v": 0}`, domain.Int(0)},
		{`{"v": 1E+2}`, domain.Float(100)},
		{`{"v": 1e-2}`, domain.Float(0.01)},
		{`{"v": 0.0}`, domain.Float(0)},
		{`{"v": 123456789012345678}`, domain.Int(123456789012345678)},
		{`{"v": 9223372036854775807}`, domain.Int(9223372036854775807)},
		{`{"v": -9223372036854775808}`, domain.Int(-9223372036854775808)},
		{`{"v": 9223372036854775808}`, domain.Float(9223372036854775808)},
		{`{"v": 1e400}`, domain.Float(1e400 * 0)}, // replaced below by +Inf
		{`{"v": "\ud83d\ude00"}`, domain.String("\U0001F600")},
		{`{"v": "\ud800"}`, domain.String("\uFFFD")},
		{`{"v": "\ud800\u0041"}`, domain.String("\uFFFDA")},
		{`{"v": "\udc00\ud83d\ude00"}`, domain.String("\uFFFD\U0001F600")},
		{`{"v": "\u00E9\u0000"}`, domain.String("é\x00")},
		{"{\"v\": \"a\xffb\"}", domain.String("a\uFFFDb")},
		{`{"v": "\/\b\f\n\r\t\\\""}`, domain.String("/\b\f\n\r\t\\\"")},
		{` { "v" : true , "w" : false } `, domain.Bool(true)},
		{`{"v":null}`, domain.Null()},
		{`{"v": [[[{"a": [1, "]", {}]}]]]}`, domain.String(`[[[{"a": [1, "]", {}]}]]]`)},
		{"{\"v\":\t1}\r", domain.Int(1)},
	}
	for _, tt := range tests {
		b := newBuilder(nil, false)
		b.currentFile = "x.json"
		if err := decodeJSONLines(b, tt.line); err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		batch, err := b.batch()
		if err != nil {
			t.Fatal(err)
		}
		want := tt.want
		if strings.Contains(tt.line, "1e400") {
			want = domain.Float(posInf())
		}
		if got := column(t, batch, "v")[0]; !got.Equal(want) {
			t.Errorf("%q: v = %s (%s), want %s (%s)", tt.line, got, got.Kind(), want, want.Kind())
		}
	}
}

func posInf() float64 { var zero float64; return 1 / zero }

// badCSV are CSV files (with a header) whose third line is a bad record.
var badCSV = []struct{ name, content, raw string }{
	{"too few fields", "id,name\n1,a\n2\n4,d\n", "2"},
	{"too many fields", "id,name\n1,a\n2,b,extra\n4,d\n", "2,b,extra"},
	{"quote left open", "id,name\n1,a\n2,\"b\n4,d\n", "2,\"b"},
	{"text after a closing quote", "id,name\n1,a\n2,\"b\"c\n4,d\n", "2,\"b\"c"},
	{"quoted field with a delimiter and too many fields", "id,name\n1,a\n2,\"b,c\",d\n4,d\n", "2,\"b,c\",d"},
}

// TestCSVBareQuotes: a quote inside an unquoted field is a character of it,
// as Spark reads CSV.
func TestCSVBareQuotes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "id,name\n1,x\"y\n2,b\"\n", baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "csv", Header: true}))
	if got := column(t, b, "name"); !got[0].Equal(domain.String(`x"y`)) || !got[1].Equal(domain.String(`b"`)) {
		t.Errorf("names %v", got)
	}
}

func TestMalformedCSV(t *testing.T) {
	for _, tt := range badCSV {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "data.csv", tt.content, baseTime)
			err := readErr(t, newFiles(t, dir, FileOptions{Format: "csv", Header: true}))
			wantError(t, err, domain.CodeMalformedRecord, path, "line 3")

			b := readOnce(t, newFiles(t, dir, FileOptions{Format: "csv", Header: true, InferSchema: true, RescueBadRecords: true}))
			if got, want := dump(b), "schema: id bigint, name string, _rescued_data string\n"; !strings.HasPrefix(got, want) {
				t.Errorf("got\n%s\nwant the schema %s", got, want)
			}
			if b.Len() != 3 {
				t.Fatalf("%d rows, want 3:\n%s", b.Len(), dump(b))
			}
			r := rescued(t, b)
			if r[0] != nil || r[2] != nil {
				t.Errorf("good rows have rescued data: %v", r)
			}
			if r[1]["_corrupt_record"] != tt.raw || r[1]["_file_path"] != path || r[1]["_line"] != float64(3) {
				t.Errorf("rescued %v, want the record %q, file %s and line 3", r[1], tt.raw, path)
			}
			if ids := column(t, b, "id"); !ids[0].Equal(domain.Int(1)) || !ids[1].IsNull() || !ids[2].Equal(domain.Int(4)) {
				t.Errorf("ids %v", ids)
			}
		})
	}
}

func TestMalformedCSVLineNumbers(t *testing.T) {
	tests := []struct {
		name    string
		opts    FileOptions
		content string
		line    string
	}{
		// The bad record starts on line 4, after a record over two lines.
		{"after a multi-line record", FileOptions{Format: "csv", Header: true, MultiLine: true}, "id,name\n1,\"a\nb\"\n2,\"x\n3,y\n", "line 4"},
		{"unterminated quote", FileOptions{Format: "csv", Header: true}, "id,name\n1,a\n2,\"b\n3,c\n", "line 3"},
		{"bad header", FileOptions{Format: "csv", Header: true}, "id,\"name\n1,a\n", "line 1"},
		{"bad first record without header", FileOptions{Format: "csv"}, "\"a\n1\n", "line 1"},
		{"blank lines before", FileOptions{Format: "csv"}, "\n\n1,a\n2\n", "line 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "data.csv", tt.content, baseTime)
			err := readErr(t, newFiles(t, dir, tt.opts))
			wantError(t, err, domain.CodeMalformedRecord, path, tt.line)
		})
	}
}

// TestCSVQuoteLeftOpen: a quote left open ends with its line (a record is
// a line unless multiLine): that record is rescued, the next ones are read.
// With multiLine the rest of the file is the open field, and rescued whole.
func TestCSVQuoteLeftOpen(t *testing.T) {
	for _, multiLine := range []bool{false, true} {
		dir := t.TempDir()
		writeFile(t, dir, "a.csv", "id,name\n1,\"ann\n2,bob\n3,cy\n", baseTime)
		b := readOnce(t, newFiles(t, dir, FileOptions{Format: "csv", Header: true, RescueBadRecords: true, MultiLine: multiLine}))
		var got []string
		r := rescued(t, b)
		for i := range b.Len() {
			row := fmt.Sprint(r[i]["_corrupt_record"])
			if r[i] == nil {
				row = fmt.Sprint(column(t, b, "id")[i], ",", column(t, b, "name")[i])
			}
			got = append(got, row)
		}
		want := []string{"1,\"ann", "2,bob", "3,cy"}
		if multiLine {
			want = []string{"1,\"ann\n2,bob\n3,cy"}
		}
		if !cmp.Equal(got, want) {
			t.Errorf("multiLine %v: rows %q, want %q", multiLine, got, want)
		}
	}
}

func TestTruncatedParquet(t *testing.T) {
	dir := t.TempDir()
	rows := make([]pqRow, 100)
	for i := range rows {
		rows[i] = pqRow{Name: "row", Big: int64(i)}
	}
	path := writeParquet(t, dir, "a.parquet", rows, baseTime)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.parquet", string(data[:len(data)/2]), baseTime)
	writeFile(t, dir, "b.parquet", "this is no parquet file", baseTime.Add(time.Second))

	err = readErr(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	wantError(t, err, domain.CodeFileUnreadable, path)
	// Planning by rows opens the file too.
	_, _, err = newFiles(t, dir, FileOptions{Format: "parquet", MaxRowsPerTrigger: 10}).Plan(context.Background(), nil, domain.ReadLimit{})
	wantError(t, err, domain.CodeFileUnreadable, path)

	os.Remove(path)
	err = readErr(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	wantError(t, err, domain.CodeFileUnreadable, filepath.Join(dir, "b.parquet"))
}

// TestFileChangedBetweenPlanAndRead: a planned micro-batch reads the files
// as planned, or fails when that is no longer possible.
func TestFileChangedBetweenPlanAndRead(t *testing.T) {
	formats := []struct {
		format, name string
		write        func(t *testing.T, dir string) string
	}{
		{"json", "a.json", func(t *testing.T, dir string) string {
			return writeFile(t, dir, "a.json", `{"a": 1}`+"\n"+`{"a": 2}`+"\n", baseTime)
		}},
		{"csv", "a.csv", func(t *testing.T, dir string) string {
			return writeFile(t, dir, "a.csv", "a\n1\n2\n", baseTime)
		}},
		{"text", "a.txt", func(t *testing.T, dir string) string {
			return writeFile(t, dir, "a.txt", "1\n2\n", baseTime)
		}},
		{"parquet", "a.parquet", func(t *testing.T, dir string) string {
			type row struct {
				A int64 `parquet:"a"`
			}
			return writeParquet(t, dir, "a.parquet", []row{{1}, {2}}, baseTime)
		}},
	}
	ctx := context.Background()
	for _, f := range formats {
		for _, maxRows := range []int64{0, 1} {
			opts := FileOptions{Format: f.format, Header: true, MaxRowsPerTrigger: maxRows}
			t.Run(f.format+"/vanished", func(t *testing.T) {
				dir := t.TempDir()
				path := f.write(t, dir)
				src := newFiles(t, dir, opts)
				end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
				if err != nil || !ok {
					t.Fatal(ok, err)
				}
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				_, err = src.Read(ctx, nil, end)
				wantError(t, err, domain.CodeFileNotExist, path)
			})
			t.Run(f.format+"/truncated", func(t *testing.T) {
				dir := t.TempDir()
				path := f.write(t, dir)
				src := newFiles(t, dir, opts)
				end, ok, err := src.Plan(ctx, nil, domain.ReadLimit{})
				if err != nil || !ok {
					t.Fatal(ok, err)
				}
				if err := os.Truncate(path, 3); err != nil {
					t.Fatal(err)
				}
				_, err = src.Read(ctx, nil, end)
				wantError(t, err, domain.CodeFileUnreadable, path)
			})
		}
	}
}

func TestMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	src := newFiles(t, dir, FileOptions{Format: "json"})
	_, _, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
	wantError(t, err, domain.CodePathNotFound, dir)

	// A directory removed after a first micro-batch.
	dir = t.TempDir()
	writeFile(t, dir, "a.json", `{"a": 1}`+"\n", baseTime)
	src = newFiles(t, dir, FileOptions{Format: "json"})
	s, _ := planRead(t, src, nil, domain.ReadLimit{})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	_, _, err = src.Plan(context.Background(), s.end, domain.ReadLimit{})
	wantError(t, err, domain.CodePathNotFound, dir)
}

func TestForeignOffset(t *testing.T) {
	src := newFiles(t, t.TempDir(), FileOptions{Format: "json"})
	_, _, err := src.Plan(context.Background(), domain.Offset(`not json`), domain.ReadLimit{})
	wantError(t, err, domain.CodeInvalidUpdateState)
	_, err = src.Read(context.Background(), nil, domain.Offset(`{"files": 3}`))
	wantError(t, err, domain.CodeInvalidUpdateState)
}

func TestCanceledContext(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.json", `{"a": 1}`+"\n", baseTime)
	src := newFiles(t, dir, FileOptions{Format: "json"})
	end, ok, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Read(ctx, nil, end); err == nil {
		t.Error("Read with a canceled context succeeded")
	}
}

// TestJSONNestingLimit: values nest up to 10000 deep, as encoding/json
// allows, and no deeper.
func TestJSONNestingLimit(t *testing.T) {
	for _, tt := range []struct {
		depth int // of the deepest array, the object being depth 1
		ok    bool
	}{{2, true}, {10000, true}, {10001, false}, {100000, false}} {
		line := `{"a": ` + strings.Repeat("[", tt.depth-1) + strings.Repeat("]", tt.depth-1) + `}`
		b := newBuilder(nil, false)
		b.currentFile = "deep.json"
		err := decodeJSONLines(b, line)
		if (err == nil) != tt.ok {
			t.Errorf("depth %d: error %v, want ok %v", tt.depth, err, tt.ok)
		}
		if valid := json.Unmarshal([]byte(line), new(any)) == nil; valid != tt.ok {
			t.Errorf("depth %d: encoding/json says valid %v", tt.depth, valid)
		}
	}
}

// TestDamagedParquet damages each byte of a Parquet file in turn: reading it
// either works or fails with FAILED_READ_FILE naming the file, and never
// panics.
func TestDamagedParquet(t *testing.T) {
	type row struct {
		ID   int64   `parquet:"id"`
		Name *string `parquet:"name,optional"`
		Day  int32   `parquet:"day,date"`
	}
	src := t.TempDir()
	var rows []row
	for i := range 20 {
		rows = append(rows, row{int64(i), ptr(fmt.Sprint("n", i%3)), int32(i)})
	}
	path := writeParquet(t, src, "a.parquet", rows, baseTime, parquet.MaxRowsPerRowGroup(7))
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range good {
		bad := []byte(string(good))
		bad[i] ^= 0xff
		p := writeFile(t, dir, "a.parquet", string(bad), baseTime)
		for _, maxRows := range []int64{0, 5} {
			s := newFiles(t, dir, FileOptions{Format: "parquet", MaxRowsPerTrigger: maxRows})
			var pos domain.Offset
			for range 10 {
				end, ok, err := s.Plan(context.Background(), pos, domain.ReadLimit{})
				if err == nil && ok {
					_, err = s.Read(context.Background(), pos, end)
				}
				if err != nil {
					if domain.CodeOf(err) != domain.CodeFileUnreadable || !strings.Contains(err.Error(), p) {
						t.Fatalf("byte %d damaged: %v", i, err)
					}
					break
				}
				if !ok {
					break
				}
				pos = end
			}
		}
	}
}

// TestByteOrderMark: a UTF-8 byte order mark at the start of a file is not
// part of the first CSV column's name nor of the first JSON record.
func TestByteOrderMark(t *testing.T) {
	for _, tt := range []struct {
		format, name, content string
		opts                  FileOptions
	}{
		{"csv", "a.csv", "\uFEFFid,name\n1,a\n2,b\n", FileOptions{Format: "csv", Header: true, InferSchema: true, RescueBadRecords: true, MaxRowsPerTrigger: 1}},
		{"json", "a.json", "\uFEFF{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"name\": \"b\"}\n", FileOptions{Format: "json", RescueBadRecords: true, MaxRowsPerTrigger: 1}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, tt.name, tt.content, baseTime)
			var ids []int64
			for _, s := range drain(t, newFiles(t, dir, tt.opts), nil, domain.ReadLimit{}) {
				if r := rescued(t, s.batch); r[0] != nil {
					t.Fatalf("rescued %v", r[0])
				}
				for _, v := range column(t, s.batch, "id") {
					ids = append(ids, v.AsInt())
				}
			}
			if !cmp.Equal(ids, []int64{1, 2}) {
				t.Fatalf("ids %v", ids)
			}
		})
	}
}

// TestModes: what a bad record does under each mode, and how the batch
// counts it.
func TestModes(t *testing.T) {
	declared := domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64, Nullable: true})
	content := `{"id": 1}` + "\n" + `{"id": "x"}` + "\n" + "nope\n" + `{"id": 4}` + "\n"
	for _, tt := range []struct {
		mode               string
		rescue             bool
		ids                string
		rescued, malformed int64
		err                bool
	}{
		{"", false, "", 0, 0, true},
		{"FAILFAST", true, "", 0, 0, true},
		{"PERMISSIVE", true, "[1 NULL NULL 4]", 2, 0, false},
		{"PERMISSIVE", false, "[1 NULL NULL 4]", 0, 2, false},
		{"DROPMALFORMED", true, "[1 4]", 0, 2, false},
	} {
		dir := t.TempDir()
		writeFile(t, dir, "a.json", content, baseTime)
		src := newFiles(t, dir, FileOptions{Format: "json", Schema: &declared, Mode: tt.mode, RescueBadRecords: tt.rescue})
		if tt.err {
			wantError(t, readErr(t, src), domain.CodeMalformedRecord, "line 2")
			continue
		}
		b := readOnce(t, src)
		if got := fmt.Sprint(column(t, b, "id")); got != tt.ids || b.Rescued != tt.rescued || b.Malformed != tt.malformed {
			t.Errorf("%s rescue %v: ids %s, %d rescued, %d malformed; want %s, %d, %d", tt.mode, tt.rescue, got, b.Rescued, b.Malformed, tt.ids, tt.rescued, tt.malformed)
		}
	}
}

// TestMultiLineJSON: a JSON document over several lines: objects, arrays of
// objects, one after another; text that does not parse is one bad record.
func TestMultiLineJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.json", "[{\"id\": 1},\n {\"id\": 2}]\n{\n \"id\": 3\n}\n[\n4]\n{\"id\": 5,\n oops", baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "json", MultiLine: true, RescueBadRecords: true}))
	r := rescued(t, b)
	if got := fmt.Sprint(column(t, b, "id")); got != "[1 2 3 NULL NULL]" || r[3]["_line"] != float64(7) || r[4]["_corrupt_record"] != "{\"id\": 5,\n oops" || r[4]["_line"] != float64(8) {
		t.Errorf("ids %s, rescued %v", got, r)
	}
}

// TestCSVSplitAsWhole: a CSV file planned in micro-batches of one record
// gives the rows it gives read whole, for the forms where planning and
// decoding could disagree on the ends of records (quotes inside fields, text
// after a closing quote, CRLF, blank lines of spaces, a delimiter of several
// bytes, escapes).
func TestCSVSplitAsWhole(t *testing.T) {
	for _, tt := range []struct {
		name, content string
		opts          FileOptions
	}{
		{"quote inside a field", "id,name\n1,b\"c\n\"x\ny\",z\n", FileOptions{MultiLine: true}},
		{"text after a closing quote", "id,name\n1,\"a\"b\"c\n2,\"d\ne\"\n3,f\n", FileOptions{MultiLine: true}},
		{"CRLF and quoted header", "\"id\",\"name\"\r\n1,\"ann\"\r\n2,\"b\r\nob\"\r\n3,cy\r\n", FileOptions{MultiLine: true}},
		{"CR after a closing quote", "id,name\n1,\"x\"\r,y\n2,z\n", FileOptions{MultiLine: true}},
		{"blank lines of spaces", "  \nid,name\n1,a\n\n2,b\n", FileOptions{}},
		{"delimiter of two bytes", "id§name\n1§\"a§\nb\"\n2§\"c\"\n", FileOptions{MultiLine: true, Delimiter: '§'}},
		{"escapes", "id,name\n1,\"a\\\"\nb\"\n2,\"c\\\\\"\n3,d\n", FileOptions{MultiLine: true}},
		{"doubled quotes over lines", "id,name\n1,\"a\"\"\n\"\"b\"\n2,c\n", FileOptions{MultiLine: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "a.csv", tt.content, baseTime)
			// declared, as read_files declares what it inferred: a
			// micro-batch of bad records alone has the columns too
			declared := domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeString, Nullable: true}, domain.Field{Name: "name", Type: domain.TypeString, Nullable: true})
			opts := tt.opts
			opts.Format, opts.Header, opts.RescueBadRecords, opts.Schema = "csv", true, true, &declared
			whole := readOnce(t, newFiles(t, dir, opts))
			opts.MaxRowsPerTrigger = 1
			var rows []string
			for _, s := range drain(t, newFiles(t, dir, opts), nil, domain.ReadLimit{}) {
				for _, r := range s.batch.Rows() {
					rows = append(rows, rowText(s.batch, r))
				}
			}
			var want []string
			for _, r := range whole.Rows() {
				want = append(want, rowText(whole, r))
			}
			if !cmp.Equal(rows, want) {
				t.Errorf("split:\n%q\nwhole:\n%q", rows, want)
			}
		})
	}
}

// rowText renders a row for comparisons, the rescued data without its line
// (a split read numbers lines as the whole one does, but the test compares
// values).
func rowText(b *domain.Batch, r []domain.Value) string {
	var parts []string
	for i, v := range r {
		if b.Schema.Fields[i].Name == RescuedDataColumn && !v.IsNull() {
			var m map[string]any
			_ = json.Unmarshal([]byte(v.AsString()), &m)
			parts = append(parts, fmt.Sprint(m["_corrupt_record"], "@", m["_line"]))
			continue
		}
		parts = append(parts, b.Schema.Fields[i].Name+"="+v.String())
	}
	return strings.Join(parts, " ")
}

// TestCSVCRLFQuoted: in a CRLF file, a quoted last field and a quoted header
// keep no CR.
func TestCSVCRLFQuoted(t *testing.T) {
	declared := domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeString, Nullable: true}, domain.Field{Name: "name", Type: domain.TypeString, Nullable: true})
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "\"id\",\"name\"\r\n1,\"ann\"\r\n", baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "csv", Header: true, Schema: &declared, Mode: "PERMISSIVE"}))
	if got := fmt.Sprint(b.Rows()); got != "[[1 ann]]" {
		t.Errorf("rows %s", got)
	}
}

// TestLatin1HeaderInLaterBatches: a Latin-1 header names the columns of
// every micro-batch alike.
func TestLatin1HeaderInLaterBatches(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "id,Gr\xf6\xdfe\n1,a\n2,b\n", baseTime)
	for _, s := range drain(t, newFiles(t, dir, FileOptions{Format: "csv", Header: true, Encoding: "ISO-8859-1", MaxRowsPerTrigger: 1}), nil, domain.ReadLimit{}) {
		if got := s.batch.Schema.Names(); !cmp.Equal(got, []string{"id", "Größe"}) {
			t.Errorf("columns %q", got)
		}
	}
}

// TestCountsOfParallelRuns: the counts of a micro-batch decoded in parallel
// runs are their sum, also when one run has every row.
func TestCountsOfParallelRuns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	dir := t.TempDir()
	var good, bad strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&good, "{\"id\": %d}\n", i)
		bad.WriteString("garbage\n")
	}
	good.WriteString(strings.Repeat("junk\n", 1000))
	writeFile(t, dir, "a.json", good.String(), baseTime)
	writeFile(t, dir, "b.json", bad.String(), baseTime.Add(time.Second))
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "json", Mode: "DROPMALFORMED"}))
	if b.Len() != 100_000 || b.Malformed != 101_000 {
		t.Errorf("%d rows, %d malformed; want 100000, 101000", b.Len(), b.Malformed)
	}
}
