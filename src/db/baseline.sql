-- simarena schema baseline: migration 032 (032-rater-figures-ranges)
-- A new database is created from this file, then takes the numbered migrations after it; a database at an earlier
-- version upgrades through the numbered migrations. Written by scripts/db/write-baseline.ts from those migrations:
-- do not edit by hand (test/db/baseline.test.ts compares both ways).

CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

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

CREATE TABLE casts (
  id INTEGER PRIMARY KEY,
  scenario_id TEXT NOT NULL REFERENCES scenarios(id) ON DELETE CASCADE,
  character_1_id TEXT NOT NULL REFERENCES characters(id),
  character_2_id TEXT NOT NULL REFERENCES characters(id),
  position INTEGER NOT NULL DEFAULT 0,
  UNIQUE (scenario_id, character_1_id, character_2_id),
  CHECK (character_1_id <> character_2_id)
) STRICT;

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
  completed_at TEXT, generation INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1), words INTEGER CHECK (words IS NULL OR words >= 0),
  UNIQUE (run_id, cast_id, sample_index, mode)
) STRICT;

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
  created_at TEXT NOT NULL, generation INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1), provider_batch_id TEXT,
  UNIQUE (dialogue_id, turn_idx, attempt)
) STRICT;

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
  accepted_left_a INTEGER NOT NULL DEFAULT 0 CHECK (accepted_left_a >= 0), leased INTEGER NOT NULL DEFAULT 0 CHECK (leased >= 0), leased_left_a INTEGER NOT NULL DEFAULT 0 CHECK (leased_left_a >= 0), reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  UNIQUE (batch_id, dialogue_a_id, dialogue_b_id),
  CHECK (dialogue_a_id <> dialogue_b_id),
  CHECK ((kind = 'regular') = (expected IS NULL))
) STRICT;

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
  finished_at TEXT, person_key TEXT, address_hash TEXT, promised INTEGER CHECK (promised IS NULL OR promised >= 0), finish_reason TEXT CHECK (finish_reason IS NULL OR finish_reason IN ('cap', 'exhausted', 'closed', 'paused')), status_before_exclusion TEXT
  CHECK (status_before_exclusion IS NULL OR status_before_exclusion IN ('consent', 'instructions', 'onboarding', 'rating')), regular_active_ms INTEGER NOT NULL DEFAULT 0, regular_timed INTEGER NOT NULL DEFAULT 0, judged INTEGER NOT NULL DEFAULT 0 CHECK (judged >= 0), regular_judged INTEGER NOT NULL DEFAULT 0 CHECK (regular_judged >= 0), onboarding_judged INTEGER NOT NULL DEFAULT 0 CHECK (onboarding_judged >= 0), attention_assigned INTEGER NOT NULL DEFAULT 0 CHECK (attention_assigned >= 0), judge TEXT,
  UNIQUE (batch_id, provider, session_id)
) STRICT;

CREATE TABLE assignments (
  id INTEGER PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,                -- opaque token in the rater's form
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  left_side TEXT NOT NULL CHECK (left_side IN ('a', 'b')),   -- which dialogue of the pair is shown on the left
  state TEXT NOT NULL CHECK (state IN ('leased', 'answered', 'expired', 'void')),
  leased_at TEXT NOT NULL,
  expires_at TEXT NOT NULL, viewed_at TEXT,
  UNIQUE (rater_id, pair_id)
) STRICT;

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

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'researcher')),
  disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  created_at TEXT NOT NULL,
  password_changed_at TEXT
, session_version INTEGER NOT NULL DEFAULT 1 CHECK (session_version >= 1)) STRICT;

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

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,                           -- user email, 'cli', 'system'
  action TEXT NOT NULL,
  target_type TEXT,
  target_id TEXT,
  details TEXT NOT NULL DEFAULT '{}'
) STRICT;

CREATE TABLE rater_sessions (
  id INTEGER PRIMARY KEY,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  session_id TEXT NOT NULL,
  study_id TEXT,
  submit_to TEXT,
  started_at TEXT NOT NULL,
  -- Where the rater stood when this session began: an MTurk HIT of `comparisonsPerHit` counts from here.
  judged_at_start INTEGER NOT NULL DEFAULT 0,
  regular_at_start INTEGER NOT NULL DEFAULT 0,
  UNIQUE (rater_id, session_id)
) STRICT;

