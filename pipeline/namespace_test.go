package pipeline

import (
	"testing"

	"github.com/sluicehq/sluice/sql/syntax"
)

// TestNamespaceNames: a name resolves against the current catalog and
// schema, and is keyed by as much of catalog.schema.name as differs from
// the pipeline's own namespace.
func TestNamespaceNames(t *testing.T) {
	own := namespace{catalog: "main", schema: "sales", ownCatalog: "main", ownSchema: "sales"}
	used := namespace{catalog: "main", schema: "ops", ownCatalog: "main", ownSchema: "sales"}
	bare := namespace{}
	for _, tt := range []struct {
		ns   namespace
		name string
		want string
	}{
		{own, "t", "t"}, {own, "sales.t", "t"}, {own, "SALES.t", "t"}, {own, "main.sales.t", "t"}, {own, "LIVE.t", "t"},
		{own, "ops.t", "ops.t"}, {own, "main.ops.t", "ops.t"}, {own, "other.sales.t", "other.sales.t"},
		{used, "t", "ops.t"}, {used, "sales.t", "t"}, {used, "LIVE.t", "t"}, {used, "x.t", "x.t"},
		{bare, "t", "t"}, {bare, "s.t", "s.t"}, {bare, "c.s.t", "c.s.t"},
		{bare, "a.b.c.d", ""},
	} {
		n, err := syntax.ParseFile("n.sql", "SELECT * FROM "+tt.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		ref := n.Statements[0].(*syntax.QueryStmt).Query.Body.(*syntax.Select).From[0].(*syntax.TableRef).Name
		got, ok := tt.ns.ownName(ref)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%+v: %s is %q (%v), want %q", tt.ns, tt.name, got, ok, tt.want)
		}
	}
}
