import { describe, expect, it } from 'vitest';
import { analyzeJudgments } from '../../src/analysis/analyze.js';
import { dawidSkene } from '../../src/analysis/dawid-skene.js';
import { createJudgmentTableBuilder } from '../../src/analysis/judgment-table.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';

// Issue 51, item 13: a rater who always chooses the left side, a second a comparison, must not get the highest
// Dawid–Skene accuracy. The data are made for it: 60 pairs of two conditions nobody can tell apart (each of 20 honest
// raters picks either at random, two per pair), sides counterbalanced at random, and one rater who judged every pair
// and always chose the conversation on the left.

function madeData(seed: number) {
  const random = seededRandom(seed);
  const builder = createJudgmentTableBuilder();
  const add = (pair: number, rater: string, outcome: 0 | 1, left: 0 | 1, seconds: number) =>
    builder.add({ item: `p${pair}`, rater, conditionA: 'SCRIPT:m', conditionB: 'AGENTS:m', outcome, left, seconds, aWords: 100, bWords: 100, scenario: null, category: null });
  for (let pair = 0; pair < 60; pair++) {
    const raters = new Set<number>();
    while (raters.size < 2) raters.add(Math.floor(random() * 20));
    for (const r of raters) add(pair, `honest-${r}`, random() < 0.5 ? 0 : 1, random() < 0.5 ? 0 : 1, 40);
    const left = random() < 0.5 ? 0 : 1;
    add(pair, 'always-left', left, left, 1);
  }
  return builder.build();
}

describe('Dawid–Skene and a rater who answers by position alone (issue 51)', () => {
  it('dawidSkene without sides, on such data, takes that rater for the truth and gives them the highest accuracy: why', () => {
    // With nothing to tell the conditions apart, the labels that maximise the likelihood are those of the rater with
    // the most judgments, internally consistent by construction: always-left labels look like a random truth.
    const t = madeData(13);
    const ds = dawidSkene({ item: t.item, rater: t.rater, label: t.outcome, nItems: t.itemNames.length, nRaters: t.raterNames.length, q: 3 });
    const accuracy = Array.from(ds.rater_accuracy);
    const positional = t.raterNames.indexOf('always-left');
    expect(accuracy[positional]).toBeGreaterThan(0.99);
    expect(accuracy[positional]).toBe(Math.max(...accuracy));
  });

  it('analyzeJudgments, with the sides, gives that rater about one half and never the highest accuracy', () => {
    // Seeds 13, 21 and 30 are those of the first 30 where the model without sides rates that rater the best.
    for (const seed of [13, 21, 30, 5]) {
      const report = analyzeJudgments(madeData(seed), { source: { kind: 'file', path: 'made.csv' }, bootstrap: 0, tiesAllowed: false });
      const positional = report.raters.find((r) => r.rater === 'always-left');
      expect(positional).toMatchObject({ judgments: 60, left_rate: 1, median_seconds: 1 });
      const best = Math.max(...report.raters.filter((r) => r.rater !== 'always-left').map((r) => r.ds_accuracy ?? 0));
      expect(positional?.ds_accuracy).toBeLessThan(best);
      expect(positional?.ds_accuracy).toBeCloseTo(0.5, 1);
    }
  });

  it('dawidSkene with every side unknown fits exactly the model without sides', () => {
    const t = madeData(3);
    const input = { item: t.item, rater: t.rater, label: t.outcome, nItems: t.itemNames.length, nRaters: t.raterNames.length, q: 3 };
    const plain = dawidSkene(input);
    const unknown = dawidSkene({ ...input, side: new Int8Array(t.n).fill(-1) });
    expect(Array.from(unknown.rater_accuracy)).toEqual(Array.from(plain.rater_accuracy));
    expect(Array.from(unknown.item_label)).toEqual(Array.from(plain.item_label));
  });
});
