// Bootstrap, length control, position bias, sample size, Dawid-Skene and dialogue metrics: checked against values
// derived by hand (closed forms) and against R's quantile type 7.
import { describe, expect, it } from 'vitest';
import { bootstrapWinRate, clusterBootstrap, quantileType7 } from '../../src/analysis/bootstrap.js';
import { dawidSkene } from '../../src/analysis/dawid-skene.js';
import { dialogueMetrics, wordsPerTurn } from '../../src/analysis/dialogue-metrics.js';
import { fitLogistic, lengthControlledWinRate as lengthControlledFromRows } from '../../src/analysis/length-control.js';

type WordsItem = { winsA: number; winsB: number; aWords: number; bWords: number };
const lengthControlledWinRate = (items: WordsItem[]) =>
  lengthControlledFromRows({
    winsA: Float64Array.from(items, (i) => i.winsA),
    winsB: Float64Array.from(items, (i) => i.winsB),
    aWords: Float64Array.from(items, (i) => i.aWords),
    bWords: Float64Array.from(items, (i) => i.bWords),
  });
import { positionBias } from '../../src/analysis/position-bias.js';
import { planSampleSize } from '../../src/analysis/sample-size.js';
import { wilsonHalfWidth } from '../../src/analysis/wilson.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';

const logit = (p: number) => Math.log(p / (1 - p));

describe('quantileType7', () => {
  it('on 1,2,3,4,10, matches R quantile(type = 7) at 2.5%, 50% and 97.5%', () => {
    const x = [1, 2, 3, 4, 10];
    // R: quantile(c(1,2,3,4,10), c(.025,.5,.975)) -> 1.1, 3.0, 9.4
    expect(quantileType7(x, 0.025)).toBeCloseTo(1.1, 12);
    expect(quantileType7(x, 0.5)).toBe(3);
    expect(quantileType7(x, 0.975)).toBeCloseTo(9.4, 12);
  });
});

describe('seededRandom, the generator shared by seeded casts and the bootstrap', () => {
  it('for seed 42, gives mulberry32\'s published first draws, so seeded casts and intervals stay as they were', () => {
    const random = seededRandom(42);
    // mulberry32(42): 0.6011037519201636, 0.44829055899754167, 0.8524657934904099 (the reference C/JS implementation).
    expect([random(), random(), random()]).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
  });
  it('drives clusterBootstrap: a replicate draws the clusters seededRandom(seed) picks', () => {
    const draws: number[] = [];
    clusterBootstrap(5, (m) => (draws.push(...m), 0), { replicates: 1, seed: 9 });
    const random = seededRandom(9);
    const want = new Array<number>(5).fill(0);
    for (let d = 0; d < 5; d++) want[Math.floor(random() * 5)]! += 1;
    expect(draws).toEqual(want);
  });
});

