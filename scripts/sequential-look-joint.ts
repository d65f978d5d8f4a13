// Why a sequential batch of few raters rejects more often than alpha (docs/researcher/sequential-batches.md, "Why 15
// raters is too few"): every look of table 1's world seen, with alpha so low that no study stops (a look's timing
// does not depend on alpha). For each look: its z's variance and how often its p-value is under 0.05 and 0.01; the
// looks' correlations against those the bounds assume (from the information, sqrt(I_j / I_k)); and how often the
// looks cross each spending's bounds at alpha 0.05 against a normal sequence with the measured correlations.
//   nice npx tsx scripts/sequential-look-joint.ts [studies=8000] [pairs a rater=40] [seed=51]
import { simulateSequential } from '../src/analysis/sequential-simulation.js';
import { twoSidedBoundaries } from '../src/numbers/group-sequential.js';
import { seededRandom } from '../src/scenarios/seeded-random.js';

const studies = Number(process.argv[2] ?? 8000);
const perRater = Number(process.argv[3] ?? 40);
const seed = Number(process.argv[4] ?? 51);
type Look = { z: number; p: number; information: number; fraction: number; raters: number; df: number | null; completed: number };
const runs: Look[][] = [[]];
simulateSequential({
  pairs: 200,
  judgmentsPerPair: 3,
  perRater,
  raterLean: 0.5,
  tieShare: 0,
  concurrency: 5,
  reserve: 0,
  winRates: [0.5],
  fixedDesign: false,
  rule: { looks: 5, alpha: 1e-9, spending: 'obrien-fleming' },
  studies,
  random: seededRandom(seed * 1000 + 11),
  onLook: ({ statistic: s, decision: d }) => (runs[runs.length - 1] as Look[]).push({ z: Math.sign(s.estimate) * s.z, p: s.pValue, information: d.information, fraction: d.fraction, raters: s.raters, df: s.df, completed: s.completed }),
  onStudy: () => runs.push([]),
});
runs.pop();
const K = Math.min(...runs.map((r) => r.length));
const full = runs.map((r) => r.slice(0, K));
const mean = (f: (r: Look[]) => number) => full.reduce((a, r) => a + f(r), 0) / full.length;
console.log(`${studies} studies at ${perRater} pairs a rater (seed ${seed}); ${K} looks in every study`);
for (let k = 0; k < K; k++) {
  const at = (f: (l: Look) => number) => mean((r) => f(r[k] as Look));
  console.log(`look ${k + 1}: ${at((l) => l.completed).toFixed(1)} pairs, ${at((l) => l.raters).toFixed(1)} raters, df ${at((l) => l.df ?? 0).toFixed(1)}, information ${at((l) => l.information).toFixed(3)}; var z ${at((l) => l.z * l.z).toFixed(3)}, p < 0.05: ${at((l) => (l.p <= 0.05 ? 1 : 0)).toFixed(4)}, p < 0.01: ${at((l) => (l.p <= 0.01 ? 1 : 0)).toFixed(4)}`);
}
const correlation: number[][] = [];
for (let j = 0; j < K; j++) {
  correlation.push([]);
  for (let k = 0; k < K; k++) {
    const c = mean((r) => (r[j] as Look).z * (r[k] as Look).z) / Math.sqrt(mean((r) => (r[j] as Look).z ** 2) * mean((r) => (r[k] as Look).z ** 2));
    (correlation[j] as number[]).push(c);
    if (k > j) console.log(`correlation of looks ${j + 1} and ${k + 1}: ${c.toFixed(3)} measured, ${mean((r) => Math.sqrt((r[j] as Look).information / (r[k] as Look).information)).toFixed(3)} assumed`);
  }
}
// A normal sequence with the measured correlations (Cholesky factor), through the bounds at the looks' mean points.
const L = correlation.map(() => new Array<number>(K).fill(0));
for (let i = 0; i < K; i++) {
  for (let j = 0; j <= i; j++) {
    let s = (correlation[i] as number[])[j] as number;
    for (let k = 0; k < j; k++) s -= (L[i] as number[])[k]! * (L[j] as number[])[k]!;
    (L[i] as number[])[j] = i === j ? Math.sqrt(s) : s / (L[j] as number[])[j]!;
  }
}
const normal = seededRandom(99);
const gaussian = () => Math.sqrt(-2 * Math.log(1 - normal())) * Math.cos(2 * Math.PI * normal());
for (const spending of ['obrien-fleming', 'pocock'] as const) {
  let crossed = 0;
  for (const r of full) {
    const b = twoSidedBoundaries(r.map((l) => l.fraction), 0.05, spending, r.map((l) => l.information));
    if (r.some((l, i) => l.p <= (b.nominal[i] as number))) crossed++;
  }
  const b = twoSidedBoundaries(full[0]!.map((_, i) => mean((r) => (r[i] as Look).fraction)), 0.05, spending, full[0]!.map((_, i) => mean((r) => (r[i] as Look).information)));
  let normalCrossed = 0;
  const draws = 200_000;
  for (let m = 0; m < draws; m++) {
    const e = Array.from({ length: K }, gaussian);
    for (let i = 0; i < K; i++) {
      let z = 0;
      for (let k = 0; k <= i; k++) z += (L[i] as number[])[k]! * (e[k] as number);
      if (Math.abs(z) >= (b.critical[i] as number)) {
        normalCrossed++;
        break;
      }
    }
  }
  console.log(`${spending} at alpha 0.05: the looks cross ${(crossed / full.length).toFixed(4)}; a normal sequence with the measured correlations ${(normalCrossed / draws).toFixed(4)}`);
}
