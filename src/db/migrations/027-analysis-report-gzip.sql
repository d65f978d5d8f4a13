-- Issue 12: a batch's analysis report is stored gzip-compressed (src/analysis/stored-report.ts). At a million
-- judgments its JSON is 10–14 MB: the worker's transaction writing that row held a rater's BEGIN IMMEDIATE 55–80 ms,
-- and the server's read of it took 66–83 ms of the request thread; gzip (level 1) makes it about 0.8 MB.
-- The same column, typed ANY, holds either form, told apart by its SQLite type: a BLOB is the gzip of the report's
-- JSON (every row written from now on), a TEXT is the JSON as rows were written before (kept and still served: it
-- goes at the batch's next recomputation). One column rather than a second one beside `result`: a row is one report,
-- never two, and no reader can take an empty column for the report. STRICT keeps the column to these two types.
CREATE TABLE analysis_cache_027 (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  data_version TEXT NOT NULL,
  result ANY NOT NULL CHECK (typeof(result) IN ('text', 'blob')),
  computed_at TEXT NOT NULL
) STRICT;
INSERT INTO analysis_cache_027 (batch_id, data_version, result, computed_at) SELECT batch_id, data_version, result, computed_at FROM analysis_cache;
DROP TABLE analysis_cache;
ALTER TABLE analysis_cache_027 RENAME TO analysis_cache;
