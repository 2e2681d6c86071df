CREATE STREAMING TABLE all_orders;

CREATE FLOW backfill_orders
COMMENT 'one-time backfill from the archive'
AS INSERT INTO ONCE all_orders BY NAME
SELECT * FROM read_files('/archive/orders', format => 'parquet');

CREATE FLOW live_orders
DEPENDS ON (backfill_orders)
AS INSERT INTO all_orders BY NAME
SELECT * FROM STREAM(orders_eu);

CREATE FLOW us_orders DEPENDS ON (backfill_orders, live_orders) COMMENT 'US'
AS INSERT INTO all_orders BY NAME SELECT * FROM STREAM(orders_us);

CREATE FLOW single_dep DEPENDS ON backfill_orders AS INSERT INTO LIVE.all_orders SELECT 1 AS x;

CREATE FLOW cte_flow AS INSERT INTO all_orders BY NAME
WITH x AS (SELECT * FROM STREAM orders_apac) SELECT * FROM x;
