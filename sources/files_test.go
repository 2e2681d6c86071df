package sources

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/sluicehq/sluice/domain"
)

// TestFormats reads small directories in every format and compares the one
// micro-batch they make with a golden file.
func TestFormats(t *testing.T) {
	tests := []struct {
		name  string
		opts  FileOptions
		files []tfile
	}{
		{"json_scalars", FileOptions{Format: "json"}, []tfile{{"a.json",
			`{"id": 1, "name": "ann", "score": 1.5, "ok": true, "none": null}` + "\n" +
				`{"id": -2, "name": "b\"o\\b\n\t\u00e9\ud83d\ude00/\/", "score": -2e3, "ok": false, "none": null}` + "\n" +
				"\n" +
				"   \t  \n" +
				`  {"id":9223372036854775807,"name":"","score":0,"ok":true}   ` + "\n" +
				`{}` + "\n" +
				`{"id": -9223372036854775808, "score": 1E2, "name": "caf` + "\u00e9" + `"}`, // no final newline
		}}},
		{"json_nested_as_text", FileOptions{Format: "jsonl"}, []tfile{{"a.json",
			`{"tags": ["a", "b"], "meta": {"k": {"n": [1, 2.5, "}]"]}}, "empty": {}}` + "\n" +
				`{"tags": [], "meta": {"x": null}, "empty": []}` + "\n" +
				`{"tags": "plain", "meta": null}` + "\n",
		}}},
		{"json_crlf", FileOptions{Format: "ndjson"}, []tfile{{"a.json",
			"{\"a\": 1}\r\n{\"a\": 2}\r\n\r\n{\"a\": 3}\r\n",
		}}},
		{"json_inference", FileOptions{Format: "json"}, []tfile{{"a.json",
			// a: bigint then double -> double; b: bigint then string -> string
			// (keeping the text as written); c: only NULL; d: missing, then a
			// repeated key (the last wins); e: boolean then bigint -> string;
			// f: a double written 1.50 then a string.
			`{"a": 1, "b": 1, "c": null, "d": 1, "e": true, "f": 1.50}` + "\n" +
				`{"a": 2.5, "b": "x", "c": null, "e": 1, "f": "y"}` + "\n" +
				`{"a": 3, "b": 30, "c": null, "d": 4, "d": 5, "e": false, "g": 1}` + "\n",
		}}},
		{"json_inference_across_files", FileOptions{Format: "json"}, []tfile{
			{"1.json", `{"n": 1, "s": "a", "Mixed": 1}` + "\n"},
			{"2.json", `{"n": 2.25, "s": 12345678901234567890, "mixed": "two"}` + "\n"},
			{"3.json", `{"n": 3, "extra": [1]}` + "\n"},
		}},
		{"csv_header", FileOptions{Format: "csv", Header: true}, []tfile{{"a.csv",
			"id,name,score\n1,ann,1.5\n2,,\n3,\"co, ltd\",-0.5\n",
		}}},
		{"csv_header_infer", FileOptions{Format: "csv", Header: true, InferSchema: true}, []tfile{{"a.csv",
			"id,code,score,flag,mixed,empty,name\n" +
				"1,007,1.5,true,1,,Nan\n" +
				"2,x,2,FALSE,2.5,,Inf\n" +
				"3,010,,True,3,,Bo\n",
		}}},
		{"csv_no_header", FileOptions{Format: "csv"}, []tfile{{"a.csv",
			"1,a,true\n2,b,false\n",
		}}},
		{"csv_no_header_infer", FileOptions{Format: "csv", InferSchema: true}, []tfile{{"a.csv",
			"1,a,true\n2,b,false\n",
		}}},
		{"csv_semicolon", FileOptions{Format: "csv", Header: true, Delimiter: ';', InferSchema: true}, []tfile{{"a.csv",
			"id;price;label\n1;1,5;\"a;b\"\n2;3,25;c,d\n",
		}}},
		{"csv_tab", FileOptions{Format: "csv", Header: true, Delimiter: '\t'}, []tfile{{"a.tsv",
			"id\tnote\n1\thas, commas\n2\t\"quoted\ttab\"\n",
		}}},
		{"csv_quoted", FileOptions{Format: "csv", Header: true, MultiLine: true}, []tfile{{"a.csv",
			"id,text\n" +
				"1,\"a,b\"\n" +
				"2,\"line one\nline two\"\n" +
				"3,\"say \"\"hi\"\"\"\n" +
				"4,\"\"\n" +
				"5,\n" +
				"6,\"multi\r\nline, \"\"quoted\"\"\nend\"\n",
		}}},
		{"csv_crlf_blank_lines", FileOptions{Format: "csv", Header: true, InferSchema: true}, []tfile{{"a.csv",
			"a,b\r\n1,x\r\n\r\n2,y\r\n",
		}}},
		{"csv_header_names", FileOptions{Format: "csv", Header: true}, []tfile{{"a.csv",
			// an empty name and a name given twice
			"id,,name,Name\n1,x,a,b\n",
		}}},
		{"csv_across_files", FileOptions{Format: "csv", Header: true, InferSchema: true}, []tfile{
			{"1.csv", "id,v\n1,10\n"},
			{"2.csv", "v,id,w\n2.5,2,z\n"},
			{"3.csv", "id\n"},
		}},
		{"text", FileOptions{Format: "text"}, []tfile{
			{"a.txt", "alpha\r\nbeta\n\n  gamma  \n"},
			{"b.txt", "last line without newline"},
			{"c.txt", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			b := readOnce(t, newFiles(t, dir, tt.opts))
			golden(t, tt.name, dump(b))
		})
	}
}

func TestJSONInferenceTypes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, []tfile{{"a.json",
		`{"i": 1, "d": 1, "s": 1, "n": null, "b": true}` + "\n" +
			`{"i": 2, "d": 0.5, "s": "x", "b": false}` + "\n",
	}})
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "json"}))
	want := map[string]domain.Kind{"i": domain.KindInt64, "d": domain.KindFloat64, "s": domain.KindString, "n": domain.KindNull, "b": domain.KindBool}
	for name, kind := range want {
		i := b.Schema.Index(name)
		if i < 0 {
			t.Fatalf("no column %q", name)
		}
		if f := b.Schema.Fields[i]; f.Type.Kind != kind || !f.Nullable {
			t.Errorf("column %q is %s (nullable %v), want nullable %s", name, f.Type, f.Nullable, kind)
		}
	}
	if got := column(t, b, "d"); !got[0].Equal(domain.Float(1)) || !got[1].Equal(domain.Float(0.5)) {
		t.Errorf("d = %v, want [1 0.5] as doubles", got)
	}
	if got := column(t, b, "s"); !got[0].Equal(domain.String("1")) || !got[1].Equal(domain.String("x")) {
		t.Errorf("s = %v, want [\"1\" \"x\"]", got)
	}
}

