import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { launchReady, makeDialogue, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp } from '../helpers/test-app.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { signIn } from '../auth/session-helpers.js';

const M = 'block-model';
const NOW = new Date('2026-04-01T09:00:00.000Z');

function seedRun(db: Db, name = 'block-run'): string {
  const runId = makeRun(db, { name, model: M, modes: ['SCRIPT', 'AGENTS'] });
  for (let i = 0; i < 2; i++) {
    const scenario = makeScenario(db);
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M, turns: makeTurns(4, 8) });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M, turns: makeTurns(4, 8) });
  }
  return name;
}

let rounds = 0;
function openBatch(db: Db, run: string, provider: 'prolific' | 'mturk' | 'link', blockParticipantsOf: number[] = []) {
  const created = createBatch(
    db,
    launchReady({ name: `round ${++rounds} ${provider} ${blockParticipantsOf.join('-')}`, runs: [run], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], provider: { kind: provider }, blockParticipantsOf }),
    { actor: 'test', now: NOW },
  );
  transitionBatch(db, created.batchId, 'open', 'test', NOW);
  return created;
}

const ratersOf = (db: Db, batchId: number) =>
  db.prepare('SELECT participant_id FROM raters WHERE batch_id = ? ORDER BY id').pluck().all(batchId) as (string | null)[];

/** Prolific ids are 24 hexadecimal characters: a readable name is turned into one, and stored as such. */
const hexPid = (name: string) => Buffer.from(name).toString('hex').padEnd(24, '0').slice(0, 24);
const prolific = (pid: string, session: string) => `?PROLIFIC_PID=${hexPid(pid)}&STUDY_ID=study1&SESSION_ID=${session}`;

/** Enters through the link and agrees at consent (a rater exists only from then on). */
async function consentVia(app: Parameters<typeof request>[0], url: string) {
  const page = await request(app).get(url).expect(200);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page.text)?.[1] ?? '';
  const action = /<form[^>]*method="post"[^>]*action="([^"]+)"/.exec(page.text)?.[1] ?? '';
  return request(app).post(action).type('form').send({ _csrf: field('_csrf'), et: field('et'), decision: 'agree' }).expect(303);
}

