import { getBatchRow } from '../batches/batch.queries.js';
import type { StoppingRule } from '../batches/batch.schema.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { Db } from '../db/connection.js';
import { alphaSpent, spendingBoundaries, stagewisePValue } from '../numbers/group-sequential.js';
import { normalCdf } from '../numbers/normal.js';
import { studentTQuantileTwoSided } from '../numbers/student-t.js';
import { listReallocations, type ReallocationRow } from '../rating/reallocation.queries.js';
import {
  type AfterStopCounts,
  type ComparisonStopRow,
  judgmentsAfterStop,
  listComparisonStops,
  listLooks,
  listSequentialExclusions,
  type SequentialExclusionRow,
  type SequentialLookRow,
  type StopReason,
} from '../rating/sequential.queries.js';
import { wilsonInterval } from './wilson.js';

// What a sequential batch's report says of each comparison (issues 44 and 51), first: where it stopped and why, the
// statistic its looks used and why, the sequential p-value and the repeated confidence interval (valid whatever the
// looks), the naive estimate beside them, labelled (stopping when a bound is crossed biases it away from one half),
// and the judgments that came after the stop, apart (the sequential inference does not use them).

export type SequentialSummary = {
  comparison: string;
  state: 'running' | 'stopped';
  reason: StopReason | null;
  look: number;
  /** The last look's bounds on |z|: efficacy (null: none at that look) and futility (null: none), and its |z|. */
  bounds: { efficacy: number | null; futility: number | null; z: number } | null;
  /** The last look was where the futility and efficacy bounds met, so it was the last and spent all alpha left. */
  endsDesign: boolean;
  plannedLooks: number;
  pairsUsed: number;
  maxPairs: number;
  ties: number;
  winsA: number;
  winsB: number;
  alpha: number;
  /** The last look's statistic and why it was the one used (null before any look). */
  statistic: { kind: SequentialLookRow['statistic']; reason: string | null; raters: number | null; df: number | null; designEffect: number | null } | null;
  /**
   * The sequential estimate of a's win rate: (1 + mean pair score)/2 for the rater-clustered statistic (each pair's
   * share of votes for a, ties as half, averaged over pairs), or the share of decisive pair majorities won by a.
   */
  estimate: number | null;
  /** The share of decisive pair majorities won by condition a, with a 95% Wilson interval that ignores the design. */
  naive: { winRate: number | null; ci95: [number, number] | null };
  /** Stage-wise ordering p-value (Fairbanks & Madsen 1982; J&T 8.4), once the comparison has stopped. */
  sequentialP: number | null;
  /** Repeated confidence interval at the last look (J&T ch. 9), on the estimate's scale. */
  repeatedCi: [number, number] | null;
  /** Valid judgments received after the stop (promised before it), not used by the sequential inference. */
  afterStop: AfterStopCounts | null;
};

/** Information levels of the looks (strictly increasing; looks before migration 051 may need their fractions). */
function looksInformation(looks: readonly SequentialLookRow[]): number[] {
  const information = looks.map((l) => l.information ?? l.information_fraction);
  return information.every((x, i) => x > 0 && (i === 0 || x > (information[i - 1] as number))) ? information : looks.map((l) => l.information_fraction);
}

