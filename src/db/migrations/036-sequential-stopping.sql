-- Group-sequential batches (issue 44; docs/researcher/sequential-batches.md). A comparison whose stopping rule
-- crossed a bound (or whose last look was taken) stops: its pairs not yet complete leave the pool that new leases and
-- promises are drawn from (pairs.stopped_at), while leases and reservations already given are honoured.
ALTER TABLE comparisons ADD COLUMN stopped_at TEXT;
ALTER TABLE comparisons ADD COLUMN stop_reason TEXT CHECK (stop_reason IS NULL OR stop_reason IN ('efficacy', 'final'));
ALTER TABLE pairs ADD COLUMN stopped_at TEXT;

-- Every look taken at a comparison, with what it saw and the bound it was held to, so the decision can be audited and
-- the report can give the sequential p-value and the repeated confidence interval from the looks actually taken.
CREATE TABLE sequential_looks (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
  look INTEGER NOT NULL CHECK (look >= 1),
  planned_looks INTEGER NOT NULL CHECK (planned_looks >= 1),
  max_pairs INTEGER NOT NULL CHECK (max_pairs >= 1),
  completed_pairs INTEGER NOT NULL CHECK (completed_pairs >= 0),
  ties INTEGER NOT NULL CHECK (ties >= 0),
  wins_a INTEGER NOT NULL CHECK (wins_a >= 0),
  wins_b INTEGER NOT NULL CHECK (wins_b >= 0),
  information_fraction REAL NOT NULL CHECK (information_fraction > 0 AND information_fraction <= 1),
  alpha REAL NOT NULL CHECK (alpha > 0 AND alpha < 1),
  critical_z REAL,                                   -- NULL: no bound at this look (rejection impossible)
  nominal_alpha REAL NOT NULL CHECK (nominal_alpha >= 0 AND nominal_alpha <= 1),
  p_value REAL NOT NULL CHECK (p_value >= 0 AND p_value <= 1),
  z REAL NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('continue', 'efficacy', 'final')),
  taken_at TEXT NOT NULL,
  UNIQUE (comparison_id, look),
  CHECK (wins_a + wins_b + ties = completed_pairs)
) STRICT;

-- A comparison's completed pairs are counted when one of its pairs completes (the look schedule), from the index only.
CREATE INDEX pairs_by_comparison ON pairs (comparison_id, accepted) WHERE kind = 'regular' AND removed_at IS NULL;
