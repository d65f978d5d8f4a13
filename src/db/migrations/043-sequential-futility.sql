-- Futility stopping (issue 44; docs/researcher/sequential-batches.md): a comparison may now stop because its
-- statistic fell inside the futility bound, and each look stores the futility bound it was held to beside the
-- efficacy bound. SQLite cannot change a CHECK in place: comparisons.stop_reason is re-added with the new reason, and
-- sequential_looks is rebuilt with the new decision and the futility_z column.
ALTER TABLE comparisons ADD COLUMN stop_reason_043 TEXT CHECK (stop_reason_043 IS NULL OR stop_reason_043 IN ('efficacy', 'futility', 'final'));
UPDATE comparisons SET stop_reason_043 = stop_reason;
ALTER TABLE comparisons DROP COLUMN stop_reason;
ALTER TABLE comparisons RENAME COLUMN stop_reason_043 TO stop_reason;

CREATE TABLE sequential_looks_043 (
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
  futility_z REAL CHECK (futility_z IS NULL OR futility_z > 0),  -- |z| below it stops for futility; NULL: none at this look
  p_value REAL NOT NULL CHECK (p_value >= 0 AND p_value <= 1),
  z REAL NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('continue', 'efficacy', 'futility', 'final')),
  taken_at TEXT NOT NULL,
  UNIQUE (comparison_id, look),
  CHECK (wins_a + wins_b + ties = completed_pairs)
) STRICT;
INSERT INTO sequential_looks_043 (id, batch_id, comparison_id, look, planned_looks, max_pairs, completed_pairs, ties, wins_a, wins_b,
  information_fraction, alpha, critical_z, nominal_alpha, futility_z, p_value, z, decision, taken_at)
SELECT id, batch_id, comparison_id, look, planned_looks, max_pairs, completed_pairs, ties, wins_a, wins_b,
  information_fraction, alpha, critical_z, nominal_alpha, NULL, p_value, z, decision, taken_at FROM sequential_looks;
DROP TABLE sequential_looks;
ALTER TABLE sequential_looks_043 RENAME TO sequential_looks;
