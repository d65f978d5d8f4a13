// The raters and participants pages show each rater's quality signals (issue 43) from the rows the batch's analysis
// stored (migration 078), not from every judgment of the batch read on the request thread: at a million judgments
// that read held the event loop 5.6 s a view and ran a server on npm start's heap limit out of memory. What they show
// must be what the whole batch's computation gives, for the raters listed on any page, excluded ones included.
import { describe, expect, it } from 'vitest';
import { awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { readBatchSignals, readQualitySettings } from '../../src/analysis/quality-signals.queries.js';
import { signIn } from '../auth/session-helpers.js';
import { count, raterClient, seedBatch, testApp } from '../rating/rating-fixtures.js';

const SHARED = 'Conversation one circles back to the unpaid invoice from March exactly the way my landlord used to';
const OWN = 'The second speaker hedges before every refusal, which is what people do when they feel awkward';

type How = { reason: string; paste: boolean } | null;

/** One rater (at an address of their own) answers every comparison they are given, each reason typed or pasted. */
async function rateAll(t: ReturnType<typeof testApp>, publicId: string, address: string, how: How) {
  const rater = raterClient(t.app, { address });
  let page = await rater.startRating(publicId);
  while (page.url.includes('/c/')) {
    t.advance(40_000);
    const reason = how?.reason ?? '';
    const figures = how?.paste
      ? { v: 1, pastes: 1, pasted: reason.length, keys: 0, typing_ms: 0, hidden_ms: 0, before_second: null, key: '1' }
      : { v: 1, pastes: 0, pasted: 0, keys: reason.length, typing_ms: reason.length * 150, hidden_ms: 0, before_second: null, key: 'pointer' };
    const res = await rater.submit(page.res.text, { choice: 'left', reason, active_ms: '38000', signals: JSON.stringify(figures) });
    expect(res.status).toBe(303);
    page = await rater.follow(String(res.headers.location));
  }
}

/** The signal flags and the typed / pasted cell of each rater's row on a raters page. */
function rowsOf(html: string): Map<number, { flags: string[]; typedPasted: string }> {
  const rows = new Map<number, { flags: string[]; typedPasted: string }>();
  for (const [, id, body] of html.matchAll(/data-rater="(\d+)">([\s\S]*?)<\/tr>/g)) {
    const flags = [...(body ?? '').matchAll(/<span class="flag signal">([^<]*)<\/span>/g)].map((m) => m[1] ?? '');
    const typedPasted = /data-testid="reasons-typed-pasted">([^<]*)</.exec(body ?? '')?.[1] ?? '';
    rows.set(Number(id), { flags, typedPasted });
  }
  return rows;
}

describe('quality signals stored with the analysis (migration 078)', () => {
  it('GET /console/batches/:id/raters, on every page of raters, shows the signals the whole batch gives, an excluded rater\'s too; an erased rater\'s row goes with them', async () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 3, settings: { perRaterCap: 3, judgmentsPerPair: 4, reason: 'optional' } });
    await rateAll(t, seeded.publicId, '203.0.113.1', { reason: SHARED, paste: false });
    await rateAll(t, seeded.publicId, '203.0.113.2', { reason: SHARED, paste: true });
    await rateAll(t, seeded.publicId, '203.0.113.3', { reason: OWN, paste: false });
    await rateAll(t, seeded.publicId, '203.0.113.4', null);
    const raterIds = t.db.prepare('SELECT id FROM raters WHERE batch_id = ? ORDER BY id').pluck().all(seeded.batchId) as number[];
    expect(raterIds).toHaveLength(4);
    const [typist, paster, own, silent] = raterIds as [number, number, number, number];

    const admin = await signIn(t.app, t.db, 'admin');
    const excluded = await admin.agent.post(`/console/batches/${seeded.batchId}/raters/${own}/exclude`).type('form').send({ _csrf: admin.csrf, reason: 'test' });
    expect(excluded.status).toBe(303);
    await awaitBatchAnalysis(t.db, seeded.batchId, { now: () => new Date(), fresh: true });

    // The whole batch's computation, as the pages made it on every view before.
    const whole = readBatchSignals(t.db, seeded.batchId, readQualitySettings(t.db, seeded.batchId));
    expect(whole.flagsOf(typist)).toContain('same reason as another rater');
    expect(whole.flagsOf(paster)).toEqual(expect.arrayContaining(['same reason as another rater', 'pasted reasons']));
    expect(whole.flagsOf(own)).not.toContain('same reason as another rater');

    const shown = new Map<number, { flags: string[]; typedPasted: string }>();
    for (const page of [1, 2]) {
      const res = await admin.agent.get(`/console/batches/${seeded.batchId}/raters?per_page=2&page=${page}`).expect(200);
      const rows = rowsOf(res.text);
      expect(rows.size).toBe(2);
      for (const [id, row] of rows) shown.set(id, row);
    }
    expect([...shown.keys()].sort((x, y) => x - y)).toEqual(raterIds);
    for (const id of raterIds) {
      const s = whole.byRater.get(id);
      expect(shown.get(id)).toEqual({ flags: whole.flagsOf(id), typedPasted: s && s.measured > 0 ? `${s.typed} / ${s.pasted}` : '—' });
    }
    expect(shown.get(paster)?.typedPasted).toBe('0 / 3');
    expect(shown.get(typist)?.typedPasted).toBe('3 / 0');

    const participants = await admin.agent.get(`/console/batches/${seeded.batchId}/participants`).expect(200);
    expect(participants.text).toContain(`signals to look at: ${whole.flagsOf(paster).join(', ')}`);
    const csv = (await admin.agent.get(`/console/batches/${seeded.batchId}/participants.csv?form=full`).expect(200)).text;
    expect(csv.split('\n').filter((line) => line.includes('same reason as another rater'))).toHaveLength(2);

    expect(count(t.db, 'SELECT count(*) FROM analysis_rater_signals WHERE batch_id = :b', { b: seeded.batchId })).toBe(4);
    const erased = await admin.agent
      .post(`/console/batches/${seeded.batchId}/raters/${silent}/delete`)
      .type('form')
      .send({ _csrf: admin.csrf, reason: 'asked to be forgotten', confirm: 'delete' });
    expect(erased.status).toBe(303);
    expect(count(t.db, 'SELECT count(*) FROM analysis_rater_signals WHERE rater_id = :r', { r: silent })).toBe(0);
    expect(count(t.db, 'SELECT count(*) FROM analysis_rater_signals WHERE batch_id = :b', { b: seeded.batchId })).toBe(3);
  });
});
