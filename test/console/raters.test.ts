import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { judgePseudonym } from '../../src/rating/judge-pseudonym.js';
import { makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';

type Report = { n_judgments: number; n_raters: number; comparisons: { wins_a: number; wins_b: number; win_rate_a: number | null }[]; exclusions: { raters: { reason: string; judgments: number }[] } };

describe('raters and participants in the console', () => {
  it('POST /console/batches/:id/raters/:raterId/exclude, then include, changes the analysis and the live win rate both ways', async () => {
    const t = buildTestApp();
    // Rater 2 always picks b; without them a wins every pair.
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'a', 'b'], ['a', 'b', 'b']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, admin.email);
    const analysis = async () => (await request(t.app).get(`/api/batches/${batch.batchId}/analysis?max_age=0`).set('Authorization', `Bearer ${token}`).expect(200)).body as Report;
    const before = await analysis();
    expect(before.comparisons[0]).toMatchObject({ wins_a: 5, wins_b: 4 });
    expect(before.n_judgments).toBe(9);

    const excluded = await admin.agent
      .post(`/console/batches/${batch.batchId}/raters/${batch.raterIds[2]}/exclude`)
      .type('form')
      .send({ _csrf: admin.csrf, reason: 'always picks the right side' });
    expect(excluded.status).toBe(303);
    expect(t.db.prepare('SELECT excluded, exclusion_reason FROM raters WHERE id = ?').get(batch.raterIds[2])).toEqual({ excluded: 1, exclusion_reason: 'always picks the right side' });
    const after = await analysis();
    expect(after.n_judgments).toBe(6);
    expect(after.comparisons[0]).toMatchObject({ wins_a: 5, wins_b: 1 });
    expect(after.exclusions.raters).toEqual([expect.objectContaining({ reason: expect.stringContaining('always picks the right side'), judgments: 3 })]);
    const live = await admin.agent.get(`/console/batches/${batch.batchId}/progress.json`).expect(200);
    expect(live.body.comparisons[0]).toMatchObject({ wins_a: 5, wins_b: 1 });
    const table = await admin.agent.get(`/console/batches/${batch.batchId}/raters`).expect(200);
    expect(table.text).toContain('excluded: always picks the right side');

    await admin.agent.post(`/console/batches/${batch.batchId}/raters/${batch.raterIds[2]}/include`).type('form').send({ _csrf: admin.csrf, reason: 'checked by hand' }).expect(303);
    const restored = await analysis();
    expect(restored.comparisons[0]).toMatchObject({ wins_a: 5, wins_b: 4 });
    const audit = t.db.prepare("SELECT action, details FROM audit_log WHERE target_type = 'rater' ORDER BY id").all() as { action: string; details: string }[];
    expect(audit.map((a) => a.action)).toEqual(['rater.exclude', 'rater.include']);
    expect(audit[0]?.details).toContain('always picks the right side');
  });

  it('POST /console/batches/:id/raters/:raterId/exclude, without a reason, answers 400 and excludes nobody', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent.post(`/console/batches/${batch.batchId}/raters/${batch.raterIds[0]}/exclude`).type('form').send({ _csrf: admin.csrf, reason: '  ' });
    expect(res.status).toBe(400);
    expect(t.db.prepare('SELECT count(*) FROM raters WHERE excluded = 1').pluck().get()).toBe(0);
  });

  it('GET /console/batches/:id/raters, for a rater who always picks the left side quickly, shows the flags', async () => {
    const t = buildTestApp();
    const votes = Array.from({ length: 6 }, () => ['a', 'a'] as ('a' | 'b')[]);
    const batch = makeBatchWithJudgments(t.db, { votes });
    // Make rater 0 see every pair with a on the left, so "a" is always the left choice.
    t.db.prepare("UPDATE judgments SET left_side = 'a', choice = 'left' WHERE rater_id = ?").run(batch.raterIds[0]);
    t.db.prepare('UPDATE judgments SET active_ms = 2000 WHERE rater_id = ?').run(batch.raterIds[0]);
    // The page shows the figures of the stored analysis (computed by the analysis worker): have it stored first.
    await awaitBatchAnalysis(t.db, batch.batchId, { now: () => new Date(), fresh: true });
    const researcher = await signIn(t.app, t.db, 'researcher');
    const res = await researcher.agent.get(`/console/batches/${batch.batchId}/raters`).expect(200);
    const row = new RegExp(`<tr class="" data-rater="${batch.raterIds[0]}">([\\s\\S]*?)</tr>`).exec(res.text)?.[1] ?? '';
    expect(row).toContain('too fast');
    expect(row).toContain('one side');
    expect(row).toContain('100%');
    expect(res.text).not.toContain('/exclude'); // researchers read; only admins see the exclude forms
  });

  it('GET /console/batches/:id/participants.csv, in each form, splits participants into approve / review / reject and keeps excluded and screened-out ones out of bulk approve and bonus', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a'], ['b'], ['a'], ['b'], ['a']] });
    makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-DONE-1', status: 'completed' });
    makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-OUT-2', status: 'screened_out', excluded: true, exclusionReason: 'attention' });
    makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-EXCL-3', status: 'completed', excluded: true, exclusionReason: 'copied answers' });
    const fast = makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-FAST-4', status: 'completed' });
    for (const pairId of batch.pairIds) makeJudgment(t.db, { pairId, raterId: fast, winner: 'a', activeMs: 2000 });
    makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-WIP-5', status: 'rating' });
    const admin = await signIn(t.app, t.db, 'admin');
    const list = async (form: string) => (await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=${form}`).expect(200)).text;
    const approve = await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=approve`).expect(200);
    expect(approve.headers['content-type']).toMatch(/text\/csv/);
    expect(approve.text).toBe('PID-DONE-1\n');
    expect(await list('bonus&amount=1.50')).toBe('PID-DONE-1,1.50\n');
    expect((await list('reject')).split('\n').filter(Boolean).sort()).toEqual(['PID-EXCL-3', 'PID-OUT-2']);
    const review = (await list('review')).split('\n').filter(Boolean);
    expect(review).toEqual(expect.arrayContaining(['PID-FAST-4', 'PID-WIP-5']));
    expect(review).not.toContain('PID-DONE-1');
    expect(review).not.toContain('PID-OUT-2');
    const full = await list('full');
    const lines = full.trim().split('\n');
    expect(lines[0]).toBe(
      'participant_id,judge,study_id,session_id,provider,outcome,decision,why,minutes,attention_checks_answered,attention_checks_failed,onboarding_correct,onboarding_answered,excluded,exclusion_reason,signals',
    );
    expect(lines).toHaveLength(1 + 6);
    expect(lines.find((l) => l.startsWith('PID-OUT-2,'))).toContain(',screened out,reject,screened out by the attention checks,');
    expect(lines.find((l) => l.startsWith('PID-EXCL-3,'))).toContain(',completed,reject,excluded: copied answers,');
    expect(lines.find((l) => l.startsWith('PID-FAST-4,'))).toContain(',completed,review,"completed, flagged: too fast');
    const page = await admin.agent.get(`/console/batches/${batch.batchId}/participants`).expect(200);
    expect(page.text).toContain('approve: <span data-testid="count-approve">1</span>');
    expect(page.text).toContain('reject: <span data-testid="count-reject">2</span>');
    const badAmount = await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=bonus&amount=lots`);
    expect(badAmount.status).toBe(400);
  });

  it('GET /console/batches/:id/participants.csv, for raters whose batch closed or paused while they worked and a rater who finished without a regular judgment, approves the first two (they worked) and sends the last to review', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a'], ['b'], ['a']] });
    const finished = (participantId: string, reason: string, judged: number) => {
      const id = makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId, status: 'completed' });
      t.db.prepare('UPDATE raters SET finish_reason = ? WHERE id = ?').run(reason, id);
      for (const pairId of batch.pairIds.slice(0, judged)) makeJudgment(t.db, { pairId, raterId: id, winner: 'a', activeMs: 60_000 });
      return id;
    };
    finished('PID-CLOSED-1', 'closed', 1);
    finished('PID-PAUSED-2', 'paused', 0);
    finished('PID-EMPTY-3', 'exhausted', 0);
    finished('PID-LEFT-4', 'exhausted', 2);
    const admin = await signIn(t.app, t.db, 'admin');
    const list = async (form: string) => (await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=${form}`).expect(200)).text.split('\n').filter(Boolean);
    const approve = await list('approve');
    expect(approve).toEqual(expect.arrayContaining(['PID-CLOSED-1', 'PID-PAUSED-2', 'PID-LEFT-4']));
    expect(approve).not.toContain('PID-EMPTY-3');
    expect(await list('review')).toContain('PID-EMPTY-3');
    const full = await list('full');
    expect(full.find((l) => l.startsWith('PID-CLOSED-1,'))).toContain(',completed,approve,worked until the batch was closed (given the partial code),');
    expect(full.find((l) => l.startsWith('PID-PAUSED-2,'))).toContain(',completed,approve,worked until the batch was paused (given the partial code),');
    expect(full.find((l) => l.startsWith('PID-EMPTY-3,'))).toContain(',completed,review,completed without a regular judgment (nothing was left for them),');
    expect(full.find((l) => l.startsWith('PID-LEFT-4,'))).toContain(',completed,approve,completed,');
  });

  it('GET /console/batches/:id/raters and /participants, show each rater as the judge pseudonym of the exports, with the provider id for admins only', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a']] });
    const raterId = makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: '5f3a9c2e1b7d4a6f8e0c1d2b', status: 'completed' });
    const salt = t.db.prepare('SELECT judge_salt FROM batches WHERE id = ?').pluck().get(batch.batchId) as string;
    const publicId = t.db.prepare('SELECT public_id FROM raters WHERE id = ?').pluck().get(raterId) as string;
    const judge = judgePseudonym(salt, { provider: 'prolific', participantId: '5f3a9c2e1b7d4a6f8e0c1d2b', raterPublicId: publicId });
    const rowOf = (html: string) => new RegExp(`data-rater="${raterId}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';
    const admin = await signIn(t.app, t.db, 'admin');
    for (const path of ['raters', 'participants']) {
      const row = rowOf((await admin.agent.get(`/console/batches/${batch.batchId}/${path}`).expect(200)).text);
      expect(row).toContain(`<code data-testid="judge" title="judge (batch pseudonym, as in exports and the analysis)">${judge}</code>`);
      expect(row).toContain('5f3a9c2e1b7d4a6f8e0c1d2b');
    }
    // The same judge names a rater in the analysis, so the console and the report can be read side by side.
    const voter = t.db.prepare('SELECT participant_id, public_id FROM raters WHERE id = ?').get(batch.raterIds[0]) as { participant_id: string; public_id: string };
    const voterJudge = judgePseudonym(salt, { provider: 'link', participantId: voter.participant_id, raterPublicId: voter.public_id });
    const token = tokenFor(t.db, admin.email);
    const report = (await request(t.app).get(`/api/batches/${batch.batchId}/analysis`).set('Authorization', `Bearer ${token}`).expect(200)).body as { raters: { rater: string }[] };
    expect(report.raters.map((r) => r.rater)).toContain(voterJudge);
    expect((await admin.agent.get(`/console/batches/${batch.batchId}/raters`).expect(200)).text).toContain(voterJudge);
    const researcher = await signIn(t.app, t.db, 'researcher');
    const seen = (await researcher.agent.get(`/console/batches/${batch.batchId}/raters`).expect(200)).text;
    expect(rowOf(seen)).toContain(judge);
    expect(seen).not.toContain('5f3a9c2e1b7d4a6f8e0c1d2b');
    await researcher.agent.get(`/console/batches/${batch.batchId}/participants`).expect(403);
  });

  it('POST /console/batches/:id/raters/:raterId/delete, confirmed, removes the judgments, frees the pairs and audits without personal data', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['b', 'b']] });
    const pid = t.db.prepare('SELECT participant_id FROM raters WHERE id = ?').pluck().get(batch.raterIds[1]) as string;
    const admin = await signIn(t.app, t.db, 'admin');
    const unconfirmed = await admin.agent.post(`/console/batches/${batch.batchId}/raters/${batch.raterIds[1]}/delete`).type('form').send({ _csrf: admin.csrf, reason: 'erasure request' });
    expect(unconfirmed.status).toBe(400);
    expect(t.db.prepare('SELECT count(*) FROM judgments').pluck().get()).toBe(4);
    await admin.agent
      .post(`/console/batches/${batch.batchId}/raters/${batch.raterIds[1]}/delete`)
      .type('form')
      .send({ _csrf: admin.csrf, reason: 'erasure request', confirm: 'delete' })
      .expect(303);
    expect(t.db.prepare('SELECT count(*) FROM judgments WHERE rater_id = ?').pluck().get(batch.raterIds[1])).toBe(0);
    expect(t.db.prepare('SELECT count(*) FROM raters WHERE id = ?').pluck().get(batch.raterIds[1])).toBe(0);
    expect(t.db.prepare('SELECT accepted FROM pairs WHERE batch_id = ? ORDER BY id').pluck().all(batch.batchId)).toEqual([1, 1]);
    const audit = t.db.prepare("SELECT details FROM audit_log WHERE action = 'rater.delete-data'").pluck().get() as string;
    expect(JSON.parse(audit)).toMatchObject({ judgments: 2, reason: 'erasure request' });
    expect(t.db.prepare('SELECT group_concat(details) FROM audit_log').pluck().get()).not.toContain(pid);
  });

  it('POST /console/batches/:id/pairs/:pairId/remove, for a reported pair, stops counting it and voids its live leases', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a'], ['b']] });
    t.db.prepare("INSERT INTO content_reports (batch_id, pair_id, reason, created_at) VALUES (?, ?, 'offensive', '2026-01-01T00:00:00Z')").run(batch.batchId, batch.pairIds[1]);
    const admin = await signIn(t.app, t.db, 'admin');
    const reports = await admin.agent.get('/console/reports').expect(200);
    expect(reports.text).toContain('offensive');
    await admin.agent.post(`/console/batches/${batch.batchId}/pairs/${batch.pairIds[1]}/remove`).type('form').send({ _csrf: admin.csrf, reason: 'offensive content' }).expect(303);
    expect(t.db.prepare('SELECT removed_reason FROM pairs WHERE id = ?').pluck().get(batch.pairIds[1])).toBe('offensive content');
    const progress = await admin.agent.get(`/console/batches/${batch.batchId}/progress.json`).expect(200);
    expect(progress.body).toMatchObject({ pairs: 1, accepted: 1 });
    expect(progress.body.comparisons[0]).toMatchObject({ wins_a: 1, wins_b: 0 });
    const reportId = t.db.prepare('SELECT id FROM content_reports').pluck().get() as number;
    await admin.agent.post(`/console/reports/${reportId}/resolve`).type('form').send({ _csrf: admin.csrf, resolution: 'pair removed' }).expect(303);
    expect(t.db.prepare('SELECT resolution FROM content_reports').pluck().get()).toBe('pair removed');
  });
});
