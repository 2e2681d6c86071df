-- Codes are numbers in text; a code that is not one fails the flow (ANSI).
CREATE OR REFRESH STREAMING TABLE orders AS
SELECT id,
  CAST(code AS INT) AS code
FROM STREAM read_files('data/orders', format => 'json');
