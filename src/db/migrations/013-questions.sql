-- Issue 16 (point 1): several questions per comparison. Each answer is its own judgment row naming its question;
-- one assignment (one lease, one page, one submit) holds one row per question of the batch. `question_index` 0 is the
-- batch's first question: the row that stands for the comparison as a whole (pair counters, progress, active time,
-- attention checks), so every counter below counts one row per answered comparison, whatever the number of questions.
-- A batch with the single `question` setting has one question, id 'natural'.

-- Triggers on other tables that read judgments are dropped first and made again below (the table is rebuilt).
DROP TRIGGER comparison_tallies_rater_excluded;
DROP TRIGGER comparison_tallies_pair_removed;

CREATE TABLE judgments_rebuilt (
  id INTEGER PRIMARY KEY,
  assignment_id INTEGER NOT NULL REFERENCES assignments(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  question_id TEXT NOT NULL DEFAULT 'natural',   -- the batch's question this answer is to (its `questions[].id`)
  question_index INTEGER NOT NULL DEFAULT 0 CHECK (question_index >= 0),   -- its place on the page; 0 = first
  left_side TEXT NOT NULL CHECK (left_side IN ('a', 'b')),
  choice TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie')),
  winner TEXT NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
  label TEXT NOT NULL,                           -- the condition chosen, or TIE; never a screen side
  reason TEXT,
  is_gold INTEGER NOT NULL DEFAULT 0 CHECK (is_gold IN (0, 1)),
  correct INTEGER CHECK (correct IS NULL OR correct IN (0, 1)),
  shown_at TEXT NOT NULL,
  submitted_at TEXT NOT NULL,
  active_ms INTEGER CHECK (active_ms IS NULL OR active_ms >= 0),
  question_version INTEGER NOT NULL,
  late INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),   -- answered after its lease expired
  UNIQUE (assignment_id, question_id),
  UNIQUE (assignment_id, question_index)
) STRICT;

INSERT INTO judgments_rebuilt (id, assignment_id, batch_id, pair_id, rater_id, question_id, question_index, left_side, choice, winner,
  label, reason, is_gold, correct, shown_at, submitted_at, active_ms, question_version, late)
SELECT id, assignment_id, batch_id, pair_id, rater_id, 'natural', 0, left_side, choice, winner,
  label, reason, is_gold, correct, shown_at, submitted_at, active_ms, question_version, late
FROM judgments;

-- Dropping the table drops its indexes and its own triggers; the implicit delete fires no trigger.
DROP TABLE judgments;
ALTER TABLE judgments_rebuilt RENAME TO judgments;

CREATE INDEX judgments_by_batch ON judgments (batch_id, pair_id);
CREATE INDEX judgments_by_rater ON judgments (rater_id);
-- Counts and the median active time of answered comparisons (first-question rows), read from the index alone.
CREATE INDEX judgments_by_active_time ON judgments (batch_id, is_gold, active_ms) WHERE question_index = 0;
-- One question's answers of a batch, for the per-question analysis and exports.
CREATE INDEX judgments_by_question ON judgments (batch_id, question_id, pair_id);

-- comparison_tallies (migration 006): the console's live win counts, on the first question.
CREATE TRIGGER comparison_tallies_judgment_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0 AND NEW.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = NEW.rater_id) = 0
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a + (NEW.winner = 'a'), wins_b = wins_b + (NEW.winner = 'b'), ties = ties + (NEW.winner = 'tie')
  WHERE comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = NEW.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
END;

CREATE TRIGGER comparison_tallies_judgment_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0 AND OLD.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = OLD.rater_id) = 0
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a - (OLD.winner = 'a'), wins_b = wins_b - (OLD.winner = 'b'), ties = ties - (OLD.winner = 'tie')
  WHERE comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = OLD.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
END;

CREATE TRIGGER comparison_tallies_judgment_changed AFTER UPDATE OF winner, is_gold, pair_id, rater_id, question_index ON judgments
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a - (OLD.winner = 'a'), wins_b = wins_b - (OLD.winner = 'b'), ties = ties - (OLD.winner = 'tie')
  WHERE OLD.question_index = 0 AND OLD.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = OLD.rater_id) = 0
    AND comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = OLD.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
  UPDATE comparison_tallies
  SET wins_a = wins_a + (NEW.winner = 'a'), wins_b = wins_b + (NEW.winner = 'b'), ties = ties + (NEW.winner = 'tie')
  WHERE NEW.question_index = 0 AND NEW.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = NEW.rater_id) = 0
    AND comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = NEW.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
