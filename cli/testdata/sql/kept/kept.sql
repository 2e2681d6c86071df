-- A table a full refresh must not empty.
CREATE OR REFRESH STREAMING TABLE kept
TBLPROPERTIES ('pipelines.reset.allowed' = 'false')
AS SELECT id FROM STREAM read_files('data', format => 'json');

CREATE OR REFRESH STREAMING TABLE other
AS SELECT id FROM STREAM read_files('data', format => 'json');
