-- Issue 51: counts the quality signals need (items 10 and 11).
-- Issue 51 (item 10): an honest rater's figures were found implausible ("more characters typed than keys pressed")
-- when their reason was on the page without being typed in this page view: restored after a reload, sent back by the
-- server after a refused answer, or dictated on a phone (characters that arrive with no key pressed). The page now
-- carries its counts across reloads of the same comparison and says how many characters were already in the reason
-- boxes when it started (`restored_chars`) and how many arrived through the browser's input without a key or a paste
-- (`inserted_chars`: dictation, a phone's suggestions, an input method); neither counts as typed. Null from a page
-- that predates them.
ALTER TABLE answer_signals ADD COLUMN restored_chars INTEGER CHECK (restored_chars IS NULL OR restored_chars >= 0);
ALTER TABLE answer_signals ADD COLUMN inserted_chars INTEGER CHECK (inserted_chars IS NULL OR inserted_chars >= 0);

-- Issue 51 (item 11): "one side" needs at least 5 decisive choices, and counted ties toward them. The stored rater
-- figures the console reads (migration 028) keep the decisive choices with a known side beside the left rate; null in
-- rows written before, which are read under the old count until the batch's analysis is stored again.
ALTER TABLE analysis_rater_figures ADD COLUMN decisive INTEGER CHECK (decisive IS NULL OR decisive >= 0);
