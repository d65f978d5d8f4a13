import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { getBatchAnalysis } from '../../src/analysis/analysis-cache.js';
import { readBatchSettings } from '../../src/batches/batch-settings.js';
import { JsonColumnError } from '../../src/db/json-column.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp } from '../helpers/test-app.js';
import { storedAnalysis } from '../helpers/stored-analysis.js';

type Report = { n_judgments: number };

describe('JSON columns read through their schema', () => {
  it('readBatchSettings, for the same stored text, returns the one parsed (frozen) value; for a changed text, the new settings', () => {
    const t = buildTestApp();
    const { batchId } = makeBatchWithJudgments(t.db, { votes: [['a']] });
    const text = t.db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(batchId) as string;
    const first = readBatchSettings({ id: batchId, settings: text });
    expect(readBatchSettings({ id: batchId, settings: text })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const edited = JSON.stringify({ ...(JSON.parse(text) as object), judgmentsPerPair: first.judgmentsPerPair + 2 });
    expect(readBatchSettings({ id: batchId, settings: edited }).judgmentsPerPair).toBe(first.judgmentsPerPair + 2);
    expect(() => readBatchSettings({ id: batchId, settings: '{"name":5}' })).toThrow(JsonColumnError);
  });

  it('a batch whose stored settings have the wrong shape, read by the console, the CLI and the rater link, gives a clear error naming the column, never a stack trace', async () => {
    const t = buildTestApp();
    const { batchId, publicId } = makeBatchWithJudgments(t.db, { votes: [['a']] });
    // As a damaged file or another version might leave it: valid JSON, wrong shape, written behind the code's back.
    t.db.prepare('UPDATE batches SET settings = :settings WHERE id = :id').run({ settings: '{"name":5}', id: batchId });
    const message = `batches.settings of batch ${batchId} does not have the expected shape`;

    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get(`/console/batches/${batchId}`);
    expect(page.status).toBe(500);
    expect(page.text).toContain(message);
    expect(page.text).not.toMatch(/\n\s+at /);

    const listed = await cli(['batches', 'list'], { DATABASE_PATH: t.dbPath });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toMatch(new RegExp(`^error: ${message} at name: [^\\n]+$`));

    // Raters are told only that something went wrong: the column's message names batch internals (blinding).
    const rater = await request(t.app).get(`/r/${publicId}`);
    expect(rater.status).toBe(500);
    expect(rater.text).toContain('Something went wrong on our side');
    expect(rater.text).not.toContain('batches.settings');
  });

  it('GET /api/batches/:id/analysis, when the stored analysis is damaged, computes it again and serves the new result', async () => {
    const t = buildTestApp();
    const { batchId } = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const get = () => request(t.app).get(`/api/batches/${batchId}/analysis`).set('Authorization', `Bearer ${tokenFor(t.db, admin.email)}`);
    expect(((await get().expect(200)).body as Report).n_judgments).toBe(6);
    // Another process (or a damaged page) leaves a row of the wrong shape under the current data version.
    t.db.prepare("UPDATE analysis_cache SET result = '{\"broken\":true}', computed_at = '2026-01-01T00:00:00.000Z' WHERE batch_id = ?").run(batchId);

    const again = await get();
    expect(again.status).toBe(200);
    expect((again.body as Report).n_judgments).toBe(6);
    expect(storedAnalysis<Report>(t.db, batchId).n_judgments).toBe(6);
  });

  it('getBatchAnalysis (export, analyze --batch), when the cached row of the current version is not JSON, recomputes and stores it', () => {
    const t = buildTestApp();
    const { batchId } = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    expect(getBatchAnalysis(t.db, batchId)?.n_judgments).toBe(2);
    t.db.prepare("UPDATE analysis_cache SET result = '{\"n_judgments\":' WHERE batch_id = ?").run(batchId);

    expect(getBatchAnalysis(t.db, batchId)?.n_judgments).toBe(2);
    expect(storedAnalysis<Report>(t.db, batchId).n_judgments).toBe(2);
  });

  it('GET /console, with a session whose stored data is damaged, signs the holder out instead of failing', async () => {
    const t = buildTestApp();
    const admin = await signIn(t.app, t.db, 'admin');
    t.db.prepare("UPDATE sessions SET data = '{\"passport\":'").run();
    const res = await admin.agent.get('/console');
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/\/console\/login/);
  });
});
