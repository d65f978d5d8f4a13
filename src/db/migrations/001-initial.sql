-- simarena's data model for the whole platform. Terms follow src/README.md.
-- STRICT tables, invariants as CHECK/UNIQUE/foreign keys; times are ISO-8601 UTC text.

CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

-- Scenario library -----------------------------------------------------------

CREATE TABLE characters (
  id TEXT PRIMARY KEY CHECK (id GLOB '[a-z0-9]*' AND id NOT GLOB '*[^a-z0-9_-]*'),
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL DEFAULT '',
  age INTEGER CHECK (age IS NULL OR age BETWEEN 0 AND 150),
  gender TEXT NOT NULL DEFAULT '',
  pronouns TEXT NOT NULL DEFAULT '',
  occupation TEXT NOT NULL DEFAULT '',
  public_info TEXT NOT NULL DEFAULT '',
  personality_and_values TEXT NOT NULL DEFAULT '',
  decision_making_style TEXT NOT NULL DEFAULT '',
  secret TEXT NOT NULL DEFAULT '',
  big_five TEXT NOT NULL DEFAULT '',
  moral_values TEXT NOT NULL DEFAULT '[]',       -- JSON array of strings
  schwartz_values TEXT NOT NULL DEFAULT '[]',    -- JSON array of strings
  source TEXT NOT NULL DEFAULT 'simarena',
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE scenarios (
  id TEXT PRIMARY KEY CHECK (id GLOB '[a-z0-9]*' AND id NOT GLOB '*[^a-z0-9_-]*'),
  title TEXT NOT NULL,
  category TEXT NOT NULL CHECK (category IN ('cooperative', 'competitive', 'mixed')),
  context TEXT NOT NULL,
  relationship TEXT NOT NULL CHECK (relationship IN ('stranger', 'know_by_name', 'acquaintance', 'friend', 'romantic', 'family')),
  goal_1 TEXT NOT NULL,
  goal_2 TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'simarena',
  created_at TEXT NOT NULL
) STRICT;

-- A cast: the two characters who play a scenario (character 1 has goal_1 and starts).
CREATE TABLE casts (
  id INTEGER PRIMARY KEY,
  scenario_id TEXT NOT NULL REFERENCES scenarios(id) ON DELETE CASCADE,
  character_1_id TEXT NOT NULL REFERENCES characters(id),
  character_2_id TEXT NOT NULL REFERENCES characters(id),
  position INTEGER NOT NULL DEFAULT 0,
  UNIQUE (scenario_id, character_1_id, character_2_id),
  CHECK (character_1_id <> character_2_id)
) STRICT;

-- Generation -----------------------------------------------------------------

CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('generation', 'import', 'demo')),
  state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'paused', 'interrupted', 'complete', 'failed', 'cancelled')),
  endpoint_name TEXT,
  base_url TEXT,
  model TEXT,
  modes TEXT NOT NULL DEFAULT '[]',              -- JSON array of modes
  scenario_selector TEXT NOT NULL DEFAULT 'all',
  samples INTEGER NOT NULL DEFAULT 1 CHECK (samples >= 1),
  temperature REAL,
  max_tokens INTEGER,
  max_turns INTEGER,
  seed INTEGER,
  concurrency INTEGER NOT NULL DEFAULT 4 CHECK (concurrency >= 1),
  response_format TEXT NOT NULL DEFAULT 'json_schema' CHECK (response_format IN ('json_schema', 'json_object')),
  prompt_version TEXT,
  price_prompt_per_mtok REAL,                    -- currency units per million prompt tokens
  price_completion_per_mtok REAL,
  settings TEXT NOT NULL DEFAULT '{}',           -- JSON: every other run option, as given
  simulation_card TEXT,                          -- JSON, written when the run ends
  error TEXT,
  worker_pid INTEGER,
  heartbeat_at TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT
) STRICT;

