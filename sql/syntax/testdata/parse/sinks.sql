-- a Parquet sink and a flow into it
CREATE SINK archive USING parquet OPTIONS (path 'out/archive', compression = 'zstd');

CREATE OR REPLACE SINK IF NOT EXISTS events_out
  COMMENT 'to the events topic'
  USING kafka
  OPTIONS ('kafka.bootstrap.servers' '${env:BROKERS}', topic 'events');

CREATE FLOW to_archive AS INSERT INTO archive BY NAME SELECT * FROM STREAM(orders);
