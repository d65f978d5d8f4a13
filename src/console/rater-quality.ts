// Per-rater quality figures for the console's rater table, computed from plain rows (pure; unit-tested).
// Agreement is with the leave-one-out majority of the other raters of each pair, so a rater is never compared
// with a majority they helped form (as in the analysis report's rater quality view).

export type QualityJudgment = { rater_id: number; pair_id: number; label: string; choice: 'left' | 'right' | 'tie'; active_ms: number | null };

export type RaterQualityRow = {
  raterId: number;
  judgments: number;
  medianSeconds: number | null;
  majorityAgreement: number | null;
  leftRate: number | null;
};

export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? null) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** The strict majority label among `labels`, or null when there is none (no votes, or a tie for first place). */
function majority(labels: Map<string, number>): string | null {
  let best: string | null = null;
  let bestCount = 0;
  let tied = false;
  for (const [label, count] of labels) {
    if (count > bestCount) {
      best = label;
      bestCount = count;
      tied = false;
    } else if (count === bestCount) tied = true;
  }
  return tied ? null : best;
}

export function raterQuality(judgments: QualityJudgment[]): Map<number, RaterQualityRow> {
  const byPair = new Map<number, Map<string, number>>();
  for (const j of judgments) {
    const labels = byPair.get(j.pair_id) ?? new Map<string, number>();
    labels.set(j.label, (labels.get(j.label) ?? 0) + 1);
    byPair.set(j.pair_id, labels);
  }
  const acc = new Map<number, { times: number[]; n: number; agree: number; compared: number; left: number; sided: number }>();
  for (const j of judgments) {
    const a = acc.get(j.rater_id) ?? { times: [], n: 0, agree: 0, compared: 0, left: 0, sided: 0 };
    a.n += 1;
    if (j.active_ms !== null) a.times.push(j.active_ms);
    if (j.choice !== 'tie') {
      a.sided += 1;
      if (j.choice === 'left') a.left += 1;
    }
    const others = new Map(byPair.get(j.pair_id));
    others.set(j.label, (others.get(j.label) ?? 1) - 1);
    if (others.get(j.label) === 0) others.delete(j.label);
    const consensus = majority(others);
    if (consensus !== null) {
      a.compared += 1;
      if (consensus === j.label) a.agree += 1;
    }
    acc.set(j.rater_id, a);
  }
  const rows = new Map<number, RaterQualityRow>();
  for (const [raterId, a] of acc) {
    const ms = median(a.times);
    rows.set(raterId, {
      raterId,
      judgments: a.n,
      medianSeconds: ms === null ? null : ms / 1000,
      majorityAgreement: a.compared > 0 ? a.agree / a.compared : null,
      leftRate: a.sided > 0 ? a.left / a.sided : null,
    });
  }
  return rows;
}

export type QualityFlags = { tooFast: boolean; oneSided: boolean; failsChecks: boolean };

/**
 * Flags for the table: "too fast" below a third of the batch's median time per judgment (or under 5 s);
 * "one side" when at least 90% of at least 5 decisive choices are on the same screen side; "fails checks" when any
 * attention check or the onboarding threshold was failed.
 */
export function qualityFlags(
  row: RaterQualityRow | undefined,
  batchMedianSeconds: number | null,
  checks: { attentionFailures: number; onboardingCorrect: number; onboardingAnswered: number; onboardingThreshold: number | null },
): QualityFlags {
  const seconds = row?.medianSeconds ?? null;
  const tooFast = seconds !== null && (seconds < 5 || (batchMedianSeconds !== null && seconds < batchMedianSeconds / 3));
  const left = row?.leftRate ?? null;
  const oneSided = left !== null && (row?.judgments ?? 0) >= 5 && (left >= 0.9 || left <= 0.1);
  const onboardingFailed =
    checks.onboardingThreshold !== null && checks.onboardingAnswered > 0 && checks.onboardingCorrect / checks.onboardingAnswered < checks.onboardingThreshold;
  return { tooFast, oneSided, failsChecks: checks.attentionFailures > 0 || onboardingFailed };
}
