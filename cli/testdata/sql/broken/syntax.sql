-- A syntax error: nothing of this file is declared.
CREATE OR REFRESH MATERIALIZED VIEW first_orders AS
SELEC id FROM orders;