END;

CREATE TRIGGER comparison_tallies_rater_excluded AFTER UPDATE OF excluded ON raters
WHEN OLD.excluded <> NEW.excluded
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a + (1 - 2 * NEW.excluded) * t.a, wins_b = wins_b + (1 - 2 * NEW.excluded) * t.b, ties = ties + (1 - 2 * NEW.excluded) * t.tie
  FROM (SELECT p.comparison_id, sum(j.winner = 'a') AS a, sum(j.winner = 'b') AS b, sum(j.winner = 'tie') AS tie
        FROM judgments j JOIN pairs p ON p.id = j.pair_id
        WHERE j.rater_id = NEW.id AND j.question_index = 0 AND j.is_gold = 0 AND p.kind = 'regular' AND p.removed_at IS NULL
        GROUP BY p.comparison_id) AS t
  WHERE comparison_tallies.comparison_id = t.comparison_id;
END;

CREATE TRIGGER comparison_tallies_pair_removed AFTER UPDATE OF removed_at ON pairs
WHEN NEW.kind = 'regular' AND (OLD.removed_at IS NULL) <> (NEW.removed_at IS NULL)
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a + (CASE WHEN NEW.removed_at IS NULL THEN 1 ELSE -1 END) * t.a,
      wins_b = wins_b + (CASE WHEN NEW.removed_at IS NULL THEN 1 ELSE -1 END) * t.b,
      ties = ties + (CASE WHEN NEW.removed_at IS NULL THEN 1 ELSE -1 END) * t.tie
  FROM (SELECT coalesce(sum(j.winner = 'a'), 0) AS a, coalesce(sum(j.winner = 'b'), 0) AS b, coalesce(sum(j.winner = 'tie'), 0) AS tie
        FROM judgments j JOIN raters r ON r.id = j.rater_id
        WHERE j.batch_id = NEW.batch_id AND j.pair_id = NEW.id AND j.question_index = 0 AND j.is_gold = 0 AND r.excluded = 0) AS t
  WHERE comparison_tallies.comparison_id = NEW.comparison_id;
END;

-- batch_judgment_counts (migration 006): answered comparisons, one per assignment.
CREATE TRIGGER batch_judgment_counts_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0
BEGIN
  UPDATE batch_judgment_counts
  SET judgments = judgments + 1, regular = regular + (NEW.is_gold = 0), timed = timed + (NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL)
  WHERE batch_id = NEW.batch_id;
END;

CREATE TRIGGER batch_judgment_counts_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0
BEGIN
  UPDATE batch_judgment_counts
  SET judgments = judgments - 1, regular = regular - (OLD.is_gold = 0), timed = timed - (OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL)
  WHERE batch_id = OLD.batch_id;
END;

CREATE TRIGGER batch_judgment_counts_changed AFTER UPDATE OF batch_id, is_gold, active_ms, question_index ON judgments
BEGIN
  UPDATE batch_judgment_counts
  SET judgments = judgments - 1, regular = regular - (OLD.is_gold = 0), timed = timed - (OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL)
  WHERE batch_id = OLD.batch_id AND OLD.question_index = 0;
  UPDATE batch_judgment_counts
  SET judgments = judgments + 1, regular = regular + (NEW.is_gold = 0), timed = timed + (NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL)
  WHERE batch_id = NEW.batch_id AND NEW.question_index = 0;
END;

-- raters.regular_active_ms / regular_timed (migration 012): one answered comparison's time, once.
CREATE TRIGGER rater_active_time_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL
BEGIN
  UPDATE raters SET regular_active_ms = regular_active_ms + NEW.active_ms, regular_timed = regular_timed + 1 WHERE id = NEW.rater_id;
END;

CREATE TRIGGER rater_active_time_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0 AND OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL
BEGIN
  UPDATE raters SET regular_active_ms = regular_active_ms - OLD.active_ms, regular_timed = regular_timed - 1 WHERE id = OLD.rater_id;
END;

CREATE TRIGGER rater_active_time_changed AFTER UPDATE OF is_gold, active_ms, rater_id, question_index ON judgments
BEGIN
  UPDATE raters SET regular_active_ms = regular_active_ms - OLD.active_ms, regular_timed = regular_timed - 1
  WHERE id = OLD.rater_id AND OLD.question_index = 0 AND OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL;
  UPDATE raters SET regular_active_ms = regular_active_ms + NEW.active_ms, regular_timed = regular_timed + 1
  WHERE id = NEW.rater_id AND NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL;
END;
