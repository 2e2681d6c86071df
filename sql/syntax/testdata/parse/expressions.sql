SELECT 1, 1L, 2S, 3Y, 1.5, 1.5D, 2.5F, 10BD, 1e10, 1.5E-3, .5, 12345678901234567890;
SELECT 'single', "double", 'it''s', 'it\'s', "say \"hi\"", 'a' 'b' "c", 'tab\there', 'new\nline', 'back\\slash', 'uni\u00e9', 'like\%escaped\_';
SELECT r'raw\nstring', R"raw";
SELECT TRUE, FALSE, NULL, true, null;
SELECT DATE '2024-02-29', TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP_NTZ '2024-01-01', TIMESTAMP_LTZ '2024-01-01', X'CAFE';
SELECT INTERVAL 3 MINUTES, INTERVAL '3' MINUTE, INTERVAL '1 day 2 hours', INTERVAL 1 DAY 2 HOURS 30 MINUTES,
  INTERVAL '1-2' YEAR TO MONTH, INTERVAL '1 10:00:00' DAY TO SECOND, INTERVAL -5 SECONDS, INTERVAL 1 WEEK;
SELECT a.b.c, t.`weird col`, arr[0], m['key'], arr[i + 1].field, f(x).y, s.arr[0]['k'];
SELECT raw:a.b[0], raw:['x y'], raw:a[*].b, raw:`q`.c, payload:items[0].price::double;
SELECT -a, +a, ~a, - -a, -1, a - -1, NOT a, !a;
SELECT a + b * c - d / e % f, a DIV b, (a + b) * c, a || b || c, a & b | c ^ d;
SELECT a = b, a == b, a <=> b, a != b, a <> b, a < b, a <= b, a > b, a >= b;
SELECT a AND b OR c AND NOT d, NOT a = b, (a OR b) AND c;
SELECT CASE WHEN a > 0 THEN 'pos' WHEN a < 0 THEN 'neg' ELSE 'zero' END,
  CASE status WHEN 1 THEN 'one' WHEN 2 THEN 'two' END;
SELECT CAST(a AS INT), CAST(b AS DECIMAL(10, 2)), CAST(c AS ARRAY<STRING>), CAST(d AS MAP<STRING, INT>),
  CAST(e AS STRUCT<x: INT, y: STRING>), try_cast(f AS BIGINT), TRY_CAST(g AS DATE), h::STRING, i::decimal(5,1),
  CAST(j AS array<array<int>>), CAST(k AS TIMESTAMP);
SELECT (1, 2), (a);
SELECT EXTRACT(YEAR FROM ts), TRIM(BOTH 'x' FROM s), TRIM(LEADING FROM s), TRIM(' ' FROM s), trim(s), trim(s, 'x');
SELECT (SELECT max(a) FROM t) AS m;
