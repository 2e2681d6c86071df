package cli_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	mrand "math/rand"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// roundTripSchema has a column of every scalar type, and (for JSON lines)
// nested ones.
const roundTripScalars = "ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, money DECIMAL(38,10), small DECIMAL(5,2), " +
	"s STRING, b BOOLEAN, day DATE, at TIMESTAMP"

// randomRoundTripRow is one JSON line of random values, edges often.
func randomRoundTripRow(r *rand.Rand, nested bool) string {
	pick := func(edges []string, random func() string) string {
		if r.IntN(3) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return random()
	}
	intOf := func(bits int) func() string {
		return func() string { return fmt.Sprint(int64(r.Uint64()) >> (64 - bits)) } // any value of the width
	}
	decimal := func(p, s int) func() string {
		return func() string {
			u := new(big.Int).Rand(mrand.New(mrand.NewSource(r.Int64())), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil))
			text := fmt.Sprintf("%0*s", s+1, u.String())
			return fmt.Sprintf(`"%s%s.%s"`, []string{"", "-"}[r.IntN(2)], text[:len(text)-s], text[len(text)-s:])
		}
	}
	fields := []string{
		`"ti": ` + pick([]string{"127", "-128", "0", "null"}, intOf(8)),
		`"si": ` + pick([]string{"32767", "-32768"}, intOf(16)),
		`"i": ` + pick([]string{"2147483647", "-2147483648"}, intOf(32)),
		`"bi": ` + pick([]string{"9223372036854775807", "-9223372036854775808"}, intOf(64)),
		`"f": ` + pick([]string{"3.4028235E38", "1.4E-45", `"NaN"`, `"-Infinity"`, "0.1", "-0.0"}, func() string { return fmt.Sprint(float32(r.NormFloat64() * 1e6)) }),
		`"d": ` + pick([]string{"1.7976931348623157E308", "4.9E-324", `"Infinity"`, "0.1", "1e21"}, func() string { return fmt.Sprint(r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))) }),
		`"money": ` + pick([]string{`"9999999999999999999999999999.9999999999"`, `"-0.0000000001"`, "0"}, decimal(38, 10)),
		`"small": ` + pick([]string{"999.99", "-999.99", "0.01"}, decimal(5, 2)),
		`"s": ` + pick([]string{`""`, `"a,b"`, `"say \"hi\""`, `"two\nlines"`, `"日本 ü"`, `" padded "`}, func() string { return fmt.Sprintf(`"w%d"`, r.IntN(1000)) }),
		`"b": ` + pick([]string{"true", "false"}, func() string { return "true" }),
		`"day": ` + pick([]string{`"0001-01-01"`, `"9999-12-31"`, `"1970-01-01"`}, func() string {
			return `"` + time.Unix(r.Int64N(4e9)-2e9, 0).UTC().Format("2006-01-02") + `"`
		}),
		`"at": ` + pick([]string{`"1970-01-01T00:00:00Z"`, `"2262-04-11T23:47:16.854775Z"`}, func() string {
			return `"` + time.UnixMicro(r.Int64N(4e15)-2e15).UTC().Format("2006-01-02T15:04:05.999999Z") + `"`
		}),
	}
	if nested {
		fields = append(fields,
			`"tags": `+pick([]string{"[]", "null", "[null]"}, func() string { return fmt.Sprintf(`[%d, null, %d]`, r.IntN(100), r.IntN(100)) }),
			`"pair": `+pick([]string{"null", `{"k": null, "v": null}`}, func() string { return fmt.Sprintf(`{"k": "x%d", "v": %s}`, r.IntN(9), decimal(5, 2)()) }),
			`"attrs": `+pick([]string{"{}", "null", `{"a": null}`}, func() string { return fmt.Sprintf(`{"a": [], "b%d": [%s, null]}`, r.IntN(9), decimal(5, 2)()) }),
			`"doc": `+pick([]string{`null`, `"text"`, `{"z": 1, "a": [true, null, "s"]}`, `12345678901234567890123`, `-0.000001`}, func() string {
				return fmt.Sprintf(`{"n": %d, "d": %s, "s": "v%d", "list": [1, {"x": null}]}`, r.Int64(), decimal(20, 5)(), r.IntN(9))
			}),
			`"raw": `+pick([]string{`""`, `"AA=="`, "null"}, func() string { return `"` + base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(r.Int64()))) + `"` }),
			`"local": `+pick([]string{`"1970-01-01T00:00:00"`, `"9999-12-31T23:59:59.999999"`}, func() string {
				return `"` + time.UnixMicro(r.Int64N(4e15)-2e15).UTC().Format("2006-01-02T15:04:05.999999") + `"`
			}))
	}
	return "{" + strings.Join(fields, ", ") + "}"
}

