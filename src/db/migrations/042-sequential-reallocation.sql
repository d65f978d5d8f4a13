-- Reallocation in sequential batches (issue 44; docs/researcher/sequential-batches.md, "Reallocation"). With
-- `stopping.reallocate`, a comparison that stops gives the budget of its pairs not started to the comparisons still
-- open, as new pairs from their unused scenario samples. Each stop's reallocation is recorded, moved or not, with the
-- numbers it was held to; the pairs it added point to it.
CREATE TABLE sequential_reallocations (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  stopped_comparison_id INTEGER NOT NULL UNIQUE REFERENCES comparisons(id) ON DELETE CASCADE,
  stop_reason TEXT NOT NULL,
  freed_pairs INTEGER NOT NULL CHECK (freed_pairs >= 0),
  added_pairs INTEGER NOT NULL CHECK (added_pairs >= 0 AND added_pairs <= freed_pairs),
  -- Why fewer pairs were added than were freed (NULL: all moved, or none freed).
  limited_by TEXT CHECK (limited_by IS NULL OR limited_by IN ('no-open-comparison', 'no-unused-pair', 'raters')),
  -- Raters the batch pays for at most (plannedRaters, or the raters its original pair set needs) and the raters
  -- admitted so far plus the fewest still needed for every open pair after the move.
  budget_raters INTEGER NOT NULL CHECK (budget_raters >= 0),
  raters_after INTEGER NOT NULL CHECK (raters_after >= 0),
  taken_at TEXT NOT NULL
) STRICT;
CREATE INDEX sequential_reallocations_by_batch ON sequential_reallocations (batch_id, id);

ALTER TABLE pairs ADD COLUMN reallocation_id INTEGER REFERENCES sequential_reallocations(id) ON DELETE CASCADE;
