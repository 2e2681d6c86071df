-- Orders land as JSON files; rows without a customer are dropped, a
-- quantity below the minimum is only counted.
CREATE OR REFRESH STREAMING TABLE orders (
  CONSTRAINT has_customer EXPECT (customer IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT enough_qty EXPECT (qty >= ${min_qty})
)
COMMENT 'every order with a customer'
AS SELECT id, customer, qty, CAST(price AS DECIMAL(10, 2)) AS price, CAST(ts AS TIMESTAMP) AS ts
FROM STREAM read_files('data/orders', format => 'json');

-- Customers, inlined into the queries that read them.
CREATE TEMPORARY VIEW customers AS
SELECT name, upper(country) AS country
FROM read_files('data/customers', format => 'json');
