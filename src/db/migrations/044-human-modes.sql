-- simarena-migrate: foreign-keys-off
-- People in the dialogues (issues 52, 53): HUMANS (two people role-play a scenario live), HUMAN_AGENT (a person and an
-- AGENTS-mode model) and HUMAN_SCRIPT (a person writes the whole conversation knowing both sides) are modes like the
-- generated ones; conversations collected on simarena (role-play and writing batches) have origin 'collected' and live
-- in runs of kind 'collection'.
-- SQLite cannot change a CHECK in place. dialogues.mode is in a UNIQUE constraint, so the table is rebuilt by the
-- procedure of https://www.sqlite.org/lang_altertable.html#otheralter (foreign keys off around the migration, checked
-- with foreign_key_check before commit; the marker line above tells src/db/migrate.ts); its indexes and triggers are
-- made again as they were. runs.kind is in no constraint or index, so it is re-added in place as 043 did.
ALTER TABLE runs ADD COLUMN kind_044 TEXT NOT NULL DEFAULT 'generation' CHECK (kind_044 IN ('generation', 'import', 'demo', 'collection'));
UPDATE runs SET kind_044 = kind;
ALTER TABLE runs DROP COLUMN kind;
ALTER TABLE runs RENAME COLUMN kind_044 TO kind;

CREATE TABLE dialogues_044 (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  scenario_id TEXT NOT NULL REFERENCES scenarios(id),
  cast_id INTEGER NOT NULL REFERENCES casts(id),
  sample_index INTEGER NOT NULL DEFAULT 0 CHECK (sample_index >= 0),
  mode TEXT NOT NULL CHECK (mode IN ('SCRIPT', 'AGENTS', 'MINDREADERS', 'HUMANS', 'HUMAN_AGENT', 'HUMAN_SCRIPT')),
  model TEXT NOT NULL,                           -- 'human' for HUMANS and HUMAN_SCRIPT; the agent's model for HUMAN_AGENT
  origin TEXT NOT NULL CHECK (origin IN ('generated', 'imported', 'demo', 'derived', 'collected')),
  -- Hand-written illustrative examples (demo content) are flagged so nobody mistakes them for model output.
  illustrative INTEGER NOT NULL DEFAULT 0 CHECK (illustrative IN (0, 1)),
  derived_from INTEGER REFERENCES dialogues(id),  -- gold/onboarding variants (shuffled or repeated turns)
  state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'complete', 'failed')),
  failure_reason TEXT,
  seed INTEGER,
  prompt_version TEXT,
  end_reason TEXT,                               -- left, max_turns, idle, script
  meta TEXT NOT NULL DEFAULT '{}',               -- JSON: provenance of imports, etc.
  created_at TEXT NOT NULL,
  completed_at TEXT,
  generation INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1),
  words INTEGER CHECK (words IS NULL OR words >= 0),
  UNIQUE (run_id, cast_id, sample_index, mode)
) STRICT;

INSERT INTO dialogues_044 (id, run_id, scenario_id, cast_id, sample_index, mode, model, origin, illustrative, derived_from, state,
  failure_reason, seed, prompt_version, end_reason, meta, created_at, completed_at, generation, words)
SELECT id, run_id, scenario_id, cast_id, sample_index, mode, model, origin, illustrative, derived_from, state,
  failure_reason, seed, prompt_version, end_reason, meta, created_at, completed_at, generation, words
FROM dialogues;

DROP TABLE dialogues;
ALTER TABLE dialogues_044 RENAME TO dialogues;

CREATE INDEX dialogues_by_sample ON dialogues (scenario_id, cast_id, sample_index);
CREATE INDEX dialogues_by_run ON dialogues (run_id, state, origin, mode, model);

CREATE TRIGGER run_totals_dialogue_added AFTER INSERT ON dialogues
BEGIN
  UPDATE run_totals SET dialogues = dialogues + 1, complete = complete + (NEW.state = 'complete'),
    failed = failed + (NEW.state = 'failed'), running = running + (NEW.state IN ('pending', 'running'))
  WHERE run_id = NEW.run_id;
END;

CREATE TRIGGER run_totals_dialogue_removed AFTER DELETE ON dialogues
BEGIN
  UPDATE run_totals SET dialogues = dialogues - 1, complete = complete - (OLD.state = 'complete'),
    failed = failed - (OLD.state = 'failed'), running = running - (OLD.state IN ('pending', 'running'))
  WHERE run_id = OLD.run_id;
END;

CREATE TRIGGER run_totals_dialogue_changed AFTER UPDATE OF state, run_id ON dialogues
WHEN OLD.state IS NOT NEW.state OR OLD.run_id IS NOT NEW.run_id
BEGIN
  UPDATE run_totals SET dialogues = dialogues - 1, complete = complete - (OLD.state = 'complete'),
    failed = failed - (OLD.state = 'failed'), running = running - (OLD.state IN ('pending', 'running'))
  WHERE run_id = OLD.run_id;
  UPDATE run_totals SET dialogues = dialogues + 1, complete = complete + (NEW.state = 'complete'),
    failed = failed + (NEW.state = 'failed'), running = running + (NEW.state IN ('pending', 'running'))
  WHERE run_id = NEW.run_id;
END;
