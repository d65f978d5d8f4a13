// Runs the real stopping rule (src/batches/sequential-rule.ts, through src/analysis/sequential-simulation.ts) on
// simulated comparisons: the type I error under the null with and without late looks, and power and pairs used at
// win rates 0.6, 0.65 and 0.7 against the fixed design; then the same with futility stopping, binding and not. Prints a Markdown table (docs/researcher/sequential-batches.md).
// Run: npx tsx scripts/sequential-simulation.ts [studies=20000] [seed=44]
import { simulateSequential } from '../src/analysis/sequential-simulation.js';
import { seededRandom } from '../src/scenarios/seeded-random.js';

const studies = Number(process.argv[2] ?? 20_000);
const seed = Number(process.argv[3] ?? 44);
const PAIRS = 200;
const TIES = 0;
const ALPHA = 0.05;

const rows: string[] = [];
rows.push('| spending | looks | late looks | win rate | studies | stopped for efficacy (MC s.e.) | limit alpha + 3 s.e. | fixed design | mean pairs used | pairs saved |');
rows.push('|---|---|---|---|---|---|---|---|---|---|');
for (const spending of ['obrien-fleming', 'pocock'] as const) {
  for (const lateBy of [0, 20]) {
    for (const winRate of [0.5, 0.6, 0.65, 0.7]) {
      const started = Date.now();
      const result = simulateSequential({
        pairs: PAIRS,
        rule: { looks: 5, alpha: ALPHA, spending },
        comparisons: 1,
        winRate,
        tieShare: TIES,
        lateBy,
        studies,
        random: seededRandom(seed + Math.round(winRate * 100) + lateBy * 1000 + (spending === 'pocock' ? 7 : 0)),
      });
      const limit = ALPHA + 3 * Math.sqrt((ALPHA * (1 - ALPHA)) / studies);
      rows.push(
        `| ${spending} | 5 | ${lateBy === 0 ? 'no' : `0/${lateBy / 2}/${lateBy} pairs`} | ${winRate} | ${studies} | ${result.rejectRate.toFixed(4)} (${result.standardError.toFixed(4)}) | ${winRate === 0.5 ? limit.toFixed(4) : ''} | ${result.fixedRejectRate.toFixed(4)} | ${result.meanPairs.toFixed(1)} of ${PAIRS} | ${(100 * (1 - result.meanPairs / PAIRS)).toFixed(1)}% |`,
      );
      if (winRate === 0.5 && result.rejectRate > limit) rows.push(`<!-- type I error above the limit: ${result.rejectRate} > ${limit} -->`);
      console.error(`${spending} late ${lateBy} win ${winRate}: ${Date.now() - started} ms`);
    }
  }
}
// Ties: a tenth of the pairs tied, so the information at each look is short of the plan and the bounds are computed at
// the fractions reached (each study its own), which makes this run slow: fewer studies, under the null only.
const tieStudies = Math.max(1, Math.round(studies / 10));
for (const spending of ['obrien-fleming', 'pocock'] as const) {
  const result = simulateSequential({ pairs: PAIRS, rule: { looks: 5, alpha: ALPHA, spending }, comparisons: 1, winRate: 0.5, tieShare: 0.1, lateBy: 0, studies: tieStudies, random: seededRandom(seed + 99) });
  const limit = ALPHA + 3 * Math.sqrt((ALPHA * (1 - ALPHA)) / tieStudies);
  rows.push(
    `| ${spending} | 5 | no, 10% ties | 0.5 | ${tieStudies} | ${result.rejectRate.toFixed(4)} (${result.standardError.toFixed(4)}) | ${limit.toFixed(4)} | ${result.fixedRejectRate.toFixed(4)} | ${result.meanPairs.toFixed(1)} of ${PAIRS} | ${(100 * (1 - result.meanPairs / PAIRS)).toFixed(1)}% |`,
  );
}
// Futility (beta 0.2 at a win rate of 0.65 over the 200 pairs), binding and not, without ties; late looks under the
// null and at the planned effect.
const futilityRows: string[] = [];
futilityRows.push('| spending | futility | late looks | win rate | studies | stopped for efficacy (MC s.e.) | limit alpha + 3 s.e. | stopped for futility | fixed design | mean pairs used | pairs saved |');
futilityRows.push('|---|---|---|---|---|---|---|---|---|---|---|');
for (const spending of ['obrien-fleming', 'pocock'] as const) {
  for (const binding of [false, true]) {
    for (const lateBy of [0, 20]) {
      for (const winRate of lateBy === 0 ? [0.5, 0.55, 0.6, 0.65, 0.7] : [0.5, 0.65]) {
        const futility = { beta: 0.2, effect: 0.65, binding };
        const random = seededRandom(seed + Math.round(winRate * 100) + (binding ? 500 : 0) + lateBy * 1000 + (spending === 'pocock' ? 7 : 0));
        const result = simulateSequential({ pairs: PAIRS, rule: { looks: 5, alpha: ALPHA, spending, futility }, comparisons: 1, winRate, tieShare: TIES, lateBy, studies, random });
        const limit = ALPHA + 3 * Math.sqrt((ALPHA * (1 - ALPHA)) / studies);
        futilityRows.push(
          `| ${spending} | beta 0.2 at 0.65, ${binding ? 'binding' : 'non-binding'} | ${lateBy === 0 ? 'no' : `0/${lateBy / 2}/${lateBy} pairs`} | ${winRate} | ${studies} | ${result.rejectRate.toFixed(4)} (${result.standardError.toFixed(4)}) | ${winRate === 0.5 ? limit.toFixed(4) : ''} | ${result.futilityRate.toFixed(4)} | ${result.fixedRejectRate.toFixed(4)} | ${result.meanPairs.toFixed(1)} of ${PAIRS} | ${(100 * (1 - result.meanPairs / PAIRS)).toFixed(1)}% |`,
        );
        if (winRate === 0.5 && result.rejectRate > limit) futilityRows.push(`<!-- type I error above the limit: ${result.rejectRate} > ${limit} -->`);
      }
    }
  }
}
console.log(`${PAIRS} pairs, alpha ${ALPHA}, 5 looks (every 40 completed pairs); late looks are taken 0, 10 or 20 pairs late at random; seed ${seed}.\n`);
console.log(rows.join('\n'));
console.log('\nWith futility stopping:\n');
console.log(futilityRows.join('\n'));
