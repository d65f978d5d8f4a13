import type { WinRate } from './analysis-report.js';
import { binomialTestP } from '../numbers/binomial-test.js';
import { wilsonInterval } from './wilson.js';

/** The label of a tie, beside the two conditions. */
export const TIE = 'TIE';

/** A win rate among decisive judgments, with its Wilson 95% interval and the exact sign test. */
export function winRate(winsA: number, winsB: number, ties: number): WinRate {
  const decisive = winsA + winsB;
  return {
    n: decisive + ties,
    wins_a: winsA,
    wins_b: winsB,
    ties,
    win_rate_a: decisive > 0 ? winsA / decisive : null,
    ci95: wilsonInterval(winsA, decisive),
    p_value: binomialTestP(winsA, decisive),
  };
}
