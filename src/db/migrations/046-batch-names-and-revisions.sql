-- Issue 49, "two batches with one name": `batches create --from study.json` run twice made a second batch of the same
-- name, and every command that names a batch by its name then refused it (src/batches/batch-ref.ts). A new batch, or a
-- renamed one, may no longer take a name another batch has (src/batches/batch-name.ts says so in words first; these
-- triggers hold it for every writer). Not a UNIQUE index: databases made before this may already hold such batches,
-- and creating the index would fail the migration on them; renaming them here would break the scripts that name them.
-- Those keep their names (a name-based command lists their ids), and only a change of name is checked.
CREATE INDEX batches_by_name ON batches (name);

CREATE TRIGGER batches_name_taken_insert BEFORE INSERT ON batches
WHEN EXISTS (SELECT 1 FROM batches WHERE name = NEW.name)
BEGIN
  SELECT RAISE(ABORT, 'another batch already has this name');
END;

CREATE TRIGGER batches_name_taken_update BEFORE UPDATE OF name ON batches
WHEN NEW.name IS NOT OLD.name AND EXISTS (SELECT 1 FROM batches WHERE name = NEW.name AND id <> NEW.id)
BEGIN
  SELECT RAISE(ABORT, 'another batch already has this name');
END;

-- Issue 49, "the back button": going back to the comparison just answered and choosing again stored nothing, or
-- landed on the next comparison. A rater may now change the answer they have just given while it can still change
-- (src/rating/revise-judgment.ts). The judgment's rows then hold the new answer (the counters and tallies follow it by
-- their triggers, and migration 031 counts the change for the analysis cache); each answer it replaced is kept here,
-- with when it was given and when it was replaced.
CREATE TABLE judgment_revisions (
  id INTEGER PRIMARY KEY,
  judgment_id INTEGER NOT NULL REFERENCES judgments(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  choice TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie')),
  winner TEXT NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
  label TEXT NOT NULL,
  reason TEXT,
  correct INTEGER CHECK (correct IS NULL OR correct IN (0, 1)),
  answered_at TEXT NOT NULL,                     -- when the replaced answer was given (its judgment's or revision's time)
  revised_at TEXT NOT NULL
) STRICT;
CREATE INDEX judgment_revisions_by_judgment ON judgment_revisions (judgment_id, id);
CREATE INDEX judgment_revisions_by_batch ON judgment_revisions (batch_id);