export function summariseComparison(comparison: ComparisonStopRow, looks: readonly SequentialLookRow[], rule: Pick<StoppingRule, 'spending' | 'futility'>, afterStop: AfterStopCounts | null = null): SequentialSummary {
  const last = looks[looks.length - 1];
  const name = `${comparison.condition_a} vs ${comparison.condition_b}`;
  const stopped = comparison.stopped_at !== null;
  const base = { comparison: name, state: stopped ? ('stopped' as const) : ('running' as const), reason: comparison.stop_reason, afterStop };
  if (!last) {
    return { ...base, look: 0, bounds: null, endsDesign: false, plannedLooks: 0, pairsUsed: 0, maxPairs: 0, ties: 0, winsA: 0, winsB: 0, alpha: 0, statistic: null, estimate: null, naive: { winRate: null, ci95: null }, sequentialP: null, repeatedCi: null };
  }
  const decisive = last.wins_a + last.wins_b;
  const information = looksInformation(looks);
  const critical = looks.map((l) => l.critical_z ?? Infinity);
  // Binding futility: the p-value integrates over the continuation regions the design held its looks to (issue 51).
  const futility = rule.futility?.binding ? looks.map((l) => l.futility_z ?? 0) : undefined;
  const clustered = last.statistic === 'rater-clustered' && last.estimate !== null;
  return {
    ...base,
    look: last.look,
    bounds: { efficacy: last.critical_z, futility: last.futility_z, z: last.z },
    endsDesign: last.ends_design === 1,
    plannedLooks: last.planned_looks,
    pairsUsed: last.completed_pairs,
    maxPairs: last.max_pairs,
    ties: last.ties,
    winsA: last.wins_a,
    winsB: last.wins_b,
    alpha: last.alpha,
    statistic: { kind: last.statistic, reason: last.statistic_reason, raters: last.raters, df: last.df, designEffect: last.design_effect },
    estimate: clustered ? (1 + (last.estimate as number)) / 2 : decisive > 0 ? last.wins_a / decisive : null,
    naive: { winRate: decisive > 0 ? last.wins_a / decisive : null, ci95: wilsonInterval(last.wins_a, decisive) },
    sequentialP: stopped ? stagewisePValue(information, critical, looks.length - 1, last.z, futility) : null,
    repeatedCi: repeatedInterval(looks, information, rule),
  };
}

/**
 * The repeated confidence interval at the last look (J&T 9.1) from the efficacy bound of the design WITHOUT futility
 * spending the same alpha at the same looks: a binding design's lowered bounds hold their level only because paths
 * stop for futility, which an interval for any true value cannot rely on (issue 51: with them, 7.5% of Pocock's
 * intervals missed the truth). Rater-clustered looks: the mean pair score plus or minus the t quantile at the bound's
 * nominal level times its standard error, as a win rate (1 + score)/2; pair majorities: Wilson's interval at the bound.
 */
