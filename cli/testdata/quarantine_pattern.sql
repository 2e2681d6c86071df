CREATE TEMPORARY VIEW raw_trips_data AS
SELECT * FROM read_files('in', format => 'json', schema => 'trip_id BIGINT, pickup_zip INT, dropoff_zip INT, fare_amount DOUBLE');

CREATE OR REFRESH TABLE trips_data_quarantine(
  -- Option 1 - merge all expectations to have a single name in the pipeline event log
  CONSTRAINT quarantined_row EXPECT (pickup_zip IS NOT NULL OR dropoff_zip IS NOT NULL),
  -- Option 2 - Keep the expectations separate, resulting in multiple entries under different names
  CONSTRAINT invalid_pickup_zip EXPECT (pickup_zip IS NOT NULL),
  CONSTRAINT invalid_dropoff_zip EXPECT (dropoff_zip IS NOT NULL)
)
PARTITIONED BY (is_quarantined)
AS
  SELECT
    *,
    NOT ((pickup_zip IS NOT NULL) and (dropoff_zip IS NOT NULL)) as is_quarantined
  FROM raw_trips_data;

CREATE TEMPORARY VIEW valid_trips_data AS
SELECT * FROM trips_data_quarantine WHERE is_quarantined=FALSE;

CREATE TEMPORARY VIEW invalid_trips_data AS
SELECT * FROM trips_data_quarantine WHERE is_quarantined=TRUE;

CREATE OR REFRESH MATERIALIZED VIEW valid_count AS SELECT count(*) AS n FROM valid_trips_data;
CREATE OR REFRESH MATERIALIZED VIEW invalid_count AS SELECT count(*) AS n FROM invalid_trips_data;
