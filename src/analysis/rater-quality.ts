// Rater quality, computed once for the analysis report and the console's rater table (so the two cannot disagree).
// Agreement is with the leave-one-out majority: the other raters' single most common label on the same pair, so a
// rater is never compared with a majority they helped form; a pair whose other raters split evenly (or has none)
// is not compared. Left rate counts decisive choices only. Times are per judgment; unknown times are left out.
import type { RaterFlag, RaterQuality } from './analysis-report.js';
import type { DawidSkeneResult } from './dawid-skene.js';
import type { JudgmentTable } from './judgment-table.js';
import { medianOfSorted } from '../numbers/median.js';

/** Judgments in columns: row j is rater[j]'s label outcome[j] (0..q-1) on pair item[j]. */
export type RaterQualityInput = {
  n: number;
  nItems: number;
  nRaters: number;
  /** Number of label codes. */
  q: number;
  item: ArrayLike<number>;
  rater: ArrayLike<number>;
  outcome: ArrayLike<number>;
  /** 1 when the rater chose the dialogue on the left, 0 on the right, -1 for a tie or an unknown side. */
  choseLeft: ArrayLike<number>;
  /** Time spent on the judgment in any unit; NaN when not measured. */
  time: ArrayLike<number>;
};

export type RaterQualityFigures = {
  judgments: number;
  /** Decisive choices whose screen side is known: what "one side" counts (ties and unknown sides are not). */
  decisive: number;
  /** Pairs where the other raters had a single majority label. */
  looPairs: number;
  looAgreement: number | null;
  medianTime: number | null;
  leftRate: number | null;
};

/** Per-rater figures, indexed by rater. */
export function computeRaterQuality(t: RaterQualityInput): RaterQualityFigures[] {
  const { n, nRaters, q } = t;
  const itemCounts = new Int32Array(t.nItems * q);
  for (let j = 0; j < n; j++) itemCounts[(t.item[j] as number) * q + (t.outcome[j] as number)]! += 1;
  const judgments = new Int32Array(nRaters);
  const leftChosen = new Int32Array(nRaters);
  const leftKnown = new Int32Array(nRaters);
  const looAgree = new Int32Array(nRaters);
  const looItems = new Int32Array(nRaters);
  // Rows grouped by rater (counting sort) for the median time.
  const start = new Int32Array(nRaters + 1);
  for (let j = 0; j < n; j++) start[(t.rater[j] as number) + 1]! += 1;
  for (let r = 0; r < nRaters; r++) start[r + 1]! += start[r] as number;
  const fill = Int32Array.from(start);
  const times = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const r = t.rater[j] as number;
    judgments[r]! += 1;
    times[fill[r]!++] = t.time[j] as number;
    const side = t.choseLeft[j] as number;
    if (side >= 0) {
      leftKnown[r]! += 1;
      if (side === 1) leftChosen[r]! += 1;
    }
    const i = t.item[j] as number;
    const own = t.outcome[j] as number;
    let best = -1;
    let bestCount = 0;
    let unique = false;
    for (let o = 0; o < q; o++) {
      const c = (itemCounts[i * q + o] as number) - (o === own ? 1 : 0);
      if (c > bestCount) {
        best = o;
        bestCount = c;
        unique = true;
      } else if (c === bestCount && c > 0) unique = false;
    }
    if (best >= 0 && unique) {
      looItems[r]! += 1;
      if (best === own) looAgree[r]! += 1;
    }
  }
  // Median time per rater: known times copied into one scratch buffer and sorted in place, slice by slice.
  const scratch = new Float64Array(n);
  return Array.from({ length: nRaters }, (_, r) => {
    let k = 0;
    const from = start[r] as number;
    for (let x = from; x < (start[r + 1] as number); x++) {
      const v = times[x] as number;
      if (Number.isFinite(v)) scratch[from + k++] = v;
    }
    return {
      judgments: judgments[r] as number,
      decisive: leftKnown[r] as number,
      looPairs: looItems[r] as number,
      looAgreement: (looItems[r] as number) > 0 ? (looAgree[r] as number) / (looItems[r] as number) : null,
      medianTime: medianOfSorted(scratch.subarray(from, from + k).sort()),
      leftRate: (leftKnown[r] as number) > 0 ? (leftChosen[r] as number) / (leftKnown[r] as number) : null,
    };
  });
}