CREATE TABLE pair_reservations (
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (rater_id, pair_id)
) STRICT;

CREATE TABLE library_loads (
  kind TEXT NOT NULL CHECK (kind IN ('scenario', 'character')),
  id TEXT NOT NULL,
  loaded_at TEXT NOT NULL,
  PRIMARY KEY (kind, id)
) STRICT;

CREATE TABLE character_aliases (
  alias TEXT PRIMARY KEY,
  character_id TEXT NOT NULL REFERENCES characters(id) ON DELETE CASCADE,
  source TEXT NOT NULL DEFAULT 'sotopia'
) STRICT;

CREATE TABLE scenario_aliases (
  alias TEXT PRIMARY KEY,
  scenario_id TEXT NOT NULL REFERENCES scenarios(id) ON DELETE CASCADE,
  source TEXT NOT NULL DEFAULT 'sotopia'
) STRICT;

CREATE TABLE login_failures (
  key TEXT PRIMARY KEY,
  failures INTEGER NOT NULL CHECK (failures >= 0),
  last_failure_at INTEGER NOT NULL,              -- epoch milliseconds
  blocked_until INTEGER NOT NULL                 -- epoch milliseconds; 0 when not blocked
) STRICT;

CREATE TABLE comparison_tallies (
  comparison_id INTEGER PRIMARY KEY REFERENCES comparisons(id) ON DELETE CASCADE,
  wins_a INTEGER NOT NULL DEFAULT 0 CHECK (wins_a >= 0),
  wins_b INTEGER NOT NULL DEFAULT 0 CHECK (wins_b >= 0),
  ties INTEGER NOT NULL DEFAULT 0 CHECK (ties >= 0)
) STRICT;

CREATE TABLE batch_judgment_counts (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  judgments INTEGER NOT NULL DEFAULT 0 CHECK (judgments >= 0),
  regular INTEGER NOT NULL DEFAULT 0 CHECK (regular >= 0),
  timed INTEGER NOT NULL DEFAULT 0 CHECK (timed >= 0)
, revisions INTEGER NOT NULL DEFAULT 0) STRICT;

CREATE TABLE scenario_facts (
  scenario_id TEXT NOT NULL REFERENCES scenarios(id) ON DELETE CASCADE,
  position INTEGER NOT NULL CHECK (position >= 0),
  owner INTEGER NOT NULL CHECK (owner IN (1, 2)),
  kind TEXT NOT NULL CHECK (kind IN ('mutual_friend', 'friend', 'target_price', 'reservation_price', 'other')),
  value TEXT NOT NULL CHECK (value <> ''),
  aliases TEXT NOT NULL DEFAULT '[]',            -- JSON array of strings
  PRIMARY KEY (scenario_id, position)
) STRICT;

CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('episode', 'pairwise')),
  run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,
  batch_id INTEGER REFERENCES batches(id) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'paused', 'complete', 'failed')),
  judge_model TEXT NOT NULL,
  endpoint_name TEXT NOT NULL,
  base_url TEXT NOT NULL,
  temperature REAL NOT NULL,
  prompt_version TEXT NOT NULL,
  prompt_hash TEXT NOT NULL,
  settings TEXT NOT NULL DEFAULT '{}',           -- JSON: concurrency, timeout, retry limits, response format
  provider_batch_id TEXT,                        -- Batch API: the batch submitted, polled again on resume
  provider_input_file_id TEXT,
  error TEXT,
  worker_pid INTEGER,                            -- the process running it, with its heartbeat (as for runs)
  heartbeat_at TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  CHECK ((kind = 'episode' AND run_id IS NOT NULL AND batch_id IS NULL) OR (kind = 'pairwise' AND batch_id IS NOT NULL AND run_id IS NULL))
) STRICT;

CREATE TABLE evaluation_calls (
  id INTEGER PRIMARY KEY,
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  item TEXT NOT NULL,                            -- 'dialogue:<id>' or 'pair:<id>:<a|b shown first>'
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  via TEXT NOT NULL DEFAULT 'chat' CHECK (via IN ('chat', 'batch_api')),
  provider_batch_id TEXT,
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
  UNIQUE (evaluation_id, item, attempt)
) STRICT;

