// Migration 027: a batch's analysis report is stored as the gzip of its JSON (a BLOB in analysis_cache.result); rows
// stored before as JSON text are still read. The API sends the stored gzip as it is to a client that accepts gzip
// (checked on raw bytes here: superagent would decompress it), the JSON to another; a damaged row is dropped and
// computed again.
import { get, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import pino from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { seedStoredJudgments } from '../../scripts/bench/support/bench-study.js';
import { analysisVersion, computeBatchAnalysis, getBatchAnalysis } from '../../src/analysis/analysis-cache.js';
import { DEFAULT_BOOTSTRAP, DEFAULT_SEED } from '../../src/analysis/analyze.js';
import { analysisRunning } from '../../src/analysis/background-analysis.js';
import { compressReport, decompressReport, gzipHoldsReport } from '../../src/analysis/stored-report.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connection.js';
import type { Db } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';
import { serve } from '../helpers/browser.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { storedAnalysis, storedAnalysisJson, storedAnalysisValue } from '../helpers/stored-analysis.js';
import { buildTestApp, TEST_SECRET } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';

type Report = { n_judgments: number; generated_at: string };
type App = ReturnType<typeof createApp>;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

/** A GET through node:http, which (unlike superagent) hands over the bytes as they came, encoded or not. */
async function rawGet(app: App, path: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const server = await serve(app);
  closers.push(server.close);
  return new Promise((resolve, reject) => {
    get(`${server.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const storedType = (db: Db, batchId: number) => db.prepare('SELECT typeof(result) FROM analysis_cache WHERE batch_id = ?').pluck().get(batchId);
/** The version key the server's refresh computes with (its default settings): a row of this version is current. */
const currentVersion = (db: Db, batchId: number) => analysisVersion(db, batchId, { seed: DEFAULT_SEED, bootstrap: DEFAULT_BOOTSTRAP, targetHalfWidth: 0.05 });

async function analysedBatch() {
  const t = buildTestApp();
  const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']] });
  const admin = await signIn(t.app, t.db, 'admin');
  const token = tokenFor(t.db, admin.email);
  const path = `/api/batches/${batch.batchId}/analysis`;
  expect(((await request(t.app).get(path).set('Authorization', `Bearer ${token}`).expect(200)).body as Report).n_judgments).toBe(6);
  return { ...t, batch, admin, token, path };
}

describe('the analysis report stored gzip-compressed', () => {
  it('the analysis worker, storing the report of a batch of 6,002 judgments, stores the gzip of its JSON (a BLOB), a fraction of the JSON\'s size', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    seedStoredJudgments(t.db, batch.batchId, 6_000);
    const researcher = await signIn(t.app, t.db, 'researcher');
    await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);

    expect(storedType(t.db, batch.batchId)).toBe('blob');
    const stored = storedAnalysisValue(t.db, batch.batchId) as Buffer;
    const json = gunzipSync(stored).toString('utf8');
    expect(json.startsWith('{"schema_version":')).toBe(true);
    expect((JSON.parse(json) as Report).n_judgments).toBe(6_002);
    // 300 raters' figures and their notes: JSON that compresses well.
    expect(stored.length * 5).toBeLessThan(Buffer.byteLength(json));
  }, 60_000);

  it('GET /api/batches/:id/analysis, for a client that accepts gzip, sends the stored gzip byte for byte with Content-Encoding: gzip; for one that does not, the same report as plain JSON', async () => {
    const t = await analysedBatch();
    const stored = storedAnalysisValue(t.db, t.batch.batchId) as Buffer;

    const zipped = await rawGet(t.app, t.path, { authorization: `Bearer ${t.token}`, 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/);
    expect(zipped.headers['content-type']).toMatch(/^application\/json/);
    expect(zipped.body.equals(stored)).toBe(true);

    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'gzip;q=0, deflate' }] as Record<string, string>[]) {
      const plain = await rawGet(t.app, t.path, { authorization: `Bearer ${t.token}`, ...headers });
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.toString('utf8')).toBe(gunzipSync(zipped.body).toString('utf8'));
    }
    // superagent asks for gzip and decompresses: the report a client reads is the same.
    const viaSupertest = await request(t.app).get(t.path).set('Authorization', `Bearer ${t.token}`).expect(200);
    expect(viaSupertest.headers['content-encoding']).toBe('gzip');
    expect(viaSupertest.body).toEqual(JSON.parse(storedAnalysisJson(t.db, t.batch.batchId)));
  });

  it('GET /api/batches/:id/analysis, sent again with the ETag it got, answers 304 with no body whether it asks for gzip or not; a tag names its coding', async () => {
    const t = await analysedBatch();
    const auth = { authorization: `Bearer ${t.token}` };
    const zipped = await rawGet(t.app, t.path, { ...auth, 'accept-encoding': 'gzip' });
    const plain = await rawGet(t.app, t.path, { ...auth, 'accept-encoding': 'identity' });
    const zippedTag = String(zipped.headers.etag);
    const plainTag = String(plain.headers.etag);
    expect(zippedTag).toMatch(/^"[\w-]+-gzip"$/);
    expect(plainTag).toMatch(/^"[\w-]+"$/);
    expect(zippedTag).not.toBe(plainTag);

    const zippedAgain = await rawGet(t.app, t.path, { ...auth, 'accept-encoding': 'gzip', 'if-none-match': zippedTag });
    expect(zippedAgain.status).toBe(304);
    expect(zippedAgain.body.length).toBe(0);
    const plainAgain = await rawGet(t.app, t.path, { ...auth, 'accept-encoding': 'identity', 'if-none-match': plainTag });
    expect(plainAgain.status).toBe(304);
    expect(plainAgain.body.length).toBe(0);
    // The gzip answer's tag does not stand for the plain JSON.
    const other = await rawGet(t.app, t.path, { ...auth, 'accept-encoding': 'identity', 'if-none-match': zippedTag });
    expect(other.status).toBe(200);
    expect(other.body.toString('utf8')).toBe(storedAnalysisJson(t.db, t.batch.batchId));
  });

  it('GET /api/batches/:id/analysis and the console\'s analysis page, on a database migrated to 027 whose row holds the report as JSON text (stored before), serve that row as it is', async () => {
    const dir = tempDir();
    const path = join(dir, 'existing.db');
    const db = openDatabase(path);
    closers.push(async () => {
      db.close();
    });
    migrate(db, listMigrations().filter((m) => m.version < 27));
    const batch = makeBatchWithJudgments(db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']] });
    // A row as the server stored it before migration 027: JSON text.
    const before = JSON.stringify({ stored: 'before 027' });
    db.prepare('INSERT INTO analysis_cache (batch_id, data_version, result, computed_at) VALUES (?, ?, ?, ?)').run(batch.batchId, 'stored before 027', before, '2026-02-01T00:00:00.000Z');

    expect(migrate(db, listMigrations().filter((m) => m.version <= 27))).toEqual(['027-analysis-report-gzip']);
    // The later migrations (028: the page parts) leave such a row as it is, without parts.
    migrate(db);
    expect(storedType(db, batch.batchId)).toBe('text');
    expect(storedAnalysisValue(db, batch.batchId)).toBe(before);
    // The row then holds the batch's report as text (computed once every later migration made the tables the analysis
    // reads, of the current data version), its generated_at marked so that a recomputed report would show.
    const report = computeBatchAnalysis(db, batch.batchId, { now: new Date('2026-02-01T00:00:00Z'), bootstrap: DEFAULT_BOOTSTRAP }) as unknown as Report;
    const text = JSON.stringify({ ...report, generated_at: '2026-02-01T00:00:00.000Z (stored as text)' });
    db.prepare('UPDATE analysis_cache SET result = ?, data_version = ? WHERE batch_id = ?').run(text, currentVersion(db, batch.batchId), batch.batchId);
    expect(storedType(db, batch.batchId)).toBe('text');
    expect(storedAnalysisValue(db, batch.batchId)).toBe(text);
    // The column holds the two forms and no other.
    expect(() => db.prepare('UPDATE analysis_cache SET result = 42 WHERE batch_id = ?').run(batch.batchId)).toThrow(/CHECK constraint failed/);

    const app = createApp({ db, config: loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent' }), logger: pino({ level: 'silent' }), sessionSecret: TEST_SECRET });
    const admin = await signIn(app, db, 'admin');
    const url = `/api/batches/${batch.batchId}/analysis`;
    for (const encoding of ['gzip', 'identity']) {
      const reply = await rawGet(app, url, { authorization: `Bearer ${tokenFor(db, admin.email)}`, 'accept-encoding': encoding });
      expect(reply.status).toBe(200);
      expect(reply.headers['content-encoding']).toBeUndefined();
      expect(reply.body.toString('utf8')).toBe(text);
    }
    const page = await admin.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    expect(page.text).toContain('6 judgments on 2 pairs');
    expect(page.text).toContain('Computed 2026-02-01 00:00 UTC');
    // The worker's check of the data version (started by these reads) ends before the file goes.
    for (let i = 0; i < 500 && analysisRunning(db, batch.batchId); i++) await new Promise((r) => setTimeout(r, 20));
    expect(storedAnalysisValue(db, batch.batchId)).toBe(text);
  });

  it('GET /api/batches/:id/analysis, when the stored gzip is damaged (cut short, or no report inside), drops it, has it computed again and serves the new report', async () => {
    const t = await analysedBatch();
    const whole = storedAnalysisValue(t.db, t.batch.batchId) as Buffer;
    const damages = [whole.subarray(0, Math.floor(whole.length / 2)), gzipSync('{"broken":true}'), Buffer.from('not gzip at all, but a BLOB')];
    for (const [i, damaged] of damages.entries()) {
      // Another computed_at, so that the server reads the row anew.
      t.db.prepare('UPDATE analysis_cache SET result = ?, computed_at = ? WHERE batch_id = ?').run(damaged, `2026-01-0${i + 1}T00:00:00.000Z`, t.batch.batchId);
      for (const encoding of ['gzip', 'identity']) {
        const reply = await request(t.app).get(t.path).set('Authorization', `Bearer ${t.token}`).set('Accept-Encoding', encoding);
        expect(reply.status).toBe(200);
        expect((reply.body as Report).n_judgments).toBe(6);
      }
      expect(storedType(t.db, t.batch.batchId)).toBe('blob');
      expect(storedAnalysis<Report>(t.db, t.batch.batchId).n_judgments).toBe(6);
    }
  });

  it('GET /console/batches/:id/analysis, when the stored gzip holds JSON of another shape, answers 503 with a message, drops the row, and the next visit shows the recomputed report', async () => {
    const t = await analysedBatch();
    // Without its page parts (migration 028), which the page would otherwise read instead of the report.
    t.db.prepare('UPDATE analysis_cache SET result = ?, page_report = NULL, computed_at = ? WHERE batch_id = ?').run(gzipSync('{"schema_version":1,"broken":true}'), '2026-01-01T00:00:00.000Z', t.batch.batchId);
    const url = `/console/batches/${t.batch.batchId}/analysis`;

    const damaged = await t.admin.agent.get(url);
    expect(damaged.status).toBe(503);
    expect(damaged.text).toContain('The analysis could not be computed just now. Reload the page in a moment.');
    expect(damaged.text).not.toMatch(/at \w+ \(|stored-report\.ts/);
    expect(storedAnalysisValue(t.db, t.batch.batchId)).toBeUndefined();

    const again = await t.admin.agent.get(url).expect(200);
    expect(again.text).toContain('6 judgments on 2 pairs');
    expect(storedType(t.db, t.batch.batchId)).toBe('blob');
  });

  /** Runs `work` on a thread that never idles (each of its turns works 5 ms, then schedules the next) and counts the turns it took. */
  async function turnsWhile<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
    let turns = 0;
    let busy = true;
    const turn = () => {
      turns++;
      const until = performance.now() + 5;
      while (performance.now() < until);
      if (busy) setImmediate(turn);
    };
    setImmediate(turn);
    const value = await work();
    busy = false;
    return { value, turns };
  }

  const largeReportJson = () => `{"schema_version":1,"rows":[${Array.from({ length: 200_000 }, (_, i) => `{"rater":"r${i}","n":${i % 97},"agreement":${(i % 89) / 89}}`).join(',')}]}`;

  it('decompressReport inflates a report of over 10 MB (about a million judgments\' size) in a few turns of the event loop, so that a request thread busy with raters does not hold it for a minute', async () => {
    const json = largeReportJson();
    expect(json.length).toBeGreaterThan(10_000_000);
    const { value: inflated, turns } = await turnsWhile(() => decompressReport(compressReport(json)));
    expect(inflated?.toString('utf8')).toBe(json);
    // zlib's default 16 KB output chunks took one turn per chunk, over 700 for this report, whatever the machine's speed;
    // 1 MB chunks take a dozen, plus the turns that pass while the thread pool inflates (more on a loaded machine).
    // Each turn of a busy server lasts as long as its queued requests.
    expect(turns).toBeLessThan(300);
  });

  it('gzipHoldsReport (the check the server makes before it serves or exports a stored report) accepts a whole report of over 10 MB in a few turns, and refuses one cut short, one whose checksum or length is wrong, JSON that is not a report and bytes that are not gzip', async () => {
    const json = largeReportJson();
    const stored = compressReport(json);
    const { value: whole, turns } = await turnsWhile(() => gzipHoldsReport(stored));
    expect(whole).toBe(true);
    expect(turns).toBeLessThan(300);

    const damaged = (at: number) => {
      const bytes = Buffer.from(stored);
      bytes[at] = (bytes[at] as number) ^ 0xff;
      return bytes;
    };
    expect(await gzipHoldsReport(stored.subarray(0, stored.length - 100))).toBe(false);
    expect(await gzipHoldsReport(stored.subarray(0, stored.length - 1))).toBe(false);
    expect(await gzipHoldsReport(damaged(stored.length - 6))).toBe(false); // the CRC-32 of the trailer
    expect(await gzipHoldsReport(damaged(stored.length - 2))).toBe(false); // the length of the trailer
    expect(await gzipHoldsReport(compressReport('{"rows":[1,2,3]}'))).toBe(false);
    expect(await gzipHoldsReport(compressReport(json.slice(0, -1)))).toBe(false);
    expect(await gzipHoldsReport(Buffer.from(json))).toBe(false);
    expect(await gzipHoldsReport(compressReport('{"schema_version":1}'))).toBe(true);
  });

  it('getBatchAnalysis (the CLI, in process), stores the gzip, reads back an older text row of the current version as it is, and recomputes a damaged gzip row', () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'b']] });
    const computed = getBatchAnalysis(t.db, batch.batchId, { now: new Date('2026-03-01T00:00:00Z') });
    expect(computed?.n_judgments).toBe(3);
    expect(storedType(t.db, batch.batchId)).toBe('blob');
    expect(storedAnalysis(t.db, batch.batchId)).toEqual(computed);

    const text = JSON.stringify({ ...computed, generated_at: 'read back from text' });
    t.db.prepare('UPDATE analysis_cache SET result = ? WHERE batch_id = ?').run(text, batch.batchId);
    expect(getBatchAnalysis(t.db, batch.batchId)?.generated_at).toBe('read back from text');

    t.db.prepare('UPDATE analysis_cache SET result = ? WHERE batch_id = ?').run(gzipSync(text).subarray(0, 20), batch.batchId);
    const recomputed = getBatchAnalysis(t.db, batch.batchId, { now: new Date('2026-03-02T00:00:00Z') });
    expect(recomputed?.generated_at).toBe('2026-03-02T00:00:00.000Z');
    expect(storedType(t.db, batch.batchId)).toBe('blob');
  });
});
