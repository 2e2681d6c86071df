CREATE OR REFRESH MATERIALIZED VIEW totals AS
SELECT count(*) AS events, sum(amount) AS amount FROM events;
