import type { Command } from 'commander';
import { type Deadline, formatMinor, formatUtc } from '../recruiting/prolific-plan.js';
import { describeInFlight, describeSettlePlan, settleOnProlific } from '../recruiting/prolific-settle.js';
import { prolificStatus, publishOnProlific } from '../recruiting/prolific-workflows.js';
import { subscribeProlificHooks } from '../recruiting/prolific-hooks.js';
import { type CliContext, CliError, printJson } from './cli-context.js';
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
    .command('hooks')
    .description("subscribe the batch's workspace to Prolific's submission.status.change webhook at PUBLIC_URL/hooks/prolific (a return frees the participant's pairs at once)")
    .argument('<batch>', 'batch id or name')
    .option('--create-secret', "create the workspace's webhook secret (it replaces any other; printed once, never stored)")
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { createSecret?: boolean; json?: boolean }) => {
      const result = await subscribeProlificHooks(platformDeps(ctx, { needsPublicUrl: true }), batchRef(ctx, ref), { createSecret: options.createSecret === true });
      if (options.json) return printJson(ctx, { ...result, createdSecret: result.createdSecret !== null });
      ctx.out(`${result.already ? 'Already subscribed' : 'Subscribed'}: Prolific sends submission.status.change to ${result.targetUrl} (subscription ${result.subscriptionId}, workspace ${result.workspaceId}).`);
      if (result.createdSecret) {
        ctx.out(`The workspace's new webhook secret, shown once and stored nowhere: ${result.createdSecret}`);
        ctx.out('Set PROLIFIC_WEBHOOK_SECRET to it in the server\'s environment and restart the server: until then it refuses Prolific\'s deliveries (Prolific retries them for 24 hours).');
      }
    });

  prolific
    .command('status')
    .description("the study's state and places, submissions by status next to simarena's outcomes, every mismatch, what is in flight, every day-21 deadline")
    .argument('<batch>', 'batch id or name')
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { json?: boolean }) => {
      const batchId = batchRef(ctx, ref);
      const status = await prolificStatus(platformDeps(ctx), batchId);
      if (options.json) return printJson(ctx, status);
      ctx.out(`Study ${status.studyId}: ${status.state}; places taken ${status.placesTaken ?? '?'} of ${status.places ?? '?'}.`);
      ctx.out(`Prolific submissions: ${Object.entries(status.submissions).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`);
      ctx.out(`simarena outcomes: ${Object.entries(status.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`);
      if (status.mismatches.length === 0) ctx.out('No mismatch.');
      for (const m of status.mismatches) ctx.out(`mismatch: ${m.participantId ?? '?'} (${m.submissionId ?? 'no submission'}): ${m.problem}`);
      for (const line of describeInFlight(status.inFlight, batchId)) ctx.out(line);
      printDeadlines(ctx, status.deadlines);
    });

  prolific
    .command('settle')
    .description('approve the completed, ask returns as Prolific requires, pay bonuses once (--dry-run: print the plan)')
    .argument('<batch>', 'batch id or name')
    .option('--dry-run', 'print what would be approved, returned, reviewed and paid; send nothing')
    .option('--confirm-unpaid <bulk-id>', "resend a bonus payment whose answer was lost, on your word that Prolific did not pay it (recorded in the audit log)")
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, options: { dryRun?: boolean; confirmUnpaid?: string; json?: boolean }) => {
      const batchId = batchRef(ctx, ref);
      const result = await settleOnProlific(platformDeps(ctx), batchId, { dryRun: options.dryRun === true, confirmUnpaid: options.confirmUnpaid });
      if (options.json) printJson(ctx, result);
      else printSettle(ctx, batchId, result, options.dryRun === true);
      if (result.problems.length > 0) {
        throw new CliError(`Settle did not finish: ${result.problems.map((p) => `${p.phase}: ${p.message}`).join(' ')} The other phases ran; run settle again once this is resolved.`);
      }
    });
}

function printDeadlines(ctx: CliContext, deadlines: readonly Deadline[]): void {
  if (deadlines.length === 0) return;
  ctx.out("Awaiting review, approved by Prolific itself (full reward) unless decided before (Prolific's 21-day rule):");
  for (const d of deadlines) ctx.out(`  ${formatUtc(d.autoApprovalAt)}: ${d.participantId ?? '?'} (${d.submissionId}): ${d.why}`);
}

function printSettle(ctx: CliContext, batchId: number, result: Awaited<ReturnType<typeof settleOnProlific>>, dryRun: boolean): void {
  if (result.reconciled.confirmed + result.reconciled.notDone > 0) {
    ctx.out(`Checked ${result.reconciled.confirmed + result.reconciled.notDone} operation(s) left unconfirmed by an earlier run: ${result.reconciled.confirmed} done on Prolific, ${result.reconciled.notDone} not done.`);
  }
  ctx.out(dryRun ? 'Dry run: nothing is sent. Settle would do:' : 'Planned:');
  for (const line of describeSettlePlan(result.plan, result.currency)) ctx.out(`  ${line}`);
  for (const r of result.plan.review) ctx.out(`  review: ${r.participantId} (${r.submissionId ?? 'no submission'}): ${r.why}${r.autoApprovalAt ? `; Prolific approves it itself from ${formatUtc(r.autoApprovalAt)}` : ''}`);
  if (!dryRun) {
    const s = result.sent;
    ctx.out(`Sent: approved ${s.approved}, asked to return ${s.returned}, bonuses paid ${s.bonusesPaid} (${formatMinor(s.bonusMinor, result.currency)}).`);
  }
  for (const line of describeInFlight(result.inFlight ?? { approvals: [], pays: [] }, batchId)) ctx.out(line);
  printDeadlines(ctx, result.plan.deadlines);
}
