// Issue 49 item 6: a pilot behind one address. Six colleagues on one office network opened the link together; all six
// saw the consent page and the sixth was told "too many sessions" only after consenting. The per-address limit is now
// checked before consent (a consent page holds a place of its address for a few minutes, migration 045), said on the
// launch checklist of a plain-link batch, and changed per batch in the console's form.
import { describe, expect, it } from 'vitest';
import { settingsToForm } from '../../src/console/batch-form.js';
import { getBatch } from '../../src/batches/batch.commands.js';
import { signIn } from '../auth/session-helpers.js';
import { buildTestApp } from '../helpers/test-app.js';
import { raterClient, seedBatch } from './rating-fixtures.js';

const OFFICE = '203.0.113.40';

function officeApp() {
  let now = new Date('2026-03-02T09:00:00.000Z');
  const built = buildTestApp({ clock: () => now, env: { TRUST_PROXY: '1' } });
  const seeded = seedBatch(built.db, { samples: 20, settings: { perRaterCap: 3, judgmentsPerPair: 10 } });
  const count = (sql: string) => built.db.prepare(sql).pluck().get() as number;
  return { ...built, seeded, count, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

/** The form of the console's edit page for a batch's settings, as the browser posts it (checkboxes "on" or absent). */
function formOf(settings: Parameters<typeof settingsToForm>[0], csrf: string): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = { _csrf: csrf };
  for (const [key, value] of Object.entries(settingsToForm(settings))) {
    if (typeof value === 'boolean') {
      if (value) form[key] = 'on';
    } else if (typeof value === 'string' || Array.isArray(value)) {
      if (key !== 'moreQuestions') form[key] = value as string | string[];
    }
  }
  return form;
}

describe('the per-address limit, before consent', () => {
  it('GET /r/:batch, for six colleagues behind one address who all open the link before anyone consents, shows five the consent page and tells the sixth before consent; the five are all admitted', async () => {
    const t = officeApp();
    const colleagues = Array.from({ length: 6 }, () => raterClient(t.app, { address: OFFICE }));
    const entries = [];
    for (const colleague of colleagues) entries.push(await colleague.get(`/r/${t.seeded.publicId}`));
    expect(entries.map((e) => e.status)).toEqual([200, 200, 200, 200, 200, 429]);
    const sixth = entries[5] as (typeof entries)[number];
    expect(sixth.text).toContain('Too many sessions of this study are open from your internet connection at the moment: it takes at most 5 at once from one connection.');
    expect(sixth.text).toContain('Nothing has been recorded.');
    expect(sixth.text).not.toContain('name="decision"');
    expect(sixth.headers['retry-after']).toBe(String(5 * 60));
    // Nothing is created before consent but the five places held.
    expect(t.count('SELECT count(*) FROM raters')).toBe(0);
    expect(t.count('SELECT count(*) FROM pair_reservations')).toBe(0);
    expect(t.count('SELECT count(*) FROM address_holds')).toBe(5);
    expect(JSON.stringify(t.db.prepare('SELECT * FROM address_holds').all())).not.toContain(OFFICE);

    // Each of the five read the consent page and agrees: none is turned away after consenting.
    for (const [i, colleague] of colleagues.slice(0, 5).entries()) {
      const agreed = await colleague.submit((entries[i] as (typeof entries)[number]).text, { decision: 'agree' });
      expect(agreed.status).toBe(303);
      expect(String(agreed.headers.location)).toContain('/instructions');
    }
    expect(t.count("SELECT count(*) FROM raters WHERE status = 'instructions'")).toBe(5);
    expect(t.count('SELECT count(*) FROM address_holds')).toBe(0);
    // Another network is not held back by the office.
    expect((await raterClient(t.app, { address: '198.51.100.3' }).get(`/r/${t.seeded.publicId}`)).status).toBe(200);
  });

  it('GET /r/:batch, when a colleague closes the consent page without answering, frees the place five minutes later', async () => {
    const t = officeApp();
    for (let i = 0; i < 5; i += 1) expect((await raterClient(t.app, { address: OFFICE }).get(`/r/${t.seeded.publicId}`)).status).toBe(200);
    expect((await raterClient(t.app, { address: OFFICE }).get(`/r/${t.seeded.publicId}`)).status).toBe(429);
    t.advance(5 * 60_000 + 1_000);
    const late = raterClient(t.app, { address: OFFICE });
    const page = await late.get(`/r/${t.seeded.publicId}`);
    expect(page.status).toBe(200);
    expect((await late.submit(page.text, { decision: 'agree' })).status).toBe(303);
    expect(t.count('SELECT count(*) FROM raters')).toBe(1);
  });

  it('POST /r/:batch/consent, for a consent form whose place lapsed while the address filled up, refuses with the limit and records nothing', async () => {
    const t = officeApp();
    const slow = raterClient(t.app, { address: OFFICE });
    const slowPage = await slow.get(`/r/${t.seeded.publicId}`);
    t.advance(6 * 60_000);
    for (let i = 0; i < 5; i += 1) {
      const colleague = raterClient(t.app, { address: OFFICE });
      expect((await colleague.submit((await colleague.get(`/r/${t.seeded.publicId}`)).text, { decision: 'agree' })).status).toBe(303);
    }
    const refused = await slow.submit(slowPage.text, { decision: 'agree' });
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('it takes at most 5 at once from one connection');
    expect(t.count('SELECT count(*) FROM raters')).toBe(5);
  });

  it('GET /r/:batch, for a Prolific participant who opens the study link twice, holds one place of the address, not two', async () => {
    const now = new Date('2026-03-02T09:00:00.000Z');
    const built = buildTestApp({ clock: () => now, env: { TRUST_PROXY: '1' } });
    const codes = { completed: 'C0DE1', screenedOut: 'C0DE2', noConsent: 'C0DE3' };
    const seeded = seedBatch(built.db, { samples: 20, settings: { perRaterCap: 3, judgmentsPerPair: 10, addressLimits: { activeRaters: 2 }, provider: { kind: 'prolific', completionCodes: codes } } });
    const link = (pid: string) => `/r/${seeded.publicId}?PROLIFIC_PID=${pid}&STUDY_ID=study0000000000000000001&SESSION_ID=sess${pid.slice(0, 20)}`;
    const first = '60aaaaaaaaaaaaaaaaaaaaa1';
    expect((await raterClient(built.app, { address: OFFICE }).get(link(first))).status).toBe(200);
    expect((await raterClient(built.app, { address: OFFICE }).get(link(first))).status).toBe(200);
    expect(built.db.prepare('SELECT count(*) FROM address_holds').pluck().get()).toBe(1);
    expect((await raterClient(built.app, { address: OFFICE }).get(link('60bbbbbbbbbbbbbbbbbbbbb2'))).status).toBe(200);
    expect((await raterClient(built.app, { address: OFFICE }).get(link('60ccccccccccccccccccccc3'))).status).toBe(429);
  });
});

describe('the per-address limit in the console', () => {
  it('the batch page of a plain-link batch says the limit on its checklist; POST /console/batches/:id/edit changes it for the open batch, refuses 0 beside its field, and the sixth colleague then gets in', async () => {
    const t = officeApp();
    const admin = await signIn(t.app, t.db, 'admin');
    const id = t.seeded.batchId;
    const page = (await admin.agent.get(`/console/batches/${id}`).expect(200)).text;
    expect(page).toContain('data-check="addressLimits"');
    expect(page).toContain('One internet address may have 5 raters working at once and start 20 in 60 minutes: colleagues behind one office network share an address, and the next one is told so before consenting');

    for (let i = 0; i < 5; i += 1) await raterClient(t.app, { address: OFFICE }).get(`/r/${t.seeded.publicId}`);
    expect((await raterClient(t.app, { address: OFFICE }).get(`/r/${t.seeded.publicId}`)).status).toBe(429);

    const settings = getBatch(t.db, id)?.settings;
    if (!settings) throw new Error('no batch');
    const before = t.db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(id);
    const zero = await admin.agent.post(`/console/batches/${id}/edit`).type('form').send({ ...formOf(settings, admin.csrf), addressActiveRaters: '0' });
    expect(zero.status).toBe(400);
    expect(zero.text).toMatch(/id="addressActiveRaters"[^>]*aria-invalid="true"/);
    expect(zero.text).toContain('<p class="field-error" id="addressActiveRaters-error">must be at least 1</p>');
    expect(t.db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(id)).toBe(before);

    await admin.agent.post(`/console/batches/${id}/edit`).type('form').send({ ...formOf(settings, admin.csrf), addressActiveRaters: '8' }).expect(303);
    expect(getBatch(t.db, id)?.settings.addressLimits).toEqual({ ratersPerWindow: 20, windowMinutes: 60, activeRaters: 8 });
    expect(getBatch(t.db, id)?.state).toBe('open');
    const sixth = raterClient(t.app, { address: OFFICE });
    const consent = await sixth.get(`/r/${t.seeded.publicId}`);
    expect(consent.status).toBe(200);
    expect((await sixth.submit(consent.text, { decision: 'agree' })).status).toBe(303);
    expect((await admin.agent.get(`/console/batches/${id}`).expect(200)).text).toContain('One internet address may have 8 raters working at once');
  });
});
