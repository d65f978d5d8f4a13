-- The batch page's live figures (progress.json, polled while the page is open) counted the batch's attention-check
-- answers and those answered right with one aggregate over every such judgment, on the request thread: at a million
-- judgments with attention checks at a tenth of them, 71–85 ms a poll (scripts/bench/console-pages.ts). The counts are
-- now kept beside the batch's other judgment counters (migration 006), in the same transaction as the answers they
-- count. An attention check is a judgment of a pair of kind 'attention', its first question (question_index 0);
-- record-judgment.ts marks every judgment of a non-regular pair is_gold, which keeps the triggers off regular answers.
ALTER TABLE batch_judgment_counts ADD COLUMN attention_checks INTEGER NOT NULL DEFAULT 0 CHECK (attention_checks >= 0);
ALTER TABLE batch_judgment_counts ADD COLUMN attention_passed INTEGER NOT NULL DEFAULT 0 CHECK (attention_passed >= 0);

UPDATE batch_judgment_counts SET (attention_checks, attention_passed) = (
  SELECT count(*), coalesce(sum(j.correct), 0) FROM pairs p CROSS JOIN judgments j
  WHERE p.batch_id = batch_judgment_counts.batch_id AND p.kind = 'attention' AND j.batch_id = p.batch_id AND j.pair_id = p.id AND j.question_index = 0
);

CREATE TRIGGER batch_attention_counts_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0 AND NEW.is_gold = 1
BEGIN
  UPDATE batch_judgment_counts SET attention_checks = attention_checks + 1, attention_passed = attention_passed + coalesce(NEW.correct, 0)
  WHERE batch_id = NEW.batch_id AND EXISTS (SELECT 1 FROM pairs p WHERE p.id = NEW.pair_id AND p.batch_id = NEW.batch_id AND p.kind = 'attention');
END;

CREATE TRIGGER batch_attention_counts_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0 AND OLD.is_gold = 1
BEGIN
  UPDATE batch_judgment_counts SET attention_checks = attention_checks - 1, attention_passed = attention_passed - coalesce(OLD.correct, 0)
  WHERE batch_id = OLD.batch_id AND EXISTS (SELECT 1 FROM pairs p WHERE p.id = OLD.pair_id AND p.batch_id = OLD.batch_id AND p.kind = 'attention');
END;

CREATE TRIGGER batch_attention_counts_changed AFTER UPDATE OF batch_id, pair_id, question_index, is_gold, correct ON judgments
WHEN (OLD.question_index = 0 AND OLD.is_gold = 1) OR (NEW.question_index = 0 AND NEW.is_gold = 1)
BEGIN
  UPDATE batch_judgment_counts SET attention_checks = attention_checks - 1, attention_passed = attention_passed - coalesce(OLD.correct, 0)
  WHERE batch_id = OLD.batch_id AND OLD.question_index = 0 AND OLD.is_gold = 1
    AND EXISTS (SELECT 1 FROM pairs p WHERE p.id = OLD.pair_id AND p.batch_id = OLD.batch_id AND p.kind = 'attention');
  UPDATE batch_judgment_counts SET attention_checks = attention_checks + 1, attention_passed = attention_passed + coalesce(NEW.correct, 0)
  WHERE batch_id = NEW.batch_id AND NEW.question_index = 0 AND NEW.is_gold = 1
    AND EXISTS (SELECT 1 FROM pairs p WHERE p.id = NEW.pair_id AND p.batch_id = NEW.batch_id AND p.kind = 'attention');
END;
