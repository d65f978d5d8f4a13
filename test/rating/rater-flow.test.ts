import { describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { previewToken, raterToken } from '../../src/rating/rater-token.js';
import { makeRater } from '../helpers/factories.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { assignmentOf, count, formAction, inputValue, raterClient, seedBatch, START, testApp } from './rating-fixtures.js';


/** A well-formed Prolific id (24 hexadecimal characters), distinct per n. */
export const pid = (n: number) => `5f${n.toString(16).padStart(22, '0')}`;

/** The screen side that holds the dialogue named `slot` (a or b) in this assignment. */
const sideOf = (leftSide: 'a' | 'b', slot: 'a' | 'b') => (leftSide === slot ? 'left' : 'right');

describe('rater flow over HTTP (plain link)', () => {
  it('GET /r/:batch through consent, instructions and a comparison, when answered, stores one judgment with its side, time and question version', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { settings: { pay: '£3.00', estimatedMinutes: 12, consent: 'Read **this** <script>alert(1)</script>' } });
    const rater = raterClient(app);
    const consent = await rater.follow(`/r/${seeded.publicId}`);
    expect(consent.res.status).toBe(200);
    // Consent is shown at the entry link itself, and nothing is created until it is given.
    expect(consent.url).toBe(`/r/${seeded.publicId}`);
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(0);
    expect(consent.res.text).toContain('Which one sounds more like a natural interaction that two people would have in this scenario?');
    expect(consent.res.text).toContain('About 12 minutes');
    expect(consent.res.text).toContain('£3.00');
    expect(consent.res.text).toContain('Privacy');
    expect(consent.res.text).toContain('Withdraw from this study');
    // Markdown is rendered, raw HTML is not passed through.
    expect(consent.res.text).toContain('<strong>this</strong>');
    expect(consent.res.text).not.toContain('<script>alert(1)</script>');

    const page = await rater.startRating(seeded.publicId);
    expect(page.res.status).toBe(200);
    expect(page.res.text).toContain('Conversation 1');
    expect(page.res.text).toContain('Conversation 2');
    expect(page.res.text).toMatch(/name="choice" value="left"/);
    expect(page.res.text).toMatch(/name="choice" value="right"/);
    expect(page.res.text).not.toMatch(/value="tie"/);
    expect(page.res.text).toMatch(/Comparison 1 of \d+/);
    const assignment = assignmentOf(db, page.url);
    expect(assignment?.state).toBe('leased');

    advance(40_000);
    const posted = await rater.submit(page.res.text, { choice: 'left', reason: 'flows better', active_ms: '25000' });
    expect(posted.status).toBe(303);
    const judgment = db
      .prepare<{ id: number }, Record<string, unknown>>(
        'SELECT left_side, choice, winner, label, reason, active_ms, question_version, late, shown_at, submitted_at FROM judgments WHERE assignment_id = :id',
      )
      .get({ id: assignment?.id ?? 0 });
    const winner = assignment?.left_side;
    expect(judgment).toEqual({
      left_side: assignment?.left_side,
      choice: 'left',
      winner,
      label: winner === 'a' ? 'SCRIPT:blindcheck-model-7b' : 'AGENTS:blindcheck-model-7b',
      reason: 'flows better',
      active_ms: 25000,
      question_version: 1,
      late: 0,
      shown_at: START.toISOString(),
      submitted_at: new Date(START.getTime() + 40_000).toISOString(),
    });
    const pair = db.prepare('SELECT accepted, accepted_left_a FROM pairs WHERE id = :id').get({ id: assignment?.pair_id });
    expect(pair).toEqual({ accepted: 1, accepted_left_a: assignment?.left_side === 'a' ? 1 : 0 });
    const next = await rater.follow(String(posted.headers.location));
    expect(next.res.text).toMatch(/Comparison 2 of/);
  });

  it('POST /r/:batch/c/:assignment, when the same form is sent twice, stores one judgment and answers both as a success', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db);
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const [first, second] = await Promise.all([rater.submit(page.res.text, { choice: 'right' }), rater.submit(page.res.text, { choice: 'right' })]);
    expect([first.status, second.status]).toEqual([303, 303]);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(count(db, 'SELECT sum(accepted) FROM pairs')).toBe(1);
  });

  it('POST /r/:batch/c/:assignment, with bad input (no CSRF, forged token, unknown choice, oversized reason, tie not allowed, another rater\'s assignment), gets a 4xx and stores nothing', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db);
    const alice = raterClient(app);
    const bob = raterClient(app);
    const page = await alice.startRating(seeded.publicId);
    const bobPage = await bob.startRating(seeded.publicId);
    const action = formAction(page.res.text);
    const rt = inputValue(page.res.text, 'rt');
    const csrf = inputValue(page.res.text, '_csrf');

    const noCsrf = await alice.post(action, { rt, choice: 'left' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.text).toContain('This form has expired');
    const forged = await alice.post(action, { rt: `${rt.split('.')[0]}.forged`, _csrf: csrf, choice: 'left' });
    expect(forged.status).toBe(403);
    const unknown = await alice.post(action, { rt, _csrf: csrf, choice: 'both' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Unknown choice');
    const long = await alice.post(action, { rt, _csrf: csrf, choice: 'left', reason: 'x'.repeat(2001) });
    expect(long.status).toBe(400);
    expect(long.text).toContain('This reason is 2,001 characters long; the limit is 2,000. Please shorten it by 1 character.');
    const tie = await alice.post(action, { rt, _csrf: csrf, choice: 'tie' });
    expect(tie.status).toBe(400);
    expect(tie.text).toContain('Please choose Conversation 1 or Conversation 2');
    const missing = await alice.post(action, { rt, _csrf: csrf });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('Please choose one of the conversations');
    // Bob posts to Alice's assignment with his own valid token and CSRF.
    const stolen = await bob.post(action, { rt: inputValue(bobPage.res.text, 'rt'), _csrf: inputValue(bobPage.res.text, '_csrf'), choice: 'left' });
    expect(stolen.status).toBe(404);
    // A made-up assignment token, on the page and in a post.
    const forgedPage = await alice.get(page.url.replace(/\/c\/[^/?]+/, '/c/AAAAAAAAAAAAAAAAAAAAAA'));
    expect(forgedPage.status).toBe(404);
    expect(forgedPage.text).toContain('This comparison is not one of yours');
    expect((await alice.post(action.replace(/\/c\/[^/?]+/, '/c/AAAAAAAAAAAAAAAAAAAAAA'), { rt, _csrf: csrf, choice: 'left' })).status).toBe(404);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
    expect(count(db, 'SELECT sum(accepted) FROM pairs')).toBe(0);
  });

  it('POST /r/:batch/c/:assignment, when the batch requires a reason and none is given, shows the page again with the message and stores nothing', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { reason: 'required', allowTie: true } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    expect(page.res.text).toMatch(/value="tie"/);
    const res = await rater.submit(page.res.text, { choice: 'tie', reason: '   ' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Please give a short reason');
    expect(res.text).toMatch(/value="tie" checked/);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
    const ok = await rater.submit(res.text, { choice: 'tie', reason: 'both fine' });
    expect(ok.status).toBe(303);
    expect(db.prepare('SELECT winner, label, choice FROM judgments').get()).toEqual({ winner: 'tie', label: 'TIE', choice: 'tie' });
  });

  it('GET /r/:batch/next, when the per-rater cap is reached, marks the rater completed and shows the completion code', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 4, settings: { perRaterCap: 2, provider: { kind: 'link', completionCodes: { completed: 'DONE-123' } } } });
    const rater = raterClient(app);
    let page = await rater.startRating(seeded.publicId);
    for (let i = 0; i < 2; i += 1) {
      const res = await rater.submit(page.res.text, { choice: 'left' });
      page = await rater.follow(String(res.headers.location));
    }
    expect(page.url).toMatch(/\/done\?rt=/);
    expect(page.res.text).toContain('DONE-123');
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'completed' AND finished_at IS NOT NULL")).toBe(1);
  });

  it('GET /r/:batch, when every place is held by a rater who consented, shows the full page before consent and creates no rater; the holder gets their comparison and code', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 1, settings: { judgmentsPerPair: 1, provider: { kind: 'link', completionCodes: { completed: 'DONE-9' } } } });
    const worker = raterClient(app);
    // The worker consents: the one place is reserved for them even before they open a comparison.
    const consent = await worker.follow(`/r/${seeded.publicId}`);
    const agreed = await worker.submit(consent.res.text, { decision: 'agree' });
    expect(count(db, 'SELECT count(*) FROM pair_reservations')).toBe(1);
    const late = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(late.res.status).toBe(200);
    expect(late.res.text).toContain('This study is full');
    expect(late.res.text).toContain('nothing has been recorded');
    expect(late.res.text).not.toMatch(/<form[^>]*method="post"/);
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(1);
    const instructions = await worker.follow(String(agreed.headers.location));
    const started = await worker.submit(instructions.res.text, {});
    const page = await worker.follow(String(started.headers.location));
    expect(page.res.text).toContain('Comparison 1 of 1');
    const res = await worker.submit(page.res.text, { choice: 'left' });
    const done = await worker.follow(String(res.headers.location));
    expect(done.res.text).toContain('You have finished all your comparisons');
    expect(done.res.text).toContain('DONE-9');
  });

  it('POST /r/:batch/consent, when the rater declines, ends the session with the no-consent code', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { provider: { kind: 'link', completionCodes: { noConsent: 'NOPE-1' } } } });
    const rater = raterClient(app);
    const consent = await rater.follow(`/r/${seeded.publicId}`);
    const res = await rater.submit(consent.res.text, { decision: 'decline' });
    const done = await rater.follow(String(res.headers.location));
    expect(done.res.text).toContain('You chose not to take part');
    expect(done.res.text).toContain('NOPE-1');
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'no_consent'")).toBe(1);
    // The comparison pages are out of reach for this rater.
    const next = await rater.follow(String(res.headers.location).replace('/done', '/next'));
    expect(next.url).toMatch(/\/done\?/);
  });

  it('GET /r/:batch, before consent, offers no withdraw link (declining is the way out); a rater made at entry by an older version who withdraws at consent records no consent', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { provider: { kind: 'link', completionCodes: { noConsent: 'NOPE-2' } } } });
    const entry = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(entry.res.text).not.toMatch(/href="[^"]*\/withdraw\?/);
    const legacyId = makeRater(db, { batchId: seeded.batchId, status: 'consent' });
    const publicId = db.prepare('SELECT public_id FROM raters WHERE id = :id').pluck().get({ id: legacyId }) as string;
    const rater = raterClient(app);
    const consent = await rater.follow(`/r/${seeded.publicId}/consent?rt=${encodeURIComponent(raterToken(TEST_SECRET, publicId))}`);
    const withdrawUrl = /href="([^"]*\/withdraw\?[^"]*)"/.exec(consent.res.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const confirm = await rater.get(withdrawUrl);
    expect(confirm.status).toBe(200);
    const res = await rater.submit(confirm.text, {});
    const done = await rater.follow(String(res.headers.location));
    expect(done.res.text).toContain('NOPE-2');
    expect(db.prepare('SELECT status FROM raters').pluck().get()).toBe('no_consent');
  });

  it('POST /r/:batch/withdraw, from a comparison page, ends the session, frees the lease and takes answers out of the counters', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { provider: { kind: 'prolific' } } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${pid(1)}&STUDY_ID=s1&SESSION_ID=x1`);
    const answered = await rater.submit(page.res.text, { choice: 'left' });
    const second = await rater.follow(String(answered.headers.location));
    expect(count(db, 'SELECT sum(accepted) FROM pairs')).toBe(1);
    const withdrawUrl = /href="([^"]*\/withdraw\?[^"]*)"/.exec(second.res.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const confirm = await rater.get(withdrawUrl);
    expect(confirm.status).toBe(200);
    const res = await rater.submit(confirm.text, {});
    const done = await rater.follow(String(res.headers.location));
    expect(done.res.text).toContain('You have withdrawn');
    expect(done.res.text).toContain('Return submission');
    expect(db.prepare('SELECT status, excluded, exclusion_reason FROM raters').get()).toEqual({ status: 'withdrew', excluded: 1, exclusion_reason: 'withdrew' });
    expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'leased'")).toBe(0);
    expect(count(db, 'SELECT sum(accepted) FROM pairs')).toBe(0);
  });

  it('POST /r/:batch/c/:assignment/report, with a reason, flags the dialogue shown on that side for admins', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db);
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const assignment = assignmentOf(db, page.url);
    const reportUrl = /href="([^"]*\/report\?[^"]*)"/.exec(page.res.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const form = await rater.get(reportUrl);
    const empty = await rater.submit(form.text, { which: 'right', reason: '' });
    expect(empty.status).toBe(400);
    const res = await rater.submit(form.text, { which: 'right', reason: 'Offensive words in it' });
    expect(res.status).toBe(303);
    const back = await rater.follow(String(res.headers.location));
    expect(back.res.text).toContain('Thank you for your report');
    const pair = db.prepare<{ id: number }, { dialogue_a_id: number; dialogue_b_id: number }>('SELECT dialogue_a_id, dialogue_b_id FROM pairs WHERE id = :id').get({ id: assignment?.pair_id ?? 0 });
    const rightDialogue = assignment?.left_side === 'a' ? pair?.dialogue_b_id : pair?.dialogue_a_id;
    expect(db.prepare('SELECT pair_id, dialogue_id, reason FROM content_reports').all()).toEqual([
      { pair_id: assignment?.pair_id, dialogue_id: rightDialogue, reason: 'Offensive words in it' },
    ]);
  });

  it('GET /r/:batch/c/:assignment, after the lease time, warns instead of rejecting, and the late answer is stored while the pair is below K', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { settings: { leaseMinutes: 5 } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    expect(page.res.text).toMatch(/id="lease-warning"[^>]*hidden/);
    advance(4 * 60_000);
    const soon = await rater.get(page.url);
    expect(soon.text).toContain('Please submit your answer soon');
    expect(soon.text).not.toMatch(/id="lease-warning"[^>]*hidden/);
    advance(2 * 60_000);
    const expired = await rater.get(page.url);
    expect(expired.text).toContain('Your time for this comparison has passed. You can still submit your answer.');
    const res = await rater.submit(expired.text, { choice: 'right' });
    expect(res.status).toBe(303);
    expect(db.prepare('SELECT late FROM judgments').get()).toEqual({ late: 1 });
  });

  it('POST /r/:batch/c/:assignment, when a late answer meets a pair that already has K judgments, stores nothing and says thanks', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { samples: 1, settings: { judgmentsPerPair: 1, leaseMinutes: 5 } });
    const slow = raterClient(app);
    const slowPage = await slow.startRating(seeded.publicId);
    advance(6 * 60_000);
    const fast = raterClient(app);
    const fastPage = await fast.startRating(seeded.publicId);
    expect(fastPage.url).toMatch(/\/c\//);
    expect((await fast.submit(fastPage.res.text, { choice: 'left' })).status).toBe(303);
    const late = await slow.submit(slowPage.res.text, { choice: 'right' });
    expect(late.status).toBe(303);
    expect(String(late.headers.location)).toContain('notice=full');
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(db.prepare('SELECT accepted FROM pairs').get()).toEqual({ accepted: 1 });
  });

  it('GET and POST on a paused batch: no new comparison is handed out, but the answer to a comparison already shown is stored', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db);
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    transitionBatch(db, seeded.batchId, 'pause', 'test', START);
    const res = await rater.submit(page.res.text, { choice: 'left' });
    expect(res.status).toBe(303);
    const next = await rater.follow(String(res.headers.location));
    expect(next.res.status).toBe(503);
    expect(next.res.text).toContain('This study is paused');
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'leased'")).toBe(0);
  });

  it('POST /r/:batch/c/:assignment, when the batch closed while the lease runs, stores the answer and ends the session with the partial code; GET /r/:batch of a closed batch answers 410 and creates nothing', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { provider: { kind: 'prolific', completionCodes: { completed: 'FULL-1', partial: 'PART-1' } } } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${pid(7)}&STUDY_ID=s1&SESSION_ID=x7`);
    transitionBatch(db, seeded.batchId, 'close', 'test', START);
    // The comparison on screen can still be reloaded and answered while its lease runs.
    expect((await rater.get(page.url)).status).toBe(200);
    const res = await rater.submit(page.res.text, { choice: 'left' });
    expect(res.status).toBe(303);
    const done = await rater.follow(String(res.headers.location));
    expect(done.url).toMatch(/\/done\?/);
    expect(done.res.text).toContain('The study closed while you were working');
    expect(done.res.text).toContain('PART-1');
    expect(done.res.text).not.toContain('FULL-1');
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(db.prepare('SELECT status, finish_reason FROM raters').get()).toEqual({ status: 'completed', finish_reason: 'closed' });
    const entry = await raterClient(app).get(`/r/${seeded.publicId}?PROLIFIC_PID=${pid(8)}&STUDY_ID=s1&SESSION_ID=x8`);
    expect(entry.status).toBe(410);
    expect(entry.text).toContain('This study is closed');
    expect(entry.text).toContain('Return submission');
    expect(entry.text).not.toContain('simarena');
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(1);
    // The person who started reaches their code again from the study link.
    const back = await raterClient(app).follow(`/r/${seeded.publicId}?PROLIFIC_PID=${pid(7)}&STUDY_ID=s1&SESSION_ID=x7`);
    expect(back.res.text).toContain('PART-1');
  });

  it('POST /r/:batch/c/:assignment, when the batch closed and the lease has ended, stores nothing but still gives the partial code', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { settings: { leaseMinutes: 5, provider: { kind: 'link', completionCodes: { partial: 'PART-2' } } } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    transitionBatch(db, seeded.batchId, 'close', 'test', START);
    advance(6 * 60_000);
    const res = await rater.submit(page.res.text, { choice: 'left' });
    expect(res.status).toBe(303);
    const done = await rater.follow(String(res.headers.location));
    expect(done.res.text).toContain('PART-2');
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
  });

  it('GET /r/:batch/next, when the batch is paused after an answer, offers to wait or to finish now, and finishing gives the partial code', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { provider: { kind: 'link', completionCodes: { completed: 'FULL-3', partial: 'PART-3' } } } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    transitionBatch(db, seeded.batchId, 'pause', 'test', START);
    const res = await rater.submit(page.res.text, { choice: 'left' });
    const paused = await rater.follow(String(res.headers.location));
    expect(paused.res.status).toBe(503);
    expect(paused.res.text).toContain('This study is paused');
    expect(paused.res.text).toContain('Finish now and get my code');
    const finished = await rater.submit(paused.res.text, {});
    const done = await rater.follow(String(finished.headers.location));
    expect(done.res.text).toContain('PART-3');
    expect(done.res.text).toContain('paused while you were working');
    expect(db.prepare('SELECT status, finish_reason FROM raters').get()).toEqual({ status: 'completed', finish_reason: 'paused' });
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
  });

  it('GET /r/:unknown, and a draft batch, answer 404 with a clear page', async () => {
    const { app, db } = testApp();
    const draft = seedBatch(db, { open: false });
    expect((await raterClient(app).get('/r/not-a-batch')).status).toBe(404);
    const res = await raterClient(app).get(`/r/${draft.publicId}`);
    expect(res.status).toBe(404);
    expect(res.text).toContain('There is no study at this address');
  });

  it('GET /r/:batch/preview, with the console\'s signed token, shows the pages and an example and records nothing; without it, 403', async () => {
    const { app, db } = testApp();
    // A draft batch: the console previews a batch before opening it.
    const seeded = seedBatch(db, { open: false, settings: { instructions: 'Read carefully.' } });
    const ok = await raterClient(app).get(`/r/${seeded.publicId}/preview?pt=${encodeURIComponent(previewToken(TEST_SECRET, seeded.publicId))}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Read carefully.');
    expect(ok.text).toContain('Conversation 1');
    expect(ok.text).not.toMatch(/<form[^>]*method="post"/);
    expect((await raterClient(app).get(`/r/${seeded.publicId}/preview?pt=bad.token`)).status).toBe(403);
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(0);
    expect(count(db, 'SELECT count(*) FROM assignments')).toBe(0);
  });

  it('GET /r/:batch pages carry no-store and the link provider\'s strict frame and form-action headers', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db);
    const res = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(res.res.headers['cache-control']).toBe('no-store');
    // Never stored, so no validator is computed for it.
    expect(res.res.headers.etag).toBeUndefined();
    const csp = String(res.res.headers['content-security-policy']);
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(res.res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.res.headers['set-cookie']).toBeUndefined();
  });
});

describe('rater flow over HTTP (Prolific)', () => {
  const prolific = { provider: { kind: 'prolific' as const, completionCodes: { completed: 'C1A2B3C4', screenedOut: 'S9X8Y7W6', noConsent: 'N4M5P6Q7' }, screenOutPay: '0.30' } };

  it('GET /r/:batch, without the Prolific parameters, says which are missing and makes no rater', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: prolific });
    const res = await raterClient(app).get(`/r/${seeded.publicId}?PROLIFIC_PID=abc`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('STUDY_ID, SESSION_ID');
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(0);
  });

  it('GET /r/:batch, with renamed parameters, reads them under the batch\'s names', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { provider: { kind: 'prolific', params: { participant: 'pid', study: 'sid', session: 'sess' } } } });
    const rater = raterClient(app);
    const consent = await rater.follow(`/r/${seeded.publicId}?pid=${pid(1)}&sid=S1&sess=X1`);
    expect(consent.res.status).toBe(200);
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(0);
    expect((await rater.submit(consent.res.text, { decision: 'agree' })).status).toBe(303);
    expect(db.prepare('SELECT provider, participant_id, study_id, session_id FROM raters').get()).toEqual({
      provider: 'prolific',
      participant_id: pid(1),
      study_id: 'S1',
      session_id: 'X1',
    });
  });

  it('GET /r/:batch, when the same participant comes back, resumes their session; under another participant id, refuses it', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: prolific });
    const rater = raterClient(app);
    const consent = await rater.follow(`/r/${seeded.publicId}?PROLIFIC_PID=${pid(1)}&STUDY_ID=s1&SESSION_ID=x1`);
    const first = await rater.submit(consent.res.text, { decision: 'agree' });
    const again = await raterClient(app).get(`/r/${seeded.publicId}?PROLIFIC_PID=${pid(1)}&STUDY_ID=s1&SESSION_ID=x1`);
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe(first.headers.location);
    const other = await raterClient(app).get(`/r/${seeded.publicId}?PROLIFIC_PID=${pid(2)}&STUDY_ID=s1&SESSION_ID=x1`);
    expect(other.status).toBe(403);
    expect(other.text).toContain('belongs to another participant');
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(1);
  });

  it('GET /r/:batch/done, for a completed Prolific rater, redirects to Prolific\'s completion URL and shows the code on screen', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 1, settings: { ...prolific, perRaterCap: 1 } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${pid(1)}&STUDY_ID=s1&SESSION_ID=x1`);
    const res = await rater.submit(page.res.text, { choice: 'left' });
    const done = await rater.follow(String(res.headers.location));
    expect(done.res.text).toContain('<meta http-equiv="refresh" content="0;url=https://app.prolific.com/submissions/complete?cc=C1A2B3C4">');
    expect(done.res.text).toContain('<strong>C1A2B3C4</strong>');
    expect(String(done.res.headers['content-security-policy'])).toContain("form-action 'self' https://app.prolific.com");
  });

  it('POST onboarding answers: a rater meeting the threshold goes on to rate; a failing rater is screened out with the screen-out code and never counted', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 4, settings: { ...prolific, onboarding: { pairs: 2, threshold: 0.75 } } });
    expect(count(db, "SELECT count(*) FROM pairs WHERE kind = 'onboarding'")).toBe(2);
    const walk = async (session: string, correct: boolean) => {
      const rater = raterClient(app);
      let page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${pid(correct ? 11 : 12)}&STUDY_ID=s1&SESSION_ID=${session}`);
      for (let i = 0; i < 2; i += 1) {
        expect(page.res.text).toContain('(practice)');
        const a = assignmentOf(db, page.url);
        expect(a?.kind).toBe('onboarding');
        const right = sideOf(a?.left_side ?? 'a', a?.expected ?? 'a');
        const res = await rater.submit(page.res.text, { choice: correct ? right : right === 'left' ? 'right' : 'left' });
        page = await rater.follow(String(res.headers.location));
      }
      return page;
    };
    const good = await walk('good1', true);
    expect(good.url).toMatch(/\/c\//);
    expect(assignmentOf(db, good.url)?.kind).toBe('regular');
    const bad = await walk('bad1', false);
    expect(bad.url).toMatch(/\/done\?/);
    expect(bad.res.text).toContain('S9X8Y7W6');
    expect(db.prepare("SELECT status, excluded, onboarding_correct, onboarding_answered FROM raters WHERE session_id = 'bad1'").get()).toEqual({
      status: 'screened_out',
      excluded: 1,
      onboarding_correct: 0,
      onboarding_answered: 2,
    });
    expect(count(db, "SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE p.kind = 'onboarding' AND j.correct = 1")).toBe(2);
  });

  it('POST attention-check answers: results are stored per rater, and after the failure limit the rater is screened out and their judgments leave the counters', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 6, settings: { ...prolific, attentionChecks: { rate: 0.5, maxFailures: 1 }, perRaterCap: 5 } });
    const rater = raterClient(app);
    let page = await rater.startRating(seeded.publicId, `?PROLIFIC_PID=${pid(9)}&STUDY_ID=s1&SESSION_ID=x9`);
    let checks = 0;
    for (let i = 0; i < 6 && page.url.includes('/c/'); i += 1) {
      const a = assignmentOf(db, page.url);
      let choice = 'left';
      if (a?.kind === 'attention') {
        checks += 1;
        // Fail the check: choose the corrupted dialogue.
        choice = sideOf(a.left_side, a.expected === 'a' ? 'b' : 'a');
      }
      const res = await rater.submit(page.res.text, { choice });
      page = await rater.follow(String(res.headers.location));
    }
    expect(checks).toBe(1);
    expect(page.url).toMatch(/\/done\?/);
    expect(page.res.text).toContain('S9X8Y7W6');
    expect(db.prepare('SELECT status, excluded, exclusion_reason, attention_failures, attention_answered FROM raters').get()).toEqual({
      status: 'screened_out',
      excluded: 1,
      exclusion_reason: 'attention',
      attention_failures: 1,
      attention_answered: 1,
    });
    expect(count(db, "SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE p.kind = 'regular'")).toBeGreaterThan(0);
    expect(count(db, 'SELECT sum(accepted) FROM pairs WHERE kind = \'regular\'')).toBe(0);
  });
});

describe('rater flow over HTTP (MTurk)', () => {
  const mturk = { provider: { kind: 'mturk' as const, completionCodes: { completed: 'MT-OK' } } };
  const query = '?assignmentId=3ASSIGNMENT0001&hitId=3HIT000001&workerId=A1WORKER00001&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com';

  it('GET /r/:batch in preview mode (ASSIGNMENT_ID_NOT_AVAILABLE) shows instructions and an example and accepts nothing', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { ...mturk, instructions: 'Pick the natural one.' } });
    const res = await raterClient(app).get(`/r/${seeded.publicId}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Pick the natural one.');
    expect(res.text).toContain('Accept the HIT to start');
    expect(res.text).toContain('Conversation 1');
    expect(res.text).not.toMatch(/<form[^>]*method="post"/);
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(0);
  });

  it('GET /r/:batch of an MTurk batch may be framed by MTurk and posts its done form to turkSubmitTo/mturk/externalSubmit', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 1, settings: { ...mturk, perRaterCap: 1 } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId, query);
    const csp = String(page.res.headers['content-security-policy']);
    expect(csp).toContain('frame-ancestors');
    expect(csp).toContain('https://workersandbox.mturk.com');
    expect(csp).toContain('https://worker.mturk.com');
    expect(page.res.headers['x-frame-options']).toBeUndefined();
    const res = await rater.submit(page.res.text, { choice: 'right' });
    const done = await rater.follow(String(res.headers.location));
    expect(done.res.text).toContain('action="https://workersandbox.mturk.com/mturk/externalSubmit"');
    expect(inputValue(done.res.text, 'assignmentId')).toBe('3ASSIGNMENT0001');
    expect(inputValue(done.res.text, 'completionCode')).toBe('MT-OK');
  });

  it('GET /r/:batch with a turkSubmitTo that is not an MTurk host is refused with a clear page', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: mturk });
    const res = await raterClient(app).get(`/r/${seeded.publicId}?assignmentId=3ASSIGNMENT0001&hitId=3HIT000001&workerId=A1WORKER00001&turkSubmitTo=https%3A%2F%2Fevil.example`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('turkSubmitTo');
    expect(count(db, 'SELECT count(*) FROM raters')).toBe(0);
  });
});
