-- Databricks notebook source
CREATE MATERIALIZED VIEW a AS SELECT ${x}

-- COMMAND ----------

-- MAGIC %sql
-- MAGIC SELECT FROM b
