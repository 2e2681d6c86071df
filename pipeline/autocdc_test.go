package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/processors"
)

// changesDir writes a directory of change records for AUTO CDC tests.
func changesDir(t *testing.T, lines ...string) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in"), "a.json", strings.Join(lines, "\n")+"\n")
	return dir
}

const changesHead = "CREATE OR REFRESH STREAMING TABLE raw AS SELECT * FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT, v STRING, op STRING, ts BIGINT');\n" +
	"CREATE OR REFRESH STREAMING TABLE t;\n"

// The clauses of an AUTO CDC flow that contradict each other or name
// what is not there are refused at validation, with a code and the line.
func TestAutoCDCValidation(t *testing.T) {
	dir := changesDir(t, `{"id": 1, "v": "a", "op": "I", "ts": 1}`)
	cases := []struct {
		name, flow string
		code       domain.Code
		line       int
	}{
		{"truncate with SCD 2", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id)\nAPPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY ts STORED AS SCD TYPE 2;", domain.CodeCDCInvalidClause, 4},
		{"history with SCD 1", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) SEQUENCE BY ts\nTRACK HISTORY ON (v);", domain.CodeCDCInvalidClause, 4},
		{"key not in the source", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw)\nKEYS (idd) SEQUENCE BY ts;", domain.CodeCDCUnknownColumn, 4},
		{"key not stored", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw)\nKEYS (id) SEQUENCE BY ts COLUMNS * EXCEPT (id);", domain.CodeCDCUnknownColumn, 4},
		{"tracked column not stored", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) SEQUENCE BY ts COLUMNS (id, op) STORED AS SCD TYPE 2\nTRACK HISTORY ON (v);", domain.CodeCDCUnknownColumn, 4},
		{"sequence column not in the source", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id)\nSEQUENCE BY tss;", domain.CodeUnresolvedColumn, 4},
		{"sequence that cannot be ordered", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id)\nSEQUENCE BY map('a', ts);", domain.CodeCDCSequenceType, 4},
		{"delete condition not boolean", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) SEQUENCE BY ts\nAPPLY AS DELETE WHEN op;", domain.CodeDatatypeMismatch, 4},
		{"into a materialized view", "CREATE MATERIALIZED VIEW mv AS SELECT 1 AS id;\nCREATE FLOW f AS AUTO CDC INTO mv FROM STREAM(raw) KEYS (id) SEQUENCE BY ts;", domain.CodeInvalidFlowTarget, 4},
		{"target read as a stream", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) SEQUENCE BY ts;\nCREATE STREAMING TABLE down AS SELECT * FROM STREAM(t);", domain.CodeCDCTargetNotStream, 0},
		{"an append flow beside it", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) SEQUENCE BY ts;\nCREATE FLOW g AS INSERT INTO t BY NAME SELECT * FROM STREAM(raw);", domain.CodeInvalidFlowTarget, 0},
		{"two flows by other keys", "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) SEQUENCE BY ts;\nCREATE FLOW g AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id, v) SEQUENCE BY ts;", domain.CodeCDCKeyDrift, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, probs := loadSQL(t, dir, changesHead+tc.flow)
			if len(probs) == 0 {
				_, probs = p.Resolve()
			}
			for _, pr := range probs {
				if pr.Code == tc.code && (tc.line == 0 || pr.Line == tc.line) {
					return
				}
			}
			t.Fatalf("want %s at line %d, got %v", tc.code, tc.line, probs)
		})
	}
}

// runCDC loads and runs an AUTO CDC pipeline over the records of dir.
func runCDC(t *testing.T, h *harness, dir, flow string) *processors.Result {
	t.Helper()
	p, probs := loadSQL(t, dir, changesHead+flow)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return h.run(p, processors.Options{Development: true})
}

// A change with a NULL key or sequence fails its batch, naming the flow,
// the batch and the column; nothing of the batch is applied.
func TestAutoCDCNullKeyAndSequence(t *testing.T) {
	const flow = "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) SEQUENCE BY ts;"
	cases := []struct {
		line string
		code domain.Code
		says string
	}{
		{`{"id": null, "v": "b", "op": "U", "ts": 2}`, domain.CodeCDCNullKey, "key column id is NULL"},
		{`{"id": 1, "v": "b", "op": "U", "ts": null}`, domain.CodeCDCNullSequence, "the change of id=1"},
	}
	for _, tc := range cases {
		t.Run(string(tc.code), func(t *testing.T) {
			h := newHarness(t)
			dir := changesDir(t, `{"id": 1, "v": "a", "op": "I", "ts": 1}`)
			res := runCDC(t, h, dir, flow)
			if res.State != domain.UpdateCompleted {
				t.Fatal(res.Err)
			}
			writeFile(t, filepath.Join(dir, "in"), "b.json", tc.line+"\n")
			res = runCDC(t, h, dir, flow)
			if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != tc.code {
				t.Fatalf("update %s: %v, want FAILED with %s", res.State, res.Err, tc.code)
			}
			for _, s := range []string{`flow "f"`, "batch 1", tc.says} {
				if !strings.Contains(res.Err.Error(), s) {
					t.Errorf("error %q does not say %q", res.Err, s)
				}
			}
			if got := rowsOf(t, h, "t"); strings.Join(got, ";") != "1,a,I,1" {
				t.Errorf("table %v after the failed batch, want 1,a,I,1", got)
			}
		})
	}
}

