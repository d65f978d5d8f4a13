import { type ItemCounts, observedAgreement } from './item-counts.js';

export type GwetAc1 = { ac1: number | null; pa: number | null; pe: number | null; q: number; reason?: string };

/**
 * Gwet's AC1 (Gwet 2008; irrCAC gwet.ac1.raw) for any number of ratings per item. Chance agreement is
 * sum_k pi_k (1 - pi_k) / (q - 1) over the q declared categories, so it stays stable when one side wins most of the
 * time, where kappa collapses (the Feinstein-Cicchetti paradox).
 */
export function gwetAc1(ic: ItemCounts, q = ic.categories.length): GwetAc1 {
  if (q < 2) return { ac1: null, pa: null, pe: null, q, reason: 'fewer than two declared categories' };
  const { pa, pi } = observedAgreement(ic);
  if (pa === null) return { ac1: null, pa: null, pe: null, q, reason: 'no item has two or more ratings' };
  let pe = 0;
  for (const p of pi) pe += p * (1 - p);
  pe /= q - 1;
  if (pe >= 1 - 1e-15) return { ac1: null, pa, pe, q, reason: 'chance agreement is 1' };
  return { ac1: (pa - pe) / (1 - pe), pa, pe, q };
}
