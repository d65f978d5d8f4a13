// The console's raters and participants pages at scale (issue 12): a page of raters at a time with counts for the
// whole batch, quality figures from the stored analysis (computed by the analysis worker, never on the request
// thread), "being computed" until it is stored, and the payment CSV waiting for the worker while other requests are
// answered.
import { describe, expect, it } from 'vitest';
import { answeredWhileWorkerComputes } from '../helpers/worker-ordering.js';
import { seedStoredJudgments } from '../../scripts/bench/support/bench-study.js';
import { analysisRunning, awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { qualityFlags, raterQuality } from '../../src/analysis/rater-quality.js';
import { batchProgress } from '../../src/console/batch-progress.queries.js';
import { listQualityJudgments } from '../../src/console/rater-table.queries.js';
import type { Db } from '../../src/db/connection.js';
import { signIn } from '../auth/session-helpers.js';
import { makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

const storeAnalysis = (db: Db, batchId: number) => awaitBatchAnalysis(db, batchId, { now: () => new Date(), fresh: true });

/** The data-rater ids of a page's rows, in order. */
const rowIds = (html: string) => [...html.matchAll(/<tr[^>]*data-rater="(\d+)"/g)].map((m) => Number(m[1]));

/** The cells of one rater's row. */
function cellsOf(html: string, raterId: number): string[] {
  const row = new RegExp(`data-rater="${raterId}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => (m[1] ?? '').trim());
}

const count = (html: string, decision: string) => Number(new RegExp(`data-testid="count-${decision}">(\\d+)<`).exec(html)?.[1] ?? 'NaN');

describe('the raters and participants pages, a page at a time with figures from the stored analysis', () => {
  it('GET /console/batches/:id/raters?page=2 and /participants?page=2, for 150 raters, show the next 50 raters while the counts and the CSV cover the whole batch', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a'], ['b', 'b', 'a']] });
    const b = made.batchId;
    for (let i = 0; i < 97; i++) makeRater(t.db, { batchId: b, provider: 'prolific', participantId: `PID-DONE-${i}`, status: 'completed' });
    for (let i = 0; i < 30; i++) makeRater(t.db, { batchId: b, provider: 'prolific', participantId: `PID-OUT-${i}`, status: 'screened_out', excluded: true, exclusionReason: 'attention' });
    for (let i = 0; i < 20; i++) makeRater(t.db, { batchId: b, provider: 'prolific', participantId: `PID-WIP-${i}`, status: 'rating' });
    const ids = t.db.prepare("SELECT id FROM raters WHERE batch_id = ? AND provider <> 'preview' ORDER BY id").pluck().all(b) as number[];
    expect(ids).toHaveLength(150);
    // One address shared by a rater on each page: each row counts both, whichever page it is on.
    t.db.prepare("UPDATE raters SET address_hash = 'same-place' WHERE id IN (?, ?)").run(ids[10], ids[120]);
    await storeAnalysis(t.db, b);
    const admin = await signIn(t.app, t.db, 'admin');

    const first = (await admin.agent.get(`/console/batches/${b}/raters`).expect(200)).text;
    expect(rowIds(first)).toEqual(ids.slice(0, 100));
    expect(first).toContain('Page 1 of 2');
    expect(first).toContain('href="?page=2&amp;per_page=100"');
    const second = (await admin.agent.get(`/console/batches/${b}/raters?page=2`).expect(200)).text;
    expect(rowIds(second)).toEqual(ids.slice(100));
    expect(second).toContain('Page 2 of 2');
    expect(cellsOf(first, ids[10] as number).join(' ')).toContain('shared address (2 raters)');
    expect(cellsOf(second, ids[120] as number).join(' ')).toContain('shared address (2 raters)');
    expect(cellsOf(second, ids[121] as number).join(' ')).not.toContain('shared address');

    const participants = (await admin.agent.get(`/console/batches/${b}/participants?page=2`).expect(200)).text;
    expect(rowIds(participants)).toEqual(ids.slice(100));
    const full = (await admin.agent.get(`/console/batches/${b}/participants.csv?form=full`).expect(200)).text.trim().split('\n');
    expect(full[0]).toBe(
      'participant_id,judge,study_id,session_id,provider,outcome,decision,why,minutes,attention_checks_answered,attention_checks_failed,onboarding_correct,onboarding_answered,excluded,exclusion_reason,signals',
    );
    expect(full).toHaveLength(1 + 150);
    // The page's counts are the whole batch's, decided as the CSV decides them.
    const decisions = full.slice(1).map((line) => /,(approve|review|reject|pending),/.exec(line)?.[1]);
    for (const decision of ['approve', 'review', 'reject']) expect(count(participants, decision), decision).toBe(decisions.filter((d) => d === decision).length);
    expect(count(participants, 'approve')).toBe(97);
    expect(count(participants, 'reject')).toBe(30);
    expect(count(participants, 'review')).toBe(23);
    expect(participants).not.toContain('data-testid="count-pending"');
  });

  it('GET /console/batches/:id/participants, for raters of every status, excluded or not, and with failed checks, counts each list as the CSV decides it', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a'], ['b', 'b', 'a']] });
    const b = made.batchId;
    const statuses = ['consent', 'instructions', 'onboarding', 'rating', 'completed', 'screened_out', 'withdrew', 'no_consent'];
    for (const status of statuses) {
      for (const excluded of [false, true]) makeRater(t.db, { batchId: b, provider: 'prolific', status, excluded, exclusionReason: excluded ? 'copied' : undefined });
    }
    const failedCheck = makeRater(t.db, { batchId: b, provider: 'prolific', status: 'completed' });
    t.db.prepare('UPDATE raters SET attention_failures = 1, attention_answered = 2 WHERE id = ?').run(failedCheck);
    await storeAnalysis(t.db, b);
    const admin = await signIn(t.app, t.db, 'admin');
    const participants = (await admin.agent.get(`/console/batches/${b}/participants`).expect(200)).text;
    const full = (await admin.agent.get(`/console/batches/${b}/participants.csv?form=full`).expect(200)).text.trim().split('\n');
    const decisions = full.slice(1).map((line) => /,(approve|review|reject|pending),/.exec(line)?.[1]);
    expect(decisions).toHaveLength(t.db.prepare("SELECT count(*) FROM raters WHERE batch_id = ? AND provider <> 'preview'").pluck().get(b) as number);
    for (const decision of ['approve', 'review', 'reject']) expect(count(participants, decision), decision).toBe(decisions.filter((d) => d === decision).length);
    // Withdrawn and never consenting: review, excluded or not; any other excluded or screened out: reject.
    expect(count(participants, 'reject')).toBe(statuses.length - 2 + 1);
  });

  it('GET /console/batches/:id/participants.csv, for more raters than one part of the download (2,000), lists each once under one header in every form', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    t.db.transaction(() => {
      for (let i = 0; i < 2_100; i++) makeRater(t.db, { batchId: made.batchId, provider: 'prolific', participantId: `PID-${String(i).padStart(4, '0')}`, status: i % 3 === 0 ? 'screened_out' : 'completed', excluded: i % 3 === 0, exclusionReason: i % 3 === 0 ? 'attention' : undefined });
    })();
    const admin = await signIn(t.app, t.db, 'admin');
    const full = (await admin.agent.get(`/console/batches/${made.batchId}/participants.csv?form=full`).expect(200)).text.trim().split('\n');
    expect(full.filter((line) => line.startsWith('participant_id,'))).toHaveLength(1);
    expect(full).toHaveLength(1 + 2 + 2_100);
    const ids = full.slice(1).map((line) => line.split(',')[0]);
    expect(new Set(ids).size).toBe(2 + 2_100);
    const approve = (await admin.agent.get(`/console/batches/${made.batchId}/participants.csv?form=approve`).expect(200)).text.trim().split('\n');
    const reject = (await admin.agent.get(`/console/batches/${made.batchId}/participants.csv?form=reject`).expect(200)).text.trim().split('\n');
    expect(approve).toHaveLength(1_400);
    expect(reject).toHaveLength(700);
    expect(approve).toContain('PID-2099');
    expect(reject).toContain('PID-2097');
  });

  it('GET /console/batches/:id/raters, once the analysis is stored, shows for each rater the figures and flags raterQuality computes in process from the batch\'s judgments', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, {
      votes: [
        ['a', 'a', 'b', 'a'],
        ['a', 'b', 'b', 'tie'],
        ['b', 'a', 'b', 'a'],
        ['a', 'a', 'a', 'b'],
        ['b', 'a', 'tie', 'a'],
        ['a', 'b', 'b', 'a'],
      ],
      settings: { allowTie: true },
    });
    const b = made.batchId;
    // Times differ per rater and per judgment; rater 3 is quick and always chooses the left screen side.
    const judgments = t.db.prepare('SELECT id, rater_id FROM judgments WHERE batch_id = ? ORDER BY id').all(b) as { id: number; rater_id: number }[];
    judgments.forEach((j, i) => t.db.prepare('UPDATE judgments SET active_ms = ? WHERE id = ?').run(j.rater_id === made.raterIds[3] ? 2_000 + i : 9_000 + 1_700 * i, j.id));
    t.db.prepare("UPDATE judgments SET left_side = winner, choice = 'left' WHERE rater_id = ? AND winner <> 'tie'").run(made.raterIds[3]);
    const late = makeRater(t.db, { batchId: b, status: 'completed' });
    makeJudgment(t.db, { pairId: made.pairIds[0] as number, raterId: late, winner: 'b', leftSide: 'b', activeMs: 41_000 });
    await storeAnalysis(t.db, b);

    const admin = await signIn(t.app, t.db, 'admin');
    const html = (await admin.agent.get(`/console/batches/${b}/raters`).expect(200)).text;
    const expected = raterQuality(listQualityJudgments(t.db, b));
    const median = batchProgress(t.db, b, new Date())?.median_seconds ?? null;
    const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(0)}%`);
    expect(expected.size).toBe(5);
    for (const [raterId, q] of expected) {
      const cells = cellsOf(html, raterId);
      expect(cells[2], `judgments of ${raterId}`).toBe(String(q.judgments));
      expect(cells[3], `median time of ${raterId}`).toBe(q.medianSeconds === null ? '—' : `${q.medianSeconds.toFixed(1)} s`);
      expect(cells[6], `agreement of ${raterId}`).toBe(pct(q.majorityAgreement));
      expect(cells[7], `left choices of ${raterId}`).toBe(pct(q.leftRate));
      const flags = qualityFlags(q, median, { attentionFailures: 0, onboardingCorrect: 0, onboardingAnswered: 0, onboardingThreshold: null });
      expect(cells[8]?.includes('too fast'), `too fast for ${raterId}`).toBe(flags.tooFast);
      expect(cells[8]?.includes('one side'), `one side for ${raterId}`).toBe(flags.oneSided);
    }
    expect(cellsOf(html, made.raterIds[3] as number)[8]).toContain('too fast');
    expect(html).toContain('data-testid="quality-age"');
    expect(html).not.toContain('quality: being computed');
  });

  it('GET /console/batches/:id/raters and /participants, before any analysis is stored, show the rows with "quality: being computed", no quality flag, and a pending decision', async () => {
    const t = buildTestApp();
    // Two batches, so that each page is the first request of its batch: nothing can have been stored for it yet.
    const forRaters = makeBatchWithJudgments(t.db, { votes: [['a', 'a'], ['a', 'b'], ['b', 'b'], ['a', 'a'], ['b', 'a'], ['a', 'a']] });
    const forParticipants = makeBatchWithJudgments(t.db, { votes: [['a', 'a'], ['a', 'b'], ['b', 'b'], ['a', 'a'], ['b', 'a'], ['a', 'a']] });
    for (const made of [forRaters, forParticipants]) {
      t.db.prepare("UPDATE raters SET status = 'completed' WHERE batch_id = ?").run(made.batchId);
      t.db.prepare('UPDATE judgments SET active_ms = 1000 WHERE rater_id = ?').run(made.raterIds[0]);
    }
    const admin = await signIn(t.app, t.db, 'admin');

    const raters = (await admin.agent.get(`/console/batches/${forRaters.batchId}/raters`).expect(200)).text;
    expect(raters).toContain('has not been stored yet');
    const fast = cellsOf(raters, forRaters.raterIds[0] as number);
    expect(fast[3]).toBe('quality: being computed');
    expect(fast[2]).toBe('6');
    expect(fast.join(' ')).not.toContain('too fast');

    const participants = (await admin.agent.get(`/console/batches/${forParticipants.batchId}/participants`).expect(200)).text;
    expect(count(participants, 'pending')).toBe(2);
    expect(count(participants, 'approve')).toBe(0);
    expect(cellsOf(participants, forParticipants.raterIds[0] as number)[3]).toContain('<strong>pending</strong>');

    // Once the worker has stored the analysis, the same pages show the figures and decide.
    await storeAnalysis(t.db, forRaters.batchId);
    await storeAnalysis(t.db, forParticipants.batchId);
    const after = (await admin.agent.get(`/console/batches/${forRaters.batchId}/raters`).expect(200)).text;
    expect(cellsOf(after, forRaters.raterIds[0] as number)[3]).toBe('1.0 s');
    expect(cellsOf(after, forRaters.raterIds[0] as number)[8]).toContain('too fast');
    const decided = (await admin.agent.get(`/console/batches/${forParticipants.batchId}/participants`).expect(200)).text;
    expect(cellsOf(decided, forParticipants.raterIds[0] as number)[3]).toContain('<strong>review</strong>');
    expect(count(decided, 'approve')).toBe(1);
    expect(count(decided, 'review')).toBe(1);
    expect(decided).not.toContain('data-testid="count-pending"');
  });

  it('GET /console/batches/:id/raters, for a rater who judged after the stored analysis, shows the others\' stored figures with their age and this rater as being computed', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['b', 'b']] });
    await storeAnalysis(t.db, made.batchId);
    const newcomer = makeRater(t.db, { batchId: made.batchId, status: 'completed' });
    makeJudgment(t.db, { pairId: made.pairIds[1] as number, raterId: newcomer, winner: 'a', activeMs: 12_000 });
    const idle = makeRater(t.db, { batchId: made.batchId, status: 'completed' });
    const researcher = await signIn(t.app, t.db, 'researcher');

    const html = (await researcher.agent.get(`/console/batches/${made.batchId}/raters`).expect(200)).text;
    expect(html).toMatch(/data-testid="quality-age">Quality figures .* from the batch's analysis computed .*\(\d+ s ago\)/);
    expect(cellsOf(html, made.raterIds[0] as number)[2]).toBe('2');
    expect(cellsOf(html, made.raterIds[0] as number)[3]).toBe('30.0 s');
    expect(cellsOf(html, newcomer)[3]).toBe('quality: being computed');
    // A rater without a judgment has no figures to wait for.
    expect(cellsOf(html, idle)[3]).toBe('—');
    expect(html).not.toContain('/exclude');
  });

  it('GET /console/batches/:id/raters and /participants, for a completed rater whose only judgment is on a removed pair, show no figures to wait for and approve them', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['b', 'a']] });
    const removedOnly = makeRater(t.db, { batchId: made.batchId, provider: 'prolific', participantId: 'PID-REMOVED-ONLY', status: 'completed' });
    makeJudgment(t.db, { pairId: made.pairIds[1] as number, raterId: removedOnly, winner: 'a' });
    t.db.prepare("UPDATE pairs SET removed_at = '2026-01-15T12:00:00.000Z', removed_reason = 'offensive' WHERE id = ?").run(made.pairIds[1]);
    await storeAnalysis(t.db, made.batchId);
    const admin = await signIn(t.app, t.db, 'admin');

    const raters = (await admin.agent.get(`/console/batches/${made.batchId}/raters`).expect(200)).text;
    // The counter counts the judgment (a regular pair's); the analysis does not (the pair is removed): nothing pending.
    expect(cellsOf(raters, removedOnly)[2]).toBe('1');
    expect(cellsOf(raters, removedOnly)[3]).toBe('—');
    const participants = (await admin.agent.get(`/console/batches/${made.batchId}/participants`).expect(200)).text;
    expect(cellsOf(participants, removedOnly)[3]).toContain('<strong>approve</strong>');
    expect(participants).not.toContain('data-testid="count-pending"');
    expect(count(participants, 'approve')).toBe(1);
  });

  it('GET /healthz, sent while GET /console/batches/:id/participants.csv waits for a large analysis in the worker, is answered before the CSV', async () => {
    const t = buildTestApp();
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    seedStoredJudgments(t.db, made.batchId, 30_000);
    const raters = t.db.prepare("SELECT count(*) FROM raters WHERE batch_id = ? AND provider <> 'preview'").pluck().get(made.batchId) as number;
    const admin = await signIn(t.app, t.db, 'admin');
    const done = await answeredWhileWorkerComputes(t.app, () => analysisRunning(t.db, made.batchId), admin.agent.get(`/console/batches/${made.batchId}/participants.csv?form=full`));
    expect(done.status).toBe(200);
    expect(done.text.trim().split('\n')).toHaveLength(1 + raters);
    expect(done.text).not.toContain(',pending,');
  }, 90_000);
});
