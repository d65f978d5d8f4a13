import type { StoppingRule } from '../batches/batch.schema.js';
import { type LookStatistic, lookStatistic } from '../batches/look-statistic.js';
import type { PastLook } from '../batches/reallocated-look.js';
import { evaluateLook, type LookPair, waitsForRaters } from '../batches/sequential-look.js';
import { comparisonAlpha, type LookDecision } from '../batches/sequential-rule.js';
import { serveOrders } from '../batches/serve-order.js';
import { binomialTestP } from '../numbers/binomial-test.js';
import { heldBackComparisons, nextLookAt, takeRoom } from '../rating/look-room.js';

// Monte Carlo of a sequential batch as it runs (issues 44 and 51), through the rule's own code (evaluateLook: the
// function the answer path calls) and served as the server serves it (issue 51, item 8). Raters arrive one after
// another, `concurrency` of them at work at a time. At consent each is promised what the batch has open for them (up
// to `perRater`) and has reserved for them the pairs planPromise would choose: least filled first, then in serve order
// (the comparisons interleaved, src/batches/serve-order.ts), one a scenario sample, and a pair nobody holds yet only
// while its comparison's next look has room (src/rating/look-room.ts). They answer one pair after another; when their
// reservations are used up, the rest of the promise is leased to them as assignNextPair would (least filled, at random
// among equals, within the look room), and when nothing is open for them they finish short, paid all the same. A pair
// completes at its K-th judgment, and a look is considered at each completion. Each rater leans: on the logit scale,
// their chance of choosing a (when not tying) is logit(winRate) + u, u ~ N(0, SD^2), drawn apart for each comparison.
// A stopped comparison's pairs leave the pool; pairs still held at the stop are served (overrunning) and counted. With
// `reallocate`, a stop's unused judgments buy new pairs (from `reserve` unused samples per comparison) for the
// comparisons still open, whose maxima rise. Leases never lapse here: late answers are not simulated.

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
  /** Called at each look taken (before the study's onStudy), with the comparison's index, the statistic and the decision. */
  onLook?: (look: { comparison: number; statistic: LookStatistic; decision: LookDecision }) => void;
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
  /** Judgments served after the look that stopped the comparison (answers to pairs held at the stop). */
  meanAfterStop: number;
  meanMaxJudgments: number;
  /** Share of looks that used the rater-clustered statistic. */
  clusteredShare: number;
  /** The fixed design (every pair rated, no stop): the exact test of pair majorities and the rater-clustered test (0 when not run). */
  fixedExactRate: number;
  fixedClusteredRate: number;
};

export type SimulationResult = {
  studies: number;
  /** Raters admitted a batch, and those who finished short of their promise (nothing open for them when they got there). */
  meanRaters: number;
  meanShortRaters: number;
  /**
   * The comparisons the batch's raters were promised, over all comparisons: what it pays for, since a rater who
   * finishes short of the promise is paid all the same (docs/researcher/sequential-batches.md, "Serving").
   */
  meanPaidJudgments: number;
  comparisons: ComparisonResult[];
};

type Pair = {
  comparison: number;
  /** The scenario sample (pair j of every comparison is of sample j: comparisons are formed over the same samples). */
  sample: number;
  /** pairs.serve_order: src/batches/serve-order.ts; a pair added later comes last (src/batches/batch.queries.ts). */
  order: number;
  accepted: number;
  leased: number;
  reserved: number;
  votes: LookPair['votes'][number][];
  entered: number | null;
  stopped: boolean;
};
type Comparison = {
  pairs: Pair[];
  looks: PastLook[];
  stopped: 'efficacy' | 'futility' | 'final' | null;
  usedPairs: number;
  reserve: number;
  judgments: number;
  afterStop: number;
  clusteredLooks: number;
  /** Pairs with K judgments, and pairs handed out (a judgment, a lease or a reservation): listOpenComparisonServing's counts. */
  completed: number;
  started: number;
};
type Rater = { id: number; lean: number[]; arrival: number; promised: number; given: number; reserved: Pair[]; samples: Set<number> };
type Event = { time: number; rater: Rater; pair: Pair; step: number };
type Batch = { comparisons: Comparison[]; all: Pair[]; raters: number; short: number; paid: number };

