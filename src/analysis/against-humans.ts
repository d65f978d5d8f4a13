import type { ComparisonReport } from './analysis-report.js';
import { REAL_REFERENCE } from './two-by-two.js';

// Issue 52, item 6: real life as the reference. Each condition compared with HUMANS:human (two people role-playing the
// scenario) in a preference question, with its win rate against them: above 50% means judged more natural than the
// people themselves. The comparison's own figures turned round so that the condition is the one counted.

export type AgainstHumansRow = {
  condition: string;
  /** Judgments of the comparison, ties included. */
  n: number;
  wins: number;
  losses: number;
  ties: number;
  /** Among decisive judgments; Wilson 95% interval and exact sign test, as for every comparison. */
  win_rate: number | null;
  ci95: [number, number] | null;
  p_value: number | null;
  /** The comparison's cluster bootstrap interval, turned round. */
  bootstrap_ci95: [number, number] | null;
};

export type AgainstHumans = { reference: string; rows: AgainstHumansRow[] };

const turned = (c: [number, number] | null): [number, number] | null => (c ? [1 - c[1], 1 - c[0]] : null);

/** The comparisons that set a condition against HUMANS:human, as that condition's win rate; null when there is none. */
export function againstHumans(comparisons: ComparisonReport[]): AgainstHumans | null {
  const rows = comparisons.flatMap((c): AgainstHumansRow[] => {
    if (c.a !== REAL_REFERENCE && c.b !== REAL_REFERENCE) return [];
    const counted = c.b === REAL_REFERENCE;
    return [
      {
        condition: counted ? c.a : c.b,
        n: c.n,
        wins: counted ? c.wins_a : c.wins_b,
        losses: counted ? c.wins_b : c.wins_a,
        ties: c.ties,
        win_rate: c.win_rate_a === null ? null : counted ? c.win_rate_a : 1 - c.win_rate_a,
        ci95: counted ? c.ci95 : turned(c.ci95),
        p_value: c.p_value,
        bootstrap_ci95: counted ? c.bootstrap.ci95 : turned(c.bootstrap.ci95),
      },
    ];
  });
  return rows.length > 0 ? { reference: REAL_REFERENCE, rows } : null;
}
