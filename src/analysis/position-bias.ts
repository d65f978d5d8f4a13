import { binomialTestP } from '../numbers/binomial-test.js';
import { wilsonInterval } from './wilson.js';

export type PositionBias = {
  /** Decisive judgments whose screen side is known. */
  n: number;
  left_chosen: number;
  left_rate: number | null;
  ci95: [number, number] | null;
  /** Exact two-sided binomial test of the left-choice rate against 0.5. */
  p_value: number | null;
  /** Win rate of a among decisive judgments, split by the side a was shown on. */
  a_shown_left: { wins_a: number; wins_b: number; win_rate_a: number | null; ci95: [number, number] | null };
  a_shown_right: { wins_a: number; wins_b: number; win_rate_a: number | null; ci95: [number, number] | null };
  reason?: string;
};

/** From the four decisive counts by side: a shown left and a won, a shown left and b won, and so on. */
export function positionBias(c: { leftAWinsA: number; leftAWinsB: number; leftBWinsA: number; leftBWinsB: number }): PositionBias {
  const n = c.leftAWinsA + c.leftAWinsB + c.leftBWinsA + c.leftBWinsB;
  const left = c.leftAWinsA + c.leftBWinsB;
  const split = (wa: number, wb: number) => ({
    wins_a: wa,
    wins_b: wb,
    win_rate_a: wa + wb > 0 ? wa / (wa + wb) : null,
    ci95: wilsonInterval(wa, wa + wb),
  });
  return {
    n,
    left_chosen: left,
    left_rate: n > 0 ? left / n : null,
    ci95: wilsonInterval(left, n),
    p_value: binomialTestP(left, n),
    a_shown_left: split(c.leftAWinsA, c.leftAWinsB),
    a_shown_right: split(c.leftBWinsA, c.leftBWinsB),
    ...(n === 0 ? { reason: 'no decisive judgment with a known screen side' } : {}),
  };
}