/**
 * The report's rater view: the rule above (computeRaterQuality) plus attention checks, Dawid-Skene accuracy, and each
 * rater's flags with the rule behind each (issue 51): "one side" and "too fast" from these figures, the quality
 * signals' flags (`signals`, a batch's) as the batch computed them.
 */
export function raterView(
  t: JudgmentTable,
  ds: DawidSkeneResult | null,
  attention: Map<string, { correct: number; answered: number }> | undefined,
  signals?: RaterSignalFlags,
): RaterQuality[] {
  // Chose left: outcome a with a shown left, or outcome b with b shown left; ties and unknown sides are not counted.
  const choseLeft = new Int8Array(t.n);
  for (let j = 0; j < t.n; j++) {
    const o = t.outcome[j] as number;
    const side = t.left[j] as number;
    choseLeft[j] = o < 2 && side >= 0 ? (side === o ? 1 : 0) : -1;
  }
  const figures = computeRaterQuality({
    n: t.n,
    nItems: t.itemNames.length,
    nRaters: t.raterNames.length,
    q: 3,
    item: t.item,
    rater: t.rater,
    outcome: t.outcome,
    choseLeft,
    time: t.seconds,
  });
  const batchMedian = medianSecondsOf(t.seconds);
  return t.raterNames.map((rater, r) => {
    const f = figures[r] as (typeof figures)[number];
    const att = attention?.get(rater);
    const flags = qualityFlags({ judgments: f.judgments, decisive: f.decisive, medianSeconds: f.medianTime, leftRate: f.leftRate }, batchMedian, NO_CHECKS);
    return {
      rater,
      judgments: f.judgments,
      decisive: f.decisive,
      attention_accuracy: att && att.answered > 0 ? att.correct / att.answered : null,
      attention_answered: att?.answered ?? 0,
      loo_agreement: f.looAgreement,
      loo_pairs: f.looPairs,
      median_seconds: f.medianTime,
      left_rate: f.leftRate,
      ds_accuracy: ds ? (ds.rater_accuracy[r] as number) : null,
      flags: [...flagsWithRules(flags, batchMedian), ...(signals?.flagsOf(rater) ?? [])],
    };
  });
}

/** A batch's quality-signal flags per rater (by export pseudonym), each with its rule and whether it is a declared ground. */
export type RaterSignalFlags = { flagsOf: (rater: string) => RaterFlag[] };

const NO_CHECKS = { attentionFailures: 0, onboardingCorrect: 0, onboardingAnswered: 0, onboardingThreshold: null };

/** The median of the known times (seconds) of the judgments analysed: what "too fast" compares with. */
function medianSecondsOf(seconds: ArrayLike<number>): number | null {
  const known = Float64Array.from(Array.prototype.filter.call(seconds, (v: number) => Number.isFinite(v)) as number[]).sort();
  return medianOfSorted(known);
}

/** "too fast" and "one side" with their rules, in words, with the thresholds of QUALITY_FLAG_RULES. */
function flagsWithRules(flags: QualityFlags, batchMedianSeconds: number | null): RaterFlag[] {
  const rules = QUALITY_FLAG_RULES;
  const out: RaterFlag[] = [];
  if (flags.tooFast) {
    const median = batchMedianSeconds === null ? '' : ` (${Math.round(batchMedianSeconds * 10) / 10} s)`;
    out.push({ flag: 'too fast', rule: `median time per judgment under ${rules.tooFastSeconds} s, or under the batch's median${median} divided by ${rules.tooFastMedianDivisor}`, exclusion_ground: false });
  }
  if (flags.oneSided) {
    out.push({ flag: 'one side', rule: `at least ${rules.oneSideHigh * 100}% (or at most ${rules.oneSideLow * 100}%) of at least ${rules.oneSideMinDecisive} decisive choices on the left side of the screen`, exclusion_ground: false });
  }
  return out;
}

/** One regular judgment as the console reads it from the database. */
export type QualityJudgment = { rater_id: number; pair_id: number; label: string; choice: 'left' | 'right' | 'tie'; active_ms: number | null };

