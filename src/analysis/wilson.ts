/** The normal quantile for a two-sided 95% interval, to full precision (1.96 moves the fourth decimal). */
export const Z95 = 1.959963984540054;

/**
 * Wilson score interval for x successes in n trials (Wilson 1927; Newcombe 1998 method 3).
 * Returns null for n = 0: there is no proportion to bound.
 */
export function wilsonInterval(x: number, n: number, z = Z95): [number, number] | null {
  if (!(n > 0)) return null;
  const p = x / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // Clamp rounding noise at the edges (x = 0 or x = n give exactly 0 or 1).
  const low = x === 0 ? 0 : Math.max(0, centre - half);
  const high = x === n ? 1 : Math.min(1, centre + half);
  return [low, high];
}

/** Half the width of the Wilson interval, in proportion units. */
export function wilsonHalfWidth(x: number, n: number, z = Z95): number | null {
  const ci = wilsonInterval(x, n, z);
  return ci ? (ci[1] - ci[0]) / 2 : null;
}
