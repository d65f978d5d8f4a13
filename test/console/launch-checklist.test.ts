// The launch checklist, the pay per hour and the typed confirmations of the console (issue 14 point 3).
import { describe, expect, it } from 'vitest';
import { createBatch } from '../../src/batches/create-batch.js';
import { demoBatchSettings } from '../../src/batches/demo-batch.js';
import { blockingFailures, launchChecklist, payPerHour } from '../../src/batches/launch-checklist.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import type { CapacityResult } from '../../src/batches/capacity-check.js';
import { launchReady, makeDialogue, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';

const NOW = new Date('2026-03-01T10:00:00.000Z');
const CAPACITY_OK: CapacityResult = { ok: true, pairs: 4, samples: 4, judgmentsPerPair: 3, judgmentsNeeded: 12, perRater: 4, ratersNeeded: 3, problems: [] };

function draft(t: ReturnType<typeof buildTestApp>, settings: Record<string, unknown>) {
  const runId = makeRun(t.db, { name: `run-${Math.random().toString(36).slice(2, 8)}`, modes: ['SCRIPT', 'AGENTS'] });
  const runName = t.db.prepare('SELECT name FROM runs WHERE id = ?').pluck().get(runId) as string;
  for (let i = 0; i < 3; i += 1) {
    const scenario = makeScenario(t.db);
    makeDialogue(t.db, { runId, scenario, mode: 'SCRIPT', turns: makeTurns(4, 8) });
    makeDialogue(t.db, { runId, scenario, mode: 'AGENTS', turns: makeTurns(4, 8) });
  }
  return createBatch(t.db, { name: `launch ${runName}`, runs: [runName], comparisons: [['SCRIPT:test-model', 'AGENTS:test-model']], ...settings }, { actor: 'test', now: NOW }).batchId;
}

const stateOf = (t: ReturnType<typeof buildTestApp>, id: number) => t.db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(id);
const decode = (html: string) => html.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&');

describe('launchChecklist', () => {
  const check = (input: Record<string, unknown>, extra: { minutes?: number; minPayPerHour?: number | null; publicUrl?: string; capacity?: CapacityResult } = {}) =>
    launchChecklist({ settings: batchSettingsSchema.parse({ name: 'x', runs: ['r'], comparisons: [['SCRIPT:m', 'AGENTS:m']], ...input }), capacity: extra.capacity ?? CAPACITY_OK, ...extra });
  const failing = (items: ReturnType<typeof check>) => items.filter((i) => !i.ok).map((i) => `${i.key}:${i.blocking ? 'blocking' : 'warning'}:${i.setting}`);

  it('launchChecklist, for a Prolific batch with nothing written, blocks on consent, instructions, its three codes and pay', () => {
    const items = check({ provider: { kind: 'prolific', completionCodes: { completed: 'C1' } } });
    expect(failing(items)).toEqual(['consent:blocking:consent', 'instructions:blocking:instructions', 'completionCodes:blocking:provider.completionCodes.screenedOut', 'pay:blocking:pay']);
    expect(items.find((i) => i.key === 'completionCodes')?.detail).toContain('screenedOut, noConsent');
  });

  it('launchChecklist, for a plain link without a code or pay, only warns about them; MTurk needs no code', () => {
    const link = check({ consent: 'c', instructions: 'i' });
    expect(failing(link)).toEqual(['completionCodes:warning:provider.completionCodes.completed', 'pay:warning:pay']);
    expect(blockingFailures(link)).toEqual([]);
    const mturk = check({ consent: 'c', instructions: 'i', pay: '$4.50', provider: { kind: 'mturk' } }, { minPayPerHour: 6, publicUrl: 'https://rate.example.org' });
    expect(failing(mturk)).toEqual([]);
  });

  it('launchChecklist, for pay under the floor, a failing capacity, equal Prolific parameter names, an http URL and the MTurk sandbox, says which block', () => {
    const codes = { completed: 'A', screenedOut: 'B', noConsent: 'C' };
    const capacity = { ...CAPACITY_OK, ok: false, problems: [{ level: 'error' as const, message: 'need at least 8 raters but plannedRaters is 7', numbers: {} }] };
    const items = check({ consent: 'c', instructions: 'i', pay: '£1.00', provider: { kind: 'prolific', completionCodes: codes, params: { participant: 'ID', study: 'ID' } } }, { minutes: 30, minPayPerHour: 6, capacity });
    expect(failing(items)).toEqual(['payPerHour:warning:pay', 'capacity:blocking:perRaterCap', 'providerUrl:blocking:provider.params']);
    expect(items.find((i) => i.key === 'payPerHour')?.detail).toBe('£2.00 per hour at 30 minutes is below the floor of £6.00 per hour (MIN_PAY_PER_HOUR).');
    expect(failing(check({ consent: 'c', instructions: 'i', pay: '£3', provider: { kind: 'prolific', completionCodes: codes } }, { publicUrl: 'http://127.0.0.1:3000' }))).toEqual(['providerUrl:warning:PUBLIC_URL']);
    expect(failing(check({ consent: 'c', instructions: 'i', pay: '$3', provider: { kind: 'mturk', sandbox: true } }))).toEqual(['providerUrl:warning:provider.sandbox']);
  });

  it('payPerHour, for "£3.00", "$4.50", "3 EUR" and words, gives the hourly rate or null', () => {
    expect(payPerHour('£3.00', 12)?.text).toBe('£15.00 per hour');
    expect(payPerHour('$4.50', 30)?.text).toBe('$9.00 per hour');
    expect(payPerHour('3 EUR', 20)?.text).toBe('9.00 EUR per hour');
    expect(payPerHour('three pounds', 20)).toBeNull();
    expect(payPerHour('', 20)).toBeNull();
  });
});

describe('launch checklist in the console', () => {
  it('POST /console/batches/:id/open, for a Prolific draft without consent, codes or pay, answers 409 with each failing item linked to its field and leaves it a draft', async () => {
    const t = buildTestApp();
    const id = draft(t, { provider: { kind: 'prolific', completionCodes: { completed: 'C1' } }, instructions: 'Read both.' });
    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get(`/console/batches/${id}`).expect(200);
    expect(page.text).toContain(`<button type="submit" disabled aria-describedby="launch-checklist">Open</button>`);
    const res = await admin.agent.post(`/console/batches/${id}/open`).type('form').send({ _csrf: admin.csrf });
    expect(res.status).toBe(409);
    expect(res.text).toContain('The batch was not opened: fix the failing items of the launch checklist below.');
    expect(res.text).toContain(`href="/console/batches/${id}/edit#consent">Fix consent text</a>`);
    expect(res.text).toContain(`href="/console/batches/${id}/edit#codeScreenedOut">Fix completion codes</a>`);
    expect(res.text).toContain(`href="/console/batches/${id}/edit#pay">Fix pay and time</a>`);
    expect(res.text).not.toContain(`edit#instructions">`);
    expect(stateOf(t, id)).toBe('draft');
    expect(t.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'batch.open'").pluck().get()).toBe(0);
  });

  it('POST /console/batches/:id/open, once the checklist passes, opens the batch', async () => {
    const t = buildTestApp();
    const id = draft(t, launchReady({ provider: { kind: 'prolific' } }));
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent.post(`/console/batches/${id}/open`).type('form').send({ _csrf: admin.csrf }).expect(303);
    expect(stateOf(t, id)).toBe('open');
  });

  it('GET /console/batches/:id, for £1.00 for 30 minutes under the default floor of 6, shows £2.00 per hour and a warning; £4.00 shows no warning', async () => {
    const t = buildTestApp();
    const low = draft(t, launchReady({ pay: '£1.00', estimatedMinutes: 30 }));
    const fair = draft(t, launchReady({ pay: '£4.00', estimatedMinutes: 30 }));
    const admin = await signIn(t.app, t.db, 'admin');
    const lowPage = decode((await admin.agent.get(`/console/batches/${low}`).expect(200)).text);
    expect(lowPage).toContain('<strong data-testid="consent-minutes">about 30 minutes</strong>');
    expect(lowPage).toContain('<strong data-testid="pay-per-hour">£2.00 per hour</strong>');
    expect(lowPage).toContain('data-testid="pay-warning"');
    const fairPage = decode((await admin.agent.get(`/console/batches/${fair}`).expect(200)).text);
    expect(fairPage).toContain('<strong data-testid="pay-per-hour">£8.00 per hour</strong>');
    expect(fairPage).not.toContain('data-testid="pay-warning"');
    // The floor is the server's setting: 0 turns the warning off.
    const off = buildTestApp({ env: { MIN_PAY_PER_HOUR: '0' } });
    const offId = draft(off, launchReady({ pay: '£1.00', estimatedMinutes: 30 }));
    const offAdmin = await signIn(off.app, off.db, 'admin');
    expect((await offAdmin.agent.get(`/console/batches/${offId}`).expect(200)).text).not.toContain('data-testid="pay-warning"');
  });

  it('POST /console/batches/:id/close, without the typed word or with another, is refused with 400 and the batch stays open; "close" closes it', async () => {
    const t = buildTestApp();
    const id = draft(t, launchReady({}));
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent.post(`/console/batches/${id}/open`).type('form').send({ _csrf: admin.csrf }).expect(303);
    for (const confirm of [undefined, 'Close it', 'delete']) {
      const res = await admin.agent.post(`/console/batches/${id}/close`).type('form').send({ _csrf: admin.csrf, ...(confirm === undefined ? {} : { confirm }) });
      expect(res.status).toBe(400);
      expect(decode(res.text)).toContain('type "close" to confirm; the batch was not closed');
      expect(stateOf(t, id)).toBe('open');
    }
    await admin.agent.post(`/console/batches/${id}/close`).type('form').send({ _csrf: admin.csrf, confirm: 'close' }).expect(303);
    expect(stateOf(t, id)).toBe('closed');
    const page = await admin.agent.get(`/console/batches/${id}`).expect(200);
    expect(page.text).toMatch(/data-show-if="actions.close" hidden>/);
  });

  it('POST /console/runs/:id/cancel, with a wrong word, is refused with 400 and the run keeps its state', async () => {
    const t = buildTestApp();
    const runId = makeRun(t.db, { name: 'to-cancel' });
    t.db.prepare("UPDATE runs SET kind = 'generation', state = 'paused' WHERE id = ?").run(runId);
    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get(`/console/runs/${runId}`).expect(200);
    expect(page.text).toContain('pattern="cancel"');
    const res = await admin.agent.post(`/console/runs/${runId}/cancel`).type('form').send({ _csrf: admin.csrf, confirm: 'yes' });
    expect(res.status).toBe(400);
    expect(decode(res.text)).toContain('type "cancel" to confirm; the run was not cancelled');
    expect(t.db.prepare('SELECT state FROM runs WHERE id = ?').pluck().get(runId)).toBe('paused');
    await admin.agent.post(`/console/runs/${runId}/cancel`).type('form').send({ _csrf: admin.csrf, confirm: 'cancel' }).expect(303);
    expect(t.db.prepare('SELECT state FROM runs WHERE id = ?').pluck().get(runId)).toBe('cancelled');
  });
});

describe('the demo batch', () => {
  it('launchChecklist, for the demo batch seeded at first start, has no blocking failure, so it still opens', () => {
    const items = launchChecklist({ settings: batchSettingsSchema.parse(demoBatchSettings()), capacity: CAPACITY_OK });
    expect(blockingFailures(items)).toEqual([]);
  });
});
