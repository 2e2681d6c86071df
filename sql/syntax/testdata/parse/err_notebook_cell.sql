-- Databricks notebook source
-- MAGIC %md
-- MAGIC # Title

-- COMMAND ----------

CREATE OR REFRESH STREAMING TABLE bronze
AS SELECT * FROM STREAM read_files("/raw", format => "json")

-- COMMAND ----------

CREATE MATERIALIZED VIEW silver AS

-- COMMAND ----------

SELECT 1
