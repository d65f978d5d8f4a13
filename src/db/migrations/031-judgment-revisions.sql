-- Issue 12: the analysis worker reads a batch's judgments in parts, each in a snapshot of its own, and then checks that
-- none of those it read was removed or changed meanwhile (src/analysis/analysis-input.ts); the analysis cache key is
-- made of the same facts (src/analysis/batch-judgments.queries.ts, batchDataVersion). A count and a last id alone do
-- not tell: SQLite gives the ids of deleted last rows to the next ones, so a participant's data erased and as many new
-- judgments added leave both as they were. Removals and changes of a batch's judgments are counted here.
ALTER TABLE batch_judgment_counts ADD COLUMN revisions INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER batch_judgment_revisions_removed AFTER DELETE ON judgments
BEGIN
  UPDATE batch_judgment_counts SET revisions = revisions + 1 WHERE batch_id = OLD.batch_id;
END;

CREATE TRIGGER batch_judgment_revisions_changed AFTER UPDATE ON judgments
BEGIN
  UPDATE batch_judgment_counts SET revisions = revisions + 1 WHERE batch_id IN (OLD.batch_id, NEW.batch_id);
END;
