// Holm's step-down correction for multiple tests (Holm 1979, Scandinavian Journal of Statistics 6(2)): the i-th
// smallest of m p-values is multiplied by m − i + 1, then made monotone and capped at 1. It controls the family-wise
// error rate under any dependence, and rejects at least what Bonferroni does.

/** The Holm-adjusted p-values, in the order given. */
export function holmAdjust(p: readonly number[]): number[] {
  const m = p.length;
  const order = p.map((value, index) => ({ value, index })).sort((x, y) => x.value - y.value);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach(({ value, index }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * value));
    out[index] = running;
  });
  return out;
}
