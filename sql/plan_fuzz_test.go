package sql

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// FuzzPlan: any query the parser accepts plans or fails with a known code
// and a position, and runs over the test tables without panicking; every
// run error has a known code, and the result has the planned schema.
func FuzzPlan(f *testing.F) {
	for _, tc := range planCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Count(src, "JOIN")+strings.Count(src, ",") > 6 {
			return // cross products of cross products: slow, not interesting
		}
		file, err := syntax.ParseFile("fuzz.sql", src, nil)
		if err != nil || len(file.Statements) != 1 {
			return
		}
		qs, ok := file.Statements[0].(*syntax.QueryStmt)
		if !ok {
			return
		}
		cat := planTables(t)
		p, err := PlanQuery(qs.Query, cat, Session{})
		if err != nil {
			se, ok := err.(*syntax.Error)
			if !ok || domain.CodeMessage(se.Code) == "" || se.Pos.Line < 1 {
				t.Fatalf("%q: planning error without a known code and position: %v", src, err)
			}
			return
		}
		in := make([]*domain.Batch, len(p.Inputs))
		for i, r := range p.Inputs {
			in[i] = cat[r.Name]
		}
		b, err := p.Run(in)
		if err != nil {
			if domain.CodeMessage(domain.CodeOf(err)) == "" {
				t.Fatalf("%q: run error without a known code: %v", src, err)
			}
			return
		}
		if len(b.Columns) != len(p.Schema.Fields) {
			t.Fatalf("%q: %d columns for a schema of %d", src, len(b.Columns), len(p.Schema.Fields))
		}
		for i, c := range b.Columns {
			if k := p.Schema.Fields[i].Type.Kind; c.Kind != k && c.Kind != domain.KindNull {
				t.Fatalf("%q: column %d is %s, the schema says %s", src, i, c.Kind, k)
			}
			if c.Len() != b.Len() {
				t.Fatalf("%q: column %d has %d rows of %d", src, i, c.Len(), b.Len())
			}
		}
	})
}
