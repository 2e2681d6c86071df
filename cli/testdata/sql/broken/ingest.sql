-- An unknown column, an unknown table, an AUTO CDC flow keyed by a column the source lacks.
CREATE OR REFRESH STREAMING TABLE orders
AS SELECT id, custmer, qty
FROM STREAM read_files('data/orders', format => 'json');

CREATE OR REFRESH MATERIALIZED VIEW totals AS
SELECT customer, sum(qty) AS qty FROM ordrs GROUP BY customer;

CREATE OR REFRESH STREAMING TABLE changes;

APPLY CHANGES INTO changes
FROM STREAM read_files('data/orders', format => 'json')
KEYS (idd)
SEQUENCE BY id;
