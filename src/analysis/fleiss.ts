import { type ItemCounts, observedAgreement } from './item-counts.js';

export type FleissKappa = {
  kappa: number | null;
  /** `fleiss` when every item has the same number of ratings (Fleiss 1971); `gwet_unequal` otherwise (Gwet 2014, ch. 2). */
  variant: 'fleiss' | 'gwet_unequal' | null;
  pa: number | null;
  pe: number | null;
  reason?: string;
};

/**
 * Fleiss' kappa. With equal ratings per item this is the classic formula; with unequal numbers Gwet's
 * generalisation (irrCAC fleiss.kappa.raw): pa averaged over items with 2+ ratings, category shares
 * pi_k = mean over all rated items of r_ik / r_i. Both agree when every item has the same count.
 */
export function fleissKappa(ic: ItemCounts): FleissKappa {
  const { pa, pi, equalRatings } = observedAgreement(ic);
  if (pa === null) return { kappa: null, variant: null, pa: null, pe: null, reason: 'no item has two or more ratings' };
  let pe = 0;
  for (const share of pi) pe += share ** 2;
  const variant = equalRatings ? 'fleiss' : 'gwet_unequal';
  if (pe >= 1 - 1e-15) return { kappa: null, variant, pa, pe, reason: 'only one category was used: chance agreement is 1' };
  return { kappa: (pa - pe) / (1 - pe), variant, pa, pe };
}
