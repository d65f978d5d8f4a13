-- Issue 12: what the console's pages read of a batch's stored analysis, stored by the analysis worker with each report
-- (src/analysis/analysis-worker.ts), so that no page parses the whole report on the request thread. At a million
-- judgments the report is 10–14 MB of JSON, 99.8% of it the per-rater array; parsing it took 54–400 ms of the request
-- thread on the first view of each new result, a stall for every rater in flight.
--
-- page_report: the gzip of the report with each question's per-rater array cut to the raters the analysis page shows,
-- and without the rater pairs' Cohen kappas no page shows (src/analysis/page-report.ts): 8 KB where the report's gzip
-- is 0.8 MB at a million judgments. Stored in the same transaction as the report, in the result's own row: it is
-- replaced with the report it was cut from and never outlives it. NULL for a row stored without it (before this
-- migration, or computed in the server's own process): the pages then read the whole report, as before.
ALTER TABLE analysis_cache ADD COLUMN page_report BLOB;
-- parts_id: names the result's rater figures below (a random integer the worker draws per result; NULL with page_report
-- NULL). An integer rather than the data version (a text of 100+ characters) in their key: with the version the
-- worker's writes of a million judgments' 50,000 rows took 55 ms per 2,000 rows and 0.95 s in all, and the
-- participants page's join of them 290 ms (scripts/bench/page-parts.ts).
ALTER TABLE analysis_cache ADD COLUMN parts_id INTEGER;

-- The per-rater figures the raters and participants pages show, one row per rater of the stored report (its first
-- question's raters, by `judge` pseudonym as the pages look them up), under the parts_id of the result they come from:
-- a page reads the rows of the result it serves, 100 rows of a page through the primary key. The result leads the key
-- after the batch so that the worker writes a new result's rows in small transactions of their own before the one that
-- stores the report, and deletes the old result's after it: raters' writes never wait for one transaction of 100,000
-- row changes. Rows of a parts_id other than the stored result's are never read.
CREATE TABLE analysis_rater_figures (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  parts_id INTEGER NOT NULL,   -- analysis_cache.parts_id of the result they were taken from
  judge TEXT NOT NULL,
  judgments INTEGER NOT NULL,
  median_seconds REAL,
  majority_agreement REAL,
  left_rate REAL,
  PRIMARY KEY (batch_id, parts_id, judge)
) STRICT, WITHOUT ROWID;
