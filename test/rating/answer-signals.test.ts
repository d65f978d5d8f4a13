import { describe, expect, it } from 'vitest';
import { awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { readBatchSignals, readQualitySettings } from '../../src/analysis/quality-signals.queries.js';
import { DEFAULT_QUALITY, qualitySettingsSchema } from '../../src/batches/batch.schema.js';
import { signIn } from '../auth/session-helpers.js';
import { count, raterClient, seedBatch, testApp } from './rating-fixtures.js';

const PROLIFIC = { kind: 'prolific', completionCodes: { completed: 'C1A2B3C4', screenedOut: 'S9X8Y7W6', noConsent: 'N4M5P6Q7' } } as const;

type SignalsRow = { telemetry: string; problem: string | null; reason_chars: number; paste_events: number; pasted_chars: number; keystrokes: number; typing_ms: number };
const signalsOf = (db: ReturnType<typeof testApp>['db']) =>
  db.prepare('SELECT telemetry, problem, reason_chars, paste_events, pasted_chars, keystrokes, typing_ms FROM answer_signals ORDER BY assignment_id').all() as SignalsRow[];

describe('answer signals and server timing over plain HTTP (issues 40 and 43)', () => {
  it('POST /r/:batch/c/:assignment, from a client without the script answering 10 comparisons in under a second, is timed by the server, flagged too fast and kept off the approve list', async () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 10, settings: { perRaterCap: 10, provider: PROLIFIC } });
    const rater = raterClient(t.app);
    let page = await rater.startRating(seeded.publicId, '?PROLIFIC_PID=b100000000000000000000f1&STUDY_ID=st1&SESSION_ID=se1');
    for (let i = 0; i < 10; i += 1) {
      t.advance(60);
      const res = await rater.submit(page.res.text, { choice: i % 2 === 0 ? 'left' : 'right' });
      expect(res.status).toBe(303);
      page = await rater.follow(String(res.headers.location));
    }
    expect(count(t.db, "SELECT count(*) FROM raters WHERE status = 'completed'")).toBe(1);
    // Each answer is timed by the server's own shown and submitted times: 60 ms apart on the hand clock.
    expect(t.db.prepare('SELECT DISTINCT active_ms FROM judgments').pluck().all()).toEqual([60]);
    expect(count(t.db, 'SELECT count(*) FROM answer_signals')).toBe(0);
    await awaitBatchAnalysis(t.db, seeded.batchId, { now: () => new Date(), fresh: true });
    const admin = await signIn(t.app, t.db, 'admin');
    const list = async (form: string) => (await admin.agent.get(`/console/batches/${seeded.batchId}/participants.csv?form=${form}`).expect(200)).text;
    expect(await list('approve')).toBe('');
    expect((await list('review')).split('\n').filter(Boolean)).toEqual(['b100000000000000000000f1']);
    const full = await list('full');
    expect(full).toContain('"completed, flagged: too fast');
    // The signals in words beside the decision, which they do not make.
    expect(full.trim().split('\n')[1]?.endsWith(',under reading time')).toBe(true);
  });

  it('POST /r/:batch/c/:assignment, with forged telemetry, stores the answer and marks the figures implausible with the rule they break', async () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 4, settings: { perRaterCap: 4, reason: 'optional' } });
    const rater = raterClient(t.app);
    let page = await rater.startRating(seeded.publicId);
    const reason = 'Conversation one keeps both goals in view and the replies follow from what was said before, so it reads like people.';
    const sent = [
      // 120 characters typed with no key pressed and nothing pasted.
      { v: 1, pastes: 0, pasted: 0, keys: 0, typing_ms: 0, hidden_ms: 0, before_second: null },
      // Typing for an hour in a comparison open for 30 seconds.
      { v: 1, pastes: 0, pasted: 0, keys: 130, typing_ms: 3_600_000, hidden_ms: 0, before_second: null },
      // A shape the page never sends.
      { v: 1, pastes: 'many' },
      // A pasted reason, told as it was.
      { v: 1, pastes: 1, pasted: reason.length, keys: 0, typing_ms: 0, hidden_ms: 1200, before_second: false },
    ];
    for (const signals of sent) {
      t.advance(30_000);
      const res = await rater.submit(page.res.text, { choice: 'left', reason, active_ms: '25000', signals: JSON.stringify(signals) });
      expect(res.status).toBe(303);
      page = await rater.follow(String(res.headers.location));
    }
    expect(count(t.db, 'SELECT count(*) FROM judgments')).toBe(4);
    const rows = signalsOf(t.db);
    expect(rows.map((r) => [r.telemetry, r.problem])).toEqual([
      ['implausible', 'more characters typed than keys pressed'],
      ['implausible', 'typing time longer than the comparison was open'],
      ['implausible', 'the page sent figures that cannot be read'],
      ['plausible', null],
    ]);
    expect(rows[3]).toMatchObject({ reason_chars: reason.length, paste_events: 1, pasted_chars: reason.length, keystrokes: 0 });
  });

  it('POST /r/:batch/c/:assignment, when the page says the reason was restored or inserted without keys, holds only the rest to keys pressed', async () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 4, settings: { perRaterCap: 4, reason: 'optional' } });
    const rater = raterClient(t.app);
    let page = await rater.startRating(seeded.publicId);
    const reason = 'The second one sounds like two people really talking';
    const sent = [
      // Restored (after a reload or a refused answer): not typed on this page.
      { v: 1, pastes: 0, pasted: 0, keys: 0, typing_ms: 0, hidden_ms: 0, before_second: null, restored: reason.length, inserted: 0 },
      // Dictated: arrived as input with no key.
      { v: 1, pastes: 0, pasted: 0, keys: 0, typing_ms: 0, hidden_ms: 0, before_second: true, restored: 0, inserted: reason.length },
      // Half restored, the rest typed with too few keys: the typed part is still held to its keys.
      { v: 1, pastes: 0, pasted: 0, keys: 2, typing_ms: 500, hidden_ms: 0, before_second: null, restored: 20, inserted: 0 },
      // The page before issue 51 sent neither figure: every character not pasted counts as typed.
      { v: 1, pastes: 0, pasted: 0, keys: 0, typing_ms: 0, hidden_ms: 0, before_second: null },
    ];
    for (const signals of sent) {
      t.advance(30_000);
      const res = await rater.submit(page.res.text, { choice: 'left', reason, active_ms: '25000', signals: JSON.stringify(signals) });
      expect(res.status).toBe(303);
      page = await rater.follow(String(res.headers.location));
    }
    const rows = t.db.prepare('SELECT telemetry, problem, restored_chars, inserted_chars FROM answer_signals ORDER BY assignment_id').raw().all();
    expect(rows).toEqual([
      ['plausible', null, reason.length, 0],
      ['plausible', null, 0, reason.length],
      ['implausible', 'more characters typed than keys pressed', 20, 0],
      ['implausible', 'more characters typed than keys pressed', null, null],
    ]);
  });

  it('POST /r/:batch/c/:assignment, with a forged answer key, stores the answer, marks the figures implausible and leaves the key out of "one key"', async () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 8, settings: { perRaterCap: 8 } });
    const rater = raterClient(t.app);
    let page = await rater.startRating(seeded.publicId);
    // Seven answers by key 1 and an eighth claiming a key the page never sends: had it counted, eight answers by one key.
    for (const key of ['1', '1', '1', '1', '1', '1', '1', 'Enter']) {
      t.advance(30_000);
      const signals = { v: 1, pastes: 0, pasted: 0, keys: 0, typing_ms: 0, hidden_ms: 0, before_second: null, key };
      const res = await rater.submit(page.res.text, { choice: 'left', active_ms: '25000', signals: JSON.stringify(signals) });
      expect(res.status).toBe(303);
      page = await rater.follow(String(res.headers.location));
    }
    expect(count(t.db, 'SELECT count(*) FROM judgments')).toBe(8);
    const rows = t.db.prepare('SELECT rater_id, telemetry, problem, answer_key FROM answer_signals ORDER BY assignment_id').all() as { rater_id: number; telemetry: string; problem: string | null; answer_key: string | null }[];
    expect(rows.map((r) => [r.telemetry, r.problem, r.answer_key])).toEqual([
      ...new Array(7).fill(['plausible', null, '1']),
      ['implausible', 'an answer key the page never sends', null],
    ]);
    const signals = readBatchSignals(t.db, seeded.batchId, readQualitySettings(t.db, seeded.batchId));
    const raterId = rows[0]?.rater_id ?? -1;
    expect(signals.byRater.get(raterId)?.keys).toEqual({ '1': 7 });
    expect(signals.flagsOf(raterId)).toContain('implausible telemetry');
    expect(signals.flagsOf(raterId)).not.toContain('one key');
  });

  it('quality settings in the batch file, when given, replace the stated defaults; an unknown key is refused by name', () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 1, settings: { quality: { ...DEFAULT_QUALITY, readingWordsPerMinute: 250, similarity: 0.9 } } });
    const plain = seedBatch(t.db, { samples: 1 });
    expect(readQualitySettings(t.db, seeded.batchId)).toEqual({ ...DEFAULT_QUALITY, readingWordsPerMinute: 250, similarity: 0.9 });
    expect(readQualitySettings(t.db, plain.batchId)).toEqual({
      readingWordsPerMinute: 500,
      pastedShare: 0.5,
      minReasonChars: 25,
      similarity: 0.8,
      sameReasonRareNgrams: 4,
      sameReasonMatches: 3,
      raterShare: 0.5,
      oneKeyMinAnswers: 8,
    });
    const refused = qualitySettingsSchema.safeParse({ aiDetector: true });
    expect(refused.success).toBe(false);
    expect(JSON.stringify(refused.error?.issues)).toContain('aiDetector');
  });
});
