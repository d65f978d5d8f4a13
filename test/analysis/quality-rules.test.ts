import { describe, expect, it } from 'vitest';
import { oneKey, sharedReasons } from '../../src/analysis/quality-signals.js';
import { qualityFlags, raterQuality } from '../../src/analysis/rater-quality.js';
import { DEFAULT_QUALITY, oneKeyChance } from '../../src/batches/batch.schema.js';
import { parseBatchSettings } from '../../src/batches/create-batch.js';

// Issue 51, item 11: "same reason" needs distinctive text or several matches, "one key" a count at which chance is
// below 1%, "one side" decisive choices.

const COMMON = 'Conversation 2 feels more natural.';
const DISTINCT = 'The second speaker keeps promising the party invitation and never once mentions the neighbour.';

describe('the rules of the rater flags (issue 51)', () => {
  it('sharedReasons, for one match of a common sentence, flags nobody; for three matches of it between two raters, or one of distinctive text, flags them', () => {
    // One match each of the sentence (34 characters, three word 3-grams).
    expect(sharedReasons([{ rater: 1, text: COMMON }, { rater: 2, text: COMMON }, { rater: 3, text: 'Conversation 1 feels more natural and warm.' }], DEFAULT_QUALITY)).toEqual([false, false, false]);
    // The same two raters giving it three times each.
    const thrice = [1, 2].flatMap((rater) => [0, 1, 2].map(() => ({ rater, text: COMMON })));
    expect(sharedReasons(thrice, DEFAULT_QUALITY)).toEqual(new Array(6).fill(true));
    // Twice is not several.
    expect(sharedReasons(thrice.filter((_, i) => i % 3 !== 2), DEFAULT_QUALITY)).toEqual(new Array(4).fill(false));
    // One match of a distinctive reason: its 3-grams occur nowhere but in its copies, whoever else wrote about the party.
    const distinct = [
      { rater: 1, text: DISTINCT },
      { rater: 2, text: DISTINCT },
      { rater: 3, text: 'The second speaker talks about the party a lot.' },
    ];
    expect(sharedReasons(distinct, DEFAULT_QUALITY)).toEqual([true, true, false]);
    // Copied by five raters: still distinctive (its 3-grams are in its copies only).
    expect(sharedReasons([1, 2, 3, 4, 5].map((rater) => ({ rater, text: DISTINCT })), DEFAULT_QUALITY)).toEqual(new Array(5).fill(true));
  });

  it('oneKey, at the default of 8, flags eight answers with key 1 but not seven; the chance is 2^(1 - n)', () => {
    expect(DEFAULT_QUALITY.oneKeyMinAnswers).toBe(8);
    expect(oneKey({ '1': 7 }, DEFAULT_QUALITY.oneKeyMinAnswers)).toBe(false);
    expect(oneKey({ '1': 8 }, DEFAULT_QUALITY.oneKeyMinAnswers)).toBe(true);
    // Honest keyboard rater, sides counterbalanced: each answer key 1 or 2 with probability 1/2, either key counting.
    expect(oneKeyChance(5)).toBe(1 / 16);
    expect(oneKeyChance(7)).toBeGreaterThan(0.01);
    expect(oneKeyChance(8)).toBeLessThan(0.01);
    expect(() => parseBatchSettings({ name: 'x', runs: ['r'], comparisons: [['SCRIPT:m', 'AGENTS:m']], quality: { ...DEFAULT_QUALITY, oneKeyMinAnswers: 5 } })).toThrow(
      'quality.oneKeyMinAnswers: 5 answers all with the same key happen to an honest keyboard rater with chance 6.25%; use 8 or more (0.78%)',
    );
  });

  it('qualityFlags, for a rater who chose the left side three times and tied four, does not flag "one side"; five decisive choices on the left do', () => {
    const j = (pair: number, choice: 'left' | 'right' | 'tie') => ({ rater_id: 1, pair_id: pair, label: choice === 'tie' ? 'TIE' : 'A', choice, active_ms: 20_000 });
    const checks = { attentionFailures: 0, onboardingCorrect: 0, onboardingAnswered: 0, onboardingThreshold: null };
    const ties = raterQuality([j(1, 'left'), j(2, 'left'), j(3, 'left'), j(4, 'tie'), j(5, 'tie'), j(6, 'tie'), j(7, 'tie')]).get(1);
    expect(ties).toMatchObject({ judgments: 7, decisive: 3, leftRate: 1 });
    expect(qualityFlags(ties, 20, checks).oneSided).toBe(false);
    const five = raterQuality([1, 2, 3, 4, 5].map((p) => j(p, 'left'))).get(1);
    expect(qualityFlags(five, 20, checks).oneSided).toBe(true);
  });
});
