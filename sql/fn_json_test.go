package sql

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// jsonCases are Spark's and Databricks' reference examples of the JSON
// functions, then NULLs, malformed JSON and bad paths.
var jsonCases = []struct{ src, want string }{
	// CSV in a column: Spark's examples, then quoting, NULLs and bad fields
	{"from_csv('1, 0.8', 'a INT, b DOUBLE')", "struct<a: int, b: double>:{1, 0.8}"},
	{`from_csv('x,"a,b",,""', 'a INT, b STRING, c STRING, d STRING')`, "struct<a: int, b: string, c: string, d: string>:{NULL, a,b, NULL, }"},
	{"from_csv('1', 'a INT, b INT')", "struct<a: int, b: int>:{1, NULL}"},
	{"from_csv('1.50,2024-01-02', 'a DECIMAL(4,2), d DATE')", "struct<a: decimal(4,2), d: date>:{1.50, 2024-01-02}"},
	{"from_csv('1', 'a ARRAY<INT>')", "INVALID_SCHEMA"}, {"from_csv('1', 'a INT', map('quote', ';'))", "NOT_IMPLEMENTED"},
	// the options of the JSON and CSV functions
	{"from_csv('1;x;;2024/01/02', 'a INT, b STRING, c STRING, d DATE', map('sep', ';', 'dateFormat', 'yyyy/MM/dd'))", "struct<a: int, b: string, c: string, d: date>:{1, x, NULL, 2024-01-02}"},
	{"from_csv('1,NA', 'a INT, b INT', map('nullValue', 'NA'))", "struct<a: int, b: int>:{1, NULL}"},
	{"from_csv('x,1', 'a INT, b INT')", "struct<a: int, b: int>:{NULL, 1}"},
	{"from_csv('x,1', 'a INT, b INT', map('mode', 'FAILFAST'))", "MALFORMED_RECORD_IN_PARSING"},
	{"from_csv('02.01.2024 10:30', 'at TIMESTAMP', map('timestampFormat', 'dd.MM.yyyy HH:mm'))", "struct<at: timestamp>:{2024-01-02T10:30:00Z}"},
	{"to_csv(named_struct('a', 1, 'b', CAST(NULL AS STRING), 'c', 'x;y', 'd', DATE '2024-01-02'), map('sep', ';', 'nullValue', 'NA', 'dateFormat', 'dd/MM/yyyy'))", "string:'1;NA;\"x;y\";02/01/2024'"},
	{"schema_of_csv('1;abc', map('sep', ';'))", "string:'STRUCT<_c0: INT, _c1: STRING>'"},
	{"from_json('{\"a\": \"x\"}', 'a INT')", "struct<a: int>:{NULL}"},
	{"from_json('{\"a\": \"x\"}', 'a INT', map('mode', 'FAILFAST'))", "MALFORMED_RECORD_IN_PARSING"},
	{"from_json('{\"a\": ', 'a INT', map('mode', 'FAILFAST'))", "MALFORMED_RECORD_IN_PARSING"},
	{"from_json('{\"d\": \"02/01/2024\", \"t\": \"2024-01-02 10:30\"}', 'd DATE, t TIMESTAMP', map('dateFormat', 'dd/MM/yyyy', 'timestampFormat', 'yyyy-MM-dd HH:mm'))", "struct<d: date, t: timestamp>:{2024-01-02, 2024-01-02T10:30:00Z}"},
	{"to_json(named_struct('d', DATE '2024-01-02', 'n', CAST(NULL AS INT)), map('dateFormat', 'dd/MM/yyyy', 'ignoreNullFields', 'false'))", `string:'{"d":"02/01/2024","n":null}'`},
	{"to_json(named_struct('t', TIMESTAMP '2024-01-02 10:30:00'), map('timestampFormat', 'yyyy-MM-dd HH:mm'))", `string:'{"t":"2024-01-02 10:30"}'`},
	{"from_json('{}', 'a INT', map('mode', 'DROPMALFORMED'))", "INVALID_OPTIONS"},
	{"from_json('{}', 'a INT', 'mode')", "INVALID_OPTIONS"},
	{"to_json(named_struct('a', 1), map('pretty', 'true'))", "NOT_IMPLEMENTED"},
	{"to_csv(named_struct('a', 1, 'b', 2))", "string:'1,2'"},
	{`to_csv(named_struct('a', 'x,y', 'b', n, 'c', 'say "hi"', 'd', ''))`, `string:'"x,y",,"say \"hi\"",""'`},
	{"to_csv(named_struct('a', array(1)))", "DATATYPE_MISMATCH"},
	{"schema_of_csv('1,abc')", "string:'STRUCT<_c0: INT, _c1: STRING>'"},
	{"schema_of_csv('3000000000,1.5,true,2024-01-02 03:04:05,')", "string:'STRUCT<_c0: BIGINT, _c1: DOUBLE, _c2: BOOLEAN, _c3: TIMESTAMP, _c4: STRING>'"},
	{`get_json_object('{"a":"b"}', '$.a')`, "string:'b'"},
	{`get_json_object('{"a":{"b":"c"}}', '$.a.b')`, "string:'c'"},
	{`get_json_object('{"items":["apple","pear"]}', '$.items[0]')`, "string:'apple'"},
	{`get_json_object('{"first name":"Ada"}', '$["first name"]')`, "string:'Ada'"},
	{`get_json_object('{"ids":{"a.b":"42"}}', '$.ids["a.b"]')`, "string:'42'"},
	{`get_json_object('{"ids":{"a.b":"42"}}', "$.ids['a.b']")`, "string:'42'"},
	{`get_json_object('{"items":[{"n":1},{"n":2}]}', '$.items[*].n')`, "string:'[1,2]'"},
	{`get_json_object('{"items":[{"n":1}]}', '$.items[*].n')`, "string:'1'"},
	{`get_json_object('{"a": {"b" : [1, 2.50, true, null, "x\\"y"]}}', '$.a')`, `string:'{"b":[1,2.5,true,null,"x\"y"]}'`},
	{`get_json_object('{"a":1e2}', '$.a')`, "string:'100.0'"},
	{`get_json_object('{"a":null}', '$.a')`, "string:NULL"},
	{`get_json_object('{"a":1}', '$.b')`, "string:NULL"},
	{`get_json_object('{"a":1}', '$.A')`, "string:NULL"},
	{`get_json_object('{"a":1}', '$')`, `string:'{"a":1}'`},
	{`get_json_object('{"a":1', '$.a')`, "string:NULL"},
	{`get_json_object('{"a":1}', 'a')`, "string:NULL"},
	{`get_json_object('{"a":1}', '$.')`, "string:NULL"},
	{`get_json_object('{"a":[1]}', '$.a[5]')`, "string:NULL"},
	{`get_json_object(ns, '$.a')`, "string:NULL"},
	{`get_json_object('{"a":1}', ns)`, "string:NULL"},
	{`get_json_object('{"a":1}', concat('$.', 'a'))`, "string:'1'"},
	{`get_json_object('{"a":"\\u00e9\\ud83d\\ude00"}', '$.a')`, "string:'é😀'"},
	{`'{"owner":"amy","zip code":"94025","fb:testid":"1234","store":{"bicycle":{ "price":19.95, "color":"red" },"fruit":[{"weight":8,"type":"apple"},{"weight":9,"type":"pear"}]}}':owner`, "string:'amy'"},
	{`'{"owner":"amy"}':OWNER`, "string:'amy'"},
	{`'{"owner":"amy"}':['owner']`, "string:'amy'"},
	{`'{"owner":"amy"}':['OWNER']`, "string:NULL"},
	{"'{\"zip code\":\"94025\"}':`Zip Code`", "string:'94025'"},
	{`'{"fb:testid":"1234"}':['fb:testid']`, "string:'1234'"},
	{`'{"store":{"bicycle":{ "price":19.95, "color":"red" }}}':store.bicycle`, `string:'{ "price":19.95, "color":"red" }'`},
	{`'{"store":{"bicycle":{ "price":19.95, "color":"red" }}}':['store']['bicycle'].price`, "string:'19.95'"},
	{`'{"fruit":[{"weight":8,"type":"apple"},{"weight":9,"type":"pear"}]}':fruit[1].type`, "string:'pear'"},
	{`'{"fruit":[{"weight":8,"type":"apple"},{"weight":9,"type":"pear"}]}':fruit[*].weight`, "string:'[8,9]'"},
	{`'{"a":1,"A":2}':a`, "AMBIGUOUS_REFERENCE_TO_FIELDS"},
	{`'{"a":1,"A":2}':['A']`, "string:'2'"},
	{`'{"a":null}':a`, "string:NULL"},
	{`ns:a`, "string:NULL"},
	{`'nope':a`, "string:NULL"},
	{`from_json('{"a":1, "b":0.8}', 'a INT, b DOUBLE')`, "struct<a: int, b: double>:{1, 0.8}"},
	{`from_json('{"time":"26/08/2015"}', 'time Timestamp')`, "struct<time: timestamp>:{NULL}"},
	{`from_json('{"teacher": "Alice", "student": [{"name": "Bob", "rank": 1}, {"name": "Charlie", "rank": 2}]}', 'STRUCT<teacher: STRING, student: ARRAY<STRUCT<name: STRING, rank: INT>>>')`,
		"struct<teacher: string, student: array<struct<name: string, rank: int>>>:{Alice, [{Bob, 1}, {Charlie, 2}]}"},
	{`from_json('{"a":1', 'a INT')`, "struct<a: int>:{NULL}"},
	{`from_debezium('{"before": null, "after": {"id": 7, "v": "x"}, "source": {"lsn": 5, "ts_ms": 0}, "op": "c"}', 'id INT, v STRING')`,
		"struct<id: int, v: string, _op: string, _source_ts: timestamp, _sequence: string>:{7, x, INSERT, 1970-01-01T00:00:00Z, 00000000000000000005}"},
	{`from_debezium('{"schema": {}, "payload": {"before": {"id": 7}, "after": null, "source": {"ts_ms": 3}, "op": "d"}}', 'id INT, v STRING')`,
		"struct<id: int, v: string, _op: string, _source_ts: timestamp, _sequence: string>:{7, NULL, DELETE, 1970-01-01T00:00:00.003Z, 00000000000000000003}"},
	{`from_debezium('{"schema": {"fields": [{"field": "after", "fields": [{"field": "d", "name": "io.debezium.time.Date"}, {"field": "p", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}}]}]}, "payload": {"after": {"d": 1, "p": "MDk="}, "source": {"lsn": 1}, "op": "r"}}', 'd DATE, p DOUBLE')`,
		"struct<d: date, p: double, _op: string, _source_ts: timestamp, _sequence: string>:{1970-01-02, 123.45, READ, NULL, 00000000000000000001}"},
	{`from_debezium(CAST(NULL AS STRING), 'id INT')`, "struct<id: int, _op: string, _source_ts: timestamp, _sequence: string>:NULL"},
	{`from_debezium('{"op": "q"}', 'id INT')`, "MALFORMED_RECORD_IN_PARSING"},
	{`from_json('{"a":"x", "b":"y"}', 'a INT, b STRING')`, "struct<a: int, b: string>:{NULL, y}"},
	{`from_json('{"a":{"x":1}}', 'a STRING')`, `struct<a: string>:{{"x":1}}`},
	{`from_json('[1, 2, null]', 'ARRAY<BIGINT>')`, "array<bigint>:[1, 2, NULL]"},
	{`from_json('{"k":1}', 'MAP<STRING, INT>')`, "map<string, int>:{k -> 1}"},
	{`from_json('{"d":"2024-02-29","t":"2024-02-29 13:14:15"}', 'd DATE, t TIMESTAMP')`, "struct<d: date, t: timestamp>:{2024-02-29, 2024-02-29T13:14:15Z}"},
	{`from_json(ns, 'a INT')`, "struct<a: int>:NULL"},
	{`from_json('{}', 'a INT,')`, "INVALID_SCHEMA"},
	{`from_json('{}', 'a FOO')`, "INVALID_SCHEMA"},
	{`from_json('{}', s)`, "INVALID_SCHEMA"},
	{`from_json('1', 'INT')`, "INVALID_SCHEMA"},
	{`to_json(named_struct('a', 1, 'b', 2))`, `string:'{"a":1,"b":2}'`},
	{`to_json(named_struct('time', TIMESTAMP'2015-08-26 00:00:00'))`, `string:'{"time":"2015-08-26T00:00:00.000Z"}'`},
	{`to_json(array(named_struct('a', 1, 'b', 2)))`, `string:'[{"a":1,"b":2}]'`},
	{`to_json(map('a', named_struct('b', 1)))`, `string:'{"a":{"b":1}}'`},
	{`to_json(map(named_struct('a', 1),named_struct('b', 2)))`, `string:'{"[1]":{"b":2}}'`},
	{`to_json(named_struct('a', CAST('NaN' AS DOUBLE)))`, `string:'{"a":"NaN"}'`},
	{`to_json(map('a', 1))`, `string:'{"a":1}'`},
	{`to_json(array(map('a', 1)))`, `string:'[{"a":1}]'`},
	{`to_json(named_struct('a', n, 'b', 'x"y', 'c', 1.0, 'd', DATE'2024-02-29'))`, `string:'{"b":"x\"y","c":1.0,"d":"2024-02-29"}'`},
	{`to_json(array(1, NULL))`, `string:'[1,null]'`},
	{`to_json(st)`, `string:'{"x":7,"y":"why"}'`},
	{`to_json(s)`, "DATATYPE_MISMATCH"},
	{`schema_of_json('[{"col":0}]')`, "string:'ARRAY<STRUCT<col: BIGINT>>'"},
	{`schema_of_json('{"b":1.5,"a":[true],"c":null,"d":[1,2.5],"e":[1,"x"],"f g":{}}')`, "string:'STRUCT<a: ARRAY<BOOLEAN>, b: DOUBLE, c: STRING, d: ARRAY<DOUBLE>, e: ARRAY<STRING>, `f g`: STRUCT<>>'"},
	{`schema_of_json('{"a":')`, "MALFORMED_RECORD_IN_PARSING"},
	{`schema_of_json(s)`, "DATATYPE_MISMATCH"},
	{`json_object_keys('{}')`, "array<string>:[]"},
	{`json_object_keys('{"key": "value"}')`, "array<string>:[key]"},
	{`json_object_keys('{"f1":"abc","f2":{"f3":"a", "f4":"b"}}')`, "array<string>:[f1, f2]"},
	{`json_object_keys('[1]')`, "array<string>:NULL"},
	{`json_object_keys('{"a"')`, "array<string>:NULL"},
	{`json_array_length('[1,2,3,4]')`, "bigint:4"},
	{`json_array_length('[1,2,3,{"f1":1,"f2":[5,6]},4]')`, "bigint:5"},
	{`json_array_length('[1,2')`, "bigint:NULL"},
	{`json_array_length('{}')`, "bigint:NULL"},
	{`json_array_length(ns)`, "bigint:NULL"},
}

