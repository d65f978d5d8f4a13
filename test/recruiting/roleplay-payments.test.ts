import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { transitionBatch, getBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { endPlayer, insertPlayer } from '../../src/live/live.queries.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { listDecidedParticipants } from '../../src/recruiting/decided-participants.js';
import { planSettle, PROLIFIC_ROLEPLAY_TITLE, prolificStudyRequest, waitBonusMinor } from '../../src/recruiting/prolific-plan.js';
import type { ProlificSubmission } from '../../src/recruiting/prolific.schema.js';
import { insertRater, setRaterStatus } from '../../src/rating/rating.queries.js';
import { newPublicId } from '../../src/web/ids.js';
import { signIn } from '../auth/session-helpers.js';
import { launchReady, makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { startFakeProlific } from '../helpers/fake-prolific.js';
import { cli } from '../helpers/run-cli.js';

// Paying role-play participants (issue 52): whoever did their part is paid however the conversation ended for reasons
// not theirs; waiting counts, and a long wait earns the wait bonus, planned by settle like any other bonus.

const NOW = new Date('2026-04-05T10:00:00.000Z');
const CODES = { completed: 'RP-DONE', screenedOut: 'RP-SCREEN', noConsent: 'RP-NOCONSENT', noPartner: 'RP-NOPARTNER' };

function roleplayBatch(db: Db) {
  makeScenario(db);
  const created = createBatch(
    db,
    launchReady({ name: 'Paid role-play', task: 'roleplay', run: 'paid-live', plannedRaters: 10, provider: { kind: 'prolific', completionCodes: CODES }, partner: { waitSeconds: 180, waitBonus: { perMinute: '0.10', afterSeconds: 60 } } }),
    { actor: 'test', now: NOW },
  );
  transitionBatch(db, created.batchId, 'open', 'test', NOW);
  return created.batchId;
}

/** A Prolific participant who played and ended as given (`completed`: shown a completion code). */
function player(db: Db, batchId: number, n: number, end: { outcome: 'finished' | 'partner_left' | 'no_partner' | 'timed_out' | 'away'; waitedMs: number; completed: boolean }) {
  const id = insertRater(db, { batchId, publicId: newPublicId(), provider: 'prolific', participantId: `${'a'.repeat(23)}${n}`, studyId: 'STUDY', sessionId: `SUB${n}`, submitTo: null, userAgent: null, status: 'rating' }, NOW);
  insertPlayer(db, { raterId: id, batchId }, NOW);
  endPlayer(db, id, { state: end.outcome === 'away' ? 'done' : 'answering', outcome: end.outcome, waitedMs: end.waitedMs }, NOW);
  if (end.completed) setRaterStatus(db, id, 'completed', NOW);
  return id;
}

const submission = (n: number, code: string): ProlificSubmission =>
  ({ id: `SUB${n}`, participant_id: `${'a'.repeat(23)}${n}`, status: 'AWAITING REVIEW', entered_code: code, return_requested: null }) as unknown as ProlificSubmission;

describe('paying role-play participants', () => {
  it('listDecidedParticipants approves those whose conversation ended for reasons not theirs, and sends the others to review, as the console payment CSV does', async () => {
    const t = buildTestApp();
    const batchId = roleplayBatch(t.db);
    player(t.db, batchId, 1, { outcome: 'finished', waitedMs: 20_000, completed: true });
    player(t.db, batchId, 2, { outcome: 'partner_left', waitedMs: 5_000, completed: true });
    player(t.db, batchId, 3, { outcome: 'no_partner', waitedMs: 180_000, completed: true });
    player(t.db, batchId, 4, { outcome: 'timed_out', waitedMs: 0, completed: true });
    player(t.db, batchId, 5, { outcome: 'away', waitedMs: 0, completed: false });
    const decided = await listDecidedParticipants(t.db, batchId, { clock: () => new Date() });
    expect(decided?.map((p) => [p.decision, p.why, p.waitedSeconds])).toEqual([
      ['approve', 'completed the conversation', 20],
      ['approve', 'their partner left the conversation (paid in full)', 5],
      ['approve', 'no partner came within the wait (paid for waiting)', 180],
      ['review', 'let two turns in a row pass, which ended the conversation', 0],
      ['review', 'closed the page for too long (their partner was paid); no completion code shown', 0],
    ]);
    const admin = await signIn(t.app, t.db, 'admin');
    const csv = await admin.agent.get(`/console/batches/${batchId}/participants.csv?form=full`).expect(200);
    const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.decision, r.why])).toEqual(decided?.map((p) => [p.decision, p.why]));
    (t.app.locals.liveHub as LiveHub).stop();
  });

  it('planSettle approves the paid participants, pays the wait bonus per minute begun after afterSeconds, and takes the "no partner" code as theirs', async () => {
    const t = buildTestApp();
    const batchId = roleplayBatch(t.db);
    player(t.db, batchId, 1, { outcome: 'finished', waitedMs: 30_000, completed: true });
    player(t.db, batchId, 2, { outcome: 'no_partner', waitedMs: 180_000, completed: true });
    const decided = (await listDecidedParticipants(t.db, batchId, { clock: () => new Date() })) ?? [];
    const settings = getBatch(t.db, batchId)?.settings;
    if (!settings) throw new Error('no batch');
    const plan = planSettle(decided, [submission(1, 'RP-DONE'), submission(2, 'RP-NOPARTNER')], settings, { returns: new Set(), bonus: new Set() });
    expect(plan.mismatches).toEqual([]);
    expect(plan.approve.map((a) => a.submissionId)).toEqual(['SUB1', 'SUB2']);
    // 180 s waited, the first 60 s included in the pay: two minutes begun after them, 0.10 each.
    expect(plan.bonus.map((b) => [b.submissionId, b.amountMinor])).toEqual([['SUB2', 20]]);
    (t.app.locals.liveHub as LiveHub).stop();
  });

  it('waitBonusMinor counts minutes begun after afterSeconds; prolificStudyRequest titles a role-play study as live and reviews its "no partner" code', () => {
    expect(waitBonusMinor({ perMinute: '0.15', afterSeconds: 60 }, 60)).toBe(0);
    expect(waitBonusMinor({ perMinute: '0.15', afterSeconds: 60 }, 61)).toBe(15);
    expect(waitBonusMinor({ perMinute: '0.15', afterSeconds: 0 }, 125)).toBe(45);
    expect(waitBonusMinor(null, 600)).toBe(0);
    const t = buildTestApp();
    const batchId = roleplayBatch(t.db);
    const batch = getBatch(t.db, batchId);
    if (!batch) throw new Error('no batch');
    const study = prolificStudyRequest({ publicId: batch.publicId, settings: batch.settings }, { studyUrl: 'https://x/r/y', places: 10, minutes: 15, rewardMinor: 300 });
    expect(study.name).toBe(PROLIFIC_ROLEPLAY_TITLE);
    expect(study.completion_codes).toContainEqual({ code: 'RP-NOPARTNER', code_type: 'OTHER', actor: 'participant', actions: [{ action: 'MANUALLY_REVIEW' }] });
    (t.app.locals.liveHub as LiveHub).stop();
  });

  it('prolific publish, for a role-play batch, asks for a live-chat study of plannedRaters places, for the time a session can take, whose "no partner" code is reviewed, at the role-play link', async () => {
    const token = 'ptk_roleplay_publish_test_token_0001';
    const fake = await startFakeProlific({ token });
    const env = { PUBLIC_URL: 'https://simarena.example', PROLIFIC_API_URL: fake.url, PROLIFIC_API_TOKEN: token };
    const t = buildTestApp({ env });
    const batchId = roleplayBatch(t.db);
    const published = await cli(['prolific', 'publish', String(batchId)], { ...env, DATABASE_PATH: t.dbPath, LOG_LEVEL: 'silent' });
    expect(published.code).toBe(0);
    const study = [...fake.studies.values()][0];
    expect(study?.name).toBe(PROLIFIC_ROLEPLAY_TITLE);
    expect(study?.total_available_places).toBe(10);
    // The time the consent promises: a wait of 180 s and 10 own turns of 90 s (18 minutes), above the 10 estimated.
    expect(study?.estimated_completion_time).toBe(18);
    expect(study?.external_study_url).toBe(`https://simarena.example/r/${getBatch(t.db, batchId)?.publicId}?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}`);
    expect(study?.completion_codes.map((c) => [c.code, c.actions[0]?.action])).toContainEqual(['RP-NOPARTNER', 'MANUALLY_REVIEW']);
    (t.app.locals.liveHub as LiveHub).stop();
    await fake.close();
  });
});
