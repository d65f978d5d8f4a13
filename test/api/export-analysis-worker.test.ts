// The bundle's analysis when the server exports (API, console download form): computed in the analysis worker process,
// of the data as of the export (issue 12, point 3); its analysis.json and report.html written by the worker into a
// temporary folder and copied into the archive by the server, which never parses, pretty-prints or renders the report.
import { createWriteStream, readdirSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answeredWhileWorkerComputes } from '../helpers/worker-ordering.js';
import { seedStoredJudgments } from '../../scripts/bench/support/bench-study.js';
import { analysisRunning, bundleFilesRunning, storedReportParsed } from '../../src/analysis/background-analysis.js';
import { analysisInWorker, exportToPath, writeExport } from '../../src/export/export-batch.js';
import { makeTwoQuestionBatch } from '../analysis/two-question-fixture.js';
import { makeUser, signIn, tokenFor } from '../auth/session-helpers.js';
import { zipRead } from '../export/export-fixtures.js';
import { makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { serve } from '../helpers/browser.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { storedAnalysis } from '../helpers/stored-analysis.js';

type Report = { n_judgments: number; question?: { id: string }; questions?: unknown[] };

const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};

/** One file of a downloaded bundle. */
function bundleFile(body: Buffer, entry: string): Buffer {
  const zip = join(tempDir(), 'bundle.zip');
  writeFileSync(zip, body);
  return zipRead(zip, entry);
}

/** The analysis.json of a downloaded bundle. */
const bundleReport = (body: Buffer): Report => JSON.parse(bundleFile(body, 'analysis.json').toString('utf8')) as Report;

/** analysis.json and report.html of the bundle the CLI writes (exportToPath, its analysis computed in process). */
async function cliBundleFiles(t: ReturnType<typeof buildTestApp>, batchId: number, question?: string) {
  const zip = join(tempDir(), 'cli.zip');
  await exportToPath(t.db, { batch: String(batchId), format: 'bundle', question }, zip);
  return { json: zipRead(zip, 'analysis.json'), html: zipRead(zip, 'report.html') };
}

// The server's temporary folders go under os.tmpdir(): each test gives it a folder of its own (TMPDIR), so that what
// is left there is this test's export's, whatever else runs on the machine.
let serverTmp = '';
let savedTmpdir: string | undefined;
beforeEach(() => {
  savedTmpdir = process.env.TMPDIR;
  serverTmp = tempDir('simarena-export-tmp-');
  process.env.TMPDIR = serverTmp;
});
afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});
/** The temporary folders a bundle export holds now. */
const bundleTemps = () => readdirSync(serverTmp).filter((name) => name.startsWith('simarena-bundle-'));

/** Waits (bounded) until `done()` holds; returns whether it did. */
async function eventually(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 1500 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
  return done();
}

