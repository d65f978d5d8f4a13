// The tables of docs/researcher/sequential-batches.md ("Measured"): sequential batches simulated as they run
// (src/analysis/sequential-simulation.ts, through evaluateLook, the answer path's own decision) and served as the
// server serves them (comparisons interleaved, no more of a comparison's pairs handed out than its next look needs):
// raters arrive, 5 at work at once, each promised up to N pairs and leaning toward a condition (SD on the logit
// scale), K raters a pair, tie answers, pairs held at a stop served after it, raters who find nothing open before
// their promise is done paid all the same, reallocation. Prints Markdown tables; progress goes to stderr.
// Run: nice npx tsx scripts/sequential-simulation.ts [studies=20000] [seed=51] [tables=1,2,3,4]
//   1: the world (K = 3, leans SD 0.5, no ties) at 5, 20 and 40 pairs a rater: the fixed design's exact test
//      of pair majorities against the rater-clustered test, and the sequential rule;
//   2: every design the docs offer (both spendings; no futility, non-binding, binding) in the base world (K = 3, 20
//      pairs a rater, leans SD 0.5, 10% tie answers): type I error, power, futility stops, judgments served and paid for;
//   3: K = 2, where a third of the pairs tie;
//   4: reallocation: a decided comparison's unused judgments buy pairs for an undecided one, with and without
//      binding futility;
//   5: table 4's Pocock line with futility again, twice the studies, binding and non-binding (not run by default);
//   6: the base world under no preference at 12 and 10 pairs a rater, where the first look of 40 pairs has 10 raters
//      or more and is taken as planned rather than waiting for them (not run by default);
//   7: table 1's world at 30 pairs a rater (20 raters), what the launch checklist requires of O'Brien-Fleming (not run
//      by default);
//   8: table 1's world at 35, 50 and 60 pairs a rater, where `open` refuses O'Brien-Fleming below 20 raters (not run by
//      default).
import { simulateSequential, type SimulationInput, type SimulationResult } from '../src/analysis/sequential-simulation.js';
import { seededRandom } from '../src/scenarios/seeded-random.js';

const studies = Number(process.argv[2] ?? 20_000);
const seed = Number(process.argv[3] ?? 51);
const tables = new Set((process.argv[4] ?? '1,2,3,4').split(',').map(Number));
const ALPHA = 0.05;
const limit = (alpha: number) => alpha + 3 * Math.sqrt((alpha * (1 - alpha)) / studies);
const f4 = (x: number) => x.toFixed(4);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

const base: Omit<SimulationInput, 'winRates' | 'rule' | 'random' | 'studies'> = {
  pairs: 200,
  judgmentsPerPair: 3,
  perRater: 20,
  raterLean: 0.5,
  tieShare: 0.1,
  concurrency: 5,
  reserve: 0,
};

let line = 0;
function run(label: string, input: Omit<SimulationInput, 'random' | 'studies' | 'onStudy'>, how: { studies: number; stream?: number } = { studies }): SimulationResult {
  line++;
  const started = Date.now();
  const result = simulateSequential({
    ...input,
    studies: how.studies,
    random: seededRandom(seed * 1000 + (how.stream ?? line)),
    onStudy: (done) => {
      if (done % 1000 === 0) process.stderr.write(`  ${label}: ${done} of ${how.studies} studies, ${Math.round((Date.now() - started) / 1000)} s\n`);
    },
  });
  process.stderr.write(`${label}: done in ${Math.round((Date.now() - started) / 1000)} s\n`);
  return result;
}

/** Raters a batch admitted, with those who finished short of their promise (paid all the same). */
const raters = (r: SimulationResult) => `${r.meanRaters.toFixed(1)} (${r.meanShortRaters.toFixed(1)})`;

const spendings = ['obrien-fleming', 'pocock'] as const;

/** Table 1's world (tables 7 and 8 too): no ties, no preference, 5 looks, at `perRater` pairs a rater. */
const sharedRaters = (perRater: number, spending: (typeof spendings)[number]) => ({ ...base, tieShare: 0, perRater, winRates: [0.5], rule: { looks: 5, alpha: ALPHA, spending } });
const out: string[] = [`${studies} studies a line, seed ${seed}; a type I error must be at most alpha + 3 Monte Carlo standard errors (${f4(limit(ALPHA))} at alpha ${ALPHA}).`, ''];

if (tables.has(1)) {
  out.push('**Shared raters** (200 pairs, K = 3, raters leaning with SD 0.5, no ties; 5 looks):', '');
  out.push('| pairs a rater | raters | fixed design: exact test of pair majorities | fixed design: rater-clustered | spending | sequential rule (MC s.e.) |');
  out.push('|---|---|---|---|---|---|');
  for (const perRater of [5, 20, 40]) {
    for (const spending of spendings) {
      const [c] = run(`table 1, ${perRater} a rater, ${spending}`, sharedRaters(perRater, spending)).comparisons;
      if (!c) continue;
      out.push(`| ${perRater} | ${(600 / perRater).toFixed(0)} | ${f4(c.fixedExactRate)} | ${f4(c.fixedClusteredRate)} | ${spending} | ${f4(c.rejectRate)} (${f4(c.standardError)}) |`);
    }
  }
  out.push('');
  flush();
}

