-- Issue 53: a which-is-real question may ask how sure the rater is, from 1 (a guess) to 5 (certain). NULL for every
-- other answer, and when the rater gave none to an optional confidence. The question's kind and real condition are
-- the batch's settings (batches.settings `questions`), so no other column is needed.
ALTER TABLE judgments ADD COLUMN confidence INTEGER CHECK (confidence IS NULL OR confidence BETWEEN 1 AND 5);
