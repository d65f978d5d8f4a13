// The launch checklist, the pay per hour and the typed confirmations of the console (issue 14 point 3).
import { describe, expect, it } from 'vitest';
import { createBatch } from '../../src/batches/create-batch.js';
import { demoBatchSettings } from '../../src/batches/demo-batch.js';
import { blockingFailures, launchChecklist, payPerHour } from '../../src/batches/launch-checklist.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { type SessionMinimum, sessionMinimum } from '../../src/batches/minimum-time.js';
import type { CapacityResult } from '../../src/batches/capacity-check.js';
import { launchReady, makeDialogue, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';
import { cli } from '../helpers/run-cli.js';

const NOW = new Date('2026-03-01T10:00:00.000Z');
const CAPACITY_OK: CapacityResult = { ok: true, pairs: 4, stoppedPairs: 0, samples: 4, judgmentsPerPair: 3, judgmentsNeeded: 12, perRater: 4, ratersNeeded: 3, sessionComparisons: 4, problems: [] };

/** A draft over three scenario samples whose dialogues have `turns` turns of `words` words. */
function draft(t: ReturnType<typeof buildTestApp>, settings: Record<string, unknown>, dialogue = { turns: 4, words: 8 }) {
  const runId = makeRun(t.db, { name: `run-${Math.random().toString(36).slice(2, 8)}`, modes: ['SCRIPT', 'AGENTS'] });
  const runName = t.db.prepare('SELECT name FROM runs WHERE id = ?').pluck().get(runId) as string;
  for (let i = 0; i < 3; i += 1) {
    const scenario = makeScenario(t.db);
    makeDialogue(t.db, { runId, scenario, mode: 'SCRIPT', turns: makeTurns(dialogue.turns, dialogue.words) });
    makeDialogue(t.db, { runId, scenario, mode: 'AGENTS', turns: makeTurns(dialogue.turns, dialogue.words) });
  }
  return createBatch(t.db, { name: `launch ${runName}`, runs: [runName], comparisons: [['SCRIPT:test-model', 'AGENTS:test-model']], ...settings }, { actor: 'test', now: NOW }).batchId;
}

const stateOf = (t: ReturnType<typeof buildTestApp>, id: number) => t.db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(id);
const decode = (html: string) => html.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&');

describe('launchChecklist', () => {
  const check = (input: Record<string, unknown>, extra: { minutes?: number; minimum?: SessionMinimum; minPayPerHour?: number | null; publicUrl?: string; capacity?: CapacityResult } = {}) =>
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
    expect(failing(items)).toEqual(['payPerHour:warning:pay', 'platformPay:blocking:pay', 'capacity:blocking:perRaterCap', 'providerUrl:blocking:provider.params']);
    expect(items.find((i) => i.key === 'payPerHour')?.detail).toBe('£2.00 per hour at 30 minutes is below the floor of £6.00 per hour (MIN_PAY_PER_HOUR).');
    expect(failing(check({ consent: 'c', instructions: 'i', pay: '£3', provider: { kind: 'prolific', completionCodes: codes } }, { publicUrl: 'http://127.0.0.1:3000' }))).toEqual(['providerUrl:warning:PUBLIC_URL']);
    expect(failing(check({ consent: 'c', instructions: 'i', pay: '$3', provider: { kind: 'mturk', sandbox: true } }))).toEqual(['providerUrl:warning:provider.sandbox']);
  });

  it('launchChecklist, for a Prolific batch whose onboarding or attention checks screen raters out, blocks until a screen-out payment below the reward is set', () => {
    const codes = { completed: 'A', screenedOut: 'B', noConsent: 'C' };
    const base = { consent: 'c', instructions: 'i', pay: '£2.00', onboarding: { pairs: 1, threshold: 1 } };
    const unpaid = check({ ...base, provider: { kind: 'prolific', completionCodes: codes } });
    expect(failing(unpaid)).toEqual(['screenOutPay:blocking:provider.screenOutPay']);
    expect(unpaid.find((i) => i.key === 'screenOutPay')?.detail).toContain('Prolific tells participants that screened-out ones are paid for their time');
    expect(blockingFailures(check({ ...base, onboarding: null, attentionChecks: { rate: 0.1, maxFailures: 1 }, provider: { kind: 'prolific', completionCodes: codes } })).map((i) => i.key)).toEqual(['screenOutPay']);
    const tooHigh = check({ ...base, provider: { kind: 'prolific', completionCodes: codes, screenOutPay: '2.00' } });
    expect(failing(tooHigh)).toEqual(['screenOutPay:blocking:provider.screenOutPay']);
    expect(tooHigh.find((i) => i.key === 'screenOutPay')?.detail).toContain("must be below the study's reward (2.00 GBP)");
    const paid = check({ ...base, provider: { kind: 'prolific', completionCodes: codes, screenOutPay: '0.30' } });
    expect(failing(paid)).toEqual([]);
    expect(paid.find((i) => i.key === 'screenOutPay')?.detail).toBe("Screened-out participants are paid 0.30 GBP for their time by Prolific's screen-out code.");
    // No screening, no item; MTurk and plain links are not Prolific's rule.
    expect(check({ ...base, onboarding: null, provider: { kind: 'prolific', completionCodes: codes } }).some((i) => i.key === 'screenOutPay')).toBe(false);
    expect(check({ ...base, pay: '$2', provider: { kind: 'mturk' } }).some((i) => i.key === 'screenOutPay')).toBe(false);
  });

  it('launchChecklist, for a Prolific batch whose pay per hour at the least time a session takes is under £6, blocks naming the minimum and the recommended £9', () => {
    const codes = { completed: 'A', screenedOut: 'B', noConsent: 'C' };
    const base = { consent: 'c', instructions: 'i', estimatedMinutes: 5, provider: { kind: 'prolific', completionCodes: codes } };
    // 9 comparisons of 400 words at 500 words a minute (7.2 minutes) and 10 s an answer (1.5): 8.7, so 9 minutes.
    const minimum = sessionMinimum(batchSettingsSchema.parse({ name: 'x', runs: ['r'], comparisons: [['SCRIPT:m', 'AGENTS:m']] }), 400, 9);
    expect(minimum.minutes).toBe(9);
    const items = check({ ...base, pay: '£0.80' }, { minimum, publicUrl: 'https://rate.example.org' });
    expect(failing(items)).toEqual(['minimumTime:warning:estimatedMinutes', 'platformPay:blocking:pay']);
    expect(items.find((i) => i.key === 'pay')?.detail).toBe('£0.80 for about 9 minutes.');
    expect(items.find((i) => i.key === 'minimumTime')?.detail).toBe(
      'estimatedMinutes is 5, less than the 9 minutes a full session takes at least (9 comparisons: 3,600 words read at 500 words a minute, plus 10 s to answer each): raters are promised 9 minutes, and the pay per hour is judged at that.',
    );
    expect(items.find((i) => i.key === 'platformPay')?.detail).toBe(
      "£0.80 for 9 minutes, the least a full session takes, is £5.33 per hour, below Prolific's minimum of £6.00 per hour (it recommends at least £9.00): pay at least £0.90 for 9 minutes.",
    );
    // £0.90 for 9 minutes is £6.00 an hour: allowed, with the recommendation said.
    const enough = check({ ...base, pay: '£0.90' }, { minimum, publicUrl: 'https://rate.example.org' });
    expect(blockingFailures(enough)).toEqual([]);
    expect(enough.find((i) => i.key === 'platformPay')?.detail).toContain("at least Prolific's minimum of £6.00 per hour (it recommends at least £9.00)");
    // In dollars the floor is $8; a generous estimate is judged at the estimate, which Prolific is told.
    expect(failing(check({ ...base, estimatedMinutes: 20, pay: '$2.50' }, { minimum, publicUrl: 'https://rate.example.org' }))).toEqual(['platformPay:blocking:pay']);
    expect(failing(check({ ...base, pay: '2 EUR' }, { minimum, publicUrl: 'https://rate.example.org' }))).toEqual(['minimumTime:warning:estimatedMinutes', 'platformPay:blocking:pay']);
  });

  it('launchChecklist, for an MTurk batch under $7.25 an hour at its time, and for a plain link paying little, blocks only MTurk', () => {
    const minimum = sessionMinimum(batchSettingsSchema.parse({ name: 'x', runs: ['r'], comparisons: [['SCRIPT:m', 'AGENTS:m']] }), 400, 9);
    const mturk = check({ consent: 'c', instructions: 'i', estimatedMinutes: 10, pay: '$1.00', provider: { kind: 'mturk' } }, { minimum, publicUrl: 'https://rate.example.org' });
    expect(failing(mturk)).toEqual(['platformPay:blocking:pay']);
    expect(mturk.find((i) => i.key === 'platformPay')?.detail).toContain('$6.00 per hour, below the US federal minimum wage (MTurk publishes no hourly minimum) of $7.25 per hour: pay at least $1.21 for 10 minutes.');
    const link = check({ consent: 'c', instructions: 'i', estimatedMinutes: 10, pay: '£0.10', provider: { kind: 'link', completionCodes: { completed: 'X' } } }, { minimum });
    expect(blockingFailures(link)).toEqual([]);
  });

  it('launchChecklist, for a sequential batch whose first look would be judged by fewer than 10 raters, warns with the perRaterCap that gives 10; at that cap, or without a rule, says nothing against it', () => {
    // 200 pairs, 5 looks, K = 3: the first look's 40 pairs take 120 judgments; at 20 a rater that is 6 raters (issue 51).
    const capacity: CapacityResult = { ...CAPACITY_OK, pairs: 200, judgmentsPerPair: 3, judgmentsNeeded: 600, ratersNeeded: 30, sessionComparisons: 20 };
    const stopping = { looks: 5, alpha: 0.05, spending: 'pocock' };
    const item = (settings: Record<string, unknown>, cap = capacity) => check({ judgmentsPerPair: 3, ...settings }, { capacity: cap }).find((i) => i.key === 'firstLookRaters');
    const few = item({ perRaterCap: 20, stopping });
    expect(few).toMatchObject({ ok: false, blocking: false, setting: 'perRaterCap' });
    expect(few?.detail).toContain('would be judged by about 6 raters at perRaterCap 20, fewer than the 10 its rater-clustered test needs');
    expect(few?.detail).toContain('it waits for its tenth rater, at about 67 pairs instead of 40');
    expect(few?.detail).toContain('Set perRaterCap to 12 or less to look as planned.');
    expect(item({ perRaterCap: 12, stopping })).toMatchObject({ ok: true });
    expect(item({ perRaterCap: 20, stopping: null })).toBeUndefined();
    // Two comparisons share a rater's cap: each look of each has about twice the raters.
    const two = check({ judgmentsPerPair: 3, perRaterCap: 20, stopping, comparisons: [['SCRIPT:m', 'AGENTS:m'], ['SCRIPT:m', 'MINDREADERS:m']] }, { capacity: { ...capacity, pairs: 400 } }).find((i) => i.key === 'firstLookRaters');
    expect(two).toMatchObject({ ok: true });
    // A first look of 3 judgments cannot have 10 raters whatever the cap: the warning says to look later.
    const early = item({ judgmentsPerPair: 1, perRaterCap: 1, stopping: { lookEvery: 3, alpha: 0.05, spending: 'obrien-fleming' } }, { ...capacity, judgmentsPerPair: 1 });
    expect(early).toMatchObject({ ok: false, setting: 'stopping' });
    expect(early?.detail).toContain('The first look has 3 judgments');
    expect(early?.detail).toContain('it waits until 10 pairs are complete and 10 raters have judged them.');
    // A batch designed for fewer than 10 raters takes the look as planned, on pair majorities: it says so, not that it waits.
    const small = item({ perRaterCap: 100, stopping }, { ...capacity, pairs: 200 });
    expect(small).toMatchObject({ ok: false, setting: 'perRaterCap' });
    expect(small?.detail).toContain('the batch is designed for 6 raters, fewer than 10, so the look is taken as planned and tests pair majorities');
    expect(small?.detail).not.toContain('waits');
  });

  it('launchChecklist, for an O\'Brien–Fleming batch designed for 10 to 19 raters, refuses to open it, naming the perRaterCap that gives 20; at 20 raters, with Pocock, or under 10 raters, says nothing', () => {
    // 200 pairs, K = 3, 40 pairs a rater: 15 raters, where the simulation measured 0.056 for 0.05 (issue 51).
    const capacity: CapacityResult = { ...CAPACITY_OK, pairs: 200, judgmentsPerPair: 3, judgmentsNeeded: 600, ratersNeeded: 15, sessionComparisons: 40 };
    const item = (settings: Record<string, unknown>) => check({ judgmentsPerPair: 3, ...settings }, { capacity }).find((i) => i.key === 'sequentialRaters');
    const of = { looks: 5, alpha: 0.05, spending: 'obrien-fleming' };
    const few = item({ perRaterCap: 40, stopping: of });
    expect(few).toMatchObject({ ok: false, blocking: true, setting: 'perRaterCap' });
    expect(few?.detail).toContain('The batch is designed for 15 raters.');
    expect(few?.detail).toContain('so such a batch does not open');
    expect(item({ perRaterCap: 60, stopping: of })?.detail).toContain('The batch is designed for 10 raters.');
    expect(few?.detail).toContain('set perRaterCap to 30 or less for 20 raters, or use Pocock spending.');
    expect(item({ perRaterCap: 30, stopping: of })).toBeUndefined();
    expect(item({ perRaterCap: 40, stopping: { ...of, spending: 'pocock' } })).toBeUndefined();
    expect(item({ perRaterCap: 100, stopping: of })).toBeUndefined();
    expect(item({ perRaterCap: 40, stopping: null })).toBeUndefined();
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

  it('GET and POST /console/batches/:id/open, for a Prolific draft promising 1 minute for comparisons that take 8, show the least time and the pay per hour at it, and refuse to open under £6 an hour', async () => {
    const t = buildTestApp();
    // Three comparisons, each two dialogues of 20 turns × 30 words and the scenario's context and goals.
    const id = draft(t, launchReady({ provider: { kind: 'prolific' }, estimatedMinutes: 1, pay: '£0.50' }), { turns: 20, words: 30 });
    const scenarioWords = (t.db.prepare('SELECT s.context, s.goal_1, s.goal_2 FROM pairs p JOIN scenarios s ON s.id = p.scenario_id WHERE p.batch_id = ?').all(id) as Record<string, string>[])
      .map((r) => Object.values(r).join(' ').split(/\s+/).filter(Boolean).length);
    const words = scenarioWords.reduce((sum, w) => sum + 2 * 600 + w, 0);
    // 3 comparisons read at 500 words a minute, plus 10 s to answer each.
    const expected = Math.ceil(words / 500 + (3 * 10) / 60);
    expect(expected).toBe(8);
    const admin = await signIn(t.app, t.db, 'admin');
    const page = decode((await admin.agent.get(`/console/batches/${id}`).expect(200)).text);
    expect(page).toContain(`<strong data-testid="consent-minutes">about ${expected} minutes</strong>`);
    expect(page).toContain('the least time the comparisons take (more than your estimate of 1 minutes, used until 10 raters have completed)');
    expect(page).toContain(`A full session takes at least <strong>${expected} minutes</strong> (3 comparisons: ${words.toLocaleString('en-GB')} words read at 500 words a minute, plus 10 s to answer each;`);
    expect(page).toContain('<strong data-testid="pay-per-hour">£3.75 per hour</strong>');
    expect(page).toContain("Prolific: at least £6.00 per hour (Prolific's minimum), recommended £9.00.");
    expect(page).toContain('data-check="platformPay"');
    expect(page).toContain('data-check="minimumTime"');
    const res = await admin.agent.post(`/console/batches/${id}/open`).type('form').send({ _csrf: admin.csrf });
    expect(res.status).toBe(409);
    expect(decode(res.text)).toContain("£0.50 for 8 minutes, the least a full session takes, is £3.75 per hour, below Prolific's minimum of £6.00 per hour (it recommends at least £9.00): pay at least £0.80 for 8 minutes.");
    expect(stateOf(t, id)).toBe('draft');
    // The CLI refuses it too, and `batches show` gives the same figures.
    const env = { DATABASE_PATH: t.dbPath, PUBLIC_URL: 'https://rate.example.org' };
    const opened = await cli(['batches', 'open', String(id)], env);
    expect(opened.code).toBe(1);
    expect(opened.stderr).toContain("blocking: Pay per hour on Prolific — £0.50 for 8 minutes, the least a full session takes, is £3.75 per hour, below Prolific's minimum");
    expect(opened.stderr).toContain(`warning: Time promised — estimatedMinutes is 1, less than the ${expected} minutes a full session takes at least`);
    const shown = await cli(['batches', 'show', String(id)], env);
    expect(shown.stdout).toContain(`  time: about ${expected} minutes promised (the least a full session takes); a full session takes at least ${expected} (3 comparisons: ${words.toLocaleString('en-GB')} words read at 500 words a minute, plus 10 s to answer each)`);
    expect(shown.stdout).toContain("  pay: £0.50 = £3.75 per hour at 8 minutes; Prolific's minimum £6.00, recommended £9.00");
    expect(JSON.parse((await cli(['batches', 'show', String(id), '--json'], env)).stdout).time).toMatchObject({ promisedMinutes: expected, source: 'minimum', payPerHour: 3.75, platformMinimumPerHour: 6, platformRecommendedPerHour: 9 });
    // Paying £0.80 for the 8 minutes opens it.
    t.db.prepare("UPDATE batches SET settings = json_set(settings, '$.pay', '£0.80') WHERE id = ?").run(id);
    await admin.agent.post(`/console/batches/${id}/open`).type('form').send({ _csrf: admin.csrf }).expect(303);
    expect(stateOf(t, id)).toBe('open');
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
