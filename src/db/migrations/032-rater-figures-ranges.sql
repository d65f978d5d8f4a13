-- Issue 12: each new result of a batch's analysis wrote all of its raters' figures anew (50,000 rows at a million
-- judgments) and then deleted the old result's: some hundred write transactions per result, each of which raters'
-- answers waited for. Between two results only the raters who answered meanwhile (and those of pairs whose majority
-- turned) have other figures, a few hundred to a few thousand. A figure row now serves every result from the one
-- that wrote it up to the one that replaced it, so a new result writes only the figures that changed
-- (src/analysis/rater-figures-plan.ts): a row is of result R when from_parts <= R < to_parts. analysis_cache.parts_id
-- names the stored result, as before; results are numbered in order per batch (analysis_figures_writer below).
-- The old rows are not carried over: the stored results lose their parts and are computed again (data_version below),
-- their whole report served meanwhile, as for a row stored without parts.
DROP TABLE analysis_rater_figures;
CREATE TABLE analysis_rater_figures (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  judge TEXT NOT NULL,
  from_parts INTEGER NOT NULL,  -- the first result these figures are of
  to_parts INTEGER NOT NULL,    -- the result that replaced them; 9007199254740991 while none did
  judgments INTEGER NOT NULL,
  median_seconds REAL,
  majority_agreement REAL,
  left_rate REAL,
  PRIMARY KEY (batch_id, judge, from_parts)
) STRICT, WITHOUT ROWID;

-- Who writes a batch's figures: the last result number drawn, and when the job writing that result's figures last
-- wrote (ms since the epoch; NULL when no job is writing). A worker takes the next number here before it writes,
-- marks each of its transactions here, and stores its result only while the number is still its own: two server
-- processes' workers never write one batch's figures at once, and a job silent for two minutes (it died while
-- writing) is taken over, what it wrote cleared by the next result.
CREATE TABLE analysis_figures_writer (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  last_parts INTEGER NOT NULL,
  written_at INTEGER
) STRICT;

UPDATE analysis_cache SET parts_id = NULL, data_version = 'before migration 032' WHERE parts_id IS NOT NULL;
