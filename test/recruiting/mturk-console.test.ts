import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { signIn } from '../auth/session-helpers.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { mturkSetup, walkFromMturk, workerIds } from './mturk-helpers.js';

describe('MTurk in the console', () => {
  it('the MTurk page, for an admin, shows the dry run and the money before a typed confirmation, then publishes, compares counts and settles once; the server log never holds the AWS secret', async () => {
    const setup = await mturkSetup();
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const app = createApp({ db: setup.db, config: setup.config, logger: pino({ level: 'trace' }, sink), sessionSecret: TEST_SECRET, clock: setup.clock });
    const admin = await signIn(app, setup.db, 'admin', { behindTls: true });
    const researcher = await signIn(app, setup.db, 'researcher', { behindTls: true });
    const id = setup.seeded.batchId;
    const pages: string[] = [];
    const get = async (agent: typeof admin.agent, path: string, status = 200) => {
      const res = await agent.get(path).expect(status);
      pages.push(res.text);
      return res.text;
    };

    expect(await get(admin.agent, `/console/batches/${id}`)).toContain(`/console/batches/${id}/mturk`);
    const preview = await get(admin.agent, `/console/batches/${id}/mturk`);
    expect(preview).toContain('CreateHITWithHITType');
    expect(preview).toContain('total 28.00 USD');
    expect(setup.fake.hits.size).toBe(0);

    const unconfirmed = await admin.agent.post(`/console/batches/${id}/mturk/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'yes' });
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('type &#34;publish&#34; to confirm');
    expect((await admin.agent.post(`/console/batches/${id}/mturk/publish`).type('form').send({ confirm: 'publish' })).status).toBe(403);
    expect((await researcher.agent.post(`/console/batches/${id}/mturk/publish`).type('form').send({ _csrf: researcher.csrf, confirm: 'publish' })).status).toBe(403);
    expect(setup.fake.hits.size).toBe(0);
    await admin.agent.post(`/console/batches/${id}/mturk/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' }).expect(303);
    const hit = [...setup.fake.hits.values()][0];
    if (!hit) throw new Error('no HIT');

    for (const worker of workerIds(2)) await walkFromMturk(setup, setup.fake.acceptHit(hit.HITId, worker).url, 'complete');
    const status = await get(researcher.agent, `/console/batches/${id}/mturk`);
    expect(status).toContain('No mismatch between MTurk and simarena.');
    expect(status).not.toContain('Settle payments on MTurk');

    const settle = await get(admin.agent, `/console/batches/${id}/mturk`);
    expect(settle).toContain('approve: 2 assignment(s)');
    expect(settle).toContain('bonus: 2 worker(s), 1.00 USD');
    expect(setup.fake.calls('ApproveAssignment') + setup.fake.calls('SendBonus')).toBe(0);
    expect((await researcher.agent.post(`/console/batches/${id}/mturk/settle`).type('form').send({ _csrf: researcher.csrf, confirm: 'settle' })).status).toBe(403);
    await admin.agent.post(`/console/batches/${id}/mturk/settle`).type('form').send({ _csrf: admin.csrf, confirm: 'settle' }).expect(303);
    await admin.agent.post(`/console/batches/${id}/mturk/settle`).type('form').send({ _csrf: admin.csrf, confirm: 'settle' }).expect(303);
    const after = await get(admin.agent, `/console/batches/${id}/mturk`);
    expect(after).toContain('Nothing to send.');
    expect(after).toContain('What was sent to MTurk');
    expect(setup.fake.calls('ApproveAssignment')).toBe(2);
    expect(setup.fake.bonuses).toHaveLength(2);
    expect(listBatchOperations(setup.db, id, 'mturk').filter((o) => o.kind === 'bonus')).toHaveLength(2);

    await admin.agent.post(`/console/batches/${id}/close`).type('form').send({ _csrf: admin.csrf, confirm: 'close' }).expect(303);
    expect(await get(admin.agent, `/console/batches/${id}`)).toContain('expire its MTurk HITs too');
    await admin.agent.post(`/console/batches/${id}/mturk/expire`).type('form').send({ _csrf: admin.csrf }).expect(303);
    expect(() => setup.fake.acceptHit(hit.HITId, 'A777WORKER7Q')).toThrow(/not assignable/);

    for (const text of [...pages, lines.join('')]) {
      expect(text).not.toContain(setup.credentials.secretAccessKey);
      expect(text).not.toContain(setup.credentials.sessionToken);
    }
  }, 120_000);
});
