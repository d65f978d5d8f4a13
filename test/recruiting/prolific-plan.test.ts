import { describe, expect, it } from 'vitest';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import type { DecidedParticipant } from '../../src/recruiting/decided-participants.js';
import { prolificReward, screenOutPayProblem } from '../../src/batches/prolific-pay.js';
import { autoApprovalAt, bonusMinor, chunks, planSettle, prolificActionOf } from '../../src/recruiting/prolific-plan.js';
import type { ProlificSubmission } from '../../src/recruiting/prolific.schema.js';

const participant = (over: Partial<DecidedParticipant>): DecidedParticipant => ({
  raterId: 1,
  provider: 'prolific',
  participantId: 'P1',
  studyId: 'S',
  sessionId: 'SUB1',
  judge: 'j',
  status: 'completed',
  outcome: 'completed',
  excluded: false,
  exclusionReason: null,
  decision: 'approve',
  why: 'completed',
  regularJudgments: 4,
  minutes: 3,
  finishedAt: null,
  ...over,
});

const settings = batchSettingsSchema.parse({
  name: 'b',
  runs: ['r'],
  comparisons: [['SCRIPT:m', 'AGENTS:m']],
  pay: '£2.00',
  bonus: { fixed: '0.50', perJudgment: '0.05' },
  provider: { kind: 'prolific', completionCodes: { completed: 'DONE', screenedOut: 'OUT' } },
});