describe('clusterBootstrap and bootstrapWinRate', () => {
  const clusterWinsA = Float64Array.from({ length: 40 }, (_, i) => ((i * 7) % 10) + 1);
  const clusterWinsB = Float64Array.from({ length: 40 }, (_, i) => ((i * 3) % 5) + 1);
  it('with the same seed, gives the same interval twice; with another seed, a different one', () => {
    const one = bootstrapWinRate({ clusterWinsA, clusterWinsB }, { replicates: 500, seed: 7 });
    const two = bootstrapWinRate({ clusterWinsA, clusterWinsB }, { replicates: 500, seed: 7 });
    const three = bootstrapWinRate({ clusterWinsA, clusterWinsB }, { replicates: 500, seed: 8 });
    expect(one.ci95).toEqual(two.ci95);
    expect(one.ci95).not.toEqual(three.ci95);
  });
  it('for clustered data, gives an interval that contains the point estimate and is wider than Wilson on judgments', () => {
    const a = clusterWinsA.reduce((s, x) => s + x, 0);
    const b = clusterWinsB.reduce((s, x) => s + x, 0);
    const boot = bootstrapWinRate({ clusterWinsA, clusterWinsB }, { replicates: 2000, seed: 1 });
    const [low, high] = boot.ci95 as [number, number];
    expect(low).toBeLessThan(a / (a + b));
    expect(high).toBeGreaterThan(a / (a + b));
    expect((high - low) / 2).toBeGreaterThan(wilsonHalfWidth(a, a + b) as number);
  });
  it('with raters resampled too, still returns a seeded interval around the estimate', () => {
    const rowCluster = Int32Array.from({ length: 200 }, (_, j) => j % 20);
    const rowRater = Int32Array.from({ length: 200 }, (_, j) => j % 7);
    const rowOutcome = Int8Array.from({ length: 200 }, (_, j) => (j % 3 === 0 ? 1 : j % 11 === 0 ? 2 : 0));
    const wa = new Float64Array(20);
    const wb = new Float64Array(20);
    rowOutcome.forEach((o, j) => (o === 0 ? (wa[rowCluster[j]!]! += 1) : o === 1 ? (wb[rowCluster[j]!]! += 1) : 0));
    const boot = bootstrapWinRate({ clusterWinsA: wa, clusterWinsB: wb, raters: { rowCluster, rowRater, rowOutcome, nRaters: 7 } }, { replicates: 300, seed: 3 });
    const again = bootstrapWinRate({ clusterWinsA: wa, clusterWinsB: wb, raters: { rowCluster, rowRater, rowOutcome, nRaters: 7 } }, { replicates: 300, seed: 3 });
    expect(boot.ci95).toEqual(again.ci95);
    expect(boot.ci95![0]).toBeLessThan(boot.ci95![1]);
  });
  it('with raters resampled, when raters differ in which side they favour, gives a wider interval than pairs alone', () => {
    // 60 pairs x 6 raters: raters 0-2 choose a 90% of the time, raters 3-5 only 30%; the pairs themselves are alike.
    const rowCluster = Int32Array.from({ length: 360 }, (_, j) => Math.floor(j / 6));
    const rowRater = Int32Array.from({ length: 360 }, (_, j) => j % 6);
    const rowOutcome = Int8Array.from({ length: 360 }, (_, j) => ((j % 6) < 3 ? (Math.floor(j / 6) % 10 === 0 ? 1 : 0) : Math.floor(j / 6) % 10 < 3 ? 0 : 1));
    const wa = new Float64Array(60);
    const wb = new Float64Array(60);
    rowOutcome.forEach((o, j) => (o === 0 ? (wa[rowCluster[j]!]! += 1) : (wb[rowCluster[j]!]! += 1)));
    const pairsOnly = bootstrapWinRate({ clusterWinsA: wa, clusterWinsB: wb }, { replicates: 1000, seed: 4 }).ci95!;
    const twoWay = bootstrapWinRate({ clusterWinsA: wa, clusterWinsB: wb, raters: { rowCluster, rowRater, rowOutcome, nRaters: 6 } }, { replicates: 1000, seed: 4 }).ci95!;
    expect(twoWay[1] - twoWay[0]).toBeGreaterThan(2 * (pairsOnly[1] - pairsOnly[0]));
  });
  it('bootstrapWinRate\'s fast path, with the same seed, gives exactly the interval of the generic clusterBootstrap', () => {
    const generic = clusterBootstrap(
      clusterWinsA.length,
      (m) => {
        let a = 0;
        let b = 0;
        m.forEach((k, c) => {
          a += k * clusterWinsA[c]!;
          b += k * clusterWinsB[c]!;
        });
        return a / (a + b);
      },
      { replicates: 400, seed: 11 },
    );
    expect(bootstrapWinRate({ clusterWinsA, clusterWinsB }, { replicates: 400, seed: 11 }).ci95).toEqual(generic.ci95);
  });
  it('when nothing can be resampled, returns no interval with a reason', () => {
    expect(clusterBootstrap(0, () => 1, { replicates: 10, seed: 1 })).toMatchObject({ ci95: null, reason: expect.any(String) });
    expect(bootstrapWinRate({ clusterWinsA: new Float64Array(3), clusterWinsB: new Float64Array(3) }, { replicates: 10, seed: 1 })).toMatchObject({
      ci95: null,
      undefined_replicates: 10,
    });
  });
});

