package sources

import (
	"strings"
	"testing"
	"time"
)

// Debezium events become rows of the changed row's columns and _op,
// _source_ts, _sequence; columns the schema envelope gives a logical type
// take its meaning; tombstones are skipped; an event that is not one is a
// bad record.
func TestDebeziumFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "events.json", strings.Join([]string{
		`{"schema": {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": [{"field": "id", "type": "int32"}, {"field": "seen", "type": "int64", "name": "io.debezium.time.MicroTimestamp"}]}]}, "payload": {"before": null, "after": {"id": 1, "seen": 1700000000000000}, "source": {"lsn": 7, "ts_ms": 1700000000000}, "op": "c"}}`,
		`null`,
		`{"before": {"id": 1, "seen": null}, "after": null, "source": {"lsn": 9, "ts_ms": 1700000001000}, "op": "d"}`,
		`{"source": {"lsn": 11, "ts_ms": 1700000002000}, "op": "t"}`,
		`{"op": "z"}`,
	}, "\n")+"\n", time.Now().Add(-time.Hour))
	b := readOnce(t, newFiles(t, dir, FileOptions{Format: "debezium", RescueBadRecords: true}))
	var got []string
	for _, r := range b.Rows() {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = v.String()
		}
		got = append(got, strings.Join(parts, " | "))
	}
	want := []string{
		"1 | 2023-11-14T22:13:20Z | INSERT | 2023-11-14T22:13:20Z | 00000000000000000007 | NULL",
		"1 | NULL | DELETE | 2023-11-14T22:13:21Z | 00000000000000000009 | NULL",
		"NULL | NULL | TRUNCATE | 2023-11-14T22:13:22Z | 00000000000000000011 | NULL",
	}
	if b.Schema.String() == "" || len(got) != 4 || strings.Join(got[:3], "\n") != strings.Join(want, "\n") || !strings.Contains(got[3], `op \"z\" is not one of c, u, d, r, t`) {
		t.Fatalf("schema %s, rows:\n%s", b.Schema, strings.Join(got, "\n"))
	}
}
