-- Reallocation in sequential batches (issue 44; docs/researcher/sequential-batches.md, "Reallocation"). With
-- `stopping.reallocate`, a comparison that stops gives the judgments it will no longer buy (its pairs' places nobody
-- judged or holds) to the comparisons still open, as new pairs of K judgments from their unused scenario samples.
-- Each stop's reallocation is recorded, moved or not, with the numbers it was held to; the pairs it added point to it.
CREATE TABLE sequential_reallocations (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  stopped_comparison_id INTEGER NOT NULL UNIQUE REFERENCES comparisons(id) ON DELETE CASCADE,
  stop_reason TEXT NOT NULL,
  freed_judgments INTEGER NOT NULL CHECK (freed_judgments >= 0),
  added_pairs INTEGER NOT NULL CHECK (added_pairs >= 0),
  judgments_per_pair INTEGER NOT NULL CHECK (judgments_per_pair >= 1),
  -- Why fewer pairs were added than the freed judgments pay for (NULL: all moved, or too few freed for one pair).
  limited_by TEXT CHECK (limited_by IS NULL OR limited_by IN ('no-open-comparison', 'no-unused-pair', 'raters')),
  -- Raters the batch pays for at most (plannedRaters, or the raters its original pair set needs) and the raters
  -- admitted so far plus the fewest still needed for every open pair after the move.
  budget_raters INTEGER NOT NULL CHECK (budget_raters >= 0),
  raters_after INTEGER NOT NULL CHECK (raters_after >= 0),
  taken_at TEXT NOT NULL,
  CHECK (added_pairs * judgments_per_pair <= freed_judgments)
) STRICT;
CREATE INDEX sequential_reallocations_by_batch ON sequential_reallocations (batch_id, id);

ALTER TABLE pairs ADD COLUMN reallocation_id INTEGER REFERENCES sequential_reallocations(id) ON DELETE CASCADE;
