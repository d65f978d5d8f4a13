// Issue 53, the which-is-real question: its settings (a real condition every comparison sets against another, no tie,
// a margin stated before the batch opens), the rater page (the same blinded comparison, with an optional confidence
// 1-5) and what is stored (label, confidence).
import { describe, expect, it } from 'vitest';
import { BatchError } from '../../src/batches/batch-error.js';
import { transitionBatch, updateBatchSettings } from '../../src/batches/batch.commands.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { readBatchSettings } from '../../src/batches/batch-settings.js';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { describeIssues } from '../../src/web/validate.js';
import { internalIds, leaks, padInternalIds } from './leak-check.js';
import { count, MODEL, raterClient, testApp } from './rating-fixtures.js';
import { OPENED_AT, REAL, REALISM_QUESTIONS, realismSettings, seedRealismBatch } from './realism-fixtures.js';

const problems = (input: unknown) => {
  const parsed = batchSettingsSchema.safeParse(input);
  return parsed.success ? null : describeIssues(parsed.error);
};

type Row = { question_id: string; choice: string; winner: string; label: string; confidence: number | null; left_side: 'a' | 'b' };
const rowsOf = (db: ReturnType<typeof testApp>['db']) =>
  db.prepare('SELECT question_id, choice, winner, label, confidence, left_side FROM judgments ORDER BY assignment_id, question_index').all() as Row[];

describe('which-is-real question settings', () => {
  it('batchSettingsSchema, for a which-is-real question, fills kind and an optional confidence, normalises the real condition, and refuses a tie, a missing real condition and a comparison without it', () => {
    const ok = batchSettingsSchema.parse(realismSettings(['r'], { questions: [{ ...REALISM_QUESTIONS[1]!, real: 'humans:human' }] }));
    expect(ok.questions?.[0]).toMatchObject({ kind: 'which-is-real', real: REAL, confidence: 'optional', allowTie: false });
    expect(ok.equivalenceMargin).toBe(0.1);
    expect(problems(realismSettings(['r'], { questions: [{ ...REALISM_QUESTIONS[1]!, allowTie: true }] }))).toBe(
      'questions.0.allowTie: a which-is-real question has no tie: one of the two conversations is real',
    );
    expect(problems(realismSettings(['r'], { questions: [{ id: 'real', kind: 'which-is-real', text: 'Which one happened?' }] }))).toBe(
      'questions.0.real: a which-is-real question names the condition that is real, e.g. "real": "HUMANS:human"',
    );
    expect(problems(realismSettings(['r'], { comparisons: [[REAL, `SCRIPT:${MODEL}`], [`SCRIPT:${MODEL}`, `AGENTS:${MODEL}`]] }))).toBe(
      `comparisons.1: must set ${REAL} (the which-is-real question's real condition) against another condition, not SCRIPT:${MODEL} against AGENTS:${MODEL}`,
    );
    expect(problems(realismSettings(['r'], { questions: [{ id: 'natural', text: 'Which is more natural?', confidence: 'optional' }] }))).toContain(
      'questions.0.confidence: only a which-is-real question ("kind": "which-is-real") asks for confidence',
    );
  });

  it('batchSettingsSchema refuses an equivalenceMargin without a which-is-real question, and one above 0.25, saying why', () => {
    expect(problems(realismSettings(['r'], { questions: [REALISM_QUESTIONS[0]!] }))).toBe(
      "equivalenceMargin: is the margin of a which-is-real question's equivalence test: the batch has no such question",
    );
    expect(problems(realismSettings(['r'], { equivalenceMargin: 0.3 }))).toBe(
      'equivalenceMargin: must be at most 0.25: a wider margin calls raters who are right three times in four "unable to tell"',
    );
  });

  it('updateBatchSettings changes the equivalenceMargin of a draft, and once the batch has opened refuses to, before any judgment, leaving it as stated', () => {
    const { db } = testApp();
    const seeded = seedRealismBatch(db, { open: false });
    const deps = { actor: 'test', now: OPENED_AT };
    const current = () => readBatchSettings(getBatchRow(db, seeded.batchId)!);
    updateBatchSettings(db, seeded.batchId, { ...current(), equivalenceMargin: 0.05 }, deps);
    expect(current().equivalenceMargin).toBe(0.05);
    transitionBatch(db, seeded.batchId, 'open', 'test', OPENED_AT);
    transitionBatch(db, seeded.batchId, 'pause', 'test', OPENED_AT);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
    const change = () => updateBatchSettings(db, seeded.batchId, { ...current(), equivalenceMargin: 0.2 }, deps);
    expect(change).toThrow(BatchError);
    expect(change).toThrow(`Batch ${seeded.batchId} has been opened; its equivalenceMargin was stated in advance and can no longer change. Clone the batch to change it.`);
    expect(current().equivalenceMargin).toBe(0.05);
    // Other settings still change.
    updateBatchSettings(db, seeded.batchId, { ...current(), pay: '£4.00' }, deps);
    expect(current()).toMatchObject({ pay: '£4.00', equivalenceMargin: 0.05 });
  });
});