func TestJSONFunctions(t *testing.T) { checkCollCases(t, jsonCases) }

func TestParseJSON(t *testing.T) {
	for _, tc := range []struct {
		src string
		ok  bool
	}{
		{`{}`, true}, {` [ 1 , -2.5e+3 , "a\\u0041" , true , false , null ] `, true}, {`"x"`, true},
		{`{"a":1,}`, false}, {`[1,]`, false}, {`01`, false}, {`1.`, false}, {`-`, false}, {`"\x"`, false},
		{"\"a\nb\"", false}, {`{"a" 1}`, false}, {`nul`, false}, {`[1] 2`, false}, {``, false},
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
	} {
		if _, ok := parseJSON(tc.src); ok != tc.ok {
			t.Errorf("parseJSON(%q) ok = %v, want %v", tc.src, ok, tc.ok)
		}
	}
}

// FuzzGetJSONObject: any JSON and any path give a result or NULL, never a
// panic; and what get_json_object returns for a JSON container parses again.
func FuzzGetJSONObject(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,2,{"c":"d"}]}}`, `[1,[2,[3]]]`, `{"a":"\ud83d\ude00"}`, `{"a":1e400}`} {
		for _, p := range []string{"$", "$.a", "$.a.b[2].c", "$[*]", "$[1][1][0]", "$['a']", "$.a[*]", "$..a", "$.a[01]"} {
			f.Add(s, p)
		}
	}
	f.Fuzz(func(t *testing.T, js, path string) {
		steps, valid := parseJSONPath(path)
		got, ok := getJSONObject(js, steps, valid)
		if !ok {
			return
		}
		if v, _ := parseJSON(js); v != nil && (strings.HasPrefix(got, "{") || strings.HasPrefix(got, "[")) {
			vals, _, _ := walkJSON(v, steps)
			if len(vals) == 1 && vals[0].Kind != domain.JSONString {
				if _, ok := parseJSON(got); !ok {
					t.Fatalf("get_json_object(%q, %q) = %q, which is not JSON", js, path, got)
				}
			}
		}
	})
}

// FuzzFromJSON: any JSON read into any schema the schema reader accepts
// gives a value of the schema's kind or NULL, and to_json of a struct that
// from_json made is JSON that from_json reads back as the same struct.
func FuzzFromJSON(f *testing.F) {
	for _, tc := range jsonCases {
		if strings.HasPrefix(tc.src, "from_json(") {
			f.Add(tc.src, "a INT, b ARRAY<MAP<STRING, DOUBLE>>, c STRUCT<d: DATE, e: BOOLEAN>")
		}
	}
	f.Add(`{"a":1,"b":[{"x":1.5}],"c":{"d":"2024-01-01","e":true}}`, "a INT, b ARRAY<MAP<STRING, DOUBLE>>, c STRUCT<d: DATE, e: BOOLEAN>")
	f.Fuzz(func(t *testing.T, js, schema string) {
		typ, err := parseTypeText("schema", schema)
		if err != nil || typ.Kind != domain.KindStruct {
			return
		}
		v, ok := parseJSON(js)
		if !ok {
			return
		}
		got := jsonToValue(v, typ)
		if !got.IsNull() && got.Kind() != domain.KindStruct {
			t.Fatalf("from_json(%q, %q) = %v, not a struct", js, schema, got)
		}
		out := string(domain.AppendJSON(nil, got, typ))
		back, ok := parseJSON(out)
		if !ok {
			t.Fatalf("to_json(from_json(%q, %q)) = %q, which is not JSON", js, schema, out)
		}
		if again := jsonToValue(back, typ); !again.Equal(got) {
			t.Fatalf("from_json(to_json(%v)) = %v; to_json gave %s", got, again, out)
		}
	})
}
