-- Forms of Spark 4 that pipelines use: keyword arguments of SUBSTRING and
-- OVERLAY, partitioning clauses, UNION BY NAME, PIVOT, UNPIVOT,
-- TABLESAMPLE, and keys of a column.
CREATE OR REFRESH MATERIALIZED VIEW forms (
  id INT CONSTRAINT forms_pk PRIMARY KEY RELY,
  cust STRING CONSTRAINT cust_fk FOREIGN KEY REFERENCES customers (name) NOT ENFORCED,
  region STRING REFERENCES regions,
  other STRING NOT NULL FOREIGN KEY REFERENCES main.ref.other
)
AS SELECT id, substring(cust FROM 2 FOR 3) AS cust, overlay(region PLACING 'x' FROM 1) AS region, other
FROM orders TABLESAMPLE (10 PERCENT) REPEATABLE (7)
DISTRIBUTE BY region SORT BY id;

CREATE MATERIALIZED VIEW pivoted AS
SELECT * FROM (SELECT region, year, amount FROM orders)
  PIVOT (sum(amount) AS total, count(*) FOR year IN (2023 AS y23, 2024)) AS p
CLUSTER BY region;

CREATE MATERIALIZED VIEW unpivoted AS
SELECT * FROM sales UNPIVOT INCLUDE NULLS ((q1, q2) FOR half IN ((jan, feb) AS first, (jul, aug) AS second))
UNION ALL BY NAME
SELECT * FROM sales TABLESAMPLE (BUCKET 1 OUT OF 4) UNPIVOT (v FOR m IN (jan, feb AS february))
UNION BY NAME
SELECT * FROM sales TABLESAMPLE (5 ROWS) PIVOT (max(v) FOR (a, b) IN ((1, 'x') AS one, (2, 'y')));
