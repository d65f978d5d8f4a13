// Migration 025: the batch's median time per judgment is read from the index at the second that holds the middle,
// found from counts per second kept by triggers (it skipped half the batch's times before: 12 ms per poll at a million).
// Checked against the median the test computes itself from the judgment rows, after every kind of write: answers in
// the same and in other seconds, odd and even counts, a time corrected or cleared, gold answers and second-question
// rows (never counted), deletions, a participant's data deleted, a deleted batch, and rows stored before the migration.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { batchMedianSeconds } from '../../src/analysis/batch-median-time.queries.js';
import { deleteRaterData } from '../../src/rating/rater-admin.js';
import { addQuestionAnswer } from '../analysis/two-question-fixture.js';
import { signIn } from '../auth/session-helpers.js';
import { makeBatchWithJudgments, makeJudgment, makePair, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';

const NOW = new Date('2026-05-01T12:00:00.000Z');

/** The median of the timed, regular, first-question judgments, in seconds to one decimal, computed here from the rows. */
function medianFromRows(db: Db, batchId: number): number | null {
  const times = (
    db.prepare('SELECT active_ms FROM judgments WHERE batch_id = ? AND question_index = 0 AND is_gold = 0 AND active_ms IS NOT NULL').pluck().all(batchId) as number[]
  ).sort((a, b) => a - b);
  if (times.length === 0) return null;
  const mid = Math.floor((times.length - 1) / 2);
  const ms = times.length % 2 === 1 ? (times[mid] as number) : ((times[mid] as number) + (times[mid + 1] as number)) / 2;
  return Math.round(ms / 100) / 10;
}

describe('batch median time per judgment', () => {
  it('GET /console/batches/:id/progress.json, as timed answers come, change and go, shows the median of the rows', async () => {
    const t = buildTestApp({ clock: () => NOW });
    const made = makeBatchWithJudgments(t.db, { votes: [[null, null, null, null]] });
    const other = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const shown = async () => {
      const body = (await admin.agent.get(`/console/batches/${made.batchId}/progress.json`).expect(200)).body as { median_seconds: number | null };
      expect(batchMedianSeconds(t.db, made.batchId)).toBe(body.median_seconds);
      return body.median_seconds;
    };
    expect(await shown()).toBeNull();

    // Seconds 12 (three answers), 13, 40 and 0: the middle falls within a second, then across two.
    const pair = made.pairIds[0] as number;
    const raters = [...made.raterIds, makeRater(t.db, { batchId: made.batchId }), makeRater(t.db, { batchId: made.batchId })];
    const answer = (r: number, activeMs: number) => makeJudgment(t.db, { pairId: pair, raterId: raters[r] as number, winner: 'a', activeMs });
    const j0 = answer(0, 12_900);
    expect(await shown()).toBe(12.9);
    answer(1, 12_100);
    answer(2, 12_500);
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId));
    expect(await shown()).toBe(12.5);
    const j3 = answer(3, 40_000);
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId)); // (12.5 + 12.9) / 2
    expect(await shown()).toBe(12.7);
    answer(4, 13_050);
    answer(5, 0);
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId));

    // Gold answers and second-question rows are not counted; a time corrected, cleared, a judgment deleted.
    const shownPair = t.db.prepare('SELECT dialogue_a_id AS a, dialogue_b_id AS b FROM pairs WHERE id = ?').get(pair) as { a: number; b: number };
    const gold = makePair(t.db, { batchId: made.batchId, comparisonId: null, dialogueA: shownPair.b, dialogueB: shownPair.a, kind: 'attention', expected: 'a' });
    makeJudgment(t.db, { pairId: gold, raterId: raters[0] as number, winner: 'a', activeMs: 1_000 });
    addQuestionAnswer(t.db, j3, { id: 'goals', index: 1 }, 'b');
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId));
    t.db.prepare('UPDATE judgments SET active_ms = 61000 WHERE id = ?').run(j0);
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId));
    t.db.prepare('UPDATE judgments SET active_ms = NULL WHERE id = ?').run(j3);
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId));
    t.db.prepare('UPDATE judgments SET active_ms = 12200 WHERE id = ?').run(j3);
    t.db.prepare('DELETE FROM judgments WHERE id = ?').run(j0);
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId));
    deleteRaterData(t.db, { batchId: made.batchId, raterId: raters[1] as number, reason: 'asked us to' }, 'test', NOW);
    expect(await shown()).toBe(medianFromRows(t.db, made.batchId));
    expect(batchMedianSeconds(t.db, other.batchId)).toBe(medianFromRows(t.db, other.batchId));

    // A deleted batch takes its counts along; the other batch's median stays.
    t.db.prepare('DELETE FROM batches WHERE id = ?').run(made.batchId);
    expect(t.db.prepare('SELECT count(*) FROM active_time_buckets WHERE batch_id = ?').pluck().get(made.batchId)).toBe(0);
    expect(batchMedianSeconds(t.db, other.batchId)).toBe(30);
  });

  it('migration 025 counts the times stored before it', () => {
    const db = openDatabase(join(tempDir(), 'old.db'));
    const all = listMigrations();
    migrate(
      db,
      all.filter((m) => m.version < 25),
    );
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b', 'tie', 'a']] });
    const times = [5_000, 9_999, 10_000, 70_000];
    db.prepare('SELECT id FROM judgments WHERE batch_id = ? ORDER BY id').pluck().all(made.batchId).forEach((id, i) => {
      db.prepare('UPDATE judgments SET active_ms = ? WHERE id = ?').run(times[i], id);
    });
    migrate(db, all);
    expect(batchMedianSeconds(db, made.batchId)).toBe(medianFromRows(db, made.batchId));
    expect(batchMedianSeconds(db, made.batchId)).toBe(10);
    db.close();
  });
});
