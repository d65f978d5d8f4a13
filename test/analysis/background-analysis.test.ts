import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { answeredWhileWorkerComputes } from '../helpers/worker-ordering.js';
import { analysisRunning, awaitBatchAnalysis, writeBundleFiles } from '../../src/analysis/background-analysis.js';
import { seedStoredJudgments } from '../../scripts/bench/support/bench-study.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';
import { storedAnalysis, storedAnalysisJson } from '../helpers/stored-analysis.js';

type Report = { n_judgments: number };

/** A clock the test moves by hand. */
function handClock(start = Date.parse('2026-03-01T10:00:00Z')) {
  let now = start;
  return { clock: () => new Date(now), advance: (seconds: number) => (now += seconds * 1000) };
}

describe('analysis served from the cache, computed in a worker process', () => {
  it('GET /console/batches/:id/analysis, for a batch never analysed, waits for the worker and shows the stored result with its age', async () => {
    const time = handClock();
    const t = buildTestApp({ clock: time.clock });
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']] });
    const researcher = await signIn(t.app, t.db, 'researcher');

    const first = await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    expect(first.text).toContain('6 judgments on 2 pairs');
    expect(first.text).toMatch(/data-testid="analysis-age">Computed 2026-03-01 10:00 UTC \(0 s ago\)/);
    expect(t.db.prepare('SELECT computed_at FROM analysis_cache WHERE batch_id = ?').pluck().get(batch.batchId)).toBe('2026-03-01T10:00:00.000Z');
    expect(storedAnalysis<Report>(t.db, batch.batchId).n_judgments).toBe(6);

    time.advance(12);
    const later = await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    expect(later.text).toMatch(/Computed 2026-03-01 10:00 UTC \(12 s ago\)/);
  });

  it('GET /api/batches/:id/analysis, when the data changed since the stored result, answers at once with the stale result, its age and "updating"; max_age=0 waits for the new one', async () => {
    const time = handClock();
    const t = buildTestApp({ clock: time.clock });
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b'], ['b', 'b', 'a']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, admin.email);
    const get = (query = '') => request(t.app).get(`/api/batches/${batch.batchId}/analysis${query}`).set('Authorization', `Bearer ${token}`).expect(200);

    expect(((await get()).body as Report).n_judgments).toBe(9);
    t.db.prepare('UPDATE raters SET excluded = 1 WHERE id = ?').run(batch.raterIds[0]);
    time.advance(12);

    const stale = await get();
    expect((stale.body as Report).n_judgments).toBe(9);
    expect(stale.headers.age).toBe('12');
    expect(stale.headers['x-analysis-computed-at']).toBe('2026-03-01T10:00:00.000Z');
    expect(stale.headers['x-analysis-updating']).toBe('true');

    const fresh = await get('?max_age=0');
    expect((fresh.body as Report).n_judgments).toBe(6);
    expect(fresh.headers.age).toBe('0');
    expect(t.db.prepare('SELECT computed_at FROM analysis_cache WHERE batch_id = ?').pluck().get(batch.batchId)).toBe('2026-03-01T10:00:12.000Z');
  });

  it('GET /api/batches/:id/analysis and the console pages, with no judgment or exclusion since the stored result, say nothing is updating', async () => {
    const time = handClock();
    const t = buildTestApp({ clock: time.clock });
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, admin.email);
    const api = () => request(t.app).get(`/api/batches/${batch.batchId}/analysis`).set('Authorization', `Bearer ${token}`).expect(200);

    expect((await api()).headers['x-analysis-updating']).toBe('false');
    time.advance(3);
    for (let i = 0; i < 2; i++) {
      const again = await api();
      expect(again.headers['x-analysis-updating']).toBe('false');
      expect(again.headers.age).toBe('3');
    }
    const page = await admin.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    expect(page.text).toMatch(/data-testid="analysis-age">Computed 2026-03-01 10:00 UTC \(3 s ago\)<\/span>/);
    expect(page.text).not.toContain('updating…');
    for (const path of ['raters', 'participants']) {
      const quality = await admin.agent.get(`/console/batches/${batch.batchId}/${path}`).expect(200);
      expect(quality.text).toContain('are from the batch\'s analysis computed 2026-03-01 10:00 UTC (3 s ago). Judgments made since');
      expect(quality.text).not.toContain('newer figures are being computed');
    }
    expect(t.db.prepare('SELECT count(*) FROM analysis_cache WHERE batch_id = ?').pluck().get(batch.batchId)).toBe(1);
  });

  it('GET /api/batches/:id/analysis and the console pages, after a rater is excluded, say a newer result is being computed until it is stored', async () => {
    const time = handClock();
    const t = buildTestApp({ clock: time.clock });
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, admin.email);
    const api = (query = '') => request(t.app).get(`/api/batches/${batch.batchId}/analysis${query}`).set('Authorization', `Bearer ${token}`).expect(200);
    expect((await api()).headers['x-analysis-updating']).toBe('false');

    // Within the refresh interval of the first computation: the recomputation is scheduled, not yet started.
    t.db.prepare('UPDATE raters SET excluded = 1 WHERE id = ?').run(batch.raterIds[0]);
    const stale = await api();
    expect(stale.headers['x-analysis-updating']).toBe('true');
    expect((stale.body as Report).n_judgments).toBe(6);
    expect((await admin.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200)).text).toContain('; updating…</span>');
    expect((await admin.agent.get(`/console/batches/${batch.batchId}/raters`).expect(200)).text).toContain('; newer figures are being computed.');

    const fresh = await api('?max_age=0');
    expect((fresh.body as Report).n_judgments).toBe(4);
    expect(fresh.headers['x-analysis-updating']).toBe('false');
    expect((await api()).headers['x-analysis-updating']).toBe('false');
  });

  it('GET /api/batches/:id/analysis, sent again with the ETag of the result it got, answers 304 until a newer result is stored, then 200 with a new tag', async () => {
    const time = handClock();
    const t = buildTestApp({ clock: time.clock });
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, admin.email);
    const get = (query = '', tag?: string) => {
      const req = request(t.app).get(`/api/batches/${batch.batchId}/analysis${query}`).set('Authorization', `Bearer ${token}`);
      return tag ? req.set('If-None-Match', tag) : req;
    };
    const first = await get().expect(200);
    const tag = String(first.headers.etag);
    expect(tag).toMatch(/^"[\w-]+"$/);
    // The body is the stored report's JSON, byte for byte.
    expect(first.text).toBe(storedAnalysisJson(t.db, batch.batchId));
    const same = await get('', tag);
    expect(same.status).toBe(304);
    expect(same.text).toBe('');

    t.db.prepare('UPDATE raters SET excluded = 1 WHERE id = ?').run(batch.raterIds[0]);
    time.advance(12);
    const fresh = await get('?max_age=0', tag).expect(200);
    expect((fresh.body as Report).n_judgments).toBe(4);
    expect(fresh.headers.etag).not.toBe(tag);
  });

  it('GET /api/batches/:id/analysis, with a bad max_age, answers 400 with a message', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const reply = await request(t.app).get(`/api/batches/${batch.batchId}/analysis?max_age=soon`).set('Authorization', `Bearer ${tokenFor(t.db, admin.email)}`).expect(400);
    expect(JSON.stringify(reply.body)).toContain('max_age');
  });

  it('GET /healthz, sent while a large analysis is computing for GET /api/batches/:id/analysis, is answered before the analysis', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    seedStoredJudgments(t.db, batch.batchId, 30_000);
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, admin.email);
    const analysis = request(t.app).get(`/api/batches/${batch.batchId}/analysis`).set('Authorization', `Bearer ${token}`);
    const done = await answeredWhileWorkerComputes(t.app, () => analysisRunning(t.db, batch.batchId), analysis);
    expect(done.status).toBe(200);
    expect((done.body as Report).n_judgments).toBe(30_002);
  }, 90_000);

  it('writeBundleFiles, sent to the worker just before another batch\'s analysis, is answered first with both files written: the worker runs one job at a time, the rendering of a report included', async () => {
    const t = buildTestApp();
    const large = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    seedStoredJudgments(t.db, large.batchId, 30_000);
    const small = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    expect((await awaitBatchAnalysis(t.db, large.batchId, { now: () => new Date(), fresh: true }))?.stored).toBe(true);
    const dir = tempDir();
    const order: string[] = [];
    // The bundle's files are rendered asynchronously in the worker; a batch job run meanwhile would answer before them.
    const files = writeBundleFiles(t.db, large.batchId, undefined, dir).then((result) => {
      order.push(result.kind);
      return result;
    });
    const analysed = awaitBatchAnalysis(t.db, small.batchId, { now: () => new Date(), fresh: true }).then((served) => {
      order.push('batch analysis');
      return served;
    });
    const [written, served] = await Promise.all([files, analysed]);
    expect(order).toEqual(['bundle-files', 'batch analysis']);
    expect(written).toMatchObject({ kind: 'bundle-files', json: join(dir, 'analysis.json'), html: join(dir, 'report.html') });
    expect((JSON.parse(readFileSync(join(dir, 'analysis.json'), 'utf8')) as Report).n_judgments).toBe(30_002);
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
    expect(served?.stored).toBe(true);
  }, 90_000);
});
