// The console's log of what was sent to MTurk or Prolific (the MTurk, Prolific and Prolific settle pages), read and
// rendered on the request thread. A batch settled on MTurk records an approval and a bonus per worker; the log showed
// every one of them. Times the log as the pages now read it (a page of 50, newest first, migration 081, under a sum
// by kind and state) against the whole log read and rendered as before, in the same process, on the same file.
//   npx tsx scripts/bench/operations-log.ts [--workers 50000]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ejs from 'ejs';
import { operationLogOf } from '../../src/console/platform-pages.js';
import { formatTime } from '../../src/console/format-time.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { formatMinor } from '../../src/recruiting/prolific-plan.js';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { benchDir } from './support/bench-dir.js';
import { buildStudy } from './support/bench-study.js';
import { medianMs } from './support/median-time.js';
import { numberFlag } from './support/number-flag.js';

const WORKERS = numberFlag('--workers', 50_000);

const dir = benchDir('simarena-operations-log-');
const db = openDatabase(join(dir, 'log.db'));
migrate(db);
const study = await buildStudy(db, 10, { provider: { kind: 'mturk' }, pay: '$3.00' });
const started = performance.now();
// What settling WORKERS workers records, each an approval then a bonus, confirmed (bulk SQL: the read is what is timed).
db.prepare(
  `WITH RECURSIVE w(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM w WHERE n < :workers), k(kind, amount) AS (VALUES ('approve', NULL), ('bonus', 25))
   INSERT INTO platform_operations (platform, batch_id, kind, participant_id, assignment_id, amount_minor, currency, idempotency_key, state, attempts, request, answer,
     actor, created_at, sent_at, answered_at)
   SELECT 'mturk', :batchId, k.kind, 'A' || w.n || 'WORKER', 'ASSIGN' || w.n, k.amount, CASE WHEN k.amount IS NULL THEN NULL ELSE 'USD' END, k.kind || ':A' || w.n || 'WORKER',
     'confirmed', 1, json_object('AssignmentId', 'ASSIGN' || w.n), '{}', 'admin@example.org', :now, :now, :now
   FROM w CROSS JOIN k ORDER BY w.n, k.kind`,
).run({ workers: WORKERS, batchId: study.batchId, now: new Date().toISOString() });
const total = WORKERS * 2;
console.log(`${total.toLocaleString('en')} operations of ${WORKERS.toLocaleString('en')} workers recorded (${((performance.now() - started) / 1000).toFixed(1)} s)`);

const partial = fileURLToPath(new URL('../../views/console/_prolific-log.ejs', import.meta.url));
const template = ejs.compile(readFileSync(partial, 'utf8'), { filename: partial });
const render = (locals: Record<string, unknown>) => template({ ...locals, platformLabel: 'MTurk', formatTime, formatMinor });
let pagedBytes = 0;
let wholeBytes = 0;
const paged = () => {
  pagedBytes = render({ ...operationLogOf(db, study.batchId, 'mturk', { page: 1, perPage: 50, offset: 0, keep: '' }) }).length;
};
// Before: every operation, newest first, on one page (the rows as listBatchOperations reads them).
const whole = () => {
  const operations = listBatchOperations(db, study.batchId, 'mturk').reverse();
  wholeBytes = render({ operations, logPage: { page: 1, perPage: operations.length, offset: 0, keep: '' }, logTotal: operations.length, tallies: [] }).length;
};

const pagedMs = medianMs(paged, 5, { warm: true });
const wholeMs = medianMs(whole, 3, { warm: true });
console.log(
  `log of ${total.toLocaleString('en')} operations: a page of 50 with the sums ${pagedMs.toFixed(1)} ms (${(pagedBytes / 1024).toFixed(0)} KB) ` +
    `against the whole log ${wholeMs.toFixed(1)} ms (${(wholeBytes / 1e6).toFixed(1)} MB): ${(wholeMs / pagedMs).toFixed(0)}x`,
);