CREATE TABLE dialogues (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  scenario_id TEXT NOT NULL REFERENCES scenarios(id),
  cast_id INTEGER NOT NULL REFERENCES casts(id),
  sample_index INTEGER NOT NULL DEFAULT 0 CHECK (sample_index >= 0),
  mode TEXT NOT NULL CHECK (mode IN ('SCRIPT', 'AGENTS', 'MINDREADERS')),
  model TEXT NOT NULL,
  origin TEXT NOT NULL CHECK (origin IN ('generated', 'imported', 'demo', 'derived')),
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
  UNIQUE (run_id, cast_id, sample_index, mode)
) STRICT;
CREATE INDEX dialogues_by_sample ON dialogues (scenario_id, cast_id, sample_index);

CREATE TABLE turns (
  id INTEGER PRIMARY KEY,
  dialogue_id INTEGER NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL CHECK (idx >= 0),
  speaker INTEGER NOT NULL CHECK (speaker IN (1, 2)),
  action TEXT NOT NULL CHECK (action IN ('speak', 'non-verbal', 'action', 'none', 'leave')),
  text TEXT NOT NULL DEFAULT '',
  call_id INTEGER REFERENCES llm_calls(id),
  UNIQUE (dialogue_id, idx)
) STRICT;

-- Every model call, stored before its answer is used: the resume key is (dialogue, turn, attempt) + request hash.
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  dialogue_id INTEGER NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
  turn_idx INTEGER NOT NULL,                     -- SCRIPT: 0 (one call writes every turn)
  speaker INTEGER CHECK (speaker IS NULL OR speaker IN (1, 2)),
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  request_hash TEXT NOT NULL,
  request TEXT NOT NULL,                         -- JSON: model, messages, params (never a key)
  response TEXT,                                 -- JSON: the raw answer body
  status TEXT NOT NULL CHECK (status IN ('ok', 'invalid', 'http_error', 'network_error', 'timeout')),
  error TEXT,
  http_status INTEGER,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  latency_ms INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  UNIQUE (dialogue_id, turn_idx, attempt)
) STRICT;
CREATE INDEX llm_calls_by_run ON llm_calls (run_id);

-- Batches and pairs ----------------------------------------------------------

CREATE TABLE batches (
  id INTEGER PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,                -- unguessable; the only batch id a rater's browser sees
  name TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('draft', 'open', 'paused', 'closed')),
  settings TEXT NOT NULL,                        -- JSON validated by src/batches/batch.schema.ts
  question_version INTEGER NOT NULL DEFAULT 1,
  judge_salt TEXT NOT NULL,                      -- for the exported rater pseudonym, per batch
  cloned_from INTEGER REFERENCES batches(id),
  created_by TEXT,
  created_at TEXT NOT NULL,
  opened_at TEXT,
  closed_at TEXT
) STRICT;

CREATE TABLE batch_runs (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  PRIMARY KEY (batch_id, run_id)
) STRICT;

-- A comparison: two conditions (MODE:model); condition_a is `a` everywhere downstream.
CREATE TABLE comparisons (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  condition_a TEXT NOT NULL,
  condition_b TEXT NOT NULL,
  UNIQUE (batch_id, condition_a, condition_b),
  CHECK (condition_a <> condition_b)
) STRICT;

CREATE TABLE pairs (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  comparison_id INTEGER REFERENCES comparisons(id) ON DELETE CASCADE,
  kind TEXT NOT NULL DEFAULT 'regular' CHECK (kind IN ('regular', 'attention', 'onboarding')),
  dialogue_a_id INTEGER NOT NULL REFERENCES dialogues(id),
  dialogue_b_id INTEGER NOT NULL REFERENCES dialogues(id),
  expected TEXT CHECK (expected IS NULL OR expected IN ('a', 'b')),   -- gold answer, named as a dialogue
  scenario_id TEXT NOT NULL REFERENCES scenarios(id),
  cast_id INTEGER NOT NULL REFERENCES casts(id),
  sample_index INTEGER NOT NULL,
  removed_at TEXT,
  removed_reason TEXT,
  -- Counters kept in the same transaction as the judgments they count (see src/rating/).
  accepted INTEGER NOT NULL DEFAULT 0 CHECK (accepted >= 0),
  accepted_left_a INTEGER NOT NULL DEFAULT 0 CHECK (accepted_left_a >= 0),
  UNIQUE (batch_id, dialogue_a_id, dialogue_b_id),
  CHECK (dialogue_a_id <> dialogue_b_id),
  CHECK ((kind = 'regular') = (expected IS NULL))
) STRICT;
CREATE INDEX pairs_by_batch ON pairs (batch_id, kind, accepted);

