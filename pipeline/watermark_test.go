package pipeline

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/eventstore"
	"github.com/sluicehq/sluice/processors"
)

// clicksHead reads one file per micro-batch, so that the watermark moves
// between the files.
const clicksHead = "CREATE OR REFRESH STREAMING TABLE raw AS SELECT id, CAST(ts AS TIMESTAMP) AS ts FROM STREAM read_files('in', format => 'json', maxFilesPerTrigger => 1, schema => 'id STRING, ts STRING');\n"

// A stream with duplicates inside and outside the delay, late rows and rows
// without an event time, over three micro-batches and two updates: exactly
// the documented rows survive.
//
//	batch 1: A 10:00, B 10:01 kept; A 10:02 a duplicate. Watermark 9:56.
//	batch 2: C 9:50 late; A 10:04 a duplicate (A's state lives until
//	         10:05); D 10:20 kept. Watermark 10:15: A and B forgotten.
//	batch 3 (next update): A 10:16 kept (forgotten); B 10:14 late; two E
//	         without a time, both kept.
func TestDeduplicateWithinWatermark(t *testing.T) {
	for _, front := range []string{"sql", "go"} {
		t.Run(front, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			writeFile(t, in, "1.json", `{"id": "A", "ts": "2026-01-01T10:00:00Z"}
{"id": "B", "ts": "2026-01-01T10:01:00Z"}
{"id": "A", "ts": "2026-01-01T10:02:00Z"}
`)
			writeFile(t, in, "2.json", `{"id": "C", "ts": "2026-01-01T09:50:00Z"}
{"id": "A", "ts": "2026-01-01T10:04:00Z"}
{"id": "D", "ts": "2026-01-01T10:20:00Z"}
`)
			load := func() *Pipeline {
				if front == "sql" {
					p, probs := loadSQL(t, dir, clicksHead+
						"CREATE OR REFRESH STREAMING TABLE clean AS SELECT * FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 5 MINUTES DEDUPLICATE ON (id);")
					if len(probs) > 0 {
						t.Fatal(probs)
					}
					return p
				}
				p, probs := loadSQL(t, dir, clicksHead)
				if len(probs) > 0 {
					t.Fatal(probs)
				}
				p.StreamingTable("clean", ReadStream("raw").WithWatermark("ts", 5*time.Minute).DropDuplicatesWithinWatermark("id"))
				return p
			}
			h := newHarness(t)
			h.mustComplete(load(), processors.Options{Development: true, Limit: domain.ReadLimit{MaxRows: 4}})
			writeFile(t, in, "3.json", `{"id": "A", "ts": "2026-01-01T10:16:00Z"}
{"id": "B", "ts": "2026-01-01T10:14:00Z"}
{"id": "E", "ts": null}
{"id": "E", "ts": null}
`)
			h.mustComplete(load(), processors.Options{Development: true, Limit: domain.ReadLimit{MaxRows: 4}})
			want := []string{"A,2026-01-01T10:00:00Z", "A,2026-01-01T10:16:00Z", "B,2026-01-01T10:01:00Z", "D,2026-01-01T10:20:00Z", "E,NULL", "E,NULL"}
			if got := rowsOf(t, h, "clean"); strings.Join(got, ";") != strings.Join(want, ";") {
				t.Fatalf("clean %v, want %v", got, want)
			}
			var late, dups, stateRows []int64
			for _, ev := range h.events(eventstore.Filter{Flow: "clean", Types: []domain.EventType{domain.EventStreamState}}) {
				st := ev.Details.StreamState
				late, dups, stateRows = append(late, st.NumLateRowsDropped), append(dups, st.NumDuplicatesDropped), append(stateRows, st.NumStateRows)
			}
			if s := fmtInts(late) + " " + fmtInts(dups) + " " + fmtInts(stateRows); s != "0,1,1 1,1,0 2,1,2" {
				t.Errorf("late, duplicates, identities per batch: %s, want 0,1,1 1,1,0 2,1,2", s)
			}
		})
	}
}

func fmtInts(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, ",")
}

// A watermark on a batch read, on a column that is not a timestamp, a
// delay that is not an interval, or a deduplication on a column the stream
// lacks are refused at validation.
func TestWatermarkValidation(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "1.json", `{"id": "A", "ts": "2026-01-01T10:00:00Z"}`+"\n")
	cases := []struct {
		name, sql string
		code      domain.Code
	}{
		{"not a timestamp", "CREATE STREAMING TABLE c AS SELECT * FROM STREAM(raw) WATERMARK id DELAY OF INTERVAL 5 MINUTES;", domain.CodeDatatypeMismatch},
		{"delay not an interval", "CREATE STREAMING TABLE c AS SELECT * FROM STREAM(raw) WATERMARK ts DELAY OF 5;", domain.CodeDatatypeMismatch},
		{"unknown identity column", "CREATE STREAMING TABLE c AS SELECT * FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 1 MINUTE DEDUPLICATE ON (idd);", domain.CodeUnresolvedColumn},
		{"batch read", "CREATE MATERIALIZED VIEW c AS SELECT * FROM raw WATERMARK ts DELAY OF INTERVAL 1 MINUTE;", domain.CodeInvalidDefinition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, probs := loadSQL(t, dir, clicksHead+tc.sql)
			if len(probs) == 0 {
				_, probs = p.Resolve()
			}
			for _, pr := range probs {
				if pr.Code == tc.code && pr.Line == 2 {
					return
				}
			}
			t.Fatalf("want %s at line 2, got %v", tc.code, probs)
		})
	}
	p := New("go")
	p.CreateStreamingTable("raw")
	p.StreamingTable("c", ReadStream("raw").DropDuplicatesWithinWatermark("id"))
	if _, probs := p.Resolve(); len(probs) == 0 || probs[0].Code != domain.CodeInvalidDefinition {
		t.Fatalf("dedup without a watermark: %v", probs)
	}
}
