// Small dense matrices as row-major Float64Arrays (m × m), for the regressions of src/analysis/: a few dozen
// parameters at most, so plain Gauss-Jordan elimination is exact enough and needs no library.

/** Gauss-Jordan inverse of a small square matrix with partial pivoting; null when (nearly) singular. */
export function invertMatrix(a: Float64Array, m: number): Float64Array | null {
  const A = Float64Array.from(a);
  const I = new Float64Array(m * m);
  for (let i = 0; i < m; i++) I[i * m + i] = 1;
  let scale = 0;
  for (const v of A) scale = Math.max(scale, Math.abs(v));
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(A[r * m + col] as number) > Math.abs(A[pivot * m + col] as number)) pivot = r;
    const pv = A[pivot * m + col] as number;
    if (Math.abs(pv) <= 1e-12 * Math.max(1, scale)) return null;
    for (let c = 0; c < m; c++) {
      [A[col * m + c], A[pivot * m + c]] = [A[pivot * m + c] as number, A[col * m + c] as number];
      [I[col * m + c], I[pivot * m + c]] = [I[pivot * m + c] as number, I[col * m + c] as number];
    }
    const d = A[col * m + col] as number;
    for (let c = 0; c < m; c++) {
      A[col * m + c]! /= d;
      I[col * m + c]! /= d;
    }
    for (let r = 0; r < m; r++) {
      if (r === col) continue;
      const f = A[r * m + col] as number;
      if (f === 0) continue;
      for (let c = 0; c < m; c++) {
        A[r * m + c]! -= f * (A[col * m + c] as number);
        I[r * m + c]! -= f * (I[col * m + c] as number);
      }
    }
  }
  return I;
}

/** B · M · B for square m × m matrices (a sandwich whose bread is symmetric). */
export function sandwich(bread: Float64Array, meat: Float64Array, m: number): Float64Array {
  const left = new Float64Array(m * m);
  for (let i = 0; i < m; i++)
    for (let k = 0; k < m; k++) {
      const b = bread[i * m + k] as number;
      if (b === 0) continue;
      for (let j = 0; j < m; j++) left[i * m + j]! += b * (meat[k * m + j] as number);
    }
  const out = new Float64Array(m * m);
  for (let i = 0; i < m; i++)
    for (let k = 0; k < m; k++) {
      const l = left[i * m + k] as number;
      if (l === 0) continue;
      for (let j = 0; j < m; j++) out[i * m + j]! += l * (bread[k * m + j] as number);
    }
  return out;
}

/** c' V c: the variance of the linear combination c of estimates whose covariance is V (m × m). */
export function quadraticForm(v: Float64Array, c: readonly number[], m: number): number {
  let s = 0;
  for (let i = 0; i < m; i++) {
    const ci = c[i] ?? 0;
    if (ci === 0) continue;
    for (let j = 0; j < m; j++) s += ci * (v[i * m + j] as number) * (c[j] ?? 0);
  }
  return s;
}
