-- Which endpoint served each call (issue 40): a run resumed after OPENAI_BASE_URL was fixed sends its calls to the new
-- address, so the run's own base_url cannot say where a call went. Each call keeps the base URL it was sent to (without
-- credentials; never a key); NULL for calls stored before this migration, whose address was not recorded.
ALTER TABLE llm_calls ADD COLUMN base_url TEXT;
ALTER TABLE evaluation_calls ADD COLUMN base_url TEXT;

-- The endpoints of a run with their calls and dialogues (the simulation card), counted from the index alone: reading
-- the calls themselves would read each one's whole request and answer.
CREATE INDEX llm_calls_by_run_endpoint ON llm_calls (run_id, base_url, status, dialogue_id);
