import { getBatchRow } from '../batches/batch.queries.js';
import type { StoppingRule } from '../batches/batch.schema.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import { informationScale } from '../batches/reallocated-look.js';
import type { Db } from '../db/connection.js';
import { stagewisePValue } from '../numbers/group-sequential.js';
import { listReallocations, type ReallocationRow } from '../rating/reallocation.queries.js';
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
  // On the scale of the last maximum: a maximum raised by reallocation changes the spending, not the looks' correlation.
  const fractions = informationScale(
    looks.map((l) => ({ fraction: l.information_fraction, maxPairs: l.max_pairs })),
    last.max_pairs,
  );
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

const pairsText = (n: number) => `${n} pair${n === 1 ? '' : 's'}`;

/** One line per reallocation (a comparison stopped under `stopping.reallocate`): what moved where, or why nothing did. */
export function reallocationLines(rows: readonly ReallocationRow[]): string[] {
  return rows.map((r) => {
    const head = `reallocation after ${r.stopped} stopped (${r.stop_reason}): `;
    const bought = Math.floor(r.freed_judgments / r.judgments_per_pair);
    if (bought === 0) return `${head}${r.freed_judgments === 0 ? 'no judgment was left unbought' : `only ${r.freed_judgments} judgment(s) left unbought, fewer than one pair's ${r.judgments_per_pair}`}, so nothing moved`;
    const freed = `${r.freed_judgments} judgments no longer needed (${pairsText(bought)} of ${r.judgments_per_pair})`;
    const given = r.receivers.map((x) => `${pairsText(x.pairs)} to ${x.comparison}`).join(', ');
    const raters = `raters paid for: at most ${r.raters_after} of the budget's ${r.budget_raters}`;
    const why =
      r.limited_by === 'no-open-comparison'
        ? 'no comparison is still open'
        : r.limited_by === 'no-unused-pair'
          ? 'the open comparisons have no unused scenario sample left (more samples in the batch runs would give them pairs)'
          : `more pairs would need more raters than the batch pays for (${r.budget_raters})`;
    if (r.added_pairs === 0) return `${head}${freed}, but nothing moved: ${why}`;
    const part = r.limited_by === null ? '' : `; only ${r.added_pairs} of ${bought} moved: ${why}`;
    return `${head}${freed}; new pairs given: ${given} (their later looks spend alpha over the raised maximum)${part}; ${raters}`;
  });
}

const REALLOCATION_METHODS =
  ' When a comparison stopped, the judgments it no longer needed (the places of its pairs nobody had judged or held) bought new pairs of K judgments for the comparisons still open (from scenario samples of the same runs not yet paired in that comparison), within the raters the batch paid for and never beyond K judgments a pair. ' +
  "A receiving comparison's maximum rose: the looks already taken kept their bounds and the alpha they had spent, and later looks read the spending function at the information fraction over the new maximum (Lan & DeMets 1983; Jennison & Turnbull 2000, 7.2), with the looks' correlations from the information actually reached. " +
  "This preserves the receiving comparison's error rate because the change of its maximum depended on another comparison's stop, not on its own data; where comparisons share a condition's dialogues or raters, the two are not fully independent and the control is approximate.";

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
    'Reported beside the naive win rate are the stage-wise ordering p-value and the repeated confidence interval (Jennison & Turnbull 2000, ch. 8-9).' +
    (rule.reallocate ? REALLOCATION_METHODS : '')
  );
}

/** A sequential batch's notes for its analysis report: each comparison's lines, then the methods paragraph. */
export function readSequentialNotes(db: Db, batchId: number): string[] {
  const row = getBatchRow(db, batchId);
  const rule = row ? readBatchSettings(row).stopping : null;
  if (!row || !rule) return [];
  const stops = listComparisonStops(db, batchId);
  const lines = stops.map((c) => `Sequential stopping: ${sequentialLines(summariseComparison(c, listLooks(db, c.id))).map((l) => l.trim()).join('; ')}.`);
  const moved = reallocationLines(listReallocations(db, batchId)).map((l) => `Sequential ${l}.`);
  return [...lines, ...moved, `Methods: ${sequentialMethods(rule, stops.length)}`];
}
