import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { BatchSettingsInput } from '../../src/batches/batch.schema.js';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { checkBatchCapacity } from '../../src/batches/batch-capacity.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { futilityBoundaries, futilityDrift, twoSidedBoundaries } from '../../src/numbers/group-sequential.js';
import { normalCdf } from '../../src/numbers/normal.js';
import type { Db } from '../../src/db/connection.js';
import { signIn } from '../auth/session-helpers.js';
import { launchReady } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';
import { tempDir } from '../helpers/test-db.js';
import { assignmentOf, checkInvariants, count, MODEL, raterClient, seedThreeModeRun, testApp, threadedApp } from './rating-fixtures.js';

// Reallocation over HTTP (issue 44): a batch of two comparisons, SCRIPT vs AGENTS (which every rater decides for
// SCRIPT: it stops early) and AGENTS vs MINDREADERS (decided by the pair, half each way: it runs to its end). Ten more
// scenario samples were generated after the batch was formed: with `reallocate`, the judgments the stopped
// comparison no longer needs buy pairs of them for the open one. Raters arrive one after another and each does every
// comparison they were promised, until the study is full.

const SAMPLES = 24;
const EXTRA = 10;
/**
 * Two pairs a rater, 48 raters planned: a look waits for 10 raters behind its pairs when the batch is designed for
 * 10 or more (src/batches/sequential-look.ts), so the first look at 6 pairs (12 judgments) is taken on time only when
 * raters judge one pair of each comparison.
 */
const MANY_RATERS = { perRaterCap: 2, plannedRaters: 48, addressLimits: { ratersPerWindow: 100, windowMinutes: 60, activeRaters: 5 } };

function seed(db: Db, stopping: BatchSettingsInput['stopping'], overrides: Partial<BatchSettingsInput> = {}) {
  const { runName, sample } = seedThreeModeRun(db, SAMPLES);
  const at = new Date('2026-01-15T12:00:00.000Z');
  const created = createBatch(
    db,
    launchReady({
      name: 'two comparisons, one decided early',
      runs: [runName],
      comparisons: [
        [`SCRIPT:${MODEL}`, `AGENTS:${MODEL}`],
        [`AGENTS:${MODEL}`, `MINDREADERS:${MODEL}`],
      ],
      judgmentsPerPair: 2,
      perRaterCap: 8,
      plannedRaters: 12,
      stopping,
      provider: { kind: 'link', completionCodes: { completed: 'DONE-RE', partial: 'PARTIAL-RE' } },
      ...overrides,
    } satisfies BatchSettingsInput),
    { actor: 'test', now: at },
  );
  transitionBatch(db, created.batchId, 'open', 'test', at);
  // Generated after the batch was formed: samples no comparison has a pair of.
  const extra = Array.from({ length: EXTRA }, sample);
  return { ...created, extra };
}

type Page = { url: string; res: { text: string } };

/** SCRIPT vs AGENTS: SCRIPT; AGENTS vs MINDREADERS: dialogue a on even pair ids, b on odd ones (no real preference). */
async function answer(db: Db, rater: ReturnType<typeof raterClient>, page: Page): Promise<Page> {
  const assignment = assignmentOf(db, page.url);
  if (!assignment) throw new Error(`not a comparison page: ${page.url}`);
  const conditionA = db.prepare('SELECT c.condition_a FROM pairs p JOIN comparisons c ON c.id = p.comparison_id WHERE p.id = :id').pluck().get({ id: assignment.pair_id });
  const pick = conditionA === `SCRIPT:${MODEL}` || assignment.pair_id % 2 === 0 ? 'a' : 'b';
  const res = await rater.submit(page.res.text, { choice: assignment.left_side === pick ? 'left' : 'right' });
  expect(res.status).toBe(303);
  return rater.follow(String(res.headers.location));
}

