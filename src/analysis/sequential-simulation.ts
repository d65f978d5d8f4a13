import type { StoppingRule } from '../batches/batch.schema.js';
import { comparisonAlpha, decideLook, lookSchedule } from '../batches/sequential-rule.js';
import { binomialTestP } from '../numbers/binomial-test.js';

// Monte Carlo of a comparison under a stopping rule, through the rule's own code (decideLook, lookSchedule: the
// functions the answer path calls), against the fixed design that rates every pair (issue 44). Pair outcomes are drawn
// as pairs complete: a tie with `tieShare`, else condition a with `winRate`.

export type SimulationInput = {
  pairs: number;
  rule: Pick<StoppingRule, 'looks' | 'lookEvery' | 'alpha' | 'spending'> & { futility?: StoppingRule['futility'] };
  comparisons: number;
  winRate: number;
  tieShare: number;
  /**
   * Each look is taken 0, lateBy/2 or lateBy completed pairs late (at random), as when answers arrive together: the
   * bounds are then computed at the information actually reached.
   */
  lateBy: number;
  studies: number;
  random: () => number;
};

export type SimulationResult = {
  studies: number;
  /** Share of studies whose comparison stopped for efficacy (under the null: the type I error). */
  rejectRate: number;
  /** Its Monte Carlo standard error. */
  standardError: number;
  /** Share of studies stopped for futility (0 without futility stopping). */
  futilityRate: number;
  meanPairs: number;
  meanLooks: number;
  /** The fixed design's rejection rate: the exact binomial test of every pair's majority at the comparison's alpha. */
  fixedRejectRate: number;
};

type Study = { rejected: boolean; futile: boolean; pairsUsed: number; looks: number; fixedRejected: boolean };

function simulateStudy(input: SimulationInput, alpha: number, schedule: readonly number[]): Study {
  const outcomes: ('a' | 'b' | 'tie')[] = [];
  for (let i = 0; i < input.pairs; i++) outcomes.push(input.random() < input.tieShare ? 'tie' : input.random() < input.winRate ? 'a' : 'b');
  const fixedA = outcomes.filter((o) => o === 'a').length;
  const fixedDecisive = outcomes.filter((o) => o !== 'tie').length;
  const fixedRejected = (binomialTestP(fixedA, fixedDecisive) ?? 1) <= alpha;
  const delays = schedule.map(() => Math.round((Math.floor(input.random() * 3) * input.lateBy) / 2));
  const earlier: number[] = [];
  let winsA = 0;
  let winsB = 0;
  let next = 0;
  for (let n = 1; n <= input.pairs; n++) {
    const outcome = outcomes[n - 1];
    if (outcome === 'a') winsA++;
    else if (outcome === 'b') winsB++;
    const final = n === input.pairs;
    const at = schedule[next];
    if (!final && (at === undefined || n < at + (delays[next] as number))) continue;
    const decision = decideLook({ alpha, spending: input.rule.spending, futility: input.rule.futility ?? null, maxPairs: input.pairs, earlier, completed: n, winsA, winsB, final });
    if (!decision) continue;
    earlier.push(decision.fraction);
    while (next < schedule.length && (schedule[next] as number) <= n) next++;
    if (decision.decision === 'efficacy') return { rejected: true, futile: false, pairsUsed: n, looks: earlier.length, fixedRejected };
    if (decision.decision === 'futility') return { rejected: false, futile: true, pairsUsed: n, looks: earlier.length, fixedRejected };
    if (decision.decision === 'final') break;
  }
  return { rejected: false, futile: false, pairsUsed: input.pairs, looks: earlier.length, fixedRejected };
}

export function simulateSequential(input: SimulationInput): SimulationResult {
  const alpha = comparisonAlpha(input.rule, input.comparisons);
  const schedule = lookSchedule(input.rule, input.pairs);
  let rejected = 0;
  let futile = 0;
  let fixed = 0;
  let pairs = 0;
  let looks = 0;
  for (let s = 0; s < input.studies; s++) {
    const study = simulateStudy(input, alpha, schedule);
    if (study.rejected) rejected++;
    if (study.futile) futile++;
    if (study.fixedRejected) fixed++;
    pairs += study.pairsUsed;
    looks += study.looks;
  }
  const rate = rejected / input.studies;
  return {
    studies: input.studies,
    rejectRate: rate,
    standardError: Math.sqrt((rate * (1 - rate)) / input.studies),
    futilityRate: futile / input.studies,
    meanPairs: pairs / input.studies,
    meanLooks: looks / input.studies,
    fixedRejectRate: fixed / input.studies,
  };
}
