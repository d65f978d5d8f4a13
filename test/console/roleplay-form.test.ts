// Issue 52 (console): an admin creates a role-play batch in the console with the same settings, checked by the same
// schema, as `batches create --from FILE.json` with "task": "roleplay".
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchReady, makeRun, makeScenario } from '../helpers/factories.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp } from '../helpers/test-app.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { signIn } from '../auth/session-helpers.js';
import type { Db } from '../../src/db/connection.js';

const PATH = '/console/batches/new/roleplay';

/** What a researcher types, as the form sends it. */
const typed = (overrides: Record<string, string> = {}) => ({
  name: 'Live pilot',
  run: 'live-pilot',
  scenarios: 'all',
  waitSeconds: '90',
  fallbackModel: 'gpt-4o-mini',
  waitBonusPerMinute: '0.10',
  waitBonusAfterSeconds: '60',
  turnsMax: '12',
  turnsMin: '4',
  turnSeconds: '60',
  estimatedMinutes: '12',
  pay: '£2.50',
  consent: 'You agree to chat with a partner.',
  instructions: 'Play your character and pursue your goal.',
  providerKind: 'prolific',
  plannedRaters: '20',
  codeCompleted: 'DONE1',
  codeScreenedOut: 'SCRN1',
  codeNoConsent: 'NOCN1',
  codeNoPartner: 'NOPT1',
  ...overrides,
});

/** The same values as a batch file for the CLI. */
const asFile = {
  name: 'Live pilot',
  task: 'roleplay',
  run: 'live-pilot',
  scenarios: 'all',
  partner: { waitSeconds: 90, fallback: { model: 'gpt-4o-mini' }, waitBonus: { perMinute: '0.10', afterSeconds: 60 } },
  turns: { max: 12, min: 4, turnSeconds: 60 },
  estimatedMinutes: 12,
  pay: '£2.50',
  consent: 'You agree to chat with a partner.',
  instructions: 'Play your character and pursue your goal.',
  provider: { kind: 'prolific', completionCodes: { completed: 'DONE1', screenedOut: 'SCRN1', noConsent: 'NOCN1', noPartner: 'NOPT1' } },
  plannedRaters: 20,
};

const stored = (db: Db) => db.prepare('SELECT name, state, settings, created_by FROM batches').all() as { name: string; state: string; settings: string; created_by: string }[];
const collectionRuns = (db: Db) => db.prepare("SELECT name, kind, state, model, modes FROM runs WHERE kind = 'collection'").all();

