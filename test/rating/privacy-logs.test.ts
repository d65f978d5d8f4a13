// Issue 10, point 6: the access log never holds participant ids or rater, entry or preview tokens, and a failed
// sign-in keeps only a well-formed email address. The real app logs through a real pino logger into a buffer.
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { previewToken } from '../../src/rating/rater-token.js';
import { redactUrl } from '../../src/web/logger.js';
import { csrfFrom } from '../auth/session-helpers.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { createTestDb } from '../helpers/test-db.js';
import { raterClient, seedBatch } from './rating-fixtures.js';

function appWithCapturedLog(level: 'info' | 'warn' = 'info') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const { db, path } = createTestDb();
  const config = loadConfig({ DATABASE_PATH: path, LOG_LEVEL: level });
  const app = createApp({ db, config, logger: pino({ level }, sink), sessionSecret: TEST_SECRET });
  return { app, db, lines };
}

const PID = '5f0c1a2b3c4d5e6f7a8b9c0d';

describe('privacy in logs', () => {
  it('GET and POST on rater routes, for a Prolific participant walking to a comparison and answering, write access log lines without the PID, session id, rater, entry or assignment tokens', async () => {
    const { app, db, lines } = appWithCapturedLog();
    const seeded = seedBatch(db, { settings: { provider: { kind: 'prolific' } } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${PID}&STUDY_ID=study9&SESSION_ID=session9`);
    expect(page.url).toContain('/c/');
    await rater.submit(page.res.text, { choice: 'left' });
    await rater.get(`/r/${seeded.publicId}/preview?pt=${encodeURIComponent(previewToken(TEST_SECRET, seeded.publicId))}`);
    const rt = /rt=([^&]+)/.exec(page.url)?.[1] ?? '';
    const assignment = /\/c\/([^/?]+)/.exec(page.url)?.[1] ?? '';
    expect(rt.length).toBeGreaterThan(10);
    const access = lines.filter((line) => line.includes('"req"'));
    expect(access.length).toBeGreaterThanOrEqual(8);
    const text = lines.join('\n');
    for (const secret of [PID, 'session9', decodeURIComponent(rt).split('.')[0] ?? 'x', rt, assignment, 'pt=']) expect(text).not.toContain(secret);
    expect(text).not.toContain('"query"');
    expect(text).toContain(`/r/${seeded.publicId}/c/:assignment?[redacted]`);
  });

  it('with the log level at warn, a rater walking to a comparison and answering writes no access log line, and a rater page failing on damaged data still logs its error with the redacted URL', async () => {
    const { app, db, lines } = appWithCapturedLog('warn');
    const seeded = seedBatch(db, { settings: { provider: { kind: 'prolific' } } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${PID}&STUDY_ID=study9&SESSION_ID=session9`);
    await rater.submit(page.res.text, { choice: 'left' });
    expect(lines).toEqual([]);

    // Valid JSON of the wrong shape: the column's CHECK lets it through, its zod schema does not.
    db.prepare('UPDATE batches SET settings = :settings WHERE public_id = :publicId').run({ settings: '{"provider":7}', publicId: seeded.publicId });
    const failed = await rater.get(page.url);
    expect(failed.status).toBe(500);
    expect(lines).toHaveLength(1);
    const logged = JSON.parse(lines[0] as string) as { level: number; url: string; msg: string };
    expect(logged.level).toBe(50);
    expect(logged.url).toBe(`/r/${seeded.publicId}/c/:assignment?[redacted]`);
    expect(lines[0]).not.toContain(PID);
  });

  it('redactUrl, for rater routes and token-carrying console links, keeps the route and drops the identifying parts', () => {
    expect(redactUrl('/r/abc?PROLIFIC_PID=x&SESSION_ID=y')).toBe('/r/abc?[redacted]');
    expect(redactUrl('/r/abc/c/tok123/report?rt=z')).toBe('/r/abc/c/:assignment/report?[redacted]');
    expect(redactUrl('/r/abc/done')).toBe('/r/abc/done');
    expect(redactUrl('/console/batches?page=2&rt=secret')).toBe('/console/batches?page=2&rt=[redacted]');
  });

  it('POST /console/login, when the email field holds something that is not an email address, records the failure without the typed text; a well-formed address is kept', async () => {
    const { app, db } = appWithCapturedLog();
    const agent = request.agent(app);
    const page = await agent.get('/console/login');
    const typedPassword = 'my secret password 123';
    await agent.post('/console/login').type('form').send({ _csrf: csrfFrom(page.text), email: typedPassword, password: 'x' }).expect(401);
    await agent.post('/console/login').type('form').send({ _csrf: csrfFrom(page.text), email: 'Someone@Example.org', password: 'x' }).expect(401);
    const details = db.prepare("SELECT details FROM audit_log WHERE action = 'login.failed' ORDER BY id").pluck().all() as string[];
    expect(details.map((d) => JSON.parse(d) as unknown)).toEqual([{ email: null }, { email: 'someone@example.org' }]);
    expect(details.join('')).not.toContain('secret');
  });
});
