// A pair's majority, the one definition the stopping rule (src/batches/sequential-rule.ts) and the analysis report
// (src/analysis/comparison-statistics.ts) share (issue 51). On the scale of the comparison a judgment either sides
// with a condition or abstains (a tie), so a pair goes to the condition more of its raters chose over the other, and
// is tied when the two are chosen equally often, ties (abstentions) aside: (a, tie, tie) is a win for a. This is the
// sign of the pair's score (votes for a - votes for b) / judgments, which the look statistic averages.

export type PairOutcome = 'a' | 'b' | 'tie';

/** A pair's outcome from its valid judgments' counts for a and for b (tie votes do not enter). */
export function pairMajority(votesA: number, votesB: number): PairOutcome {
  return votesA > votesB ? 'a' : votesB > votesA ? 'b' : 'tie';
}
