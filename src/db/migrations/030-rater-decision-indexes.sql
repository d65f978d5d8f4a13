-- Issue 12: the participants page counts a batch's raters on its payment lists; at 50,000 raters (a million
-- judgments) that took 250–330 ms on the request thread each time a new result or a finished rater changed the counts.
--
-- The completed, included raters are joined to their stored figures (analysis_rater_figures, keyed by pseudonym).
-- Walked in the order of the old index, they looked their figures up in random order (130–210 ms); in pseudonym order
-- the lookups read the figures' pages in turn, and the index holds every column the count and the list read. Same
-- rows as before: only completed raters, so a rater's judgments while they work never update it.
DROP INDEX raters_completed_included;
CREATE INDEX raters_completed_included ON raters (batch_id, judge, attention_failures, onboarding_answered, onboarding_correct, finish_reason, regular_judged)
  WHERE provider <> 'preview' AND status = 'completed' AND excluded = 0;

-- Everyone else (working, withdrawn, screened out, excluded), whose list follows from status and exclusion alone: with
-- the index above, the counts read index entries only, not every rater's row (45–65 ms). A rater enters it at entry,
-- moves in it with each status change and leaves it on completion: a few updates per session, none per judgment.
CREATE INDEX raters_not_completed_included ON raters (batch_id, status, excluded)
  WHERE provider <> 'preview' AND NOT (status = 'completed' AND excluded = 0);
