-- A join and an aggregate: a big value plus its cap overflows bigint.
CREATE OR REFRESH MATERIALIZED VIEW totals AS
SELECT o.id, l.cap,
       o.big + l.cap AS total
FROM orders o JOIN read_files('data/limits', format => 'json') l ON o.id = l.id;
