-- Issue 12 (point 2): a rater's progress from stored counters, not counted on every page. Kept by the triggers below
-- in the same transaction as the judgments and assignments they count, whichever code makes the change. Answered
-- comparisons are counted once each (first-question rows, migration 013), as raterProgress counted them.
ALTER TABLE raters ADD COLUMN judged INTEGER NOT NULL DEFAULT 0 CHECK (judged >= 0);
ALTER TABLE raters ADD COLUMN regular_judged INTEGER NOT NULL DEFAULT 0 CHECK (regular_judged >= 0);
ALTER TABLE raters ADD COLUMN onboarding_judged INTEGER NOT NULL DEFAULT 0 CHECK (onboarding_judged >= 0);
ALTER TABLE raters ADD COLUMN attention_assigned INTEGER NOT NULL DEFAULT 0 CHECK (attention_assigned >= 0);

UPDATE raters SET
  judged = (SELECT count(*) FROM judgments j WHERE j.rater_id = raters.id AND j.question_index = 0),
  regular_judged = (SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.rater_id = raters.id AND j.question_index = 0 AND p.kind = 'regular'),
  onboarding_judged = (SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.rater_id = raters.id AND j.question_index = 0 AND p.kind = 'onboarding'),
  attention_assigned = (SELECT count(*) FROM assignments a JOIN pairs p ON p.id = a.pair_id WHERE a.rater_id = raters.id AND p.kind = 'attention');

CREATE TRIGGER rater_progress_judgment_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0
BEGIN
  UPDATE raters SET judged = judged + 1,
    regular_judged = regular_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'onboarding')
  WHERE id = NEW.rater_id;
END;

CREATE TRIGGER rater_progress_judgment_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0
BEGIN
  UPDATE raters SET judged = judged - 1,
    regular_judged = regular_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'onboarding')
  WHERE id = OLD.rater_id;
END;

CREATE TRIGGER rater_progress_judgment_changed AFTER UPDATE OF rater_id, pair_id, question_index ON judgments
BEGIN
  UPDATE raters SET judged = judged - 1,
    regular_judged = regular_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'onboarding')
  WHERE id = OLD.rater_id AND OLD.question_index = 0;
  UPDATE raters SET judged = judged + 1,
    regular_judged = regular_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'onboarding')
  WHERE id = NEW.rater_id AND NEW.question_index = 0;
END;

CREATE TRIGGER rater_progress_assignment_added AFTER INSERT ON assignments
WHEN (SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'attention'
BEGIN
  UPDATE raters SET attention_assigned = attention_assigned + 1 WHERE id = NEW.rater_id;
END;

CREATE TRIGGER rater_progress_assignment_removed AFTER DELETE ON assignments
WHEN (SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'attention'
BEGIN
  UPDATE raters SET attention_assigned = attention_assigned - 1 WHERE id = OLD.rater_id;
END;

CREATE TRIGGER rater_progress_assignment_changed AFTER UPDATE OF rater_id, pair_id ON assignments
BEGIN
  UPDATE raters SET attention_assigned = attention_assigned - 1
  WHERE id = OLD.rater_id AND (SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'attention';
  UPDATE raters SET attention_assigned = attention_assigned + 1
  WHERE id = NEW.rater_id AND (SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'attention';
END;
