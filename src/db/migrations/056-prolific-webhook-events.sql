-- Issue 50, item 11: Prolific's webhooks (submission.status.change), so a participant who returns or times out frees
-- the pairs they hold at once. Prolific delivers each event "at least once" and keeps its X-Event-ID "the same across
-- retries" (docs.prolific.com, Idempotency and the X-Event-ID Header): an event is written here in the transaction
-- that acts on it, and one seen before is acknowledged and not acted on again. Only signed deliveries reach this table
-- (src/recruiting/prolific-webhook.routes.ts).
CREATE TABLE prolific_webhook_events (
  event_id TEXT PRIMARY KEY CHECK (length(event_id) BETWEEN 1 AND 200),
  event_type TEXT NOT NULL CHECK (length(event_type) BETWEEN 1 AND 100),
  -- The submission (a Prolific session id) and its new status, for a submission.status.change.
  resource_id TEXT CHECK (resource_id IS NULL OR length(resource_id) BETWEEN 1 AND 128),
  status TEXT CHECK (status IS NULL OR length(status) BETWEEN 1 AND 64),
  -- The rater whose holds were released, when the submission was one of simarena's.
  rater_id INTEGER REFERENCES raters (id),
  received_at TEXT NOT NULL
) STRICT;
