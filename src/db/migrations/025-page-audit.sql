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