function repeatedInterval(looks: readonly SequentialLookRow[], information: readonly number[], rule: Pick<StoppingRule, 'spending'>): [number, number] {
  const last = looks[looks.length - 1] as SequentialLookRow;
  let spent = 0;
  const cumulative = looks.map((l) => (spent = Math.max(spent, l.cumulative_alpha ?? alphaSpent(rule.spending, l.alpha, l.information_fraction))));
  const bound = spendingBoundaries(information, cumulative).critical[looks.length - 1] as number;
  if (bound === Infinity) return [0, 1];
  if (last.statistic === 'rater-clustered' && last.estimate !== null && last.standard_error !== null && last.df !== null) {
    const half = studentTQuantileTwoSided(2 * normalCdf(-bound), last.df) * last.standard_error;
    const clip = (x: number) => Math.min(1, Math.max(0, (1 + x) / 2));
    return [clip(last.estimate - half), clip(last.estimate + half)];
  }
  return wilsonInterval(last.wins_a, last.wins_a + last.wins_b, bound) ?? [0, 1];
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

function statisticWords(s: NonNullable<SequentialSummary['statistic']>): string {
  const kind = s.kind === 'rater-clustered' ? 'rater-clustered mean pair score' : 'pair majorities (exact test)';
  const effect = s.designEffect !== null ? `; design effect of shared raters ${s.designEffect.toFixed(2)}` : '';
  return `  statistic: ${kind}${s.reason ? ` (${s.reason})` : ''}${effect}`;
}

/** Lines for the CLI and the report: one paragraph per comparison, the sequential result first. */
export function sequentialLines(summary: SequentialSummary): string[] {
  const where =
    summary.state === 'stopped'
      ? `stopped at look ${summary.look} of ${summary.plannedLooks} (${STOP_WORDS[summary.reason ?? 'final']}${summary.endsDesign ? '; the futility and efficacy bounds met there, so that look was the last and spent all the alpha left' : ''})`
      : `running: ${summary.look} of ${summary.plannedLooks} looks taken, no bound crossed`;
  const lines = [`${summary.comparison}: ${where}; ${summary.pairsUsed} of ${summary.maxPairs} pairs completed, ${summary.ties} tied`];
  if (summary.sequentialP !== null) lines.push(`  sequential p-value (stage-wise ordering): ${summary.sequentialP < 1e-4 ? summary.sequentialP.toExponential(2) : summary.sequentialP.toFixed(4)}`);
  const a = summary.comparison.split(' vs ')[0];
  if (summary.repeatedCi) {
    const estimate = summary.estimate === null ? '' : `win rate of ${a} ${pct(summary.estimate)}, `;
    lines.push(`  ${estimate}repeated confidence interval (level ${pct(1 - summary.alpha)}, valid at any look): ${pct(summary.repeatedCi[0])}-${pct(summary.repeatedCi[1])}`);
  }
  if (summary.statistic) lines.push(statisticWords(summary.statistic));
  if (summary.bounds) lines.push(`  bounds at look ${summary.look}: ${boundWords(summary.bounds)}`);
  if (summary.naive.winRate !== null && summary.naive.ci95) {
    lines.push(`  naive win rate of pair majorities for ${a}: ${pct(summary.naive.winRate)} (95% CI ${pct(summary.naive.ci95[0])}-${pct(summary.naive.ci95[1])}; ignores the sequential design, biased when stopped early)`);
  }
  const after = summary.afterStop;
  if (after && after.judgments > 0) {
    lines.push(`  after the stop: ${after.judgments} judgment${after.judgments === 1 ? '' : 's'} on ${after.pairs} pair${after.pairs === 1 ? '' : 's'} promised before it (${after.a} for ${a}, ${after.b} for the other, ${after.ties} ties), not used by the sequential inference`);
  }
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
    return `${head}${freed}; new pairs given: ${given} (their later pairs enter with fixed weights, the design unchanged)${part}; ${raters}`;
  });
}

/** One line per exclusion or re-inclusion of a rater after looks were taken (issue 51). */
export function exclusionLines(rows: readonly SequentialExclusionRow[]): string[] {
  return rows.map(
    (e) =>
      `rater ${e.judge ?? '(deleted)'} ${e.action === 'exclude' ? 'excluded' : 'included again'} after look ${e.after_look} of ${e.comparison} (${e.reason}): looks 1-${e.after_look} stand as taken with their ${e.judgments_in_looks} judgment${e.judgments_in_looks === 1 ? '' : 's'}; later looks ${e.action === 'exclude' ? 'leave them out' : 'count them again'}`,
  );
}

const REALLOCATION_METHODS =
  ' When a comparison stopped, the judgments it no longer needed (the places of its pairs nobody had judged or held) bought new pairs of K judgments for the comparisons still open (from scenario samples of the same runs not yet paired in that comparison), within the raters the batch paid for and never beyond K judgments a pair. ' +
  "A receiving comparison kept its design: the pairs that completed after the look before the raise entered its statistic with a weight fixed at the raise, the design's information left spread over the pairs still to complete (the weighted inverse-normal statistic of Cui, Hung & Wang 1999), so its error rate holds whatever the raise, which depended on another comparison's data. ";

function futilityMethods(rule: StoppingRule): string {
  const f = rule.futility;
  if (!f) return '';
  return (
    `A comparison also stopped for futility when |z| fell below a two-sided futility bound from ${rule.spending === 'pocock' ? 'Pocock' : "O'Brien-Fleming"}-type beta spending (beta ${f.beta}) at the drift of a pair-majority win rate of ${f.effect} over the comparison's pairs (rpact's bsOF/bsP, sided = 2); a look where the futility bound reached the efficacy bound stopped every path and spent all the alpha left. ` +
    (f.binding
      ? 'The futility bounds were binding: the efficacy bounds were computed accounting for them, the sequential p-value integrates over the continuation regions they leave, and the type I error holds only because every futility stop was obeyed. '
      : 'The futility bounds were non-binding: the efficacy bounds were computed ignoring them. ')
  );
}

