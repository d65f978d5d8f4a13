-- Issue 12: what the console's pages read of a batch's stored analysis, stored by the analysis worker beside the report
-- in the same transaction (src/analysis/analysis-worker.ts), so that no page parses the whole report on the request
-- thread. At a million judgments the report is 10–14 MB of JSON, 99.8% of it the per-rater array; parsing it took
-- 54–400 ms of the request thread on the first view of each new result, a stall for every rater in flight.
--
-- page_report: the gzip of the report with each question's per-rater array cut to the raters the analysis page shows
-- (src/analysis/page-report.ts), a few tens of KB. A column of the result's own row: it is replaced with the report it
-- was cut from and never outlives it. NULL for a row stored without it (before this migration, or computed in the
-- server's own process): the pages then read the whole report, as before.
ALTER TABLE analysis_cache ADD COLUMN page_report BLOB;

-- The per-rater figures the raters and participants pages show, one row per rater of the stored report (its first
-- question's raters, by `judge` pseudonym as the pages look them up), under the data version of the report they come
-- from: a page reads the rows of the version it serves, 100 rows of a page through the primary key. The version leads
-- the key after the batch so that the worker writes a new result's rows (50,000 at a million judgments) in small
-- transactions of their own before the one that stores the report, and deletes the old result's after it: raters'
-- writes never wait for one transaction of 100,000 row changes. Rows of a version other than the stored result's are
-- never read.
CREATE TABLE analysis_rater_figures (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  judge TEXT NOT NULL,
  data_version TEXT NOT NULL,  -- analysis_cache.data_version of the report they were taken from
  judgments INTEGER NOT NULL,
  median_seconds REAL,
  majority_agreement REAL,
  left_rate REAL,
  PRIMARY KEY (batch_id, data_version, judge)
) STRICT, WITHOUT ROWID;
