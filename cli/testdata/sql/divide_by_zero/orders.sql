-- The unit price; a quantity of zero fails the flow.
CREATE OR REFRESH STREAMING TABLE orders AS
SELECT id, amount,
  amount / qty AS unit
FROM STREAM read_files('data/orders', format => 'json');
