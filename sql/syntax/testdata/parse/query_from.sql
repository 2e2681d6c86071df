SELECT * FROM orders;
SELECT * FROM LIVE.orders;
SELECT * FROM sales.orders;
SELECT * FROM main.sales.orders;
SELECT * FROM `main`.`sales`.`order lines`;
SELECT * FROM STREAM(orders);
SELECT * FROM STREAM (orders);
SELECT * FROM STREAM orders;
SELECT * FROM STREAM(LIVE.orders);
SELECT * FROM STREAM main.sales.orders o;
SELECT * FROM read_files('/data/orders', format => 'csv', header => true, schema => 'id INT, amount DOUBLE', inferSchema => false);
SELECT * FROM STREAM read_files('/data/orders', format => 'text');
SELECT * FROM STREAM(read_files('/data/orders', format => 'parquet')) AS f;
SELECT *, _metadata.file_path, _metadata.file_name, _metadata.file_size, _metadata.file_modification_time, _rescued_data
FROM STREAM read_files('/data/orders', format => 'json');
SELECT * FROM cloud_files('/landing', 'csv', map('header', 'true', 'delimiter', ';'));
SELECT * FROM STREAM cloud_files('/landing', 'json');
SELECT id FROM range(10);
SELECT id FROM range(0, 100, 5) AS r;
SELECT * FROM event_log('pipeline-id') WHERE event_type = 'flow_progress' ORDER BY timestamp DESC LIMIT 100;
SELECT * FROM explode(array(1, 2, 3)) AS e(v);
SELECT id, tag FROM posts LATERAL VIEW explode(tags) t AS tag;
SELECT id, k, v FROM posts LATERAL VIEW OUTER explode(attrs) a AS k, v LATERAL VIEW posexplode(tags) p pos, tag;
SELECT id, explode(tags) AS tag FROM posts;
SELECT posexplode(tags) AS (pos, tag) FROM posts;
SELECT window(event_time, '1 minute') AS w, count(*) AS cnt
FROM STREAM(events) WATERMARK event_time DELAY OF INTERVAL 3 MINUTES
GROUP BY window(event_time, '1 minute');
SELECT * FROM STREAM(events) AS e WATERMARK e.event_time DELAY OF INTERVAL '10' SECONDS;
SELECT * FROM STREAM(events) WATERMARK to_timestamp(ts) AS event_ts DELAY OF INTERVAL 1 HOUR ev;
SELECT * FROM STREAM read_files('/x', format => 'json') WATERMARK ts DELAY OF INTERVAL 5 MINUTES AS f;
SELECT * FROM STREAM(clicks) WATERMARK event_ts DELAY OF INTERVAL 5 MINUTES DEDUPLICATE ON (session_id, click_seq_num);
