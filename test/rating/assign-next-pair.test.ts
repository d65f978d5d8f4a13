import { describe, expect, it } from 'vitest';
import { createBatch } from '../../src/batches/create-batch.js';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import type { Db } from '../../src/db/connection.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';
import { assignNextPair, chooseLeftSide } from '../../src/rating/assign-next-pair.js';
import { getAssignment, markAssignmentViewed } from '../../src/rating/rating.queries.js';
import { recordJudgment } from '../../src/rating/record-judgment.js';
import { launchReady, makeDialogue, makeRater, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';
import { MODEL, seedBatch } from './rating-fixtures.js';

const T0 = new Date('2026-02-01T09:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

function leaseFor(db: Db, raterId: number, now = T0, seed = raterId) {
  const outcome = assignNextPair(db, raterId, { now, random: seededRandom(seed) });
  return outcome.kind === 'assigned' ? outcome.assignment : null;
}

function liveCounts(db: Db, batchId: number) {
  return db
    .prepare<{ batchId: number }, { pair_id: number; n: number }>(
      "SELECT p.id AS pair_id, (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.state IN ('leased', 'answered')) AS n FROM pairs p WHERE p.batch_id = :batchId AND p.kind = 'regular' ORDER BY p.id",
    )
    .all({ batchId })
    .map((r) => r.n);
}

describe('assignNextPair', () => {
  it('assignNextPair, for raters arriving one after another, serves the pairs with the fewest judgments first so the batch fills evenly', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 3 });
    for (let i = 0; i < 6; i += 1) {
      const rater = makeRater(db, { batchId: seeded.batchId });
      expect(leaseFor(db, rater)).not.toBeNull();
      const counts = liveCounts(db, seeded.batchId);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    }
    expect(liveCounts(db, seeded.batchId)).toEqual([2, 2, 2]);
  });

  it('assignNextPair, for many raters on one pair, balances the condition shown on the left to within one at every step', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 1, settings: { judgmentsPerPair: 11 } });
    let leftA = 0;
    let leftB = 0;
    for (let i = 0; i < 11; i += 1) {
      const rater = makeRater(db, { batchId: seeded.batchId });
      const a = leaseFor(db, rater, T0, i + 1);
      if (a?.left_side === 'a') leftA += 1;
      else leftB += 1;
      expect(Math.abs(leftA - leftB)).toBeLessThanOrEqual(1);
      // Half of them answer at once; the balance must hold over leases and accepted judgments together.
      if (a && i % 2 === 0) expect(recordJudgment(db, rater, { assignmentPublicId: a.public_id, choice: 'left', reason: null, activeMs: 1 }, T0).kind).toBe('stored');
    }
    expect(leftA + leftB).toBe(11);
    const pair = db.prepare('SELECT accepted, accepted_left_a FROM pairs').get() as { accepted: number; accepted_left_a: number };
    expect(pair.accepted).toBe(6);
    expect(Math.abs(2 * pair.accepted_left_a - pair.accepted)).toBeLessThanOrEqual(2);
  });

  it('chooseLeftSide, when both sides have been shown equally often, picks by the random source; otherwise the side shown less', () => {
    expect(chooseLeftSide({ accepted: 3, accepted_left_a: 1, live: 0, live_left_a: 0 }, () => 0.9)).toBe('a');
    expect(chooseLeftSide({ accepted: 1, accepted_left_a: 1, live: 2, live_left_a: 1 }, () => 0.1)).toBe('b');
    expect(chooseLeftSide({ accepted: 2, accepted_left_a: 1, live: 0, live_left_a: 0 }, () => 0.1)).toBe('a');
    expect(chooseLeftSide({ accepted: 2, accepted_left_a: 1, live: 0, live_left_a: 0 }, () => 0.9)).toBe('b');
  });

  it('assignNextPair, when a rater already holds a live lease, gives the same assignment back instead of a new one', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 3 });
    const rater = makeRater(db, { batchId: seeded.batchId });
    const first = leaseFor(db, rater);
    const again = assignNextPair(db, rater, { now: at(1), random: seededRandom(9) });
    expect(again).toMatchObject({ kind: 'assigned', resumed: true, assignment: { public_id: first?.public_id } });
    expect(db.prepare('SELECT count(*) FROM assignments').pluck().get()).toBe(1);
  });

  it('assignNextPair, when a pair is held to K by live leases, gives it to nobody else until a lease expires (a served lease after leaseMinutes, an unserved one after two)', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 1, settings: { judgmentsPerPair: 1, leaseMinutes: 10 } });
    const holder = makeRater(db, { batchId: seeded.batchId });
    const waiting = makeRater(db, { batchId: seeded.batchId });
    const held = leaseFor(db, holder);
    if (!held) throw new Error('expected an assignment');
    expect(held.expires_at).toBe(at(2).toISOString());
    expect(markAssignmentViewed(db, held, T0, 10)).toBe(at(10).toISOString());
    // Served again later: the lease keeps the end its first serving gave it.
    const reread = getAssignment(db, held.id);
    if (!reread) throw new Error('expected the assignment');
    expect(markAssignmentViewed(db, reread, at(1), 10)).toBe(at(10).toISOString());
    expect(assignNextPair(db, waiting, { now: at(9), random: seededRandom(1) })).toEqual({ kind: 'done', reason: 'exhausted', judged: 0 });
    const after = assignNextPair(db, waiting, { now: at(11), random: seededRandom(1) });
    expect(after.kind).toBe('assigned');
    expect(db.prepare('SELECT state FROM assignments ORDER BY id').pluck().all()).toEqual(['expired', 'leased']);
  });

  it('assignNextPair, within a second of the last release of lapsed holds in the batch, frees a lapsed pair only after it, and never hands its holder the lapsed lease again', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 2, settings: { judgmentsPerPair: 1, leaseMinutes: 10 } });
    const holder = makeRater(db, { batchId: seeded.batchId });
    const other = makeRater(db, { batchId: seeded.batchId });
    const late = makeRater(db, { batchId: seeded.batchId });
    const held = leaseFor(db, holder);
    if (!held) throw new Error('expected an assignment');
    // The other pair is taken just before the holder's unserved lease lapses (two minutes), which releases nothing yet.
    const justBefore = new Date(at(2).getTime() - 400);
    expect(leaseFor(db, other, justBefore)?.pair_id).not.toBe(held.pair_id);
    // 600 ms later the lease has lapsed, but the batch's holds were released 600 ms ago: its pair is not free yet.
    const lapsed = new Date(at(2).getTime() + 200);
    expect(assignNextPair(db, late, { now: lapsed, random: seededRandom(1) })).toEqual({ kind: 'done', reason: 'exhausted', judged: 0 });
    // Its holder, though, is not handed the lapsed lease back: it is released when touched, and the holder gets a new pair
    // only if one is free (none is: K = 1 and the other pair is taken), never the lapsed one.
    expect(assignNextPair(db, holder, { now: lapsed, random: seededRandom(1) })).toMatchObject({ kind: 'done' });
    expect(db.prepare('SELECT state FROM assignments WHERE id = ?').pluck().get(held.id)).toBe('expired');
    // A second after the last release the batch's lapsed holds go, and the pair is served again.
    const rater4 = makeRater(db, { batchId: seeded.batchId });
    expect(leaseFor(db, rater4, new Date(at(2).getTime() + 700))?.pair_id).toBe(held.pair_id);
  });

  it('assignNextPair never gives a rater the same pair twice, and stops at the per-rater cap', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 4, settings: { perRaterCap: 3 } });
    const rater = makeRater(db, { batchId: seeded.batchId });
    const seen: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const a = leaseFor(db, rater, at(i), i + 5);
      if (!a) throw new Error('expected an assignment');
      seen.push(a.pair_id);
      recordJudgment(db, rater, { assignmentPublicId: a.public_id, choice: 'right', reason: null, activeMs: 10 }, at(i));
    }
    expect(new Set(seen).size).toBe(3);
    expect(assignNextPair(db, rater, { now: at(5), random: seededRandom(1) })).toEqual({ kind: 'done', reason: 'cap', judged: 3 });
  });

  it('assignNextPair, with two comparisons over the same scenario samples, gives a rater one pair per sample unless the batch allows more', () => {
    const { db } = createTestDb();
    const runName = 'three-modes';
    const runId = makeRun(db, { name: runName, model: MODEL, modes: ['SCRIPT', 'AGENTS', 'MINDREADERS'] });
    for (let i = 0; i < 2; i += 1) {
      const scenario = makeScenario(db);
      for (const mode of ['SCRIPT', 'AGENTS', 'MINDREADERS'] as const) makeDialogue(db, { runId, scenario, mode, model: MODEL, turns: makeTurns(4) });
    }
    const settings = (allowSameSample: boolean) => ({
      name: `two comparisons${allowSameSample ? ', same sample allowed' : ''}`,
      runs: [runName],
      comparisons: [
        [`SCRIPT:${MODEL}`, `AGENTS:${MODEL}`],
        [`SCRIPT:${MODEL}`, `MINDREADERS:${MODEL}`],
      ],
      allowSameSample,
    });
    for (const allow of [false, true]) {
      const created = createBatch(db, launchReady(settings(allow)), { actor: 'test', now: T0 });
      transitionBatch(db, created.batchId, 'open', 'test', T0);
      expect(created.pairs).toHaveLength(4);
      const rater = makeRater(db, { batchId: created.batchId });
      let served = 0;
      for (let i = 0; i < 5; i += 1) {
        const a = leaseFor(db, rater, at(i), i + 1);
        if (!a) break;
        served += 1;
        recordJudgment(db, rater, { assignmentPublicId: a.public_id, choice: 'left', reason: null, activeMs: 5 }, at(i));
      }
      expect(served).toBe(allow ? 4 : 2);
    }
  });

  it('assignNextPair, on a paused batch or for a rater who has not consented, hands out nothing', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 2 });
    const consenting = makeRater(db, { batchId: seeded.batchId, status: 'consent' });
    expect(assignNextPair(db, consenting, { now: T0, random: seededRandom(1) })).toEqual({ kind: 'not-rating', status: 'consent' });
    transitionBatch(db, seeded.batchId, 'pause', 'test', T0);
    const rating = makeRater(db, { batchId: seeded.batchId });
    expect(assignNextPair(db, rating, { now: T0, random: seededRandom(1) })).toEqual({ kind: 'batch-not-open', state: 'paused' });
    expect(db.prepare('SELECT count(*) FROM assignments').pluck().get()).toBe(0);
  });
});