describe('which-is-real question on the rater page', () => {
  it('GET /r/:batch/c/:assignment shows the which-is-real question with choices but no tie and a confidence scale 1-5 of its own', async () => {
    const { app, db } = testApp();
    const seeded = seedRealismBatch(db);
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const html = page.res.text;
    expect(html).toContain('Question 2 of 2:</span> One of these conversations happened between two real people. Which one?');
    expect(html).toMatch(/name="choice_2" value="left"/);
    expect(html).not.toMatch(/name="choice_2" value="tie"/);
    expect(html.match(/<fieldset class="confidence"/g)).toHaveLength(1);
    expect([...html.matchAll(/name="confidence_2" value="(\d)"/g)].map((m) => m[1])).toEqual(['1', '2', '3', '4', '5']);
    expect(html).toContain('How sure are you? (question 2, optional)');
    expect(html).not.toMatch(/name="confidence"[ >]/);
  });

  it('POST /r/:batch/c/:assignment stores the which-is-real answer with the condition chosen as its label and its confidence; without a confidence, stores null', async () => {
    const { app, db, advance } = testApp();
    seedRealismBatch(db);
    const seeded = db.prepare('SELECT public_id FROM batches').pluck().get() as string;
    const rater = raterClient(app);
    let page = await rater.startRating(seeded);
    advance(20_000);
    let res = await rater.submit(page.res.text, { choice: 'left', choice_2: 'right', confidence_2: '4', active_ms: '15000' });
    expect(res.status).toBe(303);
    page = await rater.follow(String(res.headers.location));
    advance(20_000);
    res = await rater.submit(page.res.text, { choice: 'right', choice_2: 'left', active_ms: '15000' });
    expect(res.status).toBe(303);
    const rows = rowsOf(db);
    expect(rows.map((r) => [r.question_id, r.choice, r.confidence])).toEqual([
      ['natural', 'left', null],
      ['real', 'right', 4],
      ['natural', 'right', null],
      ['real', 'left', null],
    ]);
    const pairConditions = db
      .prepare('SELECT c.condition_a, c.condition_b FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN comparisons c ON c.id = p.comparison_id ORDER BY j.assignment_id, j.question_index')
      .all() as { condition_a: string; condition_b: string }[];
    rows.forEach((r, i) => {
      const { condition_a: a, condition_b: b } = pairConditions[i]!;
      expect(r.label).toBe(r.winner === 'a' ? a : b);
      expect(r.winner).toBe(r.choice === 'left' ? r.left_side : r.left_side === 'a' ? 'b' : 'a');
    });
  });

  it('POST /r/:batch/c/:assignment, with a tie to the which-is-real question, a confidence of 7, or no confidence where it is required, stores nothing and says which question and why', async () => {
    const { app, db } = testApp();
    seedRealismBatch(db, { settings: { questions: [REALISM_QUESTIONS[0]!, { ...REALISM_QUESTIONS[1]!, confidence: 'required' }] } });
    const publicId = db.prepare('SELECT public_id FROM batches').pluck().get() as string;
    const rater = raterClient(app);
    const page = await rater.startRating(publicId);
    expect(page.res.text).toContain('How sure are you? (question 2, required)');
    const tie = await rater.submit(page.res.text, { choice: 'left', choice_2: 'tie', confidence_2: '3' });
    expect(tie.status).toBe(400);
    expect(tie.text).toContain('Please choose Conversation 1 or Conversation 2 for question 2.');
    const seven = await rater.submit(page.res.text, { choice: 'left', choice_2: 'left', confidence_2: '7' });
    expect(seven.status).toBe(400);
    expect(seven.text).toContain('Question 2: Please choose how sure you are, from 1 to 5.');
    const none = await rater.submit(page.res.text, { choice: 'left', choice_2: 'left' });
    expect(none.status).toBe(400);
    expect(none.text).toContain('Please say how sure you are for question 2, from 1 to 5.');
    // The refused page keeps what was answered.
    expect(none.text).toMatch(/id="choice-2-left" name="choice_2" value="left" required checked/);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
    expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'answered'")).toBe(0);
  });

  it('GET /r/:batch/c/:assignment, back on the realism comparison just answered, shows its stored confidence; a changed confidence alone revises the answer, and judgment_revisions keeps the one replaced', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedRealismBatch(db);
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    advance(20_000);
    const answered = await rater.submit(first.res.text, { choice: 'left', choice_2: 'right', confidence_2: '2' });
    expect(answered.status).toBe(303);
    const back = await rater.get(first.url);
    expect(back.text).toMatch(/id="confidence-2-2" name="confidence_2" value="2" checked>/);
    // The same answer sent again is a double submit: nothing changes.
    expect((await rater.submit(back.text, { choice: 'left', choice_2: 'right', confidence_2: '2' })).status).toBe(303);
    expect(count(db, 'SELECT count(*) FROM judgment_revisions')).toBe(0);
    advance(5_000);
    const revised = await rater.submit(back.text, { choice: 'left', choice_2: 'right', confidence_2: '5' });
    expect(revised.status).toBe(303);
    expect(rowsOf(db).map((r) => [r.question_id, r.choice, r.confidence])).toEqual([
      ['natural', 'left', null],
      ['real', 'right', 5],
    ]);
    expect(db.prepare('SELECT choice, confidence FROM judgment_revisions ORDER BY id').all()).toEqual([
      { choice: 'left', confidence: null },
      { choice: 'right', confidence: 2 },
    ]);
  });

  it('every response a rater receives walking a realism batch over HTTP is free of the mode names (HUMANS, SCRIPT, AGENTS), the models (human, the model), the runs, the question ids and internal ids', async () => {
    const { app, db, advance } = testApp();
    padInternalIds(db);
    const questions = [{ ...REALISM_QUESTIONS[0]!, id: 'qid-natural-3' }, { ...REALISM_QUESTIONS[1]!, id: 'qid-real-5' }];
    const seeded = seedRealismBatch(db, { samples: 4, settings: { questions, perRaterCap: 4, provider: { kind: 'link', completionCodes: { completed: 'REAL-OK' } } } });
    const rater = raterClient(app);
    let page = await rater.startRating(seeded.publicId);
    for (let i = 0; i < 4 && page.url.includes('/c/'); i += 1) {
      advance(20_000);
      const res = await rater.submit(page.res.text, { choice: 'left', choice_2: i % 2 === 0 ? 'left' : 'right', confidence_2: String(i + 1) });
      page = await rater.follow(String(res.headers.location));
    }
    expect(page.res.text).toContain('REAL-OK');
    expect(count(db, "SELECT count(*) FROM judgments WHERE question_id = 'qid-real-5'")).toBe(4);
    expect(leaks(rater.log, [MODEL, 'human', ...seeded.runNames, 'qid-natural-3', 'qid-real-5'], internalIds(db))).toEqual([]);
  });
});