CREATE TABLE episode_scores (
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  dialogue_id INTEGER NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
  speaker INTEGER NOT NULL CHECK (speaker IN (1, 2)),
  dimension TEXT NOT NULL CHECK (dimension IN ('believability', 'relationship', 'knowledge', 'secret', 'social_rules', 'financial_and_material_benefits', 'goal')),
  score INTEGER NOT NULL,
  reasoning TEXT NOT NULL,
  call_id INTEGER NOT NULL REFERENCES evaluation_calls(id),
  PRIMARY KEY (evaluation_id, dialogue_id, speaker, dimension),
  CHECK (
    (dimension IN ('believability', 'knowledge', 'goal') AND score BETWEEN 0 AND 10) OR
    (dimension IN ('relationship', 'financial_and_material_benefits') AND score BETWEEN -5 AND 5) OR
    (dimension IN ('secret', 'social_rules') AND score BETWEEN -10 AND 0)
  )
) STRICT;

CREATE TABLE episode_deals (
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  dialogue_id INTEGER NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
  reached INTEGER NOT NULL CHECK (reached IN (0, 1)),
  price REAL,
  call_id INTEGER NOT NULL REFERENCES evaluation_calls(id),
  PRIMARY KEY (evaluation_id, dialogue_id)
) STRICT;

CREATE TABLE llm_judgments (
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  left_side TEXT NOT NULL CHECK (left_side IN ('a', 'b')),   -- which dialogue was shown first
  choice TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie')),
  winner TEXT NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
  reasoning TEXT NOT NULL,
  call_id INTEGER NOT NULL REFERENCES evaluation_calls(id),
  PRIMARY KEY (evaluation_id, pair_id, left_side)
) STRICT;

CREATE TABLE "judgments" (
  id INTEGER PRIMARY KEY,
  assignment_id INTEGER NOT NULL REFERENCES assignments(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
  rater_id INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
  question_id TEXT NOT NULL DEFAULT 'natural',   -- the batch's question this answer is to (its `questions[].id`)
  question_index INTEGER NOT NULL DEFAULT 0 CHECK (question_index >= 0),   -- its place on the page; 0 = first
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
  late INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),   -- answered after its lease expired
  UNIQUE (assignment_id, question_id),
  UNIQUE (assignment_id, question_index)
) STRICT;