// TestJSONKeysFoldCase checks that keys differing only in case are one
// column, named as first seen, as domain.Schema.Index would find it.
func TestJSONKeysFoldCase(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, []tfile{{"a.json",
		`{"Name": "a", "KELVIN": 1}` + "\n" + `{"name": "b", "kelvin": 2}` + "\n" + `{"NAME": "c", "` + "\u212a" + `elvin": 3}` + "\n",
	}})
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "json"}))
	if got := b.Schema.Names(); len(got) != 2 || got[0] != "Name" || got[1] != "KELVIN" {
		t.Fatalf("columns %v, want [Name KELVIN]", got)
	}
	if got := dump(b); got != "schema: Name string, KELVIN bigint\n\"a\" | 1\n\"b\" | 2\n\"c\" | 3\n" {
		t.Errorf("got\n%s", got)
	}
}

var declared = domain.NewSchema(
	domain.Field{Name: "id", Type: domain.TypeInt64},
	domain.Field{Name: "amount", Type: domain.TypeFloat64, Nullable: true},
	domain.Field{Name: "at", Type: domain.TypeTimestamp, Nullable: true},
	domain.Field{Name: "day", Type: domain.TypeDate, Nullable: true},
	domain.Field{Name: "name", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "ok", Type: domain.TypeBool, Nullable: true},
)

