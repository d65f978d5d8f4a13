-- The run page shows the run's simulation card, rebuilt on each view, and the card lists the endpoints the run's calls
-- went to with their calls, valid calls and the dialogues each answered. That list counted every call of the run from
-- index llm_calls_by_run_endpoint (migration 038) on the request thread: 132–145 ms of the card's 164 ms at 900,000 calls
-- (scripts/bench/run-card.ts). These counters are kept by triggers with the calls, so the list reads one row per
-- endpoint and one per dialogue it answered. base_url is '' for calls stored before the address was kept (NULL there).
CREATE TABLE run_endpoint_totals (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  base_url TEXT NOT NULL,
  first_call_id INTEGER NOT NULL,
  calls INTEGER NOT NULL CHECK (calls >= 0),
  ok INTEGER NOT NULL CHECK (ok >= 0),
  PRIMARY KEY (run_id, base_url)
) STRICT, WITHOUT ROWID;

-- The dialogues an endpoint answered with at least one valid call, with how many.
CREATE TABLE run_endpoint_dialogues (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  base_url TEXT NOT NULL,
  dialogue_id INTEGER NOT NULL,
  ok INTEGER NOT NULL CHECK (ok >= 0),
  PRIMARY KEY (run_id, base_url, dialogue_id)
) STRICT, WITHOUT ROWID;

INSERT INTO run_endpoint_totals (run_id, base_url, first_call_id, calls, ok)
SELECT run_id, coalesce(base_url, ''), min(id), count(*), coalesce(sum(status = 'ok'), 0) FROM llm_calls GROUP BY run_id, base_url;

INSERT INTO run_endpoint_dialogues (run_id, base_url, dialogue_id, ok)
SELECT run_id, coalesce(base_url, ''), dialogue_id, count(*) FROM llm_calls WHERE status = 'ok' GROUP BY run_id, base_url, dialogue_id;

CREATE TRIGGER run_endpoint_call_added AFTER INSERT ON llm_calls
BEGIN
  INSERT INTO run_endpoint_totals (run_id, base_url, first_call_id, calls, ok) VALUES (NEW.run_id, coalesce(NEW.base_url, ''), NEW.id, 1, NEW.status = 'ok')
  ON CONFLICT (run_id, base_url) DO UPDATE SET calls = calls + 1, ok = ok + excluded.ok, first_call_id = min(first_call_id, excluded.first_call_id);
  INSERT INTO run_endpoint_dialogues (run_id, base_url, dialogue_id, ok) SELECT NEW.run_id, coalesce(NEW.base_url, ''), NEW.dialogue_id, 1 WHERE NEW.status = 'ok'
  ON CONFLICT (run_id, base_url, dialogue_id) DO UPDATE SET ok = ok + 1;
END;

-- Calls are never removed or changed by simarena; these keep the counters right if a row is (a deleted dialogue's
-- calls go with it, or a repair by hand).
CREATE TRIGGER run_endpoint_call_removed AFTER DELETE ON llm_calls
BEGIN
  UPDATE run_endpoint_totals SET calls = calls - 1, ok = ok - (OLD.status = 'ok') WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '');
  UPDATE run_endpoint_totals SET first_call_id = (SELECT min(c.id) FROM llm_calls c WHERE c.run_id = OLD.run_id AND c.base_url IS OLD.base_url)
  WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND first_call_id = OLD.id AND calls > 0;
  DELETE FROM run_endpoint_totals WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND calls = 0;
  UPDATE run_endpoint_dialogues SET ok = ok - 1 WHERE OLD.status = 'ok' AND run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND dialogue_id = OLD.dialogue_id;
  DELETE FROM run_endpoint_dialogues WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND dialogue_id = OLD.dialogue_id AND ok = 0;
END;

CREATE TRIGGER run_endpoint_call_changed AFTER UPDATE OF run_id, base_url, status, dialogue_id ON llm_calls
BEGIN
  UPDATE run_endpoint_totals SET calls = calls - 1, ok = ok - (OLD.status = 'ok') WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '');
  UPDATE run_endpoint_totals SET first_call_id = coalesce((SELECT min(c.id) FROM llm_calls c WHERE c.run_id = OLD.run_id AND c.base_url IS OLD.base_url), first_call_id)
  WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND first_call_id = OLD.id AND calls > 0;
  DELETE FROM run_endpoint_totals WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND calls = 0;
  UPDATE run_endpoint_dialogues SET ok = ok - 1 WHERE OLD.status = 'ok' AND run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND dialogue_id = OLD.dialogue_id;
  DELETE FROM run_endpoint_dialogues WHERE run_id = OLD.run_id AND base_url = coalesce(OLD.base_url, '') AND dialogue_id = OLD.dialogue_id AND ok = 0;
  INSERT INTO run_endpoint_totals (run_id, base_url, first_call_id, calls, ok) VALUES (NEW.run_id, coalesce(NEW.base_url, ''), NEW.id, 1, NEW.status = 'ok')
  ON CONFLICT (run_id, base_url) DO UPDATE SET calls = calls + 1, ok = ok + excluded.ok, first_call_id = min(first_call_id, excluded.first_call_id);
  INSERT INTO run_endpoint_dialogues (run_id, base_url, dialogue_id, ok) SELECT NEW.run_id, coalesce(NEW.base_url, ''), NEW.dialogue_id, 1 WHERE NEW.status = 'ok'
  ON CONFLICT (run_id, base_url, dialogue_id) DO UPDATE SET ok = ok + 1;
END;
