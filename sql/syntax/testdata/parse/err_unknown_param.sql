SELECT *
FROM ${source_catalog}.sales.${missing.key}
