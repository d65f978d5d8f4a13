-- Issue 41: simarena publishes, watches and pays studies on Prolific and MTurk through their APIs. Money is real: every
-- operation sent to a platform is written here before it is sent and marked when its answer arrives, so a re-run after
-- a crash, a timeout or a 5xx reads the platform's own state for each operation not confirmed before it sends anything
-- again (src/recruiting/platform-operation.ts). No API token is ever written here: `request` is a summary of what was
-- asked, `answer` what the platform said.
--
-- state: pending (recorded, not yet sent) → sent (the request left) → confirmed (the platform did it) | failed (the
-- platform refused it, a 4xx: it was not done) | unknown (no answer: a timeout, a 5xx, a lost connection; the platform's
-- state decides before anything is sent again). A confirmed operation is final.
CREATE TABLE platform_operations (
  id INTEGER PRIMARY KEY,
  platform TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
  batch_id INTEGER NOT NULL REFERENCES batches (id),
  kind TEXT NOT NULL CHECK (kind IN (
    'study_create', 'publish', 'pause', 'start', 'stop',
    'approve', 'reject', 'return', 'screen_out',
    'bonus_create', 'bonus_pay', 'bonus',
    'hit_type_create', 'hit_create', 'expire', 'qualification_create', 'qualification_assign')),
  -- The participant (Prolific participant id, MTurk worker id) of a one-person operation; null for a bulk one, whose
  -- participants are its lines (platform_operation_lines).
  participant_id TEXT CHECK (participant_id IS NULL OR length(participant_id) BETWEEN 1 AND 128),
  -- The platform's objects the operation is about or created: a Prolific submission, an MTurk assignment, and another
  -- (a study, a bulk-bonus batch, a HIT, a HIT type, a qualification type).
  submission_id TEXT CHECK (submission_id IS NULL OR length(submission_id) BETWEEN 1 AND 128),
  assignment_id TEXT CHECK (assignment_id IS NULL OR length(assignment_id) BETWEEN 1 AND 128),
  platform_object_id TEXT CHECK (platform_object_id IS NULL OR length(platform_object_id) BETWEEN 1 AND 128),
  -- Money moved (or promised) by the operation, in the currency's minor unit (pence, cents).
  amount_minor INTEGER CHECK (amount_minor IS NULL OR amount_minor >= 0),
  currency TEXT CHECK (currency IS NULL OR currency GLOB '[A-Z][A-Z][A-Z]'),
  -- What makes the operation the same one when a settle runs again (e.g. prolific:7:approve:<submission id>).
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

CREATE INDEX platform_operations_by_batch ON platform_operations (batch_id, platform, kind, state);
CREATE INDEX platform_operations_unconfirmed ON platform_operations (platform, batch_id) WHERE state IN ('pending', 'sent', 'unknown');

-- A confirmed operation happened on the platform: nothing may make it look undone, and its record stays.
CREATE TRIGGER platform_operations_confirmed_final BEFORE UPDATE OF state ON platform_operations
WHEN OLD.state = 'confirmed' AND NEW.state <> 'confirmed'
BEGIN
  SELECT RAISE(ABORT, 'a confirmed platform operation is final');
END;

CREATE TRIGGER platform_operations_kept BEFORE DELETE ON platform_operations
BEGIN
  SELECT RAISE(ABORT, 'platform operations are a ledger: they are never deleted');
END;

-- The participants of a bulk operation (Prolific's bulk approve of up to a chunk of submissions, a bulk-bonus batch),
-- each with their amount when money moves: who a bulk operation covered, so a re-run leaves them out.
CREATE TABLE platform_operation_lines (
  operation_id INTEGER NOT NULL REFERENCES platform_operations (id),
  participant_id TEXT NOT NULL CHECK (length(participant_id) BETWEEN 1 AND 128),
  submission_id TEXT CHECK (submission_id IS NULL OR length(submission_id) BETWEEN 1 AND 128),
  amount_minor INTEGER CHECK (amount_minor IS NULL OR amount_minor >= 0),
  PRIMARY KEY (operation_id, participant_id)
) STRICT;

CREATE INDEX platform_operation_lines_by_participant ON platform_operation_lines (participant_id);

-- The platform objects a batch is published as: its Prolific study, its MTurk HIT type, HITs and "took part before"
-- qualification. One study per batch on Prolific; a batch may have many HITs.
CREATE TABLE batch_platform_links (
  batch_id INTEGER NOT NULL REFERENCES batches (id),
  platform TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
  kind TEXT NOT NULL CHECK (kind IN ('study', 'hit_type', 'hit', 'qualification')),
  platform_id TEXT NOT NULL CHECK (length(platform_id) BETWEEN 1 AND 128),
  -- MTurk's sandbox (or a Prolific test setup): ids there are not real studies.
  sandbox INTEGER NOT NULL DEFAULT 0 CHECK (sandbox IN (0, 1)),
  created_at TEXT NOT NULL,
  PRIMARY KEY (batch_id, platform, kind, platform_id)
) STRICT;

CREATE UNIQUE INDEX batch_platform_links_one_study ON batch_platform_links (batch_id) WHERE platform = 'prolific' AND kind = 'study';

-- One command at a time sends to a platform for a batch (a settle in the console and one from the CLI at once could
-- otherwise both set up and pay a bonus): the holder's host and process id let a lock left by a killed process be
-- taken over at once; any lock is taken over after an hour.
CREATE TABLE platform_locks (
  batch_id INTEGER NOT NULL REFERENCES batches (id),
  platform TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
  holder TEXT NOT NULL CHECK (length(holder) BETWEEN 1 AND 200),
  host TEXT NOT NULL,
  pid INTEGER NOT NULL CHECK (pid > 0),
  what TEXT NOT NULL,
  acquired_at TEXT NOT NULL,
  PRIMARY KEY (batch_id, platform)
) STRICT;