const logit = (p: number) => Math.log(p / (1 - p));
const load = (p: Pair) => p.accepted + p.leased + p.reserved;

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** One rater's judgment of a pair: a tie, or a with the chance of their lean on that comparison. */
function vote(input: SimulationInput, lean: number, comparison: number, random: () => number): -1 | 0 | 1 {
  if (random() < input.tieShare) return 0;
  const p = 1 / (1 + Math.exp(-(logit(input.winRates[comparison] as number) + lean)));
  return random() < p ? 1 : -1;
}

/**
 * Per open comparison (by index), the pairs nobody holds yet that may still be handed out before its next look: what
 * lookRoom (src/rating/look-room.ts) reads from the database, here from the simulated pairs. Null without stopping.
 */
function roomOf(input: SimulationInput, batch: Batch, stopping: boolean): Map<number, number> | null {
  if (!stopping) return null;
  const room = new Map<number, number>();
  batch.comparisons.forEach((c, i) => {
    if (c.stopped !== null) return;
    const next = nextLookAt(input.rule, c.pairs.length, c.completed, c.looks[c.looks.length - 1]?.completed ?? null);
    room.set(i, next === null ? Number.POSITIVE_INFINITY : Math.max(0, next - c.started));
  });
  return room;
}

/** Open under K for a new rater: not stopped, fewer than K judgments, leases and reservations (OPEN_REGULAR_PAIR). */
const isOpen = (p: Pair, k: number) => !p.stopped && p.accepted < k && load(p) < k;

/**
 * The pairs reserved for a rater at consent, as planPromise (src/rating/rater-pool.ts) chooses them: least filled
 * first, then in serve order; one a scenario sample; a pair nobody holds yet only while its comparison has room.
 */
function planPromise(input: SimulationInput, batch: Batch, room: Map<number, number> | null): Pair[] {
  const open = batch.all.filter((p) => isOpen(p, input.judgmentsPerPair));
  open.sort((x, y) => load(x) - load(y) || x.order - y.order);
  const chosen: Pair[] = [];
  const samples = new Set<number>();
  for (const p of open) {
    if (chosen.length >= input.perRater) break;
    if (samples.has(p.sample)) continue;
    if (load(p) === 0 && !takeRoom(room, p.comparison)) continue;
    samples.add(p.sample);
    chosen.push(p);
  }
  return chosen;
}

/** A new rater's open places up to the cap, one a sample, whatever the look room (openPlaces in src/rating/rater-pool.ts). */
function openPlaces(input: SimulationInput, batch: Batch): number {
  const samples = new Set<number>();
  for (const p of batch.all) if (isOpen(p, input.judgmentsPerPair)) samples.add(p.sample);
  return Math.min(input.perRater, samples.size);
}

/** Fewest judgments and leases first, one at random among equals (pickLeastFilled in src/rating/assign-next-pair.ts). */
function pickLeastFilled(candidates: Pair[], random: () => number): Pair | undefined {
  if (candidates.length === 0) return undefined;
  const least = Math.min(...candidates.map((p) => p.accepted + p.leased));
  const tied = candidates.filter((p) => p.accepted + p.leased === least);
  return tied[Math.floor(random() * tied.length)] ?? tied[0];
}

/**
 * The rater's next pair, as assignNextPair gives it: within their promise, a pair reserved for them first (served even
 * after its comparison stopped), else an open pair of a sample they have not had whose comparison's next look has
 * room (or that someone already holds or judged); none: they finish.
 */
function nextPair(input: SimulationInput, batch: Batch, rater: Rater, stopping: boolean): Pair | undefined {
  const k = input.judgmentsPerPair;
  if (rater.given >= Math.min(input.perRater, rater.promised)) return undefined;
  const reserved = pickLeastFilled(rater.reserved.filter((p) => p.accepted < k), input.random);
  if (reserved) {
    rater.reserved.splice(rater.reserved.indexOf(reserved), 1);
    reserved.reserved--;
    reserved.leased++;
    return reserved;
  }
  const heldBack = new Set(heldBackComparisons(roomOf(input, batch, stopping)));
  const candidates = batch.all.filter((p) => isOpen(p, k) && !rater.samples.has(p.sample) && (load(p) > 0 || !heldBack.has(p.comparison)));
  const pair = pickLeastFilled(candidates, input.random);
  if (!pair) return undefined;
  if (load(pair) === 0) (batch.comparisons[pair.comparison] as Comparison).started++;
  pair.leased++;
  rater.samples.add(pair.sample);
  return pair;
}

