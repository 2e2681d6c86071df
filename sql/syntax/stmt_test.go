package syntax

import "testing"

func TestDatasetKind(t *testing.T) {
	cases := []struct {
		src  string
		kind DatasetKind
		temp bool
	}{
		{"CREATE OR REFRESH STREAMING TABLE t AS SELECT 1", StreamingTable, false},
		{"CREATE STREAMING TABLE t", StreamingTable, false},
		{"CREATE TEMPORARY STREAMING TABLE t AS SELECT 1", StreamingTable, true},
		{"CREATE OR REFRESH MATERIALIZED VIEW t AS SELECT 1", MaterializedView, false},
		{"CREATE TEMPORARY VIEW t AS SELECT 1", View, true},
		{"CREATE VIEW t AS SELECT 1", View, false},
		{"CREATE STREAMING LIVE TABLE t AS SELECT 1", StreamingTable, false},
		{"CREATE OR REFRESH TEMPORARY STREAMING LIVE TABLE t AS SELECT 1", StreamingTable, true},
		{"CREATE INCREMENTAL LIVE TABLE t AS SELECT 1", StreamingTable, false},
		{"CREATE LIVE TABLE t AS SELECT 1", MaterializedView, false},
		{"CREATE OR REFRESH TEMPORARY LIVE TABLE t AS SELECT 1", MaterializedView, true},
		{"CREATE LIVE VIEW t AS SELECT 1", View, false},
		{"CREATE OR REPLACE TEMPORARY STREAMING LIVE VIEW t AS SELECT 1", View, true},
		{"create or refresh streaming live table t as select 1", StreamingTable, false},
	}
	for _, c := range cases {
		f, err := ParseFile("k.sql", c.src, nil)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		d := f.Statements[0].(*CreateDataset)
		if d.Kind() != c.kind || d.Temporary != c.temp {
			t.Errorf("%s: %v temporary=%v, want %v temporary=%v", c.src, d.Kind(), d.Temporary, c.kind, c.temp)
		}
	}
}

func TestMaterializedViewNeedsQuery(t *testing.T) {
	for _, src := range []string{"CREATE MATERIALIZED VIEW t", "CREATE VIEW t", "CREATE LIVE TABLE t;"} {
		if _, err := ParseFile("q.sql", src, nil); err == nil {
			t.Errorf("%s: want an error (only a streaming table may omit its query)", src)
		}
	}
}

func TestSetForms(t *testing.T) {
	f, err := ParseFile("s.sql", "SET a.b = 'x;y'; SET c = 1 hour; SET d; SET", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Set{
		{Key: "a.b", Value: "x;y", HasVal: true, Quoted: true},
		{Key: "c", Value: "1 hour", HasVal: true},
		{Key: "d"},
		{},
	}
	for i, w := range want {
		s := *f.Statements[i].(*Set)
		s.Pos = Pos{}
		if s != w {
			t.Errorf("statement %d: %+v, want %+v", i, s, w)
		}
	}
}

func TestParseFileAllGoesOn(t *testing.T) {
	src := "SELECT 1;\nSELEC 2;\nCREATE VIEW v AS SELECT FROM;\nSELECT 3"
	f, errs := ParseFileAll("all.sql", src, nil)
	if len(errs) != 2 || errs[0].Pos.Line != 2 || errs[1].Pos.Line != 3 {
		t.Fatalf("errors %v, want one on line 2 and one on line 3", errs)
	}
	if len(f.Statements) != 2 {
		t.Fatalf("%d statements parsed, want the 2 good ones", len(f.Statements))
	}
	if _, err := ParseFile("all.sql", src, nil); err != errs[0] && err.Error() != errs[0].Error() {
		t.Fatalf("ParseFile gives %v, want the first error", err)
	}
}
