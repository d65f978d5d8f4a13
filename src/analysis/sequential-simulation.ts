import type { StoppingRule } from '../batches/batch.schema.js';
import { lookStatistic } from '../batches/look-statistic.js';
import type { PastLook } from '../batches/reallocated-look.js';
import { evaluateLook, type LookPair } from '../batches/sequential-look.js';
import { comparisonAlpha } from '../batches/sequential-rule.js';
import { binomialTestP } from '../numbers/binomial-test.js';

// Monte Carlo of a sequential batch as it runs (issues 44 and 51), through the rule's own code (evaluateLook: the
// function the answer path calls). Raters arrive one after another, `concurrency` of them at work at a time; each is
// promised up to `perRater` pairs at consent (least filled first, one judgment a pair, as planPromise does) and
// answers them one by one; a pair completes at its K-th judgment, and a look is considered at each completion. Each
// rater leans: on the logit scale, their chance of choosing a (when not tying) is logit(winRate) + u, u ~ N(0, SD^2),
// drawn apart for each comparison. A stopped comparison's pairs leave the pool, but promises already made are still
// served: those answers after the stop (overrunning) are counted in the judgments the batch pays for. With
// `reallocate`, a stop's unused judgments buy new pairs (from `reserve` unused samples per comparison) for the
// comparisons still open, whose maxima rise.

export type SimulationInput = {
  /** Pairs per comparison at the start. */
  pairs: number;
  /** Judgment-level chance that a rater with no lean chooses a over b, per comparison (0.5: no difference). */
  winRates: number[];
  judgmentsPerPair: number;
  perRater: number;
  /** SD of the raters' leans on the logit scale. */
  raterLean: number;
  /** Chance that a judgment is a tie. */
  tieShare: number;
  /** Raters at work at once: how many answers are in flight when a look stops a comparison. */
  concurrency: number;
  rule: Pick<StoppingRule, 'looks' | 'lookEvery' | 'alpha' | 'spending'> & { futility?: StoppingRule['futility']; reallocate?: boolean };
  /** With reallocation: unused scenario samples each comparison may get new pairs from. */
  reserve: number;
  studies: number;
  random: () => number;
  /** Also rate every pair of each study once more without stopping, for the fixed design's tests (default true). */
  fixedDesign?: boolean;
  /** Called after each study (progress of a long run). */
  onStudy?: (done: number) => void;
};

export type ComparisonResult = {
  winRate: number;
  /** Share of studies whose comparison stopped for efficacy (under the null: the type I error), with its MC s.e. */
  rejectRate: number;
  standardError: number;
  futilityRate: number;
  /** Completed pairs at the look that stopped it (or all of them). */
  meanPairsUsed: number;
  /** Judgments served, those after the stop included, and the maximum (pairs at the start plus those reallocation added, times K). */
  meanJudgments: number;
  meanMaxJudgments: number;
  /** Share of looks that used the rater-clustered statistic. */
  clusteredShare: number;
  /** The fixed design (every pair rated, no stop): the exact test of pair majorities and the rater-clustered test (0 when not run). */
  fixedExactRate: number;
  fixedClusteredRate: number;
};

export type SimulationResult = { studies: number; comparisons: ComparisonResult[] };

type Pair = { comparison: number; accepted: number; held: number; votes: LookPair['votes'][number][]; entered: number | null; stopped: boolean };
type Comparison = { pairs: Pair[]; looks: PastLook[]; stopped: 'efficacy' | 'futility' | 'final' | null; usedPairs: number; reserve: number; judgments: number; clusteredLooks: number };
type Event = { time: number; rater: number; pair: Pair };

const logit = (p: number) => Math.log(p / (1 - p));

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** One rater's judgment of a pair: a tie, or a with the chance of their lean on that comparison. */
function vote(input: SimulationInput, lean: number, comparison: number, random: () => number): -1 | 0 | 1 {
  if (random() < input.tieShare) return 0;
  const p = 1 / (1 + Math.exp(-(logit(input.winRates[comparison] as number) + lean)));
  return random() < p ? 1 : -1;
}

/** Up to perRater open pairs, least filled (judgments and promises) first, ties broken at random. */
function promise(all: readonly Pair[], perRater: number, k: number, random: () => number): Pair[] {
  const open = all.filter((p) => !p.stopped && p.accepted + p.held < k).map((p) => ({ p, key: p.accepted + p.held + random() }));
  open.sort((x, y) => x.key - y.key);
  return open.slice(0, perRater).map((o) => o.p);
}

/** A stop's unused places buy pairs for the comparisons still open, in turn, within each one's reserve. */
function reallocate(comparisons: Comparison[], stopped: Comparison, k: number, all: Pair[]): void {
  let freed = 0;
  for (const p of stopped.pairs) if (p.stopped) freed += Math.max(0, k - p.accepted - p.held);
  let bought = Math.floor(freed / k);
  for (let progress = true; bought > 0 && progress; ) {
    progress = false;
    for (const [i, c] of comparisons.entries()) {
      if (bought === 0 || c.stopped !== null || c.reserve === 0) continue;
      const pair: Pair = { comparison: i, accepted: 0, held: 0, votes: [], entered: null, stopped: false };
      c.pairs.push(pair);
      all.push(pair);
      c.reserve--;
      bought--;
      progress = true;
    }
  }
}

