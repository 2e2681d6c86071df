-- Databricks notebook source
-- MAGIC %md
-- MAGIC # Orders pipeline
-- MAGIC Reads the raw orders.

-- COMMAND ----------

CREATE OR REFRESH STREAMING TABLE bronze
AS SELECT * FROM STREAM read_files("/raw", format => "json")

-- COMMAND ----------

%sql
CREATE OR REFRESH MATERIALIZED VIEW silver
AS SELECT * FROM bronze

-- COMMAND ----------

-- MAGIC %python
-- MAGIC print("${not_substituted}")

-- COMMAND ----------

-- MAGIC %sql
-- MAGIC SELECT count(*) FROM silver

-- COMMAND ----------

-- DBTITLE 1,Gold
CREATE MATERIALIZED VIEW gold AS SELECT 1;
CREATE MATERIALIZED VIEW gold2 AS SELECT 2

-- COMMAND ----------

