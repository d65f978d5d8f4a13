import type { Command } from 'commander';
import { formatMinor } from '../recruiting/prolific-plan.js';
import { describeMturkPlan, mturkStatus, publishOnMturk, settleOnMturk } from '../recruiting/mturk-workflows.js';
import { type CliContext, printJson } from './cli-context.js';
import { batchRef, platformDeps, sayStudyLink } from './platform-deps.js';

export function registerMturk(program: Command, ctx: CliContext): void {
  const mturk = program.command('mturk').description('run a batch as MTurk HITs: publish them, watch them, approve and pay (AWS credentials)');

  mturk
    .command('publish')
    .description('create the HIT type and HITs from the batch (--dry-run: print the requests and the cost, send nothing)')
    .argument('<batch>', 'batch id or name')
    .option('--dry-run', 'print the exact requests and the cost; create and spend nothing')
    .option('--sandbox', "publish in MTurk's sandbox (no money moves)")
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { dryRun?: boolean; sandbox?: boolean; json?: boolean }) => {
      const result = await publishOnMturk(platformDeps(ctx, { needsPublicUrl: true }), batchRef(ctx, ref), { dryRun: options.dryRun === true, sandbox: options.sandbox });
      sayStudyLink(ctx, result.entryUrl, result.warnings, options.json === true);
      if (options.json) return printJson(ctx, result);
      if (options.dryRun) {
        ctx.out(`Dry run: nothing is sent. The requests publish would send to ${result.endpoint}:`);
        for (const r of result.requests) ctx.out(`${r.operation}\n${JSON.stringify(r.body, null, 2)}`);
      }
      ctx.out(`HITs: ${result.hits} of ${result.assignmentsPerHit} assignments; reward ${formatMinor(result.rewardMinor, 'USD')} each; rewards ${formatMinor(result.rewardsMinor, 'USD')}.`);
      ctx.out(`MTurk's fees: ${formatMinor(result.feesMinor, 'USD')} (20%, 40% on HITs of 10 or more assignments); total ${formatMinor(result.rewardsMinor + result.feesMinor, 'USD')} before bonuses.`);
      if (result.balance !== null) ctx.out(`Account balance on MTurk: ${result.balance} USD.`);
      if (!options.dryRun) ctx.out(`Published on MTurk${result.sandbox ? ' (sandbox)' : ''}: HIT ${result.hitIds.join(', ')}.`);
    });

  mturk
    .command('status')
    .description("the HITs, assignments by status next to simarena's outcomes, every mismatch")
    .argument('<batch>', 'batch id or name')
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { json?: boolean }) => {
      const status = await mturkStatus(platformDeps(ctx), batchRef(ctx, ref));
      if (options.json) return printJson(ctx, status);
      for (const h of status.hits) ctx.out(`HIT ${h.hitId}: ${h.status}; ${h.completed} done, ${h.pending} working, ${h.available} available of ${h.maxAssignments}; expires ${h.expiresAt ?? '?'}.`);
      ctx.out(`MTurk assignments: ${Object.entries(status.assignments).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`);
      ctx.out(`simarena outcomes: ${Object.entries(status.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`);
      if (status.mismatches.length === 0) ctx.out('No mismatch.');
      for (const m of status.mismatches) ctx.out(`mismatch: ${m.workerId ?? '?'} (${m.assignmentId ?? 'no assignment'}): ${m.problem}`);
    });

  mturk
    .command('settle')
    .description('approve the completed assignments and pay each bonus once (--dry-run: print the plan)')
    .argument('<batch>', 'batch id or name')
    .option('--dry-run', 'print what would be approved, reviewed and paid; send nothing')
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { dryRun?: boolean; json?: boolean }) => {
      const result = await settleOnMturk(platformDeps(ctx), batchRef(ctx, ref), { dryRun: options.dryRun === true });
      if (options.json) return printJson(ctx, result);
      const { confirmed, notDone, held } = result.reconciled;
      if (confirmed + notDone + held > 0) {
        ctx.out(`Checked ${confirmed + notDone + held} operation(s) left unconfirmed by an earlier run: ${confirmed} done on MTurk, ${notDone} not done${held > 0 ? `, ${held} still held (MTurk refused them again as already done but does not list them yet)` : ''}.`);
      }
      ctx.out(options.dryRun ? 'Dry run: nothing is sent. Settle would do:' : 'Planned:');
      for (const line of describeMturkPlan(result.plan)) ctx.out(`  ${line}`);
      for (const r of result.plan.review) ctx.out(`  review: ${r.workerId} (${r.assignmentId}, ${r.status ?? '?'}): ${r.why}`);
      if (!options.dryRun) ctx.out(`Sent: approved ${result.sent.approved}, bonuses paid ${result.sent.bonusesPaid} (${formatMinor(result.sent.bonusMinor, 'USD')}).`);
      for (const h of result.held) ctx.out(`  held: ${h.workerId}: MTurk refused the bonus again as already sent, but does not list it yet: not sent again. Run settle later: it pays nobody twice.`);
    });
}
