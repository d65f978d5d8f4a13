// The batch page's attention-check figures (progress.json, polled while the page is open). They were counted from the
// judgments on each poll, 71–85 ms at a million judgments with checks at a tenth of them (scripts/bench/console-pages.ts);
// migration 082 keeps the counts with the answers. Each case checks the kept counts against that count from the rows.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attentionCounts } from '../../src/console/batch-progress.queries.js';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { signIn } from '../auth/session-helpers.js';
import { makeBatch, makeDialogue, makeJudgment, makePair, makeRater, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';
import { raterClient, seedBatch } from '../rating/rating-fixtures.js';

/** What progress.json counted before migration 082. */
function countedFromRows(db: Db, batchId: number): { n: number; passed: number } {
  const row = db
    .prepare<{ batchId: number }, { n: number; passed: number | null }>(
      `SELECT count(*) AS n, sum(j.correct) AS passed FROM pairs p CROSS JOIN judgments j
       WHERE p.batch_id = :batchId AND p.kind = 'attention' AND j.batch_id = p.batch_id AND j.pair_id = p.id AND j.question_index = 0`,
    )
    .get({ batchId });
  return { n: row?.n ?? 0, passed: row?.passed ?? 0 };
}

/** A batch with a regular, an onboarding and two attention pairs; `judge` answers them through the factories. */
function batchWithChecks(db: Db) {
  const runId = makeRun(db, { modes: ['SCRIPT', 'AGENTS'] });
  const { batchId, comparisonIds } = makeBatch(db);
  const pairOf = (kind: 'regular' | 'attention' | 'onboarding') => {
    const scenario = makeScenario(db);
    const a = makeDialogue(db, { runId, scenario, mode: 'SCRIPT', turns: makeTurns(4, 10) });
    const b = makeDialogue(db, { runId, scenario, mode: 'AGENTS', turns: makeTurns(4, 10) });
    return makePair(db, { batchId, comparisonId: kind === 'regular' ? (comparisonIds[0] ?? null) : null, dialogueA: a, dialogueB: b, kind, expected: kind === 'regular' ? undefined : 'a' });
  };
  return { batchId, regular: pairOf('regular'), onboarding: pairOf('onboarding'), attention: [pairOf('attention'), pairOf('attention')] };
}

describe('the attention-check counts of a batch', () => {
  it('follow answers added, a participant\'s data deleted and a judgment changed, equal to the count from the rows each time, with regular and onboarding answers left out', () => {
    const t = buildTestApp();
    const b = batchWithChecks(t.db);
    const raters = [0, 1, 2].map(() => makeRater(t.db, { batchId: b.batchId }));
    for (const [i, raterId] of raters.entries()) {
      makeJudgment(t.db, { pairId: b.regular, raterId, winner: 'a' });
      makeJudgment(t.db, { pairId: b.onboarding, raterId, winner: 'b' });
      // Rater 1 fails both checks, the others pass both.
      for (const pairId of b.attention) makeJudgment(t.db, { pairId, raterId, winner: i === 1 ? 'b' : 'a' });
    }
    expect(attentionCounts(t.db, b.batchId)).toEqual({ n: 6, passed: 4 });
    expect(attentionCounts(t.db, b.batchId)).toEqual(countedFromRows(t.db, b.batchId));

    t.db.prepare('DELETE FROM judgments WHERE rater_id = ?').run(raters[0]);
    expect(attentionCounts(t.db, b.batchId)).toEqual({ n: 4, passed: 2 });
    t.db.prepare("UPDATE judgments SET correct = 1 WHERE rater_id = ? AND pair_id = ? AND question_index = 0").run(raters[1], b.attention[0]);
    expect(attentionCounts(t.db, b.batchId)).toEqual({ n: 4, passed: 3 });
    expect(attentionCounts(t.db, b.batchId)).toEqual(countedFromRows(t.db, b.batchId));
  });

  it('migration 082, on a database migrated to 081 that holds attention answers, sets the counts to those of the rows', () => {
    const db = openDatabase(join(tempDir(), 'before-082.db'));
    migrate(db, listMigrations().filter((m) => m.version <= 81));
    const b = batchWithChecks(db);
    for (const winner of ['a', 'b', 'a'] as const) {
      const raterId = makeRater(db, { batchId: b.batchId });
      for (const pairId of b.attention) makeJudgment(db, { pairId, raterId, winner });
    }
    migrate(db);
    expect(attentionCounts(db, b.batchId)).toEqual({ n: 6, passed: 4 });
    expect(attentionCounts(db, b.batchId)).toEqual(countedFromRows(db, b.batchId));
  });

  it('GET /console/batches/:id/progress.json, after raters answered through the rater pages with attention checks on, gives the checks answered and the pass rate of the rows', async () => {
    const t = buildTestApp();
    const seeded = seedBatch(t.db, { samples: 6, settings: { perRaterCap: 4, judgmentsPerPair: 2, attentionChecks: { rate: 0.5, maxFailures: 5 } } });
    // Six samples, two judgments each, four a rater: three raters fill the batch.
    for (let r = 0; r < 3; r++) {
      const rater = raterClient(t.app);
      let page = await rater.startRating(seeded.publicId);
      for (let answered = 0; page.url.includes('/c/') && answered < 20; answered++) {
        // The second rater answers gold pairs wrongly (the page says nothing of which pairs are checks).
        const assignment = decodeURIComponent(/\/c\/([^/?]+)/.exec(page.url)?.[1] ?? '');
        const row = t.db
          .prepare<[string], { left_side: string; expected: string | null }>('SELECT a.left_side, p.expected FROM assignments a JOIN pairs p ON p.id = a.pair_id WHERE a.public_id = ?')
          .get(assignment);
        const right = row?.expected ? (row.expected === row.left_side ? 'left' : 'right') : 'left';
        const choice = r === 1 && row?.expected ? (right === 'left' ? 'right' : 'left') : right;
        const res = await rater.submit(page.res.text, { choice, reason: 'reads naturally' });
        expect(res.status).toBe(303);
        page = await rater.follow(String(res.headers.location));
      }
    }
    const rows = countedFromRows(t.db, seeded.batchId);
    expect(rows.n).toBeGreaterThan(0);
    expect(rows.passed).toBeLessThan(rows.n);
    const researcher = await signIn(t.app, t.db, 'researcher');
    const progress = (await researcher.agent.get(`/console/batches/${seeded.batchId}/progress.json`).expect(200)).body as { attention_checks: number; attention_pass_rate: number };
    expect(progress.attention_checks).toBe(rows.n);
    expect(progress.attention_pass_rate).toBeCloseTo(rows.passed / rows.n, 12);
  });
});
