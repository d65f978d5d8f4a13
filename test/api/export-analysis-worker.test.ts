// The bundle's analysis when the server exports (API, console download form): computed in the analysis worker process,
// of the data as of the export (issue 12, point 3).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { answeredWhileWorkerComputes } from '../helpers/worker-ordering.js';
import { seedStoredJudgments } from '../../scripts/bench/support/bench-study.js';
import { analysisRunning } from '../../src/analysis/background-analysis.js';
import { makeTwoQuestionBatch } from '../analysis/two-question-fixture.js';
import { makeUser, signIn, tokenFor } from '../auth/session-helpers.js';
import { zipRead } from '../export/export-fixtures.js';
import { makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';

type Report = { n_judgments: number; question?: { id: string }; questions?: unknown[] };

const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};

/** The analysis.json of a downloaded bundle. */
function bundleReport(body: Buffer): Report {
  const zip = join(tempDir(), 'bundle.zip');
  writeFileSync(zip, body);
  return JSON.parse(zipRead(zip, 'analysis.json').toString('utf8')) as Report;
}

const storedReport = (t: ReturnType<typeof buildTestApp>, batchId: number) =>
  JSON.parse(t.db.prepare('SELECT result FROM analysis_cache WHERE batch_id = ?').pluck().get(batchId) as string) as Report;

describe('the export bundle\'s analysis, computed in the analysis worker', () => {
  it('GET /api/batches/:id/export?format=bundle from the console, after a judgment added since the stored analysis, carries the analysis counting it', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['a', 'a']] });
    const researcher = await signIn(t.app, t.db, 'researcher');
    await researcher.agent.get(`/console/batches/${made.batchId}/analysis`).expect(200);
    expect(storedReport(t, made.batchId).n_judgments).toBe(4);

    const rater = makeRater(t.db, { batchId: made.batchId });
    makeJudgment(t.db, { pairId: made.pairIds[0] as number, raterId: rater, winner: 'b' });
    const res = await researcher.agent.get(`/api/batches/${made.batchId}/export?format=bundle`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    expect(bundleReport(res.body as Buffer).n_judgments).toBe(5);
    // Computed by the worker, which stores what it computes.
    expect(storedReport(t, made.batchId).n_judgments).toBe(5);
  });

  it('GET /api/batches/:id/export?format=bundle&question=ID, for a two-question batch, carries that question\'s analysis as GET /api/batches/:id/analysis?question=ID gives it', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);

    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=bundle&question=goals`).set('Authorization', `Bearer ${token}`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    const analysis = await request(t.app).get(`/api/batches/${made.batchId}/analysis?question=goals`).set('Authorization', `Bearer ${token}`).expect(200);
    const bundled = bundleReport(res.body as Buffer);
    expect(bundled).toEqual(analysis.body);
    expect(bundled.question?.id).toBe('goals');
    expect(bundled.questions).toBeUndefined();
  });

  it('GET /healthz, sent while GET /api/batches/:id/export?format=bundle waits for a large analysis in the worker, is answered before the export', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    seedStoredJudgments(t.db, made.batchId, 30_000);
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
    const exporting = request(t.app).get(`/api/batches/${made.batchId}/export?format=bundle`).set('Authorization', `Bearer ${token}`).buffer(true).parse(binary);
    const done = await answeredWhileWorkerComputes(t.app, () => analysisRunning(t.db, made.batchId), exporting);
    expect(done.status).toBe(200);
    expect(bundleReport(done.body as Buffer).n_judgments).toBe(30_002);
  }, 90_000);
});