describe('blocking participants of earlier batches', () => {
  it('GET /r/:batch, when the Prolific participant rated a listed earlier batch, shows a polite refusal and creates no rater', async () => {
    const t = buildTestApp({ clock: () => NOW });
    const run = seedRun(t.db);
    const first = openBatch(t.db, run, 'prolific');
    await consentVia(t.app, `/r/${first.publicId}${prolific('returning-1', 'sess-a')}`);
    expect(ratersOf(t.db, first.batchId)).toEqual([hexPid('returning-1')]);

    const second = openBatch(t.db, run, 'prolific', [first.batchId]);
    const refused = await request(t.app).get(`/r/${second.publicId}${prolific('returning-1', 'sess-b')}`);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('You have already taken part');
    expect(refused.text).toContain('cannot take part again');
    // The refusal must not leak which batch or round the participant was recognised from.
    expect(refused.text).not.toContain(String(first.publicId));
    expect(ratersOf(t.db, second.batchId)).toEqual([]);

    // Someone new is welcome, and the earlier batch itself is not affected.
    await consentVia(t.app, `/r/${second.publicId}${prolific('newcomer-1', 'sess-c')}`);
    expect(ratersOf(t.db, second.batchId)).toEqual([hexPid('newcomer-1')]);
    await request(t.app).get(`/r/${first.publicId}${prolific('returning-1', 'sess-a')}`).expect(303);
  });

  it('GET /r/:batch, when the MTurk worker rated a batch that is not listed, lets them in; a listed one turns them away', async () => {
    const t = buildTestApp({ clock: () => NOW });
    const run = seedRun(t.db);
    const listed = openBatch(t.db, run, 'mturk');
    const unlisted = openBatch(t.db, run, 'mturk');
    const mturk = (worker: string, assignment: string) => `?workerId=${worker}&assignmentId=${assignment}&hitId=hit1&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com`;
    await consentVia(t.app, `/r/${listed.publicId}${mturk('AWORKER0001', 'A1')}`);
    await consentVia(t.app, `/r/${unlisted.publicId}${mturk('AWORKER0002', 'A2')}`);

    const next = openBatch(t.db, run, 'mturk', [listed.batchId]);
    expect((await request(t.app).get(`/r/${next.publicId}${mturk('AWORKER0001', 'A3')}`)).status).toBe(403);
    await consentVia(t.app, `/r/${next.publicId}${mturk('AWORKER0002', 'A4')}`);
    expect(ratersOf(t.db, next.batchId)).toEqual(['AWORKER0002']);
  });

  it('POST /console/batches/new, with earlier batches chosen in the multi-select, stores their ids; an unknown id is refused with 400', async () => {
    const t = buildTestApp({ clock: () => NOW });
    const run = seedRun(t.db);
    const a = openBatch(t.db, run, 'prolific');
    const b = openBatch(t.db, run, 'prolific');
    const admin = await signIn(t.app, t.db, 'admin');
    const formPage = await admin.agent.get('/console/batches/new').expect(200);
    expect(formPage.text).toMatch(/<select id="blockParticipantsOf" name="blockParticipantsOf" class="wide" multiple/);
    expect(formPage.text).toContain(`<option value="${a.batchId}"`);
    expect(formPage.text).toContain('plain link');

    const fields = { name: 'Round 3', runs: run, comparisons: `SCRIPT:${M} vs AGENTS:${M}`, providerKind: 'prolific' };
    await admin.agent
      .post('/console/batches/new')
      .type('form')
      .send({ _csrf: admin.csrf, intent: 'create', ...fields, blockParticipantsOf: [String(b.batchId), String(a.batchId)] })
      .expect(303);
    const stored = JSON.parse(t.db.prepare("SELECT settings FROM batches WHERE name = 'Round 3'").pluck().get() as string) as { blockParticipantsOf: number[] };
    expect(stored.blockParticipantsOf).toEqual([a.batchId, b.batchId]);
    const id = t.db.prepare("SELECT id FROM batches WHERE name = 'Round 3'").pluck().get() as number;
    const page = await admin.agent.get(`/console/batches/${id}`).expect(200);
    expect(page.text).toMatch(/turned away if they took part in <a href="\/console\/batches\/\d+">batch \d+<\/a>, <a/);
    const edit = await admin.agent.get(`/console/batches/${id}/edit`).expect(200);
    expect(edit.text).toMatch(new RegExp(`<option value="${a.batchId}" selected`));
    expect(edit.text).not.toContain(`<option value="${id}"`);

    const bad = await admin.agent
      .post('/console/batches/new')
      .type('form')
      .send({ _csrf: admin.csrf, intent: 'create', ...fields, name: 'Round 4', blockParticipantsOf: '999' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('blockParticipantsOf: no batch with id 999');
    expect(t.db.prepare("SELECT count(*) FROM batches WHERE name = 'Round 4'").pluck().get()).toBe(0);
  });

  it('POST /console/batches/:id/edit, listing the batch itself, is refused with 400 and keeps the old setting', async () => {
    const t = buildTestApp({ clock: () => NOW });
    const run = seedRun(t.db);
    const a = openBatch(t.db, run, 'prolific');
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent
      .post(`/console/batches/${a.batchId}/edit`)
      .type('form')
      .send({ _csrf: admin.csrf, name: 'x', runs: run, comparisons: `SCRIPT:${M} vs AGENTS:${M}`, providerKind: 'prolific', blockParticipantsOf: String(a.batchId) });
    expect(res.status).toBe(400);
    expect(res.text).toContain('cannot block its own participants');
    expect(JSON.parse(t.db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(a.batchId) as string)).toMatchObject({ blockParticipantsOf: [] });
  });

  it('POST /console/batches/:id/clone with blockParticipants=on, makes a draft that turns away the source batch\'s participants', async () => {
    const t = buildTestApp({ clock: () => NOW });
    const run = seedRun(t.db);
    const first = openBatch(t.db, run, 'prolific');
    await consentVia(t.app, `/r/${first.publicId}${prolific('round-one', 'sess-1')}`);
    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get(`/console/batches/${first.batchId}`).expect(200);
    expect(page.text).toContain('Clone for a new round with new participants only');
    const cloned = await admin.agent.post(`/console/batches/${first.batchId}/clone`).type('form').send({ _csrf: admin.csrf, blockParticipants: 'on' });
    expect(cloned.status).toBe(303);
    const cloneId = t.db.prepare('SELECT id FROM batches WHERE cloned_from = ?').pluck().get(first.batchId) as number;
    const settings = JSON.parse(t.db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(cloneId) as string) as { blockParticipantsOf: number[] };
    expect(settings.blockParticipantsOf).toEqual([first.batchId]);
    transitionBatch(t.db, cloneId, 'open', 'test', NOW);
    const publicId = t.db.prepare('SELECT public_id FROM batches WHERE id = ?').pluck().get(cloneId) as string;
    expect((await request(t.app).get(`/r/${publicId}${prolific('round-one', 'sess-2')}`)).status).toBe(403);
    // A plain clone keeps the source's (empty) list.
    await admin.agent.post(`/console/batches/${first.batchId}/clone`).type('form').send({ _csrf: admin.csrf }).expect(303);
    const plain = t.db.prepare('SELECT settings FROM batches WHERE cloned_from = ? ORDER BY id DESC LIMIT 1').pluck().get(first.batchId) as string;
    expect(JSON.parse(plain)).toMatchObject({ blockParticipantsOf: [] });
  });

  it('simarena batches create --from FILE.json, with blockParticipantsOf, stores it and the rater entry enforces it', async () => {
    const { db, path } = createTestDb();
    const run = seedRun(db);
    const earlier = openBatch(db, run, 'prolific');
    const env = { DATABASE_PATH: path };
    const file = join(tempDir(), 'round2.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'round 2', runs: [run], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], provider: { kind: 'prolific' }, blockParticipantsOf: [earlier.batchId] }),
    );
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(0);
    const id = db.prepare("SELECT id FROM batches WHERE name = 'round 2'").pluck().get() as number;
    expect(JSON.parse(db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(id) as string)).toMatchObject({ blockParticipantsOf: [earlier.batchId] });

    const badFile = join(tempDir(), 'round3.json');
    writeFileSync(badFile, JSON.stringify({ name: 'round 3', runs: [run], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], blockParticipantsOf: [77] }));
    expect(await cli(['batches', 'create', '--from', badFile], env)).toMatchObject({ code: 1, stderr: 'error: blockParticipantsOf: no batch with id 77.' });
    const badType = join(tempDir(), 'round4.json');
    writeFileSync(badType, JSON.stringify({ name: 'round 4', runs: [run], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], blockParticipantsOf: ['one'] }));
    expect((await cli(['batches', 'create', '--from', badType], env)).stderr).toMatch(/^error: Invalid batch settings: blockParticipantsOf\.0/);
  });
});