// Between updates, a flow whose keys, SCD type or sequence type changed is
// refused with the fix (a full refresh), and the full refresh works.
func TestAutoCDCDrift(t *testing.T) {
	base := "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (%s) SEQUENCE BY %s STORED AS SCD TYPE %d;"
	cases := []struct {
		name   string
		keys   string
		seq    string
		scd    int
		code   domain.Code
		reason string
	}{
		{"keys", "id, v", "ts", 1, domain.CodeCDCKeyDrift, "keys"},
		{"sequence type", "id", "CAST(ts AS STRING)", 1, domain.CodeCDCSequenceDrift, "sequence"},
		{"scd type", "id", "ts", 2, domain.CodeCDCStoredAsDrift, "SCD type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			dir := changesDir(t, `{"id": 1, "v": "a", "op": "I", "ts": 1}`)
			if res := runCDC(t, h, dir, fmt.Sprintf(base, "id", "ts", 1)); res.State != domain.UpdateCompleted {
				t.Fatal(res.Err)
			}
			writeFile(t, filepath.Join(dir, "in"), "b.json", `{"id": 2, "v": "b", "op": "I", "ts": 2}`+"\n")
			changed := fmt.Sprintf(base, tc.keys, tc.seq, tc.scd)
			res := runCDC(t, h, dir, changed)
			if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != tc.code || !strings.Contains(res.Err.Error(), tc.reason) {
				t.Fatalf("update %s: %v, want FAILED with %s", res.State, res.Err, tc.code)
			}
			var de *domain.Error
			if !errors.As(res.Err, &de) || !strings.Contains(de.Hint+de.Message, "full refresh") {
				t.Errorf("error %v does not say to run a full refresh", res.Err)
			}
			p, _ := loadSQL(t, dir, changesHead+changed)
			if res := h.run(p, processors.Options{Development: true, FullRefreshAll: true}); res.State != domain.UpdateCompleted {
				t.Fatalf("full refresh: %v", res.Err)
			}
		})
	}
}

// The Go API's CreateAutoCDCFlow gives the table its SQL twin gives.
func TestCreateAutoCDCFlowMatchesSQL(t *testing.T) {
	dir := changesDir(t,
		`{"id": 1, "v": "a", "op": "I", "ts": 1}`,
		`{"id": 2, "v": "b", "op": "I", "ts": 1}`,
		`{"id": 1, "v": null, "op": "U", "ts": 3}`,
		`{"id": 2, "v": "x", "op": "D", "ts": 4}`,
		`{"id": 1, "v": "z", "op": "U", "ts": 2}`)
	sqlH := newHarness(t)
	runCDC(t, sqlH, dir, "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(raw) KEYS (id) IGNORE NULL UPDATES APPLY AS DELETE WHEN op = 'D' SEQUENCE BY ts COLUMNS * EXCEPT (op, ts) STORED AS SCD TYPE 2;")

	goH := newHarness(t)
	p, probs := loadSQL(t, dir, "CREATE OR REFRESH STREAMING TABLE raw AS SELECT * FROM STREAM read_files('in', format => 'json', schema => 'id BIGINT, v STRING, op STRING, ts BIGINT');")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	p.CreateStreamingTable("t")
	p.CreateAutoCDCFlow(AutoCDC{Target: "t", Name: "f", Source: ReadStream("raw"), Keys: []string{"id"}, IgnoreNullUpdates: true,
		ApplyAsDeletes: "op = 'D'", SequenceBy: "ts", ExceptColumns: []string{"op", "ts"}, StoredAsSCDType: 2})
	goH.mustComplete(p, processors.Options{Development: true})

	want, got := rowsOf(t, sqlH, "t"), rowsOf(t, goH, "t")
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("Go API table %v, SQL table %v", got, want)
	}
	// id 1: a from 1, z from 2, then an update of NULL at 3 keeping z: in
	// place (nothing tracked changed); id 2 deleted at 4.
	if w := "1,a,1,2;1,z,2,NULL;2,b,1,4"; strings.Join(got, ";") != w {
		t.Fatalf("table %v, want %s", got, w)
	}
}