/** A stop's unused places buy pairs for the comparisons still open, in turn, within each one's reserve. */
function reallocate(batch: Batch, stopped: Comparison, k: number): void {
  let freed = 0;
  for (const p of stopped.pairs) if (p.stopped) freed += Math.max(0, k - load(p));
  let bought = Math.floor(freed / k);
  let order = Math.max(...batch.all.map((p) => p.order));
  for (let progress = true; bought > 0 && progress; ) {
    progress = false;
    for (const [i, c] of batch.comparisons.entries()) {
      if (bought === 0 || c.stopped !== null || c.reserve === 0) continue;
      // The unused samples come in the same order for every comparison, after those the batch was formed from.
      const sample = c.pairs.length === 0 ? 0 : Math.max(...c.pairs.map((p) => p.sample)) + 1;
      const pair: Pair = { comparison: i, sample, order: ++order, accepted: 0, leased: 0, reserved: 0, votes: [], entered: null, stopped: false };
      c.pairs.push(pair);
      batch.all.push(pair);
      c.reserve--;
      bought--;
      progress = true;
    }
  }
}

/** A pair completed: the look the rule takes now, if one is due, and the stop (and reallocation) it decides. */
function afterCompletion(input: SimulationInput, batch: Batch, c: Comparison): void {
  const k = input.judgmentsPerPair;
  const completed = c.pairs.filter((p) => p.accepted >= k);
  const evaluation = evaluateLook({
    rule: { ...input.rule, reallocate: input.rule.reallocate ?? false, futility: input.rule.futility ?? null },
    comparisons: batch.comparisons.length,
    earlier: c.looks,
    maxPairs: c.pairs.length,
    completed: completed.length,
    pairs: () => completed.map((p) => ({ entered: p.entered, votes: p.votes })),
    waitForRaters: () => waitsForRaters({ plannedRaters: null, judgmentsPerPair: k, perRaterCap: input.perRater }, batch.all.length),
  });
  if (!evaluation) return;
  const { decision, statistic } = evaluation;
  input.onLook?.({ comparison: batch.comparisons.indexOf(c), statistic, decision });
  c.looks.push({ fraction: decision.fraction, information: decision.information, maxPairs: c.pairs.length, completed: statistic.completed, observedInformation: statistic.observedInformation });
  if (statistic.statistic === 'rater-clustered') c.clusteredLooks++;
  for (const p of completed) p.entered ??= c.looks.length;
  if (decision.decision === 'continue') return;
  c.stopped = decision.decision;
  c.usedPairs = statistic.completed;
  for (const p of c.pairs) if (p.accepted < k) p.stopped = true;
  if (input.rule.reallocate) reallocate(batch, c, k);
}

function newBatch(input: SimulationInput): Batch {
  const comparisons: Comparison[] = input.winRates.map(() => ({ pairs: [], looks: [], stopped: null, usedPairs: 0, reserve: input.reserve, judgments: 0, afterStop: 0, clusteredLooks: 0, completed: 0, started: 0 }));
  const comparisonOf = comparisons.flatMap((_, i) => Array.from({ length: input.pairs }, () => i));
  const orders = serveOrders(comparisonOf, comparisons.length);
  const all = comparisonOf.map((i, n): Pair => ({ comparison: i, sample: n % input.pairs, order: orders[n] as number, accepted: 0, leased: 0, reserved: 0, votes: [], entered: null, stopped: false }));
  for (const p of all) (comparisons[p.comparison] as Comparison).pairs.push(p);
  return { comparisons, all, raters: 0, short: 0, paid: 0 };
}

