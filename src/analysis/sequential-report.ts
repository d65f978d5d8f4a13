import { getBatchRow } from '../batches/batch.queries.js';
import type { StoppingRule } from '../batches/batch.schema.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { Db } from '../db/connection.js';
import { stagewisePValue } from '../numbers/group-sequential.js';
import { type ComparisonStopRow, listComparisonStops, listLooks, type SequentialLookRow, type StopReason } from '../rating/sequential.queries.js';
import { wilsonInterval } from './wilson.js';

// What a sequential batch's report says of each comparison (issue 44): where it stopped and why, the sequential
// p-value and the repeated confidence interval (valid whatever the looks), and the naive estimate beside them,
// labelled, because stopping when a bound is crossed biases the naive win rate away from one half.

export type SequentialSummary = {
  comparison: string;
  state: 'running' | 'stopped';
  reason: StopReason | null;
  look: number;
  /** The last look's bounds on |z|: efficacy (null: none at that look) and futility (null: none), and its |z|. */
  bounds: { efficacy: number | null; futility: number | null; z: number } | null;
  plannedLooks: number;
  pairsUsed: number;
  maxPairs: number;
  ties: number;
  winsA: number;
  winsB: number;
  alpha: number;
  /** The share of decisive pairs won by condition a, with a 95% Wilson interval that ignores the design. */
  naive: { winRate: number | null; ci95: [number, number] | null };
  /** Stage-wise ordering p-value (Fairbanks & Madsen 1982; J&T 8.4), once the comparison has stopped. */
  sequentialP: number | null;
  /** Repeated confidence interval at the last look (J&T ch. 9): Wilson's score interval at that look's bound. */
  repeatedCi: [number, number] | null;
};

