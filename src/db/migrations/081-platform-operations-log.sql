-- The console's log of what was sent to Prolific or MTurk shows a batch's operations newest first, a page at a time
-- (src/recruiting/platform-operations.queries.ts). A batch settled on MTurk has an approval and a bonus per worker: at
-- 50,000 workers the unpaged log was 100,000 rows, 1.2 s to read and render on the request thread and a 28.5 MB page
-- (scripts/bench/operations-log.ts). This index gives the page's order without sorting the batch's operations.
CREATE INDEX platform_operations_log ON platform_operations (batch_id, platform, id);
