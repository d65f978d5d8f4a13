// The realism batch of test/fixtures/realism/realism-batch.json made real: its scenarios, a HUMANS, HUMAN_SCRIPT,
// SCRIPT and AGENTS dialogue of each, the batch formed by createBatch (a naturalness and a which-is-real question,
// its margin), one rater per fixture rater, and every fixture row answered through recordJudgment, the rating
// code's own write path (labels, winners and confidences as a rater's page stores them).
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { recordJudgment } from '../../src/rating/record-judgment.js';
import { newPublicId } from '../../src/web/ids.js';
import { launchReady, makeDialogue, makeRater, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import type { RealismFixture } from './realism-fixture.js';

const AT = new Date('2026-04-01T10:00:00.000Z');

export function seedFixtureBatch(db: Db, f: RealismFixture): { batchId: number } {
  const people = makeRun(db, { name: 'people', model: 'human', modes: ['HUMANS', 'HUMAN_SCRIPT'] });
  const models = makeRun(db, { name: 'models', model: 'gpt-test', modes: ['SCRIPT', 'AGENTS'] });
  const scenarios = [...new Set(f.rows.map((r) => r.scenario))];
  for (const id of scenarios) {
    const scenario = makeScenario(db, { id, category: 'cooperative' });
    for (const condition of new Set(f.design.comparisons.flat())) {
      const [mode, model] = condition.split(':') as ['HUMANS' | 'HUMAN_SCRIPT' | 'SCRIPT' | 'AGENTS', string];
      makeDialogue(db, { runId: model === 'human' ? people : models, scenario, mode, model, turns: makeTurns(6, 8) });
    }
  }
  const { batchId } = createBatch(
    db,
    launchReady({
      name: 'realism fixture',
      runs: ['people', 'models'],
      comparisons: f.design.comparisons,
      judgmentsPerPair: f.design.judgments_per_pair,
      perRaterCap: 100,
      questions: [
        { id: 'natural', text: 'Which conversation sounds more natural?', reason: 'off' },
        { id: 'real', kind: 'which-is-real', text: 'One of these happened between two real people. Which one?', real: f.design.real, reason: 'off' },
      ],
      equivalenceMargin: f.design.margin,
      provider: { kind: 'link' },
    }),
    { actor: 'test', now: AT },
  );
  transitionBatch(db, batchId, 'open', 'test', AT);
  const pairOf = new Map(
    (db.prepare('SELECT p.id, p.scenario_id, c.position FROM pairs p JOIN comparisons c ON c.id = p.comparison_id WHERE p.batch_id = :b').all({ b: batchId }) as { id: number; scenario_id: string; position: number }[]).map(
      (p) => [`${p.scenario_id}|${p.position}`, p.id],
    ),
  );
  const raters = new Map<string, number>();
  for (const r of f.rows) {
    const raterId = raters.get(r.rater) ?? makeRater(db, { batchId });
    raters.set(r.rater, raterId);
    const pairId = pairOf.get(`${r.scenario}|${r.comparison}`);
    if (pairId === undefined) throw new Error(`no pair for ${r.scenario} comparison ${r.comparison}`);
    const [a] = f.design.comparisons[r.comparison] as [string, string];
    const realSide = a === f.design.real ? 'a' : 'b';
    const synthetic = realSide === 'a' ? 'b' : 'a';
    const choice = (winner: 'a' | 'b') => (winner === r.left ? 'left' : 'right');
    const publicId = newPublicId();
    db.prepare(
      `INSERT INTO assignments (public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at)
       VALUES (:publicId, :batchId, :pairId, :raterId, :left, 'leased', :at, :expires)`,
    ).run({ publicId, batchId, pairId, raterId, left: r.left, at: AT.toISOString(), expires: new Date(AT.getTime() + 3_600_000).toISOString() });
    const outcome = recordJudgment(
      db,
      raterId,
      {
        assignmentPublicId: publicId,
        choice: choice(r.natural_synthetic === 1 ? synthetic : realSide),
        reason: null,
        activeMs: 20_000,
        laterAnswers: [{ choice: choice(r.correct === 1 ? realSide : synthetic), reason: null, confidence: r.confidence || null }],
      },
      new Date(AT.getTime() + 60_000),
    );
    if (outcome.kind !== 'stored') throw new Error(`row not stored: ${JSON.stringify(outcome)}`);
  }
  return { batchId };
}
