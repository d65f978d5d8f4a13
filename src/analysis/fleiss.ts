import type { ItemCounts } from './item-counts.js';

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
  const q = ic.categories.length;
  const pi = new Float64Array(q);
  let nRated = 0;
  let n2 = 0;
  let paSum = 0;
  let firstR = -1;
  let equal = true;
  for (let i = 0; i < ic.nItems; i++) {
    let r = 0;
    let agree = 0;
    for (let k = 0; k < q; k++) {
      const c = ic.counts[i * q + k] as number;
      r += c;
      agree += c * (c - 1);
    }
    if (r === 0) continue;
    if (firstR < 0) firstR = r;
    else if (r !== firstR) equal = false;
    nRated++;
    for (let k = 0; k < q; k++) pi[k]! += (ic.counts[i * q + k] as number) / r;
    if (r >= 2) {
      n2++;
      paSum += agree / (r * (r - 1));
    }
  }
  if (n2 === 0) return { kappa: null, variant: null, pa: null, pe: null, reason: 'no item has two or more ratings' };
  let pe = 0;
  for (let k = 0; k < q; k++) pe += ((pi[k] as number) / nRated) ** 2;
  const pa = paSum / n2;
  const variant = equal ? 'fleiss' : 'gwet_unequal';
  if (pe >= 1 - 1e-15) return { kappa: null, variant, pa, pe, reason: 'only one category was used: chance agreement is 1' };
  return { kappa: (pa - pe) / (1 - pe), variant, pa, pe };
}