/** A pair completed: the look the rule takes now, if one is due, and the stop (and reallocation) it decides. */
function afterCompletion(input: SimulationInput, comparisons: Comparison[], c: Comparison, all: Pair[]): void {
  const k = input.judgmentsPerPair;
  const completed = c.pairs.filter((p) => p.accepted >= k);
  const evaluation = evaluateLook({
    rule: { ...input.rule, reallocate: input.rule.reallocate ?? false, futility: input.rule.futility ?? null },
    comparisons: comparisons.length,
    earlier: c.looks,
    maxPairs: c.pairs.length,
    completed: completed.length,
    pairs: () => completed.map((p) => ({ entered: p.entered, votes: p.votes })),
  });
  if (!evaluation) return;
  const { decision, statistic } = evaluation;
  c.looks.push({ fraction: decision.fraction, information: decision.information, maxPairs: c.pairs.length, completed: statistic.completed, observedInformation: statistic.observedInformation });
  if (statistic.statistic === 'rater-clustered') c.clusteredLooks++;
  for (const p of completed) p.entered ??= c.looks.length;
  if (decision.decision === 'continue') return;
  c.stopped = decision.decision;
  c.usedPairs = statistic.completed;
  for (const p of c.pairs) if (p.accepted < k) p.stopped = true;
  if (input.rule.reallocate) reallocate(comparisons, c, k, all);
}

/** One batch, served and answered to its end; `stopping` false rates every pair (the fixed design). */
function runBatch(input: SimulationInput, stopping: boolean): Comparison[] {
  const k = input.judgmentsPerPair;
  const random = input.random;
  const comparisons: Comparison[] = input.winRates.map(() => ({ pairs: [], looks: [], stopped: null, usedPairs: 0, reserve: input.reserve, judgments: 0, clusteredLooks: 0 }));
  const all: Pair[] = [];
  comparisons.forEach((c, i) => {
    for (let j = 0; j < input.pairs; j++) c.pairs.push({ comparison: i, accepted: 0, held: 0, votes: [], entered: null, stopped: false });
    all.push(...c.pairs);
  });
  const leans: number[][] = [];
  const events: Event[] = [];
  const gap = input.perRater / input.concurrency;
  for (let time = 0; ; time += gap) {
    // Answers due before this rater arrives are given first, in time order.
    events.sort((x, y) => y.time - x.time);
    while (events.length > 0 && (events[events.length - 1] as Event).time <= time) answer(events.pop() as Event);
    const mine = promise(all, input.perRater, k, random);
    if (mine.length === 0) {
      if (events.length === 0) break;
      continue;
    }
    const rater = leans.push(input.winRates.map(() => input.raterLean * gaussian(random))) - 1;
    mine.forEach((p, j) => {
      p.held++;
      events.push({ time: time + j + random(), rater, pair: p });
    });
  }
  return comparisons;

  function answer(e: Event): void {
    const p = e.pair;
    const c = comparisons[p.comparison] as Comparison;
    p.held--;
    p.accepted++;
    p.votes.push({ rater: e.rater, vote: vote(input, (leans[e.rater] as number[])[p.comparison] as number, p.comparison, random) });
    c.judgments++;
    if (stopping && p.accepted === k && c.stopped === null) afterCompletion(input, comparisons, c, all);
  }
}

/** The fixed design's two tests on every pair, at the comparison's alpha. */
function fixedTests(c: Comparison, alpha: number): { exact: boolean; clustered: boolean } {
  const statistic = lookStatistic(c.pairs.map((p) => ({ weight: 1, votes: p.votes })));
  const exact = (binomialTestP(statistic.winsA, statistic.winsA + statistic.winsB) ?? 1) <= alpha;
  return { exact, clustered: statistic.pValue <= alpha };
}

export function simulateSequential(input: SimulationInput): SimulationResult {
  const alpha = comparisonAlpha(input.rule, input.winRates.length);
  const totals = input.winRates.map(() => ({ rejected: 0, futile: 0, pairs: 0, judgments: 0, max: 0, looks: 0, clustered: 0, fixedExact: 0, fixedClustered: 0 }));
  for (let s = 0; s < input.studies; s++) {
    const run = runBatch(input, true);
    const fixed = input.fixedDesign === false ? null : runBatch(input, false);
    run.forEach((c, i) => {
      const t = totals[i] as (typeof totals)[number];
      if (c.stopped === 'efficacy') t.rejected++;
      if (c.stopped === 'futility') t.futile++;
      t.pairs += c.stopped === null ? c.pairs.length : c.usedPairs;
      t.judgments += c.judgments;
      t.max += c.pairs.length * input.judgmentsPerPair;
      t.looks += c.looks.length;
      t.clustered += c.clusteredLooks;
      const tests = fixed ? fixedTests(fixed[i] as Comparison, alpha) : { exact: false, clustered: false };
      if (tests.exact) t.fixedExact++;
      if (tests.clustered) t.fixedClustered++;
    });
    input.onStudy?.(s + 1);
  }
  const n = input.studies;
  return {
    studies: n,
    comparisons: totals.map((t, i) => ({
      winRate: input.winRates[i] as number,
      rejectRate: t.rejected / n,
      standardError: Math.sqrt(((t.rejected / n) * (1 - t.rejected / n)) / n),
      futilityRate: t.futile / n,
      meanPairsUsed: t.pairs / n,
      meanJudgments: t.judgments / n,
      meanMaxJudgments: t.max / n,
      clusteredShare: t.looks > 0 ? t.clustered / t.looks : 0,
      fixedExactRate: t.fixedExact / n,
      fixedClusteredRate: t.fixedClustered / n,
    })),
  };
}
