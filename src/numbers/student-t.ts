// Student's t distribution for whole degrees of freedom, by the closed forms of Abramowitz & Stegun (1964), 26.7.3
// and 26.7.4: with theta = atan(t / sqrt(nu)), P(|T| < t) is a finite series in sin(theta) and cos(theta), exact for
// integer nu (no continued fraction, no gamma function). The look statistic (src/batches/look-statistic.ts) refers a
// rater-clustered z to t with (raters - 1) degrees of freedom, so whole numbers are all it needs. Checked against R's
// pt (test/numbers/student-t.test.ts).

/** P(|T| >= |t|) for Student's t with `df` (a whole number >= 1) degrees of freedom. */
export function studentTTwoSided(t: number, df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError('degrees of freedom must be a whole number of at least 1');
  const x = Math.abs(t);
  if (x === Infinity) return 0;
  const theta = Math.atan(x / Math.sqrt(df));
  const sin = Math.sin(theta);
  const cos2 = Math.cos(theta) ** 2;
  let inside: number;
  if (df % 2 === 1) {
    // 26.7.3: A = (2/pi) [theta + sin cos (1 + (2/3) cos^2 + (2 4)/(3 5) cos^4 + ... up to cos^(nu - 3))], nu odd.
    let term = 1;
    let series = df > 1 ? 1 : 0;
    for (let k = 1; k <= (df - 3) / 2; k++) {
      term *= ((2 * k) / (2 * k + 1)) * cos2;
      series += term;
    }
    inside = (2 / Math.PI) * (theta + sin * Math.cos(theta) * series);
  } else {
    // 26.7.4: A = sin [1 + (1/2) cos^2 + (1 3)/(2 4) cos^4 + ... up to cos^(nu - 2)], nu even.
    let term = 1;
    let series = 1;
    for (let k = 1; k <= (df - 2) / 2; k++) {
      term *= ((2 * k - 1) / (2 * k)) * cos2;
      series += term;
    }
    inside = sin * series;
  }
  return Math.min(1, Math.max(0, 1 - inside));
}

/** The t whose two-sided tail is `p` (0 < p <= 1), by bisection on studentTTwoSided (monotone in t). */
export function studentTQuantileTwoSided(p: number, df: number): number {
  if (!(p > 0)) return Infinity;
  if (p >= 1) return 0;
  let lo = 0;
  let hi = 1;
  while (studentTTwoSided(hi, df) > p && hi < 1e12) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (studentTTwoSided(mid, df) > p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
