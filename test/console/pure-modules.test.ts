import { describe, expect, it } from 'vitest';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { formToSettings, parseComparisonLines, readBatchForm, settingsToForm } from '../../src/console/batch-form.js';
import { median } from '../../src/numbers/median.js';
import { qualityFlags, raterQuality, type QualityJudgment } from '../../src/analysis/rater-quality.js';

const j = (rater_id: number, pair_id: number, label: string, choice: 'left' | 'right' | 'tie' = 'left', active_ms: number | null = 10_000): QualityJudgment => ({ rater_id, pair_id, label, choice, active_ms });

describe('raterQuality', () => {
  it('raterQuality, with three raters on a pair, compares each with the majority of the other two only when they agree', () => {
    const rows = raterQuality([j(1, 1, 'A'), j(2, 1, 'A'), j(3, 1, 'B'), j(1, 2, 'B'), j(2, 2, 'A'), j(3, 2, 'A')]);
    // Pair 1: rater 3 disagrees with a unanimous A; raters 1 and 2 face a split (A, B) and are not compared.
    // Pair 2: rater 1 disagrees with A, A; raters 2 and 3 face (B, A): not compared.
    expect(rows.get(1)?.majorityAgreement).toBe(0);
    expect(rows.get(2)?.majorityAgreement).toBeNull();
    expect(rows.get(3)?.majorityAgreement).toBe(0);
    const agreeing = raterQuality([j(1, 1, 'A'), j(2, 1, 'A'), j(3, 1, 'A')]);
    expect([...agreeing.values()].map((r) => r.majorityAgreement)).toEqual([1, 1, 1]);
  });

  it('raterQuality, for sides and times, gives the left-choice rate among decisive choices and the median seconds', () => {
    const rows = raterQuality([j(1, 1, 'A', 'left', 4000), j(1, 2, 'B', 'right', 6000), j(1, 3, 'TIE', 'tie', 20_000), j(1, 4, 'A', 'left', null)]);
    expect(rows.get(1)).toEqual({ raterId: 1, judgments: 4, decisive: 3, medianSeconds: 6, majorityAgreement: null, leftRate: 2 / 3 });
    expect(median([])).toBeNull();
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });

  it('qualityFlags, for fast, one-sided and failing raters, raises each flag only past its threshold', () => {
    const base = { raterId: 1, judgments: 5, medianSeconds: 20, majorityAgreement: 1, leftRate: 0.5 };
    const checks = { attentionFailures: 0, onboardingCorrect: 0, onboardingAnswered: 0, onboardingThreshold: null };
    expect(qualityFlags(base, 30, checks)).toEqual({ tooFast: false, oneSided: false, failsChecks: false });
    expect(qualityFlags({ ...base, medianSeconds: 9 }, 30, checks).tooFast).toBe(true);
    expect(qualityFlags({ ...base, medianSeconds: 4 }, null, checks).tooFast).toBe(true);
    expect(qualityFlags({ ...base, leftRate: 0.9 }, 30, checks).oneSided).toBe(true);
    expect(qualityFlags({ ...base, leftRate: 1, judgments: 4 }, 30, checks).oneSided).toBe(false);
    expect(qualityFlags(base, 30, { ...checks, attentionFailures: 1 }).failsChecks).toBe(true);
    expect(qualityFlags(base, 30, { ...checks, onboardingCorrect: 2, onboardingAnswered: 4, onboardingThreshold: 0.75 }).failsChecks).toBe(true);
    expect(qualityFlags(base, 30, { ...checks, onboardingCorrect: 3, onboardingAnswered: 4, onboardingThreshold: 0.75 }).failsChecks).toBe(false);
  });
});

describe('batch form', () => {
  it('formToSettings, for a filled-in form, gives settings the batch schema accepts with the same values', () => {
    const form = readBatchForm({
      name: 'Round 1',
      runs: ['run-a', 'run-b'],
      comparisons: 'script:gpt-4o-mini vs AGENTS:gpt-4o-mini\r\nAGENTS:gpt-4o-mini, MINDREADERS:gpt-4o-mini\n',
      scenarios: 'party-one, party-two',
      judgmentsPerPair: '5',
      allowTie: 'on',
      onboardingEnabled: 'on',
      onboardingPairs: '3',
      onboardingThreshold: '',
      providerKind: 'prolific',
      paramParticipant: 'PID',
      codeCompleted: 'ABC123',
      pay: ' £3.00 ',
    });
    const settings = batchSettingsSchema.parse(formToSettings(form));
    expect(settings).toMatchObject({
      name: 'Round 1',
      runs: ['run-a', 'run-b'],
      comparisons: [
        ['SCRIPT:gpt-4o-mini', 'AGENTS:gpt-4o-mini'],
        ['AGENTS:gpt-4o-mini', 'MINDREADERS:gpt-4o-mini'],
      ],
      scenarios: ['party-one', 'party-two'],
      judgmentsPerPair: 5,
      allowTie: true,
      onboarding: { pairs: 3, threshold: 0.75 },
      attentionChecks: null,
      provider: { kind: 'prolific', params: { participant: 'PID' }, completionCodes: { completed: 'ABC123' } },
      pay: '£3.00',
    });
    expect(formToSettings(readBatchForm(settingsToForm(settings) as unknown as Record<string, unknown>))).toMatchObject({ comparisons: settings.comparisons, judgmentsPerPair: 5 });
  });

  it('settingsToForm then formToSettings, for a batch with a bonus and a paid screen-out, keep both (an edit in the console loses neither)', () => {
    const settings = batchSettingsSchema.parse({
      name: 'Paid round',
      runs: ['run-a'],
      comparisons: [['SCRIPT:m', 'AGENTS:m']],
      pay: '£2.00',
      bonus: { fixed: '0.50', perJudgment: '0.05' },
      provider: { kind: 'prolific', screenOutPay: '0.30' },
    });
    const again = batchSettingsSchema.parse(formToSettings(readBatchForm(settingsToForm(settings) as unknown as Record<string, unknown>)));
    expect(again.bonus).toEqual({ fixed: '0.50', perJudgment: '0.05' });
    expect(again.provider.screenOutPay).toBe('0.30');
    const none = batchSettingsSchema.parse(formToSettings(readBatchForm({ ...(settingsToForm(settings) as unknown as Record<string, unknown>), bonusFixed: '', bonusPerJudgment: '' })));
    expect(none.bonus).toBeNull();
  });

  it('formToSettings, for a number field holding text, passes the text on so the schema names the field', () => {
    const result = batchSettingsSchema.safeParse(formToSettings(readBatchForm({ name: 'x', runs: 'r', comparisons: 'SCRIPT:m vs AGENTS:m', perRaterCap: 'ten' })));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['perRaterCap']);
    expect(parseComparisonLines('A:m vs. B:m')).toEqual([['A:m', 'B:m']]);
  });
});
