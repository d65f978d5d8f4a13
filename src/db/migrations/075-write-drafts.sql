-- Writing batches (issue 53, item 1): one participant writes a whole conversation, both characters' turns, knowing
-- both profiles, goals and secrets (HUMAN_SCRIPT, what SCRIPT's model is given).
--
-- write_drafts (owned by src/live/): the writer's scenario cast, drawn when they start, and their draft, saved as they
-- go (a reload loses nothing), until they hand it in. The handed-in conversation becomes a dialogue of the batch's
-- collection run (origin collected; collected_dialogues with task 'write', reviewed before any rating batch pairs it),
-- each turn's provenance (writer, times, keys, typing time, paste attempts) in live_turns beside its row in turns.
CREATE TABLE write_drafts (
  rater_id INTEGER PRIMARY KEY REFERENCES raters(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  scenario_id TEXT NOT NULL REFERENCES scenarios(id),
  cast_id INTEGER NOT NULL REFERENCES casts(id),
  state TEXT NOT NULL CHECK (state IN ('writing', 'submitted', 'withdrawn')),
  -- The turns as the page last saved them: [{speaker, action, text, keys, typing_ms, pastes, started_at, edited_at}].
  draft TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(draft) AND length(draft) <= 400000),
  -- The page's save counter: a save older than the stored one (out of order, or from a second tab) changes nothing.
  version INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0),
  started_at TEXT NOT NULL,
  saved_at TEXT,
  submitted_at TEXT,
  dialogue_id INTEGER UNIQUE REFERENCES dialogues(id),
  CHECK ((state = 'submitted') = (dialogue_id IS NOT NULL AND submitted_at IS NOT NULL))
) STRICT;
CREATE INDEX write_drafts_by_batch ON write_drafts (batch_id, state, cast_id);
