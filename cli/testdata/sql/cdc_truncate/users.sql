-- The AUTO CDC documentation's SCD type 1 example with a truncate at
-- sequence 3: the rows older than it go, the changes after it stay.
CREATE OR REFRESH STREAMING TABLE users_raw
AS SELECT * FROM STREAM read_files('data', format => 'json', schema => 'userId BIGINT, name STRING, city STRING, operation STRING, sequenceNum BIGINT');

CREATE OR REFRESH STREAMING TABLE target;

CREATE FLOW users_cdc AS AUTO CDC INTO target
FROM stream(users_raw)
KEYS (userId)
APPLY AS DELETE WHEN operation = "DELETE"
APPLY AS TRUNCATE WHEN operation = "TRUNCATE"
SEQUENCE BY sequenceNum
COLUMNS * EXCEPT (operation, sequenceNum)
STORED AS SCD TYPE 1;
