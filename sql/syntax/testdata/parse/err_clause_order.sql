CREATE OR REFRESH STREAMING TABLE t
COMMENT 'comment before the column list'
(id INT)
AS SELECT 1;
