-- Role-play batches (issue 52): people play a scenario live, two together (HUMANS) or one with a model (HUMAN_AGENT),
-- and what they write becomes a dialogue of the batch's collection run.
--
-- collected_dialogues (owned by src/batches/): every dialogue a collecting batch made (a role-play batch now, a writing
-- batch next), how it ended and the researcher's review. Only an accepted one is paired in a rating batch
-- (src/batches/batch.queries.ts, listSampleDialogues).
CREATE TABLE collected_dialogues (
  dialogue_id INTEGER PRIMARY KEY REFERENCES dialogues(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,   -- the batch that collected it
  task TEXT NOT NULL CHECK (task IN ('roleplay', 'write')),
  -- collecting: under way; complete: ended as the task foresees; incomplete: ended early (reason says why);
  -- reported: a participant pressed "report", which ends it and flags it.
  outcome TEXT NOT NULL DEFAULT 'collecting' CHECK (outcome IN ('collecting', 'complete', 'incomplete', 'reported')),
  reason TEXT,
  review TEXT NOT NULL DEFAULT 'pending' CHECK (review IN ('pending', 'accepted', 'rejected')),
  reviewed_by TEXT,
  reviewed_at TEXT,
  review_note TEXT CHECK (review_note IS NULL OR length(review_note) <= 2000),
  created_at TEXT NOT NULL,
  ended_at TEXT,
  CHECK (outcome <> 'collecting' OR review = 'pending'),
  CHECK ((review = 'pending') = (reviewed_at IS NULL))
) STRICT;
CREATE INDEX collected_by_batch ON collected_dialogues (batch_id, outcome, review);

-- live_players (owned by src/live/): a rater of a role-play batch once past the instructions, in the lobby, in a
-- live dialogue, answering the questions after it, or done.
CREATE TABLE live_players (
  rater_id INTEGER PRIMARY KEY REFERENCES raters(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('lobby', 'playing', 'answering', 'done')),
  lobby_at TEXT NOT NULL,
  matched_at TEXT,
  dialogue_id INTEGER REFERENCES dialogues(id),
  character INTEGER CHECK (character IS NULL OR character IN (1, 2)),
  -- finished: the dialogue ended as foreseen; partner_left: the partner closed the tab, timed out twice or left
  -- early; no_partner: nobody came within the wait; timed_out: this player missed two turns in a row; away: closed
  -- the tab (or lost the connection) for longer than the batch allows; left_early: pressed "leave" before the
  -- minimum of turns; reported: this player reported the partner; was_reported: the partner reported this player;
  -- closed: the batch closed or paused under them.
  outcome TEXT CHECK (outcome IS NULL OR outcome IN ('finished', 'partner_left', 'no_partner', 'timed_out', 'away', 'left_early', 'reported', 'was_reported', 'closed')),
  partner_guess TEXT CHECK (partner_guess IS NULL OR partner_guess IN ('person', 'ai')),
  goal_score INTEGER CHECK (goal_score IS NULL OR goal_score BETWEEN 1 AND 10),
  report_reason TEXT CHECK (report_reason IS NULL OR length(report_reason) <= 1000),
  waited_ms INTEGER NOT NULL DEFAULT 0 CHECK (waited_ms >= 0),    -- in the lobby, until matched or sent home
  missed_turns INTEGER NOT NULL DEFAULT 0 CHECK (missed_turns >= 0),   -- in a row
  refused_messages INTEGER NOT NULL DEFAULT 0 CHECK (refused_messages >= 0),   -- with contact details
  ended_at TEXT,
  CHECK (state <> 'lobby' OR (matched_at IS NULL AND dialogue_id IS NULL AND outcome IS NULL)),
  CHECK (state <> 'playing' OR (dialogue_id IS NOT NULL AND outcome IS NULL)),
  CHECK ((dialogue_id IS NULL) = (character IS NULL))
) STRICT;
CREATE INDEX live_players_by_state ON live_players (batch_id, state);

-- live_dialogues (owned by src/live/): a dialogue being played live, whose turn it is and until when.
CREATE TABLE live_dialogues (
  dialogue_id INTEGER PRIMARY KEY REFERENCES dialogues(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  player_1 INTEGER REFERENCES raters(id),   -- null: the agent plays character 1
  player_2 INTEGER REFERENCES raters(id),   -- null: the agent plays character 2
  state TEXT NOT NULL CHECK (state IN ('active', 'ended')),
  next_speaker INTEGER NOT NULL CHECK (next_speaker IN (1, 2)),
  turn_started_at TEXT NOT NULL,
  turn_deadline_at TEXT NOT NULL,
  end_reason TEXT,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  CHECK (player_1 IS NOT NULL OR player_2 IS NOT NULL),
  CHECK ((state = 'ended') = (ended_at IS NOT NULL))
) STRICT;
CREATE INDEX live_dialogues_active ON live_dialogues (state) WHERE state = 'active';

-- live_turns (owned by src/live/): the provenance of each turn of a live dialogue beside its row in turns: who wrote
-- it (null for the agent, whose calls are in llm_calls), the page's idempotency key, when the turn began and when it
-- was sent, and what the page measured while it was typed.
CREATE TABLE live_turns (
  dialogue_id INTEGER NOT NULL REFERENCES dialogues(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL CHECK (idx >= 0),
  rater_id INTEGER REFERENCES raters(id),
  client_key TEXT CHECK (client_key IS NULL OR length(client_key) BETWEEN 8 AND 64),
  turn_started_at TEXT NOT NULL,
  sent_at TEXT NOT NULL,
  timed_out INTEGER NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
  keystrokes INTEGER CHECK (keystrokes IS NULL OR keystrokes >= 0),
  typing_ms INTEGER CHECK (typing_ms IS NULL OR typing_ms >= 0),
  paste_attempts INTEGER CHECK (paste_attempts IS NULL OR paste_attempts >= 0),
  PRIMARY KEY (dialogue_id, idx),
  UNIQUE (rater_id, client_key)
) STRICT;
