package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// FuzzLoadSQL: any text loads or gives problems, each with a known code,
// and never panics; a pipeline that loads without problems validates or
// gives coded problems too.
func FuzzLoadSQL(f *testing.F) {
	for _, s := range []string{
		"CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('in', format => 'json');",
		"CREATE MATERIALIZED VIEW m AS SELECT id, count(*) FROM t GROUP BY id; CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('in');",
		"CREATE TEMPORARY VIEW v AS SELECT * FROM v;",
		"CREATE STREAMING TABLE t (id BIGINT, d DATE GENERATED ALWAYS AS (CAST(id AS DATE)), CONSTRAINT c EXPECT (id > 0) ON VIOLATION DROP ROW);",
		"CREATE FLOW f DEPENDS ON (g) AS INSERT INTO ONCE t BY NAME SELECT 1 AS id; CREATE STREAMING TABLE t;",
		"SET spark.sql.session.timeZone = 'Mars/Base'; CREATE MATERIALIZED VIEW m AS SELECT current_timestamp() AS now;",
		"CREATE STREAMING TABLE a AS SELECT * FROM STREAM(b); CREATE STREAMING TABLE b AS SELECT * FROM STREAM(a);",
		"CREATE MATERIALIZED VIEW m AS SELECT * FROM read_files('in', format => 'csv', header => true, schema => 'id BIGINT, x STRING');",
		"APPLY CHANGES INTO t FROM STREAM(s) KEYS (id) SEQUENCE BY ts;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "in"), "a.json", `{"id": 1, "name": "a"}`+"\n")
		p := New("fuzz")
		problems := p.LoadSQL([]SQLFile{{Path: "f.sql", Text: src}}, SQLOptions{Dir: dir})
		check := func(ps domain.Problems) {
			for _, e := range ps {
				if domain.CodeMessage(e.Code) == "" {
					t.Fatalf("%q: a problem without a known code: %v", src, e)
				}
			}
		}
		check(problems)
		if len(problems) == 0 {
			check(p.Validate())
		}
	})
}
