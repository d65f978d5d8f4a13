-- Issue 50, item 11: the platform follows its batch. When a batch closes (by itself: a sequential stop and its last
-- hold lapsing; or by hand), is paused, or has every pair full, the server pauses or stops its Prolific study and
-- expires its MTurk HITs; Prolific otherwise keeps sending participants who are told the study is closed. What the
-- server last brought each batch's platform to is kept here, so a check every few seconds sends nothing once the
-- platform is in step, and a restart loses nothing. The requests themselves go through platform_operations (recorded
-- before they are sent, reconciled before anything is sent again).
--
-- target: what the batch asks of the platform: 'active' (open, with room), 'paused', 'stopped' (Prolific) or
-- 'expired' (MTurk). reached_at: when the platform was seen in that state, null while it is not (yet). acted: 1 when
-- the server itself moved the platform there (a study it paused is started again when the batch reopens; one Prolific
-- or a person paused is left alone). problem: why the last try did not reach it (no token in the server's
-- environment, a refusal), shown on the batch page with what to do by hand.
CREATE TABLE platform_follows (
  batch_id INTEGER NOT NULL REFERENCES batches (id),
  platform TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
  target TEXT NOT NULL CHECK (target IN ('active', 'paused', 'stopped', 'expired')),
  why TEXT NOT NULL CHECK (length(why) BETWEEN 1 AND 200),
  reached_at TEXT,
  acted INTEGER NOT NULL DEFAULT 0 CHECK (acted IN (0, 1)),
  problem TEXT CHECK (problem IS NULL OR length(problem) <= 2000),
  checked_at TEXT NOT NULL,
  PRIMARY KEY (batch_id, platform),
  CHECK (reached_at IS NULL OR problem IS NULL)
) STRICT;
