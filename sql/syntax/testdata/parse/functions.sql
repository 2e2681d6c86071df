SELECT count(*), count(DISTINCT a), count(ALL a), sum(x) FILTER (WHERE x > 0),
  percentile_cont(0.5) WITHIN GROUP (ORDER BY x), mode() WITHIN GROUP (ORDER BY x DESC),
  first(x) IGNORE NULLS, last(x) RESPECT NULLS, count_if(x > 1)
FROM t;
SELECT transform(arr, x -> x + 1), filter(arr, x -> x IS NOT NULL), aggregate(arr, 0, (acc, x) -> acc + x, acc -> acc * 10),
  exists(arr, (x) -> x > 5), map_filter(m, (k, v) -> v > 0)
FROM t;
SELECT read_files('/x', format => 'json'), named_struct('a', 1, 'b', 2), struct(a AS x, b), struct(a, b),
  array(1, 2), map('k', 'v'), catalog.schema.my_udf(a), current_date(), now()
FROM t;
SELECT sum(amount) OVER (PARTITION BY customer ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running,
  avg(amount) OVER (ORDER BY ts RANGE BETWEEN INTERVAL 1 HOUR PRECEDING AND CURRENT ROW),
  lag(amount, 1) OVER (PARTITION BY customer ORDER BY ts),
  sum(x) OVER (ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING),
  sum(x) OVER (ROWS UNBOUNDED PRECEDING),
  sum(x) OVER (RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING),
  SUM(COUNT(*)) OVER () AS share,
  rank() OVER w2,
  row_number() OVER (w2 ORDER BY ts)
FROM t GROUP BY customer, amount, ts, x
WINDOW w2 AS (PARTITION BY customer);
SELECT datediff(DAY, a, b), date_add(d, 1), timestampdiff(HOUR, a, b) FROM t;
