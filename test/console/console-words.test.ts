// Issue 49, item 8, the console's words: "Attention-check pass rate — of 0" and "0 / 0 passed" for a batch without
// attention checks, "ids for Prolific bulk approve" on a plain-link batch, and a bonus box whose placeholder looked like
// a value already typed.
import { describe, expect, it } from 'vitest';
import { signIn } from '../auth/session-helpers.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

/** The text of one rater's row's cells, tags taken out. */
function cellsOf(html: string, raterId: number): string[] {
  const row = new RegExp(`data-rater="${raterId}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => (m[1] ?? '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
}

describe('the console\'s words for attention checks and payment lists', () => {
  it('GET /console/batches/:id, /raters and /participants, for a batch without attention checks, say "off"; with checks, "none yet" until one is answered', async () => {
    const t = buildTestApp();
    const off = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    const on = makeBatchWithJudgments(t.db, { votes: [['a', 'b']], settings: { attentionChecks: { rate: 0.2, maxFailures: 2 } } });
    t.db.prepare('UPDATE raters SET attention_answered = 3, attention_failures = 1 WHERE id = ?').run(on.raterIds[1]);
    const admin = await signIn(t.app, t.db, 'admin');

    const offPage = (await admin.agent.get(`/console/batches/${off.batchId}`).expect(200)).text;
    expect(offPage).toContain('<div><dt>Attention-check pass rate</dt><dd>off</dd></div>');
    const onPage = (await admin.agent.get(`/console/batches/${on.batchId}`).expect(200)).text;
    expect(onPage).toMatch(/<dt>Attention-check pass rate<\/dt><dd><span data-field="attention_pass_rate" data-format="percent">—<\/span> \(<span data-field="attention_checks">0<\/span> answered\)<\/dd>/);

    const offRaters = (await admin.agent.get(`/console/batches/${off.batchId}/raters`).expect(200)).text;
    expect(cellsOf(offRaters, off.raterIds[0] as number)[4]).toBe('off');
    expect(offRaters).not.toContain('0 / 0 passed');
    const onRaters = (await admin.agent.get(`/console/batches/${on.batchId}/raters`).expect(200)).text;
    expect([cellsOf(onRaters, on.raterIds[0] as number)[4], cellsOf(onRaters, on.raterIds[1] as number)[4]]).toEqual(['none yet', '2 / 3 passed']);

    const offParticipants = (await admin.agent.get(`/console/batches/${off.batchId}/participants`).expect(200)).text;
    expect(cellsOf(offParticipants, off.raterIds[0] as number)[5]).toBe('off');
    const onParticipants = (await admin.agent.get(`/console/batches/${on.batchId}/participants`).expect(200)).text;
    expect([cellsOf(onParticipants, on.raterIds[0] as number)[5], cellsOf(onParticipants, on.raterIds[1] as number)[5]]).toEqual(['none yet', '2 / 3']);
  });

  it('GET /console/batches/:id/participants offers only what fits the provider: Prolific\'s bulk-approve ids and bonus box (its example a hint beside it), MTurk\'s worker ids, a plain link\'s participant ids', async () => {
    const t = buildTestApp();
    const batchOf = (kind: 'prolific' | 'mturk' | 'link') => makeBatchWithJudgments(t.db, { votes: [['a']], settings: { provider: { kind } } }).batchId;
    const ids = { prolific: batchOf('prolific'), mturk: batchOf('mturk'), link: batchOf('link') };
    const admin = await signIn(t.app, t.db, 'admin');
    const page = async (id: number) => (await admin.agent.get(`/console/batches/${id}/participants`).expect(200)).text;

    const prolific = await page(ids.prolific);
    expect(prolific).toMatch(/approve: <span data-testid="count-approve">\d+<\/span> ids for Prolific bulk approve<\/a>/);
    expect(prolific).toContain('<p class="muted small" id="amount-hint">An amount in the study\'s currency, without its sign: for example 1.50.</p>');
    expect(prolific).toMatch(/<input type="text" id="amount" name="amount" inputmode="decimal" pattern="[^"]+" aria-describedby="amount-hint" required>/);
    expect(prolific).not.toContain('placeholder=');

    const mturk = await page(ids.mturk);
    expect(mturk).toMatch(/approve: <span data-testid="count-approve">\d+<\/span> worker ids<\/a>/);
    expect(mturk).toContain(`<a href="/console/batches/${ids.mturk}/mturk">MTurk page</a>`);
    const link = await page(ids.link);
    expect(link).toMatch(/approve: <span data-testid="count-approve">\d+<\/span> participant ids<\/a>/);
    for (const html of [mturk, link]) {
      expect(html).not.toContain('Prolific');
      expect(html).not.toContain('id="amount"');
    }
  });
});
