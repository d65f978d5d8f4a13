// Reading the latest episode evaluation's scores of each dialogue: the run's paper table (`simarena evaluations
// paper`, and the analysis worker's paper section of a batch, through the same loadEvaluationData) and the
// role-play outcomes of the console's analysis page (on the request thread). Each asks, per score or per answer,
// for the dialogue's latest evaluation (`max(evaluation_id) … WHERE dialogue_id = ?`), which no index led on until
// migration 080: every ask walked the scores of every evaluation. Timed on the same file with the index and with it
// dropped, in the same process, with the results compared.
//   npx tsx scripts/bench/episode-scores.ts [--dialogues 1000] [--collected 300] [--evaluations 2]
import { roleplayOutcomes } from '../../src/analysis/roleplay-outcomes.queries.js';
import { loadRunPaperSection } from '../../src/analysis/paper-table.queries.js';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { DIMENSION_RANGES, DIMENSIONS } from '../../src/evaluation/episode-output.schema.js';
import { createEvaluationCallStore, insertEvaluation, saveEpisodeScores } from '../../src/evaluation/evaluation.queries.js';
import { insertDialogue, replaceTurns } from '../../src/generation/dialogue.queries.js';
import { insertSimpleRun } from '../../src/generation/run.queries.js';
import { insertPlayer } from '../../src/live/live.queries.js';
import { insertRater } from '../../src/rating/rating.queries.js';
import { newPublicId } from '../../src/web/ids.js';
import { benchDialogueTurns } from './support/bench-study.js';
import { type BenchCast, libraryDb } from './support/library-db.js';
import { medianMs } from './support/median-time.js';
import { numberFlag } from './support/number-flag.js';

const DIALOGUES = numberFlag('--dialogues', 1000);
const COLLECTED = numberFlag('--collected', 300);
const EVALUATIONS = numberFlag('--evaluations', 2);
const INDEX = 'episode_scores_dialogue';
const now = new Date('2026-12-04T10:00:00Z');

const { db, casts } = libraryDb('simarena-episode-scores-', now);

const started = performance.now();
const generatedRun = insertSimpleRun(db, { name: 'bench agents', kind: 'generation', state: 'complete', model: 'bench-model', modes: ['AGENTS'] }, now);
// A role-play batch as a researcher makes one; its collection run is the one it names.
const batch = createBatch(
  db,
  { name: 'Bench role-play', task: 'roleplay', run: 'bench-live', consent: 'Bench.', instructions: 'Bench.', pay: '£1.00', partner: { waitSeconds: 120 } },
  { actor: 'bench', now },
);
transitionBatch(db, batch.batchId, 'open', 'bench', now);
const collectionRun = db.prepare("SELECT id FROM runs WHERE name = 'bench-live'").pluck().get() as number;

/** Dialogues of a run, one per cast and sample, each with twelve turns; collected ones with two players who answered. */
function addDialogues(runId: number, count: number, collected: boolean): number[] {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const cast = casts[i % casts.length] as BenchCast;
    const mode = collected ? 'HUMANS' : 'AGENTS';
    const id = insertDialogue(db, { runId, ...cast, sampleIndex: Math.floor(i / casts.length), mode, model: collected ? 'human' : 'bench-model', origin: collected ? 'collected' : 'generated', state: 'complete' }, now);
    replaceTurns(db, id, benchDialogueTurns(i, 'AGENTS'));
    ids.push(id);
    if (!collected) continue;
    db.prepare("INSERT INTO collected_dialogues (dialogue_id, batch_id, task, outcome, created_at, ended_at) VALUES (?, ?, 'roleplay', 'complete', ?, ?)").run(id, batch.batchId, now.toISOString(), now.toISOString());
    for (const character of [1, 2]) {
      const rater = insertRater(db, { batchId: batch.batchId, publicId: newPublicId(), provider: 'link', participantId: newPublicId(), studyId: null, sessionId: newPublicId(), submitTo: null, userAgent: null, status: 'completed' }, now);
      insertPlayer(db, { raterId: rater, batchId: batch.batchId }, now);
      db.prepare("UPDATE live_players SET state = 'done', dialogue_id = ?, character = ?, outcome = 'finished', partner_guess = ?, goal_score = ?, matched_at = ? WHERE rater_id = ?").run(
        id, character, (i + character) % 3 === 0 ? 'ai' : 'person', 1 + ((i * 7 + character) % 10), now.toISOString(), rater,
      );
    }
  }
  return ids;
}

