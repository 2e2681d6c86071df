-- A type error, and a call with the wrong number of arguments.
CREATE OR REFRESH MATERIALIZED VIEW days AS
SELECT id, date_add(id, qty) AS due
FROM read_files('data/orders', format => 'json');

CREATE OR REFRESH MATERIALIZED VIEW names AS
SELECT upper(customer, 2) AS name
FROM read_files('data/orders', format => 'json');
