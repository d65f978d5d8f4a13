import { describe, expect, it } from 'vitest';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { batchFormErrors } from '../../src/console/batch-form-errors.js';
import { formToSettings, readBatchForm, settingsToForm } from '../../src/console/batch-form.js';
import type { DecidedParticipant } from '../../src/recruiting/decided-participants.js';
import { bonusReason, bonusToken, bonusTokenIn, externalQuestion, matchAssignments, mturkFeeMinor, mturkReward, planMturkSettle } from '../../src/recruiting/mturk-plan.js';

const base = { name: 'Round', runs: ['run-a'], comparisons: [['SCRIPT:m', 'AGENTS:m']] as [string, string][] };

function participant(raterId: number, over: Partial<DecidedParticipant> = {}): DecidedParticipant {
  return {
    raterId, provider: 'mturk', participantId: `A${raterId}WORKER00`, studyId: 'HIT1', sessionId: `AS${raterId}`, judge: `J${raterId}`, status: 'completed', outcome: 'completed',
    excluded: false, exclusionReason: null, decision: 'approve', why: 'completed', regularJudgments: 4, minutes: 9, finishedAt: null, ...over,
  };
}

describe('MTurk plan', () => {
  it('mturkReward, for pay in dollars or anything else, gives the reward in cents and MTurk text, or null', () => {
    expect(mturkReward('$2.50')).toEqual({ rewardMinor: 250, reward: '2.50' });
    expect(mturkReward('3 USD')).toEqual({ rewardMinor: 300, reward: '3.00' });
    expect(mturkReward('£2.00')).toBeNull();
    expect(mturkReward('')).toBeNull();
  });

  it("mturkFeeMinor, for HITs under and at 10 assignments and tiny rewards, applies MTurk's 20%, 40% and one-cent minimum", () => {
    expect(mturkFeeMinor(200, 9)).toBe(40);
    expect(mturkFeeMinor(200, 10)).toBe(80);
    expect(mturkFeeMinor(2, 1)).toBe(1);
  });

  it('externalQuestion, for a link with an ampersand, escapes it and carries the frame height', () => {
    const xml = externalQuestion('https://x.example/r/abc?a=1&b=2', 600);
    expect(xml).toContain('<ExternalURL>https://x.example/r/abc?a=1&amp;b=2</ExternalURL>');
    expect(xml).toContain('<FrameHeight>600</FrameHeight>');
  });

  it('bonusToken, for a batch and a worker, is stable, distinct per worker and within MTurk\'s 64 characters', () => {
    expect(bonusToken('b1', 'A1')).toBe(bonusToken('b1', 'A1'));
    expect(bonusToken('b1', 'A1')).not.toBe(bonusToken('b1', 'A2'));
    expect(bonusToken('b1', 'A1').length).toBeLessThanOrEqual(64);
  });

  it('planMturkSettle, for approved, screened-out, excluded and multi-HIT workers, approves every assignment of the approved, pays one bonus each and never rejects', () => {
    const settings = batchSettingsSchema.parse({ ...base, pay: '$2.00', bonus: { fixed: '0.20', perJudgment: '0.05' } });
    const people = [participant(1), participant(2, { status: 'screened_out', outcome: 'screened out', decision: 'reject', excluded: true }), participant(3, { excluded: true, decision: 'reject' }), participant(4)];
    const sessions = [1, 2, 3, 4].map((n) => ({ raterId: n, workerId: `A${n}WORKER00`, assignmentId: `AS${n}` })).concat([{ raterId: 4, workerId: 'A4WORKER00', assignmentId: 'AS4b' }]);
    const assignments = [...sessions.map((s) => ({ assignmentId: s.assignmentId, workerId: s.workerId, hitId: 'HIT1', status: 'Submitted' })), { assignmentId: 'ASX', workerId: 'AXWORKER00', hitId: 'HIT1', status: 'Submitted' }];
    const plan = planMturkSettle(matchAssignments(people, sessions, assignments), settings, { approve: new Set(['AS1']), bonus: new Set() });
    expect(plan.approve.map((a) => a.assignmentId)).toEqual(['AS4', 'AS4b']);
    expect(plan.done).toBe(1);
    expect(plan.review.map((r) => r.workerId)).toEqual(['A2WORKER00', 'A3WORKER00']);
    expect(plan.bonus.map((b) => [b.workerId, b.assignmentId, b.amountMinor])).toEqual([['A1WORKER00', 'AS1', 40], ['A4WORKER00', 'AS4b', 40]]);
    expect(plan.mismatches.map((m) => m.assignmentId)).toEqual(['ASX']);
  });

  it('planMturkSettle, for a worker MTurk already lists a bonus for, records it as already paid and never plans it again', () => {
    const settings = batchSettingsSchema.parse({ ...base, pay: '$2.00', bonus: { fixed: '0.50' } });
    const sessions = [1, 2].map((n) => ({ raterId: n, workerId: `A${n}WORKER00`, assignmentId: `AS${n}` }));
    const assignments = sessions.map((s) => ({ assignmentId: s.assignmentId, workerId: s.workerId, hitId: 'HIT1', status: 'Approved' }));
    const plan = planMturkSettle(matchAssignments([participant(1), participant(2)], sessions, assignments), settings, { approve: new Set(), bonus: new Set(), paidOnMturk: new Set(['A1WORKER00']) });
    expect(plan.alreadyPaid.map((b) => [b.workerId, b.amountMinor])).toEqual([['A1WORKER00', 50]]);
    expect(plan.bonus.map((b) => b.workerId)).toEqual(['A2WORKER00']);
  });

  it('bonusTokenIn, for the reason settle writes and one written by hand, finds the token or nothing', () => {
    const token = bonusToken('b1', 'A1');
    expect(bonusTokenIn(bonusReason(token))).toBe(token);
    expect(bonusTokenIn('Thanks for the extra effort!')).toBeNull();
  });

  it('settingsToForm then formToSettings, for a batch with an mturk block, keep it; text that is not JSON is named on the mturk field', () => {
    const settings = batchSettingsSchema.parse({ ...base, provider: { kind: 'mturk' }, mturk: { locales: ['US'], hits: 2 } });
    const again = batchSettingsSchema.parse(formToSettings(readBatchForm(settingsToForm(settings) as unknown as Record<string, unknown>)));
    expect(again.mturk).toEqual(settings.mturk);
    const broken = formToSettings(readBatchForm({ ...(settingsToForm(settings) as unknown as Record<string, unknown>), mturk: '{ locales: US' }));
    expect(batchFormErrors(broken)).toHaveProperty('mturk');
  });
});