/** A rater goes through every comparison promised to them, from the page they are on, and gets the completion code. */
async function finishPromised(db: Db, rater: ReturnType<typeof raterClient>, start: Page): Promise<void> {
  let page = start;
  while (assignmentOf(db, page.url)) page = await answer(db, rater, page);
  expect(page.url).toMatch(/\/done\?rt=/);
  expect(page.res.text).toContain('DONE-RE');
}

/** Raters one after another, each through every comparison promised, until a newcomer finds the study full or closed. */
async function rateUntilFull(app: Parameters<typeof raterClient>[0], db: Db, publicId: string): Promise<number> {
  for (let raters = 0; raters < 80; raters++) {
    const rater = raterClient(app);
    const entry = await rater.follow(`/r/${publicId}`);
    if (!/name="decision"/.test(entry.res.text)) return raters;
    await finishPromised(db, rater, await rater.startRating(publicId, '', entry));
  }
  throw new Error('the study never filled');
}

/**
 * The undecided comparison first, K = 1, no plannedRaters (the budget is the 6 raters the 48 pairs need), raters one
 * after another until the study is full, assignment's ties drawn from a fixed seed. Both comparisons take their first
 * look at 6 of 24 pairs; SCRIPT vs AGENTS stops at its second (12 of 24), before the undecided one reaches 12, and its
 * 12 unstarted pairs buy the 10 extra samples' pairs for the undecided comparison (24 + 10 = 34 pairs).
 */
async function undecidedFirstUntilFull(stopping: BatchSettingsInput['stopping']) {
  const built = testApp({ random: seededRandom(1) });
  const batch = seed(built.db, stopping, {
    comparisons: [
      [`AGENTS:${MODEL}`, `MINDREADERS:${MODEL}`],
      [`SCRIPT:${MODEL}`, `AGENTS:${MODEL}`],
    ],
    judgmentsPerPair: 1,
    plannedRaters: null,
  });
  const raters = await rateUntilFull(built.app, built.db, batch.publicId);
  return { ...built, batch, raters };
}

