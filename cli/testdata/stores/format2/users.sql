-- The examples of the AUTO CDC documentation: one source of user changes,
-- applied as SCD type 1, as SCD type 2, and as SCD type 2 tracking history
-- on every column but city.
CREATE OR REFRESH STREAMING TABLE users_raw
AS SELECT * FROM STREAM read_files('data/users', format => 'json', schema => 'userId BIGINT, name STRING, city STRING, operation STRING, sequenceNum BIGINT');

CREATE OR REFRESH STREAMING TABLE target_scd1;

CREATE FLOW users_scd1 AS AUTO CDC INTO target_scd1
FROM stream(users_raw)
KEYS (userId)
APPLY AS DELETE WHEN operation = "DELETE"
SEQUENCE BY sequenceNum
COLUMNS * EXCEPT (operation, sequenceNum)
STORED AS SCD TYPE 1;

CREATE OR REFRESH STREAMING TABLE target_scd2;

CREATE FLOW users_scd2 AS AUTO CDC INTO target_scd2
FROM stream(users_raw)
KEYS (userId)
APPLY AS DELETE WHEN operation = "DELETE"
SEQUENCE BY sequenceNum
COLUMNS * EXCEPT (operation, sequenceNum)
STORED AS SCD TYPE 2;

CREATE OR REFRESH STREAMING TABLE target_scd2_tracked;

APPLY CHANGES INTO LIVE.target_scd2_tracked
FROM STREAM(LIVE.users_raw)
KEYS (userId)
APPLY AS DELETE WHEN operation = "DELETE"
SEQUENCE BY sequenceNum
COLUMNS * EXCEPT (operation, sequenceNum)
STORED AS SCD TYPE 2
TRACK HISTORY ON * EXCEPT (city);
