// Exact binomial test, computed in log space so it stays accurate for large n (a 1M-judgment batch).

const LOG_FACT_CACHE: number[] = [0];

/** log(k!) exactly summed for small k, Stirling series beyond (error < 1e-15 relative for k > 256). */
function logFactorial(k: number): number {
  if (k < 257) {
    while (LOG_FACT_CACHE.length <= k) {
      const i = LOG_FACT_CACHE.length;
      LOG_FACT_CACHE.push((LOG_FACT_CACHE[i - 1] as number) + Math.log(i));
    }
    return LOG_FACT_CACHE[k] as number;
  }
  const x = k + 1;
  const x2 = x * x;
  return (
    (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) +
    1 / (12 * x) - 1 / (360 * x * x2) + 1 / (1260 * x2 * x2 * x) - 1 / (1680 * x2 * x2 * x2 * x)
  );
}

/** log P(X = k) for X ~ Binomial(n, p). */
export function logBinomialPmf(k: number, n: number, p: number): number {
  if (k < 0 || k > n) return -Infinity;
  if (p === 0) return k === 0 ? 0 : -Infinity;
  if (p === 1) return k === n ? 0 : -Infinity;
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k) + k * Math.log(p) + (n - k) * Math.log1p(-p);
}

export type Alternative = 'two-sided' | 'greater' | 'less';

/**
 * Exact binomial test p-value. Two-sided: the sum of the probabilities of every outcome no more likely than the
 * observed one, with R's and scipy's relative tolerance of 1e-7 so that ties in probability are counted.
 * Returns null for n = 0.
 */
export function binomialTestP(x: number, n: number, p0 = 0.5, alternative: Alternative = 'two-sided'): number | null {
  if (!(n > 0) || x < 0 || x > n) return null;
  if (alternative === 'greater') return Math.min(1, sumPmf(x, n, n, p0));
  if (alternative === 'less') return Math.min(1, sumPmf(0, x, n, p0));
  const logObserved = logBinomialPmf(x, n, p0);
  if (logObserved === -Infinity) return 0;
  const threshold = logObserved + Math.log1p(1e-7);
  const lp = (k: number) => logBinomialPmf(k, n, p0);
  // The pmf rises up to the mode and falls after it, so {k : pmf(k) <= threshold} is two tails [0, kLow] and
  // [kHigh, n]; find their ends by bisection and sum each tail outward until the terms no longer matter.
  const mode = Math.min(n, Math.floor((n + 1) * p0));
  let lo = 0;
  let hi = mode;
  let kLow = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (lp(mid) <= threshold) {
      kLow = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  lo = mode + 1;
  hi = n;
  let kHigh = n + 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (lp(mid) <= threshold) {
      kHigh = mid;
      hi = mid - 1;
    } else lo = mid + 1;
  }
  let total = 0;
  for (let k = kLow; k >= 0; k--) {
    const term = Math.exp(lp(k) - logObserved);
    total += term;
    if (term < total * 1e-20) break;
  }
  for (let k = kHigh; k <= n; k++) {
    const term = Math.exp(lp(k) - logObserved);
    total += term;
    if (term < total * 1e-20) break;
  }
  if (total === 0) return 0;
  return Math.min(1, Math.exp(Math.log(total) + logObserved));
}

function sumPmf(from: number, to: number, n: number, p: number): number {
  let total = 0;
  for (let k = from; k <= to; k++) total += Math.exp(logBinomialPmf(k, n, p));
  return total;
}
