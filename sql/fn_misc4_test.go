package sql

import "testing"

// TestMiscFunctions: window_time, monotonically_increasing_id and
// sentences, with Spark's documented examples.
func TestMiscFunctions(t *testing.T) {
	checkEvalCases(t, []struct{ src, want string }{
		{"sentences('Hi there! Good morning.')", "array<array<string>>:[[Hi, there], [Good, morning]]"},
		{"sentences('Hi there! Good morning.', 'en', 'US')", "array<array<string>>:[[Hi, there], [Good, morning]]"},
		{"sentences(\"I don't know. Pi is 3.14, or 1,000 milli-pi!\nNew line\")", "array<array<string>>:[[I, don't, know], [Pi, is, 3.14, or, 1,000, milli, pi], [New, line]]"},
		{"sentences('')", "array<array<string>>:[]"},
		{"sentences('Hello.')", "array<array<string>>:[[Hello]]"},
		{"sentences(NULL)", "array<array<string>>:NULL"},
		{"size(sentences('Ünïcödé wörds, ok? Yes.'))", "int:2"},
		{"window_time(window(TIMESTAMP '2021-01-01 00:04:30', '5 minutes'))", "timestamp:2021-01-01T00:04:59.999999Z"},
		{"window_time(CAST(NULL AS STRUCT<start: TIMESTAMP, end: TIMESTAMP>))", "timestamp:NULL"},
		{"window_time(s)", "DATATYPE_MISMATCH"},
		{"monotonically_increasing_id()", "bigint:0"},
	})
}
