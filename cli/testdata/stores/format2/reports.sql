-- Orders and spend per country: a join with the customers view and an
-- aggregate, recomputed when orders change.
CREATE OR REFRESH MATERIALIZED VIEW by_country AS
SELECT coalesce(c.country, 'unknown') AS country, count(*) AS orders, sum(o.qty) AS items,
  sum(o.qty * o.price) AS spent
FROM orders o LEFT JOIN customers c ON o.customer = c.name
GROUP BY 1
ORDER BY country;
