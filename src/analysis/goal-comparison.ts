// How far role-play participants say they got with their goal (1 to 10, asked at the end) beside the goal score
// Sotopia-Eval's judge gave their character in the same dialogue (0 to 10: Zhou et al. 2024, "goal completion"). Per
// condition: the mean of each, over the participants with both, their mean difference (self minus judge) and their
// Pearson correlation. The two scales differ by their lowest point (1 against 0): a difference near 1 at the bottom is
// the scales, not a disagreement.

export type GoalInput = { condition: string; selfReport: number | null; sotopiaGoal: number | null };

export type GoalRow = {
  condition: string;
  /** Participants who answered the question. */
  self_reports: number;
  self_mean: number | null;
  /** Participants with both a self-report and the judge's score. */
  paired: number;
  /** Means over the paired participants only, so the two columns describe the same people. */
  paired_self_mean: number | null;
  sotopia_mean: number | null;
  mean_difference: number | null;
  /** Null below three pairs or when either side does not vary. */
  pearson_r: number | null;
};

const mean = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length);

/** Pearson's product-moment correlation; null below three pairs or when either variable is constant. */
export function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  if (xs.length !== ys.length || xs.length < 3) return null;
  const mx = mean(xs) as number;
  const my = mean(ys) as number;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  xs.forEach((x, i) => {
    const dx = x - mx;
    const dy = (ys[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  });
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

export function goalComparison(inputs: readonly GoalInput[]): GoalRow[] {
  const conditions = [...new Set(inputs.map((i) => i.condition))].sort();
  return conditions.map((condition) => {
    const rows = inputs.filter((i) => i.condition === condition);
    const self = rows.map((r) => r.selfReport).filter((v): v is number => v !== null);
    const both = rows.filter((r): r is GoalInput & { selfReport: number; sotopiaGoal: number } => r.selfReport !== null && r.sotopiaGoal !== null);
    const xs = both.map((r) => r.selfReport);
    const ys = both.map((r) => r.sotopiaGoal);
    return {
      condition,
      self_reports: self.length,
      self_mean: mean(self),
      paired: both.length,
      paired_self_mean: mean(xs),
      sotopia_mean: mean(ys),
      mean_difference: mean(both.map((r) => r.selfReport - r.sotopiaGoal)),
      pearson_r: pearson(xs, ys),
    };
  });
}
