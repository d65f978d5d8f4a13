-- Issue 12: the console's raters and participants pages list a batch's raters a page at a time. The listing index
-- lets a page (and the page count) read only index entries up to the page and then its own rows, not every rater of
-- the batch sorted; the removed-pairs index finds the few judgments on removed pairs, which the rater counters
-- (migration 015) count but the analysis leaves out.
CREATE INDEX raters_listed ON raters (batch_id, id) WHERE provider <> 'preview';
CREATE INDEX pairs_removed ON pairs (batch_id, id) WHERE removed_at IS NOT NULL;
-- The participants page counts each payment list over the whole batch: the raters whose list depends on their quality
-- figures (completed, included) are read from this index alone. Only completed raters are in it, so a rater's
-- judgments while they work never update it.
CREATE INDEX raters_completed_included ON raters (batch_id, attention_failures, onboarding_answered, onboarding_correct, finish_reason, regular_judged)
  WHERE provider <> 'preview' AND status = 'completed' AND excluded = 0;