CREATE TABLE run_totals (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  dialogues INTEGER NOT NULL DEFAULT 0 CHECK (dialogues >= 0),
  complete INTEGER NOT NULL DEFAULT 0 CHECK (complete >= 0),
  failed INTEGER NOT NULL DEFAULT 0 CHECK (failed >= 0),
  running INTEGER NOT NULL DEFAULT 0 CHECK (running >= 0),  -- pending or running
  calls INTEGER NOT NULL DEFAULT 0 CHECK (calls >= 0),
  ok_calls INTEGER NOT NULL DEFAULT 0 CHECK (ok_calls >= 0),
  invalid_calls INTEGER NOT NULL DEFAULT 0 CHECK (invalid_calls >= 0),
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE judgment_question_counts (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  question_id TEXT NOT NULL,
  judgments INTEGER NOT NULL DEFAULT 0 CHECK (judgments >= 0),
  PRIMARY KEY (batch_id, question_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE batch_rater_counts (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  raters INTEGER NOT NULL DEFAULT 0 CHECK (raters >= 0),
  completed INTEGER NOT NULL DEFAULT 0 CHECK (completed >= 0),
  excluded INTEGER NOT NULL DEFAULT 0 CHECK (excluded >= 0)
, changes INTEGER NOT NULL DEFAULT 0) STRICT;

CREATE TABLE active_time_buckets (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  second INTEGER NOT NULL CHECK (second >= 0),   -- active_ms / 1000
  judgments INTEGER NOT NULL DEFAULT 0 CHECK (judgments >= 0),
  PRIMARY KEY (batch_id, second)
) STRICT, WITHOUT ROWID;

CREATE TABLE analysis_plots (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  data_version TEXT NOT NULL,  -- analysis_cache.data_version of the report they were drawn from
  question TEXT NOT NULL,      -- the question's id; '' for a batch of one question
  name TEXT NOT NULL,
  svg TEXT NOT NULL,
  PRIMARY KEY (batch_id, question, name)
) STRICT;

CREATE TABLE "analysis_cache" (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  data_version TEXT NOT NULL,
  result ANY NOT NULL CHECK (typeof(result) IN ('text', 'blob')),
  computed_at TEXT NOT NULL
, page_report BLOB, parts_id INTEGER) STRICT;

CREATE TABLE analysis_rater_figures (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  judge TEXT NOT NULL,
  from_parts INTEGER NOT NULL,  -- the first result these figures are of
  to_parts INTEGER NOT NULL,    -- the result that replaced them; 9007199254740991 while none did
  judgments INTEGER NOT NULL,
  median_seconds REAL,
  majority_agreement REAL,
  left_rate REAL,
  PRIMARY KEY (batch_id, judge, from_parts)
) STRICT, WITHOUT ROWID;

CREATE TABLE analysis_figures_writer (
  batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
  last_parts INTEGER NOT NULL,
  written_at INTEGER
) STRICT;

CREATE INDEX dialogues_by_sample ON dialogues (scenario_id, cast_id, sample_index);

CREATE INDEX llm_calls_by_run ON llm_calls (run_id);

CREATE INDEX pairs_by_batch ON pairs (batch_id, kind, accepted);

CREATE INDEX raters_by_participant ON raters (provider, participant_id);

CREATE INDEX assignments_live ON assignments (pair_id, state);

CREATE INDEX sessions_by_expiry ON sessions (expires_at);

CREATE UNIQUE INDEX raters_one_person ON raters (batch_id, provider, person_key) WHERE person_key IS NOT NULL;

CREATE INDEX raters_by_address ON raters (batch_id, address_hash, created_at);

CREATE INDEX rater_sessions_by_session ON rater_sessions (session_id);

CREATE INDEX pair_reservations_by_pair ON pair_reservations (pair_id);

CREATE INDEX pair_reservations_by_batch ON pair_reservations (batch_id, expires_at);

CREATE INDEX character_aliases_by_character ON character_aliases (character_id);

CREATE INDEX scenario_aliases_by_scenario ON scenario_aliases (scenario_id);

CREATE INDEX login_failures_by_time ON login_failures (last_failure_at);

CREATE INDEX evaluations_by_run ON evaluations (run_id);

CREATE INDEX evaluations_by_batch ON evaluations (batch_id);

CREATE INDEX assignments_leased_by_expiry ON assignments (batch_id, expires_at) WHERE state = 'leased';

CREATE INDEX pairs_regular_in_use ON pairs (batch_id, id) WHERE kind = 'regular' AND removed_at IS NULL;

CREATE INDEX raters_completed_time ON raters (batch_id, regular_active_ms) WHERE status = 'completed' AND excluded = 0 AND regular_timed > 0;

CREATE INDEX judgments_by_batch ON judgments (batch_id, pair_id);

CREATE INDEX judgments_by_rater ON judgments (rater_id);

CREATE INDEX judgments_by_active_time ON judgments (batch_id, is_gold, active_ms) WHERE question_index = 0;

CREATE INDEX judgments_by_question ON judgments (batch_id, question_id, pair_id);

CREATE INDEX raters_active_by_address ON raters (batch_id, address_hash) WHERE status IN ('instructions', 'onboarding', 'rating');

CREATE INDEX raters_listed ON raters (batch_id, id) WHERE provider <> 'preview';

CREATE INDEX pairs_removed ON pairs (batch_id, id) WHERE removed_at IS NOT NULL;

CREATE INDEX pairs_open_by_load ON pairs (batch_id, accepted + leased + reserved, id) WHERE kind = 'regular' AND removed_at IS NULL;

CREATE INDEX dialogues_by_run ON dialogues (run_id, state, origin, mode, model);

CREATE INDEX raters_in_progress ON raters (batch_id) WHERE status IN ('consent', 'instructions', 'onboarding', 'rating') AND provider <> 'preview';

CREATE INDEX raters_completed_included ON raters (batch_id, judge, attention_failures, onboarding_answered, onboarding_correct, finish_reason, regular_judged)
  WHERE provider <> 'preview' AND status = 'completed' AND excluded = 0;

CREATE INDEX raters_not_completed_included ON raters (batch_id, status, excluded)
  WHERE provider <> 'preview' AND NOT (status = 'completed' AND excluded = 0);

CREATE TRIGGER comparison_tallies_new_comparison AFTER INSERT ON comparisons
BEGIN
  INSERT INTO comparison_tallies (comparison_id) VALUES (NEW.id);
END;

CREATE TRIGGER batch_judgment_counts_new_batch AFTER INSERT ON batches
BEGIN
  INSERT INTO batch_judgment_counts (batch_id) VALUES (NEW.id);
END;

CREATE TRIGGER comparison_tallies_judgment_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0 AND NEW.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = NEW.rater_id) = 0
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a + (NEW.winner = 'a'), wins_b = wins_b + (NEW.winner = 'b'), ties = ties + (NEW.winner = 'tie')
  WHERE comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = NEW.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
END;

CREATE TRIGGER comparison_tallies_judgment_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0 AND OLD.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = OLD.rater_id) = 0
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a - (OLD.winner = 'a'), wins_b = wins_b - (OLD.winner = 'b'), ties = ties - (OLD.winner = 'tie')
  WHERE comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = OLD.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
END;

CREATE TRIGGER comparison_tallies_judgment_changed AFTER UPDATE OF winner, is_gold, pair_id, rater_id, question_index ON judgments
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a - (OLD.winner = 'a'), wins_b = wins_b - (OLD.winner = 'b'), ties = ties - (OLD.winner = 'tie')
  WHERE OLD.question_index = 0 AND OLD.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = OLD.rater_id) = 0
    AND comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = OLD.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
  UPDATE comparison_tallies
  SET wins_a = wins_a + (NEW.winner = 'a'), wins_b = wins_b + (NEW.winner = 'b'), ties = ties + (NEW.winner = 'tie')
  WHERE NEW.question_index = 0 AND NEW.is_gold = 0 AND (SELECT r.excluded FROM raters r WHERE r.id = NEW.rater_id) = 0
    AND comparison_id = (SELECT p.comparison_id FROM pairs p WHERE p.id = NEW.pair_id AND p.kind = 'regular' AND p.removed_at IS NULL);
