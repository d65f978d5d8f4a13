/**
 * Bradley-Terry scores by maximum likelihood (Newton-Raphson on log-abilities with one condition anchored at 0),
 * ties counted as half a win for each side (as Chatbot Arena does). Reported on the Elo-like scale
 * 1000 + 400 * log10(p_i / p_anchor). The MLE does not exist when the comparison graph of "i beat j at least once"
 * is not strongly connected (e.g. a condition that never loses): that case is detected and reported, not fitted.
 */
export type BtResult =
  | { ok: true; conditions: string[]; anchor: string; log_ability: number[]; score: number[]; iterations: number }
  | { ok: false; conditions: string[]; anchor: string; reason: string };

/** wins[i * k + j] = times i beat j (ties already split as 0.5 each way). */
export function fitBradleyTerry(conditions: string[], wins: Float64Array, anchorIndex = 0): BtResult {
  const k = conditions.length;
  const anchor = conditions[anchorIndex] ?? '';
  if (k < 2) return { ok: false, conditions, anchor, reason: 'fewer than two conditions' };
  const problem = existenceProblem(k, wins, conditions);
  if (problem) return { ok: false, conditions, anchor, reason: problem };
  const theta = new Float64Array(k);
  const free = [...Array(k).keys()].filter((i) => i !== anchorIndex);
  let iterations = 0;
  for (; iterations < 200; iterations++) {
    // Gradient and Hessian of the log-likelihood in the free parameters.
    const m = free.length;
    const grad = new Float64Array(m);
    const hess = new Float64Array(m * m);
    const pos = new Int32Array(k).fill(-1);
    free.forEach((c, idx) => (pos[c] = idx));
    for (let i = 0; i < k; i++)
      for (let j = i + 1; j < k; j++) {
        const wij = wins[i * k + j] as number;
        const wji = wins[j * k + i] as number;
        const nij = wij + wji;
        if (nij === 0) continue;
        const pij = 1 / (1 + Math.exp((theta[j] as number) - (theta[i] as number)));
        const g = wij - nij * pij;
        const h = nij * pij * (1 - pij);
        const pi = pos[i] as number;
        const pj = pos[j] as number;
        if (pi >= 0) {
          grad[pi]! += g;
          hess[pi * m + pi]! += h;
        }
        if (pj >= 0) {
          grad[pj]! -= g;
          hess[pj * m + pj]! += h;
        }
        if (pi >= 0 && pj >= 0) {
          hess[pi * m + pj]! -= h;
          hess[pj * m + pi]! -= h;
        }
      }
    const step = solve(hess, grad, m);
    if (!step) return { ok: false, conditions, anchor, reason: 'the fit is singular (conditions not all connected by judgments)' };
    let maxStep = 0;
    free.forEach((c, idx) => {
      theta[c]! += step[idx] as number;
      maxStep = Math.max(maxStep, Math.abs(step[idx] as number));
    });
    if (maxStep < 1e-13) break;
  }
  const logAbility = Array.from(theta);
  return {
    ok: true,
    conditions,
    anchor,
    log_ability: logAbility,
    score: logAbility.map((t) => 1000 + (400 * t) / Math.LN10),
    iterations,
  };
}

function existenceProblem(k: number, wins: Float64Array, conditions: string[]): string | null {
  // Strong connectivity of the directed graph i -> j when i has beaten j (Ford 1957; Hunter 2004, assumption 1).
  const reach = (forward: boolean | 'either'): boolean[] => {
    const seen = new Array<boolean>(k).fill(false);
    const stack = [0];
    seen[0] = true;
    while (stack.length > 0) {
      const i = stack.pop() as number;
      for (let j = 0; j < k; j++) {
        const w =
          forward === 'either' ? (wins[i * k + j] as number) + (wins[j * k + i] as number) : forward ? (wins[i * k + j] as number) : (wins[j * k + i] as number);
        if (w > 0 && !seen[j]) {
          seen[j] = true;
          stack.push(j);
        }
      }
    }
    return seen;
  };
  for (let i = 0; i < k; i++) {
    let won = 0;
    let lost = 0;
    for (let j = 0; j < k; j++) {
      won += wins[i * k + j] as number;
      lost += wins[j * k + i] as number;
    }
    const name = conditions[i] as string;
    if (won + lost === 0) return `${name} has no judgments against the other conditions`;
    if (lost === 0) return `${name} never lost: its score is infinite`;
    if (won === 0) return `${name} never won: its score is minus infinity`;
  }
  const f = reach(true);
  const b = reach(false);
  // Groups never compared with each other (e.g. SCRIPT vs AGENTS run separately per model) have no common scale;
  // say that plainly, apart from groups that were compared but where one side never won.
  const apart = reach('either').findIndex((x) => !x);
  if (apart >= 0)
    return `The conditions form groups never compared with each other (${conditions[0] as string} and ${conditions[apart] as string} are in different groups): Bradley-Terry scores on one scale are not defined; read each comparison's win rate.`;
  for (let i = 0; i < k; i++)
    if (!f[i] || !b[i]) return 'The conditions split into groups where one group never beat the other: scores are not finite.';
  return null;
}

/** Solves a small dense symmetric system by Gaussian elimination with partial pivoting; null when singular. */
function solve(a: Float64Array, b: Float64Array, m: number): Float64Array | null {
  const A = Float64Array.from(a);
  const x = Float64Array.from(b);
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(A[r * m + col] as number) > Math.abs(A[pivot * m + col] as number)) pivot = r;
    if (Math.abs(A[pivot * m + col] as number) < 1e-300) return null;
    if (pivot !== col) {
      for (let c = 0; c < m; c++) [A[col * m + c], A[pivot * m + c]] = [A[pivot * m + c] as number, A[col * m + c] as number];
      [x[col], x[pivot]] = [x[pivot] as number, x[col] as number];
    }
    for (let r = col + 1; r < m; r++) {
      const f = (A[r * m + col] as number) / (A[col * m + col] as number);
      if (f === 0) continue;
      for (let c = col; c < m; c++) A[r * m + c]! -= f * (A[col * m + c] as number);
      x[r]! -= f * (x[col] as number);
    }
  }
  for (let r = m - 1; r >= 0; r--) {
    let s = x[r] as number;
    for (let c = r + 1; c < m; c++) s -= (A[r * m + c] as number) * (x[c] as number);
    x[r] = s / (A[r * m + r] as number);
  }
  return x;
}