func TestDeclaredSchemaConversions(t *testing.T) {
	tests := []struct {
		name  string
		opts  FileOptions
		files []tfile
	}{
		{"declared_json", FileOptions{Format: "json", Schema: &declared}, []tfile{{"a.json",
			`{"id": 1, "amount": 5, "at": "2024-05-06T07:08:09.123456Z", "day": "2024-05-06", "name": "x", "ok": true}` + "\n" +
				`{"ID": 2, "amount": 2.5, "at": "2024-05-06 07:08:09", "day": "2024-02-29", "name": 17, "ok": false}` + "\n" +
				`{"ok": null, "id": 3, "at": "2024-05-06T09:08:09+02:00", "amount": null}` + "\n" +
				`{"id": 4, "at": "2024-05-06", "name": true}` + "\n" +
				`{"id": 5, "at": "2024-05-06 07:08:09.5-01:00", "amount": 1e3}` + "\n",
		}}},
		{"declared_csv", FileOptions{Format: "csv", Header: true, Schema: &declared}, []tfile{{"a.csv",
			"id,amount,at,day,name,ok\n" +
				"1,5,2024-05-06T07:08:09.123456Z,2024-05-06,x,true\n" +
				"2, 2.5 ,2024-05-06 07:08:09,2024-02-29,,FALSE\n" +
				"3,,,,\"\",\n",
		}}},
		{"declared_csv_columns_in_other_order", FileOptions{Format: "csv", Header: true, Schema: &declared}, []tfile{{"a.csv",
			"name,id\nx,1\n",
		}}},
		{"declared_csv_no_header", FileOptions{Format: "csv", Schema: &declared}, []tfile{{"a.csv",
			"1,1.5,2024-05-06T07:08:09Z,2024-05-06,x,true\n2,,,,,\n",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			b := readOnce(t, newFiles(t, dir, tt.opts))
			if !b.Schema.Equal(declared) {
				t.Errorf("schema %s, want the declared %s", b.Schema, declared)
			}
			golden(t, tt.name, dump(b))
		})
	}
}

// TestDeclaredSchemaMismatches checks that a value that does not fit its
// declared column fails the micro-batch naming the file, the line and the
// column.
func TestDeclaredSchemaMismatches(t *testing.T) {
	tests := []struct {
		name, format, line, column, reason string
	}{
		{"string for double", "json", `{"id": 2, "amount": "abc"}`, "amount", `"abc" is not a double`},
		{"string for bigint", "json", `{"id": "x"}`, "id", `"x" is not a bigint`},
		{"double for bigint", "json", `{"id": 1.5}`, "id", "expected bigint, found double"},
		{"huge for bigint", "json", `{"id": 1e400}`, "id", "expected bigint, found double"},
		{"bad timestamp", "json", `{"id": 2, "at": "yesterday"}`, "at", "is not a timestamp"},
		{"number for timestamp", "json", `{"id": 2, "at": 17}`, "at", "expected timestamp, found bigint"},
		{"bad date", "json", `{"id": 2, "day": "2024-13-01"}`, "day", "is not a date"},
		{"bad boolean", "json", `{"id": 2, "ok": "maybe"}`, "ok", "is not a boolean"},
		{"object for bigint", "json", `{"id": {"a": 1}}`, "id", "is not a bigint"},
		{"unknown column", "json", `{"id": 2, "extra": 1}`, "extra", "not in the declared schema"},
		{"NOT NULL missing", "json", `{"amount": 1}`, "id", "NOT NULL"},
		{"NOT NULL null", "json", `{"id": null}`, "id", "NOT NULL"},
		{"csv bad double", "csv", `2,abc,,,,`, "amount", `"abc" is not a double`},
		{"csv NOT NULL empty", "csv", `,1,,,,`, "id", "NOT NULL"},
		{"csv bad date", "csv", `2,,,2024-02-30,,`, "day", "is not a date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			content := `{"id": 1}` + "\n" + tt.line + "\n" + `{"id": 3}` + "\n"
			name, lineNo := "data.json", 2
			if tt.format == "csv" {
				lineNo = 3 // after the header
				content = "id,amount,at,day,name,ok\n1,,,,,\n" + tt.line + "\n3,,,,,\n"
				name = "data.csv"
			}
			path := writeFile(t, dir, name, content, baseTime)
			badLine := fmt.Sprintf("line %d", lineNo)
			opts := FileOptions{Format: tt.format, Header: true, Schema: &declared}
			err := readErr(t, newFiles(t, dir, opts))
			wantError(t, err, domain.CodeMalformedRecord, path, badLine, `column "`+tt.column+`"`, tt.reason)

			// Rescued, the row is kept with its columns NULL where they did not fit.
			opts.RescueBadRecords = true
			b := readOnce(t, newFiles(t, dir, opts))
			if b.Len() != 3 {
				t.Fatalf("%d rows, want 3:\n%s", b.Len(), dump(b))
			}
			r := rescued(t, b)
			if r[0] != nil || r[2] != nil {
				t.Errorf("good rows have rescued data: %v", r)
			}
			if r[1] == nil || r[1]["_file_path"] != path || r[1]["_line"] != float64(lineNo) {
				t.Errorf("rescued data of the bad row = %v, want its file and line %d", r[1], lineNo)
			}
			if _, ok := r[1][tt.column]; !ok {
				t.Errorf("rescued data %v does not hold column %q", r[1], tt.column)
			}
			if ids := column(t, b, "id"); !ids[0].Equal(domain.Int(1)) || !ids[2].Equal(domain.Int(3)) {
				t.Errorf("ids %v, want 1 and 3 around the bad row", ids)
			}
			for _, f := range b.Schema.Fields {
				if !f.Nullable {
					t.Errorf("column %q is NOT NULL in a rescued batch, whose bad rows hold NULLs", f.Name)
				}
			}
		})
	}
}

// The rescued value of a column keeps the value as written, even when it is
// no JSON number Go can encode (1e400 overflows to +Inf).
func TestRescuedValueKeepsText(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.json", `{"id": 1e400, "amount": "1.50x"}`+"\n", baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "json", Schema: &declared, RescueBadRecords: true}))
	r := rescued(t, b)
	if r[0]["id"] != "1e400" || r[0]["amount"] != "1.50x" {
		t.Errorf("rescued %v, want id 1e400 and amount 1.50x as written", r[0])
	}
}

type pqRow struct {
	Name  string    `parquet:"name"`
	Small int32     `parquet:"small"`
	Big   int64     `parquet:"big"`
	Score float64   `parquet:"score"`
	Ratio float32   `parquet:"ratio"`
	OK    bool      `parquet:"ok"`
	Note  *string   `parquet:"note,optional"`
	Count *int64    `parquet:"count,optional"`
	At    time.Time `parquet:"at,timestamp(microsecond)"`
	AtMs  time.Time `parquet:"at_ms,timestamp(millisecond)"`
	AtNs  int64     `parquet:"at_ns,timestamp(nanosecond)"`
	Day   int32     `parquet:"day,date"` // days: parquet-go writes a time.Time date as int32(UnixNano)
	Raw   []byte    `parquet:"raw"`
	Price int64     `parquet:"price,decimal(2:10)"`
	Tiny  uint32    `parquet:"tiny"`
}