/** One batch, served and answered to its end; `stopping` false rates every pair (the fixed design: no look room). */
function runBatch(input: SimulationInput, stopping: boolean): Batch {
  const random = input.random;
  const batch = newBatch(input);
  const events: Event[] = [];
  const gap = input.perRater / input.concurrency;
  for (let time = 0; ; time += gap) {
    // Answers due before this rater arrives are given first, in time order (each answer may lease the next pair).
    for (let i = earliest(events); i >= 0 && (events[i] as Event).time <= time; i = earliest(events)) answer(events.splice(i, 1)[0] as Event);
    const rater = admit(time);
    if (!rater) {
      if (events.length === 0) break;
      continue;
    }
    serveNext(rater, 0, time);
  }
  return batch;

  /** A person at the consent page: turned away when nothing can be reserved now ("full"), else promised and reserved. */
  function admit(time: number): Rater | null {
    const mine = planPromise(input, batch, roomOf(input, batch, stopping));
    if (mine.length === 0) return null;
    const promised = stopping ? Math.max(mine.length, openPlaces(input, batch)) : mine.length;
    for (const p of mine) {
      if (load(p) === 0) (batch.comparisons[p.comparison] as Comparison).started++;
      p.reserved++;
    }
    batch.paid += promised;
    return { id: batch.raters++, lean: input.winRates.map(() => input.raterLean * gaussian(random)), arrival: time, promised, given: 0, reserved: mine, samples: new Set(mine.map((p) => p.sample)) };
  }

  /** The rater's next pair leased now, answered one step later than their last (its time within the step at random). */
  function serveNext(rater: Rater, step: number, now: number): void {
    const pair = nextPair(input, batch, rater, stopping);
    if (!pair) {
      if (rater.given < rater.promised) batch.short++;
      return;
    }
    rater.given++;
    events.push({ time: Math.max(now, rater.arrival + step + random()), rater, pair, step });
  }

  function answer(e: Event): void {
    const p = e.pair;
    const c = batch.comparisons[p.comparison] as Comparison;
    p.leased--;
    p.accepted++;
    p.votes.push({ rater: e.rater.id, vote: vote(input, e.rater.lean[p.comparison] as number, p.comparison, random) });
    c.judgments++;
    if (c.stopped !== null) c.afterStop++;
    if (p.accepted === input.judgmentsPerPair) {
      c.completed++;
      if (stopping && c.stopped === null) afterCompletion(input, batch, c);
    }
    serveNext(e.rater, e.step + 1, e.time);
  }
}

/** Where the earliest event is in the (short: one a rater at work) list, or -1. */
function earliest(events: readonly Event[]): number {
  let at = -1;
  for (let i = 0; i < events.length; i++) if (at < 0 || (events[i] as Event).time < (events[at] as Event).time) at = i;
  return at;
}

/** The fixed design's two tests on every pair, at the comparison's alpha. */
function fixedTests(c: Comparison, alpha: number): { exact: boolean; clustered: boolean } {
  const statistic = lookStatistic(c.pairs.map((p) => ({ weight: 1, votes: p.votes })));
  const exact = (binomialTestP(statistic.winsA, statistic.winsA + statistic.winsB) ?? 1) <= alpha;
  return { exact, clustered: statistic.pValue <= alpha };
}

export function simulateSequential(input: SimulationInput): SimulationResult {
  const alpha = comparisonAlpha(input.rule, input.winRates.length);
  const totals = input.winRates.map(() => ({ rejected: 0, futile: 0, pairs: 0, judgments: 0, afterStop: 0, max: 0, looks: 0, clustered: 0, fixedExact: 0, fixedClustered: 0 }));
  const batches = { raters: 0, short: 0, paid: 0 };
  for (let s = 0; s < input.studies; s++) {
    const run = runBatch(input, true);
    const fixed = input.fixedDesign === false ? null : runBatch(input, false);
    batches.raters += run.raters;
    batches.short += run.short;
    batches.paid += run.paid;
    run.comparisons.forEach((c, i) => {
      const t = totals[i] as (typeof totals)[number];
      if (c.stopped === 'efficacy') t.rejected++;
      if (c.stopped === 'futility') t.futile++;
      t.pairs += c.stopped === null ? c.pairs.length : c.usedPairs;
      t.judgments += c.judgments;
      t.afterStop += c.afterStop;
      t.max += c.pairs.length * input.judgmentsPerPair;
      t.looks += c.looks.length;
      t.clustered += c.clusteredLooks;
      const tests = fixed ? fixedTests(fixed.comparisons[i] as Comparison, alpha) : { exact: false, clustered: false };
      if (tests.exact) t.fixedExact++;
      if (tests.clustered) t.fixedClustered++;
    });
    input.onStudy?.(s + 1);
  }
  const n = input.studies;
  return {
    studies: n,
    meanRaters: batches.raters / n,
    meanShortRaters: batches.short / n,
    meanPaidJudgments: batches.paid / n,
    comparisons: totals.map((t, i) => ({
      winRate: input.winRates[i] as number,
      rejectRate: t.rejected / n,
      standardError: Math.sqrt(((t.rejected / n) * (1 - t.rejected / n)) / n),
      futilityRate: t.futile / n,
      meanPairsUsed: t.pairs / n,
      meanJudgments: t.judgments / n,
      meanAfterStop: t.afterStop / n,
      meanMaxJudgments: t.max / n,
      clusteredShare: t.looks > 0 ? t.clustered / t.looks : 0,
      fixedExactRate: t.fixedExact / n,
      fixedClusteredRate: t.fixedClustered / n,
    })),
  };
}
