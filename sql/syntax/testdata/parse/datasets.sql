-- Datasets in the current syntax, clauses in varied order.
CREATE OR REFRESH STREAMING TABLE raw_events
COMMENT 'raw events, as they land'
TBLPROPERTIES ('quality' = 'bronze', pipelines.reset.allowed = false)
CLUSTER BY (event_date, region)
AS SELECT * FROM STREAM read_files('/data/events', format => 'json');

CREATE STREAMING TABLE IF NOT EXISTS cdc_target;

CREATE OR REFRESH STREAMING TABLE flow_target (
  id BIGINT NOT NULL,
  name STRING COMMENT 'display name'
)
PARTITIONED BY (region)
COMMENT 'written by flows';

CREATE OR REPLACE TEMPORARY STREAMING TABLE scratch AS SELECT 1 AS one;

CREATE OR REFRESH MATERIALIZED VIEW daily_totals
TBLPROPERTIES ('pipelines.autoOptimize.managed' = 'true')
COMMENT 'totals per day'
PARTITIONED BY (day)
AS SELECT day, sum(amount) AS total FROM orders GROUP BY day;

CREATE MATERIALIZED VIEW mv_clustered CLUSTER BY AUTO AS SELECT * FROM orders;

CREATE OR REFRESH PRIVATE MATERIALIZED VIEW helper LOCATION '/tmp/helper' USING delta AS SELECT 1;

CREATE TEMPORARY VIEW recent_orders
COMMENT 'orders of the last week'
AS SELECT * FROM orders WHERE order_date >= current_date() - INTERVAL 7 DAYS;

CREATE VIEW v (a COMMENT 'first', b) TBLPROPERTIES ('x' = 1) AS SELECT 1, 2;

CREATE OR REPLACE VIEW plain_view AS SELECT * FROM orders;
