-- Every event lands in one streaming table: the history first, in two once
-- backfills that run in parallel, then the live directory, read as a stream
-- only after both backfills finished (DEPENDS ON).

CREATE OR REFRESH STREAMING TABLE events (
  CONSTRAINT known_user EXPECT (user IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT sane_amount EXPECT (amount IS NULL OR amount BETWEEN 0 AND 10000)
)
COMMENT 'every event: history first, then live';

CREATE FLOW events_2024 AS INSERT INTO ONCE events BY NAME
SELECT event_id, user, kind, amount, CAST(ts AS TIMESTAMP) AS ts
FROM read_files('data/events_2024', format => 'json');

CREATE FLOW events_2025 AS INSERT INTO ONCE events BY NAME
SELECT event_id, user, kind, amount, CAST(ts AS TIMESTAMP) AS ts
FROM read_files('data/events_2025', format => 'json');

CREATE FLOW events_live DEPENDS ON (events_2024, events_2025) AS INSERT INTO events BY NAME
SELECT event_id, user, kind, amount, CAST(ts AS TIMESTAMP) AS ts
FROM STREAM read_files('data/live', format => 'json');
