-- Codes are numbers in text, cast in a view another file reads.
CREATE TEMPORARY VIEW coded AS
SELECT id,
  CAST(code AS INT) AS code
FROM read_files('data/orders', format => 'json');