/** One episode evaluation of a run, every dialogue scored on every dimension for both characters, as the judge stores them. */
function evaluate(runId: number, dialogueIds: number[], name: string): void {
  const evaluationId = insertEvaluation(db, { name, kind: 'episode', runId, batchId: null, judgeModel: 'bench-judge', endpointName: 'default', baseUrl: 'http://127.0.0.1', temperature: 0, promptVersion: 'v1', promptHash: 'h', settings: {}, createdBy: 'bench' }, now);
  const calls = createEvaluationCallStore(db);
  for (const [k, dialogueId] of dialogueIds.entries()) {
    const callId = calls.insertCall({ evaluationId, item: `dialogue:${dialogueId}`, attempt: 1, via: 'chat', providerBatchId: null, requestHash: `h${dialogueId}`, request: JSON.stringify({ model: 'bench-judge', messages: [] }), response: {}, status: 'ok', error: null, httpStatus: 200, promptTokens: 0, completionTokens: 0, latencyMs: 0, baseUrl: 'http://127.0.0.1' }, now);
    const scores = ([1, 2] as const).flatMap((speaker) =>
      DIMENSIONS.map((dimension) => {
        const [low, high] = DIMENSION_RANGES[dimension];
        return { speaker, dimension, score: low + ((k * 3 + speaker + name.length) % (high - low + 1)), reasoning: 'The character pursued the goal.' };
      }),
    );
    saveEpisodeScores(db, evaluationId, dialogueId, callId, scores, null);
  }
}

let generated: number[] = [];
let collected: number[] = [];
db.transaction(() => {
  generated = addDialogues(generatedRun, DIALOGUES, false);
  collected = addDialogues(collectionRun, COLLECTED, true);
  for (let e = 0; e < EVALUATIONS; e++) {
    evaluate(generatedRun, generated, `bench generated ${e}`);
    evaluate(collectionRun, collected, `bench collected ${e}`);
  }
})();
const scoreRows = db.prepare('SELECT count(*) FROM episode_scores').pluck().get() as number;
console.log(`${DIALOGUES} generated and ${COLLECTED} collected dialogues, ${EVALUATIONS} evaluations of each run, ${scoreRows} episode scores (${((performance.now() - started) / 1000).toFixed(1)} s)`);

type Read = { what: string; read: (db: Db) => unknown };
const reads: Read[] = [
  { what: 'role-play outcomes (console analysis page)', read: (d) => roleplayOutcomes(d, batch.batchId) },
  { what: `paper table of the collection run (${COLLECTED} dialogues)`, read: (d) => loadRunPaperSection(d, collectionRun) },
  { what: `paper table of the generated run (${DIALOGUES} dialogues)`, read: (d) => loadRunPaperSection(d, generatedRun) },
];
/** The index's reads are timed over five runs; without it, once (they take seconds). */
function timeAll(times: number): { ms: number; result: string }[] {
  return reads.map((r) => {
    const result = JSON.stringify(r.read(db));
    return { ms: medianMs(() => r.read(db), times), result };
  });
}
const indexed = timeAll(5);
db.exec(`DROP INDEX ${INDEX}`);
const bare = timeAll(1);
for (const [i, r] of reads.entries()) {
  const a = indexed[i] as { ms: number; result: string };
  const b = bare[i] as { ms: number; result: string };
  if (a.result !== b.result) throw new Error(`${r.what}: the results differ with and without the index`);
  console.log(`${r.what}: ${a.ms.toFixed(1)} ms with the index against ${b.ms.toFixed(1)} ms without (${(b.ms / a.ms).toFixed(0)}x), same result`);
}
db.close();
