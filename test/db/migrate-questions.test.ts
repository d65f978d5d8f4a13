import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { makeBatchWithJudgments, makeDialogue, makeJudgment, makePair, makeRun, makeScenario } from '../helpers/factories.js';
import { tempDir } from '../helpers/test-db.js';

// Migration 013 (issue 16) rebuilds `judgments` with question_id/question_index. A database that holds judgments
// from before it must come out with the same judgments, each the first question 'natural', and the same counters.

function snapshot(db: Db) {
  return {
    judgments: db
      .prepare(
        `SELECT id, assignment_id, batch_id, pair_id, rater_id, left_side, choice, winner, label, reason, is_gold, correct, shown_at,
           submitted_at, active_ms, question_version, late FROM judgments ORDER BY id`,
      )
      .all(),
    tallies: db.prepare('SELECT comparison_id, wins_a, wins_b, ties FROM comparison_tallies ORDER BY comparison_id').all(),
    counts: db.prepare('SELECT batch_id, judgments, regular, timed FROM batch_judgment_counts ORDER BY batch_id').all(),
    raters: db.prepare('SELECT id, regular_active_ms, regular_timed FROM raters ORDER BY id').all(),
  };
}

describe('migration 013-questions', () => {
  it('on a database migrated to 012 holding judgments (regular, gold, an excluded rater), keeps every judgment as question natural and every counter unchanged, and the counters then count first-question rows only', () => {
    const db = openDatabase(join(tempDir(), 'old.db'));
    // Up to 012, plus 021 (dialogues.words), which the factories' dialogue writer needs and 013 never reads.
    migrate(db, listMigrations().filter((m) => m.version <= 12 || m.name === '021-dialogue-words'));
    expect(db.prepare("SELECT count(*) FROM pragma_table_info('judgments') WHERE name = 'question_id'").pluck().get()).toBe(0);
    const made = makeBatchWithJudgments(db, {
      votes: [
        ['a', 'a', 'b'],
        ['b', 'tie', 'a'],
        ['a', null, 'a'],
      ],
    });
    const runId = makeRun(db, { modes: ['SCRIPT', 'AGENTS'] });
    const scenario = makeScenario(db);
    const gold = makePair(db, {
      batchId: made.batchId,
      comparisonId: null,
      kind: 'attention',
      expected: 'a',
      dialogueA: makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: 'test-model' }),
      dialogueB: makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: 'test-model' }),
    });
    makeJudgment(db, { pairId: gold, raterId: made.raterIds[0] ?? 0, winner: 'b', activeMs: 12_000 });
    db.prepare('UPDATE raters SET excluded = 1 WHERE id = :id').run({ id: made.raterIds[2] });
    const before = snapshot(db);
    expect(before.judgments).toHaveLength(9);
    expect(before.counts).toEqual([{ batch_id: made.batchId, judgments: 9, regular: 8, timed: 8 }]);

    expect(migrate(db).some((name) => name === '013-questions')).toBe(true);
    expect(snapshot(db)).toEqual(before);
    expect(db.prepare('SELECT DISTINCT question_id, question_index FROM judgments').all()).toEqual([{ question_id: 'natural', question_index: 0 }]);

    // After the upgrade, a second question's row of an answered comparison changes no counter.
    const first = db
      .prepare<{ r: number }, Record<string, unknown>>(
        'SELECT assignment_id, batch_id, pair_id, rater_id, left_side, shown_at, submitted_at, active_ms FROM judgments WHERE rater_id = :r AND is_gold = 0 ORDER BY id LIMIT 1',
      )
      .get({ r: made.raterIds[0] ?? 0 });
    if (!first) throw new Error('no judgment');
    db.prepare(
      `INSERT INTO judgments (assignment_id, batch_id, pair_id, rater_id, question_id, question_index, left_side, choice, winner, label, is_gold,
         shown_at, submitted_at, active_ms, question_version)
       VALUES (:assignment_id, :batch_id, :pair_id, :rater_id, 'goals', 1, :left_side, 'tie', 'tie', 'TIE', 0, :shown_at, :submitted_at, :active_ms, 1)`,
    ).run(first);
    expect(snapshot(db).tallies).toEqual(before.tallies);
    expect(snapshot(db).counts).toEqual(before.counts);
    expect(snapshot(db).raters).toEqual(before.raters);
    // And one assignment holds one row per question: a second row for the same question is refused.
    expect(() =>
      db
        .prepare(
          `INSERT INTO judgments (assignment_id, batch_id, pair_id, rater_id, question_id, question_index, left_side, choice, winner, label, is_gold,
             shown_at, submitted_at, question_version)
           VALUES (:assignment_id, :batch_id, :pair_id, :rater_id, 'natural', 2, :left_side, 'tie', 'tie', 'TIE', 0, :shown_at, :submitted_at, 1)`,
        )
        .run(first),
    ).toThrow(/UNIQUE constraint failed/);
    db.close();
  });
});
