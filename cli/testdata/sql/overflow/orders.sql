CREATE OR REFRESH STREAMING TABLE orders
AS SELECT * FROM STREAM read_files('data/orders', format => 'json');
