-- Inference with real raters (issue 51; docs/researcher/sequential-batches.md). Each look now records which statistic
-- it used and why it could (the rater-clustered mean pair score, or pair majorities when too few raters took part),
-- the raters it saw, its estimate and standard error, the information it reached (the looks' correlations; apart
-- from the spending fraction once ties, raters or a raised maximum separate them), the observed information of its
-- statistic it was read from, and the alpha it had spent. Looks taken
-- before this migration used pair majorities; their information is their decisive pairs over the comparison's first
-- maximum, the scale the report now reads them on.
ALTER TABLE sequential_looks ADD COLUMN statistic TEXT NOT NULL DEFAULT 'pair-majorities' CHECK (statistic IN ('rater-clustered', 'pair-majorities'));
ALTER TABLE sequential_looks ADD COLUMN statistic_reason TEXT;
ALTER TABLE sequential_looks ADD COLUMN raters INTEGER CHECK (raters IS NULL OR raters >= 0);
ALTER TABLE sequential_looks ADD COLUMN df INTEGER CHECK (df IS NULL OR df >= 1);
ALTER TABLE sequential_looks ADD COLUMN estimate REAL CHECK (estimate IS NULL OR (estimate >= -1 AND estimate <= 1));
ALTER TABLE sequential_looks ADD COLUMN standard_error REAL CHECK (standard_error IS NULL OR standard_error >= 0);
ALTER TABLE sequential_looks ADD COLUMN design_effect REAL CHECK (design_effect IS NULL OR design_effect >= 0);
ALTER TABLE sequential_looks ADD COLUMN information REAL CHECK (information IS NULL OR information > 0);
ALTER TABLE sequential_looks ADD COLUMN observed_information REAL CHECK (observed_information IS NULL OR observed_information >= 0);
ALTER TABLE sequential_looks ADD COLUMN cumulative_alpha REAL CHECK (cumulative_alpha IS NULL OR (cumulative_alpha >= 0 AND cumulative_alpha < 1));
-- 1: the futility bound met the efficacy bound at this interim look, which was then the last and spent all alpha left.
ALTER TABLE sequential_looks ADD COLUMN ends_design INTEGER NOT NULL DEFAULT 0 CHECK (ends_design IN (0, 1));
UPDATE sequential_looks SET information = (wins_a + wins_b) * 1.0 /
  (SELECT f.max_pairs FROM sequential_looks f WHERE f.comparison_id = sequential_looks.comparison_id ORDER BY f.look LIMIT 1)
WHERE wins_a + wins_b > 0;

-- The last judgment stored when a comparison stopped (the one whose look stopped it): the judgments after it are the
-- overrunning the report gives apart. NULL for stops before this migration (their report compares times instead).
ALTER TABLE comparisons ADD COLUMN stopped_after_judgment INTEGER;

-- The look at which a pair first entered its comparison's statistic: after a raised maximum, the pairs of each stage
-- share that stage's fixed weight (src/batches/reallocated-look.ts), and a pair keeps its stage when an exclusion
-- takes it below K and it completes again.
ALTER TABLE pairs ADD COLUMN sequential_look INTEGER CHECK (sequential_look IS NULL OR sequential_look >= 1);

-- A rater excluded (or included again) after looks were taken: the looks taken stand as they were, with that rater's
-- judgments; later looks count the judgments as they then are. One row per comparison the rater's judgments entered.
CREATE TABLE sequential_exclusions (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
  rater_id INTEGER REFERENCES raters(id) ON DELETE SET NULL,
  judge TEXT,
  action TEXT NOT NULL CHECK (action IN ('exclude', 'include')),
  reason TEXT NOT NULL,
  after_look INTEGER NOT NULL CHECK (after_look >= 1),
  judgments_in_looks INTEGER NOT NULL CHECK (judgments_in_looks >= 1),
  taken_at TEXT NOT NULL
) STRICT;
CREATE INDEX sequential_exclusions_by_batch ON sequential_exclusions (batch_id, id);