// TestEveryTypeRoundTrips writes random values of every type out of a
// table as JSON lines, as CSV and as Parquet, reads each back into a table
// (of the same declared schema; from Parquet, of the file's own schema),
// and checks that the tables are equal, value for value.
func TestEveryTypeRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var in strings.Builder
	for range 300 {
		in.WriteString(randomRoundTripRow(r, true) + "\n")
	}
	nestedSchema := roundTripScalars + ", tags ARRAY<INT>, pair STRUCT<k: STRING, v: DECIMAL(5,2)>, attrs MAP<STRING, ARRAY<DECIMAL(5,2)>>, " +
		"doc VARIANT, raw BINARY, local TIMESTAMP_NTZ"
	// CSV holds every column but the binary one (Spark's CSV has no binary
	// type); nested and variant columns as their JSON text
	csvSchema := strings.Replace(nestedSchema, ", raw BINARY", "", 1)
	var names []string
	for _, c := range strings.Split(roundTripScalars, ", ") {
		names = append(names, strings.Fields(c)[0])
	}
	names = append(names, "tags", "pair", "attrs", "doc", "local")
	flat := "CREATE MATERIALIZED VIEW flat AS SELECT " + strings.Join(names, ", ") + " FROM t;\n"
	pipeline := func(format, schema, data string) string {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "pipeline.yaml"), "name: roundtrip\n")
		opts := ""
		switch format {
		case "csv":
			opts = ", header => true, multiLine => true"
		case "json":
			opts = ", mode => 'FAILFAST'"
		}
		if schema != "" {
			opts += ", schema => '" + schema + "'"
		}
		writeFile(t, filepath.Join(dir, "flows.sql"), fmt.Sprintf(
			"CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM read_files('data/', format => '%s'%s);\n", format, opts)+flat)
		writeFile(t, filepath.Join(dir, "data", "part."+format), data)
		must(t, 0, sluice, dir, "run", "--live=false")
		return dir
	}
	first := pipeline("json", nestedSchema, in.String())
	want := tableRows(t, first, "t")
	if n := strings.Count(want, "\n"); n != 300 {
		t.Fatalf("the first table has %d rows of 300", n)
	}
	again := pipeline("json", nestedSchema, want)
	if got := tableRows(t, again, "t"); got != want {
		t.Errorf("JSON lines do not round-trip:\n%s", firstDiff(want, got))
	}
	// Parquet: the file's schema is the table's, and the values are equal
	// (a variant's numbers take Spark's variant types, so 1e3 would read
	// back as 1000.0; the random documents hold none)
	parquetFile := must(t, 0, sluice, first, "table", "t", "--format", "parquet").stdout
	viaParquet := pipeline("parquet", "", parquetFile)
	if got := tableRows(t, viaParquet, "t"); got != want {
		t.Errorf("Parquet does not round-trip:\n%s", firstDiff(want, got))
	}
	if got, want := must(t, 0, sluice, viaParquet, "describe", "t").stdout, must(t, 0, sluice, first, "describe", "t").stdout; columnsOfDescribe(got) != columnsOfDescribe(want) {
		t.Errorf("the table read from Parquet has the columns\n%s\nnot\n%s", columnsOfDescribe(got), columnsOfDescribe(want))
	}

	query := []string{"table", "flat", "--format", "csv"}
	csvText := must(t, 0, sluice, first, query...).stdout
	viaCSV := pipeline("csv", csvSchema, csvText)
	if got, want := must(t, 0, sluice, viaCSV, query...).stdout, csvText; got != want {
		t.Errorf("CSV does not round-trip:\n%s", firstDiff(want, got))
	}
	// and the values read from CSV are those of the JSON table
	var a, b map[string]any
	wantLines, gotLines := strings.Split(tableRows(t, first, "flat"), "\n"), strings.Split(tableRows(t, viaCSV, "t"), "\n")
	for i := range gotLines {
		if gotLines[i] == "" {
			continue
		}
		_ = json.Unmarshal([]byte(wantLines[i]), &a)
		_ = json.Unmarshal([]byte(gotLines[i]), &b)
		for _, n := range names {
			if fmt.Sprint(a[n]) != fmt.Sprint(b[n]) {
				t.Fatalf("row %d column %s: %v from JSON, %v through CSV", i+1, n, a[n], b[n])
			}
		}
	}
}

// columnsOfDescribe is the column table of sluice describe's output.
func columnsOfDescribe(out string) string {
	if i := strings.Index(out, "\ncolumn "); i >= 0 {
		return out[i:]
	}
	return out
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\nwant %s\ngot  %s", i+1, w[i], g[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}
