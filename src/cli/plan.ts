import type { Command } from 'commander';
import { resolveBatchRef } from '../batches/batch-ref.js';
import { loadPilot, loadRealismPilot, type Pilot } from '../analysis/pilot.queries.js';
import { planRealism, type RealismPilot, realismPlanLines } from '../analysis/realism-plan.js';
import { planSequential, sequentialPlanLines } from '../analysis/sequential-plan.js';
import { pairMajorityChances, parsePay, planLines, planStudy } from '../analysis/study-plan.js';
import { SPENDING_FAMILIES, type SpendingFamily } from '../numbers/group-sequential.js';
import { seededRandom } from '../scenarios/seeded-random.js';
import { type CliContext, CliError, printJson } from './cli-context.js';
import { numberOption } from './cli-numbers.js';

type PlanFlags = {
  effect?: string;
  alpha: string;
  power: string;
  k?: string;
  fromBatch?: string;
  pay?: string;
  minutes?: string;
  perRater?: string;
  sequential?: boolean;
  looks: string;
  spending: string;
  comparisons: string;
  futility?: string;
  bindingFutility?: boolean;
  raterLean: string;
  studies: string;
  realism?: boolean;
  margin?: string;
  accuracy: string;
  conditions?: string;
  iccPair?: string;
  iccRater?: string;
  json?: boolean;
};

export function registerPlan(program: Command, ctx: CliContext): void {
  program
    .command('plan')
    .description('pairs, judgments and raters a study needs to detect a preference with an exact sign test (or, with --realism, to show raters cannot tell synthetic from real), and its cost')
    .option('--effect <share>', 'the preference to detect, as a share of decisive judgments, e.g. 0.65 (needed unless --realism)')
    .option('--alpha <level>', 'two-sided significance level', '0.05')
    .option('--power <power>', 'the power wanted', '0.8')
    .option('--k <n>', 'raters per pair (default: the pilot batch\'s, else 3)')
    .option('--from-batch <id>', 'a pilot batch whose agreement (intra-pair correlation) and tie share set the design effect')
    .option('--pay <amount>', 'pay per rater, e.g. £3.00 (default: the pilot batch\'s)')
    .option('--minutes <n>', 'minutes of work per rater (default: the pilot batch\'s estimate)')
    .option('--per-rater <n>', 'pairs per rater (default: the pilot batch\'s cap, else 10)')
    .option('--sequential', 'also plan a group-sequential design over the same pairs: expected pairs and money saved')
    .option('--looks <n>', 'looks of the sequential design', '5')
    .option('--spending <family>', `alpha spending of the sequential design: ${SPENDING_FAMILIES.join(' or ')}`, 'obrien-fleming')
    .option('--comparisons <n>', 'comparisons in the batch (alpha is split over them)', '1')
    .option('--futility <beta>', 'also stop for futility, spending this beta (e.g. 0.2) by the family of the alpha spending')
    .option('--binding-futility', 'futility bounds bind: efficacy bounds account for them (default: non-binding)')
    .option('--rater-lean <sd>', 'SD of the raters\' leans toward a condition on the logit scale, simulated by --sequential', '0.5')
    .option('--studies <n>', 'simulated studies per line of --sequential (each a batch served and answered)', '400')
    .option('--realism', 'plan a which-is-real question\'s equivalence test instead (issue 53): needs --margin')
    .option('--margin <share>', '--realism: the equivalence margin around 0.5 detection accuracy, e.g. 0.05')
    .option('--accuracy <share>', '--realism: the detection accuracy assumed true', '0.5')
    .option('--conditions <n>', '--realism: synthetic conditions, each set against the real one (default 1)')
    .option('--icc-pair <rho>', '--realism: intraclass correlation of right answers within a pair (default: the pilot\'s, else 0)')
    .option('--icc-rater <rho>', '--realism: intraclass correlation of right answers within a rater (default: the pilot\'s, else 0)')
    .option('--json', 'print the plan as JSON')
    .action((flags: PlanFlags) => {
      if (flags.realism) {
        planRealismCommand(ctx, flags);
        return;
      }
      if (flags.effect === undefined) throw new CliError('--effect is required (the preference to detect, e.g. 0.65), or give --realism --margin M');
      const effect = numberOption('--effect', flags.effect, { min: 0, max: 1 }) as number;
      if (effect <= 0 || effect >= 1 || effect === 0.5) throw new CliError('--effect must be a share between 0 and 1 other than 0.5, e.g. 0.65');
      const alpha = numberOption('--alpha', flags.alpha, { min: 0.0001, max: 0.5 }) as number;
      const power = numberOption('--power', flags.power, { min: 0.05, max: 0.9999 }) as number;
      let pilot: Pilot | null = null;
      if (flags.fromBatch !== undefined) {
        const db = ctx.db();
        pilot = loadPilot(db, resolveBatchRef(db, flags.fromBatch));
        if (!pilot) throw new CliError(`no batch "${flags.fromBatch}"`);
      }
      const k = numberOption('--k', flags.k, { integer: true, min: 1, max: 50 }) ?? pilot?.settings?.judgmentsPerPair ?? 3;
      const perRater = numberOption('--per-rater', flags.perRater, { integer: true, min: 1, max: 1000 }) ?? pilot?.settings?.perRaterCap ?? 10;
      const payText = flags.pay ?? (pilot?.settings?.pay || undefined);
      const pay = payText === undefined ? null : parsePay(payText);
      if (payText !== undefined && !pay) throw new CliError(`--pay must be an amount such as £3.00 or 3.00 GBP, not "${payText}"`);
      const minutes = numberOption('--minutes', flags.minutes, { min: 1, max: 600 }) ?? (pilot?.settings ? pilot.settings.estimatedMinutes : null);
      const plan = planStudy({ effect, alpha, power, k, perRater, pilot, pay, minutes: pay ? minutes : null });
      const design = { effect, k, perRater, tieShare: plan.design.tie_share, chances: pairMajorityChances(k, effect, plan.design.rho, plan.design.tie_share) };
      const sequential = flags.sequential && plan.majority ? sequentialPlanOf(flags, plan.majority, design, alpha, (line) => ctx.err(line)) : null;
      if (flags.json) printJson(ctx, sequential ? { ...plan, sequential } : plan);
      else for (const line of [...planLines(plan), ...(sequential ? sequentialPlanLines(sequential) : [])]) ctx.out(line);
    });
}

