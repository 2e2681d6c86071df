-- A backfill of the history, once; the live files after it (DEPENDS ON).
CREATE OR REFRESH STREAMING TABLE events;

CREATE FLOW backfill AS INSERT INTO ONCE events BY NAME
SELECT id, CAST(amount AS INT) AS amount
FROM read_files('data/history', format => 'json');

CREATE FLOW live DEPENDS ON (backfill) AS INSERT INTO events BY NAME
SELECT id, CAST(amount AS INT) AS amount
FROM STREAM read_files('data/live', format => 'json');

-- The live files again, in a table of their own.
CREATE OR REFRESH STREAMING TABLE live_copy
AS SELECT id, amount FROM STREAM read_files('data/live', format => 'json');
