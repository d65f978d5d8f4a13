-- Each rater's quality signals (issue 43) as the analysis worker computed them with the rest of the batch's result.
-- The raters and participants pages computed them on the request thread from every judgment of the batch: at a
-- million judgments (50,000 raters) a view held the event loop 5.6 s, and a server on npm start's heap limit ran out
-- of memory on it. The pages now read the rows of the raters they list. One row per rater with judgments the signals
-- count (excluded raters included: the page shows what they did); `signals` is the rater's counts as JSON
-- (src/analysis/quality-signals.ts, RaterSignals). A rater's erasure takes their row with it.
CREATE TABLE analysis_rater_signals (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  signals TEXT NOT NULL CHECK (json_valid(signals)),
  PRIMARY KEY (batch_id, rater_id)
) WITHOUT ROWID;
CREATE INDEX analysis_rater_signals_rater ON analysis_rater_signals (rater_id);