if (tables.has(2)) {
  out.push('**Every design** (200 pairs, K = 3, 20 pairs a rater, leans SD 0.5, 10% tie answers, 5 raters at work at once; 5 looks; futility at beta 0.2 and a pair-majority win rate of 0.65):', '');
  out.push('| spending | futility | judgment win rate | rejected (MC s.e.) | limit | stopped for futility | fixed design, rater-clustered | pairs at the stop | judgments served (of 600) | after the stop | raters (short of their promise) | judgments paid for | saved |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const spending of spendings) {
    for (const futility of [null, { beta: 0.2, effect: 0.65, binding: false }, { beta: 0.2, effect: 0.65, binding: true }]) {
      for (const winRate of [0.5, 0.65]) {
        const name = futility === null ? 'none' : futility.binding ? 'binding' : 'non-binding';
        const batch = run(`table 2, ${spending}, futility ${name}, win rate ${winRate}`, { ...base, winRates: [winRate], rule: { looks: 5, alpha: ALPHA, spending, futility } });
        const [c] = batch.comparisons;
        if (!c) continue;
        const flag = winRate === 0.5 && c.rejectRate > limit(ALPHA) ? ' (above the limit)' : '';
        out.push(
          `| ${spending} | ${name} | ${winRate} | ${f4(c.rejectRate)} (${f4(c.standardError)})${flag} | ${winRate === 0.5 ? f4(limit(ALPHA)) : ''} | ${f4(c.futilityRate)} | ${f4(c.fixedClusteredRate)} | ${c.meanPairsUsed.toFixed(1)} | ${c.meanJudgments.toFixed(1)} | ${c.meanAfterStop.toFixed(1)} | ${raters(batch)} | ${batch.meanPaidJudgments.toFixed(1)} | ${pct(1 - batch.meanPaidJudgments / c.meanMaxJudgments)} |`,
        );
      }
    }
  }
  out.push('');
  flush();
}

if (tables.has(3)) {
  out.push('**K = 2** (200 pairs, 20 pairs a rater, leans SD 0.5, 10% tie answers: about a third of the pairs tie; no preference):', '');
  out.push('| spending | rejected (MC s.e.) | limit | fixed design, rater-clustered | judgments served (of 400) | raters (short of their promise) | judgments paid for |');
  out.push('|---|---|---|---|---|---|---|');
  for (const spending of spendings) {
    const batch = run(`table 3, K = 2, ${spending}`, { ...base, judgmentsPerPair: 2, winRates: [0.5], rule: { looks: 5, alpha: ALPHA, spending } });
    const [c] = batch.comparisons;
    if (!c) continue;
    out.push(`| ${spending} | ${f4(c.rejectRate)} (${f4(c.standardError)}) | ${f4(limit(ALPHA))} | ${f4(c.fixedClusteredRate)} | ${c.meanJudgments.toFixed(1)} | ${raters(batch)} | ${batch.meanPaidJudgments.toFixed(1)} |`);
  }
  out.push('');
  flush();
}

if (tables.has(4)) {
  out.push('**Reallocation** (two comparisons of 200 pairs in the base world, alpha 0.025 each; the first at a win rate of 0.65, the second with no preference and 60 unused samples to receive pairs from; futility at beta 0.2 and 0.65, binding):', '');
  out.push('| spending | futility | first: rejected | second: rejected (MC s.e.) | limit at 0.025 | second: judgments served | second: its maximum (judgments) | both: after the stop | raters (short of their promise) | both: judgments paid for |');
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const spending of spendings) {
    for (const futility of [null, { beta: 0.2, effect: 0.65, binding: true }]) {
      const name = futility === null ? 'none' : 'binding';
      const batch = run(`table 4, reallocation, ${spending}, futility ${name}`, { ...base, reserve: 60, winRates: [0.65, 0.5], rule: { looks: 5, alpha: ALPHA, spending, reallocate: true, futility } });
      const [first, second] = batch.comparisons;
      if (!first || !second) continue;
      out.push(
        `| ${spending} | ${name} | ${f4(first.rejectRate)} | ${f4(second.rejectRate)} (${f4(second.standardError)}) | ${f4(limit(ALPHA / 2))} | ${second.meanJudgments.toFixed(1)} | ${second.meanMaxJudgments.toFixed(1)} | ${(first.meanAfterStop + second.meanAfterStop).toFixed(1)} | ${raters(batch)} | ${batch.meanPaidJudgments.toFixed(1)} |`,
      );
    }
  }
  out.push('');
  flush();
}

