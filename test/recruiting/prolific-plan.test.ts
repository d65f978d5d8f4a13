import { describe, expect, it } from 'vitest';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import type { DecidedParticipant } from '../../src/recruiting/decided-participants.js';
import { bonusMinor, chunks, planSettle, prolificActionOf, prolificReward } from '../../src/recruiting/prolific-plan.js';
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

  it('planSettle, for submissions in every state, approves only those awaiting review, leaves covered ones out and names mismatches', () => {
    const sub = (id: string, participantId: string, status: string, code = 'DONE'): ProlificSubmission => ({ id, participant_id: participantId, status, entered_code: code });
    const plan = planSettle(
      [
        participant({ participantId: 'A', sessionId: 'SA' }),
        participant({ participantId: 'B', sessionId: 'SB', raterId: 2 }),
        participant({ participantId: 'C', sessionId: 'SC', raterId: 3 }),
        participant({ participantId: 'D', sessionId: 'SD', raterId: 4 }),
        participant({ participantId: 'E', sessionId: 'SE', raterId: 5 }),
      ],
      [sub('SA', 'A', 'AWAITING REVIEW'), sub('SB', 'B', 'APPROVED'), sub('SC', 'C', 'ACTIVE', ''), sub('SD', 'D', 'AWAITING REVIEW', 'WRONG'), sub('SX', 'X', 'AWAITING REVIEW')],
      settings,
      { approve: new Set(['D']), screenOut: new Set(), returns: new Set(), bonus: new Set(['B']) },
    );
    expect(plan.approve.map((p) => p.participantId)).toEqual(['A']);
    expect(plan.bonus.map((b) => [b.participantId, b.amountMinor])).toEqual([
      ['A', 70],
      ['D', 70],
    ]);
    expect(plan.done).toBe(2);
    expect(plan.review.map((r) => r.participantId)).toEqual(['C', 'E']);
    expect(plan.mismatches.map((m) => m.problem)).toEqual([
      'entered code WRONG, simarena gave DONE',
      'finished in simarena (completed) but has no submission on Prolific',
      'submission AWAITING REVIEW whose participant never reached simarena: not approved',
    ]);
  });

  it('chunks, for 201 items in chunks of 100, gives 100, 100 and 1', () => {
    expect(chunks(Array.from({ length: 201 }, (_, i) => i), 100).map((c) => c.length)).toEqual([100, 100, 1]);
  });
});
