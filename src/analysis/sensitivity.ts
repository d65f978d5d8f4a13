// Does the result depend on the raters the quality signals flag (issues 43, 51)? Each comparison's result on its
// primary unit, the pair majority, with a rater-clustered interval (src/analysis/clustered-majority.ts), with every
// rater left out who has a flag the batch declared grounds for exclusion before its first judgment (`exclusionGrounds`,
// frozen with the judgments), next to the result with everyone. A flag that is never grounds (reading time, one key)
// never leaves a rater out. The change in the estimate is always given; a conclusion that flips is said, with "report
// it"; and when too little is left to conclude anything, the section says so instead of "no change".
import type { RaterFlag, SensitivityComparison, SensitivitySection, SensitivitySide } from './analysis-report.js';
import { type ClusteredMajority, clusteredMajorityWinRate, type MajorityJudgment } from './clustered-majority.js';
import type { JudgmentTable } from './judgment-table.js';

/**
 * Below these, a result is "too little to conclude anything": a rater-clustered interval over fewer raters, or a
 * proportion of fewer decisive pairs, says nothing a paper should lean on.
 */
export const SENSITIVITY_MINIMUM = { raters: 5, decisivePairs: 10 } as const;

export type SensitivityInput = { grounds: readonly string[]; flagsOf: (rater: string) => readonly RaterFlag[] };

function conclusionOf(a: string, b: string, r: ClusteredMajority): { conclusion: string; enough: boolean } {
  const enough = r.raters >= SENSITIVITY_MINIMUM.raters && r.decisive >= SENSITIVITY_MINIMUM.decisivePairs && r.ci95 !== null;
  if (!enough || !r.ci95) return { conclusion: 'too little to conclude', enough: false };
  if (r.ci95[0] > 0.5) return { conclusion: `${a} preferred`, enough };
  if (r.ci95[1] < 0.5) return { conclusion: `${b} preferred`, enough };
  return { conclusion: 'no clear winner', enough };
}

function side(a: string, b: string, r: ClusteredMajority): SensitivitySide & { enough: boolean } {
  return { pairs: r.pairs, decisive_pairs: r.decisive, raters: r.raters, win_rate_a: r.win_rate_a, ci95: r.ci95, design_effect: r.design_effect, ...conclusionOf(a, b, r) };
}

const pct = (x: number | null) => (x === null ? 'no win rate' : `${(x * 100).toFixed(1)}%`);

/** One comparison's line of the sentence. */
function lineOf(c: SensitivityComparison, full: { enough: boolean }, without: { enough: boolean }): string {
  const change = c.change === null ? '' : ` (${c.change >= 0 ? '+' : '−'}${Math.abs(c.change * 100).toFixed(1)} points)`;
  const moves = `the pair-majority win rate of ${c.a} goes from ${pct(c.full.win_rate_a)} to ${pct(c.without.win_rate_a)}${change}`;
  if (!without.enough) return `${c.a} vs ${c.b}: ${moves}, but too little is left to conclude anything (${c.without.raters} rater(s), ${c.without.decisive_pairs} decisive pair(s))`;
  if (!full.enough) return `${c.a} vs ${c.b}: ${moves}; the full result is itself too small to conclude anything`;
  if (c.flips) return `${c.a} vs ${c.b}: ${moves}, and the conclusion flips from ${c.full.conclusion} to ${c.without.conclusion}: report it`;
  return `${c.a} vs ${c.b}: ${moves}; the conclusion stays ${c.full.conclusion}`;
}

/** The comparison's judgments for the clustered estimator, those of `drop`'s raters left out. */
function rowsOf(t: JudgmentTable, c: number, drop: ReadonlySet<number>): MajorityJudgment[] {
  const rows: MajorityJudgment[] = [];
  for (let j = 0; j < t.n; j++) {
    const item = t.item[j] as number;
    const rater = t.rater[j] as number;
    if (t.itemComparison[item] === c && !drop.has(rater)) rows.push({ item, rater, outcome: t.outcome[j] as number });
  }
  return rows;
}

/** The section for the judgments of `t` (exclusions applied), the batch's grounds and its raters' flags. */
export function sensitivitySection(t: JudgmentTable, input: SensitivityInput): SensitivitySection {
  const dropped = new Set<number>();
  t.raterNames.forEach((name, r) => {
    if (input.flagsOf(name).some((f) => f.exclusion_ground)) dropped.add(r);
  });
  let droppedJudgments = 0;
  for (let j = 0; j < t.n; j++) if (dropped.has(t.rater[j] as number)) droppedJudgments += 1;
  const lines: string[] = [];
  const comparisons = t.comparisons.map(({ a, b }, c) => {
    const full = side(a, b, clusteredMajorityWinRate(rowsOf(t, c, new Set())));
    const without = side(a, b, clusteredMajorityWinRate(rowsOf(t, c, dropped)));
    const change = full.win_rate_a !== null && without.win_rate_a !== null ? without.win_rate_a - full.win_rate_a : null;
    const { enough: fullEnough, ...fullSide } = full;
    const { enough: withoutEnough, ...withoutSide } = without;
    const comparison = { a, b, full: fullSide, without: withoutSide, change, too_little_left: !withoutEnough, flips: fullEnough && withoutEnough && full.conclusion !== without.conclusion };
    lines.push(lineOf(comparison, full, without));
    return comparison;
  });
  const names = [...dropped].map((r) => t.raterNames[r] as string).sort();
  return {
    unit: 'pair majority',
    interval: 'Wilson 95% at the effective number of pairs, variance clustered on the raters pairs share',
    grounds: [...input.grounds],
    dropped_raters: names,
    dropped_judgments: droppedJudgments,
    comparisons,
    sentence: sentenceOf(input.grounds, names.length, droppedJudgments, lines),
  };
}

function sentenceOf(grounds: readonly string[], dropped: number, judgments: number, lines: string[]): string {
  if (grounds.length === 0) return 'The batch declares no quality flag grounds for exclusion (exclusionGrounds): no rater is left out.';
  if (dropped === 0) return `No rater has a flag the batch declares grounds for exclusion (${grounds.join(', ')}): no rater is left out.`;
  return `Leaving out the ${dropped} rater(s) with a flag the batch declares grounds for exclusion (${grounds.join(', ')}; ${judgments} judgments): ${lines.join('. ')}.`;
}