const STATISTIC_METHODS =
  'A pair entered once it had all its judgments. At each look, the mean pair score (votes for a minus votes for b over the pair\'s judgments; its sign is the pair\'s majority) was tested against 0 with a variance clustered by rater and by pair (Cameron, Gelbach & Miller 2011), against Student\'s t with one fewer degrees of freedom than the effective number of raters (Carter, Schnepel & Steigerwald 2017: the number of raters when each judged as many pairs, fewer when some judged many more), because raters judge several pairs and one who leans toward a condition moves all of them. In a batch designed for 10 raters or more, a look before the last waited until its completed pairs had 10 raters and numbered 10 or more; otherwise a look with fewer than 10 raters used the exact two-sided binomial test of pair majorities instead, an inference conditional on the raters who took part. Each look rejected at the nominal level of its z-scale bound. ';

/** The methods paragraph of a sequential batch's report. */
export function sequentialMethods(rule: StoppingRule, comparisons: number): string {
  const schedule = rule.looks !== undefined ? `${rule.looks} looks equally spaced over each comparison's pairs` : `a look every ${rule.lookEvery} completed pairs`;
  const family = rule.spending === 'pocock' ? 'a Pocock-type' : "an O'Brien-Fleming-type";
  const split = comparisons > 1 ? ` The family-wise alpha of ${rule.alpha} was split equally over the ${comparisons} comparisons (Bonferroni: ${+(rule.alpha / comparisons).toPrecision(4)} each).` : '';
  return (
    `Each comparison followed a group-sequential design with ${schedule}, two-sided alpha ${rule.alpha}, and ${family} Lan-DeMets alpha-spending function (Lan & DeMets 1983; ${rule.spending === 'pocock' ? 'Pocock 1977' : "O'Brien & Fleming 1979"}), read at the completed pairs over the maximum, with the looks' correlations from the decisive pairs observed, the last look included, which spent all the alpha left (Jennison & Turnbull 2000, 7.2 and ch. 19).${split} ` +
    STATISTIC_METHODS +
    futilityMethods(rule) +
    (rule.reallocate ? REALLOCATION_METHODS : '') +
    'Reported beside the naive win rate are the stage-wise ordering p-value and the repeated confidence interval, built from the efficacy bounds without futility (Jennison & Turnbull 2000, ch. 8-9). Judgments received after a comparison stopped are reported apart and not used.'
  );
}

/** Each comparison's summary (with what came after its stop), read once for the CLI, the console and the report. */
export function readSequentialSummaries(db: Db, batchId: number, rule: StoppingRule): SequentialSummary[] {
  return listComparisonStops(db, batchId).map((c) => summariseComparison(c, listLooks(db, c.id), rule, c.stopped_at === null ? null : judgmentsAfterStop(db, c.id)));
}

/** A sequential batch's section of its analysis report: each comparison's lines, reallocations, exclusions, methods. */
export type SequentialSection = { comparisons: SequentialSummary[]; lines: string[]; methods: string };

export function readSequentialSection(db: Db, batchId: number): SequentialSection | null {
  const row = getBatchRow(db, batchId);
  const rule = row ? readBatchSettings(row).stopping : null;
  if (!row || !rule) return null;
  const comparisons = readSequentialSummaries(db, batchId, rule);
  const lines = [
    ...comparisons.map((s) => sequentialLines(s).map((l) => l.trim()).join('; ')),
    ...reallocationLines(listReallocations(db, batchId)),
    ...exclusionLines(listSequentialExclusions(db, batchId)),
  ];
  return { comparisons, lines, methods: sequentialMethods(rule, comparisons.length) };
}
