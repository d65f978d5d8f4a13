// Migration 025: a batch's judgments per question are counted by triggers (GET /api/batches/:id/judgments gives the
// total on every page; counting a million rows took 0.46 s). Checked against counts the test makes itself from the
// rows, after every kind of write: new answers of each question, a judgment moved or re-labelled, deletions, a
// rater's removal, a whole batch deleted, and for rows stored before the migration.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { countBatchJudgments } from '../../src/export/export.queries.js';
import { addQuestionAnswer, makeTwoQuestionBatch } from '../analysis/two-question-fixture.js';
import { makeBatchWithJudgments, makeJudgment } from '../helpers/factories.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

/** Per question and in all, from the rows. */
function countedFromRows(db: Db, batchId: number) {
  const rows = db
    .prepare<{ b: number }, { question_id: string; n: number }>('SELECT question_id, count(*) AS n FROM judgments WHERE batch_id = :b GROUP BY question_id ORDER BY question_id')
    .all({ b: batchId });
  return { all: rows.reduce((s, r) => s + r.n, 0), ...Object.fromEntries(rows.map((r) => [r.question_id, r.n])) };
}

function shown(db: Db, batchId: number) {
  const questions = db.prepare<{ b: number }, string>('SELECT DISTINCT question_id FROM judgments WHERE batch_id = :b ORDER BY question_id').pluck().all({ b: batchId });
  return { all: countBatchJudgments(db, batchId, null), ...Object.fromEntries(questions.map((q) => [q, countBatchJudgments(db, batchId, q)])) };
}

describe('judgment counts per question', () => {
  it('follow judgments through answers of two questions, a moved and a re-labelled judgment, deletions, a removed rater and a deleted batch', () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const other = makeBatchWithJudgments(db, { votes: [['a', 'b', 'tie']] });
    expect(shown(db, made.batchId)).toEqual(countedFromRows(db, made.batchId));
    expect(shown(db, made.batchId)).toEqual({ all: 22, natural: 11, goals: 11 });
    expect(shown(db, other.batchId)).toEqual({ all: 3, natural: 3 });

    // One more assignment answered to both questions.
    const extra = makeJudgment(db, { pairId: made.pairIds[3] as number, raterId: made.raterIds[2] as number, winner: 'a' });
    const extraGoals = addQuestionAnswer(db, extra, { id: 'goals', index: 1 }, 'tie');
    expect(shown(db, made.batchId)).toEqual({ all: 24, natural: 12, goals: 12 });

    // A row re-labelled to another question, a winner changed (no count changes), a judgment deleted.
    db.prepare("UPDATE judgments SET question_id = 'tone' WHERE id = ?").run(extraGoals);
    db.prepare("UPDATE judgments SET winner = 'b' WHERE id = ?").run(extra);
    expect(shown(db, made.batchId)).toEqual(countedFromRows(db, made.batchId));
    expect(shown(db, made.batchId)).toMatchObject({ all: 24, goals: 11, tone: 1 });
    db.prepare('DELETE FROM judgments WHERE id = ?').run(extra);
    expect(shown(db, made.batchId)).toEqual(countedFromRows(db, made.batchId));

    // A rater removed (their judgments go with them), then a whole batch: the other batch's counts stay.
    db.prepare('DELETE FROM raters WHERE id = ?').run(made.raterIds[0]);
    expect(shown(db, made.batchId)).toEqual(countedFromRows(db, made.batchId));
    expect(shown(db, other.batchId)).toEqual(countedFromRows(db, other.batchId));
    db.prepare('DELETE FROM batches WHERE id = ?').run(made.batchId);
    expect(countBatchJudgments(db, made.batchId, null)).toBe(0);
    expect(db.prepare('SELECT count(*) FROM judgment_question_counts WHERE batch_id = ?').pluck().get(made.batchId)).toBe(0);
    expect(shown(db, other.batchId)).toEqual({ all: 3, natural: 3 });
  });

  it('migration 025 counts the judgments stored before it', () => {
    const db = openDatabase(join(tempDir(), 'old.db'));
    const all = listMigrations();
    migrate(
      db,
      all.filter((m) => m.version < 25),
    );
    const made = makeTwoQuestionBatch(db);
    const empty = makeBatchWithJudgments(db, { votes: [[null]] });
    migrate(db, all);
    expect(shown(db, made.batchId)).toEqual(countedFromRows(db, made.batchId));
    expect(shown(db, made.batchId)).toEqual({ all: 22, natural: 11, goals: 11 });
    expect(shown(db, empty.batchId)).toEqual({ all: 0 });
    db.close();
  });
});
