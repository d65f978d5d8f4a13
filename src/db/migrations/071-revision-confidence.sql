-- Issue 53 with issue 49's revisions (migration 046): a revised which-is-real answer may change its confidence too, so
-- the replaced answer kept in judgment_revisions keeps its confidence (1-5, NULL for none), as judgments does (070).
ALTER TABLE judgment_revisions ADD COLUMN confidence INTEGER CHECK (confidence IS NULL OR confidence BETWEEN 1 AND 5);
