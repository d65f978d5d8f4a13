import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { DEMO_BATCH_NAME } from '../../src/batches/demo-batch.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connection.js';
import { prepareFirstStart } from '../../src/first-start.js';
import { makeBatch, makeRun } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { startServer, stopServer } from '../helpers/start-server.js';
import { buildTestApp } from '../helpers/test-app.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { count, raterClient } from '../rating/rating-fixtures.js';

const NOW = new Date('2026-03-01T10:00:00.000Z');

function demoBatch(db: ReturnType<typeof createTestDb>['db']) {
  return db
    .prepare<{ name: string }, { id: number; public_id: string; state: string }>("SELECT id, public_id, state FROM batches WHERE created_by = 'system' AND name = :name")
    .get({ name: DEMO_BATCH_NAME });
}

describe('the demo batch', () => {
  it('GET /r/:demo, after 25 visitors from one address consented and left their tabs and 3 more walked every comparison, still shows the consent page', async () => {
    const t = buildTestApp();
    await prepareFirstStart(t.db, t.config, new Date());
    const demo = demoBatch(t.db);
    expect(demo?.state).toBe('open');
    const publicId = demo?.public_id ?? '';
    for (let i = 0; i < 25; i += 1) {
      const visitor = raterClient(t.app);
      const consent = await visitor.follow(`/r/${publicId}`);
      expect(consent.res.text, `visitor ${i + 1}`).toContain('<h1>Consent</h1>');
      expect((await visitor.submit(consent.res.text, { decision: 'agree' })).status).toBe(303);
    }
    for (let i = 0; i < 3; i += 1) {
      const walker = raterClient(t.app);
      let page = await walker.startRating(publicId);
      for (let step = 0; step < 10 && page.res.text.includes('name="choice"'); step += 1) {
        const answered = await walker.submit(page.res.text, { choice: 'left' });
        expect(answered.status).toBe(303);
        page = await walker.follow(String(answered.headers.location));
      }
      expect(page.res.text).toContain('You have finished all your comparisons');
    }
    expect(count(t.db, 'SELECT COUNT(*) FROM judgments')).toBe(12);
    const next = await raterClient(t.app).follow(`/r/${publicId}`);
    expect(next.res.status).toBe(200);
    expect(next.res.text).toContain('<h1>Consent</h1>');
    expect(next.res.text).not.toContain('This study is full');
  });

  it("prepareFirstStart, on a database that holds a researcher's run and no demo, seeds no demo and says so in one line", async () => {
    const { db, path } = createTestDb();
    makeRun(db, { name: 'study-run' });
    const report = await prepareFirstStart(db, loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent' }), NOW);
    expect(report.demoSkipped).toBe("demo not seeded: this database already holds a researcher's work (1 run); the demo stays out of it");
    expect(count(db, "SELECT COUNT(*) FROM runs WHERE kind = 'demo'")).toBe(0);
    expect(count(db, 'SELECT COUNT(*) FROM batches')).toBe(0);
  });

  it("prepareFirstStart, when a researcher's batch joins a database whose demo is open, pauses the demo once and keeps it open after an admin reopens it", async () => {
    const { db, path } = createTestDb();
    const config = loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent' });
    await prepareFirstStart(db, config, NOW);
    expect(demoBatch(db)?.state).toBe('open');
    makeRun(db, { name: 'study-run' });
    makeBatch(db);
    const report = await prepareFirstStart(db, config, NOW);
    expect(report.demoSkipped).toBe("demo batch paused: this database now holds a researcher's work (1 run, 1 batch); open it again in the console to keep showing it");
    expect(demoBatch(db)?.state).toBe('paused');
    transitionBatch(db, demoBatch(db)?.id ?? 0, 'open', 'admin@localhost', NOW);
    expect((await prepareFirstStart(db, config, NOW)).demoSkipped).toBeNull();
    expect(demoBatch(db)?.state).toBe('open');
  });

  it("simarena on a fresh study database seeds no demo, and npm start on it afterwards, once a researcher's run is there, seeds none either and logs why", async () => {
    const dbPath = join(tempDir(), 'study.db');
    expect((await cli(['scenarios', 'list'], { DATABASE_PATH: dbPath })).code).toBe(0);
    const db = openDatabase(dbPath);
    try {
      expect(db.prepare('SELECT COUNT(*) FROM runs').pluck().get()).toBe(0);
      expect(db.prepare('SELECT COUNT(*) FROM batches').pluck().get()).toBe(0);
      makeRun(db, { name: 'study-run' });
    } finally {
      db.close();
    }
    const { child, output } = await startServer({ DATABASE_PATH: dbPath, LOG_LEVEL: 'info' });
    await stopServer(child);
    expect(output()).toContain("demo not seeded: this database already holds a researcher's work (1 run)");
    expect(output()).not.toContain('Rater link of demo batch');
    const after = openDatabase(dbPath);
    try {
      expect(after.prepare("SELECT COUNT(*) FROM runs WHERE kind = 'demo'").pluck().get()).toBe(0);
      expect(after.prepare('SELECT COUNT(*) FROM batches').pluck().get()).toBe(0);
    } finally {
      after.close();
    }
  });
});