func writeParquet[T any](t testing.TB, dir, name string, rows []T, mtime time.Time, opts ...parquet.WriterOption) string {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](fh, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	touch(t, path, mtime)
	return path
}

func ptr[T any](v T) *T { return &v }

func TestParquetTypesAndValues(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	old := time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC) // before the epoch
	rows := []pqRow{
		{Name: "ann", Small: -7, Big: 1 << 40, Score: 1.5, Ratio: 0.25, OK: true, Note: ptr("hi"), Count: ptr(int64(3)),
			At: at, AtMs: at.Truncate(time.Millisecond), AtNs: at.UnixNano() + 789, Day: 19782, // 2024-02-29
			Raw: []byte{0, 1, 0xff}, Price: 12345, Tiny: 4000000000},
		{Name: "", Small: 0, Big: -1, Score: -0.5, OK: false,
			At: old, AtMs: old.Truncate(time.Millisecond), AtNs: -1500, Day: -165, // 1969-07-20
			Price: -5},
	}
	writeParquet(t, dir, "a.parquet", rows, baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	wantKinds := []struct {
		name string
		kind domain.Kind
	}{
		{"name", domain.KindString}, {"small", domain.KindInt64}, {"big", domain.KindInt64}, {"score", domain.KindFloat64},
		{"ratio", domain.KindFloat64}, {"ok", domain.KindBool}, {"note", domain.KindString}, {"count", domain.KindInt64},
		{"at", domain.KindTimestamp}, {"at_ms", domain.KindTimestamp}, {"at_ns", domain.KindTimestamp}, {"day", domain.KindDate},
		{"raw", domain.KindBytes}, {"price", domain.KindDecimal}, {"tiny", domain.KindInt64},
	}
	if len(b.Schema.Fields) != len(wantKinds) {
		t.Fatalf("schema %s, want %d columns", b.Schema, len(wantKinds))
	}
	for i, w := range wantKinds {
		if f := b.Schema.Fields[i]; f.Name != w.name || f.Type.Kind != w.kind {
			t.Errorf("column %d is %s %s, want %s %s", i, f.Name, f.Type, w.name, w.kind)
		}
	}
	want := [][]domain.Value{
		{domain.String("ann"), domain.Int(-7), domain.Int(1 << 40), domain.Float(1.5), domain.Float(0.25), domain.Bool(true),
			domain.String("hi"), domain.Int(3), domain.Timestamp(at), domain.Timestamp(at.Truncate(time.Millisecond)),
			domain.TimestampMicros(at.UnixMicro()), domain.DateDays(19782), domain.Bytes([]byte{0, 1, 0xff}), domain.Decimal(domain.Int128Of(12345), 10, 2),
			domain.Int(4000000000)},
		{domain.String(""), domain.Int(0), domain.Int(-1), domain.Float(-0.5), domain.Float(0), domain.Bool(false),
			domain.Null(), domain.Null(), domain.TimestampMicros(-1), domain.TimestampMicros(-1000),
			domain.TimestampMicros(-2), domain.DateDays(-165), domain.Bytes(nil), domain.Decimal(domain.Int128Of(-5), 10, 2), domain.Int(0)},
	}
	if b.Len() != len(want) {
		t.Fatalf("%d rows, want %d", b.Len(), len(want))
	}
	for r, row := range want {
		got := b.Row(r)
		for c := range row {
			if !got[c].Equal(row[c]) {
				t.Errorf("row %d column %s = %s, want %s", r, b.Schema.Fields[c].Name, got[c], row[c])
			}
		}
	}
}

// TestParquetFilesWithDifferentSchemas reads files whose columns differ in
// one micro-batch: columns are matched by name, missing ones are NULL.
func TestParquetFilesWithDifferentSchemas(t *testing.T) {
	type v1 struct {
		ID   int64  `parquet:"id"`
		Name string `parquet:"name"`
	}
	type v2 struct {
		Name  string  `parquet:"name"`
		ID    int32   `parquet:"id"`
		Score float64 `parquet:"score"`
	}
	dir := t.TempDir()
	writeParquet(t, dir, "1.parquet", []v1{{1, "a"}}, baseTime)
	writeParquet(t, dir, "2.parquet", []v2{{"b", 2, 0.5}}, baseTime.Add(time.Second))
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	if got, want := dump(b), "schema: id bigint, name string, score double\n1 | \"a\" | NULL\n2 | \"b\" | 0.5\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestParquetDeclaredSchema converts Parquet columns to a declared schema.
func TestParquetDeclaredSchema(t *testing.T) {
	type row struct {
		ID     int32   `parquet:"id"`
		Amount int64   `parquet:"amount"`
		Name   *string `parquet:"name,optional"`
	}
	dir := t.TempDir()
	path := writeParquet(t, dir, "a.parquet", []row{{1, 10, ptr("x")}, {2, 20, nil}}, baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "parquet", Schema: &declared}))
	if got, want := dump(b), "schema: id bigint NOT NULL, amount double, at timestamp, day date, name string, ok boolean\n"+
		"1 | 10.0 | NULL | NULL | \"x\" | NULL\n2 | 20.0 | NULL | NULL | NULL | NULL\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	strict := domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64}, domain.Field{Name: "amount", Type: domain.TypeInt64},
		domain.Field{Name: "name", Type: domain.TypeString})
	err := readErr(t, newFiles(t, dir, FileOptions{Format: "parquet", Schema: &strict}))
	wantError(t, err, domain.CodeMalformedRecord, path, "line 2", `column "name"`, "NOT NULL")
}