describe('reallocation in a sequential batch over HTTP', () => {
  it('POST /r/:batch/c/:assignment, when one comparison stops early under reallocate, gives the open comparison new reachable pairs within K and the budget', async () => {
    const { app, db, dbPath } = testApp({ random: seededRandom(1) });
    const batch = seed(db, { lookEvery: 6, alpha: 0.05, spending: 'pocock', reallocate: true }, MANY_RATERS);
    const raters = await rateUntilFull(app, db, batch.publicId);

    const comparisons = db.prepare('SELECT id, position, stop_reason FROM comparisons WHERE batch_id = :b ORDER BY position').all({ b: batch.batchId }) as { id: number; stop_reason: string }[];
    expect(comparisons.map((c) => c.stop_reason)).toEqual(['efficacy', 'final']);
    const moves = db.prepare('SELECT * FROM sequential_reallocations WHERE batch_id = :b ORDER BY id').all({ b: batch.batchId }) as Record<string, unknown>[];
    expect(moves).toHaveLength(2);
    const [first, second] = moves;
    // SCRIPT vs AGENTS stops at its first look, which waited for 10 completed pairs (a clustered variance needs 10
    // raters and 10 pairs); 11 of its 24 pairs were handed out (no more than that look needed: issue 51), and the 13
    // others free 26 judgments, more than the 10 extra samples can use.
    const firstLook = db.prepare('SELECT completed_pairs, raters, statistic, decision FROM sequential_looks WHERE comparison_id = :c AND look = 1').get({ c: comparisons[0]?.id });
    expect(firstLook).toEqual({ completed_pairs: 10, raters: 20, statistic: 'rater-clustered', decision: 'efficacy' });
    expect(first).toMatchObject({ stopped_comparison_id: comparisons[0]?.id, stop_reason: 'efficacy', judgments_per_pair: 2, freed_judgments: 26, limited_by: 'no-unused-pair', budget_raters: 48 });
    const added = first?.added_pairs as number;
    expect(added).toBe(EXTRA);
    expect(added * 2).toBeLessThanOrEqual(first?.freed_judgments as number);
    expect(first?.raters_after as number).toBeLessThanOrEqual(48);
    // The open comparison's own stop, at its last look, had nowhere to give anything: recorded as such.
    expect(second).toMatchObject({ stopped_comparison_id: comparisons[1]?.id, stop_reason: 'final', added_pairs: 0 });

    // The added pairs belong to the open comparison, are made of the extra samples, and each reached exactly K
    // distinct raters (reachable); no pair anywhere has more than K judgments, none was judged twice by one rater.
    const newPairs = db.prepare('SELECT id, comparison_id, scenario_id, accepted FROM pairs WHERE reallocation_id = :r').all({ r: first?.id }) as { id: number; comparison_id: number; scenario_id: string; accepted: number }[];
    expect(newPairs).toHaveLength(added);
    for (const pair of newPairs) {
      expect(pair.comparison_id).toBe(comparisons[1]?.id);
      expect(batch.extra).toContain(pair.scenario_id);
      expect(pair.accepted).toBe(2);
    }
    expect(count(db, 'SELECT count(DISTINCT rater_id) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE p.reallocation_id = :r', { r: first?.id })).toBeGreaterThanOrEqual(2);
    checkInvariants(db, batch.batchId, 2);

    // Money: no more judgments than the batch was formed for, and every rater paid (each got the completed code):
    // 45 raters of the 48 planned, none finishing short of their two.
    expect(raters).toBe(45);
    expect(count(db, "SELECT count(*) FROM raters WHERE status <> 'no_consent'")).toBe(raters);
    expect(db.prepare("SELECT promised, regular_judged FROM raters WHERE finish_reason = 'exhausted'").raw().all()).toEqual([]);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBeLessThanOrEqual(SAMPLES * 2 * 2);

    // The capacity check counts the pairs not stopped short (completed ones and the new ones), within plannedRaters:
    // the 10 SCRIPT vs AGENTS pairs completed before the stop and the other comparison's 24 + the new ones.
    expect(checkBatchCapacity(db, batch.batchId)).toMatchObject({ ok: true, pairs: 10 + SAMPLES + added });

    // The open comparison's later looks were taken over its new maximum.
    const maxima = db.prepare('SELECT DISTINCT max_pairs FROM sequential_looks WHERE comparison_id = :c ORDER BY look').pluck().all({ c: comparisons[1]?.id });
    expect(maxima).toContain(SAMPLES + added);
    expect(db.prepare('SELECT state FROM batches WHERE id = :b').pluck().get({ b: batch.batchId })).toBe('closed');

    // The judgments export names the reallocation that added each pair, and nothing for the pairs the batch formed.
    const csvPath = join(tempDir(), 'judgments.csv');
    expect((await cli(['export', '--batch', String(batch.batchId), '--format', 'judgments-csv', '--out', csvPath], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' })).code).toBe(0);
    const exported = parse(readFileSync(csvPath), { columns: true }) as { pair_id: string; reallocation_id: string }[];
    const addedIds = new Set(newPairs.map((p) => String(p.id)));
    expect(exported.filter((r) => r.reallocation_id !== '').map((r) => r.pair_id).sort()).toEqual(exported.filter((r) => addedIds.has(r.pair_id)).map((r) => r.pair_id).sort());
    expect(exported.filter((r) => addedIds.has(r.pair_id)).every((r) => r.reallocation_id === String(first?.id))).toBe(true);
    expect(exported.filter((r) => addedIds.has(r.pair_id))).toHaveLength(added * 2);

    // Audit, `batches show`, the analysis report and the console say what moved.
    const audit = db.prepare("SELECT details FROM audit_log WHERE action = 'comparison.reallocate' ORDER BY id").pluck().all() as string[];
    expect(audit).toHaveLength(2);
    expect(JSON.parse(audit[0] ?? '{}')).toMatchObject({ reason: 'efficacy', pairsAdded: added, added: { [`AGENTS:${MODEL} vs MINDREADERS:${MODEL}`]: added } });
    const line = `reallocation after SCRIPT:${MODEL} vs AGENTS:${MODEL} stopped (efficacy): ${first?.freed_judgments} judgments no longer needed`;
    const shown = await cli(['batches', 'show', String(batch.batchId)], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    expect(shown.stdout).toContain(line);
    expect(shown.stdout).toContain(`new pairs given: ${added} pairs to AGENTS:${MODEL} vs MINDREADERS:${MODEL}`);
    expect(shown.stdout).toContain(`reallocation after AGENTS:${MODEL} vs MINDREADERS:${MODEL} stopped (final): no judgment was left unbought, so nothing moved`);
    const analysis = await cli(['analyze', '--batch', String(batch.batchId), '--format', 'md', '--bootstrap', '0'], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    expect(analysis.stdout).toContain(`- ${line}`);
    expect(analysis.stdout).toContain('the weighted inverse-normal statistic of Cui, Hung & Wang 1999');
    const researcher = await signIn(app, db, 'researcher');
    const page = (await researcher.agent.get(`/console/batches/${batch.batchId}`).expect(200)).text;
    expect(page).toContain(`Reallocation after SCRIPT:${MODEL} vs AGENTS:${MODEL} stopped (efficacy)`);
  });

  it('POST /r/:batch/c/:assignment, when the open comparison had looked before its maximum was raised, weighs its later pairs with the weight fixed at the raise', async () => {
    const { db, dbPath, batch, raters } = await undecidedFirstUntilFull({ lookEvery: 6, alpha: 0.05, spending: 'pocock', reallocate: true });
    const [undecided, decided] = db.prepare('SELECT id, stop_reason FROM comparisons WHERE batch_id = :b ORDER BY position').all({ b: batch.batchId }) as { id: number; stop_reason: string | null }[];
    expect(decided?.stop_reason).toBe('efficacy');
    expect(undecided?.stop_reason).toBe('final');
    const move = db.prepare('SELECT freed_judgments, added_pairs, limited_by, budget_raters, raters_after FROM sequential_reallocations ORDER BY id LIMIT 1').get();
    expect(move).toEqual({ freed_judgments: 12, added_pairs: EXTRA, limited_by: 'no-unused-pair', budget_raters: 6, raters_after: 6 });

    // Six raters, the budget; the batch closed itself.
    expect(raters).toBe(6);
    expect(db.prepare('SELECT state FROM batches WHERE id = :b').pluck().get({ b: batch.batchId })).toBe('closed');
    expect(count(db, "SELECT count(*) FROM raters WHERE status <> 'no_consent'")).toBe(6);
    expect(count(db, 'SELECT count(*) FROM pairs WHERE reallocation_id IS NOT NULL AND accepted = 1')).toBe(EXTRA);
    const looks = db
      .prepare('SELECT look, max_pairs, completed_pairs, wins_a, wins_b, information_fraction, critical_z, nominal_alpha, decision FROM sequential_looks WHERE comparison_id = :c ORDER BY look')
      .all({ c: undecided?.id }) as { look: number; max_pairs: number; completed_pairs: number; wins_a: number; wins_b: number; information_fraction: number; critical_z: number | null; nominal_alpha: number; decision: string }[];
    expect(looks[0]).toMatchObject({ look: 1, max_pairs: 24, completed_pairs: 6, information_fraction: 0.25 });
    expect(looks.slice(1).every((l) => l.max_pairs === 34)).toBe(true);
    expect(looks[looks.length - 1]).toMatchObject({ completed_pairs: 34, information_fraction: 1, decision: 'final' });
    // Look 2 after the raise (Cui, Hung & Wang): look 1 stood at 6 of 24 (t = 0.25); the remaining 0.75 of the design is
    // spread over the 28 pairs left to complete, so 12 completed is t = 0.25 + 0.75 x 6/28, and the bound is the original
    // design's at that fraction (src/batches/reallocated-look.ts). The 6 pairs of look 1 weigh 0.25 in the statistic, the
    // 6 since t - 0.25, whatever their number.
    const second = looks[1] as { completed_pairs: number; wins_a: number; wins_b: number; information_fraction: number; nominal_alpha: number };
    expect(second.completed_pairs).toBe(12);
    const t = 0.25 + (0.75 * 6) / 28;
    expect(second.information_fraction).toBeCloseTo(t, 12);
    expect(second.nominal_alpha).toBeCloseTo(twoSidedBoundaries([0.25, t], 0.025, 'pocock').nominal[1] as number, 10);
    const stage = (entered: string) =>
      db
        .prepare(`SELECT coalesce(sum(j.winner = 'a'), 0) - coalesce(sum(j.winner = 'b'), 0) FROM pairs p JOIN judgments j ON j.pair_id = p.id WHERE p.comparison_id = :c AND p.sequential_look ${entered}`)
        .pluck()
        .get({ c: undecided?.id }) as number;
    const z = (Math.sqrt(0.25 / 6) * stage('= 1') + Math.sqrt((t - 0.25) / 6) * stage('= 2')) / Math.sqrt(0.25 + (t - 0.25));
    const stored = db.prepare('SELECT statistic, p_value FROM sequential_looks WHERE comparison_id = :c AND look = 2').get({ c: undecided?.id }) as { statistic: string; p_value: number };
    expect(stored.statistic).toBe('pair-majorities');
    expect(stored.p_value).toBeCloseTo(2 * normalCdf(-Math.abs(z)), 12);
    checkInvariants(db, batch.batchId, 1);
    // The report's stage-wise p-value is computed on the same information scale (earlier fractions rescaled to 34).
    const shown = await cli(['batches', 'show', String(batch.batchId)], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`AGENTS:${MODEL} vs MINDREADERS:${MODEL}: stopped at look ${looks.length} of`);
    expect(shown.stdout).toMatch(/sequential p-value \(stage-wise ordering\): 1\.0000|sequential p-value \(stage-wise ordering\): 0\.\d{4}/);
  });

  it('POST /r/:batch/c/:assignment, with binding futility, holds the raised comparison\'s later looks to its original binding design', async () => {
    // As above, with futility at beta 0.2 and a win rate of 0.75, binding: the undecided comparison looks once (6 of
    // 24), its maximum rises to 34 when the decided one stops, and its later looks are reallocated looks.
    const futility = { beta: 0.2, effect: 0.75, binding: true };
    const { db, batch } = await undecidedFirstUntilFull({ lookEvery: 6, alpha: 0.05, spending: 'pocock', futility, reallocate: true });
    const [undecided, decided] = db.prepare('SELECT id, stop_reason FROM comparisons WHERE batch_id = :b ORDER BY position').all({ b: batch.batchId }) as { id: number; stop_reason: string | null }[];
    expect([undecided?.stop_reason, decided?.stop_reason]).toEqual(['futility', 'efficacy']);
    // Both stopped early: three raters of the six the fixed design needs.
    expect(db.prepare('SELECT state FROM batches WHERE id = :b').pluck().get({ b: batch.batchId })).toBe('closed');
    expect(count(db, "SELECT count(*) FROM raters WHERE status <> 'no_consent'")).toBe(3);
    checkInvariants(db, batch.batchId, 1);

    type Look = { look: number; max_pairs: number; wins_a: number; wins_b: number; information_fraction: number; critical_z: number | null; futility_z: number | null; decision: string };
    const looks = db
      .prepare('SELECT look, max_pairs, wins_a, wins_b, information_fraction, critical_z, futility_z, decision FROM sequential_looks WHERE comparison_id = :c ORDER BY look')
      .all({ c: undecided?.id }) as Look[];
    expect(looks[0]).toMatchObject({ look: 1, max_pairs: 24, information_fraction: 0.25, futility_z: null, decision: 'continue' });
    const later = looks.slice(1);
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((l) => l.max_pairs === 34)).toBe(true);
    expect(later[later.length - 1]?.decision).toBe('futility');
    // Each later look keeps the original design (binding, its drift over the 24 pairs it was planned for) at the
    // fraction the raised maximum's pairs reach: 6 of 24 at look 1, then 0.25 + 0.75 (c - 6) / 28 (Cui, Hung & Wang).
    const fractions = [0.25];
    for (const l of later) {
      const completed = db.prepare('SELECT completed_pairs FROM sequential_looks WHERE comparison_id = :c AND look = :l').pluck().get({ c: undecided?.id, l: l.look }) as number;
      const t = completed === 34 ? 1 : 0.25 + (0.75 * (completed - 6)) / 28;
      expect(l.information_fraction).toBeCloseTo(t, 12);
      fractions.push(l.information_fraction);
      const design = futilityBoundaries(fractions, { family: 'pocock', alpha: 0.025, beta: 0.2, drift: futilityDrift(0.75, 24), binding: true });
      expect(l.futility_z ?? 0).toBeCloseTo(design.futility[fractions.length - 1] as number, 10);
      expect(l.critical_z ?? Infinity).toBeCloseTo(design.critical[fractions.length - 1] as number, 10);
    }
  });

  it('POST /r/:batch/c/:assignment, when answers are stored on the bundled answer thread, reallocates there as well', async () => {
    const { app, db, problems } = await threadedApp({ bundled: true });
    const batch = seed(db, { lookEvery: 6, alpha: 0.05, spending: 'pocock', reallocate: true }, MANY_RATERS);
    // As over the request thread (the first test): 45 raters, the decided comparison's 26 freed judgments buying the
    // 10 extra samples' pairs.
    expect(await rateUntilFull(app, db, batch.publicId)).toBe(45);
    expect(problems).toEqual([]);
    expect(db.prepare('SELECT stop_reason FROM comparisons WHERE batch_id = :b ORDER BY position').pluck().all({ b: batch.batchId })).toEqual(['efficacy', 'final']);
    expect(db.prepare('SELECT freed_judgments, added_pairs FROM sequential_reallocations ORDER BY id').all()).toEqual([
      { freed_judgments: 26, added_pairs: EXTRA },
      { freed_judgments: 0, added_pairs: 0 },
    ]);
    expect(count(db, 'SELECT count(*) FROM pairs WHERE reallocation_id IS NOT NULL AND accepted = 2')).toBe(EXTRA);
    checkInvariants(db, batch.batchId, 2);
  });

  it('POST /r/:batch/c/:assignment, when one comparison stops early without reallocate, adds no pair and records nothing', async () => {
    const { app, db } = testApp();
    const batch = seed(db, { lookEvery: 6, alpha: 0.05, spending: 'pocock' });
    await rateUntilFull(app, db, batch.publicId);
    expect(db.prepare('SELECT stop_reason FROM comparisons WHERE batch_id = :b ORDER BY position').pluck().all({ b: batch.batchId })).toEqual(['efficacy', 'final']);
    expect(count(db, 'SELECT count(*) FROM sequential_reallocations')).toBe(0);
    expect(count(db, "SELECT count(*) FROM pairs WHERE batch_id = :b AND kind = 'regular'", { b: batch.batchId })).toBe(SAMPLES * 2);
    expect(count(db, "SELECT count(*) FROM audit_log WHERE action = 'comparison.reallocate'")).toBe(0);
    expect(db.prepare('SELECT DISTINCT max_pairs FROM sequential_looks').pluck().all()).toEqual([SAMPLES]);
    checkInvariants(db, batch.batchId, 2);
  });
});