function sequentialPlanOf(
  flags: PlanFlags,
  majority: { pairs_needed: number; cost: { total: number; currency: string } | null },
  design: { effect: number; k: number; perRater: number; tieShare: number; chances: { a: number; b: number; split: number } },
  alpha: number,
  progress: (line: string) => void,
) {
  const looks = numberOption('--looks', flags.looks, { integer: true, min: 2, max: 20 }) as number;
  const comparisons = numberOption('--comparisons', flags.comparisons, { integer: true, min: 1, max: 100 }) as number;
  if (!(SPENDING_FAMILIES as readonly string[]).includes(flags.spending)) throw new CliError(`--spending must be ${SPENDING_FAMILIES.join(' or ')}, not "${flags.spending}"`);
  const spending = flags.spending as SpendingFamily;
  const beta = numberOption('--futility', flags.futility, { min: 0.001, max: 0.499 });
  const futility = beta === undefined ? null : { beta, binding: flags.bindingFutility === true };
  const raterLean = numberOption('--rater-lean', flags.raterLean, { min: 0, max: 5 }) as number;
  const studies = numberOption('--studies', flags.studies, { integer: true, min: 100, max: 100_000 }) as number;
  return planSequential({
    maxPairs: majority.pairs_needed,
    effect: design.effect,
    judgmentsPerPair: design.k,
    perRater: design.perRater,
    raterLean,
    tieShare: design.tieShare,
    chances: design.chances,
    rule: { looks, alpha, spending },
    futility,
    comparisons,
    cost: majority.cost,
    studies,
    random: seededRandom(44),
    // A few lines on stderr (the JSON on stdout stays clean): the simulation takes a while.
    onStudy: (line, done) => {
      if (done % Math.max(1, Math.round(studies / 4)) === 0) progress(`simulating ${line}: ${done} of ${studies} studies`);
    },
  });
}

/** `plan --realism` (issue 53): pairs and raters for a which-is-real question's equivalence test. */
function planRealismCommand(ctx: CliContext, flags: PlanFlags): void {
  if (flags.margin === undefined) throw new CliError('--realism needs --margin, the equivalence margin around 0.5 detection accuracy (e.g. 0.05)');
  if (flags.effect !== undefined || flags.sequential) throw new CliError('--realism plans an equivalence test: it takes --margin and --accuracy, not --effect or --sequential');
  const margin = numberOption('--margin', flags.margin, { min: 0.001, max: 0.25 }) as number;
  const accuracy = numberOption('--accuracy', flags.accuracy, { min: 0.001, max: 0.999 }) as number;
  const alpha = numberOption('--alpha', flags.alpha, { min: 0.0001, max: 0.5 }) as number;
  const power = numberOption('--power', flags.power, { min: 0.05, max: 0.9999 }) as number;
  let pilot: RealismPilot | null = null;
  let settings: Pilot['settings'] = null;
  if (flags.fromBatch !== undefined) {
    const db = ctx.db();
    const batchId = resolveBatchRef(db, flags.fromBatch);
    const found = loadRealismPilot(db, batchId);
    if (found === null) throw new CliError(`no batch "${flags.fromBatch}"`);
    if (typeof found === 'string') throw new CliError(`--from-batch: ${found}`);
    pilot = found;
    settings = loadPilot(db, batchId)?.settings ?? null;
  }
  const icc = (flag: string, value: string | undefined, fromPilot: number | null | undefined) => numberOption(flag, value, { min: 0, max: 0.99 }) ?? Math.max(0, fromPilot ?? 0);
  const payText = flags.pay ?? (settings?.pay || undefined);
  const pay = payText === undefined ? null : parsePay(payText);
  if (payText !== undefined && !pay) throw new CliError(`--pay must be an amount such as £3.00 or 3.00 GBP, not "${payText}"`);
  const plan = planRealism({
    margin,
    accuracy,
    alpha,
    power,
    k: numberOption('--k', flags.k, { integer: true, min: 1, max: 50 }) ?? settings?.judgmentsPerPair ?? 3,
    perRater: numberOption('--per-rater', flags.perRater, { integer: true, min: 1, max: 1000 }) ?? settings?.perRaterCap ?? 10,
    conditions: numberOption('--conditions', flags.conditions, { integer: true, min: 1, max: 20 }) ?? 1,
    iccPair: icc('--icc-pair', flags.iccPair, pilot?.icc_pair),
    iccRater: icc('--icc-rater', flags.iccRater, pilot?.icc_rater),
    pilot,
    pay,
  });
  if (flags.json) printJson(ctx, plan);
  else for (const line of realismPlanLines(plan)) ctx.out(line);
}