describe('the batch form', () => {
  it('POST /console/batches/new with intent=preview, when a comparison names a condition no chosen run has, warns which and lists the available ones', async () => {
    const t = buildTestApp({ clock: () => NOW });
    const run = seedRun(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent
      .post('/console/batches/new')
      .type('form')
      .send({ _csrf: admin.csrf, intent: 'preview', name: 'typo', runs: run, comparisons: `script:${M} vs AGENTS:block-modl` });
    expect(res.status).toBe(200);
    expect(res.text).toContain('data-testid="preview-count">0<');
    expect(res.text).toContain('data-testid="preview-empty"');
    expect(res.text).toMatch(/data-testid="missing-conditions">No chosen run has completed dialogues in <code>AGENTS:block-modl<\/code>:/);
    expect(res.text).toContain(`Conditions in the chosen runs: <code>AGENTS:${M}</code>, <code>SCRIPT:${M}</code>.`);

    const fine = await admin.agent
      .post('/console/batches/new')
      .type('form')
      .send({ _csrf: admin.csrf, intent: 'preview', name: 'ok', runs: run, comparisons: `SCRIPT:${M} vs AGENTS:${M}` });
    expect(fine.text).toContain('data-testid="preview-count">2<');
    expect(fine.text).not.toContain('data-testid="missing-conditions"');
    expect(fine.text).not.toContain('data-testid="preview-empty"');
  });
});
