-- Console and API pages that read a whole large table on the request thread (issue 12), found by timing every GET
-- route over a database of 1,000,000 judgments, 90,000 model calls and 48,000 dialogues.

-- GET /api/batches/:id/judgments gives each page's `pagination.total`: counting the batch's judgments took 0.46 s per
-- page at a million (a join of every judgment with its pair and rater), 40–90 ms even from an index alone. The count
-- per batch and question, kept by the triggers below in the same transaction as the rows it counts, whichever code
-- writes them. Read by src/export/export.queries.ts (countBatchJudgments).
CREATE TABLE judgment_question_counts (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  question_id TEXT NOT NULL,
  judgments INTEGER NOT NULL DEFAULT 0 CHECK (judgments >= 0),
  PRIMARY KEY (batch_id, question_id)
) STRICT, WITHOUT ROWID;

INSERT INTO judgment_question_counts (batch_id, question_id, judgments)
SELECT batch_id, question_id, count(*) FROM judgments GROUP BY batch_id, question_id;

CREATE TRIGGER judgment_question_counts_added AFTER INSERT ON judgments
BEGIN
  INSERT INTO judgment_question_counts (batch_id, question_id, judgments) VALUES (NEW.batch_id, NEW.question_id, 1)
  ON CONFLICT (batch_id, question_id) DO UPDATE SET judgments = judgments + 1;
END;

CREATE TRIGGER judgment_question_counts_removed AFTER DELETE ON judgments
BEGIN
  UPDATE judgment_question_counts SET judgments = judgments - 1 WHERE batch_id = OLD.batch_id AND question_id = OLD.question_id;
END;

CREATE TRIGGER judgment_question_counts_changed AFTER UPDATE OF batch_id, question_id ON judgments
WHEN OLD.batch_id IS NOT NEW.batch_id OR OLD.question_id IS NOT NEW.question_id
BEGIN
  UPDATE judgment_question_counts SET judgments = judgments - 1 WHERE batch_id = OLD.batch_id AND question_id = OLD.question_id;
  INSERT INTO judgment_question_counts (batch_id, question_id, judgments) VALUES (NEW.batch_id, NEW.question_id, 1)
  ON CONFLICT (batch_id, question_id) DO UPDATE SET judgments = judgments + 1;
END;

-- The run choices of the batch form and the dialogue browser's run filter (src/console/batch-form.queries.ts) list
-- each run's conditions from its complete dialogues: without an index by run that read every dialogue of every run,
-- 30 ms per listing at 48,000 dialogues (twice on the new-batch page). Covering: the listing reads no table row.
CREATE INDEX dialogues_by_run ON dialogues (run_id, state, origin, mode, model);

-- The batch page, its progress.json (polled while the page is open), the batches list and the API show how many
-- raters a batch has, how many completed and how many are excluded: counting them read every rater of the batch, 14 ms
-- per poll at 50,000 raters. Kept by the triggers below (preview raters, the researchers' own walk-throughs, are not
-- counted, as the pages never counted them). They fire when a rater's status, exclusion, provider or batch changes,
-- not when a rater is merely seen (last_seen_at). Read by src/console/batch-progress.queries.ts.
CREATE TABLE batch_rater_counts (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  raters INTEGER NOT NULL DEFAULT 0 CHECK (raters >= 0),
  completed INTEGER NOT NULL DEFAULT 0 CHECK (completed >= 0),
  excluded INTEGER NOT NULL DEFAULT 0 CHECK (excluded >= 0)
) STRICT;

INSERT INTO batch_rater_counts (batch_id, raters, completed, excluded)
SELECT b.id, count(r.id), coalesce(sum(r.status = 'completed'), 0), coalesce(sum(r.excluded), 0)
FROM batches b LEFT JOIN raters r ON r.batch_id = b.id AND r.provider <> 'preview'
GROUP BY b.id;

CREATE TRIGGER batch_rater_counts_new_batch AFTER INSERT ON batches
BEGIN
  INSERT INTO batch_rater_counts (batch_id) VALUES (NEW.id);
END;

