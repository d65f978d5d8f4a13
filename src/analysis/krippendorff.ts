import type { ItemCounts } from './item-counts.js';

export type KrippendorffAlpha = {
  alpha: number | null;
  d_o: number | null;
  d_e: number | null;
  n_pairable: number;
  reason?: string;
};

/**
 * Krippendorff's alpha for nominal data (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", sec. C):
 * any number of raters per item, missing values allowed; items with one value are not pairable and drop out.
 * Computed from the coincidence matrix's diagonal and margins, which per-item counts give directly.
 */
export function krippendorffAlpha(ic: ItemCounts): KrippendorffAlpha {
  const q = ic.categories.length;
  const nc = new Float64Array(q);
  let n = 0;
  let observedAgree = 0;
  for (let i = 0; i < ic.nItems; i++) {
    let m = 0;
    for (let k = 0; k < q; k++) m += ic.counts[i * q + k] as number;
    if (m < 2) continue;
    for (let k = 0; k < q; k++) {
      const c = ic.counts[i * q + k] as number;
      nc[k]! += c;
      observedAgree += (c * (c - 1)) / (m - 1);
    }
    n += m;
  }
  if (n < 2) return { alpha: null, d_o: null, d_e: null, n_pairable: n, reason: 'no pairable values (no item has two or more ratings)' };
  const dO = 1 - observedAgree / n;
  let expectedAgree = 0;
  for (let k = 0; k < q; k++) expectedAgree += (nc[k] as number) * ((nc[k] as number) - 1);
  const dE = 1 - expectedAgree / (n * (n - 1));
  if (dE <= 1e-15) return { alpha: null, d_o: dO, d_e: dE, n_pairable: n, reason: 'only one category was used: expected disagreement is 0' };
  return { alpha: 1 - dO / dE, d_o: dO, d_e: dE, n_pairable: n };
}
