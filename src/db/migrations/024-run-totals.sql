-- A run's counts of dialogues (by state) and model calls (by outcome, with tokens), kept by the triggers below in the
-- same transaction as the rows they count, whichever code writes them. The console's run page polls these while a
-- run is generated, and the runs list and the API show them: counting them meant reading every call of every run
-- (a call's row holds its whole request and response; its status and tokens lie past them), 100 ms per poll on the
-- request thread at 90,000 stored calls and growing with them (issue 12). Read by src/console/run-list.queries.ts and
-- src/generation/call.queries.ts.
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

INSERT INTO run_totals (run_id, dialogues, complete, failed, running, calls, ok_calls, invalid_calls, prompt_tokens, completion_tokens)
SELECT r.id,
  coalesce(d.total, 0), coalesce(d.complete, 0), coalesce(d.failed, 0), coalesce(d.running, 0),
  coalesce(c.calls, 0), coalesce(c.ok, 0), coalesce(c.invalid, 0), coalesce(c.prompt_tokens, 0), coalesce(c.completion_tokens, 0)
FROM runs r
LEFT JOIN (SELECT run_id, count(*) AS total, sum(state = 'complete') AS complete, sum(state = 'failed') AS failed,
    sum(state IN ('pending', 'running')) AS running
  FROM dialogues GROUP BY run_id) d ON d.run_id = r.id
LEFT JOIN (SELECT run_id, count(*) AS calls, sum(status = 'ok') AS ok, sum(status = 'invalid') AS invalid,
    sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens
  FROM llm_calls GROUP BY run_id) c ON c.run_id = r.id;

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