if (tables.has(5)) {
  // The one line of table 4 above its limit at the first run (Pocock, binding futility: 0.0322 against 0.0316, served
  // before issue 51's look room), again with twice the studies and streams of its own (the same whichever tables
  // run), beside non-binding futility.
  const more = 2 * studies;
  const limitMore = 0.025 + 3 * Math.sqrt((0.025 * 0.975) / more);
  out.push(`**Reallocation with Pocock spending and futility, again** (${more} studies a line, streams of their own; as table 4):`, '');
  out.push('| futility | second: rejected (MC s.e.) | limit at 0.025 | second: stopped for futility | second: judgments paid for |');
  out.push('|---|---|---|---|---|');
  for (const [j, binding] of [true, false].entries()) {
    const futility = { beta: 0.2, effect: 0.65, binding };
    const [, second] = run(`table 5, reallocation, pocock, ${binding ? 'binding' : 'non-binding'}`, { ...base, reserve: 60, fixedDesign: false, winRates: [0.65, 0.5], rule: { looks: 5, alpha: ALPHA, spending: 'pocock', reallocate: true, futility } }, { studies: more, stream: 900 + j }).comparisons;
    if (!second) continue;
    out.push(`| ${binding ? 'binding' : 'non-binding'} | ${f4(second.rejectRate)} (${f4(second.standardError)}) | ${f4(limitMore)} | ${f4(second.futilityRate)} | ${second.meanJudgments.toFixed(1)} |`);
  }
  out.push('');
  flush();
}

if (tables.has(6)) {
  // Streams of their own (the same whichever tables run), as first measured while writing the docs.
  out.push('**Fewer pairs a rater** (as table 2, no futility, no preference; the first look of 40 pairs has 10 raters or more):', '');
  out.push('| pairs a rater | spending | rejected (MC s.e.) | limit | looks with the rater-clustered statistic | raters |');
  out.push('|---|---|---|---|---|---|');
  let stream = 700;
  for (const perRater of [12, 10]) {
    for (const spending of ['pocock', 'obrien-fleming'] as const) {
      const batch = run(`table 6, ${perRater} a rater, ${spending}`, { ...base, perRater, fixedDesign: false, winRates: [0.5], rule: { looks: 5, alpha: ALPHA, spending } }, { studies, stream: stream++ });
      const [c] = batch.comparisons;
      if (!c) continue;
      out.push(`| ${perRater} | ${spending} | ${f4(c.rejectRate)} (${f4(c.standardError)}) | ${f4(limit(ALPHA))} | ${pct(c.clusteredShare)} | ${batch.meanRaters.toFixed(1)} |`);
    }
  }
  out.push('');
  flush();
}

if (tables.has(7)) {
  // What the launch checklist requires of an O'Brien-Fleming batch (sequentialRaters): 20 raters, here 30
  // pairs a rater in table 1's world. Streams of their own (the same whichever tables run); not run by default.
  out.push('**Twenty raters** (as table 1: 200 pairs, K = 3, leans SD 0.5, no ties; 5 looks; 30 pairs a rater):', '');
  out.push('| spending | raters | fixed design: rater-clustered | sequential rule (MC s.e.) | limit |');
  out.push('|---|---|---|---|---|');
  for (const [j, spending] of spendings.entries()) {
    const batch = run(`table 7, 30 a rater, ${spending}`, sharedRaters(30, spending), { studies, stream: 800 + j });
    const [c] = batch.comparisons;
    if (!c) continue;
    out.push(`| ${spending} | ${batch.meanRaters.toFixed(1)} | ${f4(c.fixedClusteredRate)} | ${f4(c.rejectRate)} (${f4(c.standardError)}) | ${f4(limit(ALPHA))} |`);
  }
  out.push('');
  flush();
}

if (tables.has(8)) {
  // Below 20 raters, where `open` refuses O'Brien-Fleming (sequentialRaters): table 1's world at 35, 50 and
  // 60 pairs a rater, beside table 1's 40. Streams of their own; not run by default.
  out.push('**Fewer raters** (as table 1: 200 pairs, K = 3, leans SD 0.5, no ties; 5 looks):', '');
  out.push('| pairs a rater | spending | raters | fixed design: rater-clustered | sequential rule (MC s.e.) | limit |');
  out.push('|---|---|---|---|---|---|');
  for (const [i, perRater] of [35, 50, 60].entries()) {
    for (const [j, spending] of spendings.entries()) {
      const batch = run(`table 8, ${perRater} a rater, ${spending}`, sharedRaters(perRater, spending), { studies, stream: 900 + 2 * i + j });
      const [c] = batch.comparisons;
      if (!c) continue;
      out.push(`| ${perRater} | ${spending} | ${batch.meanRaters.toFixed(1)} | ${f4(c.fixedClusteredRate)} | ${f4(c.rejectRate)} (${f4(c.standardError)}) | ${f4(limit(ALPHA))} |`);
    }
  }
  out.push('');
  flush();
}

// Each table is printed as soon as it is done: a long run stopped half way keeps the tables it finished.
function flush(): void {
  console.log(out.join('\n'));
  out.length = 0;
}