END;

CREATE TRIGGER comparison_tallies_rater_excluded AFTER UPDATE OF excluded ON raters
WHEN OLD.excluded <> NEW.excluded
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a + (1 - 2 * NEW.excluded) * t.a, wins_b = wins_b + (1 - 2 * NEW.excluded) * t.b, ties = ties + (1 - 2 * NEW.excluded) * t.tie
  FROM (SELECT p.comparison_id, sum(j.winner = 'a') AS a, sum(j.winner = 'b') AS b, sum(j.winner = 'tie') AS tie
        FROM judgments j JOIN pairs p ON p.id = j.pair_id
        WHERE j.rater_id = NEW.id AND j.question_index = 0 AND j.is_gold = 0 AND p.kind = 'regular' AND p.removed_at IS NULL
        GROUP BY p.comparison_id) AS t
  WHERE comparison_tallies.comparison_id = t.comparison_id;
END;

CREATE TRIGGER comparison_tallies_pair_removed AFTER UPDATE OF removed_at ON pairs
WHEN NEW.kind = 'regular' AND (OLD.removed_at IS NULL) <> (NEW.removed_at IS NULL)
BEGIN
  UPDATE comparison_tallies
  SET wins_a = wins_a + (CASE WHEN NEW.removed_at IS NULL THEN 1 ELSE -1 END) * t.a,
      wins_b = wins_b + (CASE WHEN NEW.removed_at IS NULL THEN 1 ELSE -1 END) * t.b,
      ties = ties + (CASE WHEN NEW.removed_at IS NULL THEN 1 ELSE -1 END) * t.tie
  FROM (SELECT coalesce(sum(j.winner = 'a'), 0) AS a, coalesce(sum(j.winner = 'b'), 0) AS b, coalesce(sum(j.winner = 'tie'), 0) AS tie
        FROM judgments j JOIN raters r ON r.id = j.rater_id
        WHERE j.batch_id = NEW.batch_id AND j.pair_id = NEW.id AND j.question_index = 0 AND j.is_gold = 0 AND r.excluded = 0) AS t
  WHERE comparison_tallies.comparison_id = NEW.comparison_id;
END;

CREATE TRIGGER batch_judgment_counts_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0
BEGIN
  UPDATE batch_judgment_counts
  SET judgments = judgments + 1, regular = regular + (NEW.is_gold = 0), timed = timed + (NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL)
  WHERE batch_id = NEW.batch_id;
END;

