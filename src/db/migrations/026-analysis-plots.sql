-- A stored analysis's plots, drawn by the analysis worker from the report it has just computed and stored in the same
-- transaction as the report (src/analysis/analysis-worker.ts), one row per question shown and plot. The console served
-- each plot by drawing it on the request thread: a million judgments' rater-quality plot alone took 115–285 ms, and
-- one view of the analysis page draws five, every time (issue 12). Read by src/analysis/analysis-plots.queries.ts.
CREATE TABLE analysis_plots (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  data_version TEXT NOT NULL,  -- analysis_cache.data_version of the report they were drawn from
  question TEXT NOT NULL,      -- the question's id; '' for a batch of one question
  name TEXT NOT NULL,
  svg TEXT NOT NULL,
  PRIMARY KEY (batch_id, question, name)
) STRICT;
