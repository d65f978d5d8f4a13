// Creating a rating batch (createBatch: the console's form and `simarena batches create`) runs in one IMMEDIATE write
// transaction, so raters' answers on the same database wait for it. Inside it the runs' dialogues are read with a
// count of each one's visible turns (listSampleDialogues), which reads every turn; the pair set's writing read them a
// second time until 2026-12-04 (191 ms against 143 ms for the whole creation at 10,000 dialogues, a scratch run of the
// code before and after). Prints the creation's time against that one read, in the same process on the same file.
//   npx tsx scripts/bench/create-batch.ts [--dialogues 10000]
import { listSampleDialogues } from '../../src/batches/batch.queries.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { insertDialogue } from '../../src/generation/dialogue.queries.js';
import { insertSimpleRun } from '../../src/generation/run.queries.js';
import { type BenchCast, libraryDb } from './support/library-db.js';
import { median, medianMs } from './support/median-time.js';
import { numberFlag } from './support/number-flag.js';

const DIALOGUES = numberFlag('--dialogues', 10_000);
const TURNS = 20;
const now = new Date('2026-12-04T10:00:00Z');

const { db, casts } = libraryDb('simarena-create-batch-', now);
const runId = insertSimpleRun(db, { name: 'bench-create', kind: 'generation', state: 'complete', model: 'm', modes: ['AGENTS', 'SCRIPT'] }, now);
db.transaction(() => {
  let first = 0;
  for (let i = 0; i < DIALOGUES; i++) {
    const cast = casts[(i >> 1) % casts.length] as BenchCast;
    const id = insertDialogue(db, { runId, ...cast, sampleIndex: i >> 1, mode: i % 2 ? 'SCRIPT' : 'AGENTS', model: 'm', origin: 'generated', state: 'complete' }, now);
    if (i === 0) first = id;
  }
  // Each dialogue's turns, the last one its leaving (dialogue ids are consecutive within this transaction).
  db.prepare(
    `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < :turns - 1)
     INSERT INTO turns (dialogue_id, idx, speaker, action, text)
     SELECT :first + n / ${TURNS}, n % ${TURNS}, 1 + n % 2, CASE WHEN n % ${TURNS} = ${TURNS - 1} THEN 'leave' ELSE 'speak' END, printf('%.200c', 'w') FROM seq`,
  ).run({ turns: DIALOGUES * TURNS, first });
})();

const read = medianMs(() => listSampleDialogues(db, [runId]), 5, { warm: true });
const creations: number[] = [];
for (let k = 0; k < 4; k++) {
  const started = performance.now();
  createBatch(
    db,
    {
      name: `bench batch ${k}`, runs: ['bench-create'], comparisons: [['SCRIPT:m', 'AGENTS:m']], judgmentsPerPair: 1, perRaterCap: 20,
      onboarding: { pairs: 2, threshold: 0.5 }, attentionChecks: { rate: 0.1, maxFailures: 2 }, pay: '£9.00', plannedRaters: 300,
    },
    { actor: 'bench', now },
  );
  creations.push(performance.now() - started);
}
const create = median(creations.slice(1));
console.log(
  `${DIALOGUES.toLocaleString('en')} dialogues of ${TURNS} turns: createBatch ${create.toFixed(0)} ms (median of 3 after a first), ` +
    `one read of the runs' dialogues ${read.toFixed(1)} ms = ${((100 * read) / create).toFixed(0)}% of it`,
);