describe('fitLogistic and lengthControlledWinRate', () => {
  it('with a two-valued covariate (a saturated model), recovers logit(p0) and logit(p1) - logit(p0) exactly', () => {
    const fit = fitLogistic([
      { successes: 30, trials: 40, x: [0] },
      { successes: 12, trials: 40, x: [1] },
    ]);
    expect(fit.coef).not.toBeNull();
    if (fit.coef === null) return;
    expect(Math.abs(fit.coef[0]! - logit(0.75))).toBeLessThan(1e-9);
    expect(Math.abs(fit.coef[1]! - (logit(0.3) - logit(0.75)))).toBeLessThan(1e-9);
    // Standard errors of a saturated logistic model: sqrt(1/(n p (1-p))) for the intercept.
    expect(Math.abs(fit.se[0]! - Math.sqrt(1 / (40 * 0.75 * 0.25)))).toBeLessThan(1e-9);
  });
  it('when a is more verbose and verbosity explains the wins, gives an adjusted win rate below the raw one', () => {
    const items = [
      ...Array.from({ length: 50 }, () => ({ winsA: 4, winsB: 1, aWords: 30, bWords: 16 })),
      ...Array.from({ length: 50 }, () => ({ winsA: 3, winsB: 2, aWords: 20, bWords: 20 })),
    ];
    const lc = lengthControlledWinRate(items);
    expect(lc.raw_win_rate_a).toBeCloseTo(0.7, 12);
    expect(Math.abs(lc.adjusted_win_rate_a! - 0.6)).toBeLessThan(1e-9);
    expect(lc.length_coef!).toBeGreaterThan(0);
    expect(lc.ci95![0]).toBeLessThan(0.6);
  });
  it('when every pair has the same length difference, reports no adjusted rate and why', () => {
    const lc = lengthControlledWinRate([{ winsA: 3, winsB: 1, aWords: 30, bWords: 16 }, { winsA: 2, winsB: 2, aWords: 30, bWords: 16 }]);
    expect(lc).toMatchObject({ adjusted_win_rate_a: null, reason: expect.stringMatching(/singular/) });
  });
  it('without words per turn, reports no adjusted rate and why', () => {
    expect(lengthControlledWinRate([{ winsA: 1, winsB: 0, aWords: NaN, bWords: NaN }])).toMatchObject({ adjusted_win_rate_a: null, reason: expect.any(String) });
  });
});

describe('positionBias', () => {
  it('from side-split counts, gives the left rate with its Wilson interval and exact test, and the split win rates', () => {
    const pb = positionBias({ leftAWinsA: 40, leftAWinsB: 10, leftBWinsA: 20, leftBWinsB: 30 });
    expect(pb.n).toBe(100);
    expect(pb.left_chosen).toBe(70);
    expect(pb.left_rate).toBe(0.7);
    // Independent values: the Wilson formula in float64 and the exact binomial sum in rational arithmetic (Python).
    expect(Math.abs(pb.ci95![0] - 0.6041514536665332)).toBeLessThan(1e-12);
    expect(Math.abs(pb.ci95![1] - 0.7810511470506724)).toBeLessThan(1e-12);
    expect(Math.abs(pb.p_value! - 7.85013964559367e-5) / 7.85013964559367e-5).toBeLessThan(1e-9);
    expect(pb.a_shown_left.win_rate_a).toBe(0.8);
    expect(pb.a_shown_right.win_rate_a).toBe(0.4);
  });
  it('with no judgments, is null with a reason', () => {
    expect(positionBias({ leftAWinsA: 0, leftAWinsB: 0, leftBWinsA: 0, leftBWinsB: 0 })).toMatchObject({ left_rate: null, p_value: null, reason: expect.any(String) });
  });
});

