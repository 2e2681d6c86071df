-- The snapshot example of the AUTO CDC documentation: the source is read
-- whole at each update, and each update's snapshot is applied as SCD type 1
-- and as SCD type 2 (whose versions start and end at the updates that
-- applied them).
CREATE OR REFRESH MATERIALIZED VIEW source
AS SELECT * FROM read_files('data', format => 'json', schema => 'key BIGINT, value STRING');

CREATE OR REFRESH STREAMING TABLE target_scd1;
CREATE FLOW snapshot_scd1 AS AUTO CDC INTO target_scd1 FROM SNAPSHOT source KEYS (key) STORED AS SCD TYPE 1;

CREATE OR REFRESH STREAMING TABLE target_scd2;
CREATE FLOW snapshot_scd2 AS AUTO CDC INTO target_scd2 FROM SNAPSHOT source KEYS (key) STORED AS SCD TYPE 2;
