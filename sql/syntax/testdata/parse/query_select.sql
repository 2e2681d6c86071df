WITH recent AS (SELECT * FROM orders WHERE ts > '2024-01-01'),
     totals (customer, total) AS (SELECT customer_id, sum(amount) FROM recent GROUP BY 1)
SELECT DISTINCT t.customer, t.total
FROM totals t
WHERE t.total > (SELECT avg(total) FROM totals)
ORDER BY t.total DESC NULLS LAST, 1 ASC NULLS FIRST
LIMIT 10 OFFSET 5;

SELECT ALL a, b FROM t;

SELECT a, count(*) AS n
FROM t
GROUP BY ALL
HAVING count(*) > 1;

SELECT region, product, sum(x) FROM sales GROUP BY ROLLUP(region, product);

SELECT region, sum(x) FROM sales GROUP BY region, product WITH CUBE;

SELECT region, sum(x) FROM sales GROUP BY GROUPING SETS ((region, product), (region), ());

SELECT a, row_number() OVER w AS rn
FROM t
QUALIFY rn = 1
WINDOW w AS (PARTITION BY a ORDER BY ts DESC);

SELECT a FROM t WINDOW w AS (PARTITION BY a) QUALIFY row_number() OVER w = 1;

SELECT * FROM a
INNER JOIN b ON a.id = b.id
LEFT JOIN c ON a.id = c.id
LEFT OUTER JOIN d USING (id)
RIGHT JOIN e ON true
RIGHT OUTER JOIN f ON a.id = f.id
FULL JOIN g ON a.id = g.id
FULL OUTER JOIN h ON a.id = h.id
CROSS JOIN i
LEFT SEMI JOIN j ON a.id = j.id
LEFT ANTI JOIN k ON a.id = k.id
SEMI JOIN l ON a.id = l.id
ANTI JOIN m ON a.id = m.id
NATURAL JOIN n
JOIN o USING (id, ts);

SELECT * FROM a, b WHERE a.id = b.id;

SELECT * FROM (a JOIN b ON a.id = b.id) ab;

SELECT a FROM t1 UNION SELECT a FROM t2 UNION ALL SELECT a FROM t3;

SELECT a FROM t1 UNION DISTINCT SELECT a FROM t2 EXCEPT SELECT a FROM t3 INTERSECT SELECT a FROM t4;

SELECT a FROM t1 EXCEPT ALL SELECT a FROM t2 MINUS SELECT a FROM t3 INTERSECT ALL SELECT a FROM t4;

(SELECT a FROM t1) UNION (SELECT a FROM t2 ORDER BY a LIMIT 1) ORDER BY a;

SELECT * FROM t1 EXCEPT (SELECT * FROM t2);

SELECT * EXCEPT (password, ssn) FROM users;

SELECT u.* EXCEPT (u.password), o.* FROM users u JOIN orders o ON u.id = o.user_id;

SELECT s.* FROM (SELECT a, b FROM t) AS s (x, y);

SELECT * FROM (SELECT a FROM t) sub WHERE a IN (SELECT a FROM u) AND EXISTS (SELECT 1 FROM v WHERE v.a = sub.a) AND NOT EXISTS (SELECT 1 FROM w);

SELECT a FROM t WHERE a NOT IN (SELECT a FROM u);

SELECT * FROM t, LATERAL (SELECT * FROM u WHERE u.id = t.id) x;

SELECT 1 + 1 AS two;

VALUES (1, 'a'), (2, 'b');

SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(id, name);

SELECT * FROM t LIMIT ALL;
