-- The older LIVE forms, still common in real pipelines.
CREATE STREAMING LIVE TABLE bronze_orders
COMMENT "bronze orders"
AS SELECT * FROM cloud_files('/landing/orders', 'json', map('cloudFiles.inferColumnTypes', 'true'));

CREATE OR REFRESH STREAMING LIVE TABLE silver_orders (
  CONSTRAINT valid_id EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW
)
PARTITIONED BY (order_date)
AS SELECT * FROM STREAM(LIVE.bronze_orders);

CREATE TEMPORARY STREAMING LIVE TABLE tmp_stream AS SELECT * FROM STREAM LIVE.bronze_orders;

CREATE LIVE TABLE gold_totals AS SELECT count(*) AS n FROM LIVE.silver_orders;

CREATE OR REFRESH LIVE TABLE gold_refreshed AS SELECT * FROM live.silver_orders;

CREATE OR REFRESH TEMPORARY LIVE TABLE gold_tmp AS SELECT 1;

CREATE INCREMENTAL LIVE TABLE incremental_orders AS SELECT * FROM STREAM(LIVE.bronze_orders);

CREATE LIVE VIEW lv AS SELECT * FROM LIVE.gold_totals;

CREATE OR REPLACE TEMPORARY LIVE VIEW tlv AS SELECT 1;

CREATE TEMPORARY STREAMING LIVE VIEW slv AS SELECT * FROM STREAM(LIVE.bronze_orders);

CREATE STREAMING LIVE VIEW slv2 AS SELECT * FROM STREAM(LIVE.bronze_orders)