export function summariseComparison(comparison: ComparisonStopRow, looks: readonly SequentialLookRow[]): SequentialSummary {
  const last = looks[looks.length - 1];
  const name = `${comparison.condition_a} vs ${comparison.condition_b}`;
  const stopped = comparison.stopped_at !== null;
  if (!last) {
    return { comparison: name, state: stopped ? 'stopped' : 'running', reason: comparison.stop_reason, look: 0, bounds: null, plannedLooks: 0, pairsUsed: 0, maxPairs: 0, ties: 0, winsA: 0, winsB: 0, alpha: 0, naive: { winRate: null, ci95: null }, sequentialP: null, repeatedCi: null };
  }
  const decisive = last.wins_a + last.wins_b;
  const fractions = looks.map((l) => l.information_fraction);
  const critical = looks.map((l) => l.critical_z ?? Infinity);
  const bound = last.critical_z;
  return {
    comparison: name,
    state: stopped ? 'stopped' : 'running',
    reason: comparison.stop_reason,
    look: last.look,
    bounds: { efficacy: last.critical_z, futility: last.futility_z, z: last.z },
    plannedLooks: last.planned_looks,
    pairsUsed: last.completed_pairs,
    maxPairs: last.max_pairs,
    ties: last.ties,
    winsA: last.wins_a,
    winsB: last.wins_b,
    alpha: last.alpha,
    naive: { winRate: decisive > 0 ? last.wins_a / decisive : null, ci95: wilsonInterval(last.wins_a, decisive) },
    sequentialP: stopped ? stagewisePValue(fractions, critical, looks.length - 1, last.z) : null,
    repeatedCi: bound === null ? [0, 1] : wilsonInterval(last.wins_a, decisive, bound),
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

const STOP_WORDS: Record<StopReason, string> = {
  efficacy: 'a bound was crossed: the conditions differ',
  futility: 'futility: a difference of the planned size is unlikely to be shown',
  final: 'last look: every pair complete, no bound crossed',
};

function boundWords(bounds: NonNullable<SequentialSummary['bounds']>): string {
  const efficacy = bounds.efficacy === null ? 'no efficacy bound' : `efficacy |z| >= ${bounds.efficacy.toFixed(3)}`;
  const futility = bounds.futility === null ? 'no futility bound' : `futility |z| < ${bounds.futility.toFixed(3)}`;
  return `${efficacy}, ${futility}; observed |z| = ${bounds.z.toFixed(3)}`;
}

/** Lines for the CLI and the report: one paragraph per comparison. */
export function sequentialLines(summary: SequentialSummary): string[] {
  const where =
    summary.state === 'stopped'
      ? `stopped at look ${summary.look} of ${summary.plannedLooks} (${STOP_WORDS[summary.reason ?? 'final']})`
      : `running: ${summary.look} of ${summary.plannedLooks} looks taken, no bound crossed`;
  const lines = [`${summary.comparison}: ${where}; ${summary.pairsUsed} of ${summary.maxPairs} pairs completed, ${summary.ties} tied (left out)`];
  if (summary.bounds) lines.push(`  bounds at look ${summary.look}: ${boundWords(summary.bounds)}`);
  if (summary.naive.winRate !== null && summary.naive.ci95) {
    lines.push(`  naive win rate of ${summary.comparison.split(' vs ')[0]}: ${pct(summary.naive.winRate)} (95% CI ${pct(summary.naive.ci95[0])}-${pct(summary.naive.ci95[1])}; ignores the sequential design, biased when stopped early)`);
  }
  if (summary.repeatedCi) lines.push(`  repeated confidence interval (level ${pct(1 - summary.alpha)}, valid at any look): ${pct(summary.repeatedCi[0])}-${pct(summary.repeatedCi[1])}`);
  if (summary.sequentialP !== null) lines.push(`  sequential p-value (stage-wise ordering): ${summary.sequentialP < 1e-4 ? summary.sequentialP.toExponential(2) : summary.sequentialP.toFixed(4)}`);
  return lines;
}

function futilityMethods(rule: StoppingRule): string {
  const f = rule.futility;
  if (!f) return '';
  return (
    `A comparison also stopped for futility when |z| fell below a two-sided futility bound from ${rule.spending === 'pocock' ? 'Pocock' : "O'Brien-Fleming"}-type beta spending (beta ${f.beta}) at the drift of a pair-majority win rate of ${f.effect} over the comparison's pairs (rpact's bsOF/bsP, sided = 2); ` +
    (f.binding ? 'the futility bounds were binding, and the efficacy bounds were computed accounting for them. ' : 'the futility bounds were non-binding: the efficacy bounds were computed ignoring them, so the type I error holds whether or not a futility stop is obeyed. ')
  );
}

/** The methods paragraph of a sequential batch's report. */
export function sequentialMethods(rule: StoppingRule, comparisons: number): string {
  const schedule = rule.looks !== undefined ? `${rule.looks} looks equally spaced over each comparison's pairs` : `a look every ${rule.lookEvery} completed pairs`;
  const family = rule.spending === 'pocock' ? 'a Pocock-type' : "an O'Brien-Fleming-type";
  const split = comparisons > 1 ? ` The family-wise alpha of ${rule.alpha} was split equally over the ${comparisons} comparisons (Bonferroni: ${+(rule.alpha / comparisons).toPrecision(4)} each).` : '';
  return (
    `Each comparison followed a group-sequential design with ${schedule}, two-sided alpha ${rule.alpha}, and ${family} Lan-DeMets alpha-spending function (Lan & DeMets 1983; ${rule.spending === 'pocock' ? 'Pocock 1977' : "O'Brien & Fleming 1979"}), with bounds computed by recursive numerical integration at the information fractions actually reached (Jennison & Turnbull 2000, ch. 7 and 19).${split} ` +
    'A pair entered once it had all its judgments; its outcome was its majority, and tied pairs were left out of the information. At each look the exact two-sided binomial test of pair majorities against 1/2 was applied at the nominal level of the z-scale bound, which is conservative for a discrete statistic. ' +
    futilityMethods(rule) +
    'Reported beside the naive win rate are the stage-wise ordering p-value and the repeated confidence interval (Jennison & Turnbull 2000, ch. 8-9).'
  );
}

/** A sequential batch's notes for its analysis report: each comparison's lines, then the methods paragraph. */
export function readSequentialNotes(db: Db, batchId: number): string[] {
  const row = getBatchRow(db, batchId);
  const rule = row ? readBatchSettings(row).stopping : null;
  if (!row || !rule) return [];
  const stops = listComparisonStops(db, batchId);
  const lines = stops.map((c) => `Sequential stopping: ${sequentialLines(summariseComparison(c, listLooks(db, c.id))).map((l) => l.trim()).join('; ')}.`);
  return [...lines, `Methods: ${sequentialMethods(rule, stops.length)}`];
}
