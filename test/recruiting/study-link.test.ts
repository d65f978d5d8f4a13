// Issue 49 item 2: publishing a study whose link nobody outside can open. Every publish path (the CLI and the console,
// Prolific and MTurk) refuses a loopback, private-range, localhost or plain-http link, naming PUBLIC_URL and the docs
// page, and sends nothing; a dry run says the same as a loud warning; the console shows the exact link beside its button.
import { describe, expect, it } from 'vitest';
import { signIn } from '../auth/session-helpers.js';
import { cli } from '../helpers/run-cli.js';
import { mturkSetup } from './mturk-helpers.js';
import { PUBLIC_URL, prolificSetup } from './prolific-helpers.js';

const FIX = 'Set PUBLIC_URL to the https address participants reach the server at (see docs/operator/running-in-public.md).';
const platformRows = (db: { prepare: (sql: string) => { pluck: () => { get: () => unknown } } }) =>
  db.prepare('SELECT (SELECT count(*) FROM platform_operations) + (SELECT count(*) FROM batch_platform_links)').pluck().get();

describe('publishing a study link nobody outside can open', () => {
  it('prolific publish, with PUBLIC_URL on 127.0.0.1, refuses naming PUBLIC_URL and the docs, sends Prolific nothing; --dry-run warns loudly and exits 0', async () => {
    const setup = await prolificSetup({ publicUrl: 'http://127.0.0.1:4311' });
    const link = `http://127.0.0.1:4311/r/${setup.seeded.publicId}?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}`;
    const refused = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: Nothing was published on Prolific. The study link ${link} points at a loopback address, this machine itself: nobody else can open it. ${FIX}`);
    expect(setup.fake.requests.filter((r) => r.method === 'POST')).toEqual([]);
    expect(platformRows(setup.db)).toBe(0);

    const dry = await cli(['prolific', 'publish', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`Study link: ${link}`);
    expect(dry.stderr).toContain(`WARNING: The study link ${link} points at a loopback address`);
    expect(dry.stderr).toContain(`${FIX} Publishing would be refused.`);
    const json = await cli(['prolific', 'publish', String(setup.seeded.batchId), '--dry-run', '--json'], setup.cliEnv);
    expect(JSON.parse(json.stdout)).toMatchObject({ studyUrl: link, warnings: [expect.stringContaining('loopback')] });
    expect(json.stderr).toContain('WARNING: ');
    expect(setup.fake.studies.size).toBe(0);
  });

  it('prolific publish, with an http PUBLIC_URL on a public name, refuses plain http', async () => {
    const setup = await prolificSetup({ publicUrl: 'http://rate.example.org' });
    const refused = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is plain http: participants on Prolific and MTurk need an https link');
    expect(setup.fake.studies.size).toBe(0);
  });

  it('mturk publish, with an https PUBLIC_URL on a private-range address, refuses and creates no HIT; --dry-run warns', async () => {
    const setup = await mturkSetup({ publicUrl: 'https://192.168.1.20:8443' });
    const refused = await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: Nothing was published on MTurk. The study link https://192.168.1.20:8443/r/${setup.seeded.publicId} points at a private-range address: only people on this local network can open it. ${FIX}`,
    );
    expect(setup.fake.requests).toEqual([]);
    expect(platformRows(setup.db)).toBe(0);
    const dry = await cli(['mturk', 'publish', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain('WARNING: The study link https://192.168.1.20:8443/r/');
  });

  it('the Prolific publish page, with PUBLIC_URL on localhost, shows the link beside a disabled button and the POST is refused with nothing sent', async () => {
    const setup = await prolificSetup({ publicUrl: 'http://localhost:3000' });
    const admin = await signIn(setup.app, setup.db, 'admin');
    const id = setup.seeded.batchId;
    const page = (await admin.agent.get(`/console/batches/${id}/prolific`).expect(200)).text;
    expect(page).toContain(`value="http://localhost:3000/r/${setup.seeded.publicId}?PROLIFIC_PID={{%PROLIFIC_PID%}}`);
    expect(page).toContain('points at localhost, this machine itself: nobody else can open it.');
    expect(page).toContain('<button type="submit" disabled aria-describedby="study-link-problem">Publish on Prolific</button>');
    const refused = await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('Nothing was published on Prolific.');
    expect(refused.text).toContain('PUBLIC_URL');
    // The page's dry run asked Prolific's cost calculator; nothing was created.
    expect(setup.fake.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/api/v1/study-cost-calculator/']);
    expect(platformRows(setup.db)).toBe(0);
  });

  it('the Prolific publish page, with an https PUBLIC_URL, shows beside the button the very link the study is then created with', async () => {
    const setup = await prolificSetup();
    const admin = await signIn(setup.app, setup.db, 'admin', { behindTls: true });
    const id = setup.seeded.batchId;
    const page = (await admin.agent.get(`/console/batches/${id}/prolific`).expect(200)).text;
    const shown = /id="study-link" class="wide" readonly value="([^"]+)"/.exec(page)?.[1]?.replace(/&amp;/g, '&');
    expect(shown?.startsWith(`${PUBLIC_URL}/r/${setup.seeded.publicId}?`)).toBe(true);
    expect(page).not.toContain('study-link-problem');
    await admin.agent.post(`/console/batches/${id}/prolific/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' }).expect(303);
    expect([...setup.fake.studies.values()].map((s) => s.external_study_url)).toEqual([shown]);
  });

  it('the MTurk publish page, with an http PUBLIC_URL, shows the link and the warning beside a disabled button; the POST is refused', async () => {
    const setup = await mturkSetup({ publicUrl: 'http://10.0.0.5:3000' });
    const admin = await signIn(setup.app, setup.db, 'admin');
    const id = setup.seeded.batchId;
    const page = (await admin.agent.get(`/console/batches/${id}/mturk`).expect(200)).text;
    expect(page).toContain(`value="http://10.0.0.5:3000/r/${setup.seeded.publicId}"`);
    expect(page).toContain('points at a private-range address');
    expect(page).toContain('<button type="submit" disabled aria-describedby="study-link-problem">Publish on MTurk</button>');
    const refused = await admin.agent.post(`/console/batches/${id}/mturk/publish`).type('form').send({ _csrf: admin.csrf, confirm: 'publish' });
    expect(refused.status).toBe(409);
    // The page's dry run read the account balance; nothing was created.
    expect(setup.fake.requests.map((r) => r.operation)).toEqual(['GetAccountBalance']);
  });
});
