-- Issue 43: what the rater's page measured while a comparison was open (public/js/rater.js), one row per answered
-- assignment, checked by the server against its own times and the reason's length (src/rating/answer-signals.ts).
-- A page without JavaScript sends nothing: no row, and its judgments are timed by the server alone (issue 40).
-- `telemetry`: 'plausible' when the page's figures fit what the server measured, 'implausible' when they cannot be
-- true (more typing time than the comparison was open, more characters typed than keys pressed); the figures are kept
-- as sent either way, so a researcher can read them.
CREATE TABLE answer_signals (
  assignment_id INTEGER PRIMARY KEY REFERENCES assignments(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  telemetry TEXT NOT NULL CHECK (telemetry IN ('plausible', 'implausible')),
  problem TEXT,                                  -- why the figures are implausible, in words; null when plausible
  reason_chars INTEGER NOT NULL CHECK (reason_chars >= 0),   -- characters of the reasons as stored (trimmed)
  paste_events INTEGER NOT NULL CHECK (paste_events >= 0),
  pasted_chars INTEGER NOT NULL CHECK (pasted_chars >= 0),
  keystrokes INTEGER NOT NULL CHECK (keystrokes >= 0),
  typing_ms INTEGER NOT NULL CHECK (typing_ms >= 0),         -- from the first to the last key in a reason box
  hidden_ms INTEGER NOT NULL CHECK (hidden_ms >= 0),         -- page hidden or not focused while open
  -- 1: an answer was chosen before Conversation 2 was ever in view on a narrow screen; 0: it was seen first;
  -- null: a wide screen, where both conversations are side by side.
  answered_before_second INTEGER CHECK (answered_before_second IS NULL OR answered_before_second IN (0, 1))
) STRICT;
CREATE INDEX answer_signals_by_batch ON answer_signals (batch_id, rater_id);