CREATE TRIGGER batch_judgment_counts_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0
BEGIN
  UPDATE batch_judgment_counts
  SET judgments = judgments - 1, regular = regular - (OLD.is_gold = 0), timed = timed - (OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL)
  WHERE batch_id = OLD.batch_id;
END;

CREATE TRIGGER batch_judgment_counts_changed AFTER UPDATE OF batch_id, is_gold, active_ms, question_index ON judgments
BEGIN
  UPDATE batch_judgment_counts
  SET judgments = judgments - 1, regular = regular - (OLD.is_gold = 0), timed = timed - (OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL)
  WHERE batch_id = OLD.batch_id AND OLD.question_index = 0;
  UPDATE batch_judgment_counts
  SET judgments = judgments + 1, regular = regular + (NEW.is_gold = 0), timed = timed + (NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL)
  WHERE batch_id = NEW.batch_id AND NEW.question_index = 0;
END;

CREATE TRIGGER rater_active_time_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL
BEGIN
  UPDATE raters SET regular_active_ms = regular_active_ms + NEW.active_ms, regular_timed = regular_timed + 1 WHERE id = NEW.rater_id;
END;

CREATE TRIGGER rater_active_time_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0 AND OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL
BEGIN
  UPDATE raters SET regular_active_ms = regular_active_ms - OLD.active_ms, regular_timed = regular_timed - 1 WHERE id = OLD.rater_id;
END;

CREATE TRIGGER rater_active_time_changed AFTER UPDATE OF is_gold, active_ms, rater_id, question_index ON judgments
BEGIN
  UPDATE raters SET regular_active_ms = regular_active_ms - OLD.active_ms, regular_timed = regular_timed - 1
  WHERE id = OLD.rater_id AND OLD.question_index = 0 AND OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL;
  UPDATE raters SET regular_active_ms = regular_active_ms + NEW.active_ms, regular_timed = regular_timed + 1
  WHERE id = NEW.rater_id AND NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL;
END;

CREATE TRIGGER rater_progress_judgment_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0
BEGIN
  UPDATE raters SET judged = judged + 1,
    regular_judged = regular_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'onboarding')
  WHERE id = NEW.rater_id;
END;

CREATE TRIGGER rater_progress_judgment_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0
BEGIN
  UPDATE raters SET judged = judged - 1,
    regular_judged = regular_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'onboarding')
  WHERE id = OLD.rater_id;
END;