-- Rating ---------------------------------------------------------------------

CREATE TABLE raters (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  public_id TEXT NOT NULL UNIQUE,                -- opaque; carried in the signed rater token
  provider TEXT NOT NULL CHECK (provider IN ('prolific', 'mturk', 'link', 'preview')),
  participant_id TEXT,                           -- PROLIFIC_PID / workerId / issued id
  study_id TEXT,                                 -- STUDY_ID / hitId
  session_id TEXT,                               -- SESSION_ID / assignmentId
  submit_to TEXT,                                -- MTurk turkSubmitTo
  status TEXT NOT NULL CHECK (status IN ('consent', 'instructions', 'onboarding', 'rating', 'completed', 'screened_out', 'withdrew', 'no_consent')),
  onboarding_correct INTEGER NOT NULL DEFAULT 0,
  onboarding_answered INTEGER NOT NULL DEFAULT 0,
  attention_failures INTEGER NOT NULL DEFAULT 0,
  attention_answered INTEGER NOT NULL DEFAULT 0,
  excluded INTEGER NOT NULL DEFAULT 0 CHECK (excluded IN (0, 1)),
  exclusion_reason TEXT,
  user_agent TEXT,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  finished_at TEXT,
  UNIQUE (batch_id, provider, session_id)
) STRICT;
CREATE INDEX raters_by_participant ON raters (provider, participant_id);

CREATE TABLE assignments (
  id INTEGER PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,                -- opaque token in the rater's form
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  left_side TEXT NOT NULL CHECK (left_side IN ('a', 'b')),   -- which dialogue of the pair is shown on the left
  state TEXT NOT NULL CHECK (state IN ('leased', 'answered', 'expired', 'void')),
  leased_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  UNIQUE (rater_id, pair_id)
) STRICT;
CREATE INDEX assignments_live ON assignments (pair_id, state);

CREATE TABLE judgments (
  id INTEGER PRIMARY KEY,
  assignment_id INTEGER NOT NULL UNIQUE REFERENCES assignments(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  left_side TEXT NOT NULL CHECK (left_side IN ('a', 'b')),
  choice TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie')),
  winner TEXT NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
  label TEXT NOT NULL,                           -- the condition chosen, or TIE; never a screen side
  reason TEXT,
  is_gold INTEGER NOT NULL DEFAULT 0 CHECK (is_gold IN (0, 1)),
  correct INTEGER CHECK (correct IS NULL OR correct IN (0, 1)),
  shown_at TEXT NOT NULL,
  submitted_at TEXT NOT NULL,
  active_ms INTEGER CHECK (active_ms IS NULL OR active_ms >= 0),
  question_version INTEGER NOT NULL,
  late INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1))   -- answered after its lease expired
) STRICT;
CREATE INDEX judgments_by_batch ON judgments (batch_id, pair_id);
CREATE INDEX judgments_by_rater ON judgments (rater_id);

CREATE TABLE content_reports (
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  dialogue_id INTEGER REFERENCES dialogues(id),
  rater_id INTEGER REFERENCES raters(id) ON DELETE SET NULL,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL,
  resolved_at TEXT,
  resolution TEXT
) STRICT;

-- Accounts and audit -----------------------------------------------------------

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'researcher')),
  disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  created_at TEXT NOT NULL,
  password_changed_at TEXT
) STRICT;

CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,               -- sha256 of the secret; the secret is shown once
  prefix TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
) STRICT;

CREATE TABLE sessions (
  sid TEXT PRIMARY KEY,
  data TEXT NOT NULL,
  expires_at INTEGER NOT NULL                    -- epoch milliseconds
) STRICT;
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,                           -- user email, 'cli', 'system'
  action TEXT NOT NULL,
  target_type TEXT,
  target_id TEXT,
  details TEXT NOT NULL DEFAULT '{}'
) STRICT;

-- Cached analysis, invalidated by a version that changes with judgments and exclusions.
CREATE TABLE analysis_cache (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  data_version TEXT NOT NULL,
  result TEXT NOT NULL,
  computed_at TEXT NOT NULL
) STRICT;
