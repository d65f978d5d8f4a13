/**
 * Per-item category counts: the one aggregate every agreement coefficient here needs (Fleiss, Krippendorff's
 * nominal alpha, Gwet's AC1, percent agreement). Row i holds item i's ratings per category, q columns wide.
 * Working from counts instead of judgment rows keeps 1M judgments to one pass.
 */
export type ItemCounts = {
  /** Category names, in column order. */
  categories: string[];
  nItems: number;
  /** nItems × q counts, row-major. */
  counts: Float64Array;
};

/** Builds counts from long rows (item, label); labels outside `categories` are an error for the caller to prevent. */
export function countsFromLong(rows: { item: string; label: string }[], categories: string[]): ItemCounts {
  const q = categories.length;
  const column = new Map(categories.map((c, i) => [c, i]));
  const itemIndex = new Map<string, number>();
  for (const row of rows) if (!itemIndex.has(row.item)) itemIndex.set(row.item, itemIndex.size);
  const counts = new Float64Array(itemIndex.size * q);
  for (const row of rows) {
    const k = column.get(row.label);
    if (k === undefined) throw new Error(`label ${row.label} is not a declared category`);
    counts[(itemIndex.get(row.item) as number) * q + k]! += 1;
  }
  return { categories, nItems: itemIndex.size, counts };
}

/** Builds counts from a subject × category table (Fleiss 1971 style). */
export function countsFromTable(table: number[][], categories: string[]): ItemCounts {
  const q = categories.length;
  const counts = new Float64Array(table.length * q);
  table.forEach((row, i) => row.forEach((v, k) => (counts[i * q + k] = v)));
  return { categories, nItems: table.length, counts };
}

/**
 * What Fleiss' kappa and Gwet's AC1 both start from (Gwet 2014, ch. 2 and 4; irrCAC fleiss.kappa.raw and
 * gwet.ac1.raw), in one pass: observed agreement `pa`, the mean over items with 2+ ratings of agree_i / (r_i (r_i - 1)),
 * and the category shares `pi`, pi_k = mean over rated items of r_ik / r_i. `pa` is null when no item has two ratings.
 * `equalRatings`: every rated item has the same number of ratings (then Fleiss' classic formula applies).
 */
export type ObservedAgreement = { pa: number | null; pi: Float64Array; equalRatings: boolean };

export function observedAgreement(ic: ItemCounts): ObservedAgreement {
  const q = ic.categories.length;
  const pi = new Float64Array(q);
  let nRated = 0;
  let n2 = 0;
  let paSum = 0;
  let firstR = -1;
  let equalRatings = true;
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
    else if (r !== firstR) equalRatings = false;
    nRated++;
    for (let k = 0; k < q; k++) pi[k]! += (ic.counts[i * q + k] as number) / r;
    if (r >= 2) {
      n2++;
      paSum += agree / (r * (r - 1));
    }
  }
  if (n2 === 0) return { pa: null, pi, equalRatings };
  for (let k = 0; k < q; k++) pi[k] = (pi[k] as number) / nRated;
  return { pa: paSum / n2, pi, equalRatings };
}

export type PercentAgreement = {
  /** Mean over items with 2+ ratings of the share of agreeing rater pairs. */
  percent: number | null;
  /** Share of items (2+ ratings) where every rater gave the same label. */
  unanimous_share: number | null;
  /** ACUTE-Eval's view: mean over items with 2+ ratings of the share of ratings that side with the item's most common label. */
  majority_share: number | null;
  items_used: number;
  reason?: string;
};

export function percentAgreement(ic: ItemCounts): PercentAgreement {
  const q = ic.categories.length;
  let used = 0;
  let pairwise = 0;
  let unanimous = 0;
  let majority = 0;
  for (let i = 0; i < ic.nItems; i++) {
    let r = 0;
    let agree = 0;
    let max = 0;
    for (let k = 0; k < q; k++) {
      const c = ic.counts[i * q + k] as number;
      r += c;
      agree += c * (c - 1);
      if (c > max) max = c;
    }
    if (r < 2) continue;
    used++;
    pairwise += agree / (r * (r - 1));
    if (max === r) unanimous++;
    majority += max / r;
  }
  if (used === 0)
    return { percent: null, unanimous_share: null, majority_share: null, items_used: 0, reason: 'no item has two or more ratings' };
  return { percent: pairwise / used, unanimous_share: unanimous / used, majority_share: majority / used, items_used: used };
}
