import { wilsonHalfWidth } from './wilson.js';

export type SampleSizePlan = {
  target_half_width: number;
  current_half_width: number | null;
  /** Decisive judgments needed at the current win rate for the Wilson interval to be no wider than the target. */
  decisive_needed: number | null;
  /** Judgments of any kind (ties included, at the current tie share, scaled by the design effect) still to collect. */
  judgments_needed: number | null;
  design_effect: number;
  reason?: string;
};

/**
 * Judgments still needed to reach a target interval half-width at the current win rate. The design effect (the
 * cluster bootstrap's variance over the Wilson one, when known) inflates the count for clustering within pairs.
 */
export function planSampleSize(
  c: { winsA: number; winsB: number; ties: number },
  targetHalfWidth = 0.05,
  designEffect = 1,
): SampleSizePlan {
  const decisive = c.winsA + c.winsB;
  const total = decisive + c.ties;
  const deff = Number.isFinite(designEffect) && designEffect > 1 ? designEffect : 1;
  const current = wilsonHalfWidth(c.winsA, decisive);
  if (decisive === 0)
    return { target_half_width: targetHalfWidth, current_half_width: null, decisive_needed: null, judgments_needed: null, design_effect: deff, reason: 'no decisive judgments yet: no win rate to plan from' };
  const p = c.winsA / decisive;
  const half = (n: number) => wilsonHalfWidth(p * n, n) as number;
  // The half-width shrinks monotonically in n at fixed p: binary search the smallest n meeting the target.
  let lo = 1;
  let hi = 1;
  while (half(hi) > targetHalfWidth && hi < 1e12) hi *= 2;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (half(mid) <= targetHalfWidth) hi = mid;
    else lo = mid + 1;
  }
  const decisiveNeeded = Math.ceil(hi * deff);
  const decisiveShare = decisive / total;
  const totalNeeded = Math.ceil(decisiveNeeded / decisiveShare);
  return {
    target_half_width: targetHalfWidth,
    current_half_width: current,
    decisive_needed: decisiveNeeded,
    judgments_needed: Math.max(0, totalNeeded - total),
    design_effect: deff,
  };
}
