import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { exportToPath } from '../../src/export/export-batch.js';
import { makeBatchWithJudgments, makeDialogue, makeJudgment, makePair, makeRater } from '../helpers/factories.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { makeExportBatch, readJsonl } from './export-fixtures.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

type CsvRow = Record<string, string>;
const readCsv = (path: string) => parse(readFileSync(path), { columns: true, bom: false }) as CsvRow[];

describe('judgments export (CSV and JSONL)', () => {
  it('judgments-csv, for a batch with votes, writes one row per judgment with the Arena column names and a meta sidecar', async () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'a', 'b'], ['b', null, 'a'], ['a', 'b', 'b']] });
    db.prepare("UPDATE runs SET prompt_version = 'v1' WHERE id = :id").run({ id: made.runId });
    const out = join(tempDir(), 'judgments.csv');
    const result = await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv' }, out, { now: () => new Date('2026-02-01T00:00:00Z') });

    const rows = readCsv(out);
    const stored = db
      .prepare<{ batchId: number }, { id: number; winner: string; left_side: string; pair_id: number }>(
        'SELECT id, winner, left_side, pair_id FROM judgments WHERE batch_id = :batchId ORDER BY id',
      )
      .all({ batchId: made.batchId });
    expect(result.rows).toBe(8);
    expect(rows).toHaveLength(stored.length);
    expect(Object.keys(rows[0] ?? {})).toEqual([
      'judgment_id', 'batch_id', 'pair_id', 'question_id', 'question_kind', 'scenario_id', 'scenario_category', 'model_a', 'model_b', 'left', 'winner',
      'real_side', 'confidence', 'reason',
      'judge', 'provider', 'is_gold', 'correct', 'shown_at', 'submitted_at', 'active_time_s', 'question_version', 'excluded', 'reallocation_id',
      'telemetry', 'reason_pasted_share', 'paste_events', 'keystrokes', 'typing_time_s', 'hidden_time_s', 'answered_before_conversation_2', 'answer_key',
    ]);
    const byId = new Map(rows.map((r) => [Number(r.judgment_id), r]));
    for (const j of stored) {
      const row = byId.get(j.id);
      expect(row).toMatchObject({
        pair_id: String(j.pair_id),
        model_a: 'SCRIPT:test-model',
        model_b: 'AGENTS:test-model',
        left: j.left_side,
        winner: { a: 'model_a', b: 'model_b', tie: 'tie' }[j.winner],
        is_gold: 'false',
        correct: '',
        active_time_s: '30',
        excluded: 'false',
      });
    }

    const meta = JSON.parse(readFileSync(`${out}.meta.json`, 'utf8')) as Record<string, unknown>;
    const settings = JSON.parse(
      db.prepare<{ id: number }, string>('SELECT settings FROM batches WHERE id = :id').pluck().get({ id: made.batchId }) as string,
    ) as unknown;
    expect(meta).toMatchObject({
      simarena_version: pkg.version,
      format: 'judgments-csv',
      exported_at: '2026-02-01T00:00:00.000Z',
      batch: { id: made.batchId },
      prompt_versions: ['v1'],
      rows: 8,
      options: { include_excluded: false, include_gold: false },
    });
    expect(meta.batch_settings).toEqual(settings);
  });

  it('judgments-csv, with reasons holding commas, quotes, newlines and Unicode, parses back to the same text', async () => {
    const { db } = createTestDb();
    const reasons = [
      'short, but "natural"',
      'line one\nline two\r\nline three',
      'Ünïcödé ✓ — 日本語の理由 😀 עברית',
      '"',
      ',',
      '  leading and trailing spaces  ',
      '=1+1',
    ];
    const made = makeExportBatch(db, {
      comparisons: [['SCRIPT:m', 'AGENTS:m']],
      pairs: [[0, reasons.map((reason, rater) => ({ rater, winner: 'a' as const, reason }))]],
    });
    const out = join(tempDir(), 'judgments.csv');
    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv' }, out);
    const rows = readCsv(out);
    // A reason that a spreadsheet would run as a formula is written with a leading apostrophe (csv-injection.test.ts).
    expect(rows.map((r) => r.reason)).toEqual(reasons.map((r) => (r === '=1+1' ? "'=1+1" : r)));
    expect(rows.map((r) => r.model_a)).toEqual(reasons.map(() => 'SCRIPT:m'));
  });

  it('judgments-jsonl, for the same batch, round-trips every judgment with typed values and Unicode intact', async () => {
    const { db } = createTestDb();
    const made = makeExportBatch(db, {
      comparisons: [['SCRIPT:m', 'MINDREADERS:m']],
      pairs: [
        [0, [{ rater: 0, winner: 'b', reason: 'Ünïcödé 😀\n"quoted"' }, { rater: 1, winner: 'tie', reason: null }]],
        [0, [{ rater: 0, winner: 'a' }]],
      ],
    });
    const out = join(tempDir(), 'judgments.jsonl');
    await exportToPath(db, { batch: made.publicId, format: 'judgments-jsonl' }, out);
    const rows = readJsonl(out);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      judgment_id: made.pairs[0]?.judgmentIds[0],
      winner: 'model_b',
      reason: 'Ünïcödé 😀\n"quoted"',
      model_a: 'SCRIPT:m',
      model_b: 'MINDREADERS:m',
      is_gold: false,
      correct: null,
      active_time_s: 30,
      excluded: false,
    });
    expect(rows[1]).toMatchObject({ winner: 'tie', reason: null });
    expect(readFileSync(`${out}.meta.json`, 'utf8')).toContain('"format": "judgments-jsonl"');
  });

  it('judge, across judgments and batches, is the salted pseudonym: stable within a batch and different in another batch', async () => {
    const { db } = createTestDb();
    const options = { raterOptions: { 0: { participantId: 'PID-1' }, 1: { participantId: 'PID-2' } } };
    const first = makeExportBatch(db, {
      comparisons: [['SCRIPT:m', 'AGENTS:m']],
      pairs: [
        [0, [{ rater: 0, winner: 'a' }, { rater: 1, winner: 'b' }]],
        [0, [{ rater: 0, winner: 'b' }, { rater: 1, winner: 'b' }]],
      ],
      ...options,
    });
    const second = makeExportBatch(db, { comparisons: [['SCRIPT:m', 'AGENTS:m']], pairs: [[0, [{ rater: 0, winner: 'a' }]]], ...options });
    const dir = tempDir();
    await exportToPath(db, { batch: String(first.batchId), format: 'judgments-jsonl' }, join(dir, '1.jsonl'));
    await exportToPath(db, { batch: String(second.batchId), format: 'judgments-jsonl' }, join(dir, '2.jsonl'));
    const one = readJsonl(join(dir, '1.jsonl'));
    const two = readJsonl(join(dir, '2.jsonl'));

    const judgeOf = (rows: Record<string, unknown>[], judgmentId: number | undefined) => rows.find((r) => r.judgment_id === judgmentId)?.judge;
    const p0 = first.pairs[0]?.judgmentIds ?? [];
    const p1 = first.pairs[1]?.judgmentIds ?? [];
    expect(judgeOf(one, p0[0])).toBe(judgeOf(one, p1[0]));
    expect(judgeOf(one, p0[1])).toBe(judgeOf(one, p1[1]));
    expect(judgeOf(one, p0[0])).not.toBe(judgeOf(one, p0[1]));
    expect(judgeOf(two, second.pairs[0]?.judgmentIds[0])).not.toBe(judgeOf(one, p0[0]));

    const salt = db.prepare<{ id: number }, string>('SELECT judge_salt FROM batches WHERE id = :id').pluck().get({ id: first.batchId }) as string;
    expect(judgeOf(one, p0[0])).toBe(createHmac('sha256', salt).update('link:PID-1').digest('hex').slice(0, 16));
    const text = readFileSync(join(dir, '1.jsonl'), 'utf8');
    expect(text).not.toContain('PID-1');
    expect(one[0]).not.toHaveProperty('participant_id');
  });

  it('judgments-csv, with --with-provider-ids, adds the raw participant, study and session ids', async () => {
    const { db } = createTestDb();
    const made = makeExportBatch(db, {
      comparisons: [['SCRIPT:m', 'AGENTS:m']],
      pairs: [[0, [{ rater: 0, winner: 'a' }]]],
      raterOptions: { 0: { participantId: 'PROLIFIC-XYZ', provider: 'prolific' } },
    });
    const out = join(tempDir(), 'j.csv');
    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv', withProviderIds: true }, out);
    const [row] = readCsv(out);
    expect(row).toMatchObject({ participant_id: 'PROLIFIC-XYZ', provider: 'prolific' });
    expect(row?.session_id).toMatch(/^session-/);
  });

  it('exclusions, by default, leave out excluded and screened-out raters, removed pairs and gold answers; the flags bring them back', async () => {
    const { db } = createTestDb();
    const made = makeExportBatch(db, {
      comparisons: [['SCRIPT:m', 'AGENTS:m']],
      pairs: [
        [0, [{ rater: 0, winner: 'a' }, { rater: 1, winner: 'b' }, { rater: 2, winner: 'a' }]],
        [0, [{ rater: 0, winner: 'b' }]],
      ],
      raterOptions: { 1: { excluded: true, exclusionReason: 'straight-lining' }, 2: { status: 'screened_out' } },
    });
    const removedPair = made.pairs[1]?.pairId as number;
    db.prepare("UPDATE pairs SET removed_at = '2026-01-16T00:00:00.000Z', removed_reason = 'broken' WHERE id = :id").run({ id: removedPair });
    // An attention check: a gold pair between a dialogue and a variant, answered by the included rater.
    const base = made.pairs[0] as { dialogueA: number; scenario: Parameters<typeof makeDialogue>[1]['scenario'] };
    const variant = makeDialogue(db, { runId: made.runId, scenario: base.scenario, mode: 'SCRIPT', model: 'm', sampleIndex: 5 });
    const goldPair = makePair(db, { batchId: made.batchId, comparisonId: null, dialogueA: base.dialogueA, dialogueB: variant, kind: 'attention', expected: 'a' });
    const goldJudgment = makeJudgment(db, { pairId: goldPair, raterId: made.rater(0), winner: 'a' });

    const dir = tempDir();
    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-jsonl' }, join(dir, 'default.jsonl'));
    const included = readJsonl(join(dir, 'default.jsonl'));
    expect(included.map((r) => r.judgment_id)).toEqual([made.pairs[0]?.judgmentIds[0]]);
    expect(included[0]).not.toHaveProperty('exclusion_reason');

    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-jsonl', includeExcluded: true, includeGold: true }, join(dir, 'all.jsonl'));
    const all = readJsonl(join(dir, 'all.jsonl'));
    const reasonOf = (id: number | undefined) => all.find((r) => r.judgment_id === id);
    expect(all).toHaveLength(5);
    expect(reasonOf(made.pairs[0]?.judgmentIds[0])).toMatchObject({ excluded: false, exclusion_reason: null });
    expect(reasonOf(made.pairs[0]?.judgmentIds[1])).toMatchObject({ excluded: true, exclusion_reason: 'straight-lining' });
    expect(reasonOf(made.pairs[0]?.judgmentIds[2])).toMatchObject({ excluded: true, exclusion_reason: 'screened out' });
    expect(reasonOf(made.pairs[1]?.judgmentIds[0])).toMatchObject({ excluded: true, exclusion_reason: 'pair removed' });
    expect(reasonOf(goldJudgment)).toMatchObject({ is_gold: true, correct: true, excluded: false, model_a: 'SCRIPT:m', model_b: 'SCRIPT:m' });

    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv', includeGold: true }, join(dir, 'gold.csv'));
    const gold = readCsv(join(dir, 'gold.csv'));
    expect(gold.map((r) => [Number(r.judgment_id), r.is_gold])).toEqual([
      [made.pairs[0]?.judgmentIds[0], 'false'],
      [goldJudgment, 'true'],
    ]);
    expect(gold[0]).not.toHaveProperty('exclusion_reason');
  });

  it('judgments-csv, for a batch with no judgments, writes the header only and a sidecar with zero rows', async () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [[null]] });
    makeRater(db, { batchId: made.batchId });
    const out = join(tempDir(), 'empty.csv');
    const result = await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv' }, out);
    expect(result.rows).toBe(0);
    expect(readFileSync(out, 'utf8').split('\n')).toHaveLength(2);
    expect(JSON.parse(readFileSync(`${out}.meta.json`, 'utf8'))).toMatchObject({ rows: 0 });
  });
});
