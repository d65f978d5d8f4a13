import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';
import { participantIds, prolificSetup, walkFromProlific } from './prolific-helpers.js';

describe('Prolific in the console', () => {
  it('the batch page, publish page and settle page, for an admin, show the dry run and the money before a typed confirmation, then publish and settle once', async () => {
    const setup = await prolificSetup();
    const admin = await signIn(setup.app, setup.db, 'admin', { behindTls: true });
    const researcher = await signIn(setup.app, setup.db, 'researcher', { behindTls: true });
    const id = setup.seeded.batchId;
    const pages: string[] = [];
    const get = async (agent: typeof admin.agent, path: string, status = 200) => {
      const res = await agent.get(path).expect(status);
      pages.push(res.text);
      return res.text;
    };

    expect(await get(admin.agent, `/console/batches/${id}`)).toContain(`/console/batches/${id}/prolific/settle`);
    const preview = await get(admin.agent, `/console/batches/${id}/prolific`);
    expect(preview).toContain('POST studies/');
    expect(preview).toContain('26.67 GBP');
    expect(setup.fake.studies.size).toBe(0);

    const unconfirmed = await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'yes' });
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('type &#34;publish&#34; to confirm');
    expect(setup.fake.studies.size).toBe(0);
    const noCsrf = await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ confirm: 'publish' });
    expect(noCsrf.status).toBe(403);
    expect((await researcher.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: researcher.csrf, confirm: 'publish' })).status).toBe(403);
    await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' }).expect(303);
    const study = [...setup.fake.studies.values()][0];
    expect(study?.status).toBe('ACTIVE');

    for (const pid of participantIds(2)) {
      const { submission, url } = setup.fake.startSubmission(study?.id ?? '', pid);
      setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    }
    const status = await get(researcher.agent, `/console/batches/${id}/prolific`);
    expect(status).toContain('AWAITING REVIEW');
    expect(status).toContain('No mismatch between Prolific and simarena.');
    await get(researcher.agent, `/console/batches/${id}/prolific/settle`, 403);

    const settle = await get(admin.agent, `/console/batches/${id}/prolific/settle`);
    expect(settle).toContain('Approve: <strong>2</strong>');
    expect(settle).toContain('<strong>1.00 GBP</strong>');
    expect(setup.fake.requests.filter((r) => r.method === 'POST' && /approve|bonus/.test(r.path))).toEqual([]);
    await admin.agent.post(`/console/batches/${id}/prolific/settle`).type('form').send({ _csrf: admin.csrf, confirm: 'settle' }).expect(303);
    // Prolific approves and pays afterwards: until then both are shown in flight.
    const inFlight = await get(admin.agent, `/console/batches/${id}/prolific`);
    expect(inFlight).toContain('2 submission(s) were sent for approval and Prolific does not show them approved yet');
    expect(inFlight).toMatch(/Bonus payment <code>[0-9a-f]+<\/code> \(2 participant\(s\), 1\.00 GBP\) was taken by Prolific at .*; shown on 0 of 2/);
    setup.fake.process();
    await admin.agent.post(`/console/batches/${id}/prolific/settle`).type('form').send({ _csrf: admin.csrf, confirm: 'settle' }).expect(303);
    const after = await get(admin.agent, `/console/batches/${id}/prolific/settle`);
    expect(after).toContain('Nothing to send.');
    expect(after).toContain('bonus pay');
    expect(after).not.toContain('In flight on Prolific');
    expect([...setup.fake.bonuses.values()].map((b) => b.payCalls)).toEqual([1]);
    expect(listBatchOperations(setup.db, id).filter((o) => o.kind === 'approve')).toHaveLength(1);

    // Closing the batch offers to stop the study.
    await admin.agent.post(`/console/batches/${id}/close`).type('form').send({ _csrf: admin.csrf, confirm: 'close' }).expect(303);
    expect(await get(admin.agent, `/console/batches/${id}`)).toContain('stop its Prolific study too');
    await admin.agent.post(`/console/batches/${id}/prolific/study`).type('form').send({ _csrf: admin.csrf, action: 'STOP' }).expect(303);
    expect(study?.status).toBe('AWAITING REVIEW');

    for (const page of pages) expect(page).not.toContain(setup.token);
  });

  it('the settle page, for a bonus payment whose answer was lost and a participant asked to return who did not, shows the bulk id, what Prolific shows and the day-21 deadline, and resends the pay only on the typed bulk id, in the audit log', async () => {
    const setup = await prolificSetup();
    const admin = await signIn(setup.app, setup.db, 'admin', { behindTls: true });
    const id = setup.seeded.batchId;
    await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' }).expect(303);
    const study = [...setup.fake.studies.values()][0];
    const [done, declined] = participantIds(2) as [string, string];
    const first = setup.fake.startSubmission(study?.id ?? '', done);
    setup.fake.completeSubmission(first.submission.id, (await walkFromProlific(setup, first.url, 'complete')) ?? '');
    const second = setup.fake.startSubmission(study?.id ?? '', declined);
    setup.fake.completeSubmission(second.submission.id, (await walkFromProlific(setup, second.url, 'decline')) ?? '');
    setup.fake.faults.push({ method: 'POST', path: /\/pay\/$/, status: 503 });
    const settled = await admin.agent.post(`/console/batches/${id}/prolific/settle`).type('form').send({ _csrf: admin.csrf, confirm: 'settle' }).expect(303);
    expect(settled.headers.location).toBe(`/console/batches/${id}/prolific/settle`);
    const bulkId = [...setup.fake.bonuses.keys()][0] as string;
    const page = (await admin.agent.get(`/console/batches/${id}/prolific/settle`).expect(200)).text;
    expect(page).toContain(`Stopped (bonuses): The bonus payment ${bulkId}`);
    expect(page).toContain(`Bonus payment <code>${bulkId}</code> (1 participant(s), 0.50 GBP) was sent at`);
    expect(page).toContain('its answer was lost; Prolific shows it on 0 of 1 submission(s)');
    const deadline = new Date(second.submission.completed_at ?? '');
    const day = new Date(Date.UTC(deadline.getUTCFullYear(), deadline.getUTCMonth(), deadline.getUTCDate() + 21)).toISOString().slice(0, 10);
    expect(page).toContain(`${day} 00:00 UTC</time></td><td>${declined}</td>`);
    expect(page).toContain('declined consent (asked to return the study); asked to return on');

    const researcher = await signIn(setup.app, setup.db, 'researcher', { behindTls: true });
    expect((await researcher.agent.post(`/console/batches/${id}/prolific/confirm-unpaid`).type('form').send({ _csrf: researcher.csrf, bulkId, confirm: bulkId })).status).toBe(403);
    const mistyped = await admin.agent.post(`/console/batches/${id}/prolific/confirm-unpaid`).type('form').send({ _csrf: admin.csrf, bulkId, confirm: 'yes' });
    expect(mistyped.status).toBe(400);
    expect(mistyped.text).toContain('type the bulk bonus id to confirm that Prolific did not pay it');
    const pays = () => setup.fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pay/')).length;
    expect(pays()).toBe(1);
    await admin.agent.post(`/console/batches/${id}/prolific/confirm-unpaid`).type('form').send({ _csrf: admin.csrf, bulkId, confirm: bulkId }).expect(303);
    expect(pays()).toBe(2);
    const audit = setup.db.prepare("SELECT actor FROM audit_log WHERE action = 'prolific.bonus_confirmed_unpaid'").pluck().all();
    expect(audit).toEqual([admin.email]);
    setup.fake.process();
    expect(first.submission).toMatchObject({ status: 'APPROVED', bonus_payments: [50] });
  });

  it('the Prolific pages, when Prolific refuses or cannot be reached, show its message and never the token', async () => {
    const setup = await prolificSetup();
    const admin = await signIn(setup.app, setup.db, 'admin', { behindTls: true });
    const id = setup.seeded.batchId;
    await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' }).expect(303);
    setup.fake.faults.push({ method: 'GET', path: /studies\/[^/]+\/$/, status: 403, body: { error: { title: 'Forbidden', detail: `token ${setup.token} may not read this study` } } });
    const page = await admin.agent.get(`/console/batches/${id}/prolific`).expect(200);
    expect(page.text).toContain('Prolific');
    expect(page.text).toContain('[redacted]');
    expect(page.text).not.toContain(setup.token);
    await setup.fake.close();
    const down = await admin.agent.post(`/console/batches/${id}/prolific/study`).type('form').send({ _csrf: admin.csrf, action: 'PAUSE' });
    expect(down.status).toBeGreaterThanOrEqual(500);
    expect(down.text).toContain('gave no answer');
    expect(down.text).not.toContain(setup.token);
    setup.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(setup.dbPath).includes(Buffer.from(setup.token))).toBe(false);
  }, 120_000);

  it('the server log, while Prolific pages are used, fail and succeed at the most verbose level, never holds the token', async () => {
    const setup = await prolificSetup();
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const app = createApp({ db: setup.db, config: setup.config, logger: pino({ level: 'trace' }, sink), sessionSecret: TEST_SECRET, clock: setup.clock });
    const admin = await signIn(app, setup.db, 'admin', { behindTls: true });
    const id = setup.seeded.batchId;
    await admin.agent.get(`/console/batches/${id}/prolific`).expect(200);
    setup.fake.faults.push({ method: 'POST', path: /studies\/$/, status: 400, body: { error: { title: 'Bad request', detail: `bad study (token ${setup.token})` } } });
    const refused = await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' });
    expect(refused.status).toBe(502);
    expect(refused.text).toContain('bad study (token [redacted])');
    await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' }).expect(303);
    await admin.agent.get(`/console/batches/${id}/prolific/settle`).expect(200);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(setup.token);
    expect(refused.text).not.toContain(setup.token);
  });
});
