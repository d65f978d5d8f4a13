import type { Command } from 'commander';
import { formatMinor } from '../recruiting/prolific-plan.js';
import { describeSettlePlan, prolificStatus, publishOnProlific, settleOnProlific } from '../recruiting/prolific-workflows.js';
import { type CliContext, printJson } from './cli-context.js';
import { batchRef, platformDeps, sayStudyLink } from './platform-deps.js';

export function registerProlific(program: Command, ctx: CliContext): void {
  const prolific = program.command('prolific').description('run a batch as a Prolific study: publish it, watch it, approve and pay (PROLIFIC_API_TOKEN)');

  prolific
    .command('publish')
    .description('create the Prolific study from the batch and publish it (--dry-run: print the requests and the cost, send nothing)')
    .argument('<batch>', 'batch id or name')
    .option('--dry-run', 'print the exact requests and the cost; create and spend nothing')
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { dryRun?: boolean; json?: boolean }) => {
      const result = await publishOnProlific(platformDeps(ctx, { needsPublicUrl: true }), batchRef(ctx, ref), { dryRun: options.dryRun === true });
      sayStudyLink(ctx, result.studyUrl, result.warnings, options.json === true);
      if (options.json) return printJson(ctx, result);
      if (options.dryRun) {
        ctx.out('Dry run: nothing is sent. The requests publish would send:');
        for (const r of result.requests) ctx.out(`${r.method} ${r.path}\n${JSON.stringify(r.body, null, 2)}`);
      }
      ctx.out(`Places: ${result.places}; reward ${formatMinor(result.rewardMinor, result.currency)} each; rewards ${formatMinor(result.rewardsMinor, result.currency)}.`);
      ctx.out(
        result.costMinor !== null
          ? `Prolific's cost calculator: ${formatMinor(result.costMinor, result.currency)} with its fees and VAT.`
          : "Prolific's fees and VAT come on top (set PROLIFIC_API_TOKEN for its cost calculator's figure).",
      );
      if (!options.dryRun) ctx.out(`Published on Prolific as study ${result.studyId}.`);
    });

  prolific
    .command('status')
    .description("the study's state and places, submissions by status next to simarena's outcomes, every mismatch")
    .argument('<batch>', 'batch id or name')
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { json?: boolean }) => {
      const status = await prolificStatus(platformDeps(ctx), batchRef(ctx, ref));
      if (options.json) return printJson(ctx, status);
      ctx.out(`Study ${status.studyId}: ${status.state}; places taken ${status.placesTaken ?? '?'} of ${status.places ?? '?'}.`);
      ctx.out(`Prolific submissions: ${Object.entries(status.submissions).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`);
      ctx.out(`simarena outcomes: ${Object.entries(status.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`);
      if (status.mismatches.length === 0) ctx.out('No mismatch.');
      for (const m of status.mismatches) ctx.out(`mismatch: ${m.participantId ?? '?'} (${m.submissionId ?? 'no submission'}): ${m.problem}`);
    });

  prolific
    .command('settle')
    .description('approve the completed, screen out or return as Prolific requires, pay bonuses once (--dry-run: print the plan)')
    .argument('<batch>', 'batch id or name')
    .option('--dry-run', 'print what would be approved, returned, reviewed and paid; send nothing')
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { dryRun?: boolean; json?: boolean }) => {
      const result = await settleOnProlific(platformDeps(ctx), batchRef(ctx, ref), { dryRun: options.dryRun === true });
      if (options.json) return printJson(ctx, result);
      if (result.reconciled.confirmed + result.reconciled.notDone > 0) {
        ctx.out(`Checked ${result.reconciled.confirmed + result.reconciled.notDone} operation(s) left unconfirmed by an earlier run: ${result.reconciled.confirmed} done on Prolific, ${result.reconciled.notDone} not done.`);
      }
      ctx.out(options.dryRun ? 'Dry run: nothing is sent. Settle would do:' : 'Planned:');
      for (const line of describeSettlePlan(result.plan, result.currency)) ctx.out(`  ${line}`);
      for (const r of result.plan.review) ctx.out(`  review: ${r.participantId} (${r.submissionId ?? 'no submission'}): ${r.why}`);
      if (!options.dryRun) {
        const s = result.sent;
        ctx.out(`Sent: approved ${s.approved}, screened out ${s.screenedOut}, asked to return ${s.returned}, bonuses paid ${s.bonusesPaid} (${formatMinor(s.bonusMinor, result.currency)}).`);
      }
    });
}
