// Issue 16, point 1 (rating side): a batch with several questions asks them all on one comparison page with one
// submit, stores one judgment row per question, and counts the comparison once (its first-question row).
import { describe, expect, it } from 'vitest';
import type { BatchSettingsInput } from '../../src/batches/batch.schema.js';
import { batchProgress } from '../../src/console/batch-progress.queries.js';
import { listBatchRaters, listQualityJudgments } from '../../src/console/rater-table.queries.js';
import { deleteRaterData, setRaterExcluded } from '../../src/rating/rater-admin.js';
import { previewToken } from '../../src/rating/rater-token.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { assignmentOf, count, formAction, inputValue, raterClient, seedBatch, START, testApp, TWO_QUESTIONS } from './rating-fixtures.js';


const other = (side: 'left' | 'right') => (side === 'left' ? 'right' : 'left');
const sideOf = (leftSide: 'a' | 'b', slot: 'a' | 'b') => (leftSide === slot ? 'left' : 'right');

describe('several questions per comparison (rating)', () => {
  it('GET /r/:batch/c/:assignment of a two-question batch shows both questions in their own fieldsets, each with its own choices and reason rule, and one submit button', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { questions: TWO_QUESTIONS } });
    const rater = raterClient(app);
    const consent = await rater.follow(`/r/${seeded.publicId}`);
    expect(consent.res.text).toContain('The 2 questions you will answer on each comparison');
    expect(consent.res.text).toContain('Which conversation better pursues its goals?');
    const page = await rater.startRating(seeded.publicId);
    const html = page.res.text;
    expect(html.match(/<fieldset class="choices"/g)).toHaveLength(2);
    expect(html).toContain('Question 1 of 2:</span> Which conversation sounds more natural?');
    expect(html).toContain('Question 2 of 2:</span> Which conversation better pursues its goals?');
    // Question 1 keeps the one-question names; question 2 is named by its place, never by its id.
    expect(html).toMatch(/name="choice" value="left"/);
    expect(html).toMatch(/name="choice_2" value="tie"/);
    expect(html).not.toMatch(/name="choice" value="tie"/);
    expect(html).toMatch(/name="reason"/);
    expect(html).not.toMatch(/name="reason_2"/);
    expect(html).not.toContain('goals"');
    expect(html.match(/<button type="submit"/g)).toHaveLength(1);
    expect(html).toContain('Submit answers');
    expect(html).toContain('answers the question you are at, then moves on to the next question');
    expect(html).toMatch(/Comparison 1 of \d+/);
  });

  it('POST /r/:batch/c/:assignment of a two-question batch, walked by raters until done, stores one row per question with its id, index, winner and label, and fills each pair with exactly K distinct raters', async () => {
    const { app, db, advance } = testApp();
    const k = 2;
    const seeded = seedBatch(db, { samples: 3, settings: { questions: TWO_QUESTIONS, judgmentsPerPair: k, perRaterCap: 2 } });
    for (let r = 0; r < 3; r += 1) {
      const rater = raterClient(app);
      let page = await rater.startRating(seeded.publicId);
      for (let i = 0; i < 5 && page.url.includes('/c/'); i += 1) {
        expect(page.res.text).toContain(`Comparison ${i + 1} of`);
        advance(10_000);
        // Question 1: Conversation 1; question 2: Conversation 2 (a different winner), or a tie for the last rater.
        const res = await rater.submit(page.res.text, { choice: 'left', reason: `natural ${r}`, choice_2: r === 2 ? 'tie' : 'right', active_ms: '8000' });
        expect(res.status).toBe(303);
        page = await rater.follow(String(res.headers.location));
      }
    }
    const pairs = seeded.pairIds.length;
    expect(count(db, "SELECT count(*) FROM pairs WHERE kind = 'regular' AND accepted = :k", { k })).toBe(pairs);
    expect(count(db, 'SELECT count(*) FROM judgments WHERE question_index = 0')).toBe(pairs * k);
    expect(count(db, 'SELECT count(*) FROM judgments WHERE question_index = 1')).toBe(pairs * k);
    expect(count(db, "SELECT count(*) FROM (SELECT pair_id FROM judgments WHERE question_id = 'goals' GROUP BY pair_id HAVING count(DISTINCT rater_id) = :k)", { k })).toBe(pairs);
    const rows = db
      .prepare<[], { assignment_id: number; question_id: string; question_index: number; left_side: 'a' | 'b'; choice: string; winner: string; label: string; reason: string | null; active_ms: number; shown_at: string; correct: number | null }>(
        'SELECT assignment_id, question_id, question_index, left_side, choice, winner, label, reason, active_ms, shown_at, correct FROM judgments ORDER BY assignment_id, question_index',
      )
      .all();
    const labelOf = (w: string) => (w === 'a' ? 'SCRIPT:blindcheck-model-7b' : w === 'b' ? 'AGENTS:blindcheck-model-7b' : 'TIE');
    for (let i = 0; i < rows.length; i += 2) {
      const [first, second] = [rows[i], rows[i + 1]];
      expect(first?.assignment_id).toBe(second?.assignment_id);
      expect(first).toMatchObject({ question_id: 'natural', question_index: 0, choice: 'left', winner: first?.left_side, correct: null, active_ms: 8000 });
      expect(first?.label).toBe(labelOf(first?.winner ?? ''));
      expect(first?.reason).toMatch(/^natural \d$/);
      expect(second).toMatchObject({ question_id: 'goals', question_index: 1, reason: null, active_ms: 8000, shown_at: first?.shown_at });
      if (second?.choice === 'tie') expect(second).toMatchObject({ winner: 'tie', label: 'TIE' });
      else expect(second).toMatchObject({ choice: 'right', winner: first?.left_side === 'a' ? 'b' : 'a', label: labelOf(first?.left_side === 'a' ? 'b' : 'a') });
    }
    // The counters count comparisons, not rows.
    expect(db.prepare('SELECT judgments, regular, timed FROM batch_judgment_counts WHERE batch_id = :id').get({ id: seeded.batchId })).toEqual({
      judgments: pairs * k,
      regular: pairs * k,
      timed: pairs * k,
    });
    expect(count(db, 'SELECT wins_a + wins_b + ties FROM comparison_tallies')).toBe(pairs * k);
    expect(count(db, 'SELECT sum(regular_timed) FROM raters')).toBe(pairs * k);
    expect(count(db, 'SELECT sum(regular_active_ms) FROM raters')).toBe(pairs * k * 8000);
    const progress = batchProgress(db, seeded.batchId, START);
    expect(progress).toMatchObject({ judgments: pairs * k, accepted: pairs * k, needed: pairs * k, pairs_complete: pairs, median_seconds: 8 });
    expect(listBatchRaters(db, seeded.batchId).reduce((sum, r) => sum + r.regular_judgments, 0)).toBe(pairs * k);
    expect(listQualityJudgments(db, seeded.batchId)).toHaveLength(pairs * k);
  });

  it('POST /r/:batch/c/:assignment of a two-question batch, when the same form is sent twice, stores one row per question once and counts the pair once; other answers after it revise both rows', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { questions: TWO_QUESTIONS } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const fields = { choice: 'right', choice_2: 'left' };
    const [first, second] = await Promise.all([rater.submit(page.res.text, fields), rater.submit(page.res.text, fields)]);
    expect([first.status, second.status]).toEqual([303, 303]);
    const third = await rater.submit(page.res.text, { choice: 'left', choice_2: 'tie' });
    expect(third.status).toBe(303);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(2);
    // The third, with other answers, is the rater changing the answer just given (issue 49): both rows, together.
    expect(db.prepare('SELECT question_index, choice FROM judgments ORDER BY question_index').all()).toEqual([
      { question_index: 0, choice: 'left' },
      { question_index: 1, choice: 'tie' },
    ]);
    expect(db.prepare('SELECT choice FROM judgment_revisions ORDER BY id').pluck().all()).toEqual(['right', 'left']);
    expect(count(db, 'SELECT sum(accepted) FROM pairs')).toBe(1);
    expect(count(db, 'SELECT judgments FROM batch_judgment_counts')).toBe(1);
  });

  it('POST /r/:batch/c/:assignment of a two-question batch, with the second answer missing, a tie where it is not offered, a missing required or oversized reason or an unknown choice, answers 400 naming the question, keeps the answers and stores nothing', async () => {
    const { app, db } = testApp();
    const questions: NonNullable<BatchSettingsInput['questions']> = [
      { id: 'natural', text: 'Which conversation sounds more natural?', allowTie: false, reason: 'optional' },
      { id: 'real', text: 'Which character behaves more like a real person?', allowTie: true, reason: 'required' },
    ];
    const seeded = seedBatch(db, { settings: { questions } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);

    const missing = await rater.submit(page.res.text, { choice: 'right', reason: 'less stilted' });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('<a href="#question-2">Please answer question 2.</a>');
    expect(missing.text).toMatch(/id="question-2"[^>]*aria-describedby="form-error"/);
    expect(missing.text).toMatch(/name="choice" value="right" checked/);
    expect(missing.text).toContain('>less stilted</textarea>');

    const tie = await rater.submit(missing.text, { choice: 'tie', choice_2: 'tie', reason_2: 'both odd' });
    expect(tie.status).toBe(400);
    expect(tie.text).toContain('Please choose Conversation 1 or Conversation 2 for question 1.');
    expect(tie.text).toMatch(/name="choice_2" value="tie" checked/);
    expect(tie.text).toContain('>both odd</textarea>');

    const noReason = await rater.submit(tie.text, { choice: 'left', choice_2: 'tie', reason_2: '  ' });
    expect(noReason.status).toBe(400);
    expect(noReason.text).toContain('Please give a short reason for your answer to question 2.');

    const long = await rater.submit(tie.text, { choice: 'left', choice_2: 'tie', reason_2: 'x'.repeat(2001) });
    expect(long.status).toBe(400);
    // A reason's message leads to its box, and stands beside it (issue 49).
    expect(long.text).toContain('<a href="#reason-2">Question 2: This reason is 2,001 characters long; the limit is 2,000. Please shorten it by 1 character.</a>');
    expect(long.text).toContain('<p class="field-error" id="reason-2-error">Question 2: This reason is 2,001 characters long');

    const unknown = await rater.submit(tie.text, { choice: 'left', choice_2: 'both' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Unknown choice');
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
    expect(count(db, 'SELECT sum(accepted) FROM pairs')).toBe(0);

    const ok = await rater.submit(tie.text, { choice: 'left', choice_2: 'tie', reason_2: 'both odd' });
    expect(ok.status).toBe(303);
    expect(db.prepare('SELECT question_id, winner, label, reason FROM judgments ORDER BY question_index').all()).toEqual([
      expect.objectContaining({ question_id: 'natural', reason: null }),
      { question_id: 'real', winner: 'tie', label: 'TIE', reason: 'both odd' },
    ]);
  });

  it('POST attention-check answers in a two-question batch are judged on the first question: a rater failing it is screened out though their second answer is the expected one', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, {
      samples: 6,
      settings: { questions: TWO_QUESTIONS, attentionChecks: { rate: 0.5, maxFailures: 1 }, perRaterCap: 5, provider: { kind: 'link', completionCodes: { screenedOut: 'OUT-1' } } },
    });
    const rater = raterClient(app);
    let page = await rater.startRating(seeded.publicId);
    let checks = 0;
    for (let i = 0; i < 6 && page.url.includes('/c/'); i += 1) {
      const a = assignmentOf(db, page.url);
      let fields = { choice: 'left', choice_2: 'left' };
      if (a?.kind === 'attention') {
        checks += 1;
        const expected = sideOf(a.left_side, a.expected ?? 'a');
        fields = { choice: other(expected), choice_2: expected };
      }
      const res = await rater.submit(page.res.text, fields);
      page = await rater.follow(String(res.headers.location));
    }
    expect(checks).toBe(1);
    expect(page.res.text).toContain('OUT-1');
    expect(db.prepare('SELECT status, exclusion_reason, attention_failures, attention_answered FROM raters').get()).toEqual({
      status: 'screened_out',
      exclusion_reason: 'attention',
      attention_failures: 1,
      attention_answered: 1,
    });
    const gold = db
      .prepare("SELECT j.question_index, j.is_gold, j.correct FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE p.kind = 'attention' ORDER BY j.question_index")
      .all();
    expect(gold).toEqual([
      { question_index: 0, is_gold: 1, correct: 0 },
      { question_index: 1, is_gold: 1, correct: null },
    ]);
    // Their regular answers left the counters once each, not once per question.
    expect(count(db, "SELECT sum(accepted) FROM pairs WHERE kind = 'regular'")).toBe(0);
    expect(count(db, 'SELECT wins_a + wins_b + ties FROM comparison_tallies')).toBe(0);
  });

  it('POST onboarding answers in a two-question batch: a rater right on the first question and wrong on the second passes', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 4, settings: { questions: TWO_QUESTIONS, onboarding: { pairs: 2, threshold: 1 } } });
    const rater = raterClient(app);
    let page = await rater.startRating(seeded.publicId);
    for (let i = 0; i < 2; i += 1) {
      const a = assignmentOf(db, page.url);
      expect(a?.kind).toBe('onboarding');
      const expected = sideOf(a?.left_side ?? 'a', a?.expected ?? 'a');
      const res = await rater.submit(page.res.text, { choice: expected, choice_2: other(expected) });
      page = await rater.follow(String(res.headers.location));
    }
    expect(assignmentOf(db, page.url)?.kind).toBe('regular');
    expect(db.prepare('SELECT status, onboarding_correct, onboarding_answered FROM raters').get()).toEqual({ status: 'rating', onboarding_correct: 2, onboarding_answered: 2 });
    expect(page.res.text).toMatch(/Comparison 3 of \d+/);
  });

  it('setRaterExcluded and deleteRaterData, on a rater of a two-question batch, take each answered comparison out of the counters once and put it back once', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { samples: 3, settings: { questions: TWO_QUESTIONS, judgmentsPerPair: 2 } });
    const rater = raterClient(app);
    let page = await rater.startRating(seeded.publicId);
    for (let i = 0; i < 2; i += 1) {
      const res = await rater.submit(page.res.text, { choice: 'left', choice_2: 'right' });
      page = await rater.follow(String(res.headers.location));
    }
    const raterId = count(db, 'SELECT id FROM raters');
    const tallied = () => count(db, 'SELECT wins_a + wins_b + ties FROM comparison_tallies');
    expect([count(db, 'SELECT sum(accepted) FROM pairs'), tallied()]).toEqual([2, 2]);
    setRaterExcluded(db, { batchId: seeded.batchId, raterId, excluded: true, reason: 'test' }, 'admin', START);
    expect([count(db, 'SELECT sum(accepted) FROM pairs'), count(db, 'SELECT min(accepted) FROM pairs'), tallied()]).toEqual([0, 0, 0]);
    setRaterExcluded(db, { batchId: seeded.batchId, raterId, excluded: false, reason: 'test' }, 'admin', START);
    expect([count(db, 'SELECT sum(accepted) FROM pairs'), tallied()]).toEqual([2, 2]);
    expect(deleteRaterData(db, { batchId: seeded.batchId, raterId, reason: 'erasure' }, 'admin', START)).toEqual({ judgments: 2 });
    expect([count(db, 'SELECT sum(accepted) FROM pairs'), count(db, 'SELECT count(*) FROM judgments'), tallied()]).toEqual([0, 0, 0]);
    expect(count(db, 'SELECT judgments FROM batch_judgment_counts')).toBe(0);
  });

  it('GET /r/:batch/instructions and the console preview of a two-question batch list both questions with their tie and reason rules', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { questions: TWO_QUESTIONS } });
    const rater = raterClient(app);
    const consent = await rater.follow(`/r/${seeded.publicId}`);
    const agreed = await rater.submit(consent.res.text, { decision: 'agree' });
    const instructions = await rater.follow(String(agreed.headers.location));
    expect(instructions.res.text).toContain('answer these 2 questions about them, all on the same page, and submit once');
    expect(instructions.res.text).toContain('Which conversation sounds more natural?</strong><br>Choose Conversation 1 or Conversation 2. You may also say briefly why.');
    expect(instructions.res.text).toContain('Which conversation better pursues its goals?</strong><br>Choose Conversation 1 or Conversation 2, or &#34;Both equally&#34;');
    expect(formAction(instructions.res.text)).toContain('/instructions');
    expect(inputValue(instructions.res.text, 'rt')).not.toBe('');
    const preview = await raterClient(app).get(`/r/${seeded.publicId}/preview?pt=${encodeURIComponent(previewToken(TEST_SECRET, seeded.publicId))}`);
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('The 2 questions you will answer on each comparison');
    expect(preview.text.match(/<fieldset class="choices"/g)).toHaveLength(2);
    expect(preview.text).toMatch(/name="choice_2" value="tie" disabled/);
  });
});
