-- Issue 12: the participants page counts every completed rater of a batch on its payment lists, an aggregate over all
-- of them and their stored figures (210 ms a view at 50,000 raters). Those counts change only when a rater is added or
-- removed, or changes status or exclusion (a completed rater's checks, judgments and pseudonym no longer change), when
-- pairs are removed or restored, or with the analysis and the batch's median time. `changes` counts the first kind, so
-- the page can keep its counts while none of these moved (src/console/rater-pages.routes.ts). Kept by the triggers of
-- batch_rater_counts (migration 025), which fire on exactly those rater changes: a few per rater session, none per
-- judgment.
ALTER TABLE batch_rater_counts ADD COLUMN changes INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER batch_rater_counts_added;
CREATE TRIGGER batch_rater_counts_added AFTER INSERT ON raters
WHEN NEW.provider <> 'preview'
BEGIN
  UPDATE batch_rater_counts SET raters = raters + 1, completed = completed + (NEW.status = 'completed'), excluded = excluded + NEW.excluded,
    changes = changes + 1
  WHERE batch_id = NEW.batch_id;
END;

DROP TRIGGER batch_rater_counts_removed;
CREATE TRIGGER batch_rater_counts_removed AFTER DELETE ON raters
WHEN OLD.provider <> 'preview'
BEGIN
  UPDATE batch_rater_counts SET raters = raters - 1, completed = completed - (OLD.status = 'completed'), excluded = excluded - OLD.excluded,
    changes = changes + 1
  WHERE batch_id = OLD.batch_id;
END;

DROP TRIGGER batch_rater_counts_changed;
CREATE TRIGGER batch_rater_counts_changed AFTER UPDATE OF batch_id, provider, status, excluded ON raters
WHEN OLD.batch_id IS NOT NEW.batch_id OR OLD.provider IS NOT NEW.provider OR OLD.status IS NOT NEW.status OR OLD.excluded IS NOT NEW.excluded
BEGIN
  UPDATE batch_rater_counts SET raters = raters - 1, completed = completed - (OLD.status = 'completed'), excluded = excluded - OLD.excluded,
    changes = changes + 1
  WHERE batch_id = OLD.batch_id AND OLD.provider <> 'preview';
  UPDATE batch_rater_counts SET raters = raters + 1, completed = completed + (NEW.status = 'completed'), excluded = excluded + NEW.excluded,
    changes = changes + 1
  WHERE batch_id = NEW.batch_id AND NEW.provider <> 'preview';
END;
