import { describe, expect, it } from 'vitest';
import { previewToken } from '../../src/rating/rater-token.js';
import { buildTestApp, TEST_SECRET } from '../helpers/test-app.js';
import { internalIds, leaks, padInternalIds } from './leak-check.js';
import { type Exchange, MODEL, raterClient, seedBatch } from './rating-fixtures.js';

/** Well-formed Prolific ids (24 hexadecimal characters). */
const PID = (n: number) => `b1${n.toString(16).padStart(22, '0')}`;

describe('blinding', () => {
  it('walking the whole rater flow (entry, consent, instructions, onboarding, attention checks, comparisons, report, errors, done), no response reveals mode, model, run or internal ids', async () => {
    const { app, db } = buildTestApp();
    padInternalIds(db);
    const seeded = seedBatch(db, {
      samples: 6,
      settings: {
        provider: { kind: 'prolific', completionCodes: { completed: 'C1A2B3C4', screenedOut: 'S9X8Y7W6', noConsent: 'N4M5P6Q7' }, screenOutPay: '0.30' },
        onboarding: { pairs: 1, threshold: 0.5 },
        attentionChecks: { rate: 0.5, maxFailures: 3 },
        allowTie: true,
        perRaterCap: 3,
      },
    });
    const rater = raterClient(app);
    // Errors a rater can run into also count.
    await rater.get(`/r/${seeded.publicId}?PROLIFIC_PID=only`);
    let page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${PID(1)}&STUDY_ID=st1&SESSION_ID=se1`);
    await rater.get(`/r/${seeded.publicId}?PROLIFIC_PID=${PID(4)}&STUDY_ID=st1&SESSION_ID=se1`);
    const reportUrl = /href="([^"]*\/report\?[^"]*)"/.exec(page.res.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const report = await rater.get(reportUrl);
    await rater.submit(report.text, { which: 'left', reason: 'Looks broken' });
    let screens = 0;
    while (page.url.includes('/c/') && screens < 12) {
      screens += 1;
      await rater.post(page.url.split('?')[0] ?? '', { choice: 'left' }); // no token, no CSRF: 403 page
      const publicId = decodeURIComponent(/\/c\/([^/?]+)/.exec(page.url)?.[1] ?? '');
      const gold = db
        .prepare<{ publicId: string }, { left_side: string; expected: string | null }>(
          'SELECT a.left_side, p.expected FROM assignments a JOIN pairs p ON p.id = a.pair_id WHERE a.public_id = :publicId',
        )
        .get({ publicId });
      const choice = gold?.expected ? (gold.expected === gold.left_side ? 'left' : 'right') : screens % 2 === 0 ? 'left' : 'tie';
      const res = await rater.submit(page.res.text, { choice, reason: 'ok', active_ms: '1000' });
      await rater.submit(page.res.text, { choice: 'left' }); // double submit
      page = await rater.follow(String(res.headers.location));
    }
    expect(page.url).toMatch(/\/done\?/);
    const kinds = db.prepare('SELECT DISTINCT p.kind FROM assignments a JOIN pairs p ON p.id = a.pair_id WHERE a.batch_id = :b ORDER BY 1').pluck().all({ b: seeded.batchId });
    expect(kinds).toEqual(['attention', 'onboarding', 'regular']);
    // A second rater withdraws; a third declines consent; the console's preview and the static files.
    const leaver = raterClient(app);
    const leaverPage = await leaver.startRating(seeded.publicId, `?PROLIFIC_PID=${PID(2)}&STUDY_ID=st1&SESSION_ID=se2`);
    const withdraw = await leaver.get(/href="([^"]*\/withdraw\?[^"]*)"/.exec(leaverPage.res.text)?.[1]?.replace(/&amp;/g, '&') ?? '');
    await leaver.follow(String((await leaver.submit(withdraw.text, {})).headers.location));
    const decliner = raterClient(app);
    const consent = await decliner.follow(`/r/${seeded.publicId}?PROLIFIC_PID=${PID(3)}&STUDY_ID=st1&SESSION_ID=se3`);
    await decliner.follow(String((await decliner.submit(consent.res.text, { decision: 'decline' })).headers.location));
    await decliner.get(`/r/${seeded.publicId}/preview?pt=${encodeURIComponent(previewToken(TEST_SECRET, seeded.publicId))}`);
    for (const asset of ['/static/js/rater.js', '/static/css/rater.css', '/static/css/app.css']) await decliner.get(asset);

    const exchanges = [...rater.log, ...leaver.log, ...decliner.log];
    expect(exchanges.length).toBeGreaterThan(40);
    expect(exchanges.some((e) => e.status === 403)).toBe(true);
    const ids = internalIds(db);
    expect(ids.length).toBeGreaterThan(20);
    expect(leaks(exchanges, [MODEL, seeded.runName, 'blindcheck', 'gold variant', 'derived', 'illustrative'], ids)).toEqual([]);
    expect(exchanges.every((e) => e.headers['set-cookie'] === undefined)).toBe(true);
  });

  it('the leak detector itself finds a mode name, a model name and an internal id when they are present', () => {
    const fake: Exchange = { method: 'GET', url: '/r/x?id=8123000', status: 200, headers: { 'x-test': 'Agents' }, body: `<p>${MODEL}</p><script src="/a.js"></script>` };
    const found = leaks([fake], [MODEL], ['8123000']);
    expect(found.some((f) => f.includes('mode name "Agents"'))).toBe(true);
    expect(found.some((f) => f.includes(MODEL))).toBe(true);
    expect(found.some((f) => f.includes('internal id 8123000'))).toBe(true);
    expect(found.some((f) => f.includes('<tag'))).toBe(false);
  });

  it('GET /r/:batch/c/:assignment puts the dialogues on screen by the assignment\'s left side only', async () => {
    const { app, db } = buildTestApp();
    // Four raters doing three comparisons each: the cap says so, since consent reserves up to the cap for each.
    const seeded = seedBatch(db, { samples: 6, settings: { perRaterCap: 3 } });
    const sides = new Set<string>();
    for (let r = 0; r < 4; r += 1) {
      const rater = raterClient(app);
      let page = await rater.startRating(seeded.publicId);
      for (let i = 0; i < 3 && page.url.includes('/c/'); i += 1) {
        const publicId = decodeURIComponent(/\/c\/([^/?]+)/.exec(page.url)?.[1] ?? '');
        const leftSide = db.prepare('SELECT left_side FROM assignments WHERE public_id = :publicId').pluck().get({ publicId }) as string;
        sides.add(leftSide);
        // SCRIPT (a) dialogues were made with 8 words per turn, AGENTS (b) with 12: "w0_11" only exists in b.
        const first = page.res.text.split('Conversation 2')[0] ?? '';
        expect(first.includes('w0_11')).toBe(leftSide === 'b');
        const res = await rater.submit(page.res.text, { choice: 'left' });
        page = await rater.follow(String(res.headers.location));
      }
    }
    expect([...sides].sort()).toEqual(['a', 'b']);
  });
});
