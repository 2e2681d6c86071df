CREATE OR REFRESH STREAMING TABLE customers_silver;

CREATE FLOW customers_cdc AS AUTO CDC INTO customers_silver
FROM STREAM(customers_cdc_bronze)
KEYS (customer_id)
APPLY AS DELETE WHEN operation = 'DELETE'
APPLY AS TRUNCATE WHEN operation = 'TRUNCATE'
SEQUENCE BY sequence_num
COLUMNS * EXCEPT (operation, sequence_num, _rescued_data)
STORED AS SCD TYPE 2
TRACK HISTORY ON * EXCEPT (updated_at);

-- clauses in another order, every optional form
CREATE FLOW reordered DEPENDS ON (customers_cdc) AS AUTO CDC ONCE INTO customers_silver
FROM stream customers_cdc_bronze
KEYS (tenant, customer_id)
STORED AS SCD TYPE 1
SEQUENCE BY STRUCT(event_ts, sequence_num)
IGNORE NULL UPDATES ON (email, phone)
COLUMNS customer_id, email, phone;

CREATE FLOW ignore_bare AS AUTO CDC INTO t FROM s KEYS (k) IGNORE NULL UPDATES SEQUENCE BY ts;

CREATE FLOW ignore_list AS AUTO CDC INTO t FROM s KEYS (k) IGNORE NULL UPDATES ON a, b SEQUENCE BY ts;

CREATE FLOW ignore_star AS AUTO CDC INTO t FROM s KEYS (k) IGNORE NULL UPDATES ON * EXCEPT (k) SEQUENCE BY ts
TRACK HISTORY ON (a, b);

CREATE FLOW snap AS AUTO CDC INTO dim_products FROM SNAPSHOT products_snapshot KEYS (product_id) STORED AS SCD TYPE 2;

CREATE FLOW snap_stream AS AUTO CDC INTO dim_products FROM SNAPSHOT STREAM(products_snapshot) KEYS (product_id);

-- the older syntax, standalone and inside a flow
APPLY CHANGES INTO LIVE.customers_silver
FROM STREAM(LIVE.customers_cdc_bronze)
KEYS (customer_id)
APPLY AS DELETE WHEN operation = "DELETE"
SEQUENCE BY sequence_num
COLUMNS * EXCEPT (operation, sequence_num)
STORED AS SCD TYPE 1;

CREATE FLOW legacy_in_flow AS APPLY CHANGES INTO customers_silver FROM STREAM(cdc) KEYS (id) SEQUENCE BY ts;

AUTO CDC INTO customers_silver FROM STREAM(cdc) KEYS (id) SEQUENCE BY ts