CREATE TRIGGER batch_rater_counts_added AFTER INSERT ON raters
WHEN NEW.provider <> 'preview'
BEGIN
  UPDATE batch_rater_counts SET raters = raters + 1, completed = completed + (NEW.status = 'completed'), excluded = excluded + NEW.excluded
  WHERE batch_id = NEW.batch_id;
END;

CREATE TRIGGER batch_rater_counts_removed AFTER DELETE ON raters
WHEN OLD.provider <> 'preview'
BEGIN
  UPDATE batch_rater_counts SET raters = raters - 1, completed = completed - (OLD.status = 'completed'), excluded = excluded - OLD.excluded
  WHERE batch_id = OLD.batch_id;
END;

CREATE TRIGGER batch_rater_counts_changed AFTER UPDATE OF batch_id, provider, status, excluded ON raters
WHEN OLD.batch_id IS NOT NEW.batch_id OR OLD.provider IS NOT NEW.provider OR OLD.status IS NOT NEW.status OR OLD.excluded IS NOT NEW.excluded
BEGIN
  UPDATE batch_rater_counts SET raters = raters - 1, completed = completed - (OLD.status = 'completed'), excluded = excluded - OLD.excluded
  WHERE batch_id = OLD.batch_id AND OLD.provider <> 'preview';
  UPDATE batch_rater_counts SET raters = raters + 1, completed = completed + (NEW.status = 'completed'), excluded = excluded + NEW.excluded
  WHERE batch_id = NEW.batch_id AND NEW.provider <> 'preview';
END;

-- Raters active now (seen in the last minutes while consenting or rating) are counted among the raters still in
-- progress alone, found by this index; it holds no time, so a rater being seen does not write to it.
CREATE INDEX raters_in_progress ON raters (batch_id) WHERE status IN ('consent', 'instructions', 'onboarding', 'rating') AND provider <> 'preview';

-- The median time per judgment (batch page, progress.json, raters and participants pages) was read by skipping half of
-- the batch's timed judgments in the index judgments_by_active_time: 12 ms per poll at a million. These counts per
-- second of active time (the judgments the median counts: first question, not gold, timed) say which second holds the
-- middle, and the index is entered there. Kept by the triggers below. Read by src/console/batch-progress.queries.ts.
CREATE TABLE active_time_buckets (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  second INTEGER NOT NULL CHECK (second >= 0),   -- active_ms / 1000
  judgments INTEGER NOT NULL DEFAULT 0 CHECK (judgments >= 0),
  PRIMARY KEY (batch_id, second)
) STRICT, WITHOUT ROWID;

INSERT INTO active_time_buckets (batch_id, second, judgments)
SELECT batch_id, active_ms / 1000, count(*) FROM judgments
WHERE question_index = 0 AND is_gold = 0 AND active_ms IS NOT NULL
GROUP BY batch_id, active_ms / 1000;

CREATE TRIGGER active_time_buckets_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL
BEGIN
  INSERT INTO active_time_buckets (batch_id, second, judgments) VALUES (NEW.batch_id, NEW.active_ms / 1000, 1)
  ON CONFLICT (batch_id, second) DO UPDATE SET judgments = judgments + 1;
END;

CREATE TRIGGER active_time_buckets_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0 AND OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL
BEGIN
  UPDATE active_time_buckets SET judgments = judgments - 1 WHERE batch_id = OLD.batch_id AND second = OLD.active_ms / 1000;
END;

CREATE TRIGGER active_time_buckets_changed AFTER UPDATE OF batch_id, question_index, is_gold, active_ms ON judgments
BEGIN
  UPDATE active_time_buckets SET judgments = judgments - 1
  WHERE batch_id = OLD.batch_id AND second = OLD.active_ms / 1000 AND OLD.question_index = 0 AND OLD.is_gold = 0;
  INSERT INTO active_time_buckets (batch_id, second, judgments)
  SELECT NEW.batch_id, NEW.active_ms / 1000, 1 WHERE NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL
  ON CONFLICT (batch_id, second) DO UPDATE SET judgments = judgments + 1;
END;