// A Go flow missing its sequence, or with contradicting clauses, is
// refused by Resolve.
func TestCreateAutoCDCFlowProblems(t *testing.T) {
	p := New("go")
	p.CreateStreamingTable("raw")
	p.CreateStreamingTable("t")
	p.CreateAutoCDCFlow(AutoCDC{Target: "t", Source: ReadStream("raw"), Keys: []string{"id"}, StoredAsSCDType: 2, ApplyAsTruncates: "op = 'T'"})
	_, probs := p.Resolve()
	var codes []string
	for _, pr := range probs {
		codes = append(codes, string(pr.Code))
	}
	got := strings.Join(codes, " ")
	for _, want := range []string{"AUTOCDC_INVALID_DEFINITION"} {
		if strings.Count(got, want) != 2 {
			t.Errorf("problems %v, want two %s (no sequence; truncate with SCD 2)", probs, want)
		}
	}
}

// The snapshot example of the AUTO CDC documentation, from a Go snapshot
// function: versions 1 and 2 applied in one update, version 3 (and a
// version that does not grow) in later ones.
func TestAutoCDCFromSnapshotFunc(t *testing.T) {
	schema := domain.NewSchema(domain.Field{Name: "key", Type: domain.TypeInt64}, domain.Field{Name: "value", Type: domain.TypeString, Nullable: true})
	snap := func(rows ...string) *domain.Batch {
		b := domain.NewBatch(schema, 0)
		for _, r := range rows {
			k, v, _ := strings.Cut(r, "=")
			n, _ := strconv.ParseInt(k, 10, 64)
			if err := b.AppendRow(domain.Int(n), domain.String(v)); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	snapshots := map[int64]*domain.Batch{1: snap("1=a1", "2=a2"), 2: snap("2=b2", "3=a3")}
	next := map[int64]int64{0: 1, 1: 2, 2: 3}
	fn := func(_ context.Context, latest *int64) (*domain.Batch, int64, bool, error) {
		var after int64
		if latest != nil {
			after = *latest
		}
		v := next[after]
		rows, ok := snapshots[v]
		return rows, v, ok, nil
	}
	h := newHarness(t)
	build := func() *Pipeline {
		p := New("snap")
		for _, scd := range []int{1, 2} {
			name := fmt.Sprintf("t%d", scd)
			p.CreateStreamingTable(name)
			p.CreateAutoCDCFromSnapshotFlow(AutoCDCFromSnapshot{Target: name, Snapshots: fn, Keys: []string{"key"}, StoredAsSCDType: scd})
		}
		return p
	}
	h.mustComplete(build(), processors.Options{Development: true})
	if got := strings.Join(rowsOf(t, h, "t1"), ";"); got != "2,b2;3,a3" {
		t.Errorf("SCD 1: %s", got)
	}
	if got := strings.Join(rowsOf(t, h, "t2"), ";"); got != "1,a1,1,2;2,a2,1,2;2,b2,2,NULL;3,a3,2,NULL" {
		t.Errorf("SCD 2: %s", got)
	}
	snapshots[3] = snap("3=c3")
	h.mustComplete(build(), processors.Options{Development: true})
	if got := strings.Join(rowsOf(t, h, "t2"), ";"); got != "1,a1,1,2;2,a2,1,2;2,b2,2,3;3,a3,2,3;3,c3,3,NULL" {
		t.Errorf("SCD 2 after version 3: %s", got)
	}
	next[3] = 3 // a version that does not grow
	res := h.run(build(), processors.Options{Development: true})
	if res.State != domain.UpdateFailed || domain.CodeOf(res.Err) != domain.CodeCDCSnapshotVersion {
		t.Fatalf("update %s: %v, want FAILED with %s", res.State, res.Err, domain.CodeCDCSnapshotVersion)
	}
}

// AUTO CDC ONCE applies what its source holds once, read as a batch: a
// later update skips it, and the table keeps what it applied.
func TestAutoCDCOnce(t *testing.T) {
	h := newHarness(t)
	dir := changesDir(t, `{"id": 1, "v": "a", "op": "I", "ts": 1}`, `{"id": 1, "v": "b", "op": "U", "ts": 2}`, `{"id": 2, "v": "c", "op": "I", "ts": 1}`)
	const flow = "CREATE FLOW f AS AUTO CDC ONCE INTO t FROM raw KEYS (id) SEQUENCE BY ts COLUMNS * EXCEPT (op, ts);"
	if res := runCDC(t, h, dir, flow); res.State != domain.UpdateCompleted {
		t.Fatal(res.Err)
	}
	writeFile(t, filepath.Join(dir, "in"), "b.json", `{"id": 3, "v": "d", "op": "I", "ts": 5}`+"\n")
	res := runCDC(t, h, dir, flow)
	if res.State != domain.UpdateCompleted {
		t.Fatal(res.Err)
	}
	if got := strings.Join(rowsOf(t, h, "t"), ";"); got != "1,b;2,c" {
		t.Fatalf("table %s, want 1,b;2,c (the once flow does not run again)", got)
	}
}
