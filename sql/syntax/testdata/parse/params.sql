-- ${key} in each position; ${not_a_key} in a comment is left alone
CREATE OR REFRESH MATERIALIZED VIEW ${target_name}
COMMENT 'built from ${source_catalog} at ${env}'
AS SELECT account_id, `${env} amount`, col_${env}
FROM ${source_catalog}.${source_schema}.transactions
WHERE region = "${region}" AND amount > ${min_amount} AND ts > '${my.start.date}'
/* ${also_ignored} */;

CREATE STREAMING TABLE t_${env} AS SELECT * FROM STREAM read_files('${landing.path}/orders', format => '${fmt}');

SET pipelines.env = ${env};
SELECT '\${kept as text}' AS literal_dollar;
