package syntax

import (
	"fmt"
	"testing"
)

func TestInspect(t *testing.T) {
	f, err := ParseFile("w.sql", `CREATE MATERIALIZED VIEW v (CONSTRAINT c EXPECT (x > 0)) AS
WITH w AS (SELECT a FROM STREAM(src) WATERMARK ts DELAY OF INTERVAL 1 MINUTE)
SELECT sum(b) FILTER (WHERE c) OVER (PARTITION BY d ORDER BY e), transform(arr, y -> y + f)
FROM w JOIN u ON w.a = u.g
WHERE h IN (SELECT i FROM j) AND k:l[m] IS NOT NULL`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	Inspect(f.Statements[0], func(n Node) bool {
		if c, ok := n.(*ColumnRef); ok {
			cols = append(cols, c.String())
		}
		return true
	})
	want := "[x a ts b c d e arr y f w.a u.g h i k m]"
	if got := fmt.Sprint(cols); got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	// returning false skips the children
	n := 0
	Inspect(f.Statements[0], func(n2 Node) bool {
		n++
		_, isQuery := n2.(*Query)
		return !isQuery
	})
	// CREATE, its name and name part, the constraint, its name, x > 0, x
	// and its part, 0, and the query itself, not what is below it
	if n != 10 {
		t.Errorf("visited %d nodes with the query skipped, want 10", n)
	}
}
