-- simarena-migrate: foreign-keys-off
-- Issue 50, item 11: subscribing Prolific's webhooks sends requests like any other platform operation, recorded in
-- the ledger before they are sent: creating the workspace's secret ('hook_secret': it replaces any other, "you can
-- only have one active secret per workspace at a time"), the subscription ('hook_subscribe') and its confirmation
-- ('hook_confirm'). SQLite cannot change a CHECK in place: the table is rebuilt by the procedure of
-- https://www.sqlite.org/lang_altertable.html#otheralter (foreign keys off around the migration, checked before
-- commit; the marker line above tells src/db/migrate.ts), with its rows, indexes and triggers as they were. Its
-- triggers fire on DELETE and UPDATE only: DROP TABLE runs neither.
CREATE TABLE platform_operations_057 (
  id INTEGER PRIMARY KEY,
  platform TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
  batch_id INTEGER NOT NULL REFERENCES batches (id),
  kind TEXT NOT NULL CHECK (kind IN (
    'study_create', 'publish', 'pause', 'start', 'stop',
    'approve', 'reject', 'return', 'screen_out',
    'bonus_create', 'bonus_pay', 'bonus',
    'hit_type_create', 'hit_create', 'expire', 'qualification_create', 'qualification_assign',
    'hook_secret', 'hook_subscribe', 'hook_confirm')),
  participant_id TEXT CHECK (participant_id IS NULL OR length(participant_id) BETWEEN 1 AND 128),
  submission_id TEXT CHECK (submission_id IS NULL OR length(submission_id) BETWEEN 1 AND 128),
  assignment_id TEXT CHECK (assignment_id IS NULL OR length(assignment_id) BETWEEN 1 AND 128),
  platform_object_id TEXT CHECK (platform_object_id IS NULL OR length(platform_object_id) BETWEEN 1 AND 128),
  amount_minor INTEGER CHECK (amount_minor IS NULL OR amount_minor >= 0),
  currency TEXT CHECK (currency IS NULL OR currency GLOB '[A-Z][A-Z][A-Z]'),
  idempotency_key TEXT NOT NULL UNIQUE CHECK (length(idempotency_key) BETWEEN 1 AND 256),
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'confirmed', 'failed', 'unknown')),
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  request TEXT NOT NULL CHECK (json_valid(request)),
  answer TEXT CHECK (answer IS NULL OR json_valid(answer)),
  error TEXT CHECK (error IS NULL OR length(error) <= 2000),
  actor TEXT NOT NULL,
  created_at TEXT NOT NULL,
  sent_at TEXT,
  answered_at TEXT,
  CHECK ((amount_minor IS NULL) = (currency IS NULL)),
  CHECK (state = 'pending' OR sent_at IS NOT NULL),
  CHECK (state NOT IN ('confirmed', 'failed') OR answered_at IS NOT NULL)
) STRICT;

INSERT INTO platform_operations_057 (id, platform, batch_id, kind, participant_id, submission_id, assignment_id, platform_object_id, amount_minor,
  currency, idempotency_key, state, attempts, request, answer, error, actor, created_at, sent_at, answered_at)
SELECT id, platform, batch_id, kind, participant_id, submission_id, assignment_id, platform_object_id, amount_minor,
  currency, idempotency_key, state, attempts, request, answer, error, actor, created_at, sent_at, answered_at
FROM platform_operations;

DROP TRIGGER platform_operations_confirmed_final;
DROP TRIGGER platform_operations_kept;
DROP TABLE platform_operations;
ALTER TABLE platform_operations_057 RENAME TO platform_operations;

CREATE INDEX platform_operations_by_batch ON platform_operations (batch_id, platform, kind, state);
CREATE INDEX platform_operations_unconfirmed ON platform_operations (platform, batch_id) WHERE state IN ('pending', 'sent', 'unknown');

CREATE TRIGGER platform_operations_confirmed_final BEFORE UPDATE OF state ON platform_operations
WHEN OLD.state = 'confirmed' AND NEW.state <> 'confirmed'
BEGIN
  SELECT RAISE(ABORT, 'a confirmed platform operation is final');
END;

CREATE TRIGGER platform_operations_kept BEFORE DELETE ON platform_operations
BEGIN
  SELECT RAISE(ABORT, 'platform operations are a ledger: they are never deleted');
END;
