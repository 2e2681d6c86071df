-- Debezium change events of a PostgreSQL table (a snapshot, an insert,
-- updates, a delete, a Kafka tombstone, and an update that arrives after a
-- later one) replicated with AUTO CDC: from the files read as Debezium
-- events, and from their text taken apart by from_debezium.
CREATE OR REFRESH STREAMING TABLE changes
AS SELECT * FROM STREAM read_files('data', format => 'debezium', schema => 'id BIGINT, name STRING, city STRING, _op STRING, _source_ts TIMESTAMP, _sequence STRING');

CREATE OR REFRESH STREAMING TABLE users;

CREATE FLOW users_cdc AS AUTO CDC INTO users
FROM STREAM(changes)
KEYS (id)
APPLY AS DELETE WHEN _op = 'DELETE'
APPLY AS TRUNCATE WHEN _op = 'TRUNCATE'
SEQUENCE BY _sequence
COLUMNS * EXCEPT (_op, _source_ts, _sequence);

CREATE OR REFRESH STREAMING TABLE lines
AS SELECT * FROM STREAM read_files('data', format => 'text');

CREATE OR REFRESH STREAMING TABLE users_from_text;

CREATE FLOW users_text_cdc AS AUTO CDC INTO users_from_text
FROM (SELECT d.* FROM (SELECT from_debezium(value, 'id BIGINT, name STRING, city STRING') AS d FROM STREAM(lines)) WHERE d IS NOT NULL)
KEYS (id)
APPLY AS DELETE WHEN _op = 'DELETE'
SEQUENCE BY _sequence
COLUMNS * EXCEPT (_op, _source_ts, _sequence)
STORED AS SCD TYPE 2;