describe('recordJudgment', () => {
  it('recordJudgment of a gold pair judges the answer by the dialogue it names, whichever side it was shown on', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 3, settings: { attentionChecks: { rate: 0.5, maxFailures: 5 } } });
    const pair = db.prepare("SELECT id, expected FROM pairs WHERE kind = 'attention' LIMIT 1").get() as { id: number; expected: 'a' | 'b' };
    for (const leftSide of ['a', 'b'] as const) {
      const rater = makeRater(db, { batchId: seeded.batchId });
      const publicId = `gold-${leftSide}`;
      db.prepare(
        "INSERT INTO assignments (public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at) VALUES (:publicId, :batchId, :pairId, :raterId, :leftSide, 'leased', :t, :e)",
      ).run({ publicId, batchId: seeded.batchId, pairId: pair.id, raterId: rater, leftSide, t: T0.toISOString(), e: at(20).toISOString() });
      const choice = leftSide === pair.expected ? 'left' : 'right';
      expect(recordJudgment(db, rater, { assignmentPublicId: publicId, choice, reason: null, activeMs: 3 }, at(1))).toMatchObject({ kind: 'stored', gold: 'attention', correct: true });
      expect(db.prepare('SELECT attention_answered, attention_failures FROM raters WHERE id = :id').get({ id: rater })).toEqual({ attention_answered: 1, attention_failures: 0 });
    }
  });

  it('recordJudgment of a double submit and of a stolen assignment stores nothing more', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 2 });
    const owner = makeRater(db, { batchId: seeded.batchId });
    const thief = makeRater(db, { batchId: seeded.batchId });
    const a = leaseFor(db, owner);
    const input = { assignmentPublicId: a?.public_id ?? '', choice: 'left' as const, reason: null, activeMs: 999_999_999 };
    expect(recordJudgment(db, owner, input, at(2)).kind).toBe('stored');
    expect(recordJudgment(db, owner, { ...input, choice: 'right' }, at(3))).toEqual({ kind: 'duplicate' });
    expect(recordJudgment(db, thief, input, at(3))).toMatchObject({ kind: 'rejected', status: 404 });
    expect(db.prepare('SELECT choice, active_ms FROM judgments').all()).toEqual([{ choice: 'left', active_ms: 120_000 }]);
  });
});