CREATE TRIGGER rater_progress_judgment_changed AFTER UPDATE OF rater_id, pair_id, question_index ON judgments
BEGIN
  UPDATE raters SET judged = judged - 1,
    regular_judged = regular_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged - ((SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'onboarding')
  WHERE id = OLD.rater_id AND OLD.question_index = 0;
  UPDATE raters SET judged = judged + 1,
    regular_judged = regular_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'regular'),
    onboarding_judged = onboarding_judged + ((SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'onboarding')
  WHERE id = NEW.rater_id AND NEW.question_index = 0;
END;

CREATE TRIGGER rater_progress_assignment_added AFTER INSERT ON assignments
WHEN (SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'attention'
BEGIN
  UPDATE raters SET attention_assigned = attention_assigned + 1 WHERE id = NEW.rater_id;
END;

CREATE TRIGGER rater_progress_assignment_removed AFTER DELETE ON assignments
WHEN (SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'attention'
BEGIN
  UPDATE raters SET attention_assigned = attention_assigned - 1 WHERE id = OLD.rater_id;
END;

CREATE TRIGGER rater_progress_assignment_changed AFTER UPDATE OF rater_id, pair_id ON assignments
BEGIN
  UPDATE raters SET attention_assigned = attention_assigned - 1
  WHERE id = OLD.rater_id AND (SELECT p.kind FROM pairs p WHERE p.id = OLD.pair_id) = 'attention';
  UPDATE raters SET attention_assigned = attention_assigned + 1
  WHERE id = NEW.rater_id AND (SELECT p.kind FROM pairs p WHERE p.id = NEW.pair_id) = 'attention';
END;

CREATE TRIGGER pair_load_lease_added AFTER INSERT ON assignments
WHEN NEW.state = 'leased'
BEGIN
  UPDATE pairs SET leased = leased + 1, leased_left_a = leased_left_a + (NEW.left_side = 'a') WHERE id = NEW.pair_id;
END;

CREATE TRIGGER pair_load_lease_removed AFTER DELETE ON assignments
WHEN OLD.state = 'leased'
BEGIN
  UPDATE pairs SET leased = leased - 1, leased_left_a = leased_left_a - (OLD.left_side = 'a') WHERE id = OLD.pair_id;
END;

CREATE TRIGGER pair_load_lease_changed AFTER UPDATE OF state, pair_id, left_side ON assignments
WHEN OLD.state = 'leased' OR NEW.state = 'leased'
BEGIN
  UPDATE pairs SET leased = leased - 1, leased_left_a = leased_left_a - (OLD.left_side = 'a') WHERE id = OLD.pair_id AND OLD.state = 'leased';
  UPDATE pairs SET leased = leased + 1, leased_left_a = leased_left_a + (NEW.left_side = 'a') WHERE id = NEW.pair_id AND NEW.state = 'leased';
END;

CREATE TRIGGER pair_load_reservation_added AFTER INSERT ON pair_reservations
BEGIN
  UPDATE pairs SET reserved = reserved + 1 WHERE id = NEW.pair_id;
END;

CREATE TRIGGER pair_load_reservation_removed AFTER DELETE ON pair_reservations
BEGIN
  UPDATE pairs SET reserved = reserved - 1 WHERE id = OLD.pair_id;
END;

CREATE TRIGGER pair_load_reservation_changed AFTER UPDATE OF pair_id ON pair_reservations
BEGIN
  UPDATE pairs SET reserved = reserved - 1 WHERE id = OLD.pair_id;
  UPDATE pairs SET reserved = reserved + 1 WHERE id = NEW.pair_id;
END;

CREATE TRIGGER run_totals_new_run AFTER INSERT ON runs
BEGIN
  INSERT INTO run_totals (run_id) VALUES (NEW.id);
END;

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

CREATE TRIGGER run_totals_call_added AFTER INSERT ON llm_calls
BEGIN
  UPDATE run_totals SET calls = calls + 1, ok_calls = ok_calls + (NEW.status = 'ok'), invalid_calls = invalid_calls + (NEW.status = 'invalid'),
    prompt_tokens = prompt_tokens + NEW.prompt_tokens, completion_tokens = completion_tokens + NEW.completion_tokens
  WHERE run_id = NEW.run_id;
END;

CREATE TRIGGER run_totals_call_removed AFTER DELETE ON llm_calls
BEGIN
  UPDATE run_totals SET calls = calls - 1, ok_calls = ok_calls - (OLD.status = 'ok'), invalid_calls = invalid_calls - (OLD.status = 'invalid'),
    prompt_tokens = prompt_tokens - OLD.prompt_tokens, completion_tokens = completion_tokens - OLD.completion_tokens
  WHERE run_id = OLD.run_id;
END;

CREATE TRIGGER run_totals_call_changed AFTER UPDATE OF run_id, status, prompt_tokens, completion_tokens ON llm_calls
BEGIN
  UPDATE run_totals SET calls = calls - 1, ok_calls = ok_calls - (OLD.status = 'ok'), invalid_calls = invalid_calls - (OLD.status = 'invalid'),
    prompt_tokens = prompt_tokens - OLD.prompt_tokens, completion_tokens = completion_tokens - OLD.completion_tokens
  WHERE run_id = OLD.run_id;
  UPDATE run_totals SET calls = calls + 1, ok_calls = ok_calls + (NEW.status = 'ok'), invalid_calls = invalid_calls + (NEW.status = 'invalid'),
    prompt_tokens = prompt_tokens + NEW.prompt_tokens, completion_tokens = completion_tokens + NEW.completion_tokens
  WHERE run_id = NEW.run_id;
END;

CREATE TRIGGER judgment_question_counts_added AFTER INSERT ON judgments
BEGIN
  INSERT INTO judgment_question_counts (batch_id, question_id, judgments) VALUES (NEW.batch_id, NEW.question_id, 1)
  ON CONFLICT (batch_id, question_id) DO UPDATE SET judgments = judgments + 1;
END;

CREATE TRIGGER judgment_question_counts_removed AFTER DELETE ON judgments
BEGIN
  UPDATE judgment_question_counts SET judgments = judgments - 1 WHERE batch_id = OLD.batch_id AND question_id = OLD.question_id;
END;

CREATE TRIGGER judgment_question_counts_changed AFTER UPDATE OF batch_id, question_id ON judgments
WHEN OLD.batch_id IS NOT NEW.batch_id OR OLD.question_id IS NOT NEW.question_id
BEGIN
  UPDATE judgment_question_counts SET judgments = judgments - 1 WHERE batch_id = OLD.batch_id AND question_id = OLD.question_id;
  INSERT INTO judgment_question_counts (batch_id, question_id, judgments) VALUES (NEW.batch_id, NEW.question_id, 1)
  ON CONFLICT (batch_id, question_id) DO UPDATE SET judgments = judgments + 1;
END;

CREATE TRIGGER batch_rater_counts_new_batch AFTER INSERT ON batches
BEGIN
  INSERT INTO batch_rater_counts (batch_id) VALUES (NEW.id);
END;

CREATE TRIGGER active_time_buckets_added AFTER INSERT ON judgments
WHEN NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL
BEGIN
  INSERT INTO active_time_buckets (batch_id, second, judgments) VALUES (NEW.batch_id, NEW.active_ms / 1000, 1)
  ON CONFLICT (batch_id, second) DO UPDATE SET judgments = judgments + 1;
END;

CREATE TRIGGER active_time_buckets_removed AFTER DELETE ON judgments
WHEN OLD.question_index = 0 AND OLD.is_gold = 0 AND OLD.active_ms IS NOT NULL
BEGIN
  UPDATE active_time_buckets SET judgments = judgments - 1 WHERE batch_id = OLD.batch_id AND second = OLD.active_ms / 1000;
END;

CREATE TRIGGER active_time_buckets_changed AFTER UPDATE OF batch_id, question_index, is_gold, active_ms ON judgments
BEGIN
  UPDATE active_time_buckets SET judgments = judgments - 1
  WHERE batch_id = OLD.batch_id AND second = OLD.active_ms / 1000 AND OLD.question_index = 0 AND OLD.is_gold = 0;
  INSERT INTO active_time_buckets (batch_id, second, judgments)
  SELECT NEW.batch_id, NEW.active_ms / 1000, 1 WHERE NEW.question_index = 0 AND NEW.is_gold = 0 AND NEW.active_ms IS NOT NULL
  ON CONFLICT (batch_id, second) DO UPDATE SET judgments = judgments + 1;
END;

CREATE TRIGGER batch_rater_counts_added AFTER INSERT ON raters
WHEN NEW.provider <> 'preview'
BEGIN
  UPDATE batch_rater_counts SET raters = raters + 1, completed = completed + (NEW.status = 'completed'), excluded = excluded + NEW.excluded,
    changes = changes + 1
  WHERE batch_id = NEW.batch_id;
END;

CREATE TRIGGER batch_rater_counts_removed AFTER DELETE ON raters
WHEN OLD.provider <> 'preview'
BEGIN
  UPDATE batch_rater_counts SET raters = raters - 1, completed = completed - (OLD.status = 'completed'), excluded = excluded - OLD.excluded,
    changes = changes + 1
  WHERE batch_id = OLD.batch_id;
END;

CREATE TRIGGER batch_rater_counts_changed AFTER UPDATE OF batch_id, provider, status, excluded ON raters
WHEN OLD.batch_id IS NOT NEW.batch_id OR OLD.provider IS NOT NEW.provider OR OLD.status IS NOT NEW.status OR OLD.excluded IS NOT NEW.excluded
BEGIN
  UPDATE batch_rater_counts SET raters = raters - 1, completed = completed - (OLD.status = 'completed'), excluded = excluded - OLD.excluded,
    changes = changes + 1
  WHERE batch_id = OLD.batch_id AND OLD.provider <> 'preview';
  UPDATE batch_rater_counts SET raters = raters + 1, completed = completed + (NEW.status = 'completed'), excluded = excluded + NEW.excluded,
    changes = changes + 1
  WHERE batch_id = NEW.batch_id AND NEW.provider <> 'preview';
END;

CREATE TRIGGER batch_judgment_revisions_removed AFTER DELETE ON judgments
BEGIN
  UPDATE batch_judgment_counts SET revisions = revisions + 1 WHERE batch_id = OLD.batch_id;
END;

CREATE TRIGGER batch_judgment_revisions_changed AFTER UPDATE ON judgments
BEGIN
  UPDATE batch_judgment_counts SET revisions = revisions + 1 WHERE batch_id IN (OLD.batch_id, NEW.batch_id);
END;