func TestFilesOptionErrors(t *testing.T) {
	dir := t.TempDir()
	for _, opts := range []FileOptions{
		{Format: "xml"},
		{Format: ""},
		{Format: "parquet", RescueBadRecords: true},
		{Format: "csv", Delimiter: '"'},
		{Format: "csv", Delimiter: '\n'},
		{Format: "csv", Delimiter: '\r'},
		{Format: "csv", Delimiter: 0xFFFD},
		{Format: "csv", Delimiter: -1},
		{Format: "csv", Quote: ','},
		{Format: "csv", Quote: 'é'},
		{Format: "csv", Escape: '\n'},
		{Format: "csv", Delimiter: ';', Escape: ';'},
	} {
		src := Files(dir, opts)
		wantError(t, src.(domain.Validator).Validate(), domain.CodeSourceOptionInvalid)
		_, _, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
		wantError(t, err, domain.CodeSourceOptionInvalid)
		_, err = src.Read(context.Background(), nil, domain.Offset(`{"files": []}`))
		wantError(t, err, domain.CodeSourceOptionInvalid)
	}
	for _, format := range []string{"JSON", "Csv", "parquet", "text", "jsonl", "ndjson"} {
		if err := Files(dir, FileOptions{Format: format}).(domain.Validator).Validate(); err != nil {
			t.Errorf("format %q: %v", format, err)
		}
	}
	src := newFiles(t, dir, FileOptions{Format: "json"})
	if !strings.Contains(src.String(), dir) {
		t.Errorf("String() = %q does not name the directory", src.String())
	}
}

// TestDeclaredSchemaHeaderlessCSV: without a header, fields are the declared
// columns by position, and a record must have one field per column.
func TestDeclaredSchemaHeaderlessCSV(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "a.csv", "1,,,,x,\n2,,,\n", baseTime)
	err := readErr(t, newFiles(t, dir, FileOptions{Format: "csv", Schema: &declared}))
	wantError(t, err, domain.CodeMalformedRecord, path, "line 2", "the record has 4 fields, the declared schema 6")
}

