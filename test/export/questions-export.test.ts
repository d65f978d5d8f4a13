// Issue 16: exports of a batch with two questions whose answers disagree (test/analysis/two-question-fixture.ts).
// Expected rows and votes are tallied here from the seeded vote arrays and the stored rows, not from the export code.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { exportToPath } from '../../src/export/export-batch.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { GOALS, makeTwoQuestionBatch, NATURAL, QUESTIONS } from '../analysis/two-question-fixture.js';
import { readJsonl, zipEntries, zipRead } from './export-fixtures.js';

type Vote = 'a' | 'b' | 'tie' | null;
const NOW = () => new Date('2026-02-01T00:00:00Z');
const judged = (votes: Vote[][]) => votes.flat().filter((x) => x !== null).length;
const WINNER = { a: 'model_a', b: 'model_b', tie: 'tie' } as const;
/** Winners in the Arena spelling, per pair index, as seeded. */
const winnersOf = (votes: Vote[][]) => votes.map((row) => row.filter((v): v is 'a' | 'b' | 'tie' => v !== null).map((v) => WINNER[v]).sort());

function winnersByPair(records: { pair_id: number | string; winner: string }[], pairIds: number[]) {
  return pairIds.map((id) => records.filter((r) => Number(r.pair_id) === id).map((r) => r.winner).sort());
}

