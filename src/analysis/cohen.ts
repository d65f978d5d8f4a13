export type CohenPair = { rater1: string; rater2: string; n_common: number; po: number; pe: number; kappa: number | null; reason?: string };

/** Cohen's kappa from a q × q table (rows rater 1, columns rater 2). */
export function cohenKappaFromTable(table: ArrayLike<number>, q: number): { n: number; po: number; pe: number; kappa: number | null; reason?: string } {
  let n = 0;
  let agree = 0;
  const rows = new Float64Array(q);
  const cols = new Float64Array(q);
  for (let r = 0; r < q; r++)
    for (let c = 0; c < q; c++) {
      const v = table[r * q + c] as number;
      n += v;
      rows[r]! += v;
      cols[c]! += v;
      if (r === c) agree += v;
    }
  if (n === 0) return { n, po: NaN, pe: NaN, kappa: null, reason: 'no shared items' };
  let pe = 0;
  for (let k = 0; k < q; k++) pe += ((rows[k] as number) / n) * ((cols[k] as number) / n);
  const po = agree / n;
  if (pe >= 1 - 1e-15) return { n, po, pe, kappa: null, reason: 'both raters used one and the same category: chance agreement is 1' };
  return { n, po, pe, kappa: (po - pe) / (1 - pe) };
}

/**
 * Cohen's kappa for every pair of raters sharing at least `minShared` items. Input: per judgment its item index,
 * rater index and category index (typed arrays), as analyze.ts keeps them.
 */
export function cohenKappaPairs(
  input: { item: Int32Array; rater: Int32Array; label: Int32Array | Int8Array; raterNames: string[]; q: number },
  minShared = 2,
): { pairs: CohenPair[]; mean_kappa: number | null } {
  const { item, rater, label, raterNames, q } = input;
  // Group judgments by item.
  const byItem = new Map<number, number[]>();
  for (let j = 0; j < item.length; j++) {
    const list = byItem.get(item[j] as number);
    if (list) list.push(j);
    else byItem.set(item[j] as number, [j]);
  }
  const tables = new Map<number, Float64Array>();
  const nr = raterNames.length;
  for (const list of byItem.values()) {
    for (let x = 0; x < list.length; x++)
      for (let y = x + 1; y < list.length; y++) {
        let j1 = list[x] as number;
        let j2 = list[y] as number;
        if ((rater[j1] as number) === (rater[j2] as number)) continue;
        // Order the pair by rater name so that the table's rows are always the first-named rater.
        if ((raterNames[rater[j1] as number] as string) > (raterNames[rater[j2] as number] as string)) [j1, j2] = [j2, j1];
        const key = (rater[j1] as number) * nr + (rater[j2] as number);
        let t = tables.get(key);
        if (!t) tables.set(key, (t = new Float64Array(q * q)));
        t[(label[j1] as number) * q + (label[j2] as number)]! += 1;
      }
  }
  const pairs: CohenPair[] = [];
  for (const [key, t] of tables) {
    const r1 = Math.floor(key / nr);
    const r2 = key % nr;
    const result = cohenKappaFromTable(t, q);
    if (result.n < minShared) continue;
    pairs.push({ rater1: raterNames[r1] as string, rater2: raterNames[r2] as string, n_common: result.n, po: result.po, pe: result.pe, kappa: result.kappa, ...(result.reason ? { reason: result.reason } : {}) });
  }
  pairs.sort((p, r) => (p.rater1 === r.rater1 ? (p.rater2 < r.rater2 ? -1 : 1) : p.rater1 < r.rater1 ? -1 : 1));
  const defined = pairs.filter((p) => p.kappa !== null);
  // Light (1971): the mean of pairwise kappas.
  const mean = defined.length > 0 ? defined.reduce((s, p) => s + (p.kappa as number), 0) / defined.length : null;
  return { pairs, mean_kappa: mean };
}
