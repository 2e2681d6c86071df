-- Added to a copy of the shop pipeline by the tests of the read commands:
-- a view no order reaches, whose columns come from its empty batches (and
-- whose name is longer than any column width a format could guess); a
-- declared table no order reaches; a view of exactly one row.
CREATE OR REFRESH MATERIALIZED VIEW orders_of_more_than_a_thousand_items AS
SELECT id, customer FROM orders WHERE qty > 1000;

CREATE OR REFRESH STREAMING TABLE big_orders (id BIGINT NOT NULL COMMENT 'the order', note STRING)
COMMENT 'orders of more than a thousand items'
AS SELECT id, customer AS note FROM STREAM orders WHERE qty > 1000;

CREATE OR REFRESH MATERIALIZED VIEW order_count AS SELECT count(*) AS n FROM orders;
