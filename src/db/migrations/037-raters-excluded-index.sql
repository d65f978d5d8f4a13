-- Issue 40: the server checks on every analysis request (the analysis page, the raters and participants pages, the
-- API) whether the stored result is still of the batch's data (src/analysis/background-analysis.ts), and the batch's
-- excluded and screened-out raters are part of that data (batchChangeKey, batchDataVersion). Found through the batch's
-- index alone, that read every rater's row of the batch: 50,000 at a million judgments. This index holds those raters
-- only (usually none or a few), in the order the query lists them.
CREATE INDEX raters_excluded_or_screened_out ON raters (batch_id, id, excluded, status) WHERE excluded = 1 OR status = 'screened_out';
