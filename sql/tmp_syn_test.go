package sql

import (
	"testing"

	"github.com/sluicehq/sluice/sql/syntax"
)

func TestTmpSyn(t *testing.T) {
	for _, src := range []string{
		`SELECT substring(cust FROM 2 FOR 2) FROM orders`,
		`SELECT substring(cust FROM 2) FROM orders`,
		`SELECT overlay(cust PLACING 'XX' FROM 2 FOR 1) FROM orders`,
		`SELECT id FROM orders DISTRIBUTE BY region`,
		`SELECT id FROM orders SORT BY id`,
		`SELECT id FROM orders CLUSTER BY id`,
		`SELECT id FROM orders DISTRIBUTE BY region SORT BY id DESC`,
		`SELECT * FROM (SELECT region, amount FROM orders) PIVOT (sum(amount) FOR region IN ('eu' AS eu, 'us' AS us))`,
		`SELECT * FROM (SELECT id, amount, id * 2 AS twice FROM orders) UNPIVOT (val FOR col IN (amount, twice))`,
		`SELECT id FROM orders TABLESAMPLE (50 PERCENT)`,
		`SELECT id FROM orders TABLESAMPLE (2 ROWS)`,
		`SELECT n FROM nums UNION BY NAME SELECT n FROM more`,
		`SELECT n FROM nums UNION ALL BY NAME SELECT n FROM more`,
		`SELECT id, (SELECT country FROM customers c WHERE c.name = o.cust) AS country FROM orders o`,
		`SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.name = o.cust)`,
		`SELECT id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.name = o.cust)`,
		`SELECT o.id, x.c FROM orders o, LATERAL (SELECT o.amount * 2 AS c) x`,
	} {
		if _, err := syntax.ParseFile("q.sql", src, nil); err != nil {
			t.Logf("%s\n   => PARSE %v", src, err)
			continue
		}
		got, err := runQuery(t, src)
		t.Logf("%s\n   => %s %v", src, got, err)
	}
}
