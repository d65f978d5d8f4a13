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

