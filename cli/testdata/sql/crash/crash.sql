-- Many files, a few per micro-batch; a stream of the table; a view over it.
CREATE OR REFRESH STREAMING TABLE events
AS SELECT id, user, amount
FROM STREAM read_files('data/in', format => 'json', maxFilesPerTrigger => 3);

CREATE OR REFRESH STREAMING TABLE doubled
AS SELECT id, amount * 2 AS amount FROM STREAM(events);

CREATE OR REFRESH MATERIALIZED VIEW per_user AS
SELECT user, count(*) AS events, sum(amount) AS amount FROM events GROUP BY user;