export type RaterQualityRow = {
  raterId: number;
  judgments: number;
  /** Decisive choices with a known side (what "one side" counts); null or absent in figures stored before it was kept. */
  decisive?: number | null;
  medianSeconds: number | null;
  majorityAgreement: number | null;
  leftRate: number | null;
};

/** The console's rater table figures, keyed by rater id (in order of each rater's first judgment). */
export function raterQuality(judgments: QualityJudgment[]): Map<number, RaterQualityRow> {
  const dense = (ids: Map<number | string, number>, id: number | string): number => {
    let k = ids.get(id);
    if (k === undefined) ids.set(id, (k = ids.size));
    return k;
  };
  const raters = new Map<number | string, number>();
  const pairs = new Map<number | string, number>();
  const labels = new Map<number | string, number>();
  const n = judgments.length;
  const input = {
    rater: Int32Array.from(judgments, (j) => dense(raters, j.rater_id)),
    item: Int32Array.from(judgments, (j) => dense(pairs, j.pair_id)),
    outcome: Int32Array.from(judgments, (j) => dense(labels, j.label)),
    choseLeft: Int8Array.from(judgments, (j) => (j.choice === 'tie' ? -1 : j.choice === 'left' ? 1 : 0)),
    time: Float64Array.from(judgments, (j) => j.active_ms ?? Number.NaN),
  };
  const figures = computeRaterQuality({ ...input, n, nItems: pairs.size, nRaters: raters.size, q: labels.size });
  const rows = new Map<number, RaterQualityRow>();
  for (const [raterId, r] of raters) {
    const f = figures[r] as RaterQualityFigures;
    rows.set(raterId as number, {
      raterId: raterId as number,
      judgments: f.judgments,
      decisive: f.decisive,
      medianSeconds: f.medianTime === null ? null : f.medianTime / 1000,
      majorityAgreement: f.looAgreement,
      leftRate: f.leftRate,
    });
  }
  return rows;
}

export type QualityFlags = { tooFast: boolean; oneSided: boolean; failsChecks: boolean };

/**
 * The flags' thresholds, in one place for qualityFlags and the participants page's SQL count of the same decisions
 * (src/console/rater-table.queries.ts, countQualityDecisions).
 */
export const QUALITY_FLAG_RULES = {
  /** "too fast": a median time per judgment under this many seconds, */
  tooFastSeconds: 5,
  /** or under the batch's median divided by this. */
  tooFastMedianDivisor: 3,
  /** "one side": at least this many decisive choices (ties do not count: issue 51), */
  oneSideMinDecisive: 5,
  /** with a left rate at least this high, or at most this low. */
  oneSideHigh: 0.9,
  oneSideLow: 0.1,
} as const;

/**
 * Flags for the rater table: "too fast" below a third of the batch's median time per judgment (or under 5 s);
 * "one side" when at least 90% of at least 5 decisive choices are on the same screen side; "fails checks" when any
 * attention check or the onboarding threshold was failed.
 */
export function qualityFlags(
  row: Pick<RaterQualityRow, 'judgments' | 'decisive' | 'medianSeconds' | 'leftRate'> | undefined,
  batchMedianSeconds: number | null,
  checks: { attentionFailures: number; onboardingCorrect: number; onboardingAnswered: number; onboardingThreshold: number | null },
): QualityFlags {
  const seconds = row?.medianSeconds ?? null;
  const rules = QUALITY_FLAG_RULES;
  const tooFast = seconds !== null && (seconds < rules.tooFastSeconds || (batchMedianSeconds !== null && seconds < batchMedianSeconds / rules.tooFastMedianDivisor));
  const left = row?.leftRate ?? null;
  // Figures stored before the decisive count was kept fall back to all judgments, the rule they were shown under.
  const decisive = row?.decisive ?? row?.judgments ?? 0;
  const oneSided = left !== null && decisive >= rules.oneSideMinDecisive && (left >= rules.oneSideHigh || left <= rules.oneSideLow);
  const onboardingFailed =
    checks.onboardingThreshold !== null && checks.onboardingAnswered > 0 && checks.onboardingCorrect / checks.onboardingAnswered < checks.onboardingThreshold;
  return { tooFast, oneSided, failsChecks: checks.attentionFailures > 0 || onboardingFailed };
}