describe('exports of a batch with two questions', () => {
  it('judgments-csv and judgments-jsonl, for a two-question batch, write every question\'s rows, each with its question_id; --question keeps one', async () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const dir = tempDir();
    const csvPath = join(dir, 'j.csv');
    const result = await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv' }, csvPath, { now: NOW });
    expect(result.rows).toBe(judged(NATURAL) + judged(GOALS));
    const rows = parse(readFileSync(csvPath), { columns: true }) as Record<string, string>[];
    const stored = new Map(
      db.prepare<{ b: number }, { id: number; question_id: string }>('SELECT id, question_id FROM judgments WHERE batch_id = :b').all({ b: made.batchId }).map((r) => [r.id, r.question_id]),
    );
    for (const row of rows) expect(row.question_id).toBe(stored.get(Number(row.judgment_id)));
    expect(winnersByPair(rows.filter((r) => r.question_id === 'goals') as never, made.pairIds)).toEqual(winnersOf(GOALS));
    expect(winnersByPair(rows.filter((r) => r.question_id === 'natural') as never, made.pairIds)).toEqual(winnersOf(NATURAL));
    const meta = JSON.parse(readFileSync(`${csvPath}.meta.json`, 'utf8')) as { question: unknown; questions: { id: string; text: string }[] };
    expect(meta.question).toBeNull();
    expect(meta.questions.map((q) => [q.id, q.text])).toEqual(QUESTIONS.map((q) => [q.id, q.text]));

    const jsonlPath = join(dir, 'goals.jsonl');
    const goals = await exportToPath(db, { batch: String(made.batchId), format: 'judgments-jsonl', question: 'goals' }, jsonlPath, { now: NOW });
    expect(goals.rows).toBe(judged(GOALS));
    const records = readJsonl(jsonlPath) as { question_id: string; pair_id: number; winner: string }[];
    expect(new Set(records.map((r) => r.question_id))).toEqual(new Set(['goals']));
    expect(winnersByPair(records, made.pairIds)).toEqual(winnersOf(GOALS));
  });

  it('arena, for a two-question batch, holds the first question\'s battles by default and the asked one\'s with --question, saying which in its meta', async () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const dir = tempDir();
    const first = join(dir, 'arena.json');
    await exportToPath(db, { batch: String(made.batchId), format: 'arena' }, first, { now: NOW });
    const battles = JSON.parse(readFileSync(first, 'utf8')) as { pair_id: number; winner: string }[];
    expect(battles).toHaveLength(judged(NATURAL));
    expect(winnersByPair(battles, made.pairIds)).toEqual(winnersOf(NATURAL));
    expect(JSON.parse(readFileSync(`${first}.meta.json`, 'utf8')).question).toEqual({ id: 'natural', text: QUESTIONS[0]!.text });
    const second = join(dir, 'arena-goals.json');
    await exportToPath(db, { batch: String(made.batchId), format: 'arena', question: 'goals' }, second, { now: NOW });
    const goalBattles = JSON.parse(readFileSync(second, 'utf8')) as { pair_id: number; winner: string }[];
    expect(goalBattles).toHaveLength(judged(GOALS));
    expect(winnersByPair(goalBattles, made.pairIds)).toEqual(winnersOf(GOALS));
    expect(JSON.parse(readFileSync(`${second}.meta.json`, 'utf8')).question).toEqual({ id: 'goals', text: QUESTIONS[1]!.text });
  });

  it('preferences with --question goals, for a two-question batch, counts each pair\'s votes on that question only', async () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const out = join(tempDir(), 'prefs.jsonl');
    await exportToPath(db, { batch: String(made.batchId), format: 'preferences', question: 'goals' }, out, { now: NOW });
    const records = readJsonl(out) as { pair_id: number; votes_a: number; votes_b: number; votes_tie: number; votes_total: number }[];
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      const votes = GOALS[made.pairIds.indexOf(r.pair_id)]!;
      expect([r.votes_a, r.votes_b, r.votes_tie]).toEqual([votes.filter((v) => v === 'a').length, votes.filter((v) => v === 'b').length, votes.filter((v) => v === 'tie').length]);
      expect(r.votes_total).toBe(votes.filter((v) => v !== null).length);
    }
  });

  it('hf, for a two-question batch, lists both questions in the card and says which one the dataset holds', async () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const out = join(tempDir(), 'hf');
    await exportToPath(db, { batch: String(made.batchId), format: 'hf', question: 'goals' }, out, { now: NOW });
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    expect(card).toContain(`1. \`natural\`: "${QUESTIONS[0]!.text}"`);
    expect(card).toContain(`2. \`goals\`: "${QUESTIONS[1]!.text}" (this dataset)`);
    expect(card).toContain('answers to question `goals` only');
    expect(readdirSync(join(out, 'data'))).toContain('judgments.jsonl');
    const judgments = readJsonl(join(out, 'data', 'judgments.jsonl')) as { question_id: string }[];
    expect(judgments).toHaveLength(judged(GOALS));
    expect(judgments.every((j) => j.question_id === 'goals')).toBe(true);
  });

  it('bundle, for a two-question batch, carries every question\'s judgments, the questions in its manifest and both questions\' analysis', async () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const out = join(tempDir(), 'bundle.zip');
    await exportToPath(db, { batch: String(made.batchId), format: 'bundle' }, out, { now: NOW });
    expect(zipEntries(out)).toEqual(expect.arrayContaining(['judgments.csv', 'manifest.json', 'analysis.json']));
    const rows = parse(zipRead(out, 'judgments.csv'), { columns: true }) as Record<string, string>[];
    expect(rows.filter((r) => r.question_id === 'goals')).toHaveLength(judged(GOALS));
    expect(rows.filter((r) => r.question_id === 'natural')).toHaveLength(judged(NATURAL));
    const manifest = JSON.parse(zipRead(out, 'manifest.json').toString('utf8')) as { questions: { id: string; text: string }[] };
    expect(manifest.questions.map((q) => q.text)).toEqual(QUESTIONS.map((q) => q.text));
    const analysis = JSON.parse(zipRead(out, 'analysis.json').toString('utf8')) as { questions: { id: string }[] };
    expect(analysis.questions.map((q) => q.id)).toEqual(['natural', 'goals']);
  });

  it('simarena export --question, with an id the batch does not have, fails with one line naming the batch\'s questions and writes nothing', async () => {
    const { db, path } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const dir = tempDir();
    const run = await cli(['export', '--batch', String(made.batchId), '--format', 'arena', '--question', 'believable', '--out', join(dir, 'a.json')], { DATABASE_PATH: path });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`batch ${made.batchId} has no question "believable"; its questions are: natural, goals`);
    expect(readdirSync(dir)).toEqual([]);
    const ok = await cli(['export', '--batch', String(made.batchId), '--format', 'arena', '--question', 'goals', '--out', join(dir, 'a.json')], { DATABASE_PATH: path });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`Exported ${judged(GOALS)} row(s)`);
  });

  it('acute, for a two-question batch, holds the first question by default and the asked one with --question, named in its meta.json', async () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const dir = tempDir();
    await exportToPath(db, { batch: String(made.batchId), format: 'acute' }, join(dir, 'first'), { now: NOW });
    await exportToPath(db, { batch: String(made.batchId), format: 'acute', question: 'goals' }, join(dir, 'goals'), { now: NOW });
    const meta = (name: string) => JSON.parse(readFileSync(join(dir, name, 'meta.json'), 'utf8')) as { question: { id: string }; pairs: number };
    expect(meta('first').question.id).toBe('natural');
    expect(meta('goals').question.id).toBe('goals');
    const sig = (name: string) => parse(readFileSync(join(dir, name, 'significance.csv')), { columns: true }) as Record<string, string>[];
    // Decisive votes for each side, as seeded (ACUTE leaves ties out).
    const decisive = (votes: Vote[][]) => votes.flat().filter((v) => v === 'a' || v === 'b').length;
    const [first] = sig('first');
    const [goals] = sig('goals');
    expect(first).toMatchObject({ question: QUESTIONS[0]!.text });
    expect(goals).toMatchObject({ question: QUESTIONS[1]!.text });
    expect(Number(first!.numwins1) + Number(first!.numwins2)).toBe(decisive(NATURAL));
    expect(Number(goals!.numwins1) + Number(goals!.numwins2)).toBe(decisive(GOALS));
  });
});