const storedReport = (t: ReturnType<typeof buildTestApp>, batchId: number) => storedAnalysis<Report>(t.db, batchId);

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

  it('GET /api/batches/:id/export?format=bundle writes analysis.json and report.html byte for byte as the CLI\'s bundle of the same data, and leaves no temporary folder', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['a', 'a'], ['b', 'a']] });
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
    // The CLI first: it computes the analysis and stores it; the server's worker finds it current and writes its files from the stored text.
    const cli = await cliBundleFiles(t, made.batchId);
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=bundle`).set('Authorization', `Bearer ${token}`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    const json = bundleFile(res.body as Buffer, 'analysis.json');
    expect((JSON.parse(json.toString('utf8')) as Report).n_judgments).toBe(6);
    expect(json.equals(cli.json)).toBe(true);
    const html = bundleFile(res.body as Buffer, 'report.html');
    expect(html.toString('utf8')).toContain('<svg');
    expect(html.equals(cli.html)).toBe(true);
    expect(bundleTemps()).toEqual([]);
  });

  it('GET /api/batches/:id/export?format=bundle&question=ID, for a two-question batch, writes that question\'s analysis.json and report.html as the CLI\'s bundle of that question', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=bundle&question=goals`).set('Authorization', `Bearer ${token}`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    const cli = await cliBundleFiles(t, made.batchId, 'goals');
    const json = bundleFile(res.body as Buffer, 'analysis.json');
    expect((JSON.parse(json.toString('utf8')) as Report).question?.id).toBe('goals');
    expect(json.equals(cli.json)).toBe(true);
    expect(bundleFile(res.body as Buffer, 'report.html').equals(cli.html)).toBe(true);
    expect(bundleTemps()).toEqual([]);
  });

  it('GET /api/batches/:id/export?format=bundle leaves the server\'s own parsed copy of the stored report unset, where the console\'s analysis page (which parses it) sets it', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['b', 'b']] });
    const researcher = await signIn(t.app, t.db, 'researcher');
    const res = await researcher.agent.get(`/api/batches/${made.batchId}/export?format=bundle`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    expect(bundleReport(res.body as Buffer).n_judgments).toBe(4);
    expect(storedReportParsed(t.db, made.batchId)).toBe(false);
    // The page parses the whole report for a row stored without page parts (as before migration 028; another
    // computed_at, so that the server reads the row anew); with them it reads its page report alone.
    t.db.prepare("UPDATE analysis_cache SET page_report = NULL, parts_id = NULL, computed_at = '2026-01-01T00:00:00.000Z' WHERE batch_id = ?").run(made.batchId);
    await researcher.agent.get(`/console/batches/${made.batchId}/analysis`).expect(200);
    expect(storedReportParsed(t.db, made.batchId)).toBe(true);
  });

  it('GET /api/batches/:id/export?format=bundle, when the client goes away while the worker writes the analysis files, removes the temporary folder', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    seedStoredJudgments(t.db, made.batchId, 30_000);
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
    const server = await serve(t.app);
    try {
      const client = get(`${server.url}/api/batches/${made.batchId}/export?format=bundle`, { headers: { Authorization: `Bearer ${token}` } });
      client.on('error', () => undefined);
      expect(await eventually(() => bundleFilesRunning(t.db))).toBe(true);
      expect(bundleTemps()).toHaveLength(1);
      client.destroy();
      expect(await eventually(() => bundleTemps().length === 0)).toBe(true);
    } finally {
      await server.close();
    }
  }, 90_000);

  it('GET /api/batches/:id/export?format=bundle, when the client goes away while the archive streams, ends the export (audited as incomplete) and removes the temporary folder', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    // 30,000 judgments: judgments.csv streams for a while after the first bytes reach the client.
    seedStoredJudgments(t.db, made.batchId, 30_000);
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
    const exportAudit = () => t.db.prepare("SELECT details FROM audit_log WHERE action = 'batch.export'").pluck().get() as string | undefined;
    const server = await serve(t.app);
    try {
      let heldWhileStreaming: string[] = [];
      const client = get(`${server.url}/api/batches/${made.batchId}/export?format=bundle`, { headers: { Authorization: `Bearer ${token}` } });
      client.on('error', () => undefined);
      client.on('response', (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', () => {
          heldWhileStreaming = bundleTemps();
          client.destroy();
        });
      });
      expect(await eventually(() => exportAudit() !== undefined)).toBe(true);
      expect(JSON.parse(exportAudit() as string)).toMatchObject({ format: 'bundle', complete: false });
      expect(heldWhileStreaming).toHaveLength(1);
      expect(bundleTemps()).toEqual([]);
    } finally {
      await server.close();
    }
  }, 90_000);

  it('writeExport of a bundle with the analysis from the worker, when its destination fails while the archive is being written, rejects and removes the temporary folder', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['a', 'a']] });
    let heldWhileWriting: string[] = [];
    // A destination that takes the archive up to report.html's entry (after analysis.json was copied in), then fails as a full disk does.
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        if (!chunk.includes('report.html')) return callback();
        heldWhileWriting = bundleTemps();
        callback(new Error('no space left on the device'));
      },
    });
    await expect(writeExport(t.db, { batch: String(made.batchId), format: 'bundle' }, destination, { analysisOf: analysisInWorker(t.db, () => new Date()) })).rejects.toThrow(
      'no space left on the device',
    );
    expect(heldWhileWriting).toHaveLength(1);
    expect(bundleTemps()).toEqual([]);
  });

  it('writeExport of a bundle with the analysis from the worker, for an in-memory database the worker cannot open, writes the analysis files in process and removes the temporary folder', async () => {
    const db = openDatabase(':memory:');
    migrate(db);
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['b', 'b']] });
    const zip = join(tempDir(), 'memory.zip');
    const file = createWriteStream(zip);
    const closed = new Promise<void>((r) => file.once('close', () => r()));
    try {
      await writeExport(db, { batch: String(made.batchId), format: 'bundle' }, file, { analysisOf: analysisInWorker(db, () => new Date()) });
    } finally {
      await closed;
      db.close();
    }
    expect((JSON.parse(zipRead(zip, 'analysis.json').toString('utf8')) as Report).n_judgments).toBe(4);
    expect(zipRead(zip, 'report.html').toString('utf8')).toContain('<svg');
    expect(bundleTemps()).toEqual([]);
  });
});
