// Issue 49, item 4: the back button. Going back after answering and choosing again stored nothing, or (the answered
// comparison's page redirecting to the next one) landed as the answer to the next comparison. An answer now applies
// only to the comparison of the page it was given on: the rater may change the answer just given (a revision, kept in
// judgment_revisions), and is told plainly when an answer can no longer change.
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { TWO_QUESTIONS, assignmentOf, checkInvariants, count, raterClient, seedBatch, testApp } from './rating-fixtures.js';

type Client = ReturnType<typeof raterClient>;
type Page = { url: string; res: { text: string; status: number } };

/** Answers the page's comparison (extra fields as given) and follows to the next page. */
async function answer(rater: Client, page: Page, fields: Record<string, string>): Promise<Page> {
  const posted = await rater.submit(page.res.text, fields);
  expect(posted.status).toBe(303);
  return rater.follow(String(posted.headers.location));
}

const judgmentsOf = (db: Db, assignmentId: number | undefined) =>
  db.prepare('SELECT question_index, choice, winner, label, reason FROM judgments WHERE assignment_id = ? ORDER BY question_index').all(assignmentId);
const tallies = (db: Db, batchId: number) => db.prepare('SELECT t.wins_a, t.wins_b, t.ties FROM comparison_tallies t JOIN comparisons c ON c.id = t.comparison_id WHERE c.batch_id = ?').get(batchId);
const other = (choice: string) => (choice === 'left' ? 'right' : 'left');
/** What a page that changes an answer says and offers, with the rater's token taken out. */
const reviseParts = (html: string) =>
  [/<p class="notice warn" role="status" id="revise-notice">[\s\S]*?<\/p>/.exec(html)?.[0], /<button type="submit">[^<]*/.exec(html)?.[0], /Keep my answer[^<]*/.exec(html)?.[0]].map((part) => part?.replace(/rt=[^"&]+/g, 'rt=…'));

describe('changing an answer over HTTP', () => {
  it('GET /r/:batch/c/:assignment, back on the comparison just answered, shows it with the answer chosen; another choice revises that judgment and nothing else', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { samples: 3, settings: { perRaterCap: 3, reason: 'optional' } });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    const one = assignmentOf(db, first.url);
    advance(30_000);
    const second = await answer(rater, first, { choice: 'left', reason: 'more natural' });
    const two = assignmentOf(db, second.url);
    expect(second.res.text).toContain('Comparison 2 of 3');
    const before = { rater: db.prepare('SELECT judged, regular_judged FROM raters').get(), pair: db.prepare('SELECT accepted, accepted_left_a FROM pairs WHERE id = ?').get(one?.pair_id) };
    const winsBefore = tallies(db, seeded.batchId);

    // The back button asks for the first comparison's page again: it is that comparison, with the answer given.
    const back = await rater.get(first.url);
    expect(back.status).toBe(200);
    expect(back.text).toContain('Comparison 1 of 3');
    expect(back.text).toContain('You have already answered this comparison. You can change your answer below');
    expect(back.text).toMatch(/value="left" required checked>/);
    expect(back.text).toContain('>more natural</textarea>');
    expect(back.text).toContain('Change my answer');
    expect(back.text).not.toContain('id="lease-warning"');

    advance(10_000);
    const revised = await rater.submit(back.text, { choice: 'right', reason: 'changed my mind' });
    expect(revised.status).toBe(303);
    const next = await rater.follow(String(revised.headers.location));
    // On to the comparison the rater already held, which says the change was recorded and is still unanswered.
    expect(assignmentOf(db, next.url)?.id).toBe(two?.id);
    expect(next.res.text).toContain('Your changed answer to the previous comparison is recorded.');
    expect(next.res.text).toContain('Comparison 2 of 3');

    const winner = one?.left_side === 'a' ? 'b' : 'a';
    expect(judgmentsOf(db, one?.id)).toEqual([{ question_index: 0, choice: 'right', winner, label: expect.stringMatching(winner === 'a' ? /^SCRIPT:/ : /^AGENTS:/), reason: 'changed my mind' }]);
    expect(judgmentsOf(db, two?.id)).toEqual([]);
    expect(db.prepare('SELECT choice, winner, reason, answered_at, revised_at FROM judgment_revisions').all()).toEqual([
      { choice: 'left', winner: one?.left_side, reason: 'more natural', answered_at: '2026-03-01T10:00:30.000Z', revised_at: '2026-03-01T10:00:40.000Z' },
    ]);
    // One rater, one judgment, one place of K: the counters are as they were, the win moved from one side to the other.
    expect({ rater: db.prepare('SELECT judged, regular_judged FROM raters').get(), pair: db.prepare('SELECT accepted, accepted_left_a FROM pairs WHERE id = ?').get(one?.pair_id) }).toEqual(before);
    const won = winsBefore as { wins_a: number; wins_b: number; ties: number };
    expect(tallies(db, seeded.batchId)).toEqual(winner === 'a' ? { wins_a: won.wins_a + 1, wins_b: won.wins_b - 1, ties: 0 } : { wins_a: won.wins_a - 1, wins_b: won.wins_b + 1, ties: 0 });
    expect(db.prepare('SELECT revisions FROM batch_judgment_counts WHERE batch_id = ?').pluck().get(seeded.batchId)).toBe(1);
    checkInvariants(db, seeded.batchId, 3);
  });

  it('POST /r/:batch/c/:assignment of an earlier comparison than the one just answered stores nothing and says the answer is final; its page sends the rater on, saying so', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 3, settings: { perRaterCap: 3 } });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    const one = assignmentOf(db, first.url);
    const second = await answer(rater, first, { choice: 'left' });
    const third = await answer(rater, second, { choice: 'left' });
    const three = assignmentOf(db, third.url);

    // Comparison 1's page, as a second tab or the browser's cache kept it, posted with another choice.
    const late = await rater.submit(first.res.text, { choice: 'right' });
    expect(late.status).toBe(303);
    const after = await rater.follow(String(late.headers.location));
    expect(assignmentOf(db, after.url)?.id).toBe(three?.id);
    expect(after.res.text).toContain('Your answer to the previous comparison had already been recorded and can no longer be changed, so your new choice was not stored.');
    expect(db.prepare('SELECT choice FROM judgments WHERE assignment_id = ?').pluck().get(one?.id)).toBe('left');

    // Going back two pages: not comparison 1's form (its answer is final), but the current comparison, saying so.
    const back = await rater.follow(first.url);
    expect(assignmentOf(db, back.url)?.id).toBe(three?.id);
    expect(back.res.text).toContain('You went back to a comparison you had already answered. Its answer is recorded and can no longer be changed. This is your next comparison.');
    expect(back.res.text).toContain('Comparison 3 of 3');
    expect(count(db, 'SELECT count(*) FROM judgment_revisions')).toBe(0);
    expect(db.prepare('SELECT choice FROM judgments ORDER BY id').pluck().all()).toEqual(['left', 'left']);
    checkInvariants(db, seeded.batchId, 3);
  });

  it('POST /r/:batch/c/:assignment, revising a two-question answer, rewrites both rows together, and a refused revision keeps the stored answer', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 2, settings: { perRaterCap: 2, questions: TWO_QUESTIONS } });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    const one = assignmentOf(db, first.url);
    await answer(rater, first, { choice: 'left', reason: 'first', choice_2: 'tie' });
    const back = await rater.get(first.url);
    expect(back.text).toContain('Change my answers');
    expect(back.text).toMatch(/name="choice_2" value="tie" checked/);
    // A tie where the first question allows none is refused as a first answer would be, and changes nothing.
    const refused = await rater.submit(back.text, { choice: 'tie', choice_2: 'left' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Please choose Conversation 1 or Conversation 2 for question 1.');
    expect(refused.text).toContain('You have already answered this comparison.');
    expect(judgmentsOf(db, one?.id)).toMatchObject([
      { choice: 'left', reason: 'first' },
      { choice: 'tie', reason: null },
    ]);
    const revised = await rater.submit(back.text, { choice: 'right', reason: 'first', choice_2: 'left' });
    expect(revised.status).toBe(303);
    expect(judgmentsOf(db, one?.id)).toMatchObject([
      { question_index: 0, choice: 'right', reason: 'first' },
      { question_index: 1, choice: 'left', reason: null },
    ]);
    expect(db.prepare('SELECT j.question_index, r.choice FROM judgment_revisions r JOIN judgments j ON j.id = r.judgment_id ORDER BY j.question_index').all()).toEqual([
      { question_index: 0, choice: 'left' },
      { question_index: 1, choice: 'tie' },
    ]);
    expect(db.prepare('SELECT accepted FROM pairs WHERE id = ?').pluck().get(one?.pair_id)).toBe(1);
  });

  it('a practice (onboarding) answer is final: its page sends the rater on saying so, and another choice for it stores nothing', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 4, settings: { onboarding: { pairs: 2, threshold: 0.5 } } });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    expect(assignmentOf(db, first.url)?.kind).toBe('onboarding');
    const one = assignmentOf(db, first.url);
    const second = await answer(rater, first, { choice: 'left' });
    const back = await rater.follow(first.url);
    expect(back.url).toBe(second.url.replace(/&notice=.*$/, '') + '&notice=answered');
    expect(back.res.text).toContain('Its answer is recorded and can no longer be changed.');
    const again = await rater.submit(first.res.text, { choice: 'right' });
    expect(String(again.headers.location)).toMatch(/&notice=unchanged$/);
    expect(db.prepare('SELECT choice FROM judgments WHERE assignment_id = ?').pluck().get(one?.id)).toBe('left');
    expect(db.prepare('SELECT onboarding_answered, onboarding_correct FROM raters').get()).toEqual({ onboarding_answered: 1, onboarding_correct: one?.expected === one?.left_side ? 1 : 0 });
  });

  it('an attention check is revised as a regular pair is (nothing on its page tells them apart): its failure is counted again, and at maxFailures the rater is screened out', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 6, settings: { perRaterCap: 5, attentionChecks: { rate: 0.5, maxFailures: 1 }, provider: { kind: 'link', completionCodes: { screenedOut: 'OUT-1' } } } });
    const rater = raterClient(app);
    let page: Page = await rater.startRating(seeded.publicId);
    let regularBack: string | null = null;
    for (let i = 0; i < 6 && assignmentOf(db, page.url)?.kind !== 'attention'; i += 1) {
      const regular = page;
      page = await answer(rater, page, { choice: 'left' });
      regularBack = (await rater.get(regular.url)).text;
    }
    const check = assignmentOf(db, page.url);
    expect(check?.kind).toBe('attention');
    const right = check?.expected === check?.left_side ? 'left' : 'right';
    const checkPage = page;
    await answer(rater, page, { choice: right });
    expect(db.prepare('SELECT attention_answered, attention_failures FROM raters').get()).toEqual({ attention_answered: 1, attention_failures: 0 });

    const back = await rater.get(checkPage.url);
    expect(back.text).toContain('You have already answered this comparison.');
    expect(reviseParts(back.text)).toEqual(reviseParts(regularBack ?? ''));
    const wrong = await rater.submit(back.text, { choice: other(right) });
    expect(wrong.status).toBe(303);
    const done = await rater.follow(String(wrong.headers.location));
    expect(done.url).toMatch(/\/done\?/);
    expect(done.res.text).toContain('OUT-1');
    expect(db.prepare('SELECT status, excluded, attention_failures FROM raters').get()).toEqual({ status: 'screened_out', excluded: 1, attention_failures: 1 });
    expect(db.prepare('SELECT correct FROM judgments WHERE assignment_id = ?').pluck().get(check?.id)).toBe(0);
    expect(db.prepare('SELECT correct FROM judgment_revisions').pluck().all()).toEqual([1]);
    // The screened-out rater's judgments left the pair counts as any screen-out's do.
    expect(count(db, "SELECT sum(accepted) FROM pairs WHERE kind = 'regular'")).toBe(0);
  });

  it('in a sequential batch, the answer a look counted can no longer change and the look stays as taken; one given after the look still can', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { samples: 30, settings: { judgmentsPerPair: 1, perRaterCap: 8, stopping: { lookEvery: 10, alpha: 0.05, spending: 'obrien-fleming' } } });
    const raters = [raterClient(app), raterClient(app)];
    const pages: Page[] = [];
    for (const rater of raters) pages.push(await rater.startRating(seeded.publicId));
    // Alternate answers (one for each condition), so the look at 10 completed pairs goes on.
    const answeredPages: Page[][] = [[], []];
    for (let round = 0; round < 5; round += 1) {
      for (const [i, rater] of raters.entries()) {
        advance(1000);
        const current = pages[i] as Page;
        answeredPages[i]?.push(current);
        const a = assignmentOf(db, current.url);
        pages[i] = await answer(rater, current, { choice: (round + i) % 2 === 0 ? (a?.left_side === 'a' ? 'left' : 'right') : a?.left_side === 'a' ? 'right' : 'left' });
      }
    }
    const look = db.prepare('SELECT look, completed_pairs, wins_a, wins_b, decision, taken_at FROM sequential_looks').all();
    expect(look).toEqual([{ look: 1, completed_pairs: 10, wins_a: 5, wins_b: 5, decision: 'continue', taken_at: '2026-03-01T10:00:10.000Z' }]);

    // Rater 2 gave the 10th answer: the look counted it.
    const counted = answeredPages[1]?.[4] as Page;
    const countedBack = await raters[1]?.follow(counted.url);
    expect(countedBack?.res.text).toContain('Its answer is recorded and can no longer be changed.');
    const countedChoice = db.prepare('SELECT choice FROM judgments WHERE assignment_id = ?').pluck().get(assignmentOf(db, counted.url)?.id) as string;
    const refused = await raters[1]?.submit(counted.res.text, { choice: other(countedChoice) });
    expect(String(refused?.headers.location)).toMatch(/&notice=unchanged$/);
    expect(db.prepare('SELECT look, completed_pairs, wins_a, wins_b, decision, taken_at FROM sequential_looks').all()).toEqual(look);

    // Rater 1 answers once more after the look; that answer may change.
    advance(1000);
    const afterLook = pages[0] as Page;
    await answer(raters[0] as Client, afterLook, { choice: 'left' });
    const back = await raters[0]?.get(afterLook.url);
    expect(back?.text).toContain('You have already answered this comparison.');
    const revised = await raters[0]?.submit(back?.text ?? '', { choice: 'right' });
    expect(String(revised?.headers.location)).toMatch(/&notice=revised$/);
    expect(db.prepare('SELECT choice FROM judgments WHERE assignment_id = ?').pluck().get(assignmentOf(db, afterLook.url)?.id)).toBe('right');
    expect(db.prepare('SELECT count(*) FROM sequential_looks').pluck().get()).toBe(1);
    checkInvariants(db, seeded.batchId, 1);
  });
});