describe('Prolific settle plan', () => {
  it('prolificReward, for pay texts, gives Prolific currencies in minor units and refuses others', () => {
    expect(prolificReward('£2.50')).toEqual({ currency: 'GBP', rewardMinor: 250 });
    expect(prolificReward('3 USD')).toEqual({ currency: 'USD', rewardMinor: 300 });
    expect(prolificReward('$0.105')).toEqual({ currency: 'USD', rewardMinor: 11 });
    expect(prolificReward('')).toBeNull();
    expect(prolificReward('€2.00')).toBeNull();
    expect(prolificReward('£0')).toBeNull();
  });

  it('bonusMinor, for a fixed and a per-judgment bonus, adds them in minor units without floating-point drift', () => {
    expect(bonusMinor({ fixed: '0.50', perJudgment: '0.05' }, 7)).toBe(85);
    expect(bonusMinor({ perJudgment: '0.10' }, 3)).toBe(30);
    expect(bonusMinor(null, 10)).toBe(0);
  });

  it('prolificActionOf, for each outcome, gives the one action of the docs table and never a rejection', () => {
    expect(prolificActionOf(participant({}), false).action).toBe('approve');
    expect(prolificActionOf(participant({ status: 'screened_out', excluded: true, decision: 'reject' }), true).action).toBe('screen_out');
    expect(prolificActionOf(participant({ status: 'screened_out', excluded: true, decision: 'reject' }), false).action).toBe('return');
    expect(prolificActionOf(participant({ status: 'withdrew', decision: 'review' }), true).action).toBe('return');
    expect(prolificActionOf(participant({ status: 'no_consent', decision: 'review' }), true).action).toBe('return');
    expect(prolificActionOf(participant({ excluded: true, decision: 'reject' }), true).action).toBe('review');
    expect(prolificActionOf(participant({ decision: 'review', why: 'completed, flagged: too fast' }), true).action).toBe('review');
    expect(prolificActionOf(participant({ decision: 'pending' }), true).action).toBe('review');
  });

  it('planSettle, for submissions in every state, approves all that await review (again after an earlier bulk approve), counts only APPROVED done, and names mismatches', () => {
    const sub = (id: string, participantId: string, status: string, code = 'DONE'): ProlificSubmission => ({ id, participant_id: participantId, status, entered_code: code, completed_at: '2026-03-01T10:00:00.000Z' });
    const plan = planSettle(
      [
        participant({ participantId: 'A', sessionId: 'SA' }),
        participant({ participantId: 'B', sessionId: 'SB', raterId: 2 }),
        participant({ participantId: 'C', sessionId: 'SC', raterId: 3 }),
        participant({ participantId: 'D', sessionId: 'SD', raterId: 4 }),
        participant({ participantId: 'E', sessionId: 'SE', raterId: 5 }),
        participant({ participantId: 'F', sessionId: 'SF', raterId: 6 }),
      ],
      [sub('SA', 'A', 'AWAITING REVIEW'), sub('SB', 'B', 'APPROVED'), sub('SC', 'C', 'ACTIVE', ''), sub('SD', 'D', 'AWAITING REVIEW', 'WRONG'), sub('SF', 'F', 'PROCESSING'), sub('SX', 'X', 'AWAITING REVIEW')],
      settings,
      { returns: new Set(), bonus: new Set(['B']) },
    );
    // D was in an earlier bulk approve that Prolific took, yet it still awaits review: approved again.
    expect(plan.approve.map((p) => p.participantId)).toEqual(['A', 'D']);
    expect(plan.inFlight.map((p) => p.participantId)).toEqual(['F']);
    expect(plan.bonus.map((b) => [b.participantId, b.amountMinor])).toEqual([
      ['A', 70],
      ['D', 70],
      ['F', 70],
    ]);
    expect(plan.done).toBe(1);
    expect(plan.review.map((r) => [r.participantId, r.status, r.autoApprovalAt])).toEqual([
      ['C', 'ACTIVE', null],
      ['E', null, null],
    ]);
    expect(plan.mismatches.map((m) => m.problem)).toEqual([
      'entered code WRONG, simarena gave DONE',
      'finished in simarena (completed) but has no submission on Prolific',
      'submission AWAITING REVIEW whose participant never reached simarena: not approved',
    ]);
    expect(plan.deadlines).toEqual([{ participantId: 'X', submissionId: 'SX', autoApprovalAt: '2026-03-22T00:00:00.000Z', why: 'submission AWAITING REVIEW whose participant never reached simarena: not approved' }]);
  });

  it('planSettle, for participants asked to return, lists those who have not returned with the day Prolific approves them itself, and counts the returned done', () => {
    const sub = (id: string, participantId: string, status: string, returnRequested: string | null): ProlificSubmission => ({ id, participant_id: participantId, status, completed_at: '2026-03-01T23:30:00.000Z', return_requested: returnRequested });
    const plan = planSettle(
      [
        participant({ participantId: 'W', sessionId: 'SW', status: 'withdrew', decision: 'review', why: 'withdrew' }),
        participant({ participantId: 'N', sessionId: 'SN', raterId: 2, status: 'no_consent', decision: 'review', why: 'declined consent' }),
        participant({ participantId: 'R', sessionId: 'SR', raterId: 3, status: 'withdrew', decision: 'review', why: 'withdrew' }),
        participant({ participantId: 'Q', sessionId: 'SQ', raterId: 4, status: 'withdrew', decision: 'review', why: 'withdrew' }),
      ],
      [sub('SW', 'W', 'AWAITING REVIEW', null), sub('SN', 'N', 'AWAITING REVIEW', '2026-03-02T09:00:00.000Z'), sub('SR', 'R', 'RETURNED', '2026-03-02T09:00:00.000Z'), sub('SQ', 'Q', 'AWAITING REVIEW', null)],
      settings,
      { returns: new Set(['Q']), bonus: new Set() },
    );
    expect(plan.returns.map((p) => p.participantId)).toEqual(['W']);
    expect(plan.done).toBe(1);
    expect(plan.review.map((r) => [r.participantId, r.why, r.autoApprovalAt])).toEqual([
      ['N', 'declined consent; asked to return on 2026-03-02 09:00 UTC and not returned yet', '2026-03-22T00:00:00.000Z'],
      ['Q', 'withdrew; asked to return and not returned yet', '2026-03-22T00:00:00.000Z'],
    ]);
    expect(plan.deadlines.map((d) => d.participantId)).toEqual(['W', 'N', 'Q']);
  });

  it('autoApprovalAt, for completion times across a UTC midnight, gives midnight UTC starting the 21st day after the day of completion', () => {
    expect(autoApprovalAt('2026-03-01T00:00:01.000Z')).toBe('2026-03-22T00:00:00.000Z');
    expect(autoApprovalAt('2026-03-01T23:59:59.000Z')).toBe('2026-03-22T00:00:00.000Z');
    expect(autoApprovalAt('2026-12-20T12:00:00.000Z')).toBe('2027-01-10T00:00:00.000Z');
    expect(autoApprovalAt(null)).toBeNull();
  });

  it('screenOutPayProblem, for a screen-out payment at or above the reward or below the minimum, names the problem; below the reward, none', () => {
    expect(screenOutPayProblem('0.30', { currency: 'GBP', rewardMinor: 200 })).toBeNull();
    expect(screenOutPayProblem(undefined, { currency: 'GBP', rewardMinor: 200 })).toBeNull();
    expect(screenOutPayProblem('2.00', { currency: 'GBP', rewardMinor: 200 })).toContain("must be below the study's reward (2.00 GBP)");
    expect(screenOutPayProblem('0.09', { currency: 'GBP', rewardMinor: 200 })).toContain("below Prolific's minimum of 0.10 GBP");
    expect(screenOutPayProblem('0.13', { currency: 'USD', rewardMinor: 200 })).toContain("below Prolific's minimum of 0.14 USD");
  });

  it('chunks, for 201 items in chunks of 100, gives 100, 100 and 1', () => {
    expect(chunks(Array.from({ length: 201 }, (_, i) => i), 100).map((c) => c.length)).toEqual([100, 100, 1]);
  });
});
