// The time promised at consent (issue 14 point 2): the researcher's estimate until ten raters have completed, then
// the median of their total active time on regular comparisons, never below the least time the comparisons take:
// their words at the batch's reading rate plus a fixed time per answer (issue 49).
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { countWords } from '../../src/generation/dialogue-words.js';
import { estimateConsentTime } from '../../src/rating/consent-time.js';
import { sessionMinimum } from '../../src/batches/minimum-time.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { completedRaterMedian, consentTimeOfBatch, createWordsMemo } from '../../src/rating/consent-time.queries.js';
import { wordsPerComparison } from '../../src/batches/comparison-words.queries.js';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { readBatchSettings } from '../../src/batches/batch-settings.js';
import Database from 'better-sqlite3';
import { createTestDb } from '../helpers/test-db.js';
import { makeJudgment, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { raterClient, seedBatch } from './rating-fixtures.js';

const MIN = 60_000;

/** A completed rater whose regular answers took `totalMs` of active time in all (spread over two judgments). */
function completedRater(db: Db, batchId: number, pairIds: number[], totalMs: number, options: { status?: string; excluded?: boolean } = {}): number {
  const raterId = makeRater(db, { batchId, status: options.status ?? 'completed', excluded: options.excluded });
  makeJudgment(db, { pairId: pairIds[0] as number, raterId, winner: 'a', activeMs: Math.round(totalMs / 2) });
  makeJudgment(db, { pairId: pairIds[1] as number, raterId, winner: 'b', activeMs: totalMs - Math.round(totalMs / 2) });
  return raterId;
}

describe('estimateConsentTime', () => {
  it('estimateConsentTime, with nine completed raters, keeps the researcher\'s estimate', () => {
    const t = estimateConsentTime({ estimatedMinutes: 12, completedRaters: 9, medianTotalMs: MIN, minimumMinutes: 2 });
    expect(t).toEqual({ minutes: 12, source: 'estimate', completedRaters: 9, minimumMinutes: 2 });
  });

  it('estimateConsentTime, with an estimate below the least time the comparisons take, promises the minimum', () => {
    expect(estimateConsentTime({ estimatedMinutes: 5, completedRaters: 3, medianTotalMs: MIN, minimumMinutes: 9 })).toEqual({ minutes: 9, source: 'minimum', completedRaters: 3, minimumMinutes: 9 });
  });

  it('estimateConsentTime, with ten completed raters, gives their median total rounded up to a minute', () => {
    // A median of 7.5 min + 1 s → 8 minutes.
    expect(estimateConsentTime({ estimatedMinutes: 30, completedRaters: 10, medianTotalMs: 7.5 * MIN + 1_000, minimumMinutes: 2 })).toMatchObject({ minutes: 8, source: 'measured' });
  });

  it('completedRaterMedian, for ten completed raters and one slow one among them, gives the middle of the ten totals from the index', () => {
    const { db } = buildTestApp();
    const seeded = seedBatch(db, { samples: 6 });
    for (const m of [11, 3, 60, 5, 4, 9, 6, 8, 7, 10]) completedRater(db, seeded.batchId, seeded.pairIds, m * MIN + 1_000);
    completedRater(db, seeded.batchId, seeded.pairIds, 90 * MIN, { status: 'screened_out' });
    // Sorted: 3 … 11, 60 (min + 1 s): the middle two are 7 and 8 minutes (+ 1 s); the slow rater does not move it.
    expect(completedRaterMedian(db, seeded.batchId)).toEqual({ count: 10, medianMs: 7.5 * MIN + 1_000 });
    completedRater(db, seeded.batchId, seeded.pairIds, 2 * MIN);
    expect(completedRaterMedian(db, seeded.batchId)).toEqual({ count: 11, medianMs: 7 * MIN + 1_000 });
  });

  it('estimateConsentTime, when raters answer faster than anyone can read, gives the least time the comparisons take', () => {
    const t = estimateConsentTime({ estimatedMinutes: 30, completedRaters: 10, medianTotalMs: MIN, minimumMinutes: 16 });
    expect(t).toMatchObject({ minutes: 16, source: 'minimum', minimumMinutes: 16 });
  });

  it('sessionMinimum, for 7 comparisons of 1,000 words at 500 words a minute and one question with an optional reason, gives 14 minutes of reading and 10 s an answer, rounded up', () => {
    const settings = batchSettingsSchema.parse({ name: 'x', runs: ['r'], comparisons: [['SCRIPT:m', 'AGENTS:m']] });
    // 7 × 1,000 / 500 = 14 minutes; 7 × 10 s = 70 s: 15.17 minutes → 16.
    expect(sessionMinimum(settings, 1_000, 7)).toEqual({ minutes: 16, comparisons: 7, wordsPerComparison: 1_000, wordsPerMinute: 500, answerSeconds: 10 });
    // Two questions, the second with a required reason, read at 250 words a minute: 28 minutes + 7 × (10 + 10 + 20) s = 32.67 → 33.
    const slower = batchSettingsSchema.parse({
      name: 'x', runs: ['r'], comparisons: [['SCRIPT:m', 'AGENTS:m']], quality: { readingWordsPerMinute: 250 },
      questions: [{ id: 'natural', text: 'Which is more natural?' }, { id: 'goal', text: 'Which reaches its goal?', reason: 'required' }],
    });
    expect(sessionMinimum(slower, 1_000, 7)).toMatchObject({ minutes: 33, answerSeconds: 40 });
    // Exactly whole minutes stay as they are: 6 × 250 / 500 = 3 minutes + 6 × 10 s = 1 minute.
    expect(sessionMinimum(settings, 250, 6).minutes).toBe(4);
  });

  it('countWords, for text with runs of spaces and new lines, counts the words', () => {
    expect(countWords('  Hello   there,\nfriend. ')).toBe(3);
    expect(countWords('')).toBe(0);
  });
});

describe('GET /r/:batch consent time', () => {
  // Room for every rater: no pair fills up, so the study never reads as full to the next arrival.
  const settings = { perRaterCap: 4, judgmentsPerPair: 50, estimatedMinutes: 30, onboarding: { pairs: 2, threshold: 0.5 } };

  it('GET /r/:batch (consent), with nine completed raters, promises the researcher\'s 30 minutes', async () => {
    const { app, db } = buildTestApp();
    const seeded = seedBatch(db, { samples: 6, settings });
    for (let i = 0; i < 9; i += 1) completedRater(db, seeded.batchId, seeded.pairIds, 2 * MIN);
    const consent = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(consent.res.status).toBe(200);
    expect(consent.res.text).toContain('About 30 minutes');
  });

  it('GET /r/:batch (consent), with ten completed raters, promises their median and ignores screened-out, excluded raters and gold answers', async () => {
    const { app, db } = buildTestApp();
    const seeded = seedBatch(db, { samples: 6, settings });
    const goldPair = db.prepare("SELECT id FROM pairs WHERE batch_id = :b AND kind = 'onboarding' LIMIT 1").pluck().get({ b: seeded.batchId }) as number;
    const totals = [5, 5, 6, 6, 7, 7, 8, 8, 9, 9];
    for (const m of totals) {
      const raterId = completedRater(db, seeded.batchId, seeded.pairIds, m * MIN);
      // A long gold answer of every rater would move the median to 47 minutes if counted.
      makeJudgment(db, { pairId: goldPair, raterId, winner: 'a', activeMs: 40 * MIN });
    }
    // Slow raters who did not complete properly: counted, they would move the median to 8 minutes.
    for (let i = 0; i < 3; i += 1) completedRater(db, seeded.batchId, seeded.pairIds, 50 * MIN, { status: 'screened_out' });
    for (let i = 0; i < 3; i += 1) completedRater(db, seeded.batchId, seeded.pairIds, 50 * MIN, { excluded: true });
    const consent = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(consent.res.text).toContain('About 7 minutes');
    expect(consent.res.text).not.toContain('About 30 minutes');
  });

  it('GET /r/:batch (consent), when ten raters completed in a minute each, promises at least the least time the comparisons take', async () => {
    const { app, db } = buildTestApp();
    // 20 pairs of 125 words each (conversations of 48 and 72 words, a 3-word context, two 1-word goals):
    // 20 × 125 / 500 = 5 minutes of reading, and 20 answers × 10 s: 8.3 minutes, promised as 9.
    const seeded = seedBatch(db, { samples: 20, settings: { perRaterCap: 20, estimatedMinutes: 30 } });
    // Each rater answered two pairs of their own, so every pair is still open to a new rater.
    for (let i = 0; i < 10; i += 1) completedRater(db, seeded.batchId, seeded.pairIds.slice(2 * i), MIN);
    const consent = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(consent.res.text).toContain('About 9 minutes (20 comparisons)');
  });

  it('GET /r/:batch (consent), before any rater finished, never promises less than the least time the comparisons take', async () => {
    const { app, db } = buildTestApp();
    // The README's mistake: 5 minutes promised for comparisons that take at least 9 (the figures of the test above).
    const seeded = seedBatch(db, { samples: 20, settings: { perRaterCap: 20, estimatedMinutes: 5 } });
    const consent = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(consent.res.text).toContain('About 9 minutes (20 comparisons)');
    expect(consent.res.text).not.toContain('About 5 minutes');
  });
});

describe('words per comparison, stored with each dialogue (migration 021)', () => {
  it('wordsPerComparison, for a batch whose dialogues were written with their words, gives the mean words of a comparison from the stored counts', () => {
    const { db } = createTestDb();
    // 3 pairs: conversations of 6 turns × 8 words and 6 × 12 words (seedBatch), a scenario context, no goals.
    const seeded = seedBatch(db, { samples: 3 });
    const stored = db.prepare('SELECT words FROM dialogues WHERE id IN (SELECT dialogue_a_id FROM pairs UNION SELECT dialogue_b_id FROM pairs) ORDER BY words').pluck().all();
    expect(new Set(stored)).toEqual(new Set([48, 72]));
    const context = countWords(db.prepare('SELECT context FROM scenarios LIMIT 1').pluck().get() as string);
    expect(wordsPerComparison(db, seeded.batchId, false)).toBe(48 + 72 + context);
  });

  it('wordsPerComparison, for pairs of scenarios of different lengths with goals shown and one pair removed, gives the mean over the pairs served, counted from their texts', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 4 });
    const scenarioIds = db.prepare('SELECT DISTINCT scenario_id FROM pairs WHERE batch_id = ? ORDER BY id').pluck().all(seeded.batchId) as string[];
    expect(scenarioIds.length).toBeGreaterThanOrEqual(3);
    scenarioIds.forEach((id, i) => db.prepare('UPDATE scenarios SET context = ?, goal_1 = ? WHERE id = ?').run('word '.repeat(10 * (i + 1)).trim(), 'goal '.repeat(i + 1).trim(), id));
    db.prepare("UPDATE pairs SET removed_at = '2026-01-16T00:00:00.000Z' WHERE id = ?").run(seeded.pairIds[0]);
    // Two served pairs of one scenario: its words count once per pair.
    db.prepare('UPDATE pairs SET scenario_id = ? WHERE id = ?').run(scenarioIds[2], seeded.pairIds[3]);
    // Expected from the texts themselves, pair by pair, for the pairs still served.
    const served = db
      .prepare<[number], { a: number; b: number; scenario: string }>("SELECT dialogue_a_id AS a, dialogue_b_id AS b, scenario_id AS scenario FROM pairs WHERE batch_id = ? AND kind = 'regular' AND removed_at IS NULL")
      .all(seeded.batchId);
    const textWords = (dialogueId: number) => (db.prepare('SELECT text FROM turns WHERE dialogue_id = ?').pluck().all(dialogueId) as string[]).reduce((n, text) => n + countWords(text), 0);
    const scenarioWords = (id: string) => {
      const s = db.prepare<[string], { context: string; goal_1: string; goal_2: string }>('SELECT context, goal_1, goal_2 FROM scenarios WHERE id = ?').get(id);
      return countWords(s?.context ?? '') + countWords(s?.goal_1 ?? '') + countWords(s?.goal_2 ?? '');
    };
    const expected = served.reduce((sum, p) => sum + textWords(p.a) + textWords(p.b) + scenarioWords(p.scenario), 0) / served.length;
    expect(served.length).toBe(seeded.pairIds.length - 1);
    expect(wordsPerComparison(db, seeded.batchId, true)).toBeCloseTo(expected, 9);
  });

  it("consentTimeOfBatch, with the console's memo after the rater pages' memo counted a batch's words on the same handle, uses that count until the batch's pairs change; without a memo it counts again", () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 3 });
    const row = getBatchRow(db, seeded.batchId);
    if (!row) throw new Error('no batch');
    const settings = readBatchSettings(row);
    const minutes = (memo?: ReturnType<typeof createWordsMemo>) => consentTimeOfBatch(db, seeded.batchId, settings, 40, memo).minimumMinutes;
    const raterPages = createWordsMemo({ ttlMs: 10_000 });
    const counted = minutes(raterPages);
    // The stored counts change behind the memos' back (dialogues' texts never change once written: this only shows which count is used).
    db.prepare('UPDATE dialogues SET words = words * 50').run();
    const recounted = minutes();
    expect(recounted).toBeGreaterThan(counted);
    // The console's own memo, on the same handle: the rater pages' count.
    expect(minutes(createWordsMemo())).toBe(counted);
    // Its pairs change (one removed): counted again.
    db.prepare("UPDATE pairs SET removed_at = '2026-01-16T00:00:00.000Z' WHERE id = ?").run(seeded.pairIds[0]);
    expect(minutes(createWordsMemo())).toBe(minutes());
    expect(minutes(createWordsMemo())).toBeGreaterThan(counted);
  });

  it('wordsPerComparison, for dialogues written before their words were stored, counts their turns once and stores the count, also giving the figure on a read-only handle', () => {
    const { db, path } = createTestDb();
    const seeded = seedBatch(db, { samples: 3 });
    const expected = wordsPerComparison(db, seeded.batchId, true);
    db.prepare('UPDATE dialogues SET words = NULL').run();

    const readOnly = new Database(path, { readonly: true });
    try {
      expect(wordsPerComparison(readOnly, seeded.batchId, true)).toBe(expected);
    } finally {
      readOnly.close();
    }
    expect(db.prepare('SELECT count(*) FROM dialogues WHERE words IS NOT NULL').pluck().get()).toBe(0);

    expect(wordsPerComparison(db, seeded.batchId, true)).toBe(expected);
    const rows = db.prepare<[], { id: number; words: number | null }>('SELECT id, words FROM dialogues WHERE id IN (SELECT dialogue_a_id FROM pairs UNION SELECT dialogue_b_id FROM pairs)').all();
    expect(rows.length).toBe(6);
    for (const row of rows) {
      const turns = db.prepare('SELECT text FROM turns WHERE dialogue_id = ?').pluck().all(row.id) as string[];
      expect(row.words).toBe(turns.reduce((sum, text) => sum + countWords(text), 0));
    }
  });
});
