-- Clicks deduplicated within a watermark, across two micro-batches.
CREATE OR REFRESH STREAMING TABLE clicks_raw
AS SELECT *, CAST(ts AS TIMESTAMP) AS event_ts FROM STREAM read_files('data/clicks', format => 'json', maxFilesPerTrigger => 1);

CREATE OR REFRESH STREAMING TABLE clicks
AS SELECT * FROM STREAM(clicks_raw)
  WATERMARK event_ts DELAY OF INTERVAL 5 MINUTES
  DEDUPLICATE ON (session, n);
