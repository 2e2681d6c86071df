-- What the events say: purchases exported as they arrive (after the live
-- flow, so the export sees history first), and totals per user and month.

CREATE OR REFRESH STREAMING TABLE purchases
COMMENT 'purchases, in arrival order';

CREATE FLOW export DEPENDS ON (events_live) AS INSERT INTO purchases BY NAME
SELECT event_id, user, amount, ts, amount >= ${big_purchase} AS big
FROM STREAM(events)
WHERE kind = 'purchase';

CREATE OR REFRESH MATERIALIZED VIEW monthly
COMMENT 'events and spend per user and month'
AS SELECT user, date_trunc('MONTH', ts) AS month, count(*) AS events,
  count_if(kind = 'purchase') AS purchases, round(sum(amount), 2) AS spent
FROM events
GROUP BY user, date_trunc('MONTH', ts)
ORDER BY month, user;