// TestParquetLegacyAndWideTypes: INT96 timestamps (as Spark and Hive write
// them), decimals in fixed-length bytes, unsigned 64-bit integers.
func TestParquetLegacyAndWideTypes(t *testing.T) {
	type row struct {
		At    deprecated.Int96 `parquet:"at"`
		Price [9]byte          `parquet:"price,decimal(2:20)"`
		Big   uint64           `parquet:"big"`
	}
	int96 := func(ts time.Time) deprecated.Int96 {
		days := ts.Unix() / 86400
		if ts.Unix()%86400 < 0 {
			days--
		}
		nanos := uint64(ts.Sub(time.Unix(days*86400, 0)))
		return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(days + 2440588)}
	}
	decimal := func(unscaled int64) (b [9]byte) {
		if unscaled < 0 {
			for i := range b {
				b[i] = 0xff
			}
		}
		for i := 8; i >= 1; i-- {
			b[i] = byte(unscaled)
			unscaled >>= 8
		}
		return b
	}
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	before := time.Date(1969, 12, 31, 23, 0, 0, 500, time.UTC)
	dir := t.TempDir()
	path := writeParquet(t, dir, "a.parquet", []row{
		{int96(at), decimal(12345), 1 << 62},
		{int96(before), decimal(-5), 0},
	}, baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	want := "schema: at timestamp, price decimal(20,2), big bigint\n" +
		"2024-05-06T07:08:09.123456Z | 123.45 | 4611686018427387904\n" +
		"1969-12-31T23:00:00Z | -0.05 | 0\n"
	if got := dump(b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// An unsigned value beyond a bigint fails, naming the file and row.
	writeParquet(t, dir, "a.parquet", []row{{int96(at), decimal(1), 1}, {int96(at), decimal(1), 1 << 63}}, baseTime)
	err := readErr(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	wantError(t, err, domain.CodeFileUnreadable, path, "row 2", `column "big"`)
}

// TestParquetDecimals reads decimals exactly, of all 38 digits (fixed-length
// bytes beyond 64 bits), and files of two decimal types in one read as the
// decimal that holds both.
func TestParquetDecimals(t *testing.T) {
	type narrow struct {
		Amount int64 `parquet:"amount,decimal(2:10)"`
	}
	type wide struct {
		Amount [16]byte `parquet:"amount,decimal(10:38)"`
	}
	bytes16 := func(x *big.Int) (b [16]byte) {
		if x.Sign() < 0 { // two's complement
			x = new(big.Int).Add(x, new(big.Int).Lsh(big.NewInt(1), 128))
		}
		x.FillBytes(b[:])
		return b
	}
	max38, _ := new(big.Int).SetString("99999999999999999999999999999999999999", 10)
	dir := t.TempDir()
	writeParquet(t, dir, "a.parquet", []narrow{{12345}, {-5}}, baseTime)
	writeParquet(t, dir, "b.parquet", []wide{{bytes16(max38)}, {bytes16(new(big.Int).Neg(max38))}, {bytes16(big.NewInt(1))}}, baseTime.Add(time.Second))
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	want := "schema: amount decimal(38,10)\n" +
		"123.4500000000\n" +
		"-0.0500000000\n" +
		"9999999999999999999999999999.9999999999\n" +
		"-9999999999999999999999999999.9999999999\n" +
		"0.0000000001\n"
	if got := dump(b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestJSONBuilderCases decodes JSON lines straight through a builder.
func TestJSONBuilderCases(t *testing.T) {
	money := domain.NewSchema(domain.Field{Name: "amt", Type: domain.DecimalType(10, 2), Nullable: true})
	tests := []struct {
		name    string
		schema  *domain.Schema
		rescue  bool
		input   string
		want    string // the dump, or the error's message fragment
		wantErr bool
	}{
		{name: "nulls first, then values (the fast path with null marks)", input: `{"a": null, "b": null}` + "\n" + `{"a": 1, "b": "x"}` + "\n" + `{"a": 2, "b": "y"}`,
			want: "schema: a bigint, b string\nNULL | NULL\n1 | \"x\"\n2 | \"y\"\n"},
		{name: "empty objects keep their rows", input: "{}\n{}\n\n{}\n",
			want: "schema: \n\n\n\n"},
		{name: "-0 and doubles keep their text in a string column", input: `{"a": -0, "b": 1.50, "c": 1e3, "d": 1234567.5}` + "\n" + `{"a": "s", "b": "s", "c": "s", "d": "s"}`,
			want: "schema: a string, b string, c string, d string\n\"-0\" | \"1.50\" | \"1e3\" | \"1234567.5\"\n\"s\" | \"s\" | \"s\" | \"s\"\n"},
		{name: "a string then numbers", input: `{"a": "s"}` + "\n" + `{"a": 0.10}` + "\n" + `{"a": 7}` + "\n" + `{"a": true}`,
			want: "schema: a string\n\"s\"\n\"0.10\"\n\"7\"\n\"true\"\n"},
		{name: "bigint widened to double, then a string", input: `{"a": 1}` + "\n" + `{"a": 2.50}` + "\n" + `{"a": "s"}`,
			want: "schema: a string\n\"1\"\n\"2.50\"\n\"s\"\n"},
		{name: "keys in another order each line", input: `{"a": 1, "b": 2}` + "\n" + `{"b": 3, "a": 4}` + "\n" + `{"c": 5}` + "\n" + `{"b": 6, "a": 7, "c": 8}`,
			want: "schema: a bigint, b bigint, c bigint\n1 | 2 | NULL\n4 | 3 | NULL\nNULL | NULL | 5\n7 | 6 | 8\n"},
		{name: "repeated key, the first of another type", input: `{"a": 1}` + "\n" + `{"a": "x", "a": 2}`,
			want: "schema: a string\n\"1\"\n\"2\"\n"},
		{name: "declared: a repeated key fixes a bad first value", schema: &declared, input: `{"id": "x", "id": 2}`,
			want: "schema: id bigint NOT NULL, amount double, at timestamp, day date, name string, ok boolean\n2 | NULL | NULL | NULL | NULL | NULL\n"},
		{name: "declared: a bad value after a good one", schema: &declared, input: `{"id": 2, "id": "x"}`,
			want: `column "id": "x" is not a bigint`, wantErr: true},
		{name: "declared: a repeated key fixes one bad value of two", schema: &declared, input: `{"id": "x", "amount": "y", "id": 2}`,
			want: `column "amount": "y" is not a double`, wantErr: true},
		{name: "declared: a number kept as written in a string column", schema: &declared, input: `{"id": 1, "name": 1.50}`,
			want: "schema: id bigint NOT NULL, amount double, at timestamp, day date, name string, ok boolean\n1 | NULL | NULL | NULL | \"1.50\" | NULL\n"},
		{name: "declared decimal: digits as written, rounded half up, strings too", schema: &money, input: `{"amt": 0.1}` + "\n" + `{"amt": 12345678.125}` + "\n" + `{"amt": "-0.005"}` + "\n" + `{"amt": 7}` + "\n" + `{"amt": 1e2}`,
			want: "schema: amt decimal(10,2)\n0.10\n12345678.13\n-0.01\n7.00\n100.00\n"},
		{name: "declared decimal: too many integer digits", schema: &money, input: `{"amt": 123456789}`,
			want: `column "amt": 123456789 does not fit decimal(10,2)`, wantErr: true},
		{name: "declared decimal: not a number", schema: &money, input: `{"amt": "ten"}`,
			want: `column "amt": "ten" is not a number`, wantErr: true},
		{name: "rescue: a key named like the rescued data column is rescued", rescue: true, input: `{"a": 1, "_Rescued_Data": "x"}`,
			want: "schema: a bigint, _rescued_data string\n1 | \"{\\\"_Rescued_Data\\\":\\\"x\\\",\\\"_file_path\\\":\\\"t.json\\\",\\\"_line\\\":1}\"\n"},
		{name: "no rescue: such a key is a column", input: `{"_rescued_data": 1}`,
			want: "schema: _rescued_data bigint\n1\n"},
		{name: "a bad line in the middle without rescue", input: `{"a": 1}` + "\n" + `{"a": 2` + "\n" + `{"a": 3}`,
			want: "t.json, line 2: column 8: unexpected end of line inside an object", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(tt.schema, tt.rescue)
			b.currentFile = "t.json"
			err := decodeJSONLines(b, tt.input)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) || domain.CodeOf(err) != domain.CodeMalformedRecord {
					t.Fatalf("error %v, want %s with %q", err, domain.CodeMalformedRecord, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			batch, err := b.batch()
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(batch); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestParallelDecodeIsOneDecode: a micro-batch decoded in runs on several
// processors gives exactly the batch of one decoding, also when the runs see
// different types for a column (bigint then double, a column missing from a
// run, numbers then text) or a run meets a bad record.
func TestParallelDecodeIsOneDecode(t *testing.T) {
	var sb strings.Builder
	for i := range 60000 {
		switch {
		case i < 30000:
			fmt.Fprintf(&sb, `{"id": %d, "amount": %d, "name": "n%d"}`+"\n", i, i, i)
		case i < 45000:
			fmt.Fprintf(&sb, `{"id": %d, "amount": %d.5, "extra": true}`+"\n", i, i)
		default:
			fmt.Fprintf(&sb, `{"id": "text %d", "amount": null, "name": "n%d"}`+"\n", i, i)
		}
	}
	// The same schema in every part: the first part takes the others' rows
	// in place (NULLs only in the second part, a rescued record there, the
	// file's metadata).
	var same strings.Builder
	for i := range 90000 { // over two pieces' worth of bytes, so that it is decoded in runs
		if i < 45000 {
			fmt.Fprintf(&same, `{"id": %d, "name": "n%d"}`+"\n", i, i)
		} else {
			fmt.Fprintf(&same, `{"id": %d, "name": null}`+"\n", i)
		}
	}
	same.WriteString("{not json\n")
	declared := domain.NewSchema(domain.Field{Name: "id", Type: domain.TypeInt64, Nullable: true}, domain.Field{Name: "name", Type: domain.TypeString, Nullable: true})
	for _, tt := range []struct {
		name string
		data string
		opts FileOptions
	}{
		{"same schema", same.String(), FileOptions{Format: "json", Schema: &declared, RescueBadRecords: true, Metadata: true}},
		{"types", sb.String(), FileOptions{Format: "json"}},
		{"rescued", sb.String() + "{not json\n" + `{"id": 1}` + "\n", FileOptions{Format: "json", RescueBadRecords: true}},
		{"bad record", `{"id": 1}` + "\n" + sb.String() + "{not json\n", FileOptions{Format: "json"}},
		{"text", sb.String(), FileOptions{Format: "text"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "a.json", tt.data, baseTime)
			src := newFiles(t, dir, tt.opts).(*fileSource)
			end, ok, err := src.Plan(context.Background(), nil, domain.ReadLimit{})
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			got, gerr := src.Read(context.Background(), nil, end)
			off := offsetOf(t, end)
			pieces, err := src.readPieces(off.Files[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(pieces) < 2 {
				t.Fatalf("%d pieces: the test needs several", len(pieces))
			}
			want, werr := src.decode(pieces, linesOf(pieces))
			if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
				t.Fatalf("errors differ: parallel %v, one decoding %v", gerr, werr)
			}
			if gerr == nil && dump(got) != dump(want) {
				t.Errorf("the parallel decoding differs from one decoding")
			}
			// room for the rows, give or take the allocator's rounding
			if lines := linesOf(pieces); gerr == nil && cap(got.Columns[0].Strs)+cap(got.Columns[0].Ints) > lines+lines/16 {
				t.Errorf("the batch's first column has room for %d rows, of %d lines", cap(got.Columns[0].Strs)+cap(got.Columns[0].Ints), lines)
			}
		})
	}
}

// TestParquetNested reads lists (three-level LIST groups and bare repeated
// fields), maps and structs as another writer lays them out, with NULLs
// and empty lists at every level.
func TestParquetNested(t *testing.T) {
	type inner struct {
		X *int64 `parquet:"x,optional"`
		Y string `parquet:"y"`
	}
	type row struct {
		Bare  []int32          `parquet:"bare"`
		Tags  []string         `parquet:"tags,list"`
		Pts   []inner          `parquet:"pts,list"`
		Attrs map[string]int64 `parquet:"attrs"`
		In    *inner           `parquet:"in,optional"`
		Small int8             `parquet:"small"`
	}
	dir := t.TempDir()
	writeParquet(t, dir, "a.parquet", []row{
		{Bare: []int32{1, 2}, Tags: []string{"a", "b", "c"}, Pts: []inner{{X: ptr(int64(7)), Y: "p"}, {Y: "q"}}, Attrs: map[string]int64{"k": 1}, In: &inner{Y: "z"}, Small: -8},
		{Tags: []string{}, Pts: nil, Attrs: map[string]int64{}},
		{Bare: []int32{3}, Tags: []string{""}, Pts: []inner{{Y: ""}}, In: &inner{X: ptr(int64(-1)), Y: ""}, Small: 127},
	}, baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	want := "schema: bare array<int>, tags array<string>, pts array<struct<x: bigint, y: string>>, attrs map<string, bigint>, in struct<x: bigint, y: string>, small tinyint\n" +
		"[1, 2] | [a, b, c] | [{7, p}, {NULL, q}] | {k -> 1} | {NULL, z} | -8\n" +
		"[] | [] | [] | {} | NULL | 0\n" +
		"[3] | [] | [{NULL, }] | {} | {-1, } | 127\n"
	if b.Schema.Fields[1].Type.Elem.Kind != domain.KindString || b.Row(2)[1].AsList()[0].AsString() != "" {
		t.Errorf("row 3's tags are %s, want one empty string", b.Row(2)[1])
	}
	if got := dump(b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestParquetOnlyRepeated: a file whose one column is a bare repeated
// field has as many leaves as columns, and is still assembled as lists.
func TestParquetOnlyRepeated(t *testing.T) {
	type row struct {
		Bare []int64 `parquet:"bare"`
	}
	dir := t.TempDir()
	writeParquet(t, dir, "a.parquet", []row{{Bare: []int64{1, 2}}, {}, {Bare: []int64{3}}}, baseTime)
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "parquet"}))
	if got, want := dump(b), "schema: bare array<bigint>\n[1, 2]\n[]\n[3]\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRowsKeepNoInput: the strings of a decoded batch are its own, not parts
// of the bytes read, so that a row kept (a micro-batch waiting for its
// reader, a filter's survivors) does not keep the whole input with it.
func TestRowsKeepNoInput(t *testing.T) {
	tests := []struct {
		name, input string
		rescue      bool
	}{
		{"plain strings", `{"a": "xyz"}` + "\n" + `{"a": "uvw"}`, false},
		{"rescued text", `{"a": "xyz"}` + "\n" + `{"a": 5}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := domain.NewSchema(domain.Field{Name: "a", Type: domain.TypeString, Nullable: true})
			b := newBuilder(&schema, tt.rescue)
			b.currentFile = "t.json"
			if err := decodeJSONLines(b, tt.input); err != nil {
				t.Fatal(err)
			}
			batch, err := b.batch()
			if err != nil {
				t.Fatal(err)
			}
			in := uintptr(unsafe.Pointer(unsafe.StringData(tt.input)))
			strs := 0
			for j, c := range batch.Columns {
				for i, s := range c.Strs {
					if s == "" {
						continue
					}
					strs++
					if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= in && p < in+uintptr(len(tt.input)) {
						t.Errorf("column %s row %d (%q) is a part of the input", batch.Schema.Fields[j].Name, i, s)
					}
				}
			}
			if strs == 0 {
				t.Fatal("no strings decoded: the test checks nothing")
			}
		})
	}
}

// TestPlanFileShrunk: a file shorter, when planning reads it, than when it
// was listed is FILE_UNREADABLE, whatever the buffer planning reads into
// held before (planning's buffers are reused).
func TestPlanFileShrunk(t *testing.T) {
	dir := t.TempDir()
	lines := strings.Repeat(`{"id": 1}`+"\n", 20000)
	path := writeFile(t, dir, "a.json", lines, baseTime)
	src := newFiles(t, dir, FileOptions{Format: "json"}).(*fileSource)
	listed := fileInfo{path: "a.json", size: int64(len(lines)), mtime: baseTime}
	b := &budget{}
	if _, _, _, err := src.cut(listed, 0, b, true); err != nil { // fills a buffer with line breaks
		t.Fatal(err)
	}
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := src.cut(listed, 0, &budget{}, true)
	if domain.CodeOf(err) != domain.CodeFileUnreadable {
		t.Fatalf("planning a shrunk file: %v, want %s", err, domain.CodeFileUnreadable)
	}
}
