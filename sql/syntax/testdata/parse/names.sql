-- Words that are keywords elsewhere work as names.
SELECT date, window, stream, live, keys, `select`, timestamp, interval, sequence, snapshot, comment, flow, `order`
FROM t;
SELECT window.start, window.end FROM windowed;
SELECT date + 1, year(date), keys[0] FROM live.live;
SELECT * FROM stream;
SELECT * FROM stream WHERE a = 1;
SELECT * FROM stream AS s;
SELECT * FROM keys k JOIN snapshot s ON k.id = s.id;
CREATE MATERIALIZED VIEW window AS SELECT stream FROM live;
SELECT a x, b `the b`, c AS `c c` FROM t tt;
SELECT `a``b` FROM `t``u`;
SELECT 名前, データ FROM 表;
