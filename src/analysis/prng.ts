/**
 * Seeded pseudo-random numbers for bootstraps, so an analysis re-run with the same seed gives the same intervals.
 * mulberry32 (same generator as src/scenarios/seeded-random.ts), copied here so analysis stays free of other features.
 */
export function createPrng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