describe('planSampleSize', () => {
  it('at a 50% win rate and ±5 points, asks for the smallest n whose Wilson half-width is under 5 points', () => {
    const plan = planSampleSize({ winsA: 50, winsB: 50, ties: 0 });
    const n = plan.decisive_needed as number;
    expect(wilsonHalfWidth(n / 2, n)! <= 0.05).toBe(true);
    expect(wilsonHalfWidth((n - 1) / 2, n - 1)! > 0.05).toBe(true);
    expect(n).toBeGreaterThan(370);
    expect(n).toBeLessThan(390);
    expect(plan.judgments_needed).toBe(n - 100);
  });
  it('with ties and a design effect, scales the count up; with enough judgments, needs none', () => {
    const base = planSampleSize({ winsA: 60, winsB: 40, ties: 0 }).decisive_needed as number;
    const withTies = planSampleSize({ winsA: 60, winsB: 40, ties: 100 }, 0.05, 2);
    expect(withTies.decisive_needed).toBe(base * 2);
    expect(withTies.judgments_needed).toBe(base * 2 * 2 - 200);
    expect(planSampleSize({ winsA: 6000, winsB: 4000, ties: 0 }).judgments_needed).toBe(0);
  });
  it('with no decisive judgments, says it cannot plan', () => {
    expect(planSampleSize({ winsA: 0, winsB: 0, ties: 4 })).toMatchObject({ judgments_needed: null, reason: expect.any(String) });
  });
});

describe('dawidSkene', () => {
  it('with four careful raters and one who answers at random, rates the careful ones as more accurate', () => {
    const nItems = 200;
    const item: number[] = [];
    const rater: number[] = [];
    const label: number[] = [];
    for (let i = 0; i < nItems; i++) {
      const truth = i % 3 === 0 ? 1 : 0;
      for (let r = 0; r < 5; r++) {
        item.push(i);
        rater.push(r);
        // Raters 0-3 are right 9 times in 10; rater 4 alternates regardless of the truth.
        label.push(r < 4 ? ((i + r) % 10 === 0 ? 1 - truth : truth) : i % 2);
      }
    }
    const ds = dawidSkene({ item: Int32Array.from(item), rater: Int32Array.from(rater), label: Int32Array.from(label), nItems, nRaters: 5, q: 2 });
    expect(ds.converged).toBe(true);
    for (let r = 0; r < 4; r++) expect(ds.rater_accuracy[r]!).toBeGreaterThan(0.85);
    expect(ds.rater_accuracy[4]!).toBeLessThan(0.7);
    const correct = Array.from(ds.item_label).filter((l, i) => l === (i % 3 === 0 ? 1 : 0)).length;
    expect(correct).toBe(nItems);
  });
});

describe('dialogueMetrics', () => {
  it('per condition, counts words per spoken turn, turns, non-verbal share, repetition and who left when', () => {
    const metrics = dialogueMetrics([
      {
        mode: 'AGENTS',
        model: 'm',
        endReason: 'left',
        turns: [
          { speaker: 1, action: 'speak', text: 'I am going to the shop now' },
          { speaker: 2, action: 'non-verbal', text: 'nods' },
          { speaker: 1, action: 'speak', text: 'I am going to the park' },
          { speaker: 2, action: 'leave', text: '' },
        ],
      },
      { mode: 'SCRIPT', model: 'm', endReason: 'script', turns: [{ speaker: 1, action: 'speak', text: 'Hello there' }, { speaker: 2, action: 'speak', text: 'Hi' }] },
    ]);
    const agents = metrics.find((m) => m.condition === 'AGENTS:m')!;
    expect(agents.words_per_turn).toBe(6.5);
    expect(agents.turns_per_dialogue).toBe(4);
    expect(agents.non_verbal_share).toBe(0.25);
    // Speaker 1's trigrams: 5 in turn one, 4 in turn two of which "i am going", "am going to", "going to the" repeat.
    expect(agents.repetition).toBeCloseTo(3 / 9, 12);
    expect(agents).toMatchObject({ left_share: 1, left_at_turn: 3, left_by: { speaker_1: 0, speaker_2: 1 } });
    const script = metrics.find((m) => m.condition === 'SCRIPT:m')!;
    expect(script).toMatchObject({ words_per_turn: 1.5, repetition: null, left_share: 0, left_at_turn: null });
    expect(Number.isNaN(wordsPerTurn([]))).toBe(true);
  });
});