describe('the console form of a new role-play batch', () => {
  it('GET /console/batches/new/roleplay, for an admin, offers the schema\'s defaults with the time a session can take; the rating form links to it; a researcher is refused', async () => {
    const t = buildTestApp();
    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get(PATH).expect(200);
    expect(page.text).toContain('New role-play batch');
    expect(page.text).toContain('name="waitSeconds" min="5" max="3600" value="120"');
    expect(page.text).toContain('name="turnsMax" min="2" max="100" value="20"');
    // 120 s of waiting + 10 own turns of 90 s = 17 minutes.
    expect(page.text).toContain('name="estimatedMinutes" min="1" max="600" value="17"');
    expect(page.text).toMatch(/name="_csrf" value="[^"]+"/);
    const rating = await admin.agent.get('/console/batches/new').expect(200);
    expect(rating.text).toContain(`href="${PATH}"`);
    const researcher = await signIn(t.app, t.db, 'researcher');
    expect((await researcher.agent.get(PATH)).status).toBe(403);
    expect((await researcher.agent.post(PATH).type('form').send({ _csrf: researcher.csrf, ...typed() })).status).toBe(403);
    expect(stored(t.db)).toEqual([]);
  });

  it('POST /console/batches/new/roleplay, with valid values, stores the very batch and collection run that batches create --from makes of the same values', async () => {
    const t = buildTestApp();
    makeScenario(t.db, { id: 'shared-scene' });
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent.post(PATH).type('form').send({ _csrf: admin.csrf, ...typed() });
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/console\/batches\/\d+$/);
    const page = await admin.agent.get(res.headers.location as string).expect(200);
    expect(page.text).toContain('Role-play batch created as a draft, collecting into run &#34;live-pilot&#34; (1 scenario casts to play)');

    const other = createTestDb();
    makeScenario(other.db, { id: 'shared-scene' });
    const file = join(tempDir(), 'roleplay.json');
    writeFileSync(file, JSON.stringify(asFile));
    const created = await cli(['batches', 'create', '--from', file], { DATABASE_PATH: other.path });
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const [fromForm] = stored(t.db);
    const [fromCli] = stored(other.db);
    expect(fromForm).toMatchObject({ name: 'Live pilot', state: 'draft', created_by: admin.email });
    expect(JSON.parse(fromForm?.settings ?? '{}')).toEqual(JSON.parse(fromCli?.settings ?? ''));
    expect(JSON.parse(fromForm?.settings ?? '{}')).toMatchObject({ task: 'roleplay', partner: { waitSeconds: 90, fallback: { model: 'gpt-4o-mini' }, waitBonus: { perMinute: '0.10', afterSeconds: 60 } }, turns: { max: 12, min: 4, turnSeconds: 60 } });
    expect(collectionRuns(t.db)).toEqual(collectionRuns(other.db));
    expect(collectionRuns(t.db)).toEqual([{ name: 'live-pilot', kind: 'collection', state: 'running', model: 'gpt-4o-mini', modes: '["HUMANS","HUMAN_AGENT"]' }]);
  });

  it('POST /console/batches/new/roleplay, without a fallback model or wait bonus, stores none: the batch ends a lonely wait with the no-partner code', async () => {
    const t = buildTestApp();
    makeScenario(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent.post(PATH).type('form').send({ _csrf: admin.csrf, ...typed({ fallbackModel: '', waitBonusPerMinute: '', waitBonusAfterSeconds: '', providerKind: 'link', plannedRaters: '' }) }).expect(303);
    const settings = JSON.parse(stored(t.db)[0]?.settings ?? '{}') as Record<string, unknown>;
    expect(settings).toMatchObject({ partner: { waitSeconds: 90, fallback: null, waitBonus: null }, plannedRaters: null, provider: { kind: 'link' } });
    expect(collectionRuns(t.db)).toEqual([{ name: 'live-pilot', kind: 'collection', state: 'running', model: 'human', modes: '["HUMANS"]' }]);
  });

  it('POST /console/batches/new/roleplay, with a minimum above the maximum, a wait too short, no run and an unreadable bonus, answers 400 naming each field and keeps what was typed', async () => {
    const t = buildTestApp();
    makeScenario(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent.post(PATH).type('form').send({ _csrf: admin.csrf, ...typed({ turnsMin: '30', waitSeconds: '2', run: '', waitBonusPerMinute: 'lots', instructions: 'Keep <b>this</b> text.' }) });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Nothing was saved: see the messages by the fields below.');
    expect(res.text).toMatch(/id="turnsMin-error">min must not exceed max</);
    expect(res.text).toMatch(/id="waitSeconds-error">[^<]*5/);
    expect(res.text).toMatch(/id="run-error">is required: the name of the run the collected dialogues land in</);
    expect(res.text).toMatch(/id="waitBonusPerMinute-error">/);
    expect(res.text).toContain('name="turnsMin" min="1" max="100" value="30" aria-invalid="true" aria-describedby="turnsMin-error"');
    expect(res.text).toContain('value="lots"');
    expect(res.text).toContain('Keep &lt;b&gt;this&lt;/b&gt; text.');
    expect(res.text).toContain('value="gpt-4o-mini"');
    expect(stored(t.db)).toEqual([]);
    expect(collectionRuns(t.db)).toEqual([]);
  });

  it('POST /console/batches/new/roleplay, when the run\'s name is a generation run\'s or Prolific lacks planned places, says why and keeps the form; without _csrf, 403', async () => {
    const t = buildTestApp();
    makeScenario(t.db);
    makeRun(t.db, { name: 'generated' });
    const admin = await signIn(t.app, t.db, 'admin');
    const taken = await admin.agent.post(PATH).type('form').send({ _csrf: admin.csrf, ...typed({ run: 'generated' }) });
    expect(taken.status).toBe(400);
    expect(taken.text).toContain('already names a run of kind import');
    expect(taken.text).toContain('value="generated"');
    const unplanned = await admin.agent.post(PATH).type('form').send({ _csrf: admin.csrf, ...typed({ plannedRaters: '' }) });
    expect(unplanned.status).toBe(400);
    expect(unplanned.text).toContain('needs plannedRaters: the places to publish.');
    expect((await admin.agent.post(PATH).type('form').send(typed())).status).toBe(403);
    expect(stored(t.db)).toEqual([]);
    expect(collectionRuns(t.db)).toEqual([]);
  });
});

describe('the console form of a role-play batch, editing', () => {
  /** A draft with settings the form does not show, which an edit must keep. */
  function draft(db: Db) {
    makeScenario(db);
    const settings = launchReady({
      ...asFile,
      partner: { ...asFile.partner, awaySeconds: 45, sameAddress: true, fallback: { model: 'gpt-4o-mini', wordsPerMinute: 80 } },
      provider: { ...asFile.provider, params: { participant: 'PID' } },
      addressLimits: { ratersPerWindow: 50, windowMinutes: 30, activeRaters: 9 },
    });
    return createBatch(db, settings, { actor: 'test', now: new Date() }).batchId;
  }
  const settingsOf = (db: Db, id: number) => JSON.parse(db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(id) as string) as Record<string, unknown>;

  it('POST /console/batches/:id/edit/roleplay, for a draft, saves what the form shows and keeps what it does not; the batch page links to it', async () => {
    const t = buildTestApp();
    const id = draft(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    expect((await admin.agent.get(`/console/batches/${id}`).expect(200)).text).toContain(`href="/console/batches/${id}/edit/roleplay"`);
    const page = await admin.agent.get(`/console/batches/${id}/edit/roleplay`).expect(200);
    expect(page.text).toContain('name="turnSeconds" min="5" max="900" value="60"');
    expect(page.text).toContain('name="run" required maxlength="200" value="live-pilot" readonly');
    const res = await admin.agent.post(`/console/batches/${id}/edit/roleplay`).type('form').send({ _csrf: admin.csrf, ...typed({ estimatedMinutes: '25', turnsMax: '10', waitBonusPerMinute: '', waitBonusAfterSeconds: '' }) });
    expect(res.status).toBe(303);
    const saved = settingsOf(t.db, id);
    expect(saved).toMatchObject({
      estimatedMinutes: 25,
      turns: { max: 10, min: 4, turnSeconds: 60 },
      partner: { waitSeconds: 90, awaySeconds: 45, sameAddress: true, fallback: { model: 'gpt-4o-mini', wordsPerMinute: 80 }, waitBonus: null },
      provider: { kind: 'prolific', params: { participant: 'PID' }, completionCodes: { noPartner: 'NOPT1' } },
      addressLimits: { ratersPerWindow: 50, windowMinutes: 30, activeRaters: 9 },
    });
  });

  it('POST /console/batches/:id/edit/roleplay, with a bad value, another run or once the batch is open, refuses, says why and changes nothing', async () => {
    const t = buildTestApp();
    const id = draft(t.db);
    const before = settingsOf(t.db, id);
    const admin = await signIn(t.app, t.db, 'admin');
    const bad = await admin.agent.post(`/console/batches/${id}/edit/roleplay`).type('form').send({ _csrf: admin.csrf, ...typed({ turnSeconds: '1' }) });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/id="turnSeconds-error">/);
    expect(bad.text).toContain('value="1"');
    const moved = await admin.agent.post(`/console/batches/${id}/edit/roleplay`).type('form').send({ _csrf: admin.csrf, ...typed({ run: 'elsewhere' }) });
    expect(moved.status).toBe(409);
    expect(moved.text).toContain('collects into run &#34;live-pilot&#34;; that cannot change');
    transitionBatch(t.db, id, 'open', 'test', new Date());
    const open = await admin.agent.post(`/console/batches/${id}/edit/roleplay`).type('form').send({ _csrf: admin.csrf, ...typed({ estimatedMinutes: '30' }) });
    expect(open.status).toBe(409);
    expect(open.text).toContain(`Batch ${id} is open; only a draft batch can be edited.`);
    expect(settingsOf(t.db, id)).toEqual(before);
    expect((await admin.agent.get(`/console/batches/${id}`).expect(200)).text).not.toContain('/edit/roleplay');
  });

  it('GET /console/batches/:id/edit, for a role-play draft, goes to its own form; POST there refuses and changes nothing', async () => {
    const t = buildTestApp();
    const id = draft(t.db);
    const before = settingsOf(t.db, id);
    const admin = await signIn(t.app, t.db, 'admin');
    const shown = await admin.agent.get(`/console/batches/${id}/edit`).expect(303);
    expect(shown.headers.location).toBe(`/console/batches/${id}/edit/roleplay`);
    const posted = await admin.agent.post(`/console/batches/${id}/edit`).type('form').send({ _csrf: admin.csrf, name: 'Renamed', judgmentsPerPair: '3' });
    expect(posted.status).toBe(409);
    expect(posted.text).toContain(`Batch ${id} is a role-play batch: edit it at /console/batches/${id}/edit/roleplay.`);
    expect(settingsOf(t.db, id)).toEqual(before);
  });
});

