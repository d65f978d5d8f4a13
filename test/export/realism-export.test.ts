// Issue 53: the judgments exports of a realism batch name each row's question kind, and for the which-is-real
// question the side whose dialogue is real and the rater's confidence, so the detection accuracy can be computed
// from the file alone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { exportToPath } from '../../src/export/export-batch.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { seedFixtureBatch } from '../analysis/realism-batch.js';
import { REALISM_FIXTURE as f } from '../analysis/realism-fixture.js';
import { readJsonl } from './export-fixtures.js';

type Row = Record<string, string>;

describe('judgments exports of a realism batch', () => {
  it('judgments-csv writes question_kind, real_side and confidence; in the which-is-real rows, winner names the real side exactly as often as the raters were right', async () => {
    const { db } = createTestDb();
    const { batchId } = seedFixtureBatch(db, f);
    const out = join(tempDir(), 'judgments.csv');
    await exportToPath(db, { batch: String(batchId), format: 'judgments-csv' }, out);
    const rows = parse(readFileSync(out), { columns: true }) as Row[];
    const natural = rows.filter((r) => r.question_id === 'natural');
    const real = rows.filter((r) => r.question_id === 'real');
    expect(natural).toHaveLength(f.rows.length);
    expect(new Set(natural.map((r) => [r.question_kind, r.real_side, r.confidence].join('|')))).toEqual(new Set(['preference||']));
    expect(real).toHaveLength(f.rows.length);
    expect(new Set(real.map((r) => r.question_kind))).toEqual(new Set(['which-is-real']));
    for (const r of real) expect(r.real_side).toBe((r.model_a === f.design.real ? 'a' : 'b'));
    expect(new Set(real.filter((r) => r.model_b === f.design.real).map((r) => r.model_a))).toEqual(new Set(['HUMAN_SCRIPT:human']));
    const right = real.filter((r) => r.winner === `model_${r.real_side}`).length;
    expect(right).toBe(f.rows.filter((r) => r.correct === 1).length);
    const confidences = real.map((r) => Number(r.confidence || 0)).sort();
    expect(confidences).toEqual(f.rows.map((r) => r.confidence).sort());
  });

  it('judgments-jsonl carries the same fields, with null where they do not apply', async () => {
    const { db } = createTestDb();
    const { batchId } = seedFixtureBatch(db, f);
    const out = join(tempDir(), 'judgments.jsonl');
    await exportToPath(db, { batch: String(batchId), format: 'judgments-jsonl' }, out);
    const records = readJsonl(out);
    expect(records.find((r) => r.question_id === 'natural')).toMatchObject({ question_kind: 'preference', real_side: null, confidence: null });
    const withConfidence = records.filter((r) => r.question_id === 'real' && r.confidence !== null);
    expect(withConfidence).toHaveLength(f.rows.filter((r) => r.confidence > 0).length);
    expect(withConfidence[0]).toMatchObject({ question_kind: 'which-is-real', real_side: expect.stringMatching(/^[ab]$/), confidence: expect.any(Number) });
  });
});
