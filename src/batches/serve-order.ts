// The order in which a batch's regular pairs are served when their loads are equal (issue 51, item 8; migration 053):
// comparisons interleaved, so that raters who consent together are promised pairs of every comparison instead of all
// of the first one. Place r of comparison j (of C) comes at r * C + j; each comparison's pairs start at a different
// scenario sample (comparison j of n pairs at its pair j * n / C), because comparisons are formed over the same
// samples in the same order and a rater allowed one pair per sample would otherwise meet the second comparison's pair
// of a sample right after the first's, skip it, and be given the first comparison's next pair again.

/** The serve order of each planned pair, given each pair's comparison index (in formation order) and the comparisons. */
export function serveOrders(comparisonOf: readonly number[], comparisons: number): number[] {
  const c = Math.max(1, comparisons);
  const sizes = new Map<number, number>();
  for (const j of comparisonOf) sizes.set(j, (sizes.get(j) ?? 0) + 1);
  const seen = new Map<number, number>();
  return comparisonOf.map((j) => {
    const n = sizes.get(j) as number;
    const s = seen.get(j) ?? 0;
    seen.set(j, s + 1);
    const offset = Math.floor((j * n) / c);
    return ((((s - offset) % n) + n) % n) * c + j;
  });
}
